"""Strategies that end, kill or hang their worker process end only their own game."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd
import pytest

from marrakech_sim import runfolder
from marrakech_sim.errors import RunFolderError
from marrakech_sim.run.chunk import Prepared
from marrakech_sim.run.config import study_from_dict
from marrakech_sim.run.pool import ChunkPool
from marrakech_sim.run.runner import run_study
from marrakech_sim.run.verify import verify_run
from marrakech_sim.strategies.basic import RandomStrategy

HERE = Path(__file__).resolve()
BAD = HERE.parents[1] / "strategies_examples" / "bad.py"  # (no conftest: workers load this file)
MARRAKECH = Path(sys.executable).parent / "marrakech"
SLOW = f"{HERE.parent / 'test_runner.py'}:SlowRandom"  # random, 2 ms a game: slow enough to signal


class BlocksTheAlarm(RandomStrategy):
    """Blocks SIGALRM, then never returns from a placement: only a kill stops it."""

    COMPILED: ClassVar[str | None] = None

    def choose_placement(self, view: Any, options: Any) -> Any:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        while True:
            pass


class LogsEveryMove(RandomStrategy):
    """Random through the Python loop, logging a record (to run.log) at every decision."""

    COMPILED: ClassVar[str | None] = None

    def choose_rotation(self, view: Any) -> int:
        logging.getLogger("marrakech_sim.tests").info("a record from a worker")
        return super().choose_rotation(view)


def lineup_study(ref: str, params: dict[str, Any] | None = None, **changes: Any) -> Any:
    data: dict[str, Any] = {
        "seed": 5,
        "games_per_lineup": 40,
        "chunk_games": 10,
        "rotation": "none",
        "rulesets": {"two": {"players": 2}},
        "strategies": {"random": {}, "bad": {"ref": ref, "params": params or {}}},
        "schedule": {"kind": "lineups", "lineups": [["bad", "random"]]},
    }
    data.update(changes)
    return study_from_dict(data)


def read(run_dir: Path, table: str) -> pd.DataFrame:
    return runfolder.read_table(run_dir, table)


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("HardExits", "exit code 1"),
        ("KillsItself", "killed by SIGKILL"),
        ("Segfaults", "killed by SIGSEGV"),
    ],
)
def test_a_strategy_that_ends_its_worker_ends_only_its_own_game(
    tmp_path: Path, name: str, words: str
) -> None:
    """os._exit, a SIGKILL of its own process or a segfault in one game of eight: the
    run finishes, those games are faults naming the death, every other game is kept."""
    result = run_study(lineup_study(f"{BAD}:{name}", {"one_in": 8}), tmp_path / "run", workers=2)
    games = read(tmp_path / "run", "games")
    bad = games[games["end_reason"] == "error"]
    assert result.status == "complete" and len(games) == 40 == games["game_id"].nunique()
    assert 0 < len(bad) < 40 and result.errors == len(bad)
    assert bad["error"].str.contains(words).all(), bad["error"].tolist()
    assert bad["error"].str.contains("died").all()
    assert bad["error"].str.contains("game seed").all()
    assert verify_run(tmp_path / "run").ok


def test_games_after_dead_workers_do_not_depend_on_the_worker_count(tmp_path: Path) -> None:
    """A run whose workers segfault gives the same tables with one worker as with two."""
    study = lineup_study(f"{BAD}:Segfaults", {"one_in": 8})
    run_study(study, tmp_path / "one", workers=1)
    run_study(study, tmp_path / "two", workers=2)
    for table in runfolder.TABLES:
        pd.testing.assert_frame_equal(read(tmp_path / "one", table), read(tmp_path / "two", table))


def test_sys_exit_in_a_strategy_is_an_ordinary_fault(tmp_path: Path) -> None:
    """sys.exit in a strategy ends its game as a fault without ending the worker."""
    result = run_study(lineup_study(f"{BAD}:Exits", {"one_in": 8}), tmp_path / "run", workers=2)
    bad = read(tmp_path / "run", "games").query("end_reason == 'error'")
    assert result.status == "complete" and len(bad) == result.errors > 0
    assert bad["error"].str.contains("SystemExit").all()


@pytest.mark.parametrize("workers", [0, 2])
def test_a_strategy_raising_keyboard_interrupt_ends_only_its_game(
    tmp_path: Path, workers: int
) -> None:
    """A KeyboardInterrupt a strategy raises itself (no Ctrl-C) is its game's fault, in
    the main process and in workers: the run finishes with every other game kept."""
    study = lineup_study(f"{BAD}:InterruptsItself", {"one_in": 8})
    result = run_study(study, tmp_path / "run", workers=workers)
    games = read(tmp_path / "run", "games")
    bad = games[games["end_reason"] == "error"]
    assert result.status == "complete" and len(games) == 40
    assert 0 < len(bad) == result.errors < 40
    assert bad["error"].str.contains("KeyboardInterrupt").all()
    assert verify_run(tmp_path / "run").ok


@pytest.mark.parametrize("workers", [0, 2])
def test_a_run_whose_chunks_start_or_end_with_a_game_without_moves_is_reported(
    tmp_path: Path, workers: int
) -> None:
    """Games that fault before their first move have no moves rows: a chunk whose first or
    last game is one is whole (the report reads it, resume replays nothing)."""
    from marrakech_sim.report import build_report
    from marrakech_sim.run.runner import resume_run

    study = lineup_study(f"{BAD}:SometimesNoRotation", games_per_lineup=64, chunk_games=4)
    out = tmp_path / "run"
    result = run_study(study, out, workers=workers)
    games = read(out, "games")
    edges = games[(games["game_id"] % 4).isin([0, 3]) & (games["turns"] == 0)]
    assert result.status == "complete" and len(edges) > 0
    build_report([out], tmp_path / "report")
    assert resume_run(out, workers=0).replayed == {}
    assert verify_run(out).ok


@pytest.mark.parametrize("workers", ["0", "2"])
def test_what_a_strategy_prints_is_kept_short_in_run_log(tmp_path: Path, workers: str) -> None:
    """A strategy printing on every decision: the run's own output stays short, run.log
    keeps the beginning of what it printed per chunk and counts the rest."""
    config = tmp_path / "prints.toml"
    config.write_text(
        'seed = 5\ngames_per_lineup = 40\nchunk_games = 10\nrotation = "none"\n'
        "[rulesets.two]\nplayers = 2\n[strategies.random]\n"
        f'[strategies.bad]\nref = "{BAD}:Prints"\n'
        '[schedule]\nkind = "lineups"\nlineups = [["bad", "random"]]\n'
    )
    out = tmp_path / "run"
    done = subprocess.run(
        [str(MARRAKECH), "run", str(config), "--out", str(out), "--workers", workers],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "thinking about" not in done.stdout + done.stderr
    log = (out / "run.log").read_text()
    kept = [line for line in log.splitlines() if "strategies printed" in line]
    chunks = [line for line in kept if ": chunk " in line]
    assert len(chunks) == 4  # one line per chunk (and per game of the check before the run)
    assert all("thinking about" in line and "a warning" in line for line in kept)
    assert max(len(line) for line in kept) < 3000
    assert len(read(out, "games")) == 40


def test_a_strategy_that_eats_memory_is_a_fault_naming_the_cause(tmp_path: Path) -> None:
    """Past the worker's memory bound a strategy's allocation fails: its game is a fault
    that names the bound, and the run goes on (it used to wedge with no fault recorded)."""
    study = lineup_study(f"{BAD}:EatsMemory", games_per_lineup=20, worker_memory_mb=256)
    result = run_study(study, tmp_path / "run", workers=2)
    games = read(tmp_path / "run", "games")
    bad = games[games["end_reason"] == "error"]
    assert result.status == "complete" and len(games) == 20
    assert len(bad) == result.errors > 0
    assert bad["error"].str.contains("ran out of memory").all(), bad["error"].tolist()
    assert bad["error"].str.contains("worker_memory_mb").all()


def test_worker_memory_is_a_share_of_the_machine_unless_set() -> None:
    from marrakech_sim.run.pool import worker_memory_mb

    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1 << 20)
    assert worker_memory_mb(lineup_study("random"), 3) == max(1024, total // 4)
    assert worker_memory_mb(lineup_study("random", worker_memory_mb=300), 3) == 300


@pytest.mark.parametrize("value", [0, 63, -5, 1.5, "1GB", True, 1 << 25])
def test_worker_memory_outside_its_range_is_a_config_error(value: Any) -> None:
    from marrakech_sim.errors import ConfigError

    with pytest.raises(ConfigError, match="worker_memory_mb"):
        lineup_study("random", worker_memory_mb=value)


@pytest.mark.parametrize("name", ["Hangs", "Sleeps", "SwallowsTimeouts"])
def test_a_hanging_strategy_is_stopped_by_the_study_decision_budget(
    tmp_path: Path, name: str
) -> None:
    """A busy loop, an hour's sleep or a loop that swallows exceptions: each game ends
    as a fault after the study's decision_seconds, and the run finishes."""
    study = lineup_study(f"{BAD}:{name}", games_per_lineup=6, chunk_games=3, decision_seconds=0.1)
    started = time.perf_counter()
    result = run_study(study, tmp_path / "run", workers=2)
    assert time.perf_counter() - started < 60
    games = read(tmp_path / "run", "games")
    assert result.status == "complete" and len(games) == 6 == result.errors
    assert games["error"].str.contains("time budget of 0.1 s").all()


