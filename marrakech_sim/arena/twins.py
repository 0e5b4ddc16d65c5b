"""The compiled twins: their registry, parameter vectors and the compiled loop's dispatch.

A built-in strategy with a compiled twin declares it beside its own code, as a
`play.strategy.CompiledTwin` value in its class's `COMPILED` (see basic.RandomStrategy,
greedy.GreedyStrategy, expert.ExpertStrategy). `TWINS` collects the declarations found in
the modules of `marrakech_sim.strategies`, by code (no twin is named in this module); the
built-ins declare these:

    code  twin            Python form                              parameters (vector order)
    0     random          strategies.basic.RandomStrategy          -
    1     greedy          strategies.greedy.GreedyStrategy         area, cover, block, waste, ruin
                          (and its presets greedy-area, greedy-block)
    2     expert          strategies.expert.ExpertStrategy         budget, width
    3     rotation-only   strategies.expert.RotationOnlyStrategy   budget
    4     placement-only  strategies.expert.PlacementOnlyStrategy  budget

`choose_rotation` and `choose_placement` are the compiled loop's dispatch by code,
generated from the declarations: a chain of `if code == twin.code` over the twins,
compiled into the loop (numba resolves each twin's kernels when it compiles the loop, so
the chain is what a hand-written one would be: one compare per twin, the kernels inlined).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numba import njit, types
from numba.extending import overload

from marrakech_sim.errors import ConfigError
from marrakech_sim.play.strategy import CompiledTwin

#: the most parameters a twin's vector holds
MAX_PARAMETERS = 8


def declared_twins() -> tuple[CompiledTwin, ...]:
    """The compiled twins the built-in strategies declare (their classes' `COMPILED` in
    the modules of `marrakech_sim.strategies`), by code: one per code, codes 0, 1, ..."""
    import marrakech_sim.strategies as package

    found: dict[int, CompiledTwin] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for value in vars(module).values():
            twin = getattr(value, "COMPILED", None) if isinstance(value, type) else None
            if not isinstance(twin, CompiledTwin):
                continue
            other = found.setdefault(twin.code, twin)
            if other is not twin:
                raise RuntimeError(
                    f"compiled twins {other.name!r} and {twin.name!r} both declare code {twin.code}"
                )
            if len(twin.params) > MAX_PARAMETERS:
                raise RuntimeError(f"compiled twin {twin.name!r}: over {MAX_PARAMETERS} parameters")
    if sorted(found) != list(range(len(found))):
        raise RuntimeError(f"compiled twins' codes {sorted(found)} are not 0, 1, ...")
    return tuple(found[code] for code in range(len(found)))


#: every compiled twin, by code
TWINS = declared_twins()
#: compiled twin name -> code
CODES = {twin.name: twin.code for twin in TWINS}
#: parameter order of each twin's float64 vector
PARAMETER_ORDER = {twin.name: twin.params for twin in TWINS}
#: twins that search (the expert's family): compiled into the loop only when a game of
#: the batch seats one (loop.play_batch's `searching`); the others compile in seconds
SEARCHING = frozenset(twin.code for twin in TWINS if twin.searches)


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


def compiled_twin(strategy_class: type) -> CompiledTwin | None:
    """The compiled twin of a strategy class: its `COMPILED`, when that is one of TWINS
    (a plug-in's own declaration is not: the loop compiles the built-ins' twins only)."""
    twin = getattr(strategy_class, "COMPILED", None)
    if isinstance(twin, CompiledTwin) and twin.code < len(TWINS) and TWINS[twin.code] is twin:
        return twin
    return None


def twin_of(strategy: Any) -> tuple[str, np.ndarray] | None:
    """(twin name, parameter vector) of a built strategy object, or None without a twin.

    Uses the object's full parameters (defaults included), so presets of one twin with
    other defaults encode correctly.
    """
    twin = compiled_twin(type(strategy))
    if twin is None:
        return None
    return twin.name, encode_params(twin.name, getattr(strategy, "params", {}))


#: SEARCHING as a table by code (searches runs for every batch: np.isin cost 2% of a run)
_IS_SEARCHING = np.array([code in SEARCHING for code in range(max(CODES.values()) + 1)])


def searches(codes: np.ndarray) -> bool:
    """Whether any of these twin codes is a searching twin (see SEARCHING)."""
    return bool(_IS_SEARCHING[codes].any())


def memory_sizes(init: np.ndarray) -> np.ndarray:
    """Per twin code, the words of memory its seat keeps of a game from `init` (0: none)."""
    sizes = np.zeros(len(TWINS), np.int64)
    for twin in TWINS:
        if twin.memory is not None:
            sizes[twin.code] = twin.memory(init)
    return sizes


def lineup_arrays(
    twins: Sequence[Sequence[str]], params: Sequence[Sequence[Mapping[str, Any]]]
) -> tuple[np.ndarray, np.ndarray]:
    """Code and parameter arrays (games x seats) for loop.play_batch."""
    g, p = len(twins), len(twins[0])
    codes = np.empty((g, p), np.int64)
    vectors = np.zeros((g, p, MAX_PARAMETERS))
    for i in range(g):
        for seat in range(p):
            codes[i, seat] = CODES[twins[i][seat]]
            vectors[i, seat] = encode_params(twins[i][seat], params[i][seat])
    return codes, vectors


# ---------------------------------------------------------------- the dispatch


def choose_rotation(
    code: int,
    params: np.ndarray,
    s: np.ndarray,
    rng: np.ndarray,
    memory: np.ndarray,
    searching: bool,
) -> int:
    """The rotation (-1, 0 or 1) the twin `code` chooses in state `s`; memory: the seat's
    memory of the game (its twin's `memory` words, zero at the game's start).

    searching: a compile-time constant (numba.literally) saying whether the searching
    twins are compiled in; without them, their codes play as twin 0 (never asked for).
    Compiled code only: the body is generated from TWINS (_rotation_chain).
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


