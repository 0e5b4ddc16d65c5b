"""Power: what each claim could detect, and how many games a study needs.

:func:`prospective_power` gives, for each claim, the smallest effect its data detect with
80% power and the games needed for 80% power at a stated effect; :func:`flag_underpowered`
(the older, retrospective view: the interval still reaches the null, and the games for
about 50% power at the observed effect) is kept for the report's existing columns.

Planning uses statsmodels' ``NormalIndPower`` on Cohen's h
(``proportion_effectsize``, the arcsine-transformed difference of two proportions):
the normal-approximation power of a two-sided test of proportions, one-sample for a
seat advantage (``ratio=0``) and two equal samples for a difference between variants.

Block design. Those formulas count independent games. Games of a block share dice, so a
block design carries n_games / design_effect independent games' worth of information,
where ``design_effect`` is the one ``seat_win_shares`` reports for seat 0 in a pilot run
of the *same kind of line-ups* (below 1 when seat rotation cancels out strategy strength,
above 1 when shared dice make a block's games alike). The plan multiplies the
independent-games answer by it and rounds up to whole blocks of ``block_size`` games. Its
default is 1 (every game as informative as an independent one): a design effect borrowed
from line-ups against ``random`` (well below 1: seat rotation cancels random's weakness)
undersizes a study of evenly matched players (an audit of the default study found about
2.5 times).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_effectsize
from statsmodels.tools.sm_exceptions import ConvergenceWarning

from marrakech_sim.errors import StatsInputError
from marrakech_sim.stats._core import require_columns


def flag_underpowered(
    table: pd.DataFrame,
    effect: str,
    lo: str,
    hi: str,
    n: str = "n_games",
    null: float = 0.0,
) -> pd.DataFrame:
    """Add ``half_width``, ``underpowered`` and ``n_to_settle`` to a table of claims.

    A claim is underpowered when its interval's half-width exceeds the distance of the
    estimate from ``null``: the interval then still reaches the null side. Half-widths
    shrink like 1/sqrt(n), so the games that would settle it (half-width equal to the
    effect, at the current estimate; roughly a 50% chance of a clear result if the
    estimate is right) are n * (half_width / |effect - null|)^2.

    Args:
        effect, lo, hi: column names of the estimate and its interval.
        n: column with the games (or blocks) the interval rests on.

    Returns:
        A copy of ``table`` with half_width, underpowered (bool), n_to_settle (float,
        inf when the effect is exactly the null) and n_more (games still to play).
    """
    require_columns(table, (effect, lo, hi, n), "claims")
    out = table.copy()
    half = (out[hi].to_numpy(dtype="float64") - out[lo].to_numpy(dtype="float64")) / 2
    size = np.abs(out[effect].to_numpy(dtype="float64") - null)
    count = out[n].to_numpy(dtype="float64")
    with np.errstate(divide="ignore", invalid="ignore"):
        settle = np.where(size > 0, np.ceil(count * (half / size) ** 2), np.inf)
    out["half_width"] = half
    out["underpowered"] = half > size
    out["n_to_settle"] = settle
    out["n_more"] = np.maximum(settle - count, 0.0)
    return out


def prospective_power(
    table: pd.DataFrame,
    se: str,
    n: str,
    target: str,
    alpha: float = 0.05,
    power: float = 0.8,
) -> pd.DataFrame:
    """Add the smallest detectable effect and the games for ``power`` at a stated effect.

    For an estimate with standard error se from n games, a two-sided test at ``alpha``
    detects a true effect of at least ``mde = (z_(1 - alpha/2) + z_power) * se`` with
    probability ``power`` (the normal approximation of ``NormalIndPower``). Standard errors
    shrink like 1/sqrt(n), so the games that give that power at the stated effect
    ``target`` are n * (mde / target)^2. Neither uses the estimate itself: the power is
    prospective, not the observed effect's.

    Args:
        se, n, target: columns of the standard error, the games it rests on and the
            stated effect (in the estimate's units).

    Returns:
        A copy of ``table`` with mde (in the estimate's units), detectable (mde <= target),
        n_for_power (games for ``power`` at the target) and n_more_for_power.
    """
    require_columns(table, (se, n, target), "claims")
    out = table.copy()
    z = float(sps.norm.ppf(1 - alpha / 2) + sps.norm.ppf(power))
    mde = z * out[se].to_numpy(dtype="float64")
    goal = np.abs(out[target].to_numpy(dtype="float64"))
    count = out[n].to_numpy(dtype="float64")
    with np.errstate(divide="ignore", invalid="ignore"):
        needed = np.where(goal > 0, np.ceil(count * (mde / goal) ** 2), np.inf)
    out["mde"] = mde
    out["detectable"] = mde <= goal
    out["n_for_power"] = needed
    out["n_more_for_power"] = np.maximum(needed - count, 0.0)
    return out


def _effects(effect: float | Sequence[float]) -> list[float]:
    # Accepts a float, a list or a numpy array alike.
    return [float(e) for e in np.atleast_1d(np.asarray(effect, dtype="float64"))]


MOST_GAMES = 1e15  # beyond it a number of games is no plan (a million years of play)


def _check_share(share: float, what: str) -> None:
    if not 0.0 < share < 1.0:
        raise StatsInputError(
            f"{what} {share!r} is not a share: allowed is strictly between 0 and 1"
        )


def _blocks(n_iid: float, design_effect: float, block_size: int) -> tuple[int, int]:
    n_blocks = int(np.ceil(n_iid * design_effect / block_size))
    return n_blocks * block_size, n_blocks


def _sizes(
    base: float,
    effect: float,
    ratio: float,
    alpha: float,
    power: float,
    design_effect: float,
    block_size: int,
) -> dict[str, float | int]:
    """Independent games for Cohen's h of ``base + effect`` against ``base``, then blocks.

    StatsInputError names an input outside its range, or an answer past `MOST_GAMES`."""
    if not (math.isfinite(effect) and effect != 0):
        raise StatsInputError(f"effect {effect!r}: allowed is a finite difference other than 0")
    for name, value in (("alpha", alpha), ("power", power)):
        if not (math.isfinite(value) and 0 < value < 1):
            raise StatsInputError(f"{name} {value!r}: allowed is strictly between 0 and 1")
    if not (math.isfinite(design_effect) and design_effect > 0):
        raise StatsInputError(
            f"design effect {design_effect!r}: allowed is a number above 0 (1: independent games)"
        )
    h = proportion_effectsize(base + effect, base)
    with warnings.catch_warnings():
        # the root finder gives up (nan) only where the answer is past any study: said below
        warnings.simplefilter("ignore", ConvergenceWarning)
        n_iid = float(
            NormalIndPower().solve_power(
                effect_size=h,
                nobs1=None,
                alpha=alpha,
                power=power,
                ratio=ratio,
                alternative="two-sided",
            )
        )
    if not n_iid * design_effect < MOST_GAMES:  # nan as well
        raise StatsInputError(
            f"effect {effect!r}: more than {MOST_GAMES:.0e} games would be needed; allowed is "
            "an effect that a study can settle"
        )
    n_games, n_blocks = _blocks(n_iid, design_effect, block_size)
    return {
        "effect": effect,
        "alpha": alpha,
        "power": power,
        "design_effect": design_effect,
        "block_size": block_size,
        "n_games_independent": int(np.ceil(n_iid)),
        "n_games": n_games,
        "n_blocks": n_blocks,
    }


def plan_seat_advantage(
    players: int = 4,
    effect: float | Sequence[float] = 0.01,
    alpha: float = 0.05,
    power: float = 0.8,
    design_effect: float = 1.0,
    block_size: int = 1,
) -> pd.DataFrame:
    """Games needed to detect seat 0 winning 1/k + effect instead of the fair 1/k.

    Returns:
        One row per effect: players, fair_share, effect, alpha, power, design_effect,
        block_size, n_games_independent, n_games, n_blocks.
    """
    if players < 2:
        raise StatsInputError(f"players {players!r}; a seat advantage needs at least 2")
    fair = 1.0 / players
    records = []
    for eff in _effects(effect):
        _check_share(fair + eff, "seat-0 share 1/k + effect =")
        size = _sizes(fair, eff, 0.0, alpha, power, design_effect, block_size)
        records.append({"players": players, "fair_share": fair, **size})
    return pd.DataFrame.from_records(records)


def plan_variant_difference(
    players: int = 4,
    effect: float | Sequence[float] = 0.01,
    baseline_share: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    design_effect: float = 1.0,
    block_size: int = 1,
) -> pd.DataFrame:
    """Games per variant to detect seat-0 win shares differing by ``effect``.

    The baseline variant's seat-0 share defaults to the fair 1/k; the other is that plus
    ``effect``; the two variants are played as independent samples of equal size.

    Returns:
        One row per effect: players, baseline_share, effect, alpha, power,
        design_effect, block_size, n_games_independent (per variant),
        n_games_per_variant, n_blocks_per_variant, n_games_total.
    """
    base = 1.0 / players if baseline_share is None else float(baseline_share)
    _check_share(base, "baseline share")
    records = []
    for eff in _effects(effect):
        _check_share(base + eff, "baseline share + effect =")
        size = _sizes(base, eff, 1.0, alpha, power, design_effect, block_size)
        n_games, n_blocks = size.pop("n_games"), size.pop("n_blocks")
        records.append(
            {
                "players": players,
                "baseline_share": base,
                **size,
                "n_games_per_variant": n_games,
                "n_blocks_per_variant": n_blocks,
                "n_games_total": 2 * int(n_games),
            }
        )
    return pd.DataFrame.from_records(records)