def test_the_study_config_sets_the_decision_budget() -> None:
    """decision_seconds defaults to 10 s, reads back from the resolved config and refuses
    what is not a positive number of seconds."""
    from marrakech_sim.errors import ConfigError

    study = lineup_study("random")
    assert study.decision_seconds == 10.0
    assert lineup_study("random", decision_seconds=2).to_dict()["decision_seconds"] == 2.0
    for bad in (0, -1, float("nan"), "fast", True, 1e9):
        with pytest.raises(ConfigError, match="decision_seconds"):
            lineup_study("random", decision_seconds=bad)


def test_a_game_stuck_where_no_signal_reaches_has_its_worker_killed(tmp_path: Path) -> None:
    """A strategy that blocks the watchdog's signal and loops forever: the pool kills
    its worker when the game passes its time limit, and twice makes it a fault."""
    study = lineup_study(f"{HERE}:BlocksTheAlarm", games_per_lineup=2, chunk_games=2)
    prep = Prepared(study)
    prep.warm_up()
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    with ChunkPool(prep, run_dir, 1, game_seconds=1.0) as pool:
        (result,) = list(pool.play([0]))
    assert result.errors == 2 and pool.deaths == 4
    assert result.first_error is not None and "past its limit of 1 s" in result.first_error


def blocks_once(chunk: int, lost: dict[int, str] | None = None) -> Any:
    """A pool task that blocks (no CPU) the first time it is given chunk 1, outside any
    game, then plays as worker_chunk does (the flag file is the run folder's)."""
    from marrakech_sim.run.pool import WORKER, worker_chunk

    flag = WORKER["run_dir"] / "blocked-once"
    if chunk == 1 and not flag.exists():
        flag.write_text("")
        time.sleep(3600)
    return worker_chunk(chunk, lost)