def _rotation_chain(twins: Sequence[CompiledTwin]) -> Any:
    """A kernel (code, s, params, rng, memory) calling the rotation of twins[i] whose code
    is `code`, the last twin's when none is: one `if` per twin, inlined where it is called."""
    code, kernel = twins[0].code, twins[0].rotation
    if len(twins) == 1:

        @njit(inline="always")
        def last(c, s, params, rng, memory):
            return kernel(s, params, rng, memory)

        return last
    rest = _rotation_chain(twins[1:])

    @njit(inline="always")
    def step(c, s, params, rng, memory):
        if c == code:
            return kernel(s, params, rng, memory)
        return rest(c, s, params, rng, memory)

    return step


def _placement_chain(twins: Sequence[CompiledTwin]) -> Any:
    """As _rotation_chain, for the placement kernels."""
    code, kernel = twins[0].code, twins[0].placement
    if len(twins) == 1:

        @njit(inline="always")
        def last(c, s, params, rng, options, count, memory):
            return kernel(s, params, rng, options, count, memory)

        return last
    rest = _placement_chain(twins[1:])

    @njit(inline="always")
    def step(c, s, params, rng, options, count, memory):
        if c == code:
            return kernel(s, params, rng, options, count, memory)
        return rest(c, s, params, rng, options, count, memory)

    return step


def _chain_order(searching: bool) -> tuple[CompiledTwin, ...]:
    """The twins a loop dispatches to, the highest code first, twin 0 (random) last (the
    chain's fall-through); without `searching`, the searching twins are left out."""
    return tuple(reversed([t for t in TWINS if searching or not t.searches]))


_ROTATION = {searching: _rotation_chain(_chain_order(searching)) for searching in (False, True)}
_PLACEMENT = {searching: _placement_chain(_chain_order(searching)) for searching in (False, True)}


@overload(choose_rotation, inline="always")
def _choose_rotation(code, params, s, rng, memory, searching):
    if not isinstance(searching, types.BooleanLiteral):
        return None  # numba first asks without literal types; searching must be one
    chain = _ROTATION[searching.literal_value]

    def rotation(code, params, s, rng, memory, searching):
        return chain(code, s, params, rng, memory)

    return rotation


@overload(choose_placement, inline="always")
def _choose_placement(code, params, s, rng, options, count, memory, searching):
    if not isinstance(searching, types.BooleanLiteral):
        return None
    chain = _PLACEMENT[searching.literal_value]

    def placement(code, params, s, rng, options, count, memory, searching):
        return chain(code, s, params, rng, options, count, memory)

    return placement
