"""The game loop: rolls the die, asks the strategies, applies their choices, records.

This is the one Python loop that plays a game. It keeps one mutable packed state and
hands each strategy a read-only `GameView` of it; chance comes from the game's own
seeded streams (`rng.py`), through the same compiled turn steps (`turns.py`) as the
compiled whole-game loops use, so both give the same game for the same seed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import numbers
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from marrakech_sim.errors import StrategyError
from marrakech_sim.play import turns as t
from marrakech_sim.play.rng import Rng
from marrakech_sim.play.view import GameView
from marrakech_sim.rules import core as k
from marrakech_sim.rules.options import Rules
from marrakech_sim.rules.state import (
    ROTATIONS,
    Outcome,
    Placement,
    initial_packed,
    outcome_of,
    placement_codes,
    placements_of,
)

if TYPE_CHECKING:
    from marrakech_sim.play.strategy import Strategy

END_ERROR = "error"


# ---------------------------------------------------------------- records


@dataclasses.dataclass(slots=True)
class GameRecord:
    """One game as LOG_FORMAT.md records it (moves and seats as compiled-core arrays)."""

    seed: int
    players: int
    turns: int
    end_reason: str  # 'rugs_exhausted', 'one_left' or 'error'
    winners: tuple[int, ...]
    tie_broken: bool
    moves: np.ndarray  # (turns, turns.move_columns(players)) int32, NULL for missing
    seats: np.ndarray  # (players, SEAT_COLUMNS) int32
    error: str | None = None
    outcome: Outcome | None = None

    @property
    def win_shares(self) -> tuple[float, ...]:
        share = 1 / len(self.winners) if self.winners else 0.0
        return tuple(share if i in self.winners else 0.0 for i in range(self.players))


@contextlib.contextmanager
def _time_limit(seconds: float | None) -> Iterator[None]:
    """Interrupt a decision that runs past `seconds` (main thread, POSIX only)."""
    usable = (
        seconds is not None
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return

    def _alarm(signum: int, frame: Any) -> None:
        raise StrategyError("exceeded its time budget per decision")

    assert seconds is not None
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def play_game(
    rules: Rules,
    strategies: Sequence[Strategy],
    seed: int,
    *,
    names: Sequence[str] | None = None,
    time_budgets: Sequence[float | None] | None = None,
) -> GameRecord:
    """Play one game; strategies[i] sits in seat i.

    A strategy that raises, chooses an illegal option or exceeds its seat's time budget
    (seconds per decision; None for none) ends the game with end_reason 'error': the
    faulty seat loses (ranked last), the others share the win, and the record says why.
    """
    p = rules.players
    if len(strategies) != p:
        raise ValueError(f"{len(strategies)} strategies for {p} seats")
    names = list(names) if names is not None else [type(x).__name__ for x in strategies]
    budgets = list(time_budgets) if time_budgets is not None else [None] * p
    s = initial_packed(rules).copy()
    moves = t.new_moves(rules)
    streams, rngs = t.new_streams(p, seed)
    views = [GameView(rules, s, i, Rng.over(rngs[i : i + 1])) for i in range(p)]
    n = rules.board_size
    codes = placement_codes(n)
    fault: str | None = None
    faulty = -1
    code: int | None

    for i, strategy in enumerate(strategies):
        hook = getattr(strategy, "on_game_start", None)
        if hook is not None:
            try:
                hook(views[i])
            except Exception as exc:
                fault, faulty = _fault(i, names[i], f"on_game_start raised {exc!r}", seed), i
                break

    result = t.k_advance(s, streams, moves) if fault is None else 0
    seat_index, orient, over = k.SEAT_, k.PHASE_ORIENT, k.PHASE_OVER  # the hot loop's names
    while fault is None:
        phase = result & 7
        if phase == over:
            break
        seat = int(s[seat_index])
        budget = budgets[seat]
        options: tuple[Any, ...]
        choice: Any
        try:
            if phase == orient:
                options = ROTATIONS
                if budget is None:
                    choice = strategies[seat].choose_rotation(views[seat])
                else:
                    choice = _decide_timed(strategies[seat], views[seat], options, budget)
            else:
                options = placements_of(n, result >> 3)
                if budget is None:
                    choice = strategies[seat].choose_placement(views[seat], options)
                else:
                    choice = _decide_timed(strategies[seat], views[seat], options, budget)
            code = _action_code(choice, options, codes)
        except StrategyError:  # the time limit's alarm
            fault = f"exceeded its time budget of {budget} s per decision"
        except Exception as exc:
            fault = f"raised {exc!r}"
        else:
            if code is not None:
                result = t.k_decide(s, code, streams, moves)
                if result >= 0:
                    continue
            fault = f"chose {choice!r}, not one of the legal options {list(options)!r}"
        fault, faulty = _fault(seat, names[seat], fault, seed), seat

    turns = int(s[k.TURN_]) + 1
    seats = np.zeros((p, t.SEAT_COLUMNS), dtype=np.int32)
    tie_broken = bool(t.k_summary(s, seats))
    if fault is not None:
        record = GameRecord(
            seed=seed,
            players=p,
            turns=int(np.count_nonzero(moves[:, t.M_SEAT] != t.NULL)),
            end_reason=END_ERROR,
            winners=(),
            tie_broken=False,
            moves=moves,
            seats=seats,
            error=fault,
        )
        _score_fault(record, faulty)
        return record
    outcome = outcome_of(s)
    assert outcome is not None
    record = GameRecord(
        seed=seed,
        players=p,
        turns=turns,
        end_reason=outcome.reason.value,
        winners=outcome.winners,
        tie_broken=tie_broken,
        moves=moves[:turns],
        seats=seats,
        outcome=outcome,
    )
    for i, strategy in enumerate(strategies):
        hook = getattr(strategy, "on_game_end", None)
        if hook is not None:
            try:
                hook(views[i], outcome)
            except Exception as exc:
                record.error = _fault(i, names[i], f"on_game_end raised {exc!r}", seed)
                record.end_reason = END_ERROR
                _score_fault(record, i)
                break
    return record


def _decide(strategy: Strategy, view: GameView, options: tuple[Any, ...]) -> Any:
    if options is ROTATIONS:
        return strategy.choose_rotation(view)
    return strategy.choose_placement(view, options)


def _decide_timed(
    strategy: Strategy, view: GameView, options: tuple[Any, ...], budget: float
) -> Any:
    """_decide, interrupted or failed when it takes longer than `budget` seconds."""
    started = time.perf_counter()
    with _time_limit(budget):
        choice = _decide(strategy, view, options)
    if time.perf_counter() - started > budget:
        raise StrategyError("exceeded its time budget per decision")
    return choice


def _action_code(choice: Any, options: tuple[Any, ...], codes: dict[Placement, int]) -> int | None:
    """The kernel code of a strategy's choice, or None when it is not an option's form."""
    if options is ROTATIONS:
        if type(choice) is int:
            return choice
        if isinstance(choice, numbers.Integral) and not isinstance(choice, bool):
            return int(choice)
        return None
    try:
        return codes.get(choice)
    except TypeError:  # unhashable
        return None


def _fault(seat: int, name: str, what: str, seed: int) -> str:
    return f"seat {seat} (strategy {name}): {what} (game seed {seed})"


def _score_fault(record: GameRecord, faulty: int) -> None:
    """A faulty seat loses: ranked last; the other seats still in the game share the win."""
    seats = record.seats
    record.moves = record.moves[: record.turns]
    others = tuple(
        i for i in range(record.players) if i != faulty and seats[i, t.S_ELIMINATED_TURN] < 0
    )
    record.winners = others
    record.tie_broken = False
    for i in range(record.players):
        seats[i, t.S_WINNER] = 1 if i in others else 0
        if i == faulty:
            seats[i, t.S_RANK] = record.players
        else:
            seats[i, t.S_RANK] = 1 if i in others else len(others) + 1
