"""The dask backend: the same run folder as worker processes, on a real LocalCluster."""

from __future__ import annotations

import contextlib
import json
import logging
import multiprocessing.util
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import writing_to_stderr
from test_runner import HERE, assert_same_tables, self_play_data, study_data

from marrakech_sim import runfolder
from marrakech_sim.cli import main
from marrakech_sim.errors import ClusterError, ConfigError, MissingDependency, RunFolderError
from marrakech_sim.run import dask_backend, fork_server
from marrakech_sim.run.chunk import Prepared
from marrakech_sim.run.config import study_from_dict
from marrakech_sim.run.dask_backend import DaskBackend, local_cluster
from marrakech_sim.run.runner import RunResult, resume_run, run_study
from marrakech_sim.run.verify import verify_run

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """One LocalCluster of 2 worker processes (on 127.0.0.1) for the module's runs.

    Its workers start as a run's own LocalCluster starts them (`WORKER_START`), a
    replacement for a lost worker too.
    """
    with local_cluster(2) as c:
        yield c


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The study of test_runner played by 2 worker processes (the process backend)."""
    out = tmp_path_factory.mktemp("reference") / "run"
    run_study(study_from_dict(study_data()), out, workers=2)
    return out


def play_on_dask(
    cluster: Any, data: dict[str, Any], out: Path, parts: str = "client"
) -> tuple[RunResult, pd.DataFrame]:
    """Play the study `data` on `cluster` into `out`: the run's result and its games."""
    backend = DaskBackend(scheduler=cluster.scheduler_address, parts=parts)
    result = run_study(study_from_dict(data), out, backend=backend)
    return result, runfolder.read_table(out, "games")


def cli_run_on_dask(tmp_path: Path, *options: str) -> Path:
    """`marrakech run` of test_runner's study with --backend dask and `options`, into
    tmp_path / "run" (returned); it must succeed."""
    config = tmp_path / "study.toml"
    config.write_text(_toml(study_data()))
    out = tmp_path / "run"
    args = ["run", str(config), "--out", str(out), "--backend", "dask", *options]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return out


def sessions(run_dir: Path) -> list[dict[str, Any]]:
    return list(runfolder.read_manifest(run_dir).sessions)


@pytest.mark.parametrize("parts", ["client", "workers"])
def test_tables_equal_the_process_backend(
    cluster: Any, reference: Path, tmp_path: Path, parts: str
) -> None:
    """Same config and seed on Dask: identical tables, a complete manifest, verify passes."""
    out = tmp_path / "run"
    backend = DaskBackend(scheduler=cluster.scheduler_address, parts=parts)
    result = run_study(study_from_dict(study_data()), out, backend=backend)
    assert result.status == "complete" and result.games_played == result.games_planned
    assert_same_tables(reference, out)
    assert verify_run(out).ok
    (session,) = sessions(out)
    assert session["backend"] == "dask" and session["parts_written_by"] == parts


