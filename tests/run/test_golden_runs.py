"""The games the code plays stay the same: small runs and games against committed digests.

tests/golden/runs.json was made by tools/regen_run_goldens.py from the code before the
second restructure; a change that alters any game (or any byte of a Parquet part) fails
here. Regenerate only when the games are meant to change.
"""

from __future__ import annotations

import json

import golden_runs
import pytest


@pytest.fixture(scope="module")
def golden() -> dict:
    return json.loads(golden_runs.GOLDEN_RUNS.read_text())


def test_small_runs_write_the_committed_parquet_bytes(tmp_path, golden):
    """A small default study and a study of the other built-ins write byte-identical parts."""
    assert golden_runs.study_digests(tmp_path, workers=0) == golden["runs"]


def test_small_runs_are_the_same_with_worker_processes(tmp_path, golden):
    """The same runs played by 2 worker processes give the same digests as in-process."""
    assert golden_runs.study_digests(tmp_path, workers=2) == golden["runs"]


def test_every_built_in_plays_the_committed_games(golden):
    """Each registered strategy's Python-loop games against greedy are the committed ones."""
    assert golden_runs.game_digests() == golden["games"]
