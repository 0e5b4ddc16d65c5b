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
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats as sps

from marrakech_sim.errors import StatsInputError
from marrakech_sim.stats._core import require_columns

GRID_POINTS = 101  # points of a fitted curve across the swept range


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
    if len(x) == 0 or (n <= 0).any() or ((y < 0) | (y > n)).any():
        raise StatsInputError("blocks: need rows with n > 0 and 0 <= y <= n")
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
    # (wins, losses) per block: a shared win counts its share, so the counts may be
    # fractional (the estimating equations are those of the win share weighted by games)
    model = sm.GLM(
        np.column_stack([y, n - y]), design(x, centre, scale, degree), family=sm.families.Binomial()
    )
    with warnings.catch_warnings():
        # a seat that (nearly) never wins at some value: the fit is then not defined
        warnings.simplefilter("error")
        try:
            fit = model.fit(cov_type="cluster", cov_kwds={"groups": clusters})
        except (Warning, ValueError, np.linalg.LinAlgError):
            return out
    exog = design(grid, centre, scale, degree)
    eta = exog @ fit.params
    se = np.sqrt(np.einsum("ij,jk,ik->i", exog, fit.cov_params(), exog))
    z = sps.norm.ppf(0.5 + level / 2)
    out["share"] = _expit(eta)
    out["lo"] = _expit(eta - z * se)
    out["hi"] = _expit(eta + z * se)
    return out


def _expit(v: np.ndarray) -> np.ndarray:
    p: np.ndarray = 1.0 / (1.0 + np.exp(-v))
    return p
