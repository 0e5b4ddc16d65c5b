"""Strategy ratings: a Plackett-Luce fit of finishing orders with a seat-advantage term.

Model. In a game with k seats, the seat s played by strategy i has log-strength
u = theta[i] + gamma[k, s]; the finishing order is drawn by picking the winner with
probability exp(u) / sum(exp(u)) among all seats, then the runner-up among the rest, and
so on (Plackett-Luce; with two seats it is Bradley-Terry). gamma[k, 0] = 0 for every
player count k (only differences within a game matter), so gamma[k, s] is seat s's
advantage over seat 0 on the log-strength scale.

Ties. Seats sharing a rank (a shared win, or equal lower places) are handled as Breslow
handles tied events in survival analysis: each tied seat is chosen from the same pool
(all seats ranked the same or lower), i.e. it contributes u - log(sum of exp(u) over the
pool). That keeps the likelihood smooth and concave, and treats a tie as evidence of
equal strength. Eliminated seats are already ranked below survivors, later eliminations
above earlier ones (RULES.md section 7), so their order is used as it is.

Fit. Maximum likelihood with ``scipy.optimize.minimize(method='trust-exact')`` using the
exact gradient and Hessian (the negative log-likelihood is convex, the parameters few).
Identical (line-up by seat, ranks) patterns are fitted once with a weight, so millions
of games cost little. choix fits Plackett-Luce too, but has no seat term; the tests
check this fit against it when the seat term is off.

Uncertainty. ``se_method='block'`` (default) is the cluster-robust sandwich
H^-1 (sum over blocks of g_b g_b') H^-1 with the per-block score g_b and the B/(B-1)
factor: games of a block share dice, and the plain inverse Hessian (``'hessian'``)
would treat them as independent. Intervals are normal (Wald).

Anchor. By default strategy ratings have mean 0 (``anchor='mean'``); pass a strategy
name to fix that strategy at 0 instead. Seat effects are anchored at seat 0.

Elo scale. Under the model strategy A beats B head to head with probability
1 / (1 + exp(-(theta_A - theta_B))); Elo uses 1 / (1 + 10^(-(R_A - R_B)/400)), so
R = base + theta * 400 / ln(10).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize, sparse
from scipy import stats as sps
from scipy.sparse import csgraph

from marrakech_sim.errors import StatsInputError
from marrakech_sim.stats._core import balance_seats, require_columns
from marrakech_sim.stats.intervals import DEFAULT_LEVEL, z_value

ELO_PER_LOGIT = 400.0 / np.log(10.0)
ELO_BASE = 1500.0
GRAD_TOL = 1e-6  # per game, on the log-likelihood scale
RUNAWAY = 15.0  # a log-strength gap of e^15: in practice "never loses"


@dataclass(frozen=True, slots=True)
class RatingFit:
    """Result of :func:`fit_ratings`.

    Attributes:
        ratings: one row per strategy, strongest first: strategy, rating, se, lo, hi,
            elo, elo_lo, elo_hi, n_games, n_seat_games, n_blocks, order (1 = strongest),
            p_above_next (probability, from the normal approximation with the full
            covariance, that this strategy is stronger than the next one listed; NaN for
            the last), gap_se_elo (the standard error of its Elo gap to the next one).
        seat_effects: one row per (players, seat): effect (log-strength over seat 0),
            se, lo, hi, elo_effect (the same in Elo points), win_prob_equal (the seat's
            win probability if all strategies were equally strong), n_games, n_blocks.
        cov: covariance of all parameters (strategy names, then "seat k/s" labels).
        loglik: maximised log-likelihood.
        n_games: games fitted; n_blocks: blocks they came in.
        converged: gradient ~0 (below GRAD_TOL per game), no rating beyond RUNAWAY, and a
            finite, invertible information matrix.
        anchor: "mean" or the anchored strategy; se_method: "block" or "hessian".
    """

    ratings: pd.DataFrame
    seat_effects: pd.DataFrame
    cov: pd.DataFrame
    loglik: float
    n_games: int
    n_blocks: int
    converged: bool
    anchor: str
    se_method: str


def to_elo(rating: np.ndarray | pd.Series | float, base: float = ELO_BASE) -> np.ndarray | float:
    """Convert a log-strength rating (logit scale) to Elo points around ``base``."""
    if np.ndim(rating) == 0:
        return float(base + ELO_PER_LOGIT * float(rating))
    elo: np.ndarray = base + ELO_PER_LOGIT * np.asarray(rating, dtype="float64")
    return elo


@dataclass(frozen=True, slots=True)
class _Group:
    """Unique (strategies by seat, ranks) patterns of the games with one player count."""

    players: int
    design: sparse.csr_matrix  # (patterns * k, n_params): u = design @ params
    ranks: np.ndarray  # (patterns, k)
    weight: np.ndarray  # (patterns,) games with this pattern
    inverse: np.ndarray  # (games,) pattern of each game
    block: np.ndarray  # (games,) block code of each game


def _pl_terms(
    u: np.ndarray, ranks: np.ndarray, weight: np.ndarray
) -> tuple[float, np.ndarray, np.ndarray]:
    """Weighted Breslow-PL log-likelihood, its gradient and negative Hessian in u.

    Returns:
        (loglik, grad (n, k), neg_hess (n, k, k)), each pattern's terms multiplied by its
        weight (the number of games showing that pattern).
    """
    # pool[n, i, l]: seat l is still in the pool when seat i's place is decided.
    pool = ranks[:, None, :] >= ranks[:, :, None]
    shift = u.max(axis=1, keepdims=True)
    e = np.exp(u - shift)[:, None, :] * pool
    denom = e.sum(axis=2)
    w = e / denom[:, :, None]
    ll_rows = (u - (np.log(denom) + shift)).sum(axis=1)
    grad = 1.0 - w.sum(axis=1)
    neg_hess = np.einsum("nil,lm->nlm", w, np.eye(u.shape[1])) - np.einsum("nil,nim->nlm", w, w)
    return (
        float(ll_rows @ weight),
        grad * weight[:, None],
        neg_hess * weight[:, None, None],
    )


def _block_diag(blocks: np.ndarray) -> sparse.bsr_matrix:
    n, k, _ = blocks.shape
    return sparse.bsr_matrix(
        (blocks, np.arange(n), np.arange(n + 1)), shape=(n * k, n * k), blocksize=(k, k)
    )


def fit_ratings(
    games: pd.DataFrame,
    seats: pd.DataFrame,
    anchor: str = "mean",
    se_method: str = "block",
    seat_term: bool = True,
    l2: float = 0.0,
    level: float = DEFAULT_LEVEL,
) -> RatingFit:
    """Fit Plackett-Luce strategy ratings with per-seat advantages to all non-error games.

    Args:
        anchor: "mean" (ratings sum to 0) or a strategy name fixed at 0.
        se_method: "block" (cluster-robust over blocks) or "hessian" (inverse observed
            information, games independent).
        seat_term: fit one parameter per (players, seat); False fits strategies only.
        l2: ridge penalty on strategy ratings (0 = plain ML); use a small value when a
            strategy wins or loses every game and the ML estimate runs off to infinity.

    Raises StatsInputError when the strategies fall into more than one set of
    ``comparable_strategies`` (self-play alone included): the likelihood would be flat
    along the gap between the sets, and a fit would report an arbitrary order.
    """
    if se_method not in ("block", "hessian"):
        raise StatsInputError(f"se_method {se_method!r}; allowed: 'block', 'hessian'")
    rows = balance_seats(games, seats)
    if rows.empty:
        raise StatsInputError("no non-error games to rate")
    sets = comparable_strategies(rows)
    if len(sets) > 1:
        raise StatsInputError(
            "strategies that never meet in a game (directly or through others) have no "
            "common rating scale; fit each set apart: "
            + " | ".join(", ".join(members) for members in sets)
        )
    names = sorted(rows["strategy"].astype(str).unique())
    if anchor != "mean" and anchor not in names:
        raise StatsInputError(f"anchor {anchor!r} is not a strategy; allowed: 'mean', {names}")
    n_strat = len(names)
    player_counts = sorted(int(k) for k in rows["players"].unique())
    seat_labels: list[tuple[int, int]] = (
        [(k, s) for k in player_counts for s in range(1, k)] if seat_term else []
    )
    seat_index = {ks: n_strat + i for i, ks in enumerate(seat_labels)}
    n_params = n_strat + len(seat_labels)
    strat_code = pd.Categorical(rows["strategy"].astype(str), categories=names).codes
    rows["_strat"] = strat_code.astype("int64")
    block_codes, block_uniques = pd.factorize(rows["block"])
    rows["_block"] = block_codes
    groups = [
        _make_group(rows.loc[rows["players"] == k], k, n_params, seat_index) for k in player_counts
    ]

    ref = names.index(anchor) if anchor != "mean" else 0
    free = np.array([p for p in range(n_params) if p != ref])
    ridge = np.zeros(n_params)
    ridge[:n_strat] = l2
    total_games = sum(len(g.inverse) for g in groups)

    cache: dict[bytes, tuple[float, np.ndarray, np.ndarray]] = {}

    def evaluate(x_free: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        key = x_free.tobytes()
        if key not in cache:
            x = np.zeros(n_params)
            x[free] = x_free
            ll, grad, info = -0.5 * float(ridge @ x**2), -ridge * x, np.diag(ridge)
            for g in groups:
                u = (g.design @ x).reshape(-1, g.players)
                ll_g, grad_u, neg_hess_u = _pl_terms(u, g.ranks, g.weight)
                ll += ll_g
                grad = grad + g.design.T @ grad_u.ravel()
                info = info + np.asarray(
                    (g.design.T @ (_block_diag(neg_hess_u) @ g.design)).todense()
                )
            # Scaled by the game count so the optimiser's tolerances mean the same at any size.
            cache.clear()
            cache[key] = (
                -ll / total_games,
                -grad[free] / total_games,
                info[np.ix_(free, free)] / total_games,
            )
        return cache[key]

    result = optimize.minimize(
        lambda x: evaluate(x)[0],
        np.zeros(len(free)),
        jac=lambda x: evaluate(x)[1],
        hess=lambda x: evaluate(x)[2],
        method="trust-exact",
        options={"gtol": 1e-9},
    )
    x_full = np.zeros(n_params)
    x_full[free] = result.x
    info = evaluate(result.x)[2] * total_games
    loglik = -evaluate(result.x)[0] * total_games
    # trust-exact may stop on "bad approximation" once rounding dominates; judge by the
    # gradient instead, and distrust runaway ratings (a strategy that always wins or
    # always loses has no finite ML estimate: use l2).
    gradient_ok = float(np.max(np.abs(evaluate(result.x)[1]), initial=0.0)) < GRAD_TOL
    converged = gradient_ok and float(np.max(np.abs(x_full), initial=0.0)) < RUNAWAY
    try:
        bread = np.linalg.inv(info)
    except np.linalg.LinAlgError:
        bread = np.linalg.pinv(info)
        converged = False
    if se_method == "block":
        scores = _block_scores(groups, x_full, len(block_uniques))[:, free]
        n_blocks = scores.shape[0]
        meat = scores.T @ scores * (n_blocks / (n_blocks - 1) if n_blocks > 1 else np.nan)
        cov_free = bread @ meat @ bread
    else:
        cov_free = bread
    converged = converged and bool(np.all(np.isfinite(cov_free)))

    # Map free parameters to all parameters, then move the strategy anchor if asked.
    to_full = np.zeros((n_params, len(free)))
    to_full[free, np.arange(len(free))] = 1.0
    centre = np.eye(n_params)
    if anchor == "mean":
        centre[:n_strat, :n_strat] -= 1.0 / n_strat
    transform = centre @ to_full
    params = centre @ x_full
    cov = transform @ cov_free @ transform.T
    labels = names + [f"seat {k}/{s}" for k, s in seat_labels]
    cov_table = pd.DataFrame(cov, index=labels, columns=labels)

    ratings = _ratings_table(rows, names, params[:n_strat], cov[:n_strat, :n_strat], level)
    seat_table = _seat_table(rows, player_counts, seat_index, params, cov, level, seat_term)
    return RatingFit(
        ratings=ratings,
        seat_effects=seat_table,
        cov=cov_table,
        loglik=float(loglik),
        n_games=int(total_games),
        n_blocks=len(block_uniques),
        converged=converged,
        anchor=anchor,
        se_method=se_method,
    )


def comparable_strategies(seats: pd.DataFrame) -> list[list[str]]:
    """The sets of strategies whose ratings the games can compare, largest first.

    Two strategies are linked when they sat in one game; the sets are the connected
    components of that graph (``scipy.sparse.csgraph.connected_components``). A game with
    one strategy in every seat (self-play) links nothing: it says which seat is ahead,
    not which strategy is stronger, so a strategy seen only in self-play is a set of its
    own. Ratings in different sets have no common scale (the likelihood is flat along
    their difference), so a fit is only meaningful within one set. Sets are ordered by
    size, then by name; each is sorted.
    """
    require_columns(seats, ("game_id", "strategy"), "seats")
    codes, uniques = pd.factorize(seats["strategy"].astype(str), sort=True)
    names = list(uniques)
    pairs = pd.DataFrame({"game_id": seats["game_id"].to_numpy(), "code": codes})
    pairs = pairs.drop_duplicates(ignore_index=True)
    first = pairs.groupby("game_id")["code"].transform("min")
    links = pairs.loc[pairs["code"] != first]
    graph = sparse.coo_matrix(
        (np.ones(len(links)), (first[links.index].to_numpy(), links["code"].to_numpy())),
        shape=(len(names), len(names)),
    )
    count, label = csgraph.connected_components(graph, directed=False)
    sets = [[names[i] for i in np.flatnonzero(label == c)] for c in range(count)]
    return sorted(sets, key=lambda members: (-len(members), members))


def _make_group(
    rows: pd.DataFrame, k: int, n_params: int, seat_index: dict[tuple[int, int], int]
) -> _Group:
    counts = rows.groupby("game_id", sort=True)["seat"].count()
    if (counts != k).any():
        bad = counts.index[counts != k][:5].tolist()
        raise StatsInputError(f"games {bad} do not have {k} seat rows as 'players' says")
    strat = rows["_strat"].to_numpy().reshape(-1, k)
    ranks = rows["rank"].to_numpy(dtype="float64").reshape(-1, k)
    if np.isnan(ranks).any():
        raise StatsInputError("a non-error game has a seat without a rank")
    block = rows["_block"].to_numpy().reshape(-1, k)[:, 0]
    patterns, inverse, weight = _unique_rows(np.hstack([strat, ranks]))
    n = patterns.shape[0]
    u_rows = np.arange(n * k)
    p_strat = patterns[:, :k].astype("int64").ravel()
    seat_cols = np.tile(np.arange(k), n)
    seat_param = np.array([seat_index.get((k, s), -1) for s in range(k)])[seat_cols]
    has_seat = seat_param >= 0
    design = sparse.csr_matrix(
        (
            np.ones(n * k + int(has_seat.sum())),
            (
                np.concatenate([u_rows, u_rows[has_seat]]),
                np.concatenate([p_strat, seat_param[has_seat]]),
            ),
        ),
        shape=(n * k, n_params),
    )
    return _Group(k, design, patterns[:, k:], weight.astype("float64"), inverse.ravel(), block)


def _unique_rows(table: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(table, axis=0, return_inverse=True, return_counts=True)``, faster.

    Rows of small non-negative integers (strategy codes, ranks) are read as digits of one
    integer, most significant first, so sorting the integers sorts the rows in the same
    (lexicographic) order; other tables go to ``np.unique``.
    """
    small = table.size and np.all(table >= 0) and np.all(table == np.floor(table))
    radix = int(table.max()) + 1 if small else 0
    if not small or table.shape[1] * np.log2(max(radix, 2)) > 62:
        return np.unique(table, axis=0, return_inverse=True, return_counts=True)
    key = np.zeros(len(table), "int64")
    for column in table.T:
        key = key * radix + column.astype("int64")
    _, first, inverse, counts = np.unique(
        key, return_index=True, return_inverse=True, return_counts=True
    )
    return table[first], inverse, counts


