"""Response curves: a seat's win share as a smooth function of a swept rule option.

The data are block totals of one seat under each swept value (a sweep's values share
their block seeds, so a *cluster* is one seed: the games of all values played from it).
The fit is a binomial GLM (statsmodels) of the win share on a polynomial in the value,
quadratic when three values or more allow it (linear with two), with the games of a
block as its weight and a cluster-robust (sandwich) covariance on the seeds: games from
one seed share dice across seats and across values. The band is the fit's pointwise
interval, computed on the logit scale and mapped back (so it stays within 0 and 1).

Why a quadratic and not a spline: a sweep has a handful of values (five in the shipped
config); a spline with knots between them has as many parameters as values, which is the
per-value estimate again. The points with their own intervals are drawn beside the curve,
so a poor fit shows. The band is checked in the tests against a bootstrap over seeds and
by its coverage of a known response in simulation.

The claims a report makes from the curves of one sweep's seats (``fit_seat_curves``) rest
on three further computations, each checked by simulation with a known truth:

* **Lack of fit.** The quadratic is nested in the per-value model (one share per value):
  a cluster-robust Wald test of the terms the quadratic leaves out (degrees 3 to K-1 of a
  Legendre basis, K values) says whether the points depart from the curve by more than
  chance (F reference on the seeds less one), one test per seat, Bonferroni across the
  seats. Where it fails, the report speaks of the points, not the curve. With three
  values or fewer the quadratic passes through the points and there is nothing to test.
* **A simultaneous band.** The seats' fits are joined in one sandwich covariance (the
  seats' scores summed per seed, so their dependence - shares that sum to one - is kept),
  and the band's half-width is the 95% quantile of the largest standardised deviation over
  every seat and grid value, from draws of the joint normal of the coefficients (a sup-t
  band). It covers every seat's whole curve together, so "fair from X to Y" and the
  interval at a value chosen from the data (the fairest) keep their level.
* **Where the fairest value lies.** The same draws give each draw's fairest value (the one
  whose largest seat effect is smallest); their 2.5-97.5% range is its interval.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats as sps

from marrakech_sim.errors import StatsInputError
from marrakech_sim.stats._core import require_columns

GRID_POINTS = 101  # points of a fitted curve across the swept range
DRAWS = 4000  # draws of the coefficients for the simultaneous band and the fairest value
DRAW_SEED = 20261204  # the draws are seeded: a report is the same each time it is built


def design(x: np.ndarray, centre: float, scale: float, degree: int) -> np.ndarray:
    """The GLM's columns: 1, z, z^2, ... with z the value centred and scaled."""
    z = (np.asarray(x, dtype="float64") - centre) / scale
    return np.column_stack([z**d for d in range(degree + 1)])


def fit_response(
    blocks: pd.DataFrame,
    level: float = 0.95,
    grid: np.ndarray | None = None,
    degree: int | None = None,
) -> pd.DataFrame:
    """The fitted win share of one seat against the swept value, with its band.

    Args:
        blocks: one row per (value, block): ``x`` (the value), ``cluster`` (the block's
            seed: blocks of different values played from one seed share it), ``y`` (the
            seat's win shares summed over the block's games) and ``n`` (its games).
        grid: the values to predict at (default: GRID_POINTS across the range of x).
        degree: of the polynomial (default: 2, or the distinct values less one if fewer).

    Returns:
        One row per grid value: x, share, lo, hi (NaN when the fit is impossible: a
        seat that always or never wins, or fewer than two clusters).
    """
    require_columns(blocks, ("x", "cluster", "y", "n"), "blocks")
    x = blocks["x"].to_numpy(dtype="float64")
    n = blocks["n"].to_numpy(dtype="float64")
    y = blocks["y"].to_numpy(dtype="float64")
    _check_counts(blocks)
    values = np.unique(x)
    if degree is None:
        degree = min(2, len(values) - 1)
    if grid is None:
        grid = np.linspace(values.min(), values.max(), GRID_POINTS)
    grid = np.asarray(grid, dtype="float64")
    out = pd.DataFrame({"x": grid, "share": np.nan, "lo": np.nan, "hi": np.nan})
    clusters = pd.factorize(blocks["cluster"])[0]
    total = y.sum() / n.sum()
    if len(values) < 2 or clusters.max() < 1 or total in (0.0, 1.0):
        return out
    centre = float(values.mean())
    scale = float(values.std()) or 1.0
    fit = _glm(y, n, design(x, centre, scale, degree), clusters)
    if fit is None:
        return out
    exog = design(grid, centre, scale, degree)
    eta = exog @ fit.params
    se = np.sqrt(np.einsum("ij,jk,ik->i", exog, fit.cov_params(), exog))
    z = sps.norm.ppf(0.5 + level / 2)
    out["share"] = _expit(eta)
    out["lo"] = _expit(eta - z * se)
    out["hi"] = _expit(eta + z * se)
    return out


def _check_counts(blocks: pd.DataFrame) -> None:
    n = blocks["n"].to_numpy(dtype="float64")
    y = blocks["y"].to_numpy(dtype="float64")
    if len(n) == 0 or (n <= 0).any() or ((y < 0) | (y > n)).any():
        raise StatsInputError("blocks: need rows with n > 0 and 0 <= y <= n")


