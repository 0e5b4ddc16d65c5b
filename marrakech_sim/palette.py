"""The one palette: colours for seats, strategies and rule sets, colour-blind safe.

Every chart of the report, and any picture of the board, takes its colours from here,
so a seat, a strategy or a rule set has the same colour wherever it is drawn.

- Seats take the rugs' colours of the notation's seat order (``r``, ``b``, ``y``, ``p``:
  red, blue, yellow, purple), from Paul Tol's and Okabe and Ito's colour-blind-safe
  palettes, chosen so that any two of the four also differ in lightness (CIE L* 46, 29, 89,
  61: at least 15 apart), so they stay apart with any colour-vision deficiency and in
  grey; then more of Okabe and Ito's colours for larger tables.
- Strategies use Paul Tol's "bright" scheme, rule sets his "muted" scheme (both
  colour-blind safe); a report assigns them in sorted name order, so the same names
  get the same colours in every chart of it.
- Series differ by marker and line style too (:data:`MARKERS`, :data:`LINESTYLES`),
  so a chart also reads in black-and-white print.

Plain hex strings only: no plotting library is imported here.
"""

from __future__ import annotations

from collections.abc import Iterable

# The rugs' red, blue, yellow and purple for seats 0-3: Tol's "vibrant" red, his
# "high-contrast" blue, Okabe & Ito's (2008) yellow and reddish purple (CIE L* 46, 29, 89,
# 61); then Okabe & Ito's bluish green, sky blue, orange and black for larger tables.
SEAT_COLOURS = (
    "#CC3311",
    "#004488",
    "#F0E442",
    "#CC79A7",
    "#009E73",
    "#56B4E9",
    "#E69F00",
    "#000000",
)

# Paul Tol, "bright" qualitative scheme (colour-blind safe), grey last.
STRATEGY_COLOURS = (
    "#4477AA",
    "#EE6677",
    "#228833",
    "#CCBB44",
    "#66CCEE",
    "#AA3377",
    "#BBBBBB",
)

# Paul Tol, "muted" qualitative scheme (colour-blind safe).
RULESET_COLOURS = (
    "#332288",
    "#117733",
    "#CC6677",
    "#88CCEE",
    "#999933",
    "#882255",
    "#44AA99",
    "#DDCC77",
    "#AA4499",
)

DIVERGING = "PuOr"  # ColorBrewer purple-orange: a 0-100% scale centred on 50%, colour-blind safe
INK = "#222222"  # text, axes, the estimate of a single series
FAIR = "#555555"  # fair-share and zero reference lines
GRID = "#DDDDDD"

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINESTYLES = ("-", "--", ":", "-.")


def seat_colour(seat: int) -> str:
    """The colour of seat ``seat`` (0 = the first player), the same in every picture."""
    return SEAT_COLOURS[int(seat) % len(SEAT_COLOURS)]


def is_light(colour: str) -> bool:
    """Whether a #RRGGBB colour is light enough to need an outline on white (relative
    luminance, WCAG's formula, above 0.6: the yellow rug's colour)."""
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2] > 0.6


def _assign(names: Iterable[str], colours: tuple[str, ...]) -> dict[str, str]:
    unique = sorted({str(n) for n in names})
    return {n: colours[i % len(colours)] for i, n in enumerate(unique)}


def strategy_colours(names: Iterable[str]) -> dict[str, str]:
    """One colour per strategy name, assigned in sorted order."""
    return _assign(names, STRATEGY_COLOURS)


def ruleset_colours(names: Iterable[str]) -> dict[str, str]:
    """One colour per rule set name, assigned in sorted order."""
    return _assign(names, RULESET_COLOURS)


def marker(i: int) -> str:
    """The i-th series' marker."""
    return MARKERS[i % len(MARKERS)]


def linestyle(i: int) -> str:
    """The i-th series' line style."""
    return LINESTYLES[i % len(LINESTYLES)]
