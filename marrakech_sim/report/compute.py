"""Every table of the report, section by section (`compute_tables`)."""

from __future__ import annotations

import time
from typing import Any

import duckdb

from marrakech_sim.report import MOVES_GAMES, RATING_GAMES
from marrakech_sim.report.load import RunInfo
from marrakech_sim.report.pergame import PerGame, build_per_game, load_games
from marrakech_sim.report.sections.data import data_tables
from marrakech_sim.report.sections.power import power_table
from marrakech_sim.report.sections.ratings import rating_tables
from marrakech_sim.report.sections.seats import seat_tables
from marrakech_sim.report.sections.skill import skill_tables
from marrakech_sim.report.sections.variants import variant_tables
from marrakech_sim.report.sections.winrates import win_rate_tables
from marrakech_sim.report.tables import ReportTables
from marrakech_sim.stats.intervals import (
    DEFAULT_LEVEL,
)


def compute_tables(
    con: duckdb.DuckDBPyConnection,
    runs: list[RunInfo],
    rating_games: int = RATING_GAMES,
    moves_games: int = MOVES_GAMES,
    level: float = DEFAULT_LEVEL,
) -> ReportTables:
    """Every table of the report, section by section."""
    out = ReportTables()
    seconds: dict[str, float] = {}
    # games (every game) feed the data section and the per-game arrays, then go; the
    # per-game arrays are shared by the sections and freed before the ratings' fit
    held: dict[str, Any] = {}
    paired = [r.index for r in runs if r.manifest.get("config", {}).get("common_seeds")]

    def per_game() -> PerGame:
        pg: PerGame = held["per_game"]
        return pg

    def build() -> None:
        held["per_game"] = build_per_game(held.pop("games"), runs)

    def ratings() -> None:
        held.clear()  # the fit's sample is read anew; the arrays are no longer needed
        rating_tables(con, out, rating_games, level)

    steps = (
        ("games", lambda: held.update(games=load_games(runs))),
        ("data", lambda: data_tables(con, runs, out, held["games"])),
        ("per_game", build),
        ("win_rates", lambda: win_rate_tables(con, out, level, per_game())),
        ("seats", lambda: seat_tables(con, out, level, per_game())),
        ("variants", lambda: variant_tables(con, out, moves_games, level, per_game(), paired)),
        ("skill", lambda: skill_tables(out, level, per_game(), strategy_order(runs))),
        ("ratings", ratings),
    )
    for name, step in steps:
        start = time.perf_counter()
        step()
        seconds[name] = round(time.perf_counter() - start, 2)
    out.tables["power"] = power_table(out)
    out.facts["seconds"] = seconds
    return out


def strategy_order(runs: list[RunInfo]) -> list[str]:
    """Strategy names in the order the runs' study configs list them (first run first)."""
    order: list[str] = []
    for run in runs:
        config = run.manifest.get("config", {})
        strategies = config.get("strategies", {}) if isinstance(config, dict) else {}
        names = strategies if isinstance(strategies, dict) else [s.get("name") for s in strategies]
        order += [str(n) for n in names if str(n) not in order]
    return order
