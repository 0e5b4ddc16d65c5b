"""What the pictures of a game say, in words a person reads: players numbered from 1.

The records and tables number seats from 0 (`seat` 0 is the first player); every text a
person reads on a picture or in the terminal says "player 1" for seat 0.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from marrakech_sim.record import Record, Replay, TurnInfo
from marrakech_sim.rules import COLOUR_LETTERS, EndReason, GameState

ROTATION_WORDS = {-1: "left", 0: "straight on", 1: "right"}  # a rotation in words


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Legend:
    """What a view of a position says besides the board, the same in every medium (the
    picture `scene.board_scene`, the replay page, the terminal's `position_text`)."""

    title: str | None = None  # the first line
    names: Sequence[str] | None = None  # the seats' names, in seat order
    info: TurnInfo | None = None  # the turn that led to the position, described
    turn: int | None = None  # turns played to reach the position ...
    turns: int | None = None  # ... of the game's turns

    @classmethod
    def of_replay(cls, replay: Replay, turn: int, title: str | None = None) -> Legend:
        """The legend of a replayed game's position after `turn` turns (0: the start)."""
        return cls(
            title=title,
            names=replay.record.seats,
            info=replay.turns[turn - 1] if turn > 0 else None,
            turn=turn,
            turns=len(replay.turns),
        )


def game_title(record: Record) -> str:
    """'EVENT, game GAME': how the pictures and pages of a recorded game name it."""
    return f"{record.event}, game {record.game}"


def player(seat: int) -> str:
    """'player 1' for seat 0."""
    return f"player {seat + 1}"


def players(seats: tuple[int, ...] | list[int]) -> str:
    """'player 2', 'players 1 and 3', 'players 1, 2 and 4'."""
    numbers = [str(s + 1) for s in seats]
    if len(numbers) == 1:
        return f"player {numbers[0]}"
    return f"players {', '.join(numbers[:-1])} and {numbers[-1]}"


def noun(n: int, word: str) -> str:
    """`word`, plural unless `n` is 1 ('rug', 'rugs')."""
    return word if n == 1 else f"{word}s"


def count(n: int, word: str) -> str:
    """'1 rug', '2 rugs', '0 dirhams'."""
    return f"{n} {noun(n, word)}"


def owner(state: GameState, x: int, y: int) -> int | None:
    """The seat owning the rug half on square (x, y), or None on an empty square."""
    half = state.square(x, y)
    if half is None:
        return None
    # RULES.md section 1: seat s owns the letters at indices s, s + P, s + 2P, ...
    return COLOUR_LETTERS.index(half[0]) % state.rules.players


def turn_lines(info: TurnInfo, after: GameState) -> list[str]:
    """What happened in `info`'s turn, one line per step; `after` is the position after it."""
    lines = [f"turn {info.turn}: {player(info.seat)} ({info.colour})"]
    detail = []
    if info.rotation is not None:
        detail.append(f"rotation {ROTATION_WORDS[info.rotation]}")
    if info.roll is not None:
        detail.append(f"roll {info.roll}")
    if detail:
        lines.append(", ".join(detail))
    if info.bankrupt:
        # the bankrupt player places no rug: the square under Assam still shows whose it is
        creditor = owner(after, info.assam[0], info.assam[1])
        to = f" {player(creditor)}" if creditor is not None else ""
        paid = (
            f"pays what is left, {count(info.payment, 'dirham')}"
            if info.payment
            else "has no dirhams left"
        )
        lines.append(f"{player(info.seat)} cannot pay{to} and is out: {paid}")
    elif info.payment:
        to = f" to {player(info.paid_to)}" if info.paid_to is not None else ""
        lines.append(f"pays {count(info.payment, 'dirham')}{to}")
    else:
        lines.append("no payment")
    if info.placement is not None:
        (x1, y1), (x2, y2) = info.placement
        lines.append(f"places {x1},{y1}-{x2},{y2}")
    if info.end_rotation is not None:
        lines.append(f"then turns Assam {ROTATION_WORDS[info.end_rotation]}")
    return lines


def outcome_line(state: GameState) -> str:
    """How a finished game ended: who won, and how a tie at the top was settled."""
    outcome = state.outcome()
    if outcome is None:
        return "the game is not over"
    winners = list(outcome.winners)
    if outcome.reason is EndReason.ONE_LEFT and len(winners) == 1:
        return f"game over: {player(winners[0])} won, the last one in the game"
    scores = [s for s in outcome.scores if s is not None]
    top = max(scores) if scores else None
    tied = [seat for seat, s in enumerate(outcome.scores) if s is not None and s == top]
    if len(winners) > 1:
        cash = outcome.dirhams[winners[0]]
        return (
            f"game over: {players(winners)} share the win "
            f"({top} points and {count(cash, 'dirham')} each)"
        )
    if outcome.tie_broken:
        others = [s for s in tied if s != winners[0]]
        theirs = ", ".join(str(outcome.dirhams[s]) for s in others)
        return (
            f"game over: {player(winners[0])} won on the tie-break: tied on {top} points "
            f"with {players(others)}, more dirhams ({outcome.dirhams[winners[0]]} to {theirs})"
        )
    return f"game over: {player(winners[0])} won with {top} points"
