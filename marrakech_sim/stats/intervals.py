"""Confidence intervals for rates and means added to tables (``stats.estimators`` computes them).

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

import numpy as np
import pandas as pd

# the intervals themselves are estimators of block totals' statistics: defined there once
from marrakech_sim.stats.estimators import (
    DEFAULT_LEVEL,
    effective_n,
    mean_interval,
    rate_interval,
    wilson_interval,
    z_value,
)

__all__ = [
    "DEFAULT_LEVEL",
    "add_mean_interval",
    "add_rate_interval",
    "effective_n",
    "mean_interval",
    "rate_interval",
    "wilson_interval",
    "z_value",
]


def add_rate_interval(table: pd.DataFrame, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """Add ``n_eff``, ``design_effect``, ``lo``, ``hi`` (:func:`rate_interval`) to a ratio table.

    ``table`` carries ``estimate``, ``var``, ``n`` as made by the block aggregation, and
    ``n_blocks`` when it has them (the conservative count where blocks do not vary).
    """
    out = table.copy()
    blocks = out["n_blocks"] if "n_blocks" in out.columns else None
    ci = rate_interval(out["estimate"], out["var"], out["n"], level, blocks)
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