def _block_scores(groups: list[_Group], x: np.ndarray, n_blocks: int) -> np.ndarray:
    """Per-block score vectors (sum over the block's games of d loglik / d params)."""
    out = np.zeros((n_blocks, x.size))
    for g in groups:
        u = (g.design @ x).reshape(-1, g.players)
        _, grad_u, _ = _pl_terms(u, g.ranks, np.ones(len(g.weight)))
        per_pattern = (
            np.asarray((g.design.multiply(grad_u.reshape(-1, 1))).todense())
            .reshape(-1, g.players, x.size)
            .sum(axis=1)
        )
        counts = sparse.coo_matrix(
            (np.ones(len(g.inverse)), (g.block, g.inverse)),
            shape=(n_blocks, len(g.weight)),
        ).tocsr()
        out += counts @ per_pattern
    return out


def _ratings_table(
    rows: pd.DataFrame, names: list[str], theta: np.ndarray, cov: np.ndarray, level: float
) -> pd.DataFrame:
    z = z_value(level)
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    grouped = rows.groupby("strategy", sort=True)
    tab = pd.DataFrame(
        {
            "strategy": names,
            "rating": theta,
            "se": se,
            "lo": theta - z * se,
            "hi": theta + z * se,
            "n_games": grouped["game_id"].nunique().reindex(names).to_numpy(),
            "n_seat_games": grouped.size().reindex(names).to_numpy(),
            "n_blocks": grouped["block"].nunique().reindex(names).to_numpy(),
        }
    )
    tab["elo"] = to_elo(tab["rating"])
    tab["elo_lo"] = to_elo(tab["lo"])
    tab["elo_hi"] = to_elo(tab["hi"])
    order = np.argsort(-theta, kind="stable")
    p_next = np.full(len(names), np.nan)
    gap_se = np.full(len(names), np.nan)
    for a, b in itertools.pairwise(order):
        var = cov[a, a] + cov[b, b] - 2 * cov[a, b]
        gap_se[a] = ELO_PER_LOGIT * float(np.sqrt(max(var, 0.0)))
        diff = theta[a] - theta[b]
        p_next[a] = float(sps.norm.cdf(diff / np.sqrt(var))) if var > 0 else float(diff > 0)
    tab["p_above_next"] = p_next
    tab["gap_se_elo"] = gap_se
    tab = tab.iloc[order].reset_index(drop=True)
    tab["order"] = np.arange(1, len(names) + 1)
    return tab[
        [
            "strategy",
            "rating",
            "se",
            "lo",
            "hi",
            "elo",
            "elo_lo",
            "elo_hi",
            "n_games",
            "n_seat_games",
            "n_blocks",
            "order",
            "p_above_next",
            "gap_se_elo",
        ]
    ]


