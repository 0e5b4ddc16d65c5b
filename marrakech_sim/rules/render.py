"""A position drawn as text for a terminal, with or without ANSI colours."""

from __future__ import annotations

from marrakech_sim.rules.options import COLOUR_LETTERS
from marrakech_sim.rules.state import GameState

# ANSI background colours per colour letter (rbypgocwkmntv)
_ANSI = {
    "r": "41",
    "b": "44",
    "y": "43",
    "p": "45",
    "g": "42",
    "o": "48;5;208",
    "c": "46",
    "w": "47",
    "k": "100",
    "m": "48;5;201",
    "n": "48;5;94",
    "t": "48;5;30",
    "v": "48;5;99",
}
_COLOUR_NAMES = dict(
    zip(
        COLOUR_LETTERS,
        [
            "red",
            "blue",
            "yellow",
            "purple",
            "green",
            "orange",
            "cyan",
            "white",
            "black",
            "magenta",
            "brown",
            "teal",
            "violet",
        ],
        strict=True,
    )
)
_ARROWS = {"N": "^", "E": ">", "S": "v", "W": "<"}
_PHASE_WORDS = {
    "draw": "draws a rug from the pile",
    "orient": "orients Assam",
    "roll": "rolls the die",
    "place": "places a rug",
    "over": "the game is over",
}


def render(state: GameState, colour: bool = False) -> str:
    """The board (x across, y down), Assam as an arrow, the seats and whose turn it is."""
    n = state.rules.board_size
    ax, ay, facing = state.assam
    width = max(3, max((len(f"{c}{num}") for c, num in _tokens(state)), default=3))
    lines = ["    " + "".join(f"{x:^{width + 1}}" for x in range(n))]
    for y in range(n):
        cells = []
        for x in range(n):
            half = state.square(x, y)
            text = f"{half[0]}{half[1]}" if half else "."
            if (x, y) == (ax, ay):
                text = f"@{_ARROWS[facing]}" if not half else f"{_ARROWS[facing]}{text}"
            cell = f"{text:^{width}}"
            if colour and half:
                cell = f"\x1b[{_ANSI[half[0]]};97m{cell}\x1b[0m"
            elif colour and (x, y) == (ax, ay):
                cell = f"\x1b[1m{cell}\x1b[0m"
            cells.append(cell)
        lines.append(f"{y:>3} " + " ".join(cells))
    lines.append("")
    lines.append(f"Assam at ({ax}, {ay}) facing {facing}")
    for seat in range(state.rules.players):
        letters = state.rules.seat_letters(seat)
        left = "+".join(str(state.rugs_left[c]) for c in letters)
        names = "/".join(_COLOUR_NAMES[c] for c in letters)
        out = "  (out of the game)" if state.eliminated[seat] else ""
        marker = "*" if seat == state.seat and not state.is_over else " "
        lines.append(
            f"{marker} seat {seat} {letters:<3} {names:<14} {state.dirhams[seat]:>4} dirhams, "
            f"{left} rugs left{out}"
        )
    if state.is_over:
        outcome = state.outcome()
        assert outcome is not None
        winners = ", ".join(f"seat {w}" for w in outcome.winners)
        lines.append(
            f"Game over ({outcome.reason.label}): won by {winners}; scores {list(outcome.scores)}"
        )
    else:
        drawn = (
            f" ({_COLOUR_NAMES[state.colour]} rug)"
            if state.colour and state.rules.colours_per_player > 1
            else ""
        )
        lines.append(f"To move: seat {state.seat} {_PHASE_WORDS[state.phase]}{drawn}")
    return "\n".join(lines)


def _tokens(state: GameState) -> list[tuple[str, int]]:
    n = state.rules.board_size
    return [h for y in range(n) for x in range(n) if (h := state.square(x, y))]
