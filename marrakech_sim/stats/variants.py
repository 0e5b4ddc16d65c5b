"""Rule-variant comparison: per-game metrics, their means per rule set, and differences.

Per-game metrics (one row per non-error game; see :data:`VARIANT_METRICS`):

* ``seat_advantage``: seat 0's win share minus 1/k.
* ``turns``: game length in turns.
* ``margin``: winner's score minus runner-up's score (top score minus second-highest
  score among seats with a score; 0 for a shared win; NaN when fewer than two seats
  have a score, e.g. a "one left" end).
* ``bankrupt``: 1 when any seat was eliminated.
* ``tie_broken``: 1 when the tie-break decided the game.
* ``winner_dirhams_share``: winner's dirhams / winner's score (mean over the winners of
  a shared win).
* ``lead_changes`` (needs turn_scores): how often the leading seat changes. The leader
  after a turn is the seat with the strictly highest score; a leader tied at the top
  keeps the lead, and a change is counted when a new single leader differs from the last
  one (so a lead lost to a tie and regained by the same seat is no change).
* ``comeback`` (needs turn_scores): 1 when a winner was strictly behind the top score
  after the half-way turn (turn ceil(turns/2) - 1, i.e. once half the turns are played).
* ``decided_turn`` (needs turn_scores): how decisive the game is, the turn (counted from 1,
  as in pictures and records) from which the single winner leads for good: after that turn
  and every later one the winner's score is strictly the highest. A winner who is not
  strictly ahead after the last turn (a tie-break win) is decided on the last turn; NaN for
  a shared win.

* ``seat_<i>_share``: seat i's win share (one column per seat).

Differences (``compare_variants``): for each metric and each rule set against the
baseline, the difference of means (``estimators.clustered_difference``): each block's
influence on the difference is summed per cluster and squared, so blocks of two rule sets
that share a cluster (their seed, in a ``common_seeds`` study: common dice) pair, and
other blocks are independent clusters; intervals and p-values use Student's t with
clusters - 1 degrees of freedom (a few dozen clusters for the per-turn metrics of a sample).

One declared family per question: the *primary* family is each seat's win share, the
margin, the bankruptcy rate and the length (the claims the README rests on); the
*secondary* family is the tie-break rate, the winner's dirhams share, and the lead changes
and comebacks (computed on a sample of blocks). Each family is Holm-corrected on its own
with ``statsmodels.stats.multitest.multipletests(method='holm')``; ``seat_advantage`` (seat
0's share minus 1/k) is summarised per rule set but not compared (seat 0's share is).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from statsmodels.stats.multitest import multipletests

from marrakech_sim.errors import StatsInputError
from marrakech_sim.stats._core import (
    balance_seats,
    cluster_ratio_table,
    require_columns,
)
from marrakech_sim.stats.estimators import clustered_difference
from marrakech_sim.stats.intervals import DEFAULT_LEVEL, add_mean_interval

VARIANT_METRICS = (
    "seat_advantage",
    "turns",
    "margin",
    "bankrupt",
    "tie_broken",
    "winner_dirhams_share",
    "lead_changes",
    "comeback",
    "decided_turn",
)
#: the metrics of :func:`lead_metrics`, computed from per-turn scores
LEAD_METRICS = ("lead_changes", "comeback", "decided_turn")
_CHUNK_GAMES = 20_000


def game_metrics(
    games: pd.DataFrame, seats: pd.DataFrame, turn_scores: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Per-game balance metrics of every non-error game.

    Returns:
        One row per game: game_id, block, seed (when ``games`` has it), ruleset, players,
        the columns of :data:`VARIANT_METRICS` (float; lead_changes and comeback NaN
        without ``turn_scores``), then ``seat_<i>_share`` for each seat i (NaN in games
        with fewer seats).
    """
    extra = ("seed",) if "seed" in games.columns else ()
    rows = balance_seats(games, seats, extra=extra)
    won = rows["win_share"] > 0
    by_game = rows.groupby("game_id", sort=True)
    out = by_game[["block", *extra, "ruleset", "players", "tie_broken"]].first()
    seat0 = rows.loc[rows["seat"] == 0].set_index("game_id")["win_share"]
    out["seat_advantage"] = seat0.reindex(out.index).to_numpy() - 1.0 / out["players"]
    out["turns"] = games.set_index("game_id")["turns"].reindex(out.index).astype("float64")
    out["margin"] = _top_two_gap(rows).reindex(out.index).to_numpy()
    elim = rows["score"].isna()
    out["bankrupt"] = elim.groupby(rows["game_id"]).any().reindex(out.index).astype("float64")
    out["tie_broken"] = out["tie_broken"].astype("float64")
    with np.errstate(divide="ignore", invalid="ignore"):
        share = (rows["dirhams"] / rows["score"]).where(won)
    out["winner_dirhams_share"] = share.groupby(rows["game_id"]).mean().reindex(out.index)
    for name in LEAD_METRICS:
        out[name] = np.nan
    if turn_scores is not None:
        lead = lead_metrics(turn_scores, games, seats)
        for name in LEAD_METRICS:
            out[name] = lead[name].reindex(out.index)
    seat_cols = []
    for seat in range(int(rows["seat"].max()) + 1 if len(rows) else 0):
        at = rows.loc[rows["seat"] == seat].set_index("game_id")["win_share"]
        out[seat_metric(seat)] = at.reindex(out.index).to_numpy(dtype="float64")
        seat_cols.append(seat_metric(seat))
    out = out.reset_index()
    out["players"] = out["players"].astype("int64")
    return out[["game_id", "block", *extra, "ruleset", "players", *VARIANT_METRICS, *seat_cols]]