def _seat_table(
    rows: pd.DataFrame,
    player_counts: list[int],
    seat_index: dict[tuple[int, int], int],
    params: np.ndarray,
    cov: np.ndarray,
    level: float,
    seat_term: bool,
) -> pd.DataFrame:
    z = z_value(level)
    per_k = rows.groupby("players")
    n_games = per_k["game_id"].nunique()
    n_blocks = per_k["block"].nunique()
    records = []
    for k in player_counts:
        effects = np.array(
            [params[seat_index[(k, s)]] if (k, s) in seat_index else 0.0 for s in range(k)]
        )
        strength = np.exp(effects - effects.max())
        for s in range(k):
            idx = seat_index.get((k, s))
            se = float(np.sqrt(max(cov[idx, idx], 0.0))) if idx is not None else 0.0
            if not seat_term:
                se = float("nan")
            records.append(
                {
                    "players": k,
                    "seat": s,
                    "effect": effects[s],
                    "se": se,
                    "lo": effects[s] - z * se,
                    "hi": effects[s] + z * se,
                    "elo_effect": ELO_PER_LOGIT * effects[s],
                    "win_prob_equal": strength[s] / strength.sum(),
                    "n_games": int(n_games[k]),
                    "n_blocks": int(n_blocks[k]),
                }
            )
    return pd.DataFrame.from_records(records)