def test_worker_records_reach_the_run_log(
    cluster: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Each chunk's log record, made on a Dask worker (or, for the Python loop's games,
    in the worker process a Dask worker starts), is logged here as from that process."""
    caplog.set_level("INFO", logger="marrakech_sim")
    backend = DaskBackend(scheduler=cluster.scheduler_address)
    result = run_study(study_from_dict(study_data()), tmp_path / "run", backend=backend)
    pids = set(cluster_pids(cluster).values())
    chunks = [r for r in caplog.records if r.name == "marrakech_sim.run.pool"]
    assert sorted(int(r.getMessage().split()[1].rstrip(":")) for r in chunks) == list(
        range(runfolder.read_manifest(tmp_path / "run").chunks)
    )
    assert {r.process if r.process in pids else parent(r.process) for r in chunks} <= pids
    assert os.getpid() not in {r.process for r in chunks} and result.status == "complete"


def parent(pid: int | None) -> int:
    """The parent of a running process (Linux)."""
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rpartition(")")[2].split()[1])


def chunks_logged(log: str) -> list[int]:
    """The chunks whose worker record is in a run.log, in order, as often as it is there."""
    return sorted(int(c) for c in re.findall(r"marrakech_sim\.run\.pool: chunk (\d+):", log))


def chunks_of(run_dir: Path) -> list[int]:
    return sorted(runfolder.chunks_done(run_dir))


def cluster_pids(cluster: Any) -> dict[str, int]:
    with distributed.Client(cluster) as client:
        return dict(client.run(os.getpid))


def test_losing_a_worker_loses_no_game(cluster: Any, tmp_path: Path) -> None:
    """A worker killed mid-run: its chunks run again elsewhere; every game once, same tables."""
    data = self_play_data(12000, 300)
    victim = min(cluster_pids(cluster).values())
    killed: list[int] = []

    def kill_once(done: int, planned: int, seconds: float, faults: int) -> None:
        # after the first result: the victim holds chunks (2 per worker are in flight)
        if not killed:
            os.kill(victim, signal.SIGKILL)
            killed.append(done)

    out = tmp_path / "run"
    backend = DaskBackend(scheduler=cluster.scheduler_address)
    result = run_study(study_from_dict(data), out, backend=backend, progress=kill_once)
    assert killed and killed[0] < 12000
    assert victim not in cluster_pids(cluster).values()
    games = runfolder.read_table(out, "games")
    assert result.status == "complete" and len(games) == 12000 == games["game_id"].nunique()
    serial = tmp_path / "serial"
    run_study(study_from_dict(data), serial, workers=0)
    assert_same_tables(serial, out)


def test_strategy_fault_is_a_game_not_a_failed_task(cluster: Any, tmp_path: Path) -> None:
    """A strategy raising on a Dask worker ends its game with end_reason 'error', not the task."""
    data = study_data(
        strategies={"random": {}, "raiser": {"ref": f"{HERE}:Raiser"}},
        rulesets={"four": {}},
        schedule={"kind": "lineups", "lineups": [["raiser", "random", "random", "random"]]},
        games_per_lineup=96,
    )
    result, games = play_on_dask(cluster, data, tmp_path / "run")
    bad = games[games["end_reason"] == "error"]
    assert result.status == "complete" and len(games) == 96
    assert 0 < len(bad) == result.errors and bad["error"].str.contains("ValueError").all()


def test_a_strategy_raising_keyboard_interrupt_is_a_game_fault_on_dask(
    cluster: Any, tmp_path: Path
) -> None:
    """A KeyboardInterrupt a strategy raises itself ends its game, not the Dask task."""
    bad = Path(__file__).resolve().parents[1] / "strategies_examples" / "bad.py"
    data = study_data(
        strategies={
            "random": {},
            "bad": {"ref": f"{bad}:InterruptsItself", "params": {"one_in": 8}},
        },
        rulesets={"two": {"players": 2}},
        schedule={"kind": "lineups", "lineups": [["bad", "random"]]},
        games_per_lineup=48,
    )
    result, games = play_on_dask(cluster, data, tmp_path / "run")
    bad_games = games[games["end_reason"] == "error"]
    assert result.status == "complete" and len(games) == 48
    assert 0 < len(bad_games) == result.errors < 48
    assert bad_games["error"].str.contains("KeyboardInterrupt").all()


BAD = Path(__file__).resolve().parents[1] / "strategies_examples" / "bad.py"


def bad_study(name: str, **changes: Any) -> dict[str, Any]:
    """Two players: a misbehaving strategy of bad.py (one game in 8) against random."""
    data: dict[str, Any] = {
        "strategies": {"random": {}, "bad": {"ref": f"{BAD}:{name}", "params": {"one_in": 8}}},
        "rulesets": {"two": {"players": 2}},
        "schedule": {"kind": "lineups", "lineups": [["bad", "random"]]},
        "games_per_lineup": 40,
        "chunk_games": 10,
        "rotation": "none",
    }
    return study_data(**{**data, **changes})


@pytest.mark.parametrize(
    ("name", "parts"),
    [("HardExits", "client"), ("Segfaults", "workers"), ("KillsItself", "client")],
)
def test_a_strategy_that_ends_its_process_ends_only_its_game_on_dask(
    cluster: Any, tmp_path: Path, name: str, parts: str
) -> None:
    """os._exit, a segfault or a SIGKILL of its own process now and then: as on the
    process backend, the game that does it twice is a fault naming the death, the run
    finishes, and the tables equal the process backend's."""
    result, games = play_on_dask(cluster, bad_study(name), tmp_path / "dask", parts)
    bad = games[games["end_reason"] == "error"]
    assert result.status == "complete" and len(games) == 40
    assert 0 < len(bad) == result.errors < 40
    assert bad["error"].str.contains("died").all(), bad["error"].tolist()
    run_study(study_from_dict(bad_study(name)), tmp_path / "processes", workers=2)
    assert_same_tables(tmp_path / "processes", tmp_path / "dask")
    assert verify_run(tmp_path / "dask").ok


