"""Shared test helpers: where the test data lives, and a small run played in this process.

Tests are grouped by the package's layers (tests/rules, tests/play, tests/run, ...). The
helper modules beside this file (reference.py, backends.py, report_runs.py, terminal.py,
synthetic_games.py) are importable from every test: pytest puts this folder on the path.
"""

from __future__ import annotations

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
