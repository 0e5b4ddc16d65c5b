"""How an effect changes across skill levels: a line on the levels' measured strength, or
only a test that the levels differ.

The inputs are one effect per level (independent samples: each level plays its own
blocks) with its standard error, taken as known. Two tests:

- **heterogeneity** (Cochran's Q): do the levels' effects differ at all? Q is the
  weighted sum of squares about the weighted mean, chi-square on k - 1 degrees of freedom.
- **a line on strength**: the weighted least-squares slope of the effect on each level's
  measured strength (Elo, so that a step of +10 Elo counts for a tenth of a step of +100:
  a level's *index* would treat them alike), with its **lack-of-fit** test, the weighted
  residual sum of squares, chi-square on k - 2 degrees of freedom. A line needs three
  levels or more: through two points it always fits and says nothing the step does not.

A trend is claimed only where the slope differs from 0 and the line is not rejected; a
V shape (down then up) is rejected by the lack-of-fit test, and then the levels only
*differ*. Both are checked against statsmodels' WLS in the tests (``ssr``, ``bse`` with
the scale fixed at 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

#: the unit of the strength axis: slopes are per 100 Elo
ELO_STEP = 100.0


@dataclass(frozen=True, slots=True)
class Heterogeneity:
    """Cochran's Q test that k independent effects are equal."""

    q: float
    df: int
    p: float


@dataclass(frozen=True, slots=True)
class Line:
    """A weighted line through (strength, effect): slope per ``ELO_STEP`` with its
    standard error and p, and the lack-of-fit test (weighted residuals, k - 2 df)."""

    slope: float
    se: float
    p: float
    lack_of_fit: float
    df: int
    lack_of_fit_p: float
    intercept: float
    centre: float

    def at(self, x: float) -> float:
        """The line's effect at strength ``x`` (Elo)."""
        return self.intercept + self.slope * (x - self.centre) / ELO_STEP

    def change(self, lo: float, hi: float) -> tuple[float, float]:
        """The line's change from strength ``lo`` to ``hi`` (Elo) and its standard error,
        the strengths taken as known (as the fit takes them): a slope small per
        ``ELO_STEP`` can add up to a large change over a wide range."""
        steps = (hi - lo) / ELO_STEP
        return self.slope * steps, self.se * abs(steps)


def heterogeneity(values: np.ndarray, ses: np.ndarray) -> Heterogeneity:
    """Cochran's Q of effects ``values`` with standard errors ``ses`` (all > 0)."""
    v, w = _arrays(values, ses)
    mean = float(np.sum(w * v) / np.sum(w))
    q = float(np.sum(w * (v - mean) ** 2))
    df = len(v) - 1
    return Heterogeneity(q, df, float(sps.chi2.sf(q, df)) if df > 0 else math.nan)


def line(strength: np.ndarray, values: np.ndarray, ses: np.ndarray) -> Line:
    """The weighted least-squares line of ``values`` on ``strength`` (Elo; weights
    1 / se^2, the variances known), three levels or more."""
    v, w = _arrays(values, ses)
    x = np.asarray(strength, dtype="float64") / ELO_STEP
    if len(v) < 3:
        raise ValueError(f"a line's fit needs three levels or more, not {len(v)}")
    centre = float(np.sum(w * x) / np.sum(w))
    sxx = float(np.sum(w * (x - centre) ** 2))
    if not sxx > 0:
        raise ValueError("the levels' strengths are all equal: no line can be fitted")
    slope = float(np.sum(w * (x - centre) * v) / sxx)
    intercept = float(np.sum(w * v) / np.sum(w))
    se = 1.0 / math.sqrt(sxx)
    resid = v - intercept - slope * (x - centre)
    rss = float(np.sum(w * resid**2))
    df = len(v) - 2
    p = float(2 * sps.norm.sf(abs(slope) / se))
    return Line(slope, se, p, rss, df, float(sps.chi2.sf(rss, df)), intercept, centre * ELO_STEP)


def _arrays(values: np.ndarray, ses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    v = np.asarray(values, dtype="float64")
    s = np.asarray(ses, dtype="float64")
    if v.shape != s.shape or v.ndim != 1 or len(v) < 2:
        raise ValueError("need one effect and one standard error per level, two levels or more")
    if not np.all(np.isfinite(s) & (s > 0)):
        raise ValueError(f"standard errors must be positive and finite, not {s.tolist()}")
    return v, 1.0 / s**2


__all__ = ["ELO_STEP", "Heterogeneity", "Line", "heterogeneity", "line"]
