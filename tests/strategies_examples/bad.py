"""Misbehaving example strategies for the fault and conformance tests."""

import random
import time

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
