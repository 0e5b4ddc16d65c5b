"""Compiled twins of built-in strategies.

A twin decides exactly as its Python form does, drawing from the seat's stream the same
way, so the compiled loop (`strategies.compiled`) and the Python game loop play the same
game. A twin is selected by an integer code, with its parameters as a float64 vector in
PARAMETER_ORDER.

    code  twin     Python form                        parameters (vector order)
    0     random   marrakech_sim.strategies.basic.RandomStrategy    -
    1     greedy   marrakech_sim.strategies.greedy.GreedyStrategy   area, cover, block, waste, ruin
                   (and its presets greedy-area, greedy-block)
    2     expert   strategies.expert.ExpertStrategy   budget, width
    3     rotation-only   strategies.expert.RotationOnlyStrategy   budget
    4     placement-only  strategies.expert.PlacementOnlyStrategy  budget

The expert's search allocates, so the twins call it (not inlined) with numba's runtime
on (see marrakech_sim.rules.core on `_nrt`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numba import njit, types
from numba.extending import overload

from marrakech_sim.errors import ConfigError
from marrakech_sim.play.rng import rng_below
from marrakech_sim.rules import core as k
from marrakech_sim.strategies.expert import (
    M_FLAGS,
    expert_placement,
    expert_rotation,
    memory_size,
    well_placement,
    well_rotation,
)
from marrakech_sim.strategies.kernels import GREEDY_PARAMETERS, greedy_placement, greedy_rotation

RANDOM = 0
GREEDY = 1
EXPERT = 2
ROTATION_ONLY = 3
PLACEMENT_ONLY = 4

#: compiled twin name (BaseStrategy.COMPILED) -> code
CODES = {
    "random": RANDOM,
    "greedy": GREEDY,
    "expert": EXPERT,
    "rotation-only": ROTATION_ONLY,
    "placement-only": PLACEMENT_ONLY,
}
#: parameter order of each twin's float64 vector
PARAMETER_ORDER: dict[str, tuple[str, ...]] = {
    "random": (),
    "greedy": GREEDY_PARAMETERS,
    "expert": ("budget", "width"),
    "rotation-only": ("budget",),
    "placement-only": ("budget",),
}
MAX_PARAMETERS = 8


def encode_params(twin: str, params: Mapping[str, Any]) -> np.ndarray:
    """A twin's parameter vector, in PARAMETER_ORDER (every parameter must be given)."""
    vector = np.zeros(MAX_PARAMETERS)
    for i, key in enumerate(PARAMETER_ORDER[twin]):
        if key not in params:
            raise ConfigError(
                f"compiled twin {twin!r} needs parameter {key!r}; "
                f"it takes {', '.join(PARAMETER_ORDER[twin])}"
            )
        vector[i] = float(params[key])
    return vector


@njit(cache=True)
def memories(s):
    """Each seat's memory of a game in s (a row of memory_size, zero: nothing remembered)."""
    return np.zeros((s[k.P_], memory_size(s)), np.int64)


# inlined into the compiled loop, which runs without reference counting
# (see marrakech_sim.rules.core)
@njit(cache=True, inline="always")
def forget(memory):
    """Make a seat's memory (memory_size) that of a new game: nothing remembered (the
    expert's flags cleared; the rest is read only under them)."""
    memory[M_FLAGS] = 0


#: twins that search (the expert's family): compiled into the loop only when a game of
#: the batch seats one (play_batch's `searching`); the others compile in seconds
SEARCHING = frozenset({EXPERT, ROTATION_ONLY, PLACEMENT_ONLY})


def choose_rotation(
    code: int,
    params: np.ndarray,
    s: np.ndarray,
    rng: np.ndarray,
    memory: np.ndarray,
    searching: bool,
) -> int:
    """The rotation (-1, 0 or 1) the twin `code` chooses in state `s`; memory: the seat's
    memory of the game (expert.memory_size, zero at its start; the expert's).

    searching: a compile-time constant (numba.literally) saying whether the searching
    twins are compiled in; without them, their codes play as random (never asked for).
    Compiled code only: the body is chosen by _choose_rotation below.
    """
    raise NotImplementedError("compiled code only (numba overload)")


def choose_placement(
    code: int,
    params: np.ndarray,
    s: np.ndarray,
    rng: np.ndarray,
    options: np.ndarray,
    count: int,
    memory: np.ndarray,
    searching: bool,
) -> int:
    """The index into options[:count] (legal_placements order) the twin chooses; memory
    and searching as in choose_rotation."""
    raise NotImplementedError("compiled code only (numba overload)")


# inlined into the compiled loop, which runs without reference counting
# (see marrakech_sim.rules.core); the expert's search is called, not inlined
@njit(cache=True, inline="always")
def _basic_rotation(code, params, s, rng):
    """choose_rotation of the twins that do not search."""
    if code == GREEDY:
        return greedy_rotation(s, params, rng)
    return rng_below(rng, 3) - 1  # RandomStrategy.choose_rotation (and PLACEMENT_ONLY's)


@njit(cache=True, inline="always")
def _basic_placement(code, params, s, rng, options, count):
    """choose_placement of the twins that do not search."""
    if code == GREEDY:
        return greedy_placement(s, params, rng, options, count)
    return rng_below(rng, count)  # RandomStrategy.choose_placement (and ROTATION_ONLY's)


@overload(choose_rotation, inline="always")
def _choose_rotation(code, params, s, rng, memory, searching):
    if not isinstance(searching, types.BooleanLiteral):
        return None  # numba first asks without literal types; searching must be one
    if not searching.literal_value:
        return lambda code, params, s, rng, memory, searching: _basic_rotation(code, params, s, rng)

    def rotation(code, params, s, rng, memory, searching):
        if code == EXPERT:
            return expert_rotation(s, int(params[0]), int(params[1]), rng, memory)
        if code == ROTATION_ONLY:
            return well_rotation(s, int(params[0]), rng, memory)
        return _basic_rotation(code, params, s, rng)

    return rotation


@overload(choose_placement, inline="always")
def _choose_placement(code, params, s, rng, options, count, memory, searching):
    if not isinstance(searching, types.BooleanLiteral):
        return None
    if not searching.literal_value:
        return lambda code, params, s, rng, options, count, memory, searching: _basic_placement(
            code, params, s, rng, options, count
        )

    def placement(code, params, s, rng, options, count, memory, searching):
        if code == EXPERT:
            return expert_placement(s, int(params[0]), int(params[1]), rng, memory)
        if code == PLACEMENT_ONLY:
            return well_placement(s, int(params[0]), rng, options, count, memory)
        return _basic_placement(code, params, s, rng, options, count)

    return placement


def compiled_twin(strategy_class: type) -> str | None:
    """The compiled twin's name of a strategy class, if it has one this module knows."""
    twin = getattr(strategy_class, "COMPILED", None)
    return twin if twin in CODES else None


def twin_of(strategy: Any) -> tuple[str, np.ndarray] | None:
    """(twin name, parameter vector) of a built strategy object, or None without a twin.

    Uses the object's full parameters (defaults included), so presets of one twin with
    other defaults encode correctly.
    """
    twin = compiled_twin(type(strategy))
    if twin is None:
        return None
    return twin, encode_params(twin, getattr(strategy, "params", {}))


def searches(codes: np.ndarray) -> bool:
    """Whether any of these twin codes is a searching twin (see SEARCHING)."""
    return bool(np.isin(codes, list(SEARCHING)).any())


def lineup_arrays(
    twins: Sequence[Sequence[str]], params: Sequence[Sequence[Mapping[str, Any]]]
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
