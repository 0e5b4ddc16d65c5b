"""Shared plumbing: input checks, the balance subset of games, block-level aggregation.

Everything here is private to the stats package; the public functions live in the
topic modules and are re-exported from ``marrakech_sim.stats``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from marrakech_sim.errors import StatsInputError
from marrakech_sim.stats.estimators import block_ratio

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
    values: np.ndarray = column.to_numpy(dtype="float64", na_value=np.nan)
    return values


def cluster_ratio_table(
    rows: pd.DataFrame, keys: Sequence[str], y: str, m: str, cluster: str = "block"
) -> pd.DataFrame:
    """Ratio estimate sum(y)/sum(m) per group with its block-clustered variance.

    ``rows`` may be at any level below the block (games, seats); they are summed to one
    (group, block) row and handed to :func:`estimators.block_ratio` (the formula is there).

    Returns the group keys plus ``total`` (Y), ``n`` (M), ``n_blocks`` (B), ``estimate``
    and ``var`` (NaN when B < 2).
    """
    keys = list(keys)
    if not keys:
        raise StatsInputError("cluster_ratio_table needs at least one grouping key")
    per_block = rows.groupby([*keys, cluster], sort=True, observed=True)[[y, m]].sum()
    groups = per_block.reset_index()[keys]
    first = ~groups.duplicated().to_numpy()
    group = np.cumsum(first) - 1  # groupby sorted: a group's blocks are consecutive
    cols = block_ratio(
        per_block[y].to_numpy(dtype="float64"),
        per_block[m].to_numpy(dtype="float64"),
        group,
        int(first.sum()),
    )
    out = groups.loc[first].reset_index(drop=True)
    for name, values in cols.items():
        out[name] = values
    return out


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
