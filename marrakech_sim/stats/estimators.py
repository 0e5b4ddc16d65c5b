"""One estimator per statistic, computed from block totals.

A *block* is the unit of independence: games that share one chance stream (the same dice
and rug piles; with ``common_seeds`` the blocks of every rule set that share a seed) are
one cluster. Every block-aware number of the package comes from a function here; the
callers only *reduce* their data to block totals (pandas groupby in ``stats``, numpy
``bincount`` over chunks of whole blocks in the report, running sums in the runner's
stopping rule, a DuckDB GROUP BY over a sample of moves) and then call these.

Ratio of totals (a win share, a mean per game) with block totals y_b, m_b, B blocks,
Y = sum y_b, M = sum m_b, p = Y / M:

    var(p) = B / (B - 1) * sum_b (y_b - p m_b)^2 / M^2

the sandwich (linearisation) variance of a ratio estimator with B clusters and the usual
small-sample factor (CR1). It is computed from the sums S_yy, S_ym, S_mm of the block
totals, sum_b (y_b - p m_b)^2 = S_yy - 2 p S_ym + p^2 S_mm, the one form that running and
chunked sums can give. The tests check it against statsmodels' OLS with
``cov_type='cluster'``. Its intervals: for a rate, Wilson's at the effective number of
games p (1 - p) / var (:func:`rate_interval`; ``stats.intervals`` explains why); for a
mean, normal or Student's t (:func:`mean_interval`).

Difference of two ratios (a variant against its base): each block's influence on
mean(alt) - mean(base) is summed per cluster and squared; blocks of the two sides that
share a cluster key (the same seed: common random numbers) pair, which is what makes a
paired design pay. Its t reference has clusters - 1 degrees of freedom. When no block
pairs (every block its own cluster) the sums of each side's block totals are enough
(:func:`clustered_difference_from_sums`); :func:`clustered_difference` takes its
unpaired variance from them too.

Equal shares over k seats: the Wald statistic of p = 1/k with the cluster covariance; with
equal block sizes it is Hotelling's T^2 of the block means, referred to its exact
F(q, B - q) distribution (the "F test on blocks"). It needs only the sums of the block
totals y_b (k seats) and games n_b: sum y_b y_b^T, sum n_b y_b, sum n_b^2, sum y_b,
sum n_b and B (:func:`equal_share_sums`), which chunked passes add up.

Sequential test (the stopping rule ``sprt``): a generalised SPRT on the block totals, the
normal approximation that chess engine testing (fishtest) uses on game pairs. After B
blocks the ratio p has the block-clustered variance V; its design effect
d = V / (p (1 - p)) carries the blocks' correlation, and under hypothesis j (p = p_j) the
estimate is taken as normal with variance V_j = d p_j (1 - p_j). The log-likelihood ratio
of H1: p = p1 against H0: p = p0 is

    LLR = log N(p; p1, V1) - log N(p; p0, V0)

(with V0 = V1 = V it is (p1 - p0)(2 p - p0 - p1) / (2 V), fishtest's form). Giving each
hypothesis its own variance matters: a win share's variance grows with the share, and the
single plug-in V made the test accept H0 too often under H1 (beta 7-8% for a nominal 5%
in the simulation of tests/run/test_stopping.py; 4.5-5% with V_j). It is checked after every
block against Wald's bounds log(beta / (1 - alpha)) and log((1 - beta) / alpha), not before
:data:`SEQUENTIAL_MIN_BLOCKS` blocks (V rests on them), nor before the games in which
:data:`SEQUENTIAL_MIN_EXPECTED` of the rarer outcome are expected under each hypothesis
(the normal approximation's rule; it matters near a share of 0 or 1). Where the blocks
show no variation (p at 0 or 1) d is 1 / B: each block counts as one observation.
"""

from __future__ import annotations

import math
from typing import Any, overload

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

DEFAULT_LEVEL = 0.95


