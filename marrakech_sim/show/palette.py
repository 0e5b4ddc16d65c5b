"""The colour of each rug colour letter, from the project's one palette.

The four standard colours are the seats' colours of `marrakech_sim.palette` (from Tol's
and Okabe and Ito's colour-blind-safe palettes, four lightness levels apart): `r` red,
`b` dark blue, `y` yellow, `p` reddish purple, so a seat has the same colour on the board as
in every chart of the report. The other letters (variants with more colours) get the
palette's remaining colours, then greys, told apart by their letter written on every rug
half.
"""

from __future__ import annotations

from marrakech_sim.palette import SEAT_COLOURS
from marrakech_sim.rules import COLOUR_LETTERS, Rules

#: rug colour letter -> hex colour (RULES.md section 1 letters, seat s owns letter s first)
COLOURS: dict[str, str] = {
    "r": SEAT_COLOURS[0],  # red
    "b": SEAT_COLOURS[1],  # dark blue
    "y": SEAT_COLOURS[2],  # yellow
    "p": SEAT_COLOURS[3],  # reddish purple
    "g": SEAT_COLOURS[4],  # bluish green
    "o": SEAT_COLOURS[6],  # orange
    "c": SEAT_COLOURS[5],  # sky blue
    "w": "#FFFFFF",
    "k": "#000000",
    "m": "#999999",
    "n": "#666666",
    "t": "#BBBBBB",
    "v": "#444444",
}
assert set(COLOURS) == set(COLOUR_LETTERS)

BOARD = "#F3E6C8"  # the board's squares (sand)
GRID = "#B89B6A"  # lines between squares, the mosaic's edge arcs
ASSAM = "#222222"


def seat_colour(rules: Rules, seat: int) -> str:
    """The colour that stands for a seat: its first colour letter's."""
    return COLOURS[rules.seat_letters(seat)[0]]


def ink_on(colour: str) -> str:
    """Black or white, whichever reads better on `colour` (a #RRGGBB hex)."""
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return "#000000" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "#FFFFFF"


def rgb(colour: str) -> tuple[int, int, int]:
    """(r, g, b) of a #RRGGBB hex."""
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)