def free_parameters(fit: RatingFit) -> int:
    """Parameters the fit estimated: every strategy and seat term, less the anchor."""
    return len(fit.cov) - 1


def pooling_test(separate: list[RatingFit], pooled: RatingFit) -> dict[str, float]:
    """Likelihood-ratio test of one pooled fit against separate fits of disjoint groups.

    ``separate`` are fits of disjoint subsets of the games ``pooled`` was fitted to (one
    per player count and rule set). Under pooling (the same strategy strengths in every
    group) the statistic 2 (sum of separate log-likelihoods - pooled) is about
    chi-square with df = separate parameters - pooled parameters. Games in a block share
    dice, so the games are not independent and the test is approximate; a statistic far
    beyond its df rejects pooling however the blocks are counted.

    Returns:
        lr (the statistic), df, p_value, n_games.
    """
    if not separate:
        raise StatsInputError("no separate fits to compare the pooled fit with")
    n_games = sum(f.n_games for f in separate)
    if n_games != pooled.n_games:
        raise StatsInputError(
            f"the separate fits have {n_games} games and the pooled fit {pooled.n_games}: "
            "they must be fitted to the same games"
        )
    lr = max(2.0 * (sum(f.loglik for f in separate) - pooled.loglik), 0.0)
    df = sum(free_parameters(f) for f in separate) - free_parameters(pooled)
    p = float(sps.chi2.sf(lr, df)) if df > 0 else float("nan")
    return {"lr": lr, "df": float(df), "p_value": p, "n_games": float(n_games)}