def _glm(y: np.ndarray, n: np.ndarray, exog: np.ndarray, clusters: np.ndarray) -> Any:
    """The binomial GLM of the win share with a covariance clustered on seeds, or None
    where it is not defined (a seat that never or always wins at some value)."""
    # (wins, losses) per block: a shared win counts its share, so the counts may be
    # fractional (the estimating equations are those of the win share weighted by games)
    model = sm.GLM(np.column_stack([y, n - y]), exog, family=sm.families.Binomial())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            return model.fit(cov_type="cluster", cov_kwds={"groups": clusters})
        except (Warning, ValueError, np.linalg.LinAlgError):
            return None


@dataclass(frozen=True, slots=True)
class SeatCurves:
    """The fitted curves of every seat of one sweep, and what the report may claim.

    ``curves``: one row per seat and grid value: seat, x, share, lo, hi (the pointwise
    band), band_lo, band_hi (the simultaneous band: every seat's whole curve together).
    ``seats``: one row per seat: seat, lack_chi2, lack_df, lack_p (the seat's lack-of-fit
    test; NaN with three values or fewer, or where the per-value model is not defined).
    ``lack_p``: the smallest seat's lack-of-fit p times the number of seats tested
    (Bonferroni, at most 1; NaN when no seat could be tested). ``crit``: the band's
    critical value (about 1.96 would be pointwise). ``fairest``: the grid value whose
    largest seat effect is smallest, with its interval ``fairest_lo`` to ``fairest_hi``.
    ``fitted`` is False (and the numbers NaN) where some seat's curve is not defined.
    """

    curves: pd.DataFrame
    seats: pd.DataFrame
    lack_p: float
    crit: float
    fairest: float
    fairest_lo: float
    fairest_hi: float
    fitted: bool


