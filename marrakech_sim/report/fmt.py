"""How the report writes a number: one function per kind of figure, for the sections'
tables and words (`report.sections`) and the summary's sentences (`findings`) alike.

A missing value (None or NaN) is written 'n/a'. A signed figure that rounds to zero is
written without a sign ('0.0 pp', never '-0.0 pp' or '+0.0 pp').
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np


def missing(x: Any) -> bool:
    """Whether `x` is None or a float NaN (written 'n/a')."""
    try:
        return x is None or (isinstance(x, float | np.floating) and math.isnan(x))
    except TypeError:
        return False


def pct(x: float, digits: int = 1) -> str:
    """0.2534 -> '25.3%'."""
    return "n/a" if missing(x) else f"{100 * x:.{digits}f}%"


def pp(x: float, digits: int = 1) -> str:
    """Signed percentage points: 1.234 -> '+1.2 pp'; -0.04 -> '0.0 pp'."""
    return "n/a" if missing(x) else f"{signed(x, digits)} pp"


def signed(x: float, digits: int = 1) -> str:
    """A signed number: 1.234 -> '+1.2' (an interval's ends in pp); what rounds to zero
    has no sign: -0.04 -> '0.0'."""
    if missing(x):
        return "n/a"
    text = f"{x:+.{digits}f}"
    return text[1:] if float(text) == 0 else text


def num(x: float, digits: int = 3) -> str:
    """A number with ``digits`` significant digits, or 'n/a'."""
    return "n/a" if missing(x) else f"{x:.{digits}g}"


def count(x: float) -> str:
    """A count with thousands separators."""
    return "n/a" if missing(x) else f"{round(float(x)):,}"


def pval(x: float) -> str:
    """A p-value: '< 1e-300' for underflow, else two significant digits."""
    if missing(x):
        return "n/a"
    return "< 1e-300" if x == 0 else f"{x:.2g}"


def p_is(x: float) -> str:
    """' = 0.012' or ' < 1e-300': a p-value after 'p'."""
    text = pval(x)
    return f" {text}" if text.startswith("<") else f" = {text}"


def pp2(x: float) -> str:
    """Signed percentage points with two decimals."""
    return pp(x, 2)


def pct2(x: float) -> str:
    """A percentage with two decimals."""
    return pct(x, 2)


def interval(lo: float, hi: float, fmt: Callable[[float], str] = signed) -> str:
    """'[lo, hi]' with each end formatted by ``fmt`` (by default '[+1.1, +2.3]'); '(no
    interval)' when an end is missing (a variance from fewer than two blocks)."""
    if missing(lo) or missing(hi):
        return "(no interval)"
    return f"[{fmt(lo)}, {fmt(hi)}]"
