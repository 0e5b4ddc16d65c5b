"""Win rates per strategy and per line-up, head-to-head records, fault counts."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from marrakech_sim.stats._core import (
    ERROR_END,
    balance_seats,
    cluster_ratio_table,
    lineup_labels,
    require_columns,
)
from marrakech_sim.stats.intervals import DEFAULT_LEVEL, add_rate_interval, wilson_interval

LINEUP_SEP = "|"
UNATTRIBUTED = "<unattributed>"
# LOG_FORMAT.md: the error text of a faulty game starts "seat N (strategy NAME): ...".
_FAULT_PATTERN = re.compile(r"^\s*seat\s+(\d+)\s+\(strategy\s+(.*?)\)\s*:")


def with_lineup(games: pd.DataFrame, seats: pd.DataFrame) -> pd.DataFrame:
    """Return ``games`` with a ``lineup`` column: sorted strategies joined by ``LINEUP_SEP``."""
    require_columns(seats, ("game_id", "strategy"), "seats")
    labels = lineup_labels(games, seats, LINEUP_SEP)
    out = games.copy()
    out["lineup"] = out["game_id"].map(labels)
    return out


def _seat_rows(games: pd.DataFrame, seats: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    if "lineup" in by and "lineup" not in games.columns:
        games = with_lineup(games, seats)
    require_columns(games, by, "games")
    return balance_seats(games, seats, extra=by)


def win_rates(
    games: pd.DataFrame,
    seats: pd.DataFrame,
    by: Sequence[str] = (),
    level: float = DEFAULT_LEVEL,
) -> pd.DataFrame:
    """Win rate of each strategy (per seat it occupied), optionally within groups.

    A strategy seated twice in one game counts twice (``n_seat_games``); its wins are the
    sum of its ``win_share``. Compare ``rate`` with ``fair_share`` (the mean of 1/players
    over its seats): pooled player counts make 1/k differ.

    Args:
        by: extra grouping columns of ``games`` (e.g. ``("ruleset",)``), or ``"lineup"``.

    Returns:
        One row per (*by, strategy): n_games, n_seat_games, n_blocks, wins, rate, lo, hi
        (block-aware Wilson), fair_share, n_eff, design_effect.
    """
    by = list(by)
    rows = _seat_rows(games, seats, by)
    rows["_one"] = 1.0
    rows["_fair"] = 1.0 / rows["players"]
    keys = [*by, "strategy"]
    tab = add_rate_interval(cluster_ratio_table(rows, keys, "win_share", "_one"), level)
    grouped = rows.groupby(keys, sort=True, observed=True)
    extra = pd.DataFrame(
        {"n_games": grouped["game_id"].nunique(), "fair_share": grouped["_fair"].mean()}
    ).reset_index()
    tab = tab.merge(extra, on=keys, how="left", validate="one_to_one")
    tab = tab.rename(columns={"total": "wins", "n": "n_seat_games", "estimate": "rate"})
    tab["n_seat_games"] = tab["n_seat_games"].astype("int64")
    return tab[[*keys, *WIN_RATE_COLUMNS]]


#: the columns of a head-to-head table after its keys (strategy, opponent)
HEAD_TO_HEAD_COLUMNS = (
    "n_games",
    "n_blocks",
    "n_pairs",
    "tied_pairs",
    "ahead",
    "rate",
    "lo",
    "hi",
    "n_eff",
)
WIN_RATE_COLUMNS = (
    "n_games",
    "n_seat_games",
    "n_blocks",
    "wins",
    "rate",
    "lo",
    "hi",
    "fair_share",
    "n_eff",
    "design_effect",
)


def lineup_win_rates(
    games: pd.DataFrame, seats: pd.DataFrame, level: float = DEFAULT_LEVEL
) -> pd.DataFrame:
    """Win rates per (ruleset, lineup, strategy); columns as :func:`win_rates`."""
    return win_rates(games, seats, by=("ruleset", "lineup"), level=level)


def head_to_head(
    games: pd.DataFrame,
    seats: pd.DataFrame,
    by: Sequence[str] = (),
    level: float = DEFAULT_LEVEL,
) -> pd.DataFrame:
    """How often strategy A finished ahead of strategy B in games where both played.

    Per game, every (A seat, B seat) pair scores 1 when A's rank is better, 1/2 when equal
    (shared rank), 0 otherwise; the game's score is the mean over its pairs (a strategy
    seated twice gives several pairs). ``rate`` is the mean game score. Pairs of a
    strategy with itself are left out. Both orders (A, B) and (B, A) are listed.

    Returns:
        One row per (*by, strategy, opponent): n_games, n_blocks, n_pairs, tied_pairs,
        ahead (sum of game scores), rate, lo, hi (block-aware Wilson), n_eff.
    """
    by = list(by)
    rows = _seat_rows(games, seats, by)
    left = rows[["game_id", "block", *by, "seat", "strategy", "rank"]]
    right = rows[["game_id", "seat", "strategy", "rank"]].rename(
        columns={"seat": "seat_b", "strategy": "opponent", "rank": "rank_b"}
    )
    pairs = left.merge(right, on="game_id", how="inner")
    pairs = pairs.loc[pairs["strategy"] != pairs["opponent"]]
    ra = pairs["rank"].to_numpy(dtype="float64")
    rb = pairs["rank_b"].to_numpy(dtype="float64")
    # Lower rank is better (RULES.md section 7: rank 1 = winner).
    pairs = pairs.assign(
        _point=np.where(ra < rb, 1.0, np.where(ra == rb, 0.5, 0.0)),
        _tie=(ra == rb).astype("int64"),
    )
    keys = [*by, "strategy", "opponent"]
    per_game = (
        pairs.groupby([*keys, "game_id", "block"], sort=True, observed=True)
        .agg(_score=("_point", "mean"), _pairs=("_point", "size"), _ties=("_tie", "sum"))
        .reset_index()
    )
    per_game["_one"] = 1.0
    tab = add_rate_interval(cluster_ratio_table(per_game, keys, "_score", "_one"), level)
    counts = (
        per_game.groupby(keys, sort=True, observed=True)
        .agg(n_pairs=("_pairs", "sum"), tied_pairs=("_ties", "sum"))
        .reset_index()
    )
    tab = tab.merge(counts, on=keys, how="left", validate="one_to_one")
    tab = tab.rename(columns={"total": "ahead", "n": "n_games", "estimate": "rate"})
    tab["n_games"] = tab["n_games"].astype("int64")
    return tab[[*keys, *HEAD_TO_HEAD_COLUMNS]]


def fault_counts(
    games: pd.DataFrame, seats: pd.DataFrame, level: float = DEFAULT_LEVEL
) -> pd.DataFrame:
    """Games ended by an error, attributed to the strategy of the faulty seat.

    The strategy is read from the error text ("seat N (strategy NAME): ..."); when only
    the seat number can be read it is looked up in ``seats``; otherwise the fault is
    counted under ``"<unattributed>"``. Error games count in ``n_games``.

    Returns:
        One row per strategy (with at least one game or one fault): n_games, n_errors,
        error_rate, lo, hi (Wilson over games; faults are bugs, not dice, so no blocks).
    """
    require_columns(games, ("game_id", "end_reason", "error"), "games")
    require_columns(seats, ("game_id", "seat", "strategy"), "seats")
    faulty = games.loc[games["end_reason"] == ERROR_END, ["game_id", "error"]]
    seat_strategy = seats.set_index(["game_id", "seat"])["strategy"]
    names: list[str] = []
    for game_id, text in zip(faulty["game_id"], faulty["error"], strict=True):
        match = _FAULT_PATTERN.match(text) if isinstance(text, str) else None
        if match is None:
            names.append(UNATTRIBUTED)
        elif match.group(2):
            names.append(match.group(2))
        else:
            names.append(str(seat_strategy.get((game_id, int(match.group(1))), UNATTRIBUTED)))
    n_errors = pd.Series(names, dtype="str").value_counts().rename("n_errors")
    n_games = seats.groupby("strategy")["game_id"].nunique().rename("n_games")
    tab = pd.concat([n_games, n_errors], axis=1).fillna(0).astype("int64")
    tab.index.name = "strategy"
    tab = tab.reset_index().sort_values("strategy", ignore_index=True)
    n = tab["n_games"].to_numpy(dtype="float64")
    k = tab["n_errors"].to_numpy(dtype="float64")
    with np.errstate(divide="ignore", invalid="ignore"):
        tab["error_rate"] = np.where(n > 0, k / np.where(n > 0, n, 1), np.nan)
    tab["lo"], tab["hi"] = wilson_interval(k, n, level)
    return tab[["strategy", "n_games", "n_errors", "error_rate", "lo", "hi"]]
