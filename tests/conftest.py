"""Shared test helpers: where the test data lives, and a small run played in this process.

Tests are grouped by the package's layers (tests/rules, tests/play, tests/run, ...). The
helper modules beside this file (reference.py, backends.py, report_runs.py, terminal.py,
synthetic_games.py) are importable from every test: pytest puts this folder on the path.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
GOLDEN = TESTS / "golden"  # perft counts, a board picture
EXAMPLES = TESTS / "strategies_examples"  # hostile strategies a user might write
PLUGINS = ROOT / "strategies"  # the example plug-ins a user copies and loads by path


def play_run(out: Path, config: dict[str, Any], workers: int = 0) -> Path:
    """Play the study `config` (a study config as a table) into the new run folder `out`."""
    from marrakech_sim.run.config import study_from_dict
    from marrakech_sim.run.runner import run_study

    run_study(study_from_dict(config), out, workers=workers)
    return out


@contextlib.contextmanager
def writing_to_stderr() -> Iterator[None]:
    """For the block: sys.stderr a buffered stream (Python's default without -u or
    PYTHONUNBUFFERED; to /dev/null) that another thread writes lines to all the time, as
    a log handler or a progress bar does now and then. A process forked meanwhile gets
    a copy of the stream's lock held for good (tools/fork_lock_repro.py)."""
    raw = io.FileIO(os.devnull, "w")
    stream = io.TextIOWrapper(io.BufferedWriter(raw), line_buffering=True)
    stop = threading.Event()

    def chatter() -> None:
        while not stop.is_set():
            stream.write("a line on stderr from another thread of this process\n")

    talker = threading.Thread(target=chatter, daemon=True)
    saved, sys.stderr = sys.stderr, stream
    talker.start()
    try:
        yield
    finally:
        stop.set()
        talker.join()
        sys.stderr = saved
        stream.close()


def pytest_configure(config: Any) -> None:
    """Before pytest-xdist starts its workers (this is the controller): on a cold kernel
    cache, compile the whole-game loop once, with the helper that compiles the encoder's
    and the API's kernels on the other core, as a first run does. Left to the workers,
    the first test file of each compiled the same loop at the same time (a fresh clone's
    slowest setups: 84 and 53 s)."""
    workers = getattr(config.option, "numprocesses", None)
    if hasattr(config, "workerinput") or not workers:
        return
    from marrakech_sim import kernel_cache

    if kernel_cache.compiled_before("loop"):
        return
    from marrakech_sim.run.chunk import Prepared
    from marrakech_sim.run.config import study_from_dict

    study = {
        "seed": 1,
        "games_per_lineup": 2,
        "rulesets": {"two": {"players": 2}},
        "strategies": {"random": {}, "greedy": {}},
        "schedule": {"kind": "round_robin"},
    }
    Prepared(study_from_dict(study)).warm_up()
