"""The report's default sample sizes (a module of its own: the command line reads them
without loading the report's libraries)."""

from __future__ import annotations

RATING_GAMES = 300_000  # games in the Plackett-Luce sample (fit ~5 s, ~1 GB)
MOVES_GAMES = 10_000  # games whose moves are read for per-turn metrics (~0.5 M score rows)
