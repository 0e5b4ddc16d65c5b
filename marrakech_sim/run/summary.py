"""The closing summary of a run: win shares per seat and per strategy, with intervals.

Computed in DuckDB, straight from the Parquet parts: the games of each (group, block) are
summed first, then only five sums per group are kept (the block-clustered ratio of
`stats`' win rates, in one pass as the report computes it), so memory stays flat however
many games the run holds. The figures equal `stats.seat_win_shares(games, seats)` on the
same tables, and `stats.win_rates(games, seats, by=("ruleset",))` on the games between
different strategies: in a self-play game (one strategy in every seat) each strategy wins
its fair share by construction, which says nothing of its strength and would pull its
share toward the fair one (the report leaves them out of its win rates too).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from marrakech_sim import runfolder
from marrakech_sim.stats import estimators
from marrakech_sim.stats.intervals import DEFAULT_LEVEL, add_rate_interval

MEMORY_LIMIT = "500MB"  # DuckDB's share; it spills to a temporary folder beyond it

# per (keys, block): y = summed win share, m = seat-games, fair = summed 1/players
_BLOCKS = """
    SELECT {keys}, g.block, SUM(s.win_share)::DOUBLE AS y, COUNT(*)::DOUBLE AS m,
           SUM(1.0 / g.players)::DOUBLE AS fair
    FROM read_parquet({seats}) s JOIN read_parquet({games}) g USING (game_id)
    WHERE g.end_reason <> 'error'{only}
    GROUP BY ALL
"""
# the games between different strategies, where the manifest does not list the matches
_MIXED = """ AND game_id IN (
        SELECT game_id FROM read_parquet({seats})
        GROUP BY game_id HAVING COUNT(DISTINCT strategy) > 1
    )"""
_GROUPS = """
    SELECT {names}, SUM(y) AS total, SUM(m) AS n, COUNT(*) AS n_blocks, SUM(y * y) AS syy,
           SUM(y * m) AS sym, SUM(m * m) AS smm, SUM(fair) AS fair
    FROM ({blocks}) GROUP BY ALL ORDER BY ALL
"""


@dataclass(frozen=True)
class RunSummary:
    """A run folder's closing summary.

    Attributes:
        games, errors: the games, and those that ended in a strategy fault.
        strategies: per rule set and strategy (ruleset, strategy, wins, n_seat_games,
            n_blocks, rate, lo, hi, fair_share, ...), from the games between different
            strategies; no row when every game is self-play or none ended normally.
        seats: per player count, rule set and seat (players, ruleset, seat, wins, n_games,
            n_blocks, share, lo, hi, fair_share, ...); no row when no game ended normally.
    An interval is NaN when its group has one block.
    """

    games: int
    errors: int
    strategies: pd.DataFrame = field(default_factory=pd.DataFrame)
    seats: pd.DataFrame = field(default_factory=pd.DataFrame)


def summarize_run(run_dir: str | Path, level: float = DEFAULT_LEVEL) -> RunSummary:
    """Games, error games, and win shares per strategy and per seat of a run folder."""
    games_files = [p for _, p in runfolder.iter_parts(run_dir, "games")]
    seats_files = [p for _, p in runfolder.iter_parts(run_dir, "seats")]
    if not games_files:
        return RunSummary(0, 0)
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
            if games == errors:
                return RunSummary(games, errors)
            mixed = _between_strategies(run_dir, seats_files)
            names = ["ruleset", "strategy"]
            strategies = _groups(con, games_files, seats_files, names, mixed)
            seats = _groups(con, games_files, seats_files, ["players", "ruleset", "seat"])
            return RunSummary(
                games,
                errors,
                _rates(strategies, level).rename(
                    columns={"total": "wins", "n": "n_seat_games", "estimate": "rate"}
                ),
                _rates(seats, level).rename(
                    columns={"total": "wins", "n": "n_games", "estimate": "share"}
                ),
            )
        finally:
            con.close()


def _between_strategies(run_dir: str | Path, seats: list[Path]) -> str:
    """The SQL condition that keeps the games between different strategies: the self-play
    matches (one strategy name in the line-up) left out by id, from the manifest; by
    each game's seats where the manifest lists no matches."""
    matches = runfolder.read_manifest(run_dir).matches
    if matches is None:
        return _MIXED.format(seats=_files(seats))
    alone = [int(m["match_id"]) for m in matches if len(set(m["lineup"])) == 1]
    return f" AND g.match_id NOT IN ({', '.join(map(str, alone))})" if alone else ""


def _groups(
    con: duckdb.DuckDBPyConnection,
    games: list[Path],
    seats: list[Path],
    names: list[str],
    only: str = "",
) -> pd.DataFrame:
    """Per group of `names` the block sums of `_GROUPS`, of the games `only` keeps (an SQL
    condition after the games' own, or every game)."""
    keys = ", ".join(f"s.{n}" if n in ("strategy", "seat") else f"g.{n}" for n in names)
    blocks = _BLOCKS.format(keys=keys, seats=_files(seats), games=_files(games), only=only)
    return con.execute(_GROUPS.format(names=", ".join(names), blocks=blocks)).df()


def _rates(tab: pd.DataFrame, level: float) -> pd.DataFrame:
    """estimate and var of the block-clustered ratio (CR1), then the Wilson interval."""
    ratio = estimators.ratio_from_sums(*(tab[name] for name in estimators.SUMS))
    with np.errstate(divide="ignore", invalid="ignore"):
        fair = tab["fair"].to_numpy("float64") / tab["n"].to_numpy("float64")
    out = tab.drop(columns=["syy", "sym", "smm", "fair"]).assign(
        estimate=ratio["estimate"], var=ratio["var"], fair_share=fair
    )
    out["n_blocks"] = out["n_blocks"].astype("int64")
    out["n"] = out["n"].astype("int64")
    return add_rate_interval(out, level)


def _escape(text: str | Path) -> str:
    return str(text).replace("'", "''")


def _files(paths: list[Path]) -> str:
    return "[" + ", ".join(f"'{_escape(p)}'" for p in paths) + "]"
