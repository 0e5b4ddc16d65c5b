"""Compiled twins of built-in strategies.

A twin decides exactly as its Python form does, drawing from the seat's stream the same
way, so the compiled loop (`strategies.compiled`) and the Python game loop play the same
game. A twin is selected by an integer code, with its parameters as a float64 vector in
PARAMETER_ORDER.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from marrakech_sim.rng import rng_below

RANDOM = 0

#: compiled twin name (BaseStrategy.COMPILED) -> code
CODES = {"random": RANDOM}
#: parameter order of each twin's float64 vector
PARAMETER_ORDER: dict[str, tuple[str, ...]] = {"random": ()}
MAX_PARAMETERS = 8


def encode_params(twin: str, params: dict[str, float]) -> np.ndarray:
    """A twin's parameter vector, in PARAMETER_ORDER."""
    vector = np.zeros(MAX_PARAMETERS)
    for i, key in enumerate(PARAMETER_ORDER[twin]):
        vector[i] = float(params[key])
    return vector


@njit(cache=True)
def choose_rotation(code, params, s, rng):  # type: ignore[no-untyped-def]
    """The rotation a twin chooses (strategies.basic.RandomStrategy.choose_rotation)."""
    return rng_below(rng, 3) - 1


@njit(cache=True)
def choose_placement(code, params, s, rng, options, count):  # type: ignore[no-untyped-def]
    """The index into options[:count] a twin chooses."""
    return rng_below(rng, count)


def compiled_twin(strategy_class: type) -> str | None:
    """The compiled twin's name of a strategy class, if it has one this module knows."""
    twin = getattr(strategy_class, "COMPILED", None)
    return twin if twin in CODES else None


def lineup_arrays(
    twins: Sequence[Sequence[str]], params: Sequence[Sequence[dict[str, float]]]
) -> tuple[np.ndarray, np.ndarray]:
    """Code and parameter arrays (games x seats) for play_batch."""
    g, p = len(twins), len(twins[0])
    codes = np.empty((g, p), np.int64)
    vectors = np.zeros((g, p, MAX_PARAMETERS))
    for i in range(g):
        for seat in range(p):
            codes[i, seat] = CODES[twins[i][seat]]
            vectors[i, seat] = encode_params(twins[i][seat], params[i][seat])
    return codes, vectors
