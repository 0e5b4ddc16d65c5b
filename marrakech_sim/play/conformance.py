"""The conformance checker for strategy authors (`marrakech check-strategy REF`).

`check_strategy` plays the strategy against the built-ins in every seat, with 2, 3 and
4 players and both turn orders (orient at start / at end), and reports what a study
would trip over: a reference or parameters that do not load, a spec that does not
pickle (workers receive specs), exceptions, illegal or malformed choices, different
games for the same seed, and the time per decision.

Faults are reported once per distinct kind (the same message, with the seat, seed and
options that vary from game to game left out): the first occurrence in full, with the
traceback of the exception inside the strategy and its file and line, then how many
times it happened.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import pickle
import re
import signal
import time
import traceback
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import numpy as np

from marrakech_sim.errors import MarrakechError, StrategyError
from marrakech_sim.play.game import GameRecord, play_game
from marrakech_sim.play.strategy import Strategy, StrategySpec
from marrakech_sim.play.view import GameView
from marrakech_sim.rules.options import Rules
from marrakech_sim.rules.state import Outcome, Placement

_T = TypeVar("_T")

#: seconds of silence, besides two games at the full time budget, after which a checked
#: strategy's process is taken to be stuck and is killed
SILENCE_MARGIN = 60.0
#: seconds a child process that has sent its result, or closed its pipe, has to end before
#: it is killed (a forked child can wait for good on a lock its fork copied held: a
#: thread of the parent was writing to stderr, which multiprocessing flushes as a child
#: ends; tools/fork_lock_repro.py --mode run hung there 3 times out of 3)
EXIT_SECONDS = 5.0
#: the built-ins that fill the other seats, in turn
OPPONENTS = ("random", "greedy")
VARIANTS = tuple(
    (players, orient_at_end) for players in (2, 3, 4) for orient_at_end in (False, True)
)


@dataclasses.dataclass(slots=True)
class Fault:
    """One distinct kind of fault: its first occurrence and how often it happened.

    Attributes:
        first: the first message, with where it happened (player count, turn order).
        location: "file:line" in the strategy where the exception was raised, or "".
        traceback: the exception's traceback from the strategy's method down, or "".
        count: occurrences in all.
    """

    first: str
    location: str = ""
    traceback: str = ""
    count: int = 1


_VARYING = (
    (re.compile(r"^[^:]*players, orient at (start|end)(, seat \d+)?: "), ""),
    (re.compile(r"seat \d+ \(strategy [^)]*\): "), ""),
    (re.compile(r" \(game seed \d+\)"), ""),
    (re.compile(r"the same seed \d+"), "the same seed"),
    (
        re.compile(r"chose .*, not one of the legal options .*$"),
        "chose a value not among the legal options",
    ),
)


def fault_kind(message: str) -> str:
    """The message with what varies between games (seat, seed, options) taken out."""
    for pattern, replacement in _VARYING:
        message = pattern.sub(replacement, message)
    return message


def strategy_traceback(exc: BaseException) -> tuple[str, str]:
    """(file:line, traceback text) of an exception raised inside a strategy's method.

    The traceback starts at the strategy's method (the checker's own frames are left
    out); the location is the deepest frame outside marrakech_sim's play and rules
    code, i.e. in the strategy's own file when it has one.
    """
    frames = traceback.extract_tb(exc.__traceback__)
    here = __file__
    start = max((i + 1 for i, f in enumerate(frames) if f.filename == here), default=0)
    frames = traceback.StackSummary.from_list(frames[start:])
    ours = ("marrakech_sim/play/", "marrakech_sim/rules/")
    theirs = [f for f in frames if not any(p in f.filename.replace("\\", "/") for p in ours)]
    deepest = theirs or list(frames)
    location = f"{deepest[-1].filename}:{deepest[-1].lineno}" if deepest else ""
    text = "".join(frames.format()) + "".join(traceback.format_exception_only(exc))
    return location, text.rstrip()


@dataclasses.dataclass(slots=True)
class ConformanceReport:
    """What `check_strategy` found; `ok` when there are no failures."""

    ref: str
    params: dict[str, Any]
    games: int = 0
    decisions: int = 0
    total_decision_s: float = 0.0
    max_decision_s: float = 0.0
    failures: list[str] = dataclasses.field(default_factory=list)
    faults: dict[str, Fault] = dataclasses.field(default_factory=dict)
    raised: tuple[str, str] | None = None  # the last exception a decision raised

    @property
    def ok(self) -> bool:
        return not self.failures

    def add_failure(self, message: str) -> None:
        """Record a failure; the traceback of the exception just raised goes with it."""
        self.failures.append(message)
        location, text = self.raised if self.raised is not None else ("", "")
        self.raised = None
        kind = fault_kind(message)
        if kind in self.faults:
            self.faults[kind].count += 1
        else:
            self.faults[kind] = Fault(message, location, text)

    @property
    def mean_decision_s(self) -> float:
        return self.total_decision_s / self.decisions if self.decisions else 0.0

    def lines(self) -> list[str]:
        """The report as text lines (what the CLI prints)."""
        head = [
            f"strategy {self.ref!r} params {self.params}",
            f"games played: {self.games}, decisions: {self.decisions}",
            f"time per decision: mean {self.mean_decision_s * 1e6:,.0f} us, "
            f"max {self.max_decision_s * 1e3:,.2f} ms",
        ]
        if self.ok:
            return [*head, "OK: no problems found"]
        out = [
            *head,
            f"FAILED: {len(self.failures)} problem(s), {len(self.faults)} distinct",
        ]
        for fault in self.faults.values():
            out.append(f"  - {fault.first}")
            if fault.location:
                out.append(f"    at {fault.location}")
            if fault.traceback:
                out += ["    " + line for line in fault.traceback.splitlines()]
            times = "once" if fault.count == 1 else f"{fault.count} times in all"
            out.append(f"    ({times})")
        return out


class _Timed:
    """Wraps a strategy and records the time of each decision."""

    def __init__(self, inner: Strategy, report: ConformanceReport) -> None:
        self.inner = inner
        self.report = report

    def _timed(self, func: Callable[..., _T], *args: Any) -> _T:
        started = time.perf_counter()
        try:
            return func(*args)
        except StrategyError:  # the time budget's alarm: not the strategy's exception
            raise
        except Exception as exc:
            self.report.raised = strategy_traceback(exc)
            raise
        finally:
            spent = time.perf_counter() - started
            self.report.decisions += 1
            self.report.total_decision_s += spent
            self.report.max_decision_s = max(self.report.max_decision_s, spent)

    def choose_rotation(self, view: GameView) -> int:
        return self._timed(self.inner.choose_rotation, view)

    def choose_placement(self, view: GameView, options: tuple[Placement, ...]) -> Placement:
        return self._timed(self.inner.choose_placement, view, options)

    def on_game_start(self, view: GameView) -> None:
        hook = getattr(self.inner, "on_game_start", None)
        if hook is not None:
            hook(view)

    def on_game_end(self, view: GameView, outcome: Outcome) -> None:
        hook = getattr(self.inner, "on_game_end", None)
        if hook is not None:
            hook(view, outcome)


def check_strategy(
    ref: str,
    params: Mapping[str, Any] | None = None,
    games: int = 2,
    seed: int = 1,
    time_budget: float | None = 5.0,
) -> ConformanceReport:
    """Check a strategy reference against the plug-in contract; never raises for a
    misbehaving strategy (that is what the report is for).

    The games run in a child process (where fork exists), so a strategy that ends its
    process (os._exit, a signal, a segfault) or gets stuck where the time budget cannot
    reach it is reported, with the game it was playing, instead of ending the checker.

    Args:
        games: games per variant and seat of the strategy (6 variants, 9 seats in all).
        seed: the first game seed; game i uses seed + i.
        time_budget: seconds per decision before a decision counts as a fault.
    """
    params = dict(params or {})
    if "fork" not in multiprocessing.get_all_start_methods():
        return _check(ref, params, games, seed, time_budget, None)
    # two games' decisions (a game and its replay) at their full budget, and a margin
    silence = (time_budget or 60.0) * 400 + SILENCE_MARGIN
    play_game(Rules(players=2), [_First(), _First()], 0)  # the child inherits the kernels
    outcome, how, last = in_child_process(_check, (ref, params, games, seed, time_budget), silence)
    if outcome is not None:
        assert isinstance(outcome, ConformanceReport)
        return outcome
    report = ConformanceReport(ref, params)
    if isinstance(last, tuple):
        report.games = last[2]
        report.add_failure(f"{last[0]}, seat {last[1]}: {how} during this game")
    else:
        report.add_failure(f"{how} before its first game")
    return report


class _First:
    """No turn, the first placement: loads the game loop's kernels before a fork."""

    def choose_rotation(self, view: GameView) -> int:
        return 0

    def choose_placement(self, view: GameView, options: tuple[Placement, ...]) -> Placement:
        return options[0]


