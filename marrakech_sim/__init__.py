"""marrakech_sim: a tournament and statistics lab for the board game Marrakech."""

from marrakech_sim import _jit_cache

_jit_cache.configure()  # before numba is imported anywhere below

from marrakech_sim.errors import (  # noqa: E402
    ConfigError,
    IllegalActionError,
    MarrakechError,
    NotationError,
    RunFolderError,
    StrategyError,
    StrategyNotFound,
)
from marrakech_sim.rules import EndReason, GameState, Outcome, Rules, perft, perft_divide  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "EndReason",
    "GameState",
    "IllegalActionError",
    "MarrakechError",
    "NotationError",
    "Outcome",
    "Rules",
    "RunFolderError",
    "StrategyError",
    "StrategyNotFound",
    "load_run",
    "load_runs",
    "perft",
    "perft_divide",
]


def __getattr__(name: str) -> object:
    # load_run / load_runs import pandas and pyarrow: only when an analyst asks for them
    if name in ("load_run", "load_runs"):
        from marrakech_sim.runfolder import load

        return getattr(load, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
