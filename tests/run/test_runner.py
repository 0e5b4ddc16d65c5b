"""The runner: deterministic across workers and start methods, resumable, fault tolerant."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd
import pytest

from marrakech_sim import runfolder
from marrakech_sim.run.config import load_study, study_from_dict
from marrakech_sim.run.runner import RunResult, resume_run, run_study
from marrakech_sim.run.verify import verify_run
from marrakech_sim.strategies.basic import RandomStrategy

HERE = Path(__file__).resolve()
MARRAKECH = Path(sys.executable).parent / "marrakech"


class SlowRandom(RandomStrategy):
    """Random, through the Python loop, 2 ms a game: slow enough to interrupt a run."""

    COMPILED: ClassVar[str | None] = None

    def on_game_start(self, view: Any) -> None:
        time.sleep(0.002)


class PythonRandom(RandomStrategy):
    """Random through the Python game loop (no compiled twin)."""

    COMPILED: ClassVar[str | None] = None


class Raiser(RandomStrategy):
    """Random, but now and then raises in choose_placement."""

    COMPILED: ClassVar[str | None] = None

    def choose_placement(self, view: Any, options: Any) -> Any:
        if view.rng.below(300) == 0:
            raise ValueError("boom")
        return super().choose_placement(view, options)


def study_data(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "seed": 123,
        "games_per_lineup": 48,
        "chunk_games": 40,
        "rulesets": {"four": {}, "three_end": {"players": 3, "orient_at_end": True}},
        "strategies": {
            "random": {},
            "python": {"ref": f"{HERE}:PythonRandom"},
            "other": {"ref": "random"},
        },
        "schedule": {"kind": "round_robin", "repeat": True},
        "rotation": "latin",
    }
    data.update(changes)
    return data


def self_play_data(games: int, chunk_games: int, **changes: Any) -> dict[str, Any]:
    """`study_data` as random self-play under the standard 4-player rules."""
    return study_data(
        strategies={"random": {}},
        rulesets={"four": {}},
        schedule={"kind": "self_play"},
        games_per_lineup=games,
        chunk_games=chunk_games,
        **changes,
    )


def tables(run_dir: Path) -> list[pd.DataFrame]:
    return [runfolder.read_table(run_dir, name) for name in runfolder.TABLES]


def assert_same_tables(a: Path, b: Path) -> None:
    for x, y in zip(tables(a), tables(b), strict=True):
        pd.testing.assert_frame_equal(x, y)


@pytest.fixture(scope="module")
def serial(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("serial") / "run"
    run_study(study_from_dict(study_data()), out, workers=0)
    return out


@pytest.mark.parametrize(
    ("workers", "method"), [(1, "fork"), (2, "fork"), (8, "fork"), (2, "spawn")]
)
def test_tables_do_not_depend_on_workers_or_start_method(
    serial: Path, tmp_path: Path, workers: int, method: str
) -> None:
    """Same config and seed: identical games, seats and moves with any workers/start method."""
    out = tmp_path / "run"
    result = run_study(study_from_dict(study_data()), out, workers=workers, start_method=method)
    assert result.status == "complete"
    assert_same_tables(serial, out)


def test_serial_run_mixes_compiled_and_python_games(serial: Path) -> None:
    """A study mixing both loops and two rule sets plays every planned game once."""
    games = runfolder.read_table(serial, "games")
    manifest = runfolder.read_manifest(serial)
    assert len(games) == manifest.games_planned == games["game_id"].nunique()
    assert set(games["ruleset"]) == {"four", "three_end"}
    # blocks: one seed per block, several seatings each
    per_block = games.groupby("block")["seed"].nunique()
    assert (per_block == 1).all() and games.groupby("block").size().max() > 1


def test_strategy_that_raises_in_a_worker_is_recorded(tmp_path: Path) -> None:
    """A raising strategy ends its game with end_reason 'error'; the run goes on."""
    data = study_data(
        strategies={"random": {}, "raiser": {"ref": f"{HERE}:Raiser"}},
        rulesets={"four": {}},
        schedule={"kind": "lineups", "lineups": [["raiser", "random", "random", "random"]]},
        games_per_lineup=96,
    )
    result = run_study(study_from_dict(data), tmp_path / "run", workers=2)
    games = runfolder.read_table(tmp_path / "run", "games")
    bad = games[games["end_reason"] == "error"]
    assert result.status == "complete" and len(games) == 96
    assert 0 < len(bad) < len(games) and result.errors == len(bad)
    assert bad["error"].str.contains("strategy raiser").all()
    assert bad["error"].str.contains("ValueError").all()
    assert games.loc[games["end_reason"] != "error", "error"].isna().all()
    assert verify_run(tmp_path / "run").ok


def _slow_config(tmp_path: Path) -> Path:
    config = tmp_path / "slow.toml"
    config.write_text(
        "seed = 77\ngames_per_lineup = 1200\nchunk_games = 30\n"
        "[rulesets.four]\n"
        f'[strategies.slow]\nref = "{HERE}:SlowRandom"\n'
        '[schedule]\nkind = "self_play"\n'
    )
    return config


def _start(config: Path, out: Path, parts: int) -> subprocess.Popen[bytes]:
    """`marrakech run` of `config` on 2 workers, once it has written `parts` parts."""
    from terminal import start_in_terminal, wait_for_parts  # here: `marrakech run` loads this file

    proc = start_in_terminal(
        [str(MARRAKECH), "run", str(config), "--out", str(out), "--workers", "2", "--no-summary"],
        start_new_session=True,  # its own process group: the signal reaches the workers too
    )
    wait_for_parts(out, proc, parts)
    return proc


def _kill_9_and_resume(config: Path, tmp_path: Path) -> RunResult:
    """`marrakech run` of `config` killed (-9, the whole process group) after 3 parts, then
    resumed: the resume's result; it completes, its tables equal an uninterrupted run's
    and verify."""
    out = tmp_path / "killed"
    proc = _start(config, out, 3)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    manifest = runfolder.read_manifest(out)  # 'running' in run.json, and no writer left
    assert manifest.status == "interrupted"
    assert len(runfolder.chunks_done(out)) < manifest.chunks
    result = resume_run(out, workers=2)
    assert result.status == "complete"
    reference = tmp_path / "reference"
    run_study(load_study(config), reference, workers=0)
    assert_same_tables(reference, out)
    assert verify_run(out).ok
    return result


def test_resume_after_kill_9_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    """kill -9 of a real run mid-way, then resume: every game once, same tables."""
    result = _kill_9_and_resume(_slow_config(tmp_path), tmp_path)
    assert result.games_played == 1200 and result.games_this_session < 1200


def test_a_sweep_resumes_after_kill_9_to_the_uninterrupted_tables(tmp_path: Path) -> None:
    """A sweep (issue 27) is a run like any other: kill -9 mid-way, resume, same tables."""
    config = tmp_path / "sweep.toml"
    config.write_text(
        _slow_config(tmp_path)
        .read_text()
        .replace("games_per_lineup = 1200", "games_per_lineup = 300")
        + "[sweep]\nstarting_dirhams = [10, 20, 30]\n"
    )
    assert _kill_9_and_resume(config, tmp_path).games_played == 900


def test_ctrl_c_stops_cleanly_and_says_how_to_resume(tmp_path: Path) -> None:
    """SIGINT ends the run with status 'interrupted' and a resume hint; resume finishes it."""
    out = tmp_path / "interrupted"
    proc = _start(_slow_config(tmp_path), out, 2)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert f"marrakech run --resume {out}" in err.decode()
    assert re.search(r"run interrupted after \d{1,3}(,\d{3})* of 1,200 games", err.decode())
    assert runfolder.read_manifest(out).status == "interrupted"
    assert "INFO" in (out / "run.log").read_text()  # worker records reached run.log
    assert "Worker-" in (out / "run.log").read_text()  # the pool's worker processes
    result = resume_run(out, workers=0)
    assert result.status == "complete" and len(runfolder.read_table(out, "games")) == 1200


@pytest.mark.parametrize(
    "stopping",
    [
        {"rule": "interval_width", "quantity": "seat_win_share", "seat": 0, "width": 0.2},
        {"rule": "sprt", "quantity": "seat_win_share", "seat": 3, "p0": 0.25, "p1": 0.6},
    ],
)
def test_stopping_rule_stops_at_a_block_boundary_deterministically(
    tmp_path: Path, stopping: dict[str, Any]
) -> None:
    """A stopping rule ends the run early, the same way with 0 or 2 workers, and says why."""
    data = self_play_data(5000, 25, stopping=stopping)
    a = run_study(study_from_dict(data), tmp_path / "a", workers=0)
    b = run_study(study_from_dict(data), tmp_path / "b", workers=2)
    assert a.status == b.status == "stopped"
    assert a.games_played == b.games_played < 5000
    assert a.games_played % 25 == 0
    assert_same_tables(tmp_path / "a", tmp_path / "b")
    manifest = runfolder.read_manifest(tmp_path / "b")
    assert manifest.stopping["stopped"] is True
    # decided at a block; the run keeps the whole chunk of that block
    stopped_at = manifest.stopping["statistics"]["games"]
    assert a.games_played - 25 < stopped_at <= a.games_played
    assert manifest.stopping["games_in_run"] == a.games_played
    assert manifest.stopping["summary"].startswith(
        "LLR " if stopping["rule"] == "sprt" else "interval "
    )
    assert verify_run(tmp_path / "b").ok


def test_run_refuses_a_folder_in_use(serial: Path) -> None:
    """A new run never writes into a folder that already holds a run."""
    from marrakech_sim.errors import RunFolderError

    with pytest.raises(RunFolderError, match="not empty"):
        run_study(study_from_dict(study_data()), serial, workers=0)
