"""Shared plumbing: input checks, the balance subset of games, block-level aggregation.

Everything here is private to the stats package; the public functions live in the
topic modules and are re-exported from ``marrakech_sim.stats``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from marrakech_sim.errors import StatsInputError

ERROR_END = "error"

GAME_COLUMNS = ("game_id", "ruleset", "players", "turns", "end_reason", "tie_broken", "block")
SEAT_COLUMNS = ("game_id", "seat", "strategy", "dirhams", "score", "rank", "win_share")


def require_columns(table: pd.DataFrame, columns: Iterable[str], name: str) -> None:
    """Raise StatsInputError naming the missing columns of ``table``."""
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise StatsInputError(
            f"{name} table lacks column(s) {missing}; it has {list(table.columns)}"
        )


def balance_games(games: pd.DataFrame) -> pd.DataFrame:
    """Return the games that count for balance statistics (end_reason is not 'error')."""
    require_columns(games, ("end_reason",), "games")
    return games.loc[games["end_reason"] != ERROR_END]


def balance_seats(
    games: pd.DataFrame, seats: pd.DataFrame, extra: Iterable[str] = ()
) -> pd.DataFrame:
    """Seats of non-error games, joined with the game columns the stats need.

    Returns one row per (game, seat), sorted, with float ``win_share``, ``score`` (NaN
    when eliminated), ``dirhams`` and ``rank``, and the game's ``block``, ``ruleset``,
    ``players``, ``turns``, ``tie_broken``, ``match_id`` (when present) and the ``extra``
    game columns asked for.
    """
    require_columns(games, GAME_COLUMNS, "games")
    require_columns(seats, SEAT_COLUMNS, "seats")
    wanted = dict.fromkeys((*GAME_COLUMNS, "match_id", *extra))
    keep = [c for c in wanted if c in games.columns and c != "end_reason"]
    good = balance_games(games)[keep]
    seat_cols = [c for c in seats.columns if c not in keep or c == "game_id"]
    out = seats[seat_cols].merge(good, on="game_id", how="inner", validate="many_to_one")
    # Parquet gives nullable Int16 / float32; the maths below wants plain float64.
    out["win_share"] = to_float(out["win_share"])
    out["score"] = to_float(out["score"])
    out["dirhams"] = to_float(out["dirhams"])
    out["rank"] = to_float(out["rank"])
    out["players"] = out["players"].astype("int64")
    out["seat"] = out["seat"].astype("int64")
    out["block"] = out["block"].astype("int64")
    out["tie_broken"] = out["tie_broken"].astype(bool)
    return out.sort_values(["game_id", "seat"], ignore_index=True)


def to_float(column: pd.Series) -> np.ndarray:
    """Return a float64 array with NaN for missing values (nullable dtypes included)."""
    return column.to_numpy(dtype="float64", na_value=np.nan)


def cluster_ratio_table(
    rows: pd.DataFrame, keys: Sequence[str], y: str, m: str, cluster: str = "block"
) -> pd.DataFrame:
    """Ratio estimate sum(y)/sum(m) per group, with its block-clustered variance.

    ``rows`` may be at any level below the block (games, seats); they are first summed to
    one (group, block) row. Per group, with block totals y_b, m_b and p = Y/M:
    var(p) = B/(B-1) * sum_b (y_b - p m_b)^2 / M^2, the sandwich (linearisation) variance
    of a ratio estimator with B clusters; B/(B-1) is the usual small-sample factor (CR1).

    Returns the group keys plus ``total`` (Y), ``n`` (M), ``n_blocks`` (B), ``estimate``
    and ``var`` (NaN when B < 2: one block says nothing about between-block variation).
    """
    keys = list(keys)
    if not keys:
        raise StatsInputError("cluster_ratio_table needs at least one grouping key")
    per_block = rows.groupby([*keys, cluster], sort=True, observed=True)[[y, m]].sum()
    per_block = per_block.rename(columns={y: "_y", m: "_m"})
    grouped = per_block.groupby(level=keys, sort=True, observed=True)
    group_y = grouped["_y"].transform("sum")
    group_m = grouped["_m"].transform("sum")
    with np.errstate(divide="ignore", invalid="ignore"):
        # Residuals per block, taken directly (not as sum(y^2) - ...) to keep precision.
        per_block["_e2"] = (per_block["_y"] - group_y / group_m * per_block["_m"]) ** 2
    sums = per_block.groupby(level=keys, sort=True, observed=True).agg(
        _y=("_y", "sum"), _m=("_m", "sum"), _e2=("_e2", "sum"), n_blocks=("_y", "size")
    )
    sums = sums.reset_index()
    total = sums["_y"].to_numpy(dtype="float64")
    n = sums["_m"].to_numpy(dtype="float64")
    n_blocks = sums["n_blocks"].to_numpy(dtype="int64")
    with np.errstate(divide="ignore", invalid="ignore"):
        est = np.where(n > 0, total / np.where(n > 0, n, 1.0), np.nan)
        factor = np.where(n_blocks > 1, n_blocks / np.maximum(n_blocks - 1, 1), np.nan)
        var = factor * sums["_e2"].to_numpy(dtype="float64") / np.where(n > 0, n, 1.0) ** 2
    out = sums[keys].copy()
    out["total"] = total
    out["n"] = n
    out["n_blocks"] = n_blocks
    out["estimate"] = est
    out["var"] = var
    return out.reset_index(drop=True)


def lineup_labels(games: pd.DataFrame, seats: pd.DataFrame, sep: str) -> pd.Series:
    """Per game_id, the sorted multiset of its seats' strategies joined by ``sep``.

    A match keeps its line-up in every game (only the seats permute), so when ``games``
    has ``match_id`` the label is built once per match from its first game.
    """

    def label(strategies: pd.Series) -> str:
        return sep.join(sorted(str(v) for v in strategies))

    if "match_id" not in games.columns:
        return seats.groupby("game_id", sort=True)["strategy"].agg(label).rename("lineup")
    first = games.groupby("match_id", sort=False)["game_id"].min()
    sample = seats.loc[seats["game_id"].isin(first.to_numpy())]
    per_first = sample.groupby("game_id", sort=False)["strategy"].agg(label)
    per_match = pd.Series(per_first.reindex(first.to_numpy()).to_numpy(), index=first.index)
    return pd.Series(
        games["match_id"].map(per_match).to_numpy(),
        index=games["game_id"].to_numpy(),
        name="lineup",
    )