def test_a_strategy_that_eats_memory_is_a_fault_on_dask(cluster: Any, tmp_path: Path) -> None:
    """The worker memory bound holds on Dask too: past it, the game is a fault naming it."""
    data = bad_study("EatsMemory", games_per_lineup=20, worker_memory_mb=256)
    data["strategies"]["bad"].pop("params")
    result, games = play_on_dask(cluster, data, tmp_path / "run")
    bad = games[games["end_reason"] == "error"]
    assert result.status == "complete" and len(games) == 20
    assert len(bad) == result.errors > 0
    assert bad["error"].str.contains("ran out of memory").all(), bad["error"].tolist()


@pytest.mark.parametrize("name", ["Sleeps", "Hangs"])
def test_decision_seconds_is_enforced_on_dask(cluster: Any, tmp_path: Path, name: str) -> None:
    """A strategy that sleeps or loops in a decision: its game ends as a fault after
    decision_seconds, as on the process backend (the run hung on Dask before)."""
    data = bad_study(name, decision_seconds=0.2, games_per_lineup=4, chunk_games=2)
    data["strategies"]["bad"].pop("params")
    started = time.monotonic()
    result, games = play_on_dask(cluster, data, tmp_path / "run")
    assert result.status == "complete" and len(games) == 4 == result.errors
    assert games["error"].str.contains("time budget of 0.2 s").all(), games["error"].tolist()
    assert time.monotonic() - started < 60


@pytest.mark.parametrize("parts", ["client", "workers"])
def test_stopping_rule_stops_where_the_process_backend_does(
    cluster: Any, tmp_path: Path, parts: str
) -> None:
    """A stopping rule on Dask stops at the same game as in-process, with no later parts."""
    stopping = {"rule": "interval_width", "quantity": "seat_win_share", "seat": 0, "width": 0.2}
    data = self_play_data(5000, 25, stopping=stopping)
    a = run_study(study_from_dict(data), tmp_path / "a", workers=0)
    backend = DaskBackend(scheduler=cluster.scheduler_address, parts=parts)
    b = run_study(study_from_dict(data), tmp_path / "b", backend=backend)
    assert a.status == b.status == "stopped" and a.games_played == b.games_played < 5000
    assert_same_tables(tmp_path / "a", tmp_path / "b")
    assert (
        max(runfolder.chunks_done(tmp_path / "b")) == len(runfolder.chunks_done(tmp_path / "a")) - 1
    )


def test_resume_on_dask_finishes_an_interrupted_run(
    cluster: Any, reference: Path, tmp_path: Path
) -> None:
    """A run missing chunks (and holding a half-written part) is finished on Dask, the same."""
    out = tmp_path / "run"
    run_study(study_from_dict(study_data()), out, workers=0)
    manifest = runfolder.read_manifest(out)
    runfolder.remove_chunks(out, range(5, manifest.chunks))
    (out / "moves" / ".part-000007.parquet.x.tmp").write_bytes(b"half")
    runfolder.write_manifest(out, manifest.replace(status="interrupted"))
    result = resume_run(out, backend=DaskBackend(scheduler=cluster.scheduler_address))
    assert result.status == "complete" and result.games_this_session < result.games_planned
    assert_same_tables(reference, out)
    assert [s.get("backend") for s in sessions(out)] == [None, "dask"]


