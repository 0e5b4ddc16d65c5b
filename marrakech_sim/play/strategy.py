"""The strategy plug-in API: the Protocol, a base class, specs and the registry.

A strategy answers two questions about the seat it plays, through a `GameView`:

    class Cautious(BaseStrategy):
        '''Turn away from the most expensive direction.'''
        def choose_rotation(self, view):
            return min((-1, 0, 1), key=view.expected_payment)
        def choose_placement(self, view, options):
            return options[view.rng.below(len(options))]

Strategies are named three ways: a registered name (entry-point group
`marrakech_sim.strategies`), `package.module:Class`, or `path/to/file.py:Class`.
A `StrategySpec` (reference + parameters) is what crosses process boundaries; the
worker builds the object from it.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import inspect
import json
import math
import os
import sys
from collections.abc import Mapping
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from marrakech_sim.errors import ConfigError, StrategyNotFound
from marrakech_sim.play.view import GameView
from marrakech_sim.rules.state import Outcome, Placement

ENTRY_POINT_GROUP = "marrakech_sim.strategies"


@dataclasses.dataclass(frozen=True, slots=True)
class CompiledTwin:
    """A built-in strategy's compiled twin: kernels that decide exactly as its Python form.

    Declared as the strategy class's `COMPILED`, beside its code; `marrakech_sim.arena`
    finds the declarations in the modules of `marrakech_sim.strategies` and compiles one
    whole-game loop that calls each twin's kernels by `code` (docs/architecture.md, adding
    a twin). Every kernel takes the seat's parameter vector (float64, `params` order), the
    packed state `s`, the seat's stream `rng` and its `memory` row of the game:

        rotation(s, params, rng, memory) -> -1, 0 or 1
        placement(s, params, rng, options, count, memory) -> an index into options[:count]
                                                              (legal_placements order)
    """

    name: str  # how errors and docs name it (the strategy's registered name)
    code: int  # its number in the compiled loop's dispatch (one per twin, from 0)
    rotation: Any  # the rotation kernel (numba, inlined into the loop)
    placement: Any  # the placement kernel (numba, inlined into the loop)
    params: tuple[str, ...] = ()  # the strategy's parameters, in vector order
    #: a kernel (s) -> the words of memory it keeps of a game in s (cleared at each game's
    #: start), or None: it remembers nothing
    memory: Any = None
    #: its kernels search (the expert's family): compiled into a second loop, used only by
    #: batches that seat one, so a study without them never compiles them (minutes)
    searches: bool = False


@runtime_checkable
class Strategy(Protocol):
    """What the game loop asks of a seat's player."""

    def choose_rotation(self, view: GameView) -> int:
        """-1 (left), 0 or 1 (right): at the start of the turn, or at its end in the
        "orient at end" variant (then it sets the next player's walk; see
        `view.orient_for_next`)."""
        ...

    def choose_placement(self, view: GameView, options: tuple[Placement, ...]) -> Placement:
        """One of `options`, the legal placements ((x1, y1), (x2, y2)) of the turn's rug."""
        ...


class BaseStrategy:
    """Optional base class: parameters as keyword arguments, no-op hooks.

    Subclasses declare their parameters with defaults in `PARAMETERS`; unknown
    parameters are a ConfigError naming what is allowed.
    """

    PARAMETERS: ClassVar[Mapping[str, Any]] = {}
    #: the compiled twin, when there is one: a `CompiledTwin` declared beside the strategy
    #: (built-ins only: `marrakech_sim.arena` compiles the built-ins' twins into its loop)
    COMPILED: ClassVar[CompiledTwin | None] = None
    #: the relative cost of a game of this strategy through the Python loop (1: a plain
    #: player that asks a few view queries; a search strategy declares more): studies
    #: size their chunks by it so that every worker gets work (see run.plan)
    COST: ClassVar[int] = 1

    def __init__(self, **params: Any) -> None:
        unknown = sorted(set(params) - set(self.PARAMETERS))
        if unknown:
            allowed = ", ".join(self.PARAMETERS) or "none"
            raise ConfigError(
                f"unknown parameter {unknown[0]!r} for strategy {type(self).__name__}; "
                f"allowed: {allowed}"
            )
        for key, value in params.items():
            _check_parameter(type(self).__name__, key, value, self.PARAMETERS[key])
        self.params = {**self.PARAMETERS, **params}

    def on_game_start(self, view: GameView) -> None:
        """Called once before the game's first decision."""

    def on_game_end(self, view: GameView, outcome: Outcome) -> None:
        """Called once after the game ended normally."""

    def choose_rotation(self, view: GameView) -> int:
        raise NotImplementedError

    def choose_placement(self, view: GameView, options: tuple[Placement, ...]) -> Placement:
        raise NotImplementedError


