"""The closing summary of a run: win shares per seat and per strategy, with intervals.

Computed in DuckDB, straight from the Parquet parts: the games of each (group, block) are
summed first, then only five sums per group are kept (the block-clustered ratio of
`stats`' win rates, in one pass as the report computes it), so memory stays flat however
many games the run holds. The figures equal `stats.win_rates(games, seats, by=("ruleset",))`
and `stats.seat_win_shares(games, seats)` on the same tables.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from marrakech_sim import runfolder
from marrakech_sim.stats.intervals import DEFAULT_LEVEL, add_rate_interval

MEMORY_LIMIT = "500MB"  # DuckDB's share; it spills to a temporary folder beyond it

# per (keys, block): y = summed win share, m = seat-games, fair = summed 1/players
_BLOCKS = """
    SELECT {keys}, g.block, SUM(s.win_share)::DOUBLE AS y, COUNT(*)::DOUBLE AS m,
           SUM(1.0 / g.players)::DOUBLE AS fair
    FROM read_parquet({seats}) s JOIN read_parquet({games}) g USING (game_id)
    WHERE g.end_reason <> 'error'
    GROUP BY ALL
"""
_GROUPS = """
    SELECT {names}, SUM(y) AS total, SUM(m) AS n, COUNT(*) AS n_blocks, SUM(y * y) AS syy,
           SUM(y * m) AS sym, SUM(m * m) AS smm, SUM(fair) AS fair
    FROM ({blocks}) GROUP BY ALL ORDER BY ALL
"""


def summarize_run(run_dir: str | Path, level: float = DEFAULT_LEVEL) -> dict[str, Any]:
    """Games, error games, and win shares per strategy and per seat of a run folder.

    Returns a dict: ``games``, ``errors``, and, when some game ended normally,
    ``strategies`` (ruleset, strategy, wins, n_seat_games, n_blocks, rate, lo, hi,
    fair_share, ...) and ``seats`` (players, ruleset, seat, wins, n_games, n_blocks, share,
    lo, hi, fair_share, ...). An interval is NaN when its group has one block.
    """
    games_files = [p for _, p in runfolder.iter_parts(run_dir, "games")]
    seats_files = [p for _, p in runfolder.iter_parts(run_dir, "seats")]
    if not games_files:
        return {"games": 0, "errors": 0}
    with tempfile.TemporaryDirectory(prefix="marrakech-summary-") as spill:
        con = duckdb.connect(":memory:")
        try:
            con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
            con.execute(f"SET temp_directory = '{_escape(spill)}'")
            con.execute("SET preserve_insertion_order = false")
            counts = con.execute(
                "SELECT COUNT(*), COUNT(*) FILTER (WHERE end_reason = 'error') "
                f"FROM read_parquet({_files(games_files)})"
            ).fetchall()
            games, errors = (int(x) for x in counts[0])
            out: dict[str, Any] = {"games": games, "errors": errors}
            if games - errors > 0:
                strategies = _groups(con, games_files, seats_files, ["ruleset", "strategy"])
                seats = _groups(con, games_files, seats_files, ["players", "ruleset", "seat"])
                out["strategies"] = _rates(strategies, level).rename(
                    columns={"total": "wins", "n": "n_seat_games", "estimate": "rate"}
                )
                out["seats"] = _rates(seats, level).rename(
                    columns={"total": "wins", "n": "n_games", "estimate": "share"}
                )
        finally:
            con.close()
    return out


def _groups(
    con: duckdb.DuckDBPyConnection, games: list[Path], seats: list[Path], names: list[str]
) -> pd.DataFrame:
    keys = ", ".join(f"s.{n}" if n in ("strategy", "seat") else f"g.{n}" for n in names)
    blocks = _BLOCKS.format(keys=keys, seats=_files(seats), games=_files(games))
    return con.execute(_GROUPS.format(names=", ".join(names), blocks=blocks)).df()


def _rates(tab: pd.DataFrame, level: float) -> pd.DataFrame:
    """estimate and var of the block-clustered ratio (CR1), then the Wilson interval."""
    y, m = tab["total"].to_numpy("float64"), tab["n"].to_numpy("float64")
    b = tab["n_blocks"].to_numpy("float64")
    with np.errstate(divide="ignore", invalid="ignore"):
        p = y / m
        # sum_b (y_b - p m_b)^2 = Syy - 2 p Sym + p^2 Smm
        e2 = np.maximum(tab["syy"] - 2 * p * tab["sym"] + p**2 * tab["smm"], 0.0)
        var = np.where(b > 1, b / (b - 1) * e2 / (m * m), np.nan)
        fair = tab["fair"].to_numpy("float64") / m
    out = tab.drop(columns=["syy", "sym", "smm", "fair"]).assign(
        estimate=p, var=var, fair_share=fair
    )
    out["n_blocks"] = out["n_blocks"].astype("int64")
    out["n"] = out["n"].astype("int64")
    return add_rate_interval(out, level)


def _escape(text: str | Path) -> str:
    return str(text).replace("'", "''")


def _files(paths: list[Path]) -> str:
    return "[" + ", ".join(f"'{_escape(p)}'" for p in paths) + "]"
