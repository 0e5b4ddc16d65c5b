"""A plug-in strategy played in a process of its own, for a game played here (`play`).

`play` runs its opponents in its own process, beside the person's game. A plug-in that
calls `os._exit`, segfaults or kills its process would end `play` with it, and the
person's game unsaved. `isolated(spec)` gives such a strategy a child process: each
decision is a message to it, its answer the reply. Its death, an exception it raises (a
BaseException included) or a decision past `seconds` raise here, in the seat's decision,
so the game ends as that strategy's fault (`play.game.play_game`) and the turns played
are kept. Built-in strategies are this package's code and play in this process.

The child keeps the seat's own view and random stream: the parent sends the position
and the stream's state with each call and takes the stream's state back, so the game is
the same as with the strategy in this process.
"""

from __future__ import annotations

import contextlib
import faulthandler
import multiprocessing
import signal
import weakref
from typing import Any

import numpy as np

from marrakech_sim.play.rng import Rng
from marrakech_sim.play.strategy import StrategySpec, registered
from marrakech_sim.play.view import GameView
from marrakech_sim.run.pool import (
    default_start_method,
    end_with_parent,
    exit_words,
    ignore_hang_up,
)

#: seconds a decision may take in the child when no decision watchdog interrupts the
#: wait first (play_game's runs only in the main thread): the seat's budget, and this
SLACK_SECONDS = 1.0


class StrategyProcessDied(Exception):
    """The process of an isolated strategy ended in the middle of a call."""


def isolated(spec: StrategySpec, seconds: float | None = None) -> Any:
    """The strategy `spec` names: built in its own process when it is a plug-in (not a
    registered name), else here. seconds: the most a decision may take (None: no bound
    beyond the game's own time budgets)."""
    if spec.ref in registered():
        return spec.build()
    return IsolatedStrategy(spec, seconds)


def close(strategies: Any) -> None:
    """End the processes of the isolated strategies among `strategies` (others: nothing)."""
    for strategy in strategies:
        if isinstance(strategy, IsolatedStrategy):
            strategy.close()


class IsolatedStrategy:
    """A strategy's methods, called in a child process (module docstring)."""

    def __init__(self, spec: StrategySpec, seconds: float | None) -> None:
        spec.load_class()  # a reference that does not load is refused here, in one line
        self.spec = spec
        self.seconds = seconds
        # a start method's context (fork where there is one: no imports again)
        context: Any = multiprocessing.get_context(default_start_method())
        self.conn, theirs = context.Pipe()
        self.process = context.Process(target=_child, args=(theirs, spec), daemon=True)
        self.process.start()
        theirs.close()
        self.dead: str | None = None
        weakref.finalize(self, _end, self.process, self.conn)

    def close(self) -> None:
        """End its process now (else when this object is collected)."""
        self.dead = self.dead or "its process was closed"
        _end(self.process, self.conn)

    def on_game_start(self, view: GameView) -> None:
        self._call(view, "on_game_start", ())

    def on_game_end(self, view: GameView, outcome: Any) -> None:
        self._call(view, "on_game_end", (outcome,))

    def choose_rotation(self, view: GameView) -> Any:
        return self._call(view, "choose_rotation", ())

    def choose_placement(self, view: GameView, options: tuple[Any, ...]) -> Any:
        return self._call(view, "choose_placement", (options,))

    def _call(self, view: GameView, method: str, args: tuple[Any, ...]) -> Any:
        if self.dead is not None:
            raise StrategyProcessDied(self.dead)
        message = (method, args, view.rules, view.seat, np.array(view.packed), view.rng.state)
        limit = None if self.seconds is None else self.seconds + SLACK_SECONDS
        try:
            self.conn.send(message)
            answered = self.conn.poll(limit)
            reply = self.conn.recv() if answered else None
        except (EOFError, OSError):
            self.process.join(5)
            self.dead = f"its process ended ({exit_words(self.process.exitcode)})"
            raise StrategyProcessDied(self.dead) from None
        except BaseException:  # past its time (the game's watchdog), Ctrl-C
            self.dead = "its process was stopped in a decision"
            _end(self.process, self.conn)
            raise
        if reply is None:  # where no watchdog interrupts the wait (not the main thread)
            self.dead = f"its process gave no answer within {limit:.0f} s and was stopped"
            _end(self.process, self.conn)
            raise StrategyProcessDied(self.dead)
        kind, value, state = reply
        view.rng.state[:] = state  # the seat's stream advanced as the child drew from it
        if kind == "raised":
            raise value
        return value


def _child(conn: Any, spec: StrategySpec) -> None:
    """The child's loop: build the strategy, answer calls until the pipe closes."""
    end_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's (play quits)
    ignore_hang_up()
    faulthandler.disable()  # a segfault is the game's fault, said once, not a dump
    strategy: Any = None
    view: GameView | None = None
    shown = np.empty(0)  # the position the view shows: the parent's copy of it
    while True:
        try:
            method, args, rules, seat, packed, state = conn.recv()
        except (EOFError, OSError):
            return
        if view is None:
            shown = packed
            view = GameView(rules, shown, seat, Rng.over(np.array(state)))
        else:
            np.copyto(shown, packed)
        view.rng.state[:] = state
        try:
            if strategy is None:
                strategy = spec.build()
            hook = getattr(strategy, method, None)
            reply: tuple[str, Any, Any] = ("done", hook(view, *args) if hook else None, None)
        except BaseException as exc:  # the parent's game makes it this strategy's fault
            reply = ("raised", exc, None)
        reply = (reply[0], reply[1], np.array(view.rng.state))
        try:
            conn.send(reply)
        except Exception:  # an exception (or a choice) that does not pickle goes as text
            text = f"{type(reply[1]).__name__}: {reply[1]!r}"
            conn.send(("raised", RuntimeError(text), reply[2]))


def _end(process: Any, conn: Any) -> None:
    with contextlib.suppress(Exception):
        conn.close()
    if process.is_alive():
        process.kill()
    process.join(5)
