"""A position as terminal text: rug halves in their colours with the seams between rugs
drawn, Assam with his facing, the seats; and stepping through a replay by key.

Each square is four characters wide; between two squares a one-character column and
between two rows a one-line row either continue the rug (the two halves of one rug) or
show a seam (`│`, `─`). Colours are 24-bit ANSI backgrounds from the project's palette;
without colour the seams and rug tokens alone tell the rugs apart.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from marrakech_sim.record import Replay
from marrakech_sim.rules import GameState
from marrakech_sim.show import words
from marrakech_sim.show.palette import COLOURS, ink_on, rgb
from marrakech_sim.show.words import Legend, game_title

ARROWS = {"N": "▲", "E": "▶", "S": "▼", "W": "◀"}
_RESET = "\x1b[0m"


def _paint(text: str, colour: str | None, enabled: bool, bold: bool = False) -> str:
    if not enabled or (colour is None and not bold):
        return text
    codes = []
    if bold:
        codes.append("1")
    if colour is not None:
        r, g, b = rgb(colour)
        fr, fg, fb = rgb(ink_on(colour))
        codes.append(f"48;2;{r};{g};{b};38;2;{fr};{fg};{fb}")
    return f"\x1b[{';'.join(codes)}m{text}{_RESET}"


def board_text(
    state: GameState, colour: bool = True, marks: Mapping[tuple[int, int], str] | None = None
) -> list[str]:
    """The board as lines: column numbers on top, row numbers on the left.

    marks: a capital letter per square to mark (the squares a placement may cover), in
    front of the square's rug, or in brackets on an empty square.
    """
    n = state.rules.board_size
    ax, ay, facing = state.assam
    marks = marks or {}
    lines = ["    " + "".join(f"{x:^4} " for x in range(n))]
    for y in range(n):
        row = [f"{y:>2} │"]
        for x in range(n):
            half = state.square(x, y)
            token = f"{half[0]}{half[1]}" if half else "·"
            if (x, y) == (ax, ay):
                token = ARROWS[facing] + (token if half else "")
            mark = marks.get((x, y))
            if mark is not None:
                token = f"{mark}{token}" if half else f"({mark})"
            cell = f"{token:^4}"
            fill = COLOURS[half[0]] if half else None
            row.append(_paint(cell, fill, colour, bold=(x, y) == (ax, ay) or mark is not None))
            if x < n - 1:
                right = state.square(x + 1, y)
                joined = half is not None and right == half
                row.append(_paint(" ", fill, colour) if joined else "│")
        row.append("│")
        lines.append("".join(row))
        if y < n - 1:
            seam = ["   ├"]
            for x in range(n):
                half = state.square(x, y)
                if half is not None and state.square(x, y + 1) == half:
                    seam.append(_paint("    ", COLOURS[half[0]], colour))
                else:
                    seam.append("────")
                if x < n - 1:
                    seam.append("┼")
            seam.append("┤")
            lines.append("".join(seam))
    lines.insert(1, "   ┌" + "┬".join("────" for _ in range(n)) + "┐")
    lines.append("   └" + "┴".join("────" for _ in range(n)) + "┘")
    return lines


def seats_text(
    state: GameState, names: Sequence[str] | None = None, colour: bool = True
) -> list[str]:
    """One line per seat: colours, name, dirhams, rugs left (and the score at the end)."""
    rules = state.rules
    outcome = state.outcome()
    lines = []
    for seat in range(rules.players):
        letters = rules.seat_letters(seat)
        swatch = "".join(_paint(f" {c} ", COLOURS[c], colour) for c in letters)
        name = names[seat] if names else ""
        marker = "→" if seat == state.seat and not state.is_over else " "
        left = "+".join(str(state.rugs_left[c]) for c in letters)
        rugs = sum(state.rugs_left[c] for c in letters)
        if state.eliminated[seat]:
            what = "out of the game (bankrupt)"
        else:
            cash = words.count(state.dirhams[seat], "dirham")
            what = f"{cash}, {left} {words.noun(rugs, 'rug')} left"
            if outcome is not None and outcome.scores[seat] is not None:
                what += f", score {outcome.scores[seat]}"
        lines.append(f"{marker} {swatch} {words.player(seat)} {name:<14} {what}")
    return lines


def position_text(
    state: GameState,
    legend: Legend = Legend(),
    *,
    colour: bool = True,
    marks: Mapping[tuple[int, int], str] | None = None,
) -> str:
    """Board, Assam, seats, and what happened in the legend's turn (`info`), as one text,
    headed by the legend's title and turn (marks: as `board_text`'s)."""
    lines = []
    if legend.title:  # with the turn where the legend has one: 'TITLE: after turn 3 of 48'
        turn = f": after turn {legend.turn} of {legend.turns}" if legend.turn is not None else ""
        lines.append(legend.title + turn)
    lines += board_text(state, colour, marks)
    ax, ay, facing = state.assam
    lines.append(f"Assam at {ax},{ay} facing {facing} {ARROWS[facing]}")
    lines += seats_text(state, legend.names, colour)
    if legend.info is not None:
        lines.append("; ".join(words.turn_lines(legend.info, state)))
    if state.outcome() is not None:
        lines.append(words.outcome_line(state))
    elif not state.is_over:
        lines.append(f"{words.player(state.seat)} to move ({state.phase})")
    return "\n".join(lines)


def replay_frame(replay: Replay, turn: int, colour: bool = True) -> str:
    """The position after `turn` turns of a replay, with that turn described."""
    legend = Legend.of_replay(replay, turn, game_title(replay.record))
    return position_text(replay.positions[turn], legend, colour=colour)


KEYS_HELP = "keys: → n space = next, ← p = back, g = first, G = last, q = quit"
_NEXT = {"n", " ", "\r", "\n", "\x1b[C", "l", "j", "\x1b[B"}
_BACK = {"p", "b", "\x1b[D", "h", "k", "\x1b[A"}


def step_through(
    replay: Replay,
    read_key: Callable[[], str],
    show: Callable[[str], None],
    *,
    start: int = 0,
    colour: bool = True,
) -> int:
    """Show positions one at a time, moving by key until `q` (or end of input: '').

    Returns the turn shown last.
    """
    last = len(replay.positions) - 1
    turn = max(0, min(start, last))
    while True:
        show(replay_frame(replay, turn, colour) + "\n" + KEYS_HELP)
        key = read_key()
        if key in ("q", "Q", "", "\x1b", "\x03"):
            return turn
        if key in _NEXT:
            turn = min(turn + 1, last)
        elif key in _BACK:
            turn = max(turn - 1, 0)
        elif key == "g":
            turn = 0
        elif key == "G":
            turn = last