def _top_two_gap(rows: pd.DataFrame) -> pd.Series:
    """Per game_id: highest score minus second-highest (NaN with fewer than two scores)."""
    game = rows["game_id"].to_numpy()
    score = rows["score"].to_numpy(dtype="float64")
    # Sort by game, then score descending with missing scores last.
    order = np.lexsort((np.where(np.isnan(score), np.inf, -score), game))
    game, score = game[order], score[order]
    starts = np.flatnonzero(np.r_[True, game[1:] != game[:-1]])
    has_second = np.r_[starts[1:], len(game)] - starts >= 2
    second = np.full(len(starts), np.nan)
    second[has_second] = score[starts[has_second] + 1]
    return pd.Series(score[starts] - second, index=pd.Index(game[starts], name="game_id"))


def lead_metrics(
    turn_scores: pd.DataFrame, games: pd.DataFrame, seats: pd.DataFrame
) -> pd.DataFrame:
    """Lead changes and comeback per game from per-turn scores (definitions above).

    ``turn_scores`` needs a row per (game, turn, seat) with every seat's score after that
    turn; NaN scores (eliminated seats) never lead.

    Returns:
        Indexed by game_id: lead_changes, comeback, decided_turn (float).
    """
    require_columns(turn_scores, ("game_id", "turn", "seat", "score"), "turn_scores")
    rows = balance_seats(games, seats)
    winners = rows.loc[rows["win_share"] > 0, ["game_id", "seat"]]
    game_ids = np.sort(turn_scores["game_id"].unique())
    game_ids = game_ids[np.isin(game_ids, rows["game_id"].unique())]
    parts = []
    for start in range(0, len(game_ids), _CHUNK_GAMES):
        chunk = game_ids[start : start + _CHUNK_GAMES]
        parts.append(_lead_chunk(turn_scores, winners, chunk))
    if not parts:
        return pd.DataFrame(
            {"lead_changes": [], "comeback": [], "decided_turn": []},
            index=pd.Index([], name="game_id"),
        )
    return pd.concat(parts)


def _lead_chunk(
    turn_scores: pd.DataFrame, winners: pd.DataFrame, chunk: np.ndarray
) -> pd.DataFrame:
    ts = turn_scores.loc[turn_scores["game_id"].isin(chunk)]
    g = np.searchsorted(chunk, ts["game_id"].to_numpy())
    t = ts["turn"].to_numpy(dtype="int64")
    s = ts["seat"].to_numpy(dtype="int64")
    n_turns = int(t.max()) + 1
    n_seats = int(s.max()) + 1
    # float32 halves memory; scores are small integers, exact in float32.
    grid = np.full((len(chunk), n_turns, n_seats), np.nan, dtype="float32")
    grid[g, t, s] = ts["score"].to_numpy(dtype="float32", na_value=np.nan)
    last_turn = np.full(len(chunk), -1)
    np.maximum.at(last_turn, g, t)
    leader = np.full(len(chunk), -1)
    changes = np.zeros(len(chunk))
    with np.errstate(invalid="ignore"):
        for turn in range(n_turns):
            sc = grid[:, turn, :]
            filled = ~np.all(np.isnan(sc), axis=1)
            top = np.nanmax(np.where(filled[:, None], sc, 0.0), axis=1)
            at_top = (sc == top[:, None]) & filled[:, None]
            single = at_top.sum(axis=1) == 1
            keeps = (leader >= 0) & at_top[np.arange(len(chunk)), np.maximum(leader, 0)]
            new = single & ~keeps
            candidate = np.argmax(at_top, axis=1)
            changes += new & (leader >= 0) & (candidate != leader)
            leader = np.where(new, candidate, leader)
    half = np.ceil((last_turn + 1) / 2).astype("int64") - 1
    at_half = grid[np.arange(len(chunk)), np.maximum(half, 0), :]
    top_half = np.nanmax(np.where(np.isnan(at_half), -np.inf, at_half), axis=1)
    w = winners.loc[winners["game_id"].isin(chunk)]
    wg = np.searchsorted(chunk, w["game_id"].to_numpy())
    behind = at_half[wg, w["seat"].to_numpy(dtype="int64")] < top_half[wg]
    comeback = np.zeros(len(chunk))
    np.maximum.at(comeback, wg, behind.astype("float64"))
    comeback[last_turn < 0] = np.nan
    decided = _decided_turn(grid, last_turn, w["seat"].to_numpy(dtype="int64"), wg)
    return pd.DataFrame(
        {"lead_changes": changes, "comeback": comeback, "decided_turn": decided},
        index=pd.Index(chunk, name="game_id"),
    )


