"""Misbehaving example strategies for the fault and conformance tests."""

import random
import time
from types import MappingProxyType

from marrakech_sim.play.strategy import BaseStrategy


class _Rotates(BaseStrategy):
    def choose_rotation(self, view):
        return 0


class Raises(_Rotates):
    """Raises on its first placement."""

    def choose_placement(self, view, options):
        raise RuntimeError("boom in choose_placement")


class Illegal(_Rotates):
    """Returns a well-formed placement that is not among the options."""

    def choose_placement(self, view, options):
        return ((0, 0), (0, 1)) if ((0, 0), (0, 1)) not in options else ((6, 6), (6, 5))


class BadRotation(BaseStrategy):
    """Returns a rotation of 2 (180 degrees are not allowed)."""

    def choose_rotation(self, view):
        return 2

    def choose_placement(self, view, options):
        return options[0]


class Garbage(_Rotates):
    """Returns something that is not a placement at all."""

    def choose_placement(self, view, options):
        return ["not", {"a": "placement"}]


class NoneRotation(BaseStrategy):
    """Returns None as a rotation."""

    def choose_rotation(self, view):
        return None

    def choose_placement(self, view, options):
        return options[0]


class Slow(_Rotates):
    """Takes 50 ms per placement (over a 10 ms budget) but returns."""

    def choose_placement(self, view, options):
        time.sleep(0.05)
        return options[0]


class SlowOnce(_Rotates):
    """Its first placement in a process takes 0.5 s (as a first decision that compiles
    kernels does), every later one is instant; seeded otherwise."""

    slept = False

    def choose_placement(self, view, options):
        if not SlowOnce.slept:
            SlowOnce.slept = True
            time.sleep(0.5)
        return options[0]


class Hangs(_Rotates):
    """Never returns from a placement: a busy loop that only a time budget stops."""

    def choose_placement(self, view, options):
        while True:
            pass


class Sleeps(_Rotates):
    """Sleeps an hour on a placement."""

    def choose_placement(self, view, options):
        time.sleep(3600)


class StartRaises(_Rotates):
    """Raises in on_game_start."""

    def on_game_start(self, view):
        raise ValueError("cannot start")

    def choose_placement(self, view, options):
        return options[0]


class Unseeded(_Rotates):
    """Uses the global random generator: a different game for the same seed."""

    def choose_rotation(self, view):
        return random.choice((-1, 0, 1))

    def choose_placement(self, view, options):
        return random.choice(options)


class HugeRotation(BaseStrategy):
    """Returns 2**70 as a rotation (too large for the kernels' integers)."""

    def choose_rotation(self, view):
        return 2**70

    def choose_placement(self, view, options):
        return options[0]


class HugePlacement(_Rotates):
    """Returns a placement with coordinates of 2**70."""

    def choose_placement(self, view, options):
        return ((2**70, 0), (2**70, 1))


class WritesState(_Rotates):
    """Writes garbage into the view's state array before answering."""

    def choose_placement(self, view, options):
        view._s[:] = 7
        return options[0]


class MakesWriteable(_Rotates):
    """Makes `view.packed` writeable and fills it with garbage before answering."""

    def choose_placement(self, view, options):
        packed = view.packed
        packed.flags.writeable = True
        packed[:] = -1
        return options[0]


class StealsState(_Rotates):
    """Finds the game loop's own state through the call stack and gives itself dirhams."""

    def choose_placement(self, view, options):
        import sys

        frame = sys._getframe(1)
        while frame is not None and "s" not in frame.f_locals:
            frame = frame.f_back
        if frame is not None:
            s = frame.f_locals["s"]
            s[s[20] + view.seat] += 1000  # core.DIRHAMS_AT
        return options[0]


class SwallowsTimeouts(_Rotates):
    """Loops forever, catching every Exception (a time limit must still stop it)."""

    def choose_placement(self, view, options):
        while True:
            try:
                while True:
                    pass
            except Exception:
                pass


class _Dies(BaseStrategy):
    """Plays the first option; on its first placement of a game chosen by its own
    stream (one game in `one_in`), ends its process through `die`."""

    PARAMETERS = MappingProxyType({"one_in": 1})

    def on_game_start(self, view):
        self.doomed = view.rng.below(self.params["one_in"]) == 0

    def choose_rotation(self, view):
        return 0

    def choose_placement(self, view, options):
        if getattr(self, "doomed", True):  # no game start: a hint strategy's, doomed
            self.die()
        return options[0]


class Exits(_Dies):
    """Calls sys.exit(3)."""

    def die(self):
        import sys

        sys.exit(3)


class HardExits(_Dies):
    """Calls os._exit(1)."""

    def die(self):
        import os

        os._exit(1)


class KillsItself(_Dies):
    """Sends SIGKILL to its own process."""

    def die(self):
        import os
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


class Segfaults(_Dies):
    """Reads memory at address 0 (SIGSEGV)."""

    def die(self):
        import ctypes

        ctypes.string_at(0)


class InterruptsItself(_Dies):
    """Raises KeyboardInterrupt itself (no Ctrl-C was pressed): a fault of its game."""

    def die(self):
        raise KeyboardInterrupt


class SometimesNoRotation(BaseStrategy):
    """Returns None as its rotation in half its games (chosen by its own stream): those
    games fault before their first move, so they have no moves rows."""

    def on_game_start(self, view):
        self.doomed = view.rng.below(2) == 0

    def choose_rotation(self, view):
        return None if self.doomed else 0

    def choose_placement(self, view, options):
        return options[0]


class Prints(_Rotates):
    """Prints a line to standard output and one to standard error on every placement."""

    def choose_placement(self, view, options):
        import sys

        print("thinking about", len(options), "placements" * 20)
        print("a warning", file=sys.stderr)
        return options[0]


class EatsMemory(_Rotates):
    """Keeps 64 MB more on each placement, in a list that grows without bound."""

    def choose_placement(self, view, options):
        self.__dict__.setdefault("hoard", []).append(bytearray(64 << 20))
        return options[0]


class RaisesSometimes(_Dies):
    """Raises on its first placement in one game in `one_in` (a fault, the process lives)."""

    def die(self):
        raise RuntimeError("boom in one game")
