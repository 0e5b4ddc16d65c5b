"""A run still playing is verified as far as it got; long perft counts stop on Ctrl-C; a
stop signal at an awkward moment of a run still stops it cleanly."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from terminal import start_in_terminal

from marrakech_sim import GameState, Rules, runfolder
from marrakech_sim.errors import RunInterrupted
from marrakech_sim.rules import core as k
from marrakech_sim.rules.perft import KERNEL_DEPTH, perft
from marrakech_sim.run.config import study_from_dict
from marrakech_sim.run.runner import run_study
from marrakech_sim.run.verify import verify_run

MARRAKECH = Path(sys.executable).parent / "marrakech"


SMALL = {
    "seed": 2,
    "games_per_lineup": 50,
    "chunk_games": 10,
    "rotation": "none",
    "rulesets": {"two": {"players": 2}},
    "strategies": {"random": {}},
    "schedule": {"kind": "self_play"},
}


def _sigterm_to_myself() -> None:
    """SIGTERM to this process, its handler run here (a loop's jumps check for signals)."""
    os.kill(os.getpid(), signal.SIGTERM)
    for _ in range(100):
        pass


def test_sigterm_as_a_worker_is_forked_stops_the_run_without_a_traceback(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """A stop signal that comes as a worker is forked stops the run, and says nothing on
    stderr. (Handled in an at-fork callback, its StopPlay was dropped by Python with an
    'Exception ignored' traceback; the run stopped later.)"""
    armed = [True]

    def after_fork() -> None:  # registered for good: armed for this test's first fork only
        if armed[0]:
            armed[0] = False
            _sigterm_to_myself()

    os.register_at_fork(after_in_parent=after_fork)
    out = tmp_path / "run"
    with pytest.raises(RunInterrupted):
        run_study(study_from_dict(SMALL), out, workers=2, start_method="fork")
    assert not armed[0]
    assert runfolder.read_manifest(out).status == "interrupted"
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception ignored" not in err


def test_a_stop_turned_into_another_error_by_what_it_stopped_interrupts_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stop signal handled in a class's __set_name__ (an import the runner does as the
    run starts), which Python 3.11 turns into a RuntimeError, interrupts the run: it
    failed, with that RuntimeError's traceback."""
    from marrakech_sim.run import runner

    class Stops:
        def __set_name__(self, owner: type, name: str) -> None:
            _sigterm_to_myself()

    def unreproducible(prep: Any) -> list[str]:
        type("Imported", (), {"field": Stops()})
        return []

    monkeypatch.setattr(runner, "unreproducible", unreproducible)
    out = tmp_path / "run"
    with pytest.raises(RunInterrupted):
        run_study(study_from_dict(SMALL), out, workers=0)
    assert runfolder.read_manifest(out).status == "interrupted"


def test_verify_of_a_running_run_names_the_missing_chunks(tmp_path: Path) -> None:
    """verify on a run whose manifest still says 'running' checks the chunks on disk and
    names the missing ones, instead of verifying nothing."""
    study = study_from_dict(SMALL)
    out = tmp_path / "run"
    run_study(study, out, workers=0)
    manifest = runfolder.read_manifest(out)
    manifest = manifest.replace(status="running", chunks_played=0, games_played=0)
    runfolder.write_manifest(out, manifest)
    runfolder.remove_chunks(out, [1, 3, 4])
    report = verify_run(out)
    assert report.games == 20 and report.mismatches == 0
    # run.json says 'running' and no writer holds the lock: it reads as interrupted
    assert report.problems == [
        "the run is 'interrupted', not complete: 3 of 5 chunks missing (chunks 1, 3-4)"
    ]


def test_perft_in_slices_counts_what_the_kernel_counts() -> None:
    """perft deeper than KERNEL_DEPTH, counted child by child, equals one compiled call."""
    import numpy as np

    state = GameState.start(Rules(players=3))
    faces = np.array(state.rules.distinct_faces, dtype=np.int64)
    depth = KERNEL_DEPTH + 2
    assert perft(state, depth) == int(k.k_perft(state.packed.copy(), depth, faces))


def test_ctrl_c_stops_a_deep_perft(tmp_path: Path) -> None:
    """`marrakech perft -d 100` ends within seconds of Ctrl-C, without a traceback."""
    proc = start_in_terminal([str(MARRAKECH), "perft", "-d", "100"])
    time.sleep(4)  # past start-up and into the counting
    assert proc.poll() is None
    proc.send_signal(signal.SIGINT)
    started = time.monotonic()
    _, err = proc.communicate(timeout=60)
    assert time.monotonic() - started < 10
    assert proc.returncode != 0
    assert b"Traceback" not in err