@pytest.mark.slow  # a LocalCluster of its own: a minute under load (the others share one)
def test_cli_run_starts_a_local_cluster_and_logs_its_workers(
    reference: Path, tmp_path: Path
) -> None:
    """`marrakech run --backend dask` starts its own LocalCluster; worker records reach run.log."""
    out = cli_run_on_dask(tmp_path, "--workers", "2")
    assert_same_tables(reference, out)
    log = (out / "run.log").read_text()
    assert "Dask Worker" in log and chunks_logged(log) == list(range(len(chunks_of(out))))
    (session,) = sessions(out)
    assert session["scheduler"] == "a LocalCluster on 127.0.0.1" and session["workers"] == 2


def test_cli_study_runs_on_a_given_scheduler(cluster: Any, tmp_path: Path) -> None:
    """`marrakech study --backend dask --scheduler ADDR` plays there, logs to run.log, reports."""
    config = tmp_path / "small.toml"
    data = study_data(rulesets={"four": {}}, strategies={"random": {}, "other": {"ref": "random"}})
    config.write_text(_toml(data))
    args = ["study", str(config), "--run-dir", str(tmp_path / "run")]
    args += ["--report-dir", str(tmp_path / "report"), "--backend", "dask"]
    args += ["--scheduler", cluster.scheduler_address]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "report" / "report.html").exists()
    log = (tmp_path / "run" / "run.log").read_text()
    assert "Dask Worker" in log and "marrakech_sim.run.pool: chunk 0:" in log
    assert sessions(tmp_path / "run")[0]["scheduler"] == cluster.scheduler_address


DOCS = HERE.parents[2] / "docs" / "cluster.md"
DASK = Path(sys.executable).parent / "dask"  # the command Dask installs beside python


