"""Reproduce the deadlock of LocalCluster workers forked while another thread writes.

    .venv/bin/python tools/fork_lock_repro.py --tries 10                   # forked workers
    .venv/bin/python tools/fork_lock_repro.py --tries 10 --method forkserver
    .venv/bin/python tools/fork_lock_repro.py --tries 8 --mode run         # whole Dask runs

A fork copies every lock of the parent as it stands at that instant, and only the
forking thread lives on in the child: a lock another thread held stays held there for
ever. Each `sys.stderr.write` of a buffered stream (Python's default without -u or
PYTHONUNBUFFERED) holds its BufferedWriter's lock through the write. Here a thread of
this process writes lines to such a stderr all the time (as a log handler, a warning or
a progress bar does now and then) while a LocalCluster starts its two workers, forked by
the nannies' threads from this process (--method fork, as runs did before on Python <
3.12), by multiprocessing's fork server (forkserver, as they do now, `WORKER_START`) or
spawned; then each worker flushes its stderr, as multiprocessing does before it starts a
process (a worker's players of plug-in strategies) and as a process does at its end.

--mode cluster (default): each try starts a cluster (`local_cluster`), sends each worker
a task that flushes its sys.stderr and waits --timeout seconds; a worker still in the
task then is stuck. --mode run: each try plays a small study of a plug-in strategy with
`run_study` on its own LocalCluster (`DaskBackend()`), whose workers start their players
(forked, `FORK_PLAYERS`); a run not done within --timeout seconds is stuck.

A stuck worker's stack is printed (faulthandler in the worker; `py-spy dump --native`
when py-spy is installed), then the worker is killed so that the next try can start.
The last line counts the stuck tries.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import io
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from marrakech_sim.run import dask_backend
from marrakech_sim.run.config import study_from_dict
from marrakech_sim.run.dask_backend import DaskBackend, local_cluster
from marrakech_sim.run.runner import run_study

HERE = Path(__file__).resolve().parent
# a plug-in strategy (games of the Python loop): each Dask worker plays its chunks in a
# player process of its own (run.dask_backend's module docstring)
STUDY = {
    "seed": 1,
    "games_per_lineup": 8,
    "chunk_games": 4,
    "rulesets": {"four": {}},
    "strategies": {
        "python": {"ref": f"{HERE.parent / 'tests' / 'run' / 'test_runner.py'}:PythonRandom"}
    },
    "schedule": {"kind": "self_play"},
}


def buffered_stderr() -> None:
    """Make sys.stderr a line-buffered stream over a BufferedWriter, as Python makes it
    without -u (the environment may set PYTHONUNBUFFERED), on /dev/null: the chatter
    below would fill a terminal. Errors of this script go to its stdout."""
    sys.stderr = io.TextIOWrapper(
        io.BufferedWriter(io.FileIO(os.devnull, "w")), line_buffering=True
    )


def chatter(stop: threading.Event) -> None:
    while not stop.is_set():
        sys.stderr.write("a line on stderr from another thread of the run's process\n")


def flush_stderr(dump: str, after: float) -> int:
    """The task: flush sys.stderr, with this process's stack dumped into `dump` if that
    takes longer than `after` seconds."""
    with open(dump, "w") as f:
        faulthandler.dump_traceback_later(after, file=f)
        try:
            sys.stderr.flush()
        finally:
            faulthandler.cancel_dump_traceback_later()
    return os.getpid()


def show_stuck(pids: list[int], dumps: Path) -> None:
    """Print the stacks of stuck workers, then kill them."""
    time.sleep(1)  # the workers' own faulthandler dumps
    for dump in sorted(dumps.glob("*.txt")):
        text = dump.read_text().strip()
        if text:
            print(f"--- faulthandler in the worker ({dump.stem}):\n{text}")
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    for pid in pids:
        try:
            with open(f"/proc/{pid}/wchan") as f:
                wchan = f.read()
        except OSError:  # gone meanwhile
            continue
        if Path(spy).exists():
            out = subprocess.run(
                [spy, "dump", "--native", "--pid", str(pid)],
                capture_output=True,
                text=True,
                timeout=60,
            )
            print(f"--- py-spy dump --native --pid {pid}:\n{out.stdout}{out.stderr}")
        print(f"--- /proc/{pid}/wchan: {wchan}")
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def try_cluster(method: str, timeout: float, dumps: Path) -> bool:
    """One cluster start and a stderr flush in each worker: True when one is stuck."""
    from distributed import Client, wait

    with local_cluster(2, method=method) as cluster, Client(cluster) as client:
        pids: dict[str, int] = client.run(os.getpid)
        futures = [
            client.submit(
                flush_stderr, str(dumps / f"{pid}.txt"), timeout / 2, workers=[w], pure=False
            )
            for w, pid in pids.items()
        ]
        try:
            wait(futures, timeout=timeout)
            return False
        except TimeoutError:
            pass
        stuck = [pids[w] for w, f in zip(pids, futures, strict=True) if not f.done()]
        show_stuck(stuck, dumps)
        return True


def try_run(method: str, timeout: float, dumps: Path) -> bool:
    """One small run on its own LocalCluster: True when it is stuck."""
    import psutil

    dask_backend.WORKER_START = method
    out = dumps / f"run-{time.monotonic_ns()}"
    box: dict[str, Any] = {}

    def play() -> None:
        try:
            box["result"] = run_study(study_from_dict(STUDY), out, backend=DaskBackend())
        except BaseException as exc:  # a killed worker: the run's error
            box["error"] = exc

    thread = threading.Thread(target=play, daemon=True)
    thread.start()
    thread.join(timeout)
    if not thread.is_alive():
        if "error" in box:
            raise box["error"]
        return False
    # the Dask workers (and their players, the fork server)
    workers = [p.pid for p in psutil.Process().children(recursive=True)]
    show_stuck(workers, dumps)
    thread.join(60)
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=10)
    parser.add_argument(
        "--method", choices=["fork", "forkserver", "spawn"], default="fork", help="start method"
    )
    parser.add_argument("--mode", choices=["cluster", "run"], default="cluster")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds a try may take")
    parser.add_argument("--quiet", action="store_true", help="no thread writing to stderr")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    buffered_stderr()
    sys.excepthook = lambda *exc: traceback.print_exception(*exc, file=sys.stdout)
    stop = threading.Event()
    talker = threading.Thread(target=chatter, args=(stop,), daemon=True)
    if not args.quiet:
        talker.start()
    stuck = 0
    with tempfile.TemporaryDirectory(prefix="fork_lock_") as tmp:
        for i in range(args.tries):
            start = time.perf_counter()
            play = try_cluster if args.mode == "cluster" else try_run
            hung = play(args.method, args.timeout, Path(tmp))
            stuck += hung
            took = time.perf_counter() - start
            print(f"try {i + 1}: {'STUCK' if hung else 'ok'} ({took:.1f} s)")
    stop.set()
    if talker.is_alive():
        talker.join()
    print(
        f"{stuck}/{args.tries} tries stuck ({args.mode}, workers started by {args.method}, "
        f"{'no thread' if args.quiet else 'a thread'} writing to stderr)"
    )


if __name__ == "__main__":
    main()