def test_a_silent_worker_is_replaced_and_its_chunk_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A busy worker blocked outside any game (using no CPU, not stopped) is killed after
    SILENT_SECONDS and its chunk replayed: no game lost, none a fault."""
    from marrakech_sim.run import pool as pool_module

    monkeypatch.setattr(pool_module, "SILENT_SECONDS", 2.0)
    study = lineup_study("random", games_per_lineup=30, chunk_games=10)
    prep = Prepared(study)
    prep.warm_up()
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    started = time.monotonic()
    with ChunkPool(prep, run_dir, 2, task=blocks_once) as pool:
        results = list(pool.play([0, 1, 2]))
    assert sorted(r.chunk for r in results) == [0, 1, 2] and pool.deaths == 1
    assert sum(r.errors for r in results) == 0 and sum(r.games for r in results) == 30
    assert time.monotonic() - started < 60


SLOW_CONFIG = (
    "seed = 77\ngames_per_lineup = 1200\nchunk_games = 30\n"
    "[rulesets.four]\n"
    f'[strategies.slow]\nref = "{SLOW}"\n'
    '[schedule]\nkind = "self_play"\n'
)


def _start(
    tmp_path: Path, out: Path, parts: int, config_text: str = SLOW_CONFIG
) -> subprocess.Popen[bytes]:
    """`marrakech run` of a study (by default 1,200 slow games) on 2 workers, in its own
    process group, once it has written `parts` parts."""
    from terminal import wait_for_parts  # here: workers load this file too

    config = tmp_path / "study.toml"
    config.write_text(config_text)
    proc = subprocess.Popen(
        [str(MARRAKECH), "run", str(config), "--out", str(out), "--workers", "2", "--no-summary"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    wait_for_parts(out, proc, parts)
    return proc


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def _signal_a_worker(tmp_path: Path, sig: signal.Signals) -> Path:
    """`marrakech run` of the slow study, `sig` sent to one of its workers after 2 parts:
    the run folder, once the run has finished with every game, none a fault, and verifies."""
    out = tmp_path / "run"
    proc = _start(tmp_path, out, 2)
    workers = _children(proc.pid)
    assert workers, "no worker processes found"
    os.kill(workers[0], sig)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    games = read(out, "games")
    assert runfolder.read_manifest(out).status == "complete"
    assert len(games) == 1200 and (games["end_reason"] != "error").all()
    assert verify_run(out).ok
    return out


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc (Linux)")
def test_kill_9_of_a_worker_is_replayed_and_the_run_finishes(tmp_path: Path) -> None:
    """kill -9 of one worker mid-run: the run finishes with every game, none a fault
    (a death that does not repeat in the replay is nobody's fault)."""
    out = _signal_a_worker(tmp_path, signal.SIGKILL)
    assert "killed by SIGKILL" in (out / "run.log").read_text()


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc (Linux)")
def test_a_stopped_worker_is_replaced_and_the_run_finishes(tmp_path: Path) -> None:
    """SIGSTOP of one worker mid-run: after STOPPED_SECONDS it is killed and its chunk
    replayed; the run finishes with every game (it used to wait forever). (run.log says
    "stopped (SIGSTOP)" when the stop caught it with a chunk; stopped after its last one,
    it is killed when the pool closes.)"""
    _signal_a_worker(tmp_path, signal.SIGSTOP)


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc (Linux)")
def test_workers_killed_while_logging_do_not_hang_the_run(tmp_path: Path) -> None:
    """kill -9 and SIGSTOP of workers busy logging: the run ends with every game and the
    workers' records in run.log. (Through a multiprocessing queue, a worker killed while
    it held the queue's write lock, shared by every process, hung the run's end.)"""
    out = tmp_path / "run"
    proc = _start(
        tmp_path,
        out,
        1,
        "seed = 3\ngames_per_lineup = 600\nchunk_games = 20\n"
        "[rulesets.two]\nplayers = 2\n"
        f'[strategies.logs]\nref = "{HERE}:LogsEveryMove"\n'
        '[schedule]\nkind = "self_play"\n',
    )
    for i in range(6):
        time.sleep(0.3)
        for pid in _children(proc.pid)[:1]:
            os.kill(pid, signal.SIGSTOP if i % 2 else signal.SIGKILL)
    _, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    assert runfolder.read_manifest(out).status == "complete"
    assert len(read(out, "games")) == 600
    log = (out / "run.log").read_text()
    assert "a record from a worker" in log and "killed by SIGKILL" in log


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("how", ["SIGTERM", "SIGHUP"])
def test_sigterm_stops_a_run_as_ctrl_c_does(tmp_path: Path, how: str) -> None:
    """SIGTERM to the main process, or SIGHUP to its process group (the terminal closed):
    status 'interrupted' written in run.json, a resume hint, no worker left. (After
    SIGHUP run.json said 'running'.)"""
    out = tmp_path / "run"
    proc = _start(tmp_path, out, 2)
    workers = _children(proc.pid)
    if how == "SIGHUP":
        os.killpg(proc.pid, signal.SIGHUP)
    else:
        proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert f"marrakech run --resume {out}" in err.decode()
    assert json.loads((out / "run.json").read_text())["status"] == "interrupted"
    assert not [w for w in workers if _alive(w)]
    assert "Traceback" not in err.decode()


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc (Linux)")
def test_workers_end_when_the_main_process_is_killed(tmp_path: Path) -> None:
    """kill -9 of the main process alone: its workers end too, writing nothing more."""
    out = tmp_path / "run"
    proc = _start(tmp_path, out, 2)
    workers = _children(proc.pid)
    assert workers
    proc.kill()
    proc.communicate(timeout=60)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and [w for w in workers if _alive(w)]:
        time.sleep(0.05)
    assert not [w for w in workers if _alive(w)]
    parts = runfolder.chunks_done(out)
    time.sleep(1)
    assert runfolder.chunks_done(out) == parts
    # run.json still says 'running' (no time to say more); with no writer left holding
    # the lock, the next look reads it as interrupted, and a new run there is told to resume
    assert json.loads((out / "run.json").read_text())["status"] == "running"
    assert runfolder.read_manifest(out).status == "interrupted"
    with pytest.raises(RunFolderError, match="status 'interrupted'"):
        run_study(lineup_study("random"), out, workers=0)


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("Exits", "raised SystemExit(3)"),
        ("HardExits", "ended its process (exit code 1)"),
        ("KillsItself", "ended its process (killed by SIGKILL)"),
        ("Segfaults", "ended its process (killed by SIGSEGV)"),
    ],
)
def test_check_strategy_reports_a_strategy_that_ends_its_process(name: str, words: str) -> None:
    """check-strategy reports sys.exit, os._exit, a self-kill and a segfault as failures
    naming the game, and exits 1 with its report instead of dying with the strategy."""
    from click.testing import CliRunner

    from marrakech_sim.cli import main

    result = CliRunner().invoke(main, ["check-strategy", f"{BAD}:{name}", "--games", "1"])
    assert result.exit_code == 1, result.output
    assert "FAILED" in result.output and words in result.output
    assert "game seed" in result.output


