"""The game loop: rolls the die, asks the strategies, applies their choices, records.

This is the one Python loop that plays a game. It keeps one mutable packed state and
hands each strategy a read-only `GameView` of it; chance comes from the game's own
seeded streams (`rng.py`), through the same compiled turn steps (`turns.py`) as the
compiled whole-game loops use, so both give the same game for the same seed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import numbers
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from marrakech_sim.play import turns as t
from marrakech_sim.play.rng import Rng
from marrakech_sim.play.view import GameView
from marrakech_sim.rules import core as k
from marrakech_sim.rules.options import Rules
from marrakech_sim.rules.state import (
    ROTATIONS,
    EndReason,
    Outcome,
    Placement,
    initial_packed,
    outcome_of,
    placement_codes,
    placements_of,
    seat_to_move,
    tampering,
    turn_of,
)

if TYPE_CHECKING:
    from marrakech_sim.play.strategy import Strategy

END_ERROR = EndReason.ERROR.label


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


class PassThrough(BaseException):
    """Raised through play_game past its handling of strategy faults: a request to stop
    playing (`StopPlay`) or a person's command (undo, quit). Anything else a strategy
    raises, BaseExceptions included, ends only its game as a fault."""


class StopPlay(PassThrough, KeyboardInterrupt):
    """Ctrl-C or SIGTERM while games play, raised by the signal handlers of whoever plays
    them (the runner, a worker): it stops the run. A `KeyboardInterrupt` a strategy raises
    itself is that strategy's fault, and ends only its game."""


def raise_stop_play(signum: int, frame: Any) -> None:
    """A signal handler that stops play (`StopPlay`)."""
    raise StopPlay


class _Overtime(BaseException):
    """A decision ran past its time budget (a BaseException: `except Exception` in a
    strategy does not swallow it)."""


# the clock of the innermost decision_watchdog, and the shortest budget it serves
_watching: tuple[list[Any], float] | None = None


