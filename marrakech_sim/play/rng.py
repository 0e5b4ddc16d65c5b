"""Seeded random streams shared by the Python and the compiled game loops.

One generator (SplitMix64) implemented once, in compiled functions over a one-element
uint64 array, so a Python strategy and its compiled twin draw the same numbers. `Rng`
wraps a stream as a `random.Random`, so strategy authors get the familiar API
(`choice`, `shuffle`, `random`, ...); built-in strategies use `below(n)`, whose compiled
twin is `rng_below`.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from numba import njit, uint64

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_MASK64 = (1 << 64) - 1
_SMALL = 1 << 32
_TWO32 = np.uint64(1 << 32)
_LOW32 = np.uint64((1 << 32) - 1)

# stream numbers: one per use, so the streams of one game never overlap
STREAM_DICE = 0
STREAM_PILE = 1  # + seat: each seat's rug pile (RULES.md section 1, two colours each)
STREAM_STRATEGY = 64  # + seat: each seat's strategy


@njit(cache=True, _nrt=False)
def _mix(z):
    z = (z ^ (z >> uint64(30))) * _MIX1
    z = (z ^ (z >> uint64(27))) * _MIX2
    return z ^ (z >> uint64(31))


@njit(cache=True, _nrt=False)
def rng_next(state):
    """The next 64 random bits of the stream in state[0] (SplitMix64)."""
    state[0] += _GOLDEN
    return _mix(state[0])


@njit(cache=True, _nrt=False)
def rng_below(state, n):
    """A uniform integer in [0, n), exactly uniform.

    Lemire's multiply-and-shift ("Fast random integer generation in an interval", 2019)
    on the top 32 bits of a draw: one draw and no division, except in the rare case
    (probability below n / 2**32) where a draw must be checked against the rejection
    threshold. n above 2**32 takes the top bits and rejects values >= n.
    """
    if n <= _SMALL:
        m = (rng_next(state) >> uint64(32)) * uint64(n)
        low = m & _LOW32
        if low < uint64(n):
            threshold = (_TWO32 - uint64(n)) % uint64(n)
            while low < threshold:
                m = (rng_next(state) >> uint64(32)) * uint64(n)
                low = m & _LOW32
        return np.int64(m >> uint64(32))
    bits = 0
    while (1 << bits) < n:
        bits += 1
    shift = uint64(64 - bits)
    while True:
        r = np.int64(rng_next(state) >> shift)
        if r < n:
            return r


@njit(cache=True, _nrt=False)
def rng_random(state):
    """A uniform float in [0, 1) with 53 random bits."""
    return (rng_next(state) >> uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, _nrt=False)
def seed_of(seed, stream):
    return _mix(uint64(seed) ^ _mix(uint64(stream) + _GOLDEN))


def stream_seed(seed: int, stream: int) -> int:
    """The starting state of stream `stream` of a game seed (a 64-bit hash of both)."""
    return int(seed_of(np.uint64(seed & _MASK64), np.uint64(stream)))


def new_stream(seed: int, stream: int) -> np.ndarray:
    """A one-element uint64 state array for stream `stream` of game seed `seed`."""
    return np.array([stream_seed(seed, stream)], dtype=np.uint64)


class Rng(random.Random):
    """A `random.Random` over one SplitMix64 stream; `below` matches the compiled twin."""

    state: np.ndarray

    def __init__(self, seed: int = 0, stream: int = 0) -> None:
        super().__init__()
        self.state = new_stream(seed, stream)

    @classmethod
    def over(cls, state: np.ndarray) -> Rng:
        """An Rng drawing from (and advancing) a one-element uint64 state array, such as
        a seat's entry of a game's seeded streams (turns.new_streams)."""
        rng = cls.__new__(cls)
        random.Random.__init__(rng)
        rng.state = state
        return rng

    def seed(self, a: Any = None, version: int = 2) -> None:
        """Restart the stream from an integer seed (stream 0); random.Random calls it first."""
        if isinstance(a, int):
            self.state = new_stream(a, 0)

    def below(self, n: int) -> int:
        """A uniform integer in [0, n); n must be at least 1."""
        if n < 1:
            raise ValueError(f"below(n) needs n >= 1, got {n!r}")
        value: int = rng_below(self.state, n)
        return value

    def _randbelow(self, n: int) -> int:
        """random.Random's one source of integers (choice, randrange, shuffle, sample):
        one compiled draw instead of getrandbits' Python loop."""
        return rng_below(self.state, n) if n > 0 else 0

    def random(self) -> float:
        return float(rng_random(self.state))

    def getrandbits(self, k: int) -> int:
        if k < 0:
            raise ValueError("number of bits must be non-negative")
        bits = 0
        filled = 0
        while filled < k:
            bits |= int(rng_next(self.state)) << filled
            filled += 64
        return bits & ((1 << k) - 1)

    def getstate(self) -> Any:
        return int(self.state[0])

    def setstate(self, state: Any) -> None:
        self.state[0] = np.uint64(state)
