"""Table columns that many of the report's tables share (see `Part.add_table`)."""

from __future__ import annotations

from marrakech_sim.report.fmt import count
from marrakech_sim.report.sections.base import Column

RULESET: Column = ("rule set", lambda r: str(r.ruleset))
PLAYERS: Column = ("players", lambda r: str(r.players))
GAMES: Column = ("games", lambda r: count(r.n_games))
BLOCKS: Column = ("blocks", lambda r: count(r.n_blocks))
STRATEGY: Column = ("strategy", lambda r: str(r.strategy))
METRIC: Column = ("metric", lambda r: str(r.metric))
LINEUP: Column = ("line-up", lambda r: str(r.lineup).replace("|", ", "))
