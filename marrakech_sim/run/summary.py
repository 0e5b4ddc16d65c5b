"""The closing summary of a run: win shares per seat and per strategy, with intervals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from marrakech_sim import runfolder


def summarize_run(run_dir: str | Path) -> dict[str, Any]:
    """Win shares per strategy and per seat (block-aware intervals) of a run folder."""
    from marrakech_sim.stats import seat_win_shares, win_rates

    games = runfolder.read_table(
        run_dir,
        "games",
        ["game_id", "match_id", "ruleset", "players", "turns", "end_reason", "tie_broken", "block"],
    )
    seats = runfolder.read_table(
        run_dir, "seats", ["game_id", "seat", "strategy", "dirhams", "score", "rank", "win_share"]
    )
    errors = int((games["end_reason"] == "error").sum())
    out: dict[str, Any] = {"games": len(games), "errors": errors}
    if len(games) - errors > 0:
        out["strategies"] = win_rates(games, seats, by=("ruleset",))
        out["seats"] = seat_win_shares(games, seats)
    return out
