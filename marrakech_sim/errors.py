"""The errors marrakech_sim raises.

    MarrakechError
     ├── ConfigError (ValueError)          a bad rule option, study config key or value
     ├── NotationError (ValueError)        position text that is malformed or impossible
     ├── IllegalActionError (ValueError)   an action the current phase does not allow
     ├── StrategyNotFound (LookupError)    a strategy reference that names nothing
     ├── StrategyError                     a strategy that misbehaved (raised, illegal, too slow)
     ├── RunFolderError                    a run folder that is missing, corrupt or incomplete
     ├── RunInterrupted                    a run stopped (Ctrl-C) before it finished; resumable
     ├── RecordError (ValueError)          a game record that is malformed or does not replay
     ├── ClusterError                      a Dask cluster that cannot be reached or plays other code
     ├── MissingDependency (ImportError)   an optional dependency a feature needs is not installed
     ├── OutputError                       a file or folder that cannot be written (missing, full)
     └── StatsInputError (ValueError)      a table or argument a statistic cannot use

Messages quote the bad value and say what is allowed. The library never prints or
exits; the CLI turns these into click errors.
"""

from __future__ import annotations


class MarrakechError(Exception):
    """Base class of every error marrakech_sim raises on purpose."""


class ConfigError(MarrakechError, ValueError):
    """A rule option, study config key or value is unknown or impossible."""


class NotationError(MarrakechError, ValueError):
    """Position notation (RULES.md section 9) that is malformed or impossible."""


class IllegalActionError(MarrakechError, ValueError):
    """An action that is not legal in the current phase of a game."""


class StrategyNotFound(MarrakechError, LookupError):
    """A strategy reference that does not name a loadable strategy."""


class StrategyError(MarrakechError):
    """A strategy raised, chose an illegal option or exceeded its time budget."""


class RunFolderError(MarrakechError):
    """A run folder that is missing, corrupt or does not match its manifest."""


class RunInterrupted(MarrakechError):
    """The run was stopped (Ctrl-C) before it finished; it can be resumed."""


class ClusterError(MarrakechError):
    """A Dask cluster that cannot be reached, keeps losing a chunk, or runs other code."""


class MissingDependency(MarrakechError, ImportError):
    """An optional dependency (an extra such as `marrakech_sim[dask]`) is not installed."""


class StatsInputError(MarrakechError, ValueError):
    """A table or argument handed to a stats function lacks what the function needs."""


class RecordError(MarrakechError, ValueError):
    """A game record that is malformed, or does not replay to its `Final` and `Result`."""


class OutputError(MarrakechError):
    """A file or folder we were asked to write that cannot be written (a missing folder,
    a read-only or full file system)."""
