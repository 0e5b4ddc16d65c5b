"""Which code played a run: a digest of the sources that decide games.

A run folder records it (manifest key `code_digest`). A finished run is reused, and an
interrupted one resumed, only by the code that played it: other code may play other
games from the same config and seed (a rule fix, a new random stream, a changed
strategy), and a run must not mix them. The digest covers the folders whose code decides
games (`DECIDING`): the rules, the game loops, the strategies, the arena, and the four modules of
`run` that turn a config into games (config defaults, a sweep's rule sets, the plan's
seeds and seatings, the chunk player). The run folder's writer, the report, statistics,
charts and command line decide no game, so changing them keeps runs reusable. (A strategy
loaded from a file outside the project is not covered.)
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from marrakech_sim.errors import RunFolderError
from marrakech_sim.kernel_cache import digest_of_sources

if TYPE_CHECKING:
    from marrakech_sim.runfolder import Manifest

DECIDING = (
    "marrakech_sim/rules/",
    "marrakech_sim/play/",
    "marrakech_sim/strategies/",
    "marrakech_sim/arena/",
    "marrakech_sim/run/config.py",
    "marrakech_sim/run/sweep.py",
    "marrakech_sim/run/plan.py",
    "marrakech_sim/run/chunk.py",
)


@functools.cache
def code_digest() -> str:
    """The digest of this installation's game-deciding sources."""
    return digest_of_sources(lambda name, source: name.startswith(DECIDING))


def check_same_code(run_dir: Path, manifest: Manifest) -> None:
    """Raise RunFolderError unless the run in `run_dir` was played by this code."""
    theirs = manifest.code_digest
    if theirs != code_digest():
        raise RunFolderError(
            f"{str(run_dir)!r} was played by other code (code digest "
            f"{theirs or 'not recorded'}; this code is {code_digest()}), which may play "
            "other games from the same config and seed; give another run folder "
            "(--run-dir) or remove it"
        )
