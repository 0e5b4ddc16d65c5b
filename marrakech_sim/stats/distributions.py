"""Distribution summaries: score margins, game lengths, scores over turns."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from marrakech_sim.stats._core import balance_games, cluster_ratio_table, require_columns
from marrakech_sim.stats.intervals import DEFAULT_LEVEL, add_mean_interval

DEFAULT_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def quantile_label(q: float) -> str:
    """Column name of quantile ``q``: 0.05 -> 'q5', 0.5 -> 'q50', 0.025 -> 'q2.5'."""
    return f"q{q * 100:g}"


def summarize(
    table: pd.DataFrame,
    value: str,
    by: Sequence[str] = ("ruleset",),
    quantiles: Sequence[float] = DEFAULT_QUANTILES,
) -> pd.DataFrame:
    """Count, mean, sd, min, quantiles and max of ``value`` per group.

    Returns:
        One row per group: *by, n (non-missing values), n_missing, n_blocks (when
        ``table`` has ``block``), mean, sd, min, q..., max.
    """
    by = list(by)
    require_columns(table, (*by, value), "table")
    values = table[value].astype("float64")
    grouped = (
        values.groupby([table[c] for c in by], sort=True)
        if by
        else values.groupby(np.zeros(len(values), dtype="int64"))
    )
    out = pd.DataFrame(
        {
            "n": grouped.count(),
            "n_missing": grouped.size() - grouped.count(),
            "mean": grouped.mean(),
            "sd": grouped.std(),
            "min": grouped.min(),
        }
    )
    if "block" in table.columns:
        present = table.loc[values.notna()]
        blocks = (
            present.groupby(by, sort=True)["block"].nunique()
            if by
            else pd.Series([present["block"].nunique()], index=out.index)
        )
        out.insert(2, "n_blocks", blocks.reindex(out.index).fillna(0).astype("int64"))
    for q in quantiles:
        out[quantile_label(q)] = grouped.quantile(q)
    out["max"] = grouped.max()
    out = out.reset_index(drop=not by)
    return out


def margin_summary(metrics: pd.DataFrame, by: Sequence[str] = ("ruleset",)) -> pd.DataFrame:
    """Summary of final score margins (winner minus runner-up) from ``game_metrics``."""
    return summarize(metrics, "margin", by)


def length_summary(metrics: pd.DataFrame, by: Sequence[str] = ("ruleset",)) -> pd.DataFrame:
    """Summary of game lengths in turns from ``game_metrics``."""
    return summarize(metrics, "turns", by)


def score_over_turns(
    turn_scores: pd.DataFrame, games: pd.DataFrame, level: float = DEFAULT_LEVEL
) -> pd.DataFrame:
    """Mean score of each seat after each turn, per (ruleset, players).

    Error games are left out; so are missing scores. Games end at different turns, so
    ``n_games`` falls off towards the end.

    Returns:
        One row per (ruleset, players, seat, turn): n_games, n_blocks, mean, sd, lo, hi
        (95% interval of the mean, block-clustered), q2.5, q97.5 (the middle 95% of
        games: the spread, not the uncertainty).
    """
    require_columns(turn_scores, ("game_id", "turn", "seat", "score"), "turn_scores")
    require_columns(games, ("game_id", "ruleset", "players", "block", "end_reason"), "games")
    good = balance_games(games)[["game_id", "ruleset", "players", "block"]]
    rows = turn_scores[["game_id", "turn", "seat", "score"]].merge(good, on="game_id", how="inner")
    rows["score"] = rows["score"].astype("float64")
    rows = rows.loc[rows["score"].notna()]
    rows["_one"] = 1.0
    keys = ["ruleset", "players", "seat", "turn"]
    tab = add_mean_interval(cluster_ratio_table(rows, keys, "score", "_one"), level)
    grouped = rows.groupby(keys, sort=True)["score"]
    spread = pd.DataFrame(
        {
            "sd": grouped.std(),
            "q2.5": grouped.quantile(0.025),
            "q97.5": grouped.quantile(0.975),
        }
    ).reset_index()
    tab = tab.merge(spread, on=keys, how="left", validate="one_to_one")
    tab = tab.rename(columns={"n": "n_games", "estimate": "mean"})
    tab["n_games"] = tab["n_games"].astype("int64")
    return tab[[*keys, "n_games", "n_blocks", "mean", "sd", "lo", "hi", "q2.5", "q97.5"]]
