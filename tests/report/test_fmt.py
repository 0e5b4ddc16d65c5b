"""How the report writes a number (marrakech_sim.report.fmt)."""

from __future__ import annotations

import math

import pytest

from marrakech_sim.report import fmt


@pytest.mark.parametrize(
    ("x", "digits", "text"),
    [
        (1.234, 1, "+1.2 pp"),
        (-1.25, 1, "-1.2 pp"),
        (-0.04, 1, "0.0 pp"),
        (0.04, 1, "0.0 pp"),
        (-0.0, 1, "0.0 pp"),
        (-0.004, 2, "0.00 pp"),
        (-0.006, 2, "-0.01 pp"),
        (math.nan, 1, "n/a"),
    ],
)
def test_pp_prints_no_sign_on_what_rounds_to_zero(x: float, digits: int, text: str) -> None:
    """Percentage points carry their sign, except a value that rounds to zero ('0.0 pp')."""
    assert fmt.pp(x, digits) == text


def test_interval_ends_that_round_to_zero_have_no_sign() -> None:
    """An interval's ends are signed, and an end that rounds to zero is written '0.0'."""
    assert fmt.interval(-0.03, 1.71) == "[0.0, +1.7]"
    assert fmt.interval(-2.0, 0.049, fmt.signed) == "[-2.0, 0.0]"
    assert fmt.interval(-0.2, -0.001, fmt.pp2) == "[-0.20 pp, 0.00 pp]"
