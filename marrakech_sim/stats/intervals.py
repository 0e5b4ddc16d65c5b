"""Confidence intervals for rates and means, plain and block-aware.

A *block* is a set of games that share one chance stream (the same dice) and differ only
in how the line-up is seated. Games of a block are not independent, so every interval in
this package is computed from block totals (a cluster-robust, "sandwich" variance), never
from a count of games as if each were a fresh draw.

For a rate (win share, tie rate) the interval is Wilson's score interval
(``statsmodels.stats.proportion.proportion_confint(method='wilson')``) evaluated at the
*effective* number of games n_eff = p(1-p) / var_block(p), i.e. the number of
independent games that would give the block-clustered variance. This keeps Wilson's good
behaviour near 0 and 1 and reduces exactly to it when the blocks are single games with no
shared wins. When blocks disagree not at all (var_block = 0) n_eff falls back to the
number of games.
"""

from __future__ import annotations

from typing import Any, overload

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

DEFAULT_LEVEL = 0.95


@overload
def wilson_interval(successes: float, n: float, level: float = ...) -> tuple[float, float]: ...
@overload
def wilson_interval(
    successes: np.ndarray | pd.Series, n: np.ndarray | pd.Series | float, level: float = ...
) -> tuple[np.ndarray, np.ndarray]: ...
def wilson_interval(
    successes: ArrayLike, n: ArrayLike, level: float = DEFAULT_LEVEL
) -> tuple[float, float] | tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for ``successes`` out of ``n`` (vectorised).

    ``successes`` may be fractional (win shares of shared wins). Entries with n <= 0 or
    non-finite n give NaN bounds.

    Returns:
        (lo, hi): floats for scalar input, arrays otherwise.
    """
    scalar = np.ndim(successes) == 0 and np.ndim(n) == 0
    x = np.atleast_1d(np.asarray(successes, dtype="float64"))
    m = np.broadcast_to(np.asarray(n, dtype="float64"), x.shape)
    lo = np.full(x.shape, np.nan)
    hi = np.full(x.shape, np.nan)
    ok = np.isfinite(m) & (m > 0) & np.isfinite(x)
    if ok.any():
        lo_ok, hi_ok = proportion_confint(x[ok], m[ok], alpha=1 - level, method="wilson")
        lo[ok] = np.clip(lo_ok, 0.0, 1.0)
        hi[ok] = np.clip(hi_ok, 0.0, 1.0)
    if scalar:
        return float(lo[0]), float(hi[0])
    return lo, hi


def z_value(level: float = DEFAULT_LEVEL) -> float:
    """Two-sided normal quantile for a ``level`` confidence interval."""
    return float(sps.norm.ppf(0.5 + level / 2))


def effective_n(estimate: np.ndarray, var: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Effective number of independent games: p(1-p)/var, falling back to ``n``.

    NaN where ``var`` is NaN (fewer than two blocks).
    """
    base = estimate * (1 - estimate)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = base / var
    usable = (var > 0) & (base > 0)
    out = np.where(usable, ratio, n)
    return np.where(np.isnan(var), np.nan, out)


def rate_interval(
    estimate: ArrayLike, var: ArrayLike, n: ArrayLike, level: float = DEFAULT_LEVEL
) -> dict[str, np.ndarray]:
    """Wilson interval of a rate at the effective number of games p(1-p) / var.

    Returns:
        n_eff (``n`` when var is 0, NaN with one block), lo, hi.
    """
    p = np.atleast_1d(np.asarray(estimate, dtype="float64"))
    v = np.broadcast_to(np.asarray(var, dtype="float64"), p.shape)
    count = np.broadcast_to(np.asarray(n, dtype="float64"), p.shape)
    n_eff = effective_n(p, v, count)
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


def add_rate_interval(table: pd.DataFrame, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """Add ``n_eff``, ``design_effect``, ``lo``, ``hi`` (:func:`rate_interval`) to a ratio table.

    ``table`` carries ``estimate``, ``var``, ``n`` as made by the block aggregation.
    """
    out = table.copy()
    ci = rate_interval(out["estimate"], out["var"], out["n"], level)
    out["n_eff"] = ci["n_eff"]
    with np.errstate(divide="ignore", invalid="ignore"):
        out["design_effect"] = out["n"].to_numpy(dtype="float64") / ci["n_eff"]
    out["lo"] = ci["lo"]
    out["hi"] = ci["hi"]
    return out


def add_mean_interval(table: pd.DataFrame, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """Add ``se``, ``lo``, ``hi`` (normal interval from the block variance) to a ratio table."""
    out = table.copy()
    ci = mean_interval(out["estimate"], out["var"], level)
    out["se"] = ci["se"]
    out["lo"] = ci["lo"]
    out["hi"] = ci["hi"]
    return out
