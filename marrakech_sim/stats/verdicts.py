"""Verdicts of practical size over one family of tests, and the games a verdict still needs.

A report's findings form one family: every sentence of its summary is one test of it.
The family is corrected by Bonferroni's rule: each finding's interval is a
``1 - alpha / m`` interval (m: the family's size), and its verdict is read off that same
interval, so the interval a sentence prints is the one its verdict uses (Holm's step-down
rejects a little more, but has no intervals that match its decisions). With a margin
``d`` > 0 that states what matters to a designer (``[report] matters_pp``):

- **matters**: the interval lies beyond the margin (above ``d`` or below ``-d``);
- **real but small**: the interval excludes 0 and lies within ``(-d, d)``;
- **negligible**: the interval contains 0 and lies within ``(-d, d)``. An interval at
  level ``1 - alpha / m`` inside the margin rejects both one-sided nulls of the two
  one-sided tests (TOST) at ``alpha / 2m`` each: an equivalence test at the family level;
- **undecided**: anything else (the interval reaches past the margin and contains 0, or
  excludes 0 but straddles the margin).

An undecided finding is given the games it would need, prospectively: the number of
games at which a test at the family's level has 80% power against an effect the size of
the margin, from the variance per game this study measured (its design effect included).
It is not computed from the observed effect (that would be 50% power after the fact).
"""

from __future__ import annotations

import math

from scipy import stats as sps

VERDICTS = ("matters", "real but small", "negligible", "undecided")
POWER = 0.8


def family_level(m: int, alpha: float = 0.05) -> float:
    """The confidence level of each interval in a Bonferroni family of ``m`` tests."""
    if m < 1:
        raise ValueError(f"a family has at least one test, not {m}")
    return 1.0 - alpha / m


def family_z(m: int, alpha: float = 0.05) -> float:
    """The two-sided normal quantile of :func:`family_level`."""
    return float(sps.norm.ppf(1.0 - alpha / (2 * m)))


def verdict(lo: float, hi: float, margin: float) -> str:
    """The verdict (``VERDICTS``) of an effect whose family-level interval is [lo, hi].

    An interval of no width comes from games without spread (every block, or every pair of
    blocks sharing dice, gave the same value: a strategy that plays the same games under
    both rule sets); it cannot bound the effect, so it decides nothing.
    """
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo == hi:
        return "undecided"
    if lo > margin or hi < -margin:
        return "matters"
    if -margin < lo and hi < margin:
        return "negligible" if lo <= 0 <= hi else "real but small"
    return "undecided"


def games_for_power(
    se: float,
    n: float,
    margin: float,
    z: float,
    power: float = POWER,
    equivalence: bool = False,
) -> float:
    """Games at which a two-sided test with critical value ``z`` has ``power`` against an
    effect of ``margin``, given the standard error ``se`` this study measured on ``n``
    games (the variance falls as 1/n); NaN when ``se`` is not positive and finite.

    equivalence: instead, the games at which an effect of 0 is shown ``negligible`` (its
    interval, of critical value ``z``, within +-margin: two one-sided tests) with
    ``power``; that is z + z_((1 + power) / 2) standard errors inside the margin, more
    than the test against an effect of ``margin`` needs.
    """
    if not (math.isfinite(se) and se > 0 and n > 0 and margin > 0):
        return math.nan
    beyond = (1 + power) / 2 if equivalence else power
    needed_se = margin / (z + float(sps.norm.ppf(beyond)))
    return float(n * (se / needed_se) ** 2)


__all__ = ["POWER", "VERDICTS", "family_level", "family_z", "games_for_power", "verdict"]