def in_child_process(
    func: Callable[..., Any], args: tuple[Any, ...], silence: float
) -> tuple[Any, str, Any]:
    """Run func(*args, progress) in a forked child: (its result, "", last progress), or
    (None, how the child ended, the last value it passed to progress) when it died or
    said nothing for `silence` seconds (then it is killed).

    progress(value) sends a small picklable value to this process (where a check is).
    """
    ctx = multiprocessing.get_context("fork")
    ours, theirs = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child_main, args=(theirs, func, args), daemon=True)
    child.start()
    theirs.close()
    last: Any = None
    try:
        while True:
            if not ours.poll(silence):
                child.kill()
                child.join()
                return None, f"the strategy stopped responding (no word for {silence:.0f} s)", last
            try:
                kind, value = ours.recv()
            except (EOFError, OSError):
                child.join(EXIT_SECONDS)
                return None, f"the strategy ended its process ({_exit_words(child.exitcode)})", last
            if kind == "done":
                child.join(EXIT_SECONDS)  # (killed below if it is still there)
                return value, "", last
            last = value
    finally:
        ours.close()
        if child.is_alive():
            child.kill()
            child.join()


def _child_main(conn: Any, func: Callable[..., Any], args: tuple[Any, ...]) -> None:
    import faulthandler

    faulthandler.disable()  # the parent reports a segfault; no dump on stderr
    result = func(*args, lambda value: conn.send(("progress", value)))
    conn.send(("done", result))
    conn.close()
    # ended here, not by multiprocessing, which flushes sys.stdout and sys.stderr first:
    # what they hold is the parent's to write, and this copy of a stream's lock may be
    # held for good (by a thread of the parent that was writing as it forked)
    os._exit(0)


