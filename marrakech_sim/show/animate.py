"""Pictures of positions as files: SVG text, PNG (matplotlib, Agg) and an animated GIF.

PNG and GIF go through matplotlib's object API (no pyplot: safe in workers and tests);
the GIF uses matplotlib's Pillow writer, one frame per turn.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

from marrakech_sim.errors import OutputError
from marrakech_sim.files import write_atomic, writing
from marrakech_sim.record import Replay
from marrakech_sim.show.scene import Scene, board_scene, draw, to_svg
from marrakech_sim.show.words import Legend, game_title

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

DPI = 100


def position_scene(replay: Replay, turn: int, title: str | None = None) -> Scene:
    """The scene of a replayed game after `turn` turns (0: the start)."""
    if not 0 <= turn < len(replay.positions):
        raise IndexError(f"turn {turn}: the game has turns 0 to {len(replay.positions) - 1}")
    title = title if title is not None else game_title(replay.record)
    return board_scene(replay.positions[turn], Legend.of_replay(replay, turn, title))


def _figure(scene: Scene) -> tuple[Figure, Axes]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(scene.width / DPI, scene.height / DPI), dpi=DPI)
    ax = fig.add_axes((0, 0, 1, 1))
    draw(scene, ax)
    return fig, ax


def png_bytes(scene: Scene) -> bytes:
    """A scene as PNG bytes (one pixel per scene unit)."""
    fig, _ = _figure(scene)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return buffer.getvalue()


def write_picture(replay: Replay, turn: int, path: str | Path, title: str | None = None) -> Path:
    """The board after `turn` turns as a picture; the format follows the suffix (.svg, .png)."""
    path = Path(path)
    scene = position_scene(replay, turn, title)
    if path.suffix.lower() == ".svg":
        write_atomic(path, to_svg(scene))
    elif path.suffix.lower() == ".png":
        write_atomic(path, png_bytes(scene))
    else:
        raise OutputError(f"{str(path)!r}: a picture's name ends in .svg or .png")
    return path


def write_gif(replay: Replay, path: str | Path, turns_per_second: int = 2) -> Path:
    """The whole game as an animated GIF, one frame per position (the last held longer)."""
    from matplotlib.animation import PillowWriter

    path = Path(path)
    first = position_scene(replay, 0)
    fig, ax = _figure(first)
    writer = PillowWriter(fps=turns_per_second)
    with writing(path) as tmp, writer.saving(fig, str(tmp), dpi=DPI):
        for turn in range(len(replay.positions)):
            ax.clear()
            draw(position_scene(replay, turn), ax)
            writer.grab_frame()
        for _ in range(3):  # hold the final position
            writer.grab_frame()
    return path
