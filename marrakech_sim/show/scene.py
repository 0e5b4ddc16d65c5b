"""A position as drawing primitives, written as SVG text or drawn on a matplotlib Axes.

One drawing for every picture: `board_scene` lays out the squares, the rug halves in
their colours (the two halves of one rug joined, so seams between rugs show), Assam with
his facing, the mosaic's edge arcs (RULES.md section 4) and a side panel of the players
and the turn. `to_svg` and `draw` are two thin backends over the same primitives.
Coordinates are pixels, y down (SVG's convention).
"""

from __future__ import annotations

import dataclasses
import math
import textwrap
from html import escape
from typing import Any

from marrakech_sim.rules import GameState
from marrakech_sim.show import words
from marrakech_sim.show.palette import ASSAM, BOARD, COLOURS, GRID, ink_on
from marrakech_sim.show.words import Legend

SQUARE = 56  # pixels per square
MARGIN = 36  # room for the edge arcs
PANEL = 290  # the side panel's width
GAP = 3  # board showing between two rugs: the seam
_FONT = "DejaVu Sans, Arial, sans-serif"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Paint:
    """How a shape is painted (SVG's fill, stroke and stroke-width) and the attributes it
    carries into the SVG (data-* for the tests and the pages)."""

    fill: str | None = None  # None: not filled
    stroke: str | None = None  # None: no outline
    width: float = 0.0  # the outline's, in pixels
    attrs: tuple[tuple[str, str], ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class Rect(Paint):
    x: float
    y: float
    w: float
    h: float


@dataclasses.dataclass(frozen=True, slots=True)
class Poly(Paint):
    points: tuple[tuple[float, float], ...]  # filled, a polygon; else a polyline


@dataclasses.dataclass(frozen=True, slots=True)
class Text:
    x: float
    y: float
    text: str
    size: float
    fill: str = "#000000"
    anchor: str = "middle"  # start, middle, end
    bold: bool = False
    attrs: tuple[tuple[str, str], ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class Arc:
    """A circle's arc from angle a0 to a1 (degrees, y down: 90 is straight down)."""

    cx: float
    cy: float
    r: float
    a0: float
    a1: float
    stroke: str
    width: float


Shape = Rect | Poly | Text | Arc


@dataclasses.dataclass(frozen=True, slots=True)
class Scene:
    width: float
    height: float
    shapes: tuple[Shape, ...]
    attrs: tuple[tuple[str, str], ...] = ()


def edge_arcs(n: int) -> list[Arc]:
    """The mosaic's arcs of an n x n board (RULES.md section 4)."""
    s, m, r = SQUARE, MARGIN, SQUARE / 2
    top, bottom, left, right = m, m + n * s, m, m + n * s
    arcs = []
    for a in range(0, n - 1, 2):  # top edge and left edge: {0,1}, {2,3}, ...
        arcs.append(Arc(m + (a + 1) * s, top, r, 180, 360, GRID, 4.0))
        arcs.append(Arc(left, m + (a + 1) * s, r, 90, 270, GRID, 4.0))
    for a in range(1, n - 1, 2):  # bottom and right edges: {1,2}, {3,4}, ...
        arcs.append(Arc(m + (a + 1) * s, bottom, r, 0, 180, GRID, 4.0))
        arcs.append(Arc(right, m + (a + 1) * s, r, -90, 90, GRID, 4.0))
    # three-quarter arcs at the top-right and bottom-left corners
    arcs.append(Arc(right, top, r, 180, 450, GRID, 4.0))
    arcs.append(Arc(left, bottom, r, 0, 270, GRID, 4.0))
    return arcs


def _rug_key(state: GameState, x: int, y: int) -> tuple[str, int] | None:
    n = state.rules.board_size
    if 0 <= x < n and 0 <= y < n:
        return state.square(x, y)
    return None


def board_scene(state: GameState, legend: Legend = Legend()) -> Scene:
    """The board of `state` with a side panel: the legend's title and turn, the seats,
    and what happened in the legend's turn (`info`)."""
    rules = state.rules
    n = rules.board_size
    s, m = SQUARE, MARGIN
    size = 2 * m + n * s
    shapes: list[Shape] = []
    shapes.append(Rect(m, m, n * s, n * s, fill=BOARD, stroke=GRID, width=1.5))
    shapes.extend(edge_arcs(n))
    for i in range(1, n):
        shapes.append(Poly(((m + i * s, m), (m + i * s, m + n * s)), stroke=GRID, width=0.6))
        shapes.append(Poly(((m, m + i * s), (m + n * s, m + i * s)), stroke=GRID, width=0.6))
    for i in range(n):
        shapes.append(Text(m + (i + 0.5) * s, m - 28 if n > 0 else 0, str(i), 10, GRID))
        shapes.append(Text(m - 28, m + (i + 0.5) * s, str(i), 10, GRID))
    info = legend.info
    placed = set(info.placement) if info is not None and info.placement else set()
    for y in range(n):
        for x in range(n):
            half = state.square(x, y)
            if half is None:
                continue
            colour = COLOURS[half[0]]
            # a half fills its square less the seam; towards the other half of the same
            # (still visible) rug it reaches across, so one rug reads as one piece
            x0, y0 = m + x * s + GAP, m + y * s + GAP
            x1, y1 = m + (x + 1) * s - GAP, m + (y + 1) * s - GAP
            if _rug_key(state, x + 1, y) == half:
                x1 += 2 * GAP
            if _rug_key(state, x, y + 1) == half:
                y1 += 2 * GAP
            token = f"{half[0]}{half[1]}"
            shapes.append(
                Rect(
                    x0,
                    y0,
                    x1 - x0,
                    y1 - y0,
                    fill=colour,
                    attrs=(("data-square", f"{x},{y}"), ("data-token", token)),
                )
            )
            shapes.append(Text(m + (x + 0.5) * s, m + (y + 0.72) * s, token, 11, ink_on(colour)))
    if len(placed) == 2:  # the rug placed this turn, outlined
        (px1, py1), (px2, py2) = sorted(placed)
        shapes.append(
            Rect(
                m + px1 * s + GAP,
                m + py1 * s + GAP,
                (px2 - px1 + 1) * s - 2 * GAP,
                (py2 - py1 + 1) * s - 2 * GAP,
                stroke=ASSAM,
                width=2.5,
            )
        )
    ax, ay, facing = state.assam
    cx, cy = m + (ax + 0.5) * s, m + (ay + 0.42) * s
    angle = {"N": -90, "E": 0, "S": 90, "W": 180}[facing]
    tip = [
        (
            cx + 0.34 * s * math.cos(math.radians(angle + d)),
            cy + 0.34 * s * math.sin(math.radians(angle + d)),
        )
        for d in (0, 140, 220)
    ]
    shapes.append(
        Poly(
            tuple(tip),
            fill=ASSAM,
            stroke="#FFFFFF",
            width=1.5,
            attrs=(("data-assam", f"{ax},{ay},{facing}"),),
        )
    )
    bottom = _panel(shapes, state, size, legend)
    height = max(size, bottom + 16)
    ground = Rect(0, 0, size + PANEL, height, fill="#FFFFFF")
    return Scene(size + PANEL, height, (ground, *shapes), (("data-position", state.to_notation()),))


def _lines(text: str, size: float, indent: float = 0.0, bold: bool = False) -> list[str]:
    """`text` wrapped to the panel's width at font `size`, so no line runs off the picture.

    DejaVu Sans' glyphs average about 0.55 em (0.61 in bold) drawn at the PNG's scale;
    0.66 and 0.78 leave room for lines of wide letters (b, d, o: 0.66 em, 0.73 in bold).
    """
    chars = int((PANEL - 12 - indent) / (size * (0.78 if bold else 0.66)))
    return textwrap.wrap(text, max(chars, 8), break_on_hyphens=False) or [""]


def _panel(shapes: list[Shape], state: GameState, left: float, legend: Legend) -> float:
    """The side panel: title, turn, one entry per player, what happened; returns its bottom."""
    rules = state.rules
    x = left + 4
    y = 26.0

    def write(text: str, size: float, gap: float, at: float = 0.0, **style: Any) -> None:
        nonlocal y
        for line in _lines(text, size, at, bool(style.get("bold"))):
            shapes.append(Text(x + at, y, line, size, anchor="start", **style))
            y += gap

    if legend.title:
        write(legend.title, 13, 18, bold=True)
        y += 4
    turn, turns = legend.turn, legend.turns
    if turn is not None:
        label = f"after turn {turn}" + (f" of {turns}" if turns is not None else "")
        write("start of the game" if turn == 0 else label, 12, 22)
    outcome = state.outcome()
    names = legend.names
    for seat in range(rules.players):
        letters = rules.seat_letters(seat)
        at = 14 * len(letters) + 6
        top = y
        for j, letter in enumerate(letters):
            shapes.append(
                Rect(x + 14 * j, y - 8, 12, 24, fill=COLOURS[letter], stroke="#333333", width=0.8)
            )
        name = f"{words.player(seat)}: {names[seat]}" if names else words.player(seat)
        mover = seat == state.seat and not state.is_over
        write(name, 12, 17, at, bold=mover)
        if state.eliminated[seat]:
            line = "out of the game (bankrupt)"
        else:
            rugs = sum(state.rugs_left[c] for c in letters)
            left_rugs = "+".join(str(state.rugs_left[c]) for c in letters)
            line = (
                f"{words.count(state.dirhams[seat], 'dirham')}, "
                f"{left_rugs if len(letters) > 1 else rugs} {words.noun(rugs, 'rug')} left"
            )
            if outcome is not None and outcome.scores[seat] is not None:
                line += f", score {outcome.scores[seat]}"
        for i, part in enumerate(_lines(line, 11, at)):
            attrs = (("data-seat", str(seat)), ("data-dirhams", str(state.dirhams[seat])))
            shapes.append(
                Text(x + at, y, part, 11, "#333333", anchor="start", attrs=attrs if i == 0 else ())
            )
            y += 15
        y = max(y + 12, top + 46)
    if legend.info is not None:
        for part in words.turn_lines(legend.info, state):
            write(part, 11, 16)
    if outcome is not None:
        y += 6
        write(words.outcome_line(state), 12, 17, bold=True)
    elif legend.info is None or not state.is_over:
        y += 6
        write(f"{words.player(state.seat)} to move", 11, 16, fill="#555555")
    return y


# ---------------------------------------------------------------- backends


def _attrs(attrs: tuple[tuple[str, str], ...]) -> str:
    return "".join(f' {k}="{escape(v)}"' for k, v in attrs)


def _stroke(shape: Paint) -> str:
    return f' stroke="{shape.stroke}" stroke-width="{shape.width:g}"' if shape.stroke else ""


def to_svg(scene: Scene, *, standalone: bool = True) -> str:
    """SVG text of a scene (with the XML declaration when `standalone`)."""
    out = []
    if standalone:
        out.append('<?xml version="1.0" encoding="UTF-8"?>')
    out.append(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{scene.width:g}" '
        f'height="{scene.height:g}" viewBox="0 0 {scene.width:g} {scene.height:g}" '
        f'font-family="{_FONT}"{_attrs(scene.attrs)}>'
    )
    for shape in scene.shapes:
        if isinstance(shape, Rect):
            fill = shape.fill or "none"
            out.append(
                f'<rect x="{shape.x:.1f}" y="{shape.y:.1f}" width="{shape.w:.1f}" '
                f'height="{shape.h:.1f}" fill="{fill}"{_stroke(shape)}{_attrs(shape.attrs)}/>'
            )
        elif isinstance(shape, Poly):
            pts = " ".join(f"{px:.1f},{py:.1f}" for px, py in shape.points)
            tag = "polygon" if shape.fill else "polyline"
            fill = shape.fill or "none"
            out.append(
                f'<{tag} points="{pts}" fill="{fill}"{_stroke(shape)} stroke-linecap="round"'
                f"{_attrs(shape.attrs)}/>"
            )
        elif isinstance(shape, Arc):
            x0, y0 = _on_circle(shape, shape.a0)
            x1, y1 = _on_circle(shape, shape.a1)
            large = 1 if shape.a1 - shape.a0 > 180 else 0
            out.append(
                f'<path d="M{x0:.1f},{y0:.1f} A{shape.r:g},{shape.r:g} 0 {large} 1 '
                f'{x1:.1f},{y1:.1f}" fill="none" stroke="{shape.stroke}" '
                f'stroke-width="{shape.width:g}" stroke-linecap="round"/>'
            )
        else:
            weight = ' font-weight="bold"' if shape.bold else ""
            out.append(
                f'<text x="{shape.x:.1f}" y="{shape.y:.1f}" font-size="{shape.size:g}" '
                f'fill="{shape.fill}" text-anchor="{shape.anchor}" dominant-baseline="central"'
                f"{weight}{_attrs(shape.attrs)}>{escape(shape.text)}</text>"
            )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _on_circle(arc: Arc, angle: float) -> tuple[float, float]:
    a = math.radians(angle)
    return arc.cx + arc.r * math.cos(a), arc.cy + arc.r * math.sin(a)


def draw(scene: Scene, ax: Any) -> Any:
    """Draw a scene on a matplotlib Axes (limits set to the scene, y down, no axes)."""
    from matplotlib.patches import Arc as ArcPatch
    from matplotlib.patches import Polygon, Rectangle

    ax.set_xlim(0, scene.width)
    ax.set_ylim(scene.height, 0)
    ax.set_axis_off()
    pt = 0.75  # points per pixel at 96 dpi-like sizing: font sizes are pixels in SVG
    for z, shape in enumerate(scene.shapes):
        if isinstance(shape, Rect):
            ax.add_patch(
                Rectangle(
                    (shape.x, shape.y),
                    shape.w,
                    shape.h,
                    facecolor=shape.fill or "none",
                    edgecolor=shape.stroke or "none",
                    linewidth=shape.width * pt,
                    zorder=z,
                )
            )
        elif isinstance(shape, Arc):
            ax.add_patch(
                ArcPatch(
                    (shape.cx, shape.cy),
                    2 * shape.r,
                    2 * shape.r,
                    theta1=shape.a0,
                    theta2=shape.a1,
                    edgecolor=shape.stroke,
                    linewidth=shape.width * pt,
                    zorder=z,
                    capstyle="round",
                )
            )
        elif isinstance(shape, Poly):
            if shape.fill:
                ax.add_patch(
                    Polygon(
                        shape.points,
                        closed=True,
                        facecolor=shape.fill,
                        edgecolor=shape.stroke or "none",
                        linewidth=shape.width * pt,
                        zorder=z,
                    )
                )
            else:
                xs, ys = zip(*shape.points, strict=True)
                ax.plot(
                    xs,
                    ys,
                    color=shape.stroke,
                    linewidth=shape.width * pt,
                    solid_capstyle="round",
                    zorder=z,
                )
        else:
            ax.text(
                shape.x,
                shape.y,
                shape.text,
                fontsize=shape.size * pt,
                color=shape.fill,
                ha={"start": "left", "middle": "center", "end": "right"}[shape.anchor],
                va="center",
                fontweight="bold" if shape.bold else "normal",
                zorder=z,
            )
    return ax