def _exit_words(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            pass
    return f"exit code {code}"


def _check(
    ref: str,
    params: dict[str, Any],
    games: int,
    seed: int,
    time_budget: float | None,
    progress: Callable[[Any], None] | None,
) -> ConformanceReport:
    """check_strategy's work; progress((where, seat, games played)) before each game."""
    report = ConformanceReport(ref, params)
    try:
        spec = StrategySpec.of(ref, params)
    except MarrakechError as exc:
        report.add_failure(f"spec: {exc}")
        return report
    try:
        spec = pickle.loads(pickle.dumps(spec))
    except Exception as exc:
        report.add_failure(f"the spec does not pickle (workers receive specs): {exc!r}")
        return report
    try:
        spec.build()
    except Exception as exc:
        report.add_failure(f"cannot build the strategy: {exc}")
        return report
    opponents = [StrategySpec.of(name) for name in OPPONENTS]
    if spec.is_builtin:
        # A built-in's kernels compile (into an empty kernel cache: minutes for the expert)
        # in one untimed game first, as a run's and `play`'s warm-ups do; else its first
        # timed decision would be the compile's. A plug-in's first decisions stay timed:
        # a run does not warm plug-ins up either.
        if progress is not None:
            progress(("an untimed warm-up game (compiles its kernels)", 0, 0))
        _play(Rules(players=2), spec, opponents, 0, seed, None, None)
    game_seed = seed
    for players, orient_at_end in VARIANTS:
        rules = Rules(players=players, orient_at_end=orient_at_end)
        where = f"{players} players, orient {'at end' if orient_at_end else 'at start'}"
        for seat in range(players):
            for _ in range(games):
                if progress is not None:
                    progress((f"{where}, game seed {game_seed}", seat, report.games))
                record = _play(rules, spec, opponents, seat, game_seed, report, time_budget)
                game_seed += 1
                if record is None:
                    continue
                if record.error is not None:
                    report.add_failure(f"{where}: {record.error}")
                    continue
                report.raised = None
                again = _play(rules, spec, opponents, seat, record.seed, None, time_budget)
                if again is None or not same_game(record, again):
                    report.add_failure(
                        f"{where}, seat {seat}: not deterministic: the same seed "
                        f"{record.seed} gave a different game (use view.rng, not a global "
                        f"random generator)"
                    )
    return report


def _play(
    rules: Rules,
    spec: StrategySpec,
    opponents: list[StrategySpec],
    seat: int,
    seed: int,
    report: ConformanceReport | None,
    time_budget: float | None,
) -> GameRecord | None:
    """One game with the checked strategy in `seat`; None (and a failure) if it cannot start."""
    lineup: list[Strategy] = []
    names: list[str] = []
    for i in range(rules.players):
        if i == seat:
            built = spec.build()
            lineup.append(_Timed(built, report) if report is not None else built)
            names.append(spec.label)
        else:
            other = opponents[(i + seat) % len(opponents)]
            lineup.append(other.build())
            names.append(other.label)
    budgets = [time_budget if i == seat else None for i in range(rules.players)]
    record = play_game(rules, lineup, seed, names=names, time_budgets=budgets)
    if report is not None:
        report.games += 1
    return record


def same_game(a: GameRecord, b: GameRecord) -> bool:
    """Whether two records are the same game: end, error, every move and seat column."""
    return (
        a.end_reason == b.end_reason
        and a.error == b.error
        and np.array_equal(a.moves, b.moves)
        and np.array_equal(a.seats, b.seats)
    )