def _decided_turn(
    grid: np.ndarray, last_turn: np.ndarray, winner_seat: np.ndarray, wg: np.ndarray
) -> np.ndarray:
    """Per game of the chunk: the turn (from 1) from which its single winner is strictly
    ahead after every turn to the end; the last turn when not ahead at the end; NaN for a
    shared win (several winners) or a game without scores."""
    games, turns, _ = grid.shape
    shared = np.bincount(wg, minlength=games) != 1
    seat = np.zeros(games, dtype="int64")
    seat[wg] = winner_seat
    rows = np.arange(games)
    mine = grid[rows, :, seat]  # (games, turns): the winner's score after each turn
    others = np.where(np.isnan(grid), np.float32(-np.inf), grid)  # the eliminated never lead
    others[rows, :, seat] = -np.inf
    ahead = mine > others.max(axis=2)
    played = np.arange(turns)[None, :] <= last_turn[:, None]
    behind = played & ~ahead
    # the last turn the winner was not strictly ahead (-1: ahead throughout)
    last_behind = np.where(behind.any(axis=1), turns - 1 - np.argmax(behind[:, ::-1], axis=1), -1)
    decided: np.ndarray = np.minimum(last_behind + 2, last_turn + 1).astype("float64")
    decided[shared | (last_turn < 0)] = np.nan
    return decided


def variant_summary(
    metrics: pd.DataFrame,
    metric_names: Sequence[str] = VARIANT_METRICS,
    level: float = DEFAULT_LEVEL,
) -> pd.DataFrame:
    """Mean of each metric per rule set with a block-clustered normal interval.

    Returns:
        One row per (ruleset, metric): players, n_games (non-missing), n_blocks, mean,
        se, lo, hi.
    """
    require_columns(metrics, ("ruleset", "block", "players", *metric_names), "metrics")
    long = _long(metrics, metric_names)
    tab = add_mean_interval(
        cluster_ratio_table(long, ["ruleset", "metric"], "value", "_one"), level
    )
    players = metrics.groupby("ruleset")["players"].first()
    tab["players"] = tab["ruleset"].map(players).astype("int64")
    tab = tab.rename(columns={"n": "n_games", "estimate": "mean"})
    tab["n_games"] = tab["n_games"].astype("int64")
    tab["_order"] = tab["metric"].map({m: i for i, m in enumerate(metric_names)})
    tab = tab.sort_values(["ruleset", "_order"])
    return tab[
        ["ruleset", "metric", "players", "n_games", "n_blocks", "mean", "se", "lo", "hi"]
    ].reset_index(drop=True)


def _long(
    metrics: pd.DataFrame, metric_names: Sequence[str], cluster: str = "block"
) -> pd.DataFrame:
    long = metrics.melt(
        id_vars=["game_id", cluster, "ruleset"],
        value_vars=list(metric_names),
        var_name="metric",
        value_name="value",
    )
    long = long.loc[long["value"].notna()].copy()
    long["value"] = long["value"].astype("float64")
    long["_one"] = 1.0
    return long


#: the comparison's primary family (Holm-corrected together): each seat's win share, then
#: these; ``seat_advantage`` is seat 0's share minus 1/k, so its difference is seat 0's
PRIMARY_METRICS = ("margin", "bankrupt", "turns")
#: reported apart, Holm-corrected within their own family
SECONDARY_METRICS = (
    "tie_broken",
    "winner_dirhams_share",
    "lead_changes",
    "comeback",
    "decided_turn",
)


def seat_metric(seat: int) -> str:
    """The name of seat ``seat``'s win-share metric (a column of :func:`game_metrics`)."""
    return f"seat_{seat}_share"


