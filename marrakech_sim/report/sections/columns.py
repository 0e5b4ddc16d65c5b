"""Table columns that many of the report's tables share (see `Part.add_table`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from marrakech_sim.report.fmt import count, interval
from marrakech_sim.report.sections.base import Column

RULESET: Column = ("rule set", lambda r: str(r.ruleset))
PLAYERS: Column = ("players", lambda r: str(r.players))
GAMES: Column = ("games", lambda r: count(r.n_games))
BLOCKS: Column = ("blocks", lambda r: count(r.n_blocks))
STRATEGY: Column = ("strategy", lambda r: str(r.strategy))
METRIC: Column = ("metric", lambda r: str(r.metric))
LINEUP: Column = ("line-up", lambda r: str(r.lineup).replace("|", ", "))


def with_interval(
    label: str, name: str, fmt: Callable[[float], str], lo: str = "lo", hi: str = "hi"
) -> Column:
    """The column "<label> [95%]": the row's estimate ``name`` and its interval (the row's
    ``lo`` and ``hi``), each number formatted by ``fmt``: '25.3% [24.1%, 26.5%]'."""

    def cell(r: Any) -> str:
        return f"{fmt(getattr(r, name))} {interval(getattr(r, lo), getattr(r, hi), fmt)}"

    return (f"{label} [95%]", cell)