def recommended_env() -> dict[str, str]:
    """The Dask settings docs/cluster.md tells `dask worker` users to export."""
    found = dict(re.findall(r"^\s*export (DASK_\w+)=(\S+)$", DOCS.read_text(), re.MULTILINE))
    assert len(found) >= 3, f"no `export DASK_...` lines left in {DOCS}"
    return found


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM each process group (a worker's processes too), SIGKILL what outlives 20 s."""
    for proc in reversed(procs):
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    for proc in reversed(procs):
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        with contextlib.suppress(ProcessLookupError):  # the group's last process may be gone
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.fixture
def dask_commands(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """A `dask scheduler` and a `dask worker` (2 processes) as docs/cluster.md starts them.

    On 127.0.0.1, with the environment the doc recommends; the scheduler's port is a free
    one, read from its scheduler file. Yields the scheduler's address; stops both (and the
    worker's processes) however the test ends. Parametrised indirectly with "daemonic",
    the workers keep Dask's default of daemonic processes instead.
    """
    env = {**os.environ, **recommended_env()}
    if getattr(request, "param", None) == "daemonic":
        env["DASK_DISTRIBUTED__WORKER__DAEMON"] = "True"
    logs = tmp_path / "dask-logs"
    logs.mkdir()
    address_file = tmp_path / "scheduler.json"
    procs: list[subprocess.Popen[bytes]] = []

    def start(name: str, args: list[str]) -> None:
        with (logs / f"{name}.log").open("wb") as log:
            procs.append(
                subprocess.Popen(
                    [str(DASK), name, *args],
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # its own process group: _stop ends all of it
                )
            )

    def logs_tail() -> str:
        return "\n".join(f"--- {f.name}\n{f.read_text()[-3000:]}" for f in sorted(logs.iterdir()))

    try:
        scheduler = ["--host", "127.0.0.1", "--port", "0", "--no-dashboard"]
        start("scheduler", [*scheduler, "--scheduler-file", str(address_file)])
        deadline = time.monotonic() + 60
        address = None
        while address is None:
            with contextlib.suppress(OSError, ValueError):  # not there, or half written
                address = str(json.loads(address_file.read_text())["address"])
            if address is None and (procs[0].poll() is not None or time.monotonic() > deadline):
                pytest.fail(f"the dask scheduler did not start:\n{logs_tail()}")
            time.sleep(0.1)
        start("worker", [address, "--nworkers", "2", "--nthreads", "1", "--no-dashboard"])
        with distributed.Client(address, timeout=60) as client:
            try:
                client.wait_for_workers(2, timeout=120)
            except TimeoutError:
                pytest.fail(f"the dask worker did not join its scheduler:\n{logs_tail()}")
        yield address
    finally:
        _stop(procs)


def test_cli_run_on_the_dask_commands_of_the_cluster_recipe(
    dask_commands: str, reference: Path, tmp_path: Path
) -> None:
    """docs/cluster.md's recipe (`dask scheduler`, `dask worker`, its settings): the same tables."""
    import dask

    out = cli_run_on_dask(tmp_path, "--scheduler", dask_commands)
    assert_same_tables(reference, out)
    assert verify_run(out).ok
    assert chunks_logged((out / "run.log").read_text()) == list(range(len(chunks_of(out))))
    (session,) = sessions(out)
    assert session["scheduler"] == dask_commands and session["workers"] == "the cluster's"
    # the settings the doc recommends are Dask's own keys, and the workers run with them
    wanted = {}
    for name, value in recommended_env().items():
        key = ".".join(name.removeprefix("DASK_").lower().split("__"))
        dask.config.get(key)  # KeyError: not a setting Dask has
        wanted[key] = dask.config.get(key, config=dask.config.collect_env({name: value}))
    with distributed.Client(dask_commands) as client:
        seen = client.run(lambda keys: {k: dask.config.get(k) for k in keys}, list(wanted))
    assert len(seen) == 2 and all(settings == wanted for settings in seen.values())


@pytest.mark.parametrize("dask_commands", ["daemonic"], indirect=True)
def test_daemonic_dask_workers_play_plug_ins_in_their_thread_and_say_so(
    dask_commands: str, reference: Path, tmp_path: Path
) -> None:
    """Workers left daemonic (Dask's default) may not start processes: plug-in games
    play in the task's thread, with the same tables, and run.log says what that loses."""
    out = cli_run_on_dask(tmp_path, "--scheduler", dask_commands)
    assert_same_tables(reference, out)
    assert (
        "is a daemonic process, so plug-in strategies play in its threads"
        in (out / "run.log").read_text()
    )


def _toml(data: dict[str, Any]) -> str:
    """A study dict as TOML (the few shapes study_data uses)."""
    lines = [f"{k} = {json.dumps(v)}" for k, v in data.items() if not isinstance(v, dict)]
    for table in ("rulesets", "strategies"):
        for name, values in data[table].items():
            lines.append(f'[{table}."{name}"]')
            lines += [f"{k} = {json.dumps(v)}" for k, v in values.items()]
    lines.append("[schedule]")
    lines += [f"{k} = {json.dumps(v)}" for k, v in data["schedule"].items()]
    return "\n".join(lines) + "\n"


def test_without_dask_the_error_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With `distributed` not importable, --backend dask fails in one line naming the extra."""
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    with pytest.raises(MissingDependency, match=r"pip install 'marrakech_sim\[dask\]'"):
        DaskBackend()
    config = tmp_path / "study.toml"
    config.write_text(_toml(study_data()))
    args = ["run", str(config), "--out", str(tmp_path / "run"), "--backend", "dask"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: the dask backend needs Dask's distributed scheduler: "
        "pip install 'marrakech_sim[dask]'"
    ]
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"parts": "scheduler"}, r"parts written by 'scheduler'; allowed: 'client', 'workers'"),
        ({"scheduler": "127.0.0.1:8786"}, r"scheduler address '127.0.0.1:8786'"),
    ],
)
def test_bad_backend_options_are_config_errors(kwargs: dict[str, str], message: str) -> None:
    """A bad --parts value or a scheduler address without protocol is named in the error."""
    with pytest.raises(ConfigError, match=message):
        DaskBackend(**kwargs)


def test_unreachable_scheduler_is_a_cluster_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A scheduler address nobody answers at gives a ClusterError naming the address."""
    monkeypatch.setattr(dask_backend, "CONNECT_TIMEOUT_S", 1)
    backend = DaskBackend(scheduler="tcp://127.0.0.1:9")  # the discard port: nobody listens
    with pytest.raises(ClusterError, match=r"no Dask scheduler answers at 'tcp://127.0.0.1:9'"):
        run_study(study_from_dict(study_data()), tmp_path / "run", backend=backend)
    # the run's status says it failed (not 'running'); a new run there is told to resume
    manifest = runfolder.read_manifest(tmp_path / "run")
    assert manifest.status == "failed" and "127.0.0.1:9" in manifest.error
    with pytest.raises(RunFolderError, match=r"unfinished run \(status 'failed'\): resume it"):
        run_study(study_from_dict(study_data()), tmp_path / "run", workers=0)
    assert resume_run(tmp_path / "run", workers=0).status == "complete"


@pytest.mark.parametrize("reply", [b"", b"\xff" * 64], ids=["silent", "garbage"])
def test_a_server_that_is_not_dask_is_a_cluster_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, reply: bytes
) -> None:
    """A server that accepts and then says nothing (or bytes that are no Dask frame) at
    the scheduler's address: a ClusterError in seconds, not a hang."""
    import socket
    import threading

    monkeypatch.setattr(dask_backend, "CONNECT_TIMEOUT_S", 1)
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    held: list[socket.socket] = []

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = server.accept()
                held.append(conn)
                if reply:
                    conn.sendall(reply)

    threading.Thread(target=serve, daemon=True).start()
    started = time.monotonic()
    try:
        backend = DaskBackend(scheduler=f"tcp://127.0.0.1:{port}")
        with pytest.raises(ClusterError, match=f"127.0.0.1:{port}"):
            run_study(study_from_dict(study_data()), tmp_path / "run", backend=backend)
    finally:
        server.close()
        for conn in held:
            conn.close()
    assert time.monotonic() - started < 30
    assert runfolder.read_manifest(tmp_path / "run").status == "failed"


def test_local_cluster_needs_a_worker(tmp_path: Path) -> None:
    """--workers 0 with a LocalCluster is refused with the value named."""
    with pytest.raises(ConfigError, match="workers 0"):
        run_study(study_from_dict(study_data()), tmp_path / "run", workers=0, backend=DaskBackend())


def test_a_thread_writing_to_stderr_as_a_run_starts_its_cluster_stops_no_worker(
    tmp_path: Path,
) -> None:
    """A fork copies every lock of the forking process as it stands, and one that another
    thread held stays held in the child. Workers forked from the run's process while a
    thread of it wrote to a buffered sys.stderr (Python's default; a log handler, a
    progress bar) waited for ever on their first flush of it, which multiprocessing makes
    before it starts any process (a worker's players of plug-in strategies): in 10
    clusters of 10 (tools/fork_lock_repro.py). A run's workers now start from the fork
    server, which is no copy of this process: each flushes at once."""
    chunks = dask_backend.DaskChunks(DaskBackend(), 2)
    with writing_to_stderr():
        chunks.start(Prepared(study_from_dict(self_play_data(8, 4))), tmp_path, "encoder")
    try:
        assert chunks._job is not None
        client = chunks._job[0]
        pids = client.run(os.getpid)
        # what multiprocessing does before it starts a process
        flushes = [
            client.submit(multiprocessing.util._flush_std_streams, workers=[w], pure=False)
            for w in pids
        ]
        with contextlib.suppress(TimeoutError):
            distributed.wait(flushes, timeout=30)
        stuck = [pids[w] for w, f in zip(pids, flushes, strict=True) if not f.done()]
        for pid in stuck:  # or closing the cluster would wait for them
            os.kill(pid, signal.SIGKILL)
        assert not stuck, "workers stuck on a lock their fork copied held"
    finally:
        chunks.close()


def test_a_runs_workers_start_from_the_fork_server_it_warmed_up(tmp_path: Path) -> None:
    """A run's LocalCluster: its workers are children of multiprocessing's fork server
    (`WORKER_START`), which the run started with its study's kernels loaded
    (run.fork_server); the study's variable reached neither the workers nor stayed here."""
    if dask_backend.WORKER_START != "forkserver":
        pytest.skip("no fork server on this platform: the workers are spawned")
    chunks = dask_backend.DaskChunks(DaskBackend(), 2)
    chunks.start(Prepared(study_from_dict(self_play_data(8, 4))), tmp_path, "encoder")
    try:
        assert chunks._job is not None
        client = chunks._job[0]
        parents = set(client.run(os.getppid).values())
        (server,) = parents
        assert server != os.getpid()
        assert "multiprocessing.forkserver" in Path(f"/proc/{server}/cmdline").read_text()
        seen = client.run(os.environ.get, fork_server.STUDY)
        assert list(seen.values()) == [None, None] and fork_server.STUDY not in os.environ
    finally:
        chunks.close()


def test_a_fork_server_given_no_study_it_can_read_still_starts() -> None:
    """run.fork_server's warm-up: a value that is no study is passed over (a fork server
    whose preload raised would fork no worker)."""
    fork_server.warm_up("not base64 of a pickle")
    fork_server.warm_up(fork_server.encode(study_from_dict(self_play_data(8, 4))))


def test_a_worker_with_other_code_refuses_to_play(cluster: Any) -> None:
    """A task whose worker's game code differs from the client's raises before writing."""
    with distributed.Client(cluster) as client:
        future = client.submit(
            dask_backend._play_task,
            study_from_dict(study_data()),
            "other-code",
            0,
            None,
            "encoder",
            logging.INFO,
            "0123456789abcdef",  # not this code's digest
            dask_backend._Isolation(60.0, None),
            pure=False,
        )
        with pytest.raises(ClusterError, match=r"runs other marrakech_sim code"):
            future.result()


@pytest.mark.slow  # a LocalCluster of its own, in a child process
def test_ctrl_c_on_dask_stops_cleanly_and_resumes(tmp_path: Path) -> None:
    """SIGINT to a dask run: status interrupted, a resume hint, no worker traceback."""
    from terminal import start_in_terminal, wait_for_parts
    from test_runner import _slow_config

    out = tmp_path / "run"
    marrakech = Path(sys.executable).parent / "marrakech"
    args = [str(marrakech), "run", str(_slow_config(tmp_path)), "--out", str(out)]
    args += ["--backend", "dask", "--workers", "2", "--no-summary"]
    proc = start_in_terminal(args, start_new_session=True)
    wait_for_parts(out, proc, 2)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert f"marrakech run --resume {out}" in err.decode() and b"Traceback" not in err
    assert runfolder.read_manifest(out).status == "interrupted"
    result = resume_run(out, workers=0)
    assert result.status == "complete" and len(runfolder.read_table(out, "games")) == 1200


def test_a_sweep_on_dask_plays_the_games_of_the_process_backend(
    cluster: Any, tmp_path: Path
) -> None:
    """A [sweep] study (one rule set per value, common seeds) on Dask writes the tables
    that worker processes write, and verify replays its games."""
    data = {
        **study_data(),
        "rulesets": {"four": {}},
        "schedule": {"kind": "self_play", "strategies": ["random"]},
        "sweep": {"seat_dirhams": {"0": [2, 30]}},
    }
    processes = tmp_path / "processes"
    run_study(study_from_dict(data), processes, workers=2)
    out = tmp_path / "dask"
    backend = DaskBackend(scheduler=cluster.scheduler_address)
    assert run_study(study_from_dict(data), out, backend=backend).status == "complete"
    assert_same_tables(processes, out)
    assert verify_run(out).ok


def descendants(pid: int) -> list[int]:
    """Every process started from `pid`, at any depth (Linux)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            for child in map(int, (task / "children").read_text().split()):
                found += [child, *descendants(child)]
    return found


def running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc (Linux)")
def test_kill_9_of_a_dask_run_leaves_no_process_of_it(tmp_path: Path) -> None:
    """kill -9 of the main process of a Dask run whose strategies play in processes of
    the workers' own: the LocalCluster's workers and theirs all end, and the run's status
    reads 'interrupted' at the next look."""
    from terminal import wait_for_parts
    from test_runner import _slow_config

    out = tmp_path / "run"
    marrakech = Path(sys.executable).parent / "marrakech"
    args = [str(marrakech), "run", str(_slow_config(tmp_path)), "--out", str(out)]
    args += ["--backend", "dask", "--workers", "2", "--no-summary"]
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    wait_for_parts(out, proc, 2)
    family = descendants(proc.pid)
    assert len(family) >= 4, family  # two Dask workers and a player process of each
    proc.kill()
    proc.communicate(timeout=60)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(running(p) for p in family):
        time.sleep(0.1)
    assert not [p for p in family if running(p)]
    assert runfolder.read_manifest(out).status == "interrupted"