def comparison_metrics(columns: Sequence[str]) -> list[tuple[str, str]]:
    """(metric, family) of a comparison, in order: the primary family first."""
    seats = []
    seat = 0
    while seat_metric(seat) in columns:
        seats.append(seat_metric(seat))
        seat += 1
    primary = [*seats, *(m for m in PRIMARY_METRICS if m in columns)]
    secondary = [m for m in SECONDARY_METRICS if m in columns]
    return [(m, "primary") for m in primary] + [(m, "secondary") for m in secondary]


def compare_variants(
    metrics: pd.DataFrame,
    baseline: str,
    metric_names: Sequence[str] | None = None,
    level: float = DEFAULT_LEVEL,
    cluster: str = "block",
) -> pd.DataFrame:
    """Each rule set against ``baseline`` on each metric; one tidy row per comparison.

    The metrics form two declared families (:func:`comparison_metrics`): the primary one
    (each seat's win share, margin, bankruptcy rate, length) and the secondary one; each is
    Holm-corrected on its own. Games are clustered by ``cluster``: ``"block"``, or
    ``"seed"`` for a ``common_seeds`` study, whose blocks of two rule sets that share a seed
    then pair (``estimators.clustered_difference``); intervals and p-values use Student's t
    with clusters - 1 degrees of freedom.

    Args:
        metrics: the output of :func:`game_metrics`.
        baseline: the rule set the others are compared with.
        metric_names: these metrics (default: every metric of the two families); a name
            outside the families is compared in the primary family.

    Returns:
        One row per (metric, ruleset != baseline): the columns of
        :data:`COMPARISON_COLUMNS`. Metrics missing in either rule set are left out.
    """
    require_columns(metrics, ("ruleset", cluster), "metrics")
    rulesets = sorted(str(r) for r in metrics["ruleset"].unique())
    if baseline not in rulesets:
        raise StatsInputError(f"baseline {baseline!r} not among rule sets {rulesets}")
    family = comparison_metrics(list(metrics.columns))
    if metric_names is not None:
        declared = dict(family)
        family = [(m, declared.get(m, "primary")) for m in metric_names]
    names = [m for m, _ in family]
    games = metrics.groupby("ruleset", observed=True).size()
    long = _long(metrics.assign(_cluster=metrics[cluster]), names, "_cluster")
    records = []
    parts = dict(list(long.groupby(["metric", "ruleset"], sort=False)))
    for metric, fam in family:
        base = parts.get((metric, baseline))
        if base is None:
            continue
        for other in rulesets:
            alt = parts.get((metric, other))
            if other == baseline or alt is None:
                continue
            sides = []
            for part in (base, alt):
                per = part.groupby("_cluster", sort=True)["value"].agg(["sum", "size"])
                sides.append((per.index.to_numpy(), per["sum"].to_numpy(), per["size"].to_numpy()))
            res = clustered_difference(sides[0], sides[1], level)
            records.append(
                {
                    "family": fam,
                    "metric": metric,
                    "baseline": baseline,
                    "ruleset": other,
                    **res,
                    "n_games_baseline": len(base),
                    "n_games": len(alt),
                    "n_blocks_baseline": int(base["_cluster"].nunique()),
                    "n_blocks": int(alt["_cluster"].nunique()),
                    "defined_share_baseline": len(base) / games[baseline],
                    "defined_share": len(alt) / games[other],
                    "common_only": False,  # every game's value, those that have one
                }
            )
    return comparison_table(records, level)


COMPARISON_COLUMNS = [
    "family",
    "metric",
    "baseline",
    "ruleset",
    "baseline_mean",
    "mean",
    "diff",
    "se",
    "df",
    "lo",
    "hi",
    "p_value",
    "p_holm",
    "reject_holm",
    "n_games_baseline",
    "n_games",
    "n_blocks_baseline",
    "n_blocks",
    "n_clusters",
    "paired",
    "se_unpaired",
    "variance_ratio",
    "defined_share_baseline",
    "defined_share",
    "common_only",
]


def comparison_table(records: list[dict[str, object]], level: float = 0.95) -> pd.DataFrame:
    """The forest-plot table from per-comparison records, Holm-corrected within each family."""
    out = pd.DataFrame.from_records(
        records, columns=[c for c in COMPARISON_COLUMNS if c not in ("p_holm", "reject_holm")]
    )
    out["p_holm"] = np.nan
    out["reject_holm"] = False
    for _, rows in out.groupby("family", sort=False):
        valid = rows.index[rows["p_value"].notna().to_numpy()]
        if len(valid):
            reject, p_holm, _, _ = multipletests(
                out.loc[valid, "p_value"], alpha=1 - level, method="holm"
            )
            out.loc[valid, "p_holm"] = p_holm
            out.loc[valid, "reject_holm"] = reject
    return out[COMPARISON_COLUMNS]