def fit_seat_curves(
    blocks: pd.DataFrame,
    fair: float,
    level: float = 0.95,
    grid: np.ndarray | None = None,
    draws: int = DRAWS,
) -> SeatCurves:
    """Every seat's fitted curve, jointly: the simultaneous band, the lack-of-fit tests and
    the fairest value with its interval (the module's docstring says how).

    Args:
        blocks: one row per (seat, value, block): ``seat``, ``x``, ``cluster`` (the block's
            seed, shared by the values and the seats), ``y`` (the seat's win shares summed
            over the block's games) and ``n`` (its games).
        fair: the fair share (1 / players): a seat's effect is its share minus it.
    """
    require_columns(blocks, ("seat", "x", "cluster", "y", "n"), "blocks")
    _check_counts(blocks)
    seats = sorted(int(v) for v in blocks["seat"].unique())
    values = np.unique(blocks["x"].to_numpy(dtype="float64"))
    if grid is None:
        grid = np.linspace(values.min(), values.max(), GRID_POINTS) if len(values) else values
    grid = np.asarray(grid, dtype="float64")
    clusters = pd.factorize(blocks["cluster"])[0]
    n_clusters = int(clusters.max()) + 1 if len(clusters) else 0
    empty = pd.DataFrame(
        {"seat": np.repeat(seats, len(grid)), "x": np.tile(grid, len(seats))}
    ).assign(share=np.nan, lo=np.nan, hi=np.nan, band_lo=np.nan, band_hi=np.nan)
    tests = pd.DataFrame({"seat": seats, "lack_chi2": np.nan, "lack_df": 0, "lack_p": np.nan})
    failed = SeatCurves(empty, tests, np.nan, np.nan, np.nan, np.nan, np.nan, False)
    if len(values) < 2 or n_clusters < 2:
        return failed
    degree = min(2, len(values) - 1)
    centre = float(values.mean())
    scale = float(values.std()) or 1.0
    fits, scores, breads = [], [], []
    for seat in seats:
        mine = (blocks["seat"] == seat).to_numpy()
        y = blocks["y"].to_numpy(dtype="float64")[mine]
        n = blocks["n"].to_numpy(dtype="float64")[mine]
        total = y.sum() / n.sum()
        x = blocks["x"].to_numpy(dtype="float64")[mine]
        fit = (
            None
            if total in (0.0, 1.0)
            else _glm(y, n, design(x, centre, scale, degree), clusters[mine])
        )
        if fit is None:
            return failed
        fits.append(fit)
        # the seat's estimating equations summed per seed: the meat of the joint sandwich
        per_cluster = np.zeros((n_clusters, degree + 1))
        np.add.at(per_cluster, clusters[mine], fit.model.score_obs(fit.params))
        scores.append(per_cluster)
        breads.append(np.linalg.inv(-fit.model.hessian(fit.params)))
    k = degree + 1
    meat = np.hstack(scores)
    bread = np.zeros((k * len(seats), k * len(seats)))
    for i, b in enumerate(breads):
        bread[i * k : (i + 1) * k, i * k : (i + 1) * k] = b
    n_obs = int(fits[0].nobs)
    # statsmodels' small-sample factor for cov_type="cluster" (the diagonal blocks then
    # equal each seat's own clustered covariance; the tests check it)
    factor = n_clusters / (n_clusters - 1.0) * (n_obs - 1.0) / (n_obs - k)
    cov = factor * bread @ (meat.T @ meat) @ bread
    exog = design(grid, centre, scale, degree)
    eta = np.stack([exog @ f.params for f in fits])  # seats x grid
    se = np.stack(
        [
            np.sqrt(
                np.einsum("ij,jk,ik->i", exog, cov[i * k : (i + 1) * k, i * k : (i + 1) * k], exog)
            )
            for i in range(len(seats))
        ]
    )
    # draws of the coefficients' joint normal (a factor that allows a singular covariance:
    # with two seats one seat's curve is the other's mirror)
    w, u = np.linalg.eigh(cov)
    root = u * np.sqrt(np.clip(w, 0.0, None))
    rng = np.random.default_rng(DRAW_SEED)
    delta = rng.standard_normal((draws, len(w))) @ root.T
    dev = np.stack([delta[:, i * k : (i + 1) * k] @ exog.T for i in range(len(seats))], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(dev) / se[None]
    crit = float(np.quantile(np.nan_to_num(t, nan=0.0).max(axis=(1, 2)), level))
    z = sps.norm.ppf(0.5 + level / 2)
    rows = []
    for i, seat in enumerate(seats):
        rows.append(
            pd.DataFrame(
                {
                    "seat": seat,
                    "x": grid,
                    "share": _expit(eta[i]),
                    "lo": _expit(eta[i] - z * se[i]),
                    "hi": _expit(eta[i] + z * se[i]),
                    "band_lo": _expit(eta[i] - crit * se[i]),
                    "band_hi": _expit(eta[i] + crit * se[i]),
                }
            )
        )
    curves = pd.concat(rows, ignore_index=True)
    # each draw's fairest grid value: the one whose largest seat effect is smallest
    largest = np.abs(_expit(eta[None] + dev) - fair).max(axis=1)  # draws x grid
    picked = grid[np.argmin(largest, axis=1)]
    tail = (1.0 - level) / 2
    fairest = float(grid[np.argmin(np.abs(_expit(eta) - fair).max(axis=0))])
    tests = _lack_of_fit(blocks, seats, values, degree, clusters)
    tested = tests["lack_p"].dropna()
    lack_p = float(min(1.0, tested.min() * len(tested))) if len(tested) else np.nan
    return SeatCurves(
        curves,
        tests,
        lack_p,
        crit,
        fairest,
        float(np.quantile(picked, tail)),
        float(np.quantile(picked, 1.0 - tail)),
        True,
    )


def _lack_of_fit(
    blocks: pd.DataFrame, seats: list[int], values: np.ndarray, degree: int, clusters: np.ndarray
) -> pd.DataFrame:
    """Each seat's Wald test (clustered on seeds) of the per-value model's terms beyond
    the curve's degree: the per-value model in a Legendre basis whose first terms span the
    curve's polynomial, so the test is that of the terms the curve leaves out."""
    extra = len(values) - 1 - degree
    rows = []
    for seat in seats:
        row = {"seat": seat, "lack_chi2": np.nan, "lack_df": extra, "lack_p": np.nan}
        rows.append(row)
        if extra < 1:
            continue
        mine = (blocks["seat"] == seat).to_numpy()
        x = blocks["x"].to_numpy(dtype="float64")[mine]
        half = (values.max() - values.min()) / 2
        u = (x - (values.max() + values.min()) / 2) / half
        exog = np.polynomial.legendre.legvander(u, len(values) - 1)
        y = blocks["y"].to_numpy(dtype="float64")[mine]
        n = blocks["n"].to_numpy(dtype="float64")[mine]
        wins = np.bincount(np.searchsorted(values, x), y, len(values))
        games = np.bincount(np.searchsorted(values, x), n, len(values))
        if ((wins == 0) | (wins == games)).any():
            # a value where the seat wins every game or none: no logistic curve passes
            # through it, and the per-value model's Wald test breaks down there (its
            # coefficient runs off to infinity: the Hauck-Donner effect), so it counts as
            # a lack of fit and the verdict reads the points
            row["lack_chi2"], row["lack_p"] = np.inf, 0.0
            continue
        fit = _glm(y, n, exog, clusters[mine])
        if fit is None:
            continue
        restriction = np.eye(len(values))[degree + 1 :]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # statsmodels' notice of its scalar default
            wald = fit.wald_test(restriction, scalar=True, use_f=False)
        row["lack_chi2"] = float(wald.statistic)
        # an F reference on the seeds less one, as for the other clustered tests
        n_clusters = len(np.unique(clusters[mine]))
        row["lack_p"] = float(sps.f.sf(row["lack_chi2"] / extra, extra, n_clusters - 1))
    return pd.DataFrame(rows, columns=["seat", "lack_chi2", "lack_df", "lack_p"])


def _expit(v: np.ndarray) -> np.ndarray:
    p: np.ndarray = 1.0 / (1.0 + np.exp(-v))
    return p