@contextlib.contextmanager
def decision_watchdog(budgets: Sequence[float | None]) -> Iterator[list[Any] | None]:
    """A decision clock for the games played inside: [the running decision's number
    (0: none), its budget, the numbers (an itertools.count)].

    One SIGALRM handler and one repeating timer (main thread, POSIX), not one per
    decision: a decision only writes its number, no time (a clock read costs more). The
    timer ticks four times per (shortest) budget; the handler counts the ticks that see
    the same decision and interrupts it once they span its budget (so at most a quarter
    of a budget late), a sleeping decision too; a strategy that swallows the
    interruption is interrupted again a budget later. play_game opens one per game; a
    caller playing many games (a chunk) opens one around them all and saves the signal
    calls of every game (about 10 us a game). Elsewhere (another thread, no setitimer)
    the clock is None and decisions are timed when they return.
    """
    global _watching
    given = [b for b in budgets if b is not None]
    usable = (
        given
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield None
        return
    shortest = min(given)
    if _watching is not None and _watching[1] <= shortest:
        yield _watching[0]  # an enclosing watchdog ticks often enough
        return
    clock: list[Any] = [0, 0.0, itertools.count(1)]
    interval = max(shortest / 4, 0.001)
    seen = [0, 0]  # the decision the last tick saw, and how many ticks saw it

    def _alarm(signum: int, frame: Any) -> None:
        now = clock[0]
        if now != seen[0]:
            seen[0], seen[1] = now, 1
        elif now:
            seen[1] += 1
            if (seen[1] - 1) * interval >= clock[1]:
                seen[1] = 1
                raise _Overtime

    enclosing = _watching
    previous = signal.signal(signal.SIGALRM, _alarm)
    before = signal.setitimer(signal.ITIMER_REAL, interval, interval)
    _watching = (clock, shortest)
    try:
        yield clock
    finally:
        _watching = enclosing
        signal.setitimer(signal.ITIMER_REAL, *before)
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
    budgets: list[float | None] = list(time_budgets) if time_budgets else [None] * p
    if all(b is None for b in budgets):
        return _play(rules, strategies, seed, names, budgets, None)
    with decision_watchdog(budgets) as clock:
        return _play(rules, strategies, seed, names, budgets, clock)


def _play(
    rules: Rules,
    strategies: Sequence[Strategy],
    seed: int,
    names: list[str],
    budgets: list[float | None],
    clock: list[Any] | None,
) -> GameRecord:
    """play_game's loop; `clock` is its `decision_watchdog`'s (None: checked on return)."""
    p = rules.players
    s = initial_packed(rules).copy()
    moves = t.new_moves(rules)
    streams, rngs = t.new_streams(p, seed)
    # the strategies see a copy of the state, refreshed by the kernels before each
    # decision: what they write into it (view._s, view.packed made writeable) never
    # reaches the game
    shown = s.copy()
    views = [GameView(rules, shown, i, Rng.over(rngs[i : i + 1])) for i in range(p)]
    n = rules.board_size
    codes = placement_codes(n)
    fault: str | None = None
    faulty = -1
    code: int | None

    for i, strategy in enumerate(strategies):
        hook = getattr(strategy, "on_game_start", None)
        if hook is not None:
            np.copyto(shown, s)
            problem = _call_hook(hook, (views[i],), budgets[i], clock)
            if problem is not None:
                fault, faulty = _fault(i, names[i], f"on_game_start {problem}", seed), i
                break

    result = t.k_advance(s, streams, moves, shown) if fault is None else 0
    orient, over = k.PHASE_ORIENT, k.PHASE_OVER  # the hot loop's names
    perf_counter = time.perf_counter
    numbers: Any = clock[2] if clock is not None else None
    while fault is None:
        phase = result & 7
        if phase == over:
            break
        seat = seat_to_move(s)
        budget = budgets[seat]
        options: tuple[Any, ...] = ROTATIONS if phase == orient else placements_of(n, result >> 3)
        choice: Any
        try:
            if budget is not None:
                if clock is not None:
                    clock[0], clock[1] = next(numbers), budget
                else:
                    started = perf_counter()
            if phase == orient:
                choice = strategies[seat].choose_rotation(views[seat])
            else:
                choice = strategies[seat].choose_placement(views[seat], options)
            if budget is not None:
                if clock is not None:
                    clock[0] = 0
                elif perf_counter() - started > budget:
                    raise _Overtime
            code = _action_code(choice, options, codes)
        except _Overtime:
            if clock is not None:
                clock[0] = 0
            fault = f"exceeded its time budget of {budget} s per decision"
        except PassThrough:
            raise
        except BaseException as exc:  # sys.exit or KeyboardInterrupt ends only its game
            if clock is not None:
                clock[0] = 0
            fault = (
                "ran out of memory (MemoryError: the worker's bound, worker_memory_mb)"
                if isinstance(exc, MemoryError)
                else f"raised {exc!r}"
            )
        else:
            if code is not None:
                result = t.k_decide(s, code, streams, moves, shown)
                if result >= 0:
                    continue
            fault = f"chose {choice!r}, not one of the legal options {list(options)!r}"
        fault, faulty = _fault(seat, names[seat], fault, seed), seat

    if fault is None and (tampered := tampering(rules, s)) is not None:
        # the game's own state changed outside the kernels: no record of it is kept
        fault, faulty = f"the game's state was tampered with: {tampered} (game seed {seed})", -1
    turns = turn_of(s) + 1
    seats = np.zeros((p, t.SEAT_COLUMNS), dtype=np.int32)
    tie_broken = False
    if faulty != -1 or fault is None:  # a tampered state's summary is not read
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
        end_reason=outcome.reason.label,
        winners=outcome.winners,
        tie_broken=tie_broken,
        moves=moves[:turns],
        seats=seats,
        outcome=outcome,
    )
    for i, strategy in enumerate(strategies):
        hook = getattr(strategy, "on_game_end", None)
        if hook is not None:
            np.copyto(shown, s)
            problem = _call_hook(hook, (views[i], outcome), budgets[i], clock)
            if problem is not None:
                record.error = _fault(i, names[i], f"on_game_end {problem}", seed)
                record.end_reason = END_ERROR
                _score_fault(record, i)
                break
    return record


def _call_hook(
    hook: Any, args: tuple[Any, ...], budget: float | None, clock: list[Any] | None
) -> str | None:
    """Call a strategy's on_game_start / on_game_end under its budget; what went wrong."""
    try:
        if budget is not None and clock is not None:
            clock[0], clock[1] = next(clock[2]), budget
        hook(*args)
    except _Overtime:
        return f"exceeded its time budget of {budget} s"
    except PassThrough:
        raise
    except BaseException as exc:
        return f"raised {exc!r}"
    finally:
        if clock is not None:
            clock[0] = 0
    return None


def _action_code(choice: Any, options: tuple[Any, ...], codes: dict[Placement, int]) -> int | None:
    """The kernel code of a strategy's choice, or None when it is not an option's form."""
    if options is ROTATIONS:
        # only -1, 0 and 1 reach the kernels (2**70 would overflow their int64 argument)
        if type(choice) is int:
            return choice if -1 <= choice <= 1 else None
        if isinstance(choice, numbers.Integral) and not isinstance(choice, bool):
            value = int(choice)
            return value if -1 <= value <= 1 else None
        return None
    try:
        return codes.get(choice)
    except TypeError:  # unhashable
        return None


def _fault(seat: int, name: str, what: str, seed: int) -> str:
    return f"seat {seat} (strategy {name}): {what} (game seed {seed})"


def _score_fault(record: GameRecord, faulty: int) -> None:
    """A faulty seat loses: ranked last; the other seats still in the game share the win.

    faulty -1 (a tampered game, culprit unknown): nobody wins, every seat ranks last.
    """
    seats = record.seats
    record.moves = record.moves[: record.turns]
    if faulty < 0:
        record.winners = ()
        record.tie_broken = False
        seats[:, t.S_WINNER] = 0
        seats[:, t.S_RANK] = record.players
        return
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
