"""The report's tables, computed from the per-game arrays and the run folders' views.

Scale. A run of 10 million games has 40 million seat rows and half a billion move rows;
neither goes into pandas. The games and seats are read once into numpy arrays
(``report.pergame``: one entry per game, seats side by side, sorted by block) and every
statistic that rests on them is reduced to *block totals* (one value per group and
block, by ``bincount`` over chunks of whole blocks), which is all the block-aware
estimators of ``marrakech_sim.stats`` use: the cluster-robust ratio variance
(:func:`ratio_columns`, :func:`cluster_ratio_sql` in DuckDB, are
``stats._core.cluster_ratio_table`` over block totals), the Wilson interval at the
effective number of games (``stats.intervals.add_rate_interval``), the equal-share and
trend tests (``stats.equal_share_tests`` on the block-by-seat matrix), the clustered
difference of means behind ``stats.compare_variants``. The tests check each table
against the stats function on the same games. Blocks whose games differ in rule set,
match or line-up (not written by this program's runner) take slower general paths (SQL
over the ``bseats`` view, or per seat pair).

Two parts work on a sample of whole blocks instead (every block of a match is equally
likely; the sample keeps each match's share), read through DuckDB: the Plackett-Luce fit
(``stats.fit_ratings`` needs one row per seat) and everything read from the moves table
(score over turns, lead changes, comebacks). Their tables carry the number of games
they rest on like every other table, and the report says when that is a sample.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from marrakech_sim import stats
from marrakech_sim.report.pergame import CHUNK, PerGame

GAME_METRICS = (
    "seat_advantage",
    "turns",
    "margin",
    "bankrupt",
    "tie_broken",
    "winner_dirhams_share",
)


TURN_METRICS = ("lead_changes", "comeback")


QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


@dataclass
class ReportTables:
    """Every table of the report (name -> DataFrame) and a few facts about the data."""

    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)
    rating_fit: stats.RatingFit | None = None


def quote_sql(text: str) -> str:
    """A SQL string literal."""
    return "'" + str(text).replace("'", "''") + "'"


def cluster_ratio_sql(
    con: duckdb.DuckDBPyConnection, source: str, keys: Sequence[str], grouped: bool = False
) -> pd.DataFrame:
    """``stats._core.cluster_ratio_table`` computed in DuckDB.

    Args:
        source: SQL giving the ``keys``, ``block``, ``y`` and ``m`` columns (rows at any level
            at or below the block).
        grouped: the source has one row per (keys, block) already: skip that GROUP BY.

    Returns:
        keys, total (sum y), n (sum m), n_blocks, estimate (total / n), var (block-clustered
        CR1 variance of the ratio; NaN with one block).
    """
    k = ", ".join(keys)
    # sum_b (y_b - p m_b)^2 = Syy - 2 p Sym + p^2 Smm: one pass over the block totals
    # (counts and sums of shares: no catastrophic cancellation at these sizes).
    first = (
        f"SELECT {k}, block, y::DOUBLE AS y, m::DOUBLE AS m FROM ({source})"
        if grouped
        else f"SELECT {k}, block, SUM(y)::DOUBLE AS y, SUM(m)::DOUBLE AS m "
        f"FROM ({source}) GROUP BY {k}, block"
    )
    sql = f"""
        WITH b AS ({first}),
             g AS (SELECT {k}, SUM(y) AS total, SUM(m) AS n, COUNT(*) AS n_blocks,
                          SUM(y * y) AS syy, SUM(y * m) AS sym, SUM(m * m) AS smm
                   FROM b GROUP BY {k})
        SELECT {k}, total, n, n_blocks, total / n AS estimate,
               CASE WHEN n_blocks > 1 THEN n_blocks / (n_blocks - 1.0)
                 * greatest(syy - 2 * (total / n) * sym + (total / n) ^ 2 * smm, 0) / (n * n)
               END AS var
        FROM g ORDER BY {k}
    """
    out = con.execute(sql).df()
    out.columns = [*keys, "total", "n", "n_blocks", "estimate", "var"]
    out["n_blocks"] = out["n_blocks"].astype("int64")
    out["var"] = out["var"].astype("float64")
    return out


def ratio_columns(
    y: np.ndarray,
    m: np.ndarray,
    syy: np.ndarray,
    sym: np.ndarray,
    smm: np.ndarray,
    n_blocks: np.ndarray,
) -> dict[str, np.ndarray]:
    """total, n, n_blocks, estimate, var as :func:`cluster_ratio_sql` gives them."""
    with np.errstate(divide="ignore", invalid="ignore"):
        p = y / m
        nb = n_blocks.astype("float64")
        var = np.where(
            n_blocks > 1,
            nb / (nb - 1.0) * np.maximum(syy - 2 * p * sym + p**2 * smm, 0) / (m * m),
            np.nan,
        )
    return {"total": y, "n": m, "n_blocks": n_blocks.astype("int64"), "estimate": p, "var": var}


def small_unique(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, return_inverse=True)`` for non-negative keys of a small range."""
    if not len(key) or int(key.max()) > 4 * len(key) + (1 << 16):
        return np.unique(key, return_inverse=True)
    seen = np.bincount(key) > 0
    keys = np.flatnonzero(seen)
    index = np.cumsum(seen) - 1
    return keys, index[key]


def block_chunks(pg: PerGame) -> list[slice]:
    """Slices of about ``CHUNK`` games that start and end at block boundaries."""
    n, size = len(pg), CHUNK
    if not n:
        return []
    cuts = np.searchsorted(pg.block_index, pg.block_index[np.arange(size, n, size)])
    edges = np.unique(np.r_[0, cuts, n])
    return [slice(int(a), int(b)) for a, b in itertools.pairwise(edges)]


def ratio_frame(keys: dict[str, list[Any]], y: np.ndarray, m: np.ndarray) -> pd.DataFrame:
    """:func:`cluster_ratio_sql`'s table for one key from its (blocks,) totals y and m."""
    cols = ratio_columns(
        np.array([y.sum()]),
        np.array([m.sum()]),
        np.array([(y * y).sum()]),
        np.array([(y * m).sum()]),
        np.array([(m * m).sum()]),
        np.array([len(y)]),
    )
    return pd.DataFrame({**keys, **cols})
