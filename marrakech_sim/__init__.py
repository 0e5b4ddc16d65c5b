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
    "perft",
    "perft_divide",
]