@dataclasses.dataclass(frozen=True, slots=True)
class StrategySpec:
    """A picklable description of a strategy: a reference and its parameters."""

    ref: str
    params: tuple[tuple[str, Any], ...] = ()
    name: str | None = None  # the display name in a study; defaults to the reference

    @classmethod
    def of(
        cls, ref: str, params: Mapping[str, Any] | None = None, name: str | None = None
    ) -> StrategySpec:
        """A spec with parameters from a mapping (sorted, so equal specs compare equal)."""
        items = tuple(sorted((params or {}).items()))
        for key, value in items:
            try:
                # allow_nan=False: NaN and infinity are not numbers a run.json can hold
                json.dumps(value, allow_nan=False)
            except (TypeError, ValueError) as exc:
                raise ConfigError(
                    f"parameter {key!r} of strategy {ref!r}: {value!r} is not plain data "
                    "(strings, finite numbers, booleans, lists and tables of them)"
                ) from exc
        return cls(ref, items, name)

    @property
    def label(self) -> str:
        return self.name or self.ref

    def load_class(self) -> type:
        # workers build a strategy per game: a file reference is resolved once per
        # process and working directory (a relative path means another file elsewhere)
        return _class_in(self.ref, os.getcwd())

    @property
    def is_builtin(self) -> bool:
        """Whether its class is one of the package's own (it runs no plug-in code)."""
        return self.load_class().__module__.startswith("marrakech_sim.")

    def build(self) -> Strategy:
        """The strategy object (in the worker that plays with it)."""
        cls = self.load_class()
        try:
            strategy: Strategy = cls(**dict(self.params))
            return strategy
        except ConfigError:
            raise
        except TypeError as exc:
            raise ConfigError(f"strategy {self.label!r}: {exc}") from exc
        except Exception as exc:  # a constructor's own fault, named instead of a traceback
            raise ConfigError(
                f"strategy {self.label!r}: its constructor raised {type(exc).__name__}: {exc}"
            ) from exc

    def to_dict(self) -> dict[str, Any]:
        return {"ref": self.ref, "params": dict(self.params), "name": self.label}


def _check_parameter(strategy: str, key: str, value: Any, default: Any) -> None:
    """ConfigError unless `value` has the kind of `default` (an int passes for a float)."""
    if isinstance(default, bool):
        ok, kind = isinstance(value, bool), "true or false"
    elif isinstance(default, int):
        ok, kind = isinstance(value, int) and not isinstance(value, bool), "an integer"
    elif isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        ok, kind = ok and math.isfinite(value), "a finite number"
    elif isinstance(default, str):
        ok, kind = isinstance(value, str), "a string"
    else:
        return  # lists, tables, None: the strategy checks them itself
    if not ok:
        raise ConfigError(
            f"parameter {key!r} of strategy {strategy}: {value!r} is not {kind} "
            f"(default {default!r})"
        )


@cache
def registered() -> dict[str, str]:
    """Registered strategy names -> 'module:Class' (the entry-point group)."""
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


@cache
def _class_in(ref: str, cwd: str) -> type:
    return load_strategy_class(ref)


def load_strategy_class(ref: str) -> type:
    """The class a reference names: a registered name, 'module:Class' or 'file.py:Class'."""
    target = registered().get(ref, ref)
    if ":" not in target:
        raise StrategyNotFound(
            f"unknown strategy {ref!r}; registered: {', '.join(sorted(registered()))}; "
            f"or use 'package.module:Class' or 'path/to/file.py:Class'"
        )
    where, _, attr = target.rpartition(":")
    try:
        if where.endswith(".py"):
            module = _load_file(Path(where))
        else:
            module = importlib.import_module(where)
    except (ImportError, OSError, SyntaxError) as exc:
        raise StrategyNotFound(f"strategy {ref!r}: cannot load {where!r}: {exc}") from exc
    cls = getattr(module, attr, None)
    if not inspect.isclass(cls):
        found = [n for n, v in vars(module).items() if inspect.isclass(v) and _looks_like(v)]
        raise StrategyNotFound(
            f"strategy {ref!r}: {where!r} has no class {attr!r}; strategies there: "
            f"{', '.join(found) or 'none'}"
        )
    if not _looks_like(cls):
        raise StrategyNotFound(
            f"strategy {ref!r}: {cls.__name__} has no choose_rotation/choose_placement"
        )
    return cls


def _looks_like(cls: type) -> bool:
    return callable(getattr(cls, "choose_rotation", None)) and callable(
        getattr(cls, "choose_placement", None)
    )


def _load_file(path: Path) -> Any:
    """Import a strategy file once per process under a name derived from its path."""
    path = path.resolve()
    name = "marrakech_user_" + "".join(c if c.isalnum() else "_" for c in str(path))
    if name in sys.modules:
        return sys.modules[name]
    if not path.is_file():
        raise OSError(f"no such file {str(path)!r}")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def describe(ref: str) -> dict[str, Any]:
    """Name, one-line description and parameters of a strategy (for `marrakech strategies`)."""
    cls = load_strategy_class(ref)
    doc = inspect.getdoc(cls) or ""
    return {
        "name": ref,
        "summary": doc.splitlines()[0] if doc else "",
        "parameters": dict(getattr(cls, "PARAMETERS", {})),
        "compiled": getattr(cls, "COMPILED", None) is not None,
    }