def test_check_strategy_stops_a_strategy_stuck_beyond_its_time_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A strategy that blocks the time budget's signal and loops is stopped and reported."""
    from marrakech_sim.play import conformance

    monkeypatch.setattr(conformance, "SILENCE_MARGIN", 3.0)
    report = conformance.check_strategy(f"{HERE}:BlocksTheAlarm", games=1, time_budget=0.001)
    assert not report.ok and "stopped responding" in report.failures[0]


def test_a_study_warns_when_a_strategy_plays_two_games_from_one_seed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A strategy using the global random generator is named in a warning before the run
    (its games differ between two plays of one seed); a seeded one is not."""
    with caplog.at_level("WARNING", logger="marrakech_sim"):
        run_study(lineup_study(f"{BAD}:Unseeded", games_per_lineup=4), tmp_path / "a", workers=0)
    warned = [r.getMessage() for r in caplog.records if "cannot be reproduced" in r.getMessage()]
    assert len(warned) == 1 and "strategy 'bad'" in warned[0]
    caplog.clear()
    with caplog.at_level("WARNING", logger="marrakech_sim"):
        run_study(lineup_study(SLOW, games_per_lineup=4), tmp_path / "b", workers=0)
    assert not [r for r in caplog.records if "cannot be reproduced" in r.getMessage()]


def test_a_fault_in_one_of_the_two_plays_is_not_taken_for_an_unseeded_strategy(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The check's first play of a seed ran past decision_seconds once (a kernel compile
    under load does so), its second did not: that is a fault, not a strategy that ignores
    its seed, and no warning names it (expectimax was so named under load)."""
    study = lineup_study(f"{BAD}:SlowOnce", games_per_lineup=4, decision_seconds=0.2)
    with caplog.at_level("WARNING", logger="marrakech_sim"):
        run_study(study, tmp_path / "run", workers=0)
    assert not [r for r in caplog.records if "cannot be reproduced" in r.getMessage()]


def test_bench_of_a_line_up_whose_strategy_ends_its_process_reports(tmp_path: Path) -> None:
    """`marrakech bench` with a plug-in that calls os._exit: its games are faults in the
    workers, and bench prints its figures (it used to end silently with exit code 1)."""
    done = subprocess.run(
        [
            str(MARRAKECH),
            "bench",
            "--players",
            "2",
            "--lineup",
            f"{BAD}:HardExits,random",
            "--games",
            "12",
            "--records",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "12 games, 1 worker(s)" in done.stdout + done.stderr
