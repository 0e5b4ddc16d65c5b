"""marrakech_sim: a tournament and statistics lab for the board game Marrakech.

The library a notebook needs, from the inside out::

    Rules, GameState, perft                    the rules (marrakech_sim.rules)
    play_game, BaseStrategy, StrategySpec      one game between strategies (marrakech_sim.play)
    play_games, Roster, Ruleset                a batch of games, compiled where every seat can be
                                               (marrakech_sim.arena)
    check_strategy                             the conformance checker for strategy authors
    load_study, run_study, resume_run          a study config, played into a run folder
    verify_run                                 replay a run folder and check it
    build_report, run_and_report               the report over run folders
    load_run, load_runs                        a run folder's tables as DataFrames, for analysts

Names after the rules load on first use (the run and report layers import numba kernels,
pandas, DuckDB and matplotlib), so `import marrakech_sim` stays fast.
"""

from typing import TYPE_CHECKING, Any

from marrakech_sim import kernel_cache

kernel_cache.configure()  # before numba is imported anywhere below

from marrakech_sim.errors import (  # noqa: E402
    ConfigError,
    IllegalActionError,
    MarrakechError,
    NotationError,
    RunFolderError,
    RunInterrupted,
    StatsInputError,
    StrategyError,
    StrategyNotFound,
)
from marrakech_sim.rules import EndReason, GameState, Outcome, Rules, perft, perft_divide  # noqa: E402

__version__ = "0.1.0"

if TYPE_CHECKING:  # what `_LAZY` gives, as a type checker should see it
    from marrakech_sim.arena.games import Roster, Ruleset, play_games
    from marrakech_sim.play.conformance import check_strategy
    from marrakech_sim.play.game import play_game
    from marrakech_sim.play.strategy import BaseStrategy, StrategySpec
    from marrakech_sim.report.build import build_report
    from marrakech_sim.run.config import Study, load_study
    from marrakech_sim.run.runner import resume_run, run_study
    from marrakech_sim.run.verify import verify_run
    from marrakech_sim.runfolder.load import load_run, load_runs
    from marrakech_sim.study import run_and_report

# name -> the module that defines it, imported on first use
_LAZY = {
    "play_game": "marrakech_sim.play.game",
    "BaseStrategy": "marrakech_sim.play.strategy",
    "StrategySpec": "marrakech_sim.play.strategy",
    "play_games": "marrakech_sim.arena.games",
    "Roster": "marrakech_sim.arena.games",
    "Ruleset": "marrakech_sim.arena.games",
    "check_strategy": "marrakech_sim.play.conformance",
    "load_study": "marrakech_sim.run.config",
    "Study": "marrakech_sim.run.config",
    "run_study": "marrakech_sim.run.runner",
    "resume_run": "marrakech_sim.run.runner",
    "verify_run": "marrakech_sim.run.verify",
    "build_report": "marrakech_sim.report.build",
    "load_run": "marrakech_sim.runfolder.load",
    "load_runs": "marrakech_sim.runfolder.load",
    "run_and_report": "marrakech_sim.study",
}

__all__ = [
    "BaseStrategy",
    "ConfigError",
    "EndReason",
    "GameState",
    "IllegalActionError",
    "MarrakechError",
    "NotationError",
    "Outcome",
    "Roster",
    "Rules",
    "Ruleset",
    "RunFolderError",
    "RunInterrupted",
    "StatsInputError",
    "StrategyError",
    "StrategyNotFound",
    "StrategySpec",
    "Study",
    "build_report",
    "check_strategy",
    "load_run",
    "load_runs",
    "load_study",
    "perft",
    "perft_divide",
    "play_game",
    "play_games",
    "resume_run",
    "run_and_report",
    "run_study",
    "verify_run",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