@overload
def wilson_interval(
    successes: float, n: float, level: float = ..., crit: float | None = ...
) -> tuple[float, float]: ...
@overload
def wilson_interval(
    successes: np.ndarray | pd.Series,
    n: np.ndarray | pd.Series | float,
    level: float = ...,
    crit: float | None = ...,
) -> tuple[np.ndarray, np.ndarray]: ...
def wilson_interval(
    successes: ArrayLike, n: ArrayLike, level: float = DEFAULT_LEVEL, crit: float | None = None
) -> tuple[float, float] | tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for ``successes`` out of ``n`` (vectorised).

    ``successes`` may be fractional (win shares of shared wins). Entries with n <= 0 or
    non-finite n give NaN bounds. ``crit``: the quantile in place of the normal one of
    ``level`` (a t quantile for a variance from few blocks; its level may round to 1).

    Returns:
        (lo, hi): floats for scalar input, arrays otherwise.
    """
    scalar = np.ndim(successes) == 0 and np.ndim(n) == 0
    x = np.atleast_1d(np.asarray(successes, dtype="float64"))
    m = np.broadcast_to(np.asarray(n, dtype="float64"), x.shape)
    lo = np.full(x.shape, np.nan)
    hi = np.full(x.shape, np.nan)
    ok = np.isfinite(m) & (m > 0) & np.isfinite(x)
    alpha = 1 - level if crit is None else 2 * float(sps.norm.sf(crit))
    if ok.any() and alpha <= 0:  # a quantile beyond the normal's range: Wilson's limit
        lo[ok], hi[ok] = 0.0, 1.0
    elif ok.any():
        lo_ok, hi_ok = proportion_confint(x[ok], m[ok], alpha=alpha, method="wilson")
        lo[ok] = np.clip(lo_ok, 0.0, 1.0)
        hi[ok] = np.clip(hi_ok, 0.0, 1.0)
    if scalar:
        return float(lo[0]), float(hi[0])
    return lo, hi


def z_value(level: float = DEFAULT_LEVEL) -> float:
    """Two-sided normal quantile for a ``level`` confidence interval."""
    return float(sps.norm.ppf(0.5 + level / 2))


def t_value(level: float, df: float) -> float:
    """Two-sided Student's t quantile for a ``level`` interval on ``df`` degrees of
    freedom; NaN below 1 (a variance from one block has none)."""
    return float(sps.t.ppf(0.5 + level / 2, df)) if df >= 1 else float("nan")


def effective_n(
    estimate: np.ndarray, var: np.ndarray, n: np.ndarray, n_blocks: np.ndarray | None = None
) -> np.ndarray:
    """Effective number of independent games: p(1-p)/var.

    Where that is undefined (no variance between blocks, or a rate of 0 or 1) it falls
    back to ``n_blocks`` when given: the blocks are the independent units, so a rate
    that every block shares (100% of every block's games won) is counted as that many
    observations, not as its games. Without ``n_blocks``, to ``n``. NaN where ``var`` is
    NaN (fewer than two blocks).
    """
    base = estimate * (1 - estimate)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = base / var
    usable = (var > 0) & (base > 0)
    out = np.where(usable, ratio, n if n_blocks is None else np.minimum(n_blocks, n))
    return np.where(np.isnan(var), np.nan, out)


def rate_interval(
    estimate: ArrayLike,
    var: ArrayLike,
    n: ArrayLike,
    level: float = DEFAULT_LEVEL,
    n_blocks: ArrayLike | None = None,
) -> dict[str, np.ndarray]:
    """Wilson interval of a rate at the effective number of games p(1-p) / var.

    Returns:
        n_eff (``n_blocks``, else ``n``, when var is 0; NaN with one block), lo, hi.
    """
    p = np.atleast_1d(np.asarray(estimate, dtype="float64"))
    v = np.broadcast_to(np.asarray(var, dtype="float64"), p.shape)
    count = np.broadcast_to(np.asarray(n, dtype="float64"), p.shape)
    blocks = (
        None
        if n_blocks is None
        else np.broadcast_to(np.asarray(n_blocks, dtype="float64"), p.shape)
    )
    n_eff = effective_n(p, v, count, blocks)
    lo, hi = wilson_interval(p * n_eff, n_eff, level)
    return {"n_eff": n_eff, "lo": lo, "hi": hi}


def mean_interval(
    estimate: ArrayLike, var: ArrayLike, level: float = DEFAULT_LEVEL, df: ArrayLike | None = None
) -> dict[str, np.ndarray]:
    """Interval of a mean from its block variance: normal, or Student's t with ``df``."""
    est = np.asarray(estimate, dtype="float64")
    se = np.sqrt(np.asarray(var, dtype="float64"))
    if df is None:
        crit: Any = z_value(level)
    else:
        d = np.asarray(df, dtype="float64")
        with np.errstate(invalid="ignore"):
            crit = np.where(d >= 1, sps.t.ppf(0.5 + level / 2, np.maximum(d, 1)), np.nan)
    return {"se": se, "lo": est - crit * se, "hi": est + crit * se}


#: the sums of block totals a ratio estimate needs, in :func:`ratio_from_sums`'s order
SUMS = ("total", "n", "syy", "sym", "smm", "n_blocks")

#: the sequential test takes no decision before this many blocks (its variance is estimated)
SEQUENTIAL_MIN_BLOCKS = 32

#: nor before this many of the rarer outcome are expected under each hypothesis (n p and
#: n (1 - p) at least 5, the normal approximation's rule): near a share of 0 or 1 a
#: few early losses made it accept H0 too soon (p0 0.98, p1 0.995, 2-game blocks: H0
#: in 91 of 1,000 tests at p1, against 5% nominal; 4 with this rule)
SEQUENTIAL_MIN_EXPECTED = 5.0


def sequential_min_games(p0: float, p1: float) -> int:
    """The games (the quantity's n) before the sequential test may decide: enough that
    SEQUENTIAL_MIN_EXPECTED of the rarer outcome are expected under p0 and under p1."""
    rare = min(p0, 1 - p0, p1, 1 - p1)
    return math.ceil(SEQUENTIAL_MIN_EXPECTED / rare)


def ratio_sums(
    y: ArrayLike,
    m: ArrayLike,
    group: ArrayLike | None = None,
    size: int | None = None,
    shift: float = 0.0,
) -> dict[str, np.ndarray]:
    """Per group, the sums of block totals (see :data:`SUMS`).

    Args:
        y, m: one (group, block) cell per entry: the block's total and count.
        group: the cell's group (0..size-1); None: one group.
        shift: the sums are of y - shift m (the ratio less ``shift``; the variance is the
            same): a shift near the ratio keeps S_yy - 2 p S_ym + p^2 S_mm from cancelling
            when the ratio is large against its spread. Pass it to :func:`ratio_from_sums`.
    """
    y = np.asarray(y, dtype="float64")
    m = np.asarray(m, dtype="float64")
    if shift:
        y = y - shift * m
    if group is None:
        group = np.zeros(len(y), "int64")
        size = 1
    g = np.asarray(group, dtype="int64")
    if size is None:
        size = int(g.max()) + 1 if len(g) else 0
    return {
        "total": np.bincount(g, y, size),
        "n": np.bincount(g, m, size),
        "syy": np.bincount(g, y * y, size),
        "sym": np.bincount(g, y * m, size),
        "smm": np.bincount(g, m * m, size),
        "n_blocks": np.bincount(g, minlength=size).astype("int64"),
    }


def ratio_from_sums(
    total: ArrayLike,
    n: ArrayLike,
    syy: ArrayLike,
    sym: ArrayLike,
    smm: ArrayLike,
    n_blocks: ArrayLike,
    shift: ArrayLike = 0.0,
) -> dict[str, np.ndarray]:
    """The ratio estimate total / n and its block-clustered (CR1) variance, vectorised.

    ``shift``: the one the sums were taken with (:func:`ratio_sums`); it is added back.

    Returns:
        total, n, n_blocks (int64), estimate (NaN when n = 0), var (NaN with fewer than
        two blocks: one block says nothing about the variation between blocks).
    """
    y = np.asarray(total, dtype="float64")
    m = np.asarray(n, dtype="float64")
    nb = np.asarray(n_blocks, dtype="float64")
    c = np.asarray(shift, dtype="float64")
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(m > 0, y / np.where(m > 0, m, 1.0), np.nan)
        resid = np.maximum(np.asarray(syy) - 2 * p * np.asarray(sym) + p**2 * np.asarray(smm), 0)
        var = np.where(nb > 1, nb / np.maximum(nb - 1.0, 1.0) * resid / (m * m), np.nan)
    return {
        "total": y + c * m,
        "n": m,
        "n_blocks": np.asarray(n_blocks).astype("int64"),
        "estimate": p + c,
        "var": var,
    }


def block_ratio(
    y: ArrayLike, m: ArrayLike, group: ArrayLike | None = None, size: int | None = None
) -> dict[str, np.ndarray]:
    """:func:`ratio_from_sums` of :func:`ratio_sums`: the ratio per group from block totals."""
    sums = ratio_sums(y, m, group, size)
    return ratio_from_sums(*(sums[name] for name in SUMS))


def two_sided_p(estimate: float, se: float, df: float | None = None) -> float:
    """Two-sided p-value of estimate = 0: normal, or Student's t with ``df``.

    With se = 0 (both sides constant) it is 1 for no difference, else 0.
    """
    if np.isnan(se):
        return float("nan")
    if se == 0:
        return 1.0 if estimate == 0 else 0.0
    stat = abs(estimate) / se
    if df is None:
        return float(2 * sps.norm.sf(stat))
    return float(2 * sps.t.sf(stat, max(df, 1.0)))


def _ratio_resid(sums: dict[str, Any], mean: float) -> float:
    """sum_b (y_b - mean m_b)^2 from the sums of block totals (:data:`SUMS`)."""
    return float(sums["syy"]) - 2 * mean * float(sums["sym"]) + mean**2 * float(sums["smm"])


def _difference(
    means: list[float],
    var: float,
    var_unpaired: float,
    clusters: int,
    paired: int,
    level: float,
) -> dict[str, float]:
    """The result of :func:`clustered_difference` from its means and variances."""
    diff = means[1] - means[0]
    se = float(np.sqrt(var))
    df = float(clusters - 1)
    ci = mean_interval(diff, var, level, df)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = var / var_unpaired if var_unpaired > 0 else float("nan")
    return {
        "baseline_mean": means[0],
        "mean": means[1],
        "diff": diff,
        "se": se,
        "df": df,
        "lo": float(ci["lo"]),
        "hi": float(ci["hi"]),
        "p_value": two_sided_p(diff, se, df),
        "n_clusters": clusters,
        "paired": paired,
        "se_unpaired": float(np.sqrt(var_unpaired)),
        "variance_ratio": float(ratio),
    }


def _cr1(sum_of_squares: float, count: int) -> float:
    return count / (count - 1) * sum_of_squares if count > 1 else float("nan")


def mean_from_sums(sums: dict[str, Any]) -> float:
    """The ratio estimate total / n from sums of block totals (:data:`SUMS`), the ``shift``
    they were taken with (:func:`ratio_sums`) added back; NaN when n is 0."""
    big_m = float(sums["n"])
    shifted = float(sums["total"]) / big_m if big_m > 0 else float("nan")
    return shifted + float(sums.get("shift", 0.0))


def _unpaired(base: dict[str, Any], alt: dict[str, Any]) -> tuple[list[float], float, int]:
    """Both means, the variance of their difference with every block its own cluster, and
    the blocks, from each side's sums of block totals (:data:`SUMS`, and the ``shift``
    they were taken with, if any: :func:`ratio_sums`). NaN when a side has one block:
    its block total is its mean, so its variance cannot be estimated.

    sum_b psi_b^2 = sum_b (y_b - mean m_b)^2 / M^2 per side (:func:`clustered_difference`).
    """
    means, squares, clusters = [], 0.0, 0
    for side in (base, alt):
        big_m = float(side["n"])
        means.append(mean_from_sums(side))
        if big_m > 0:
            squares += _ratio_resid(side, float(side["total"]) / big_m) / big_m**2
        clusters += int(side["n_blocks"])
    if min(int(base["n_blocks"]), int(alt["n_blocks"])) < 2:
        return means, float("nan"), clusters  # one block has no spread to measure
    return means, _cr1(squares, clusters), clusters


def clustered_difference_from_sums(
    base: dict[str, Any], alt: dict[str, Any], level: float = DEFAULT_LEVEL
) -> dict[str, float]:
    """:func:`clustered_difference` when no block of ``alt`` shares a cluster with ``base``.

    Every block is then its own cluster, and the variance needs only each side's sums of
    block totals (:data:`SUMS`, as :func:`ratio_sums` gives them), which chunked passes
    add up.
    """
    means, var, clusters = _unpaired(base, alt)
    return _difference(means, var, var, clusters, 0, level)


def clustered_difference_from_clusters(
    base: dict[str, Any],
    alt: dict[str, Any],
    psi_squares: float,
    clusters: int,
    paired: int,
    level: float = DEFAULT_LEVEL,
) -> dict[str, float]:
    """:func:`clustered_difference` from sums that chunked passes or a database add up.

    Args:
        base, alt: each side's sums of block totals (:data:`SUMS`, :func:`ratio_sums`).
        psi_squares: sum over the clusters of psi_c^2, psi_c = sum (y - m mean_alt) / M_alt
            over the cluster's blocks of ``alt`` minus the same over its blocks of ``base``
            (M: a side's games, mean: its ratio estimate).
        clusters: the clusters (keys) of both sides together.
        paired: blocks of ``alt`` in a cluster that ``base`` has too.
    """
    means, var_unpaired, _ = _unpaired(base, alt)
    return _difference(means, _cr1(psi_squares, clusters), var_unpaired, clusters, paired, level)


def clustered_difference(
    base: tuple[ArrayLike, ArrayLike, ArrayLike],
    alt: tuple[ArrayLike, ArrayLike, ArrayLike],
    level: float = DEFAULT_LEVEL,
) -> dict[str, float]:
    """mean(alt) - mean(base) from block totals, with its cluster-robust standard error.

    Args:
        base, alt: (cluster key, block total, block count) per block of each side. Blocks of
            the two sides with one key (common random numbers) are one cluster: their
            influences add before squaring.

    Returns:
        baseline_mean, mean, diff, se, df (clusters - 1), lo, hi (t interval), p_value (t),
        n_clusters, paired (blocks of ``alt`` whose key ``base`` has too), se_unpaired
        (the same data analysed as if no block paired: :func:`clustered_difference_from_sums`)
        and variance_ratio (se^2 / se_unpaired^2: below 1 when the pairing saves variance).
    """
    keys, psi, sums = [], [], []
    for (key, y, m), sign in ((base, -1.0), (alt, 1.0)):
        y = np.asarray(y, dtype="float64")
        m = np.asarray(m, dtype="float64")
        big_m = float(m.sum())
        mean = float(y.sum()) / big_m if big_m > 0 else float("nan")
        keys.append(np.asarray(key))
        psi.append(sign * (y - m * mean) / big_m if big_m > 0 else np.zeros(len(y)))
        sums.append({name: v[0] for name, v in ratio_sums(y, m).items()})
    _, cluster = np.unique(np.concatenate(keys), return_inverse=True)
    per_cluster = np.bincount(cluster, np.concatenate(psi))
    paired = int(np.isin(keys[1], keys[0]).sum())
    squares = float(per_cluster @ per_cluster)
    return clustered_difference_from_clusters(
        sums[0], sums[1], squares, len(per_cluster), paired, level
    )


#: the sums of a block-by-seat matrix :func:`equal_share_tests_from_sums` needs
SHARE_SUMS = ("total", "n", "syy", "syn", "snn", "n_blocks")


def equal_share_sums(totals: np.ndarray, n_games: np.ndarray) -> dict[str, Any]:
    """The sums of block totals behind the equal-share tests (:data:`SHARE_SUMS`).

    Args:
        totals: (B, k) summed win share per block and seat.
        n_games: (B,) games per block.

    Returns:
        total (k,) sum_b y_b, n sum_b n_b, syy (k, k) sum_b y_b y_b^T, syn (k,)
        sum_b n_b y_b, snn sum_b n_b^2, n_blocks B. Sums over disjoint sets of blocks add.
    """
    y = np.asarray(totals, dtype="float64")
    n = np.asarray(n_games, dtype="float64")
    return {
        "total": y.sum(axis=0),
        "n": float(n.sum()),
        "syy": y.T @ y,
        "syn": y.T @ n,
        "snn": float(n @ n),
        "n_blocks": len(n),
    }


def seat_ratio_sums(sums: dict[str, Any], seat: int) -> dict[str, Any]:
    """One seat's ratio sums (:data:`SUMS`) from the equal-share sums (:data:`SHARE_SUMS`)."""
    return {
        "total": sums["total"][seat],
        "n": sums["n"],
        "syy": sums["syy"][seat, seat],
        "sym": sums["syn"][seat],
        "smm": sums["snn"],
        "n_blocks": sums["n_blocks"],
    }


def equal_share_tests(
    totals: np.ndarray, n_games: np.ndarray, level: float = DEFAULT_LEVEL
) -> dict[str, float]:
    """Block-aware tests of equal seat shares from block totals (one row per block).

    :func:`equal_share_tests_from_sums` of :func:`equal_share_sums`.

    Args:
        totals: (B, k) summed win share per block and seat.
        n_games: (B,) games per block.
    """
    return equal_share_tests_from_sums(**equal_share_sums(totals, n_games), level=level)


def equal_share_tests_from_sums(
    total: np.ndarray,
    n: float,
    syy: np.ndarray,
    syn: np.ndarray,
    snn: float,
    n_blocks: int,
    level: float = DEFAULT_LEVEL,
) -> dict[str, float]:
    """Block-aware tests of equal seat shares from the sums :func:`equal_share_sums` lists.

    With p = total / n, sum_b (y_b - n_b p)(y_b - n_b p)^T = syy - syn p^T - p syn^T +
    snn p p^T: the block covariance of the shares, CR1 as in :func:`ratio_from_sums`.

    Returns:
        chi2_block (the Wald statistic W of shares = 1/k with the block covariance),
        df_block (q, its rank), f_block ((B - q) / (q (B - 1)) W, Hotelling's T^2 scaled),
        f_df2 (B - q), p_block (the F test on blocks: F(q, B - q)), chi2_pearson, p_pearson
        (Pearson's chi-square on win counts, as if games were independent), trend_pp,
        trend_se_pp, trend_lo_pp, trend_hi_pp, trend_p (least-squares slope of win share
        on seat index, pp per seat, clustered, t with B - 1 df), lack_of_fit_f,
        lack_of_fit_df, lack_of_fit_p (whether the shares depart from that line: the Wald
        statistic of the line's residuals with their block covariance, F-scaled as
        f_block; NaN with 2 seats, where a line fits any two shares), n_games, n_blocks.
    """
    total = np.asarray(total, dtype="float64")
    syy = np.asarray(syy, dtype="float64")
    syn = np.asarray(syn, dtype="float64")
    n_blocks = int(n_blocks)
    k = len(total)
    big_n = float(n)
    p = total / big_n
    cross = syy - np.outer(syn, p) - np.outer(p, syn) + float(snn) * np.outer(p, p)
    cov = n_blocks / (n_blocks - 1) * cross / big_n**2 if n_blocks > 1 else np.full((k, k), np.nan)
    diff = p[: k - 1] - 1.0 / k
    sub = cov[: k - 1, : k - 1]
    f_block, f_df2 = float("nan"), float("nan")
    if np.all(np.isfinite(sub)) and n_blocks > 1:
        # pinv/rank: with few blocks or a degenerate design V may be singular.
        df = int(np.linalg.matrix_rank(sub))
        chi2_block = float(diff @ np.linalg.pinv(sub) @ diff)
        if 0 < df < n_blocks:
            f_block = (n_blocks - df) / (df * (n_blocks - 1)) * chi2_block
            f_df2 = float(n_blocks - df)
            p_block = float(sps.f.sf(f_block, df, n_blocks - df))
        else:
            p_block = float("nan")
    else:
        df, chi2_block, p_block = 0, float("nan"), float("nan")
    pearson = sps.chisquare(total, f_exp=np.full(k, big_n / k))
    seat_idx = np.arange(k, dtype="float64")
    centred = seat_idx - seat_idx.mean()
    contrast = centred / (centred**2).sum()
    slope = float(contrast @ p)
    se = float(np.sqrt(contrast @ cov @ contrast))
    t_df = max(n_blocks - 1, 1)
    t_crit = t_value(level, t_df)
    with np.errstate(divide="ignore", invalid="ignore"):
        trend_p = float(2 * sps.t.sf(abs(slope) / se, t_df)) if se > 0 else float("nan")
    lack = _lack_of_line(p, cov, n_blocks)
    return {
        "n_games": int(big_n),
        "n_blocks": int(n_blocks),
        "chi2_block": chi2_block,
        "df_block": df,
        "f_block": f_block,
        "f_df2": f_df2,
        "p_block": p_block,
        "chi2_pearson": float(pearson.statistic),
        "p_pearson": float(pearson.pvalue),
        "trend_pp": 100 * slope,
        "trend_se_pp": 100 * se,
        "trend_lo_pp": 100 * (slope - t_crit * se),
        "trend_hi_pp": 100 * (slope + t_crit * se),
        "trend_p": trend_p,
        **lack,
    }


def _lack_of_line(p: np.ndarray, cov: np.ndarray, n_blocks: int) -> dict[str, float]:
    """The lack-of-fit test of a line through the seats' shares ``p`` (covariance ``cov``
    from ``n_blocks`` blocks): r = M p, M the projection off (1, seat index), W = r'
    pinv(M cov M) r of rank q = k - 2, F = (B - q) / (q (B - 1)) W on (q, B - q) df."""
    k = len(p)
    out = {"lack_of_fit_f": float("nan"), "lack_of_fit_df": 0, "lack_of_fit_p": float("nan")}
    if k < 3 or n_blocks < 2 or not np.all(np.isfinite(cov)):
        return out
    x = np.column_stack([np.ones(k), np.arange(k, dtype="float64")])
    m = np.eye(k) - x @ np.linalg.pinv(x)
    resid_cov = m @ cov @ m
    q = int(np.linalg.matrix_rank(resid_cov))
    if not 0 < q < n_blocks:
        return out
    r = m @ p
    wald = float(r @ np.linalg.pinv(resid_cov) @ r)
    f = (n_blocks - q) / (q * (n_blocks - 1)) * wald
    out.update(lack_of_fit_f=f, lack_of_fit_df=q, lack_of_fit_p=float(sps.f.sf(f, q, n_blocks - q)))
    return out


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's (lower, upper) bounds on the log-likelihood ratio for error rates alpha, beta."""
    return float(np.log(beta / (1 - alpha))), float(np.log((1 - beta) / alpha))


def sequential_llr(
    estimate: ArrayLike,
    var: ArrayLike,
    p0: float,
    p1: float,
    n_blocks: ArrayLike | None = None,
) -> np.ndarray:
    """Generalised SPRT log-likelihood ratio of H1: p = p1 against H0: p = p0 (vectorised).

    Normal likelihoods of the estimate with the variances d p_j (1 - p_j), d the design
    effect var / (p (1 - p)). Where the blocks show no variation (a variance of 0: p at 0
    or 1, every game of the quantity won or lost, or every block at the same share) d is
    not defined; with ``n_blocks`` it is then 1 / n_blocks, each block counted as one
    observation (the most a block's games can be correlated), so that a strategy that wins
    every game still reaches a decision. NaN with fewer than two blocks, or without
    ``n_blocks`` where d is not defined.
    """
    p = np.asarray(estimate, dtype="float64")
    v = np.asarray(var, dtype="float64")
    blocks = np.full(p.shape, np.nan) if n_blocks is None else np.asarray(n_blocks, "float64")
    with np.errstate(divide="ignore", invalid="ignore"):
        defined = (v > 0) & (p > 0) & (p < 1)
        d = np.where(defined, v / (p * (1 - p)), 1.0 / blocks)
        v0, v1 = d * p0 * (1 - p0), d * p1 * (1 - p1)
        llr = 0.5 * ((p - p0) ** 2 / v0 - (p - p1) ** 2 / v1) + 0.5 * np.log(v0 / v1)
    ok = np.isfinite(v) & (p >= 0) & (p <= 1) & (defined | (blocks >= 2))
    return np.where(ok, llr, np.nan)


def cumulative_sums(
    y: ArrayLike, m: ArrayLike, start: dict[str, float] | None = None
) -> dict[str, np.ndarray]:
    """The sums (:data:`SUMS`) after each block of ``y``, ``m``, added to ``start``'s."""
    y = np.asarray(y, dtype="float64")
    m = np.asarray(m, dtype="float64")
    s0 = start or dict.fromkeys(SUMS, 0.0)
    return {
        "total": s0["total"] + np.cumsum(y),
        "n": s0["n"] + np.cumsum(m),
        "syy": s0["syy"] + np.cumsum(y * y),
        "sym": s0["sym"] + np.cumsum(y * m),
        "smm": s0["smm"] + np.cumsum(m * m),
        "n_blocks": s0["n_blocks"] + np.arange(1, len(y) + 1),
    }


def sequential_test(
    y: ArrayLike,
    m: ArrayLike,
    p0: float,
    p1: float,
    alpha: float,
    beta: float,
    start: dict[str, float] | None = None,
    min_blocks: int = SEQUENTIAL_MIN_BLOCKS,
    allowed: ArrayLike | None = None,
) -> dict[str, Any]:
    """Run the generalised SPRT block by block over block totals ``y``, ``m``.

    Args:
        start: the sums (:data:`SUMS`) of the blocks before these (a running test).
        allowed: per block, whether a decision may be taken after it (e.g. ``min_games``).
            None is taken before ``min_blocks`` blocks or `sequential_min_games` games.

    Returns:
        index (the block after which the test stops, or None), decision ("H1", "H0" or
        None), and at that block (or the last one) the sums, estimate, var, llr, lower,
        upper.
    """
    s0 = start or dict.fromkeys(SUMS, 0.0)
    cum = cumulative_sums(y, m, s0)
    est = ratio_from_sums(*(cum[name] for name in SUMS))
    llr = sequential_llr(est["estimate"], est["var"], p0, p1, cum["n_blocks"])
    lower, upper = sprt_bounds(alpha, beta)
    ok = (cum["n_blocks"] >= min_blocks) & (cum["n"] >= sequential_min_games(p0, p1))
    if allowed is not None:
        ok &= np.asarray(allowed, bool)
    with np.errstate(invalid="ignore"):
        h1 = ok & (llr >= upper)
        h0 = ok & (llr <= lower)
    hit = np.flatnonzero(h1 | h0)
    index = int(hit[0]) if len(hit) else None
    at = index if index is not None else len(llr) - 1
    out: dict[str, Any] = {
        "index": index,
        "decision": None if index is None else ("H1" if h1[index] else "H0"),
        "lower": lower,
        "upper": upper,
    }
    if at >= 0:
        out["sums"] = {name: float(cum[name][at]) for name in SUMS}
        out.update(estimate=float(est["estimate"][at]), var=float(est["var"][at]))
        out["llr"] = float(llr[at])
    else:
        out["sums"] = dict(s0)
    return out
