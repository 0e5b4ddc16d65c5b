"""Counting the game tree (RULES.md section 10)."""

from __future__ import annotations

from typing import Any

import numpy as np

from marrakech_sim.errors import ConfigError
from marrakech_sim.rules import core as k
from marrakech_sim.rules.state import GameState

# deeper than any game goes (a game ends when its rugs run out: at most 999 rugs of each of
# 26 colours, a few phases each); a bound, so a depth always fits the kernel's int64
MAX_DEPTH = 1_000_000
#: subtrees at most this deep are counted in one compiled call (40 ms from the 4-player
#: start); above it the count goes child by child from Python, so Ctrl-C
#: (any Python signal handler) is seen between two compiled calls
KERNEL_DEPTH = 7


def perft(state: GameState, depth: int) -> int:
    """Leaves of the game tree `depth` phases below `state`."""
    if not 0 <= depth <= MAX_DEPTH:
        raise ConfigError(f"depth = {depth}: allowed are 0 to {MAX_DEPTH}")
    faces = np.array(state.rules.distinct_faces, dtype=np.int64)
    return _perft(state, depth, faces)


def _perft(state: GameState, depth: int, faces: np.ndarray) -> int:
    if depth <= KERNEL_DEPTH or state.is_over:
        return int(k.k_perft(state.packed.copy(), depth, faces))
    return sum(_perft(state.apply(a), depth - 1, faces) for a in state.legal_actions())


def perft_divide(state: GameState, depth: int) -> list[tuple[Any, int]]:
    """Perft of each child of `state` at `depth - 1`, in legal-action order (chess's divide)."""
    if not 1 <= depth <= MAX_DEPTH:
        raise ConfigError(f"depth = {depth}: divide needs 1 to {MAX_DEPTH}")
    return [(a, perft(state.apply(a), depth - 1)) for a in state.legal_actions()]
