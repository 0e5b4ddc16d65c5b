"""The dask backend against worker processes, and Dask's cost per task.

    python benchmarks/bench_dask.py --tasks 2000                      # per-task overhead only
    python benchmarks/bench_dask.py --config configs/default.toml --workers 2 --json

Per-task overhead: a LocalCluster of `--workers` single-thread processes on 127.0.0.1
(`local_cluster`, as a run starts it) idles for 5 s (the CPU its processes burn doing
nothing), then runs `--tasks` empty tasks one at a time (the round trip: submit, run,
result back) and all at once (the scheduler's throughput), and times the
`client.nthreads()` call the backend makes at most once a second. Each in wall and in
CPU milliseconds of every process (this one, which hosts the scheduler, and the workers).

Study runs (with --config): the study is played into fresh run folders by worker
processes and by Dask (a LocalCluster the run starts itself, its workers started as a run
starts them, `dask_backend.WORKER_START`: forked by a fork server; or spawned, as Dask
does by default; or forked from the run's process, as runs did on Python < 3.12 before,
which can deadlock (`WORKER_START`'s comment); then an already running one with parts
written by the client and by the workers, after a small warm-up run; `--runs` picks
some, in the order given). Each line gives the wall time (cluster start included where
the run starts it), the CPU seconds of every process involved (this process, which also
hosts the LocalCluster's scheduler, and the workers: reaped children's rusage, the fork
server's with its workers' once it is stopped at the run's end, as a run's process ends
it; or psutil for a running cluster's workers) and games per wall second and per CPU
second. On a shared machine the CPU figures are the comparable ones.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing.forkserver as forkserver
import os
import resource
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

from marrakech_sim.run import dask_backend
from marrakech_sim.run.config import load_study
from marrakech_sim.run.dask_backend import DaskBackend, local_cluster
from marrakech_sim.run.runner import run_study


def nothing(i: int) -> int:
    return i


def _cpu_self_and_children() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def task_overhead(workers: int, tasks: int) -> dict[str, float]:
    """Per empty task, wall and CPU milliseconds: one at a time, all at once; nthreads()."""
    from distributed import Client, as_completed

    with local_cluster(workers) as cluster, Client(cluster) as client:
        client.submit(nothing, -1, pure=False).result()  # connections made
        procs = [psutil.Process()] + [psutil.Process(p) for p in client.run(os.getpid).values()]

        def cpu() -> float:  # this process (client and scheduler) and the workers
            return sum(sum(p.cpu_times()[:2]) for p in procs)

        c0, t0 = cpu(), time.perf_counter()
        time.sleep(5)
        out: dict[str, float] = {
            "idle_cpu_s_per_s": round((cpu() - c0) / (time.perf_counter() - t0), 4)
        }
        for name, play in (
            (
                "round_trip",
                lambda: [client.submit(nothing, i, pure=False).result() for i in range(tasks)],
            ),
            (
                "bulk",
                lambda: list(
                    as_completed([client.submit(nothing, i, pure=False) for i in range(tasks)])
                ),
            ),
            ("nthreads_call", lambda: [client.nthreads() for _ in range(tasks)]),
        ):
            c0, t0 = cpu(), time.perf_counter()
            play()
            out[f"{name}_ms"] = round((time.perf_counter() - t0) / tasks * 1e3, 3)
            out[f"{name}_cpu_ms"] = round((cpu() - c0) / tasks * 1e3, 3)
    return out


def _timed(play: Callable[[], Any], worker_pids: list[int] | None = None) -> dict[str, float]:
    workers = [psutil.Process(p) for p in worker_pids or []]
    before = _cpu_self_and_children() + sum(sum(w.cpu_times()[:4]) for w in workers)
    start = time.perf_counter()
    result = play()
    wall = time.perf_counter() - start
    cpu = _cpu_self_and_children() + sum(sum(w.cpu_times()[:4]) for w in workers) - before
    games = result.games_this_session
    return {
        "games": games,
        "wall_s": round(wall, 2),
        "run_s": round(result.seconds, 2),
        "cpu_s": round(cpu, 2),
        "games_per_s": round(games / wall),
        "games_per_cpu_s": round(games / cpu),
    }


def _ended(result: Any) -> Any:
    """A run's result, once the fork server that forked its workers has ended (as it does
    with a run's process), so that its CPU and its workers' count among the children's."""
    forkserver._forkserver._stop()  # (multiprocessing's own tests stop it so)
    return result


# the runs on a LocalCluster the run starts: how its workers start (None: as a run's do)
LOCAL = {"local": None, "local_spawn": "spawn", "local_fork": "fork"}
RUNS = ("processes", *LOCAL, "client", "workers")


def study_runs(
    config: str, workers: int, chunk_games: int | None, runs: list[str]
) -> dict[str, Any]:
    """The study played by worker processes and by Dask, timed (see the module docstring)."""
    from distributed import Client

    study = load_study(config)
    if chunk_games:
        study = dataclasses.replace(study, chunk_games=chunk_games)
    root = Path(tempfile.mkdtemp(prefix="bench_dask_"))
    out: dict[str, Any] = {"chunk_games": study.chunk_games, "load_before": os.getloadavg()}
    start = dask_backend.WORKER_START
    try:
        for i, run in enumerate(r for r in runs if r in ("processes", *LOCAL)):
            backend = None if run == "processes" else DaskBackend()  # None: worker processes
            dask_backend.WORKER_START = LOCAL.get(run) or start
            name = "processes"
            if backend is not None:
                name = f"dask_local_cluster_{dask_backend.WORKER_START}"
            name += f"_{i}" if name in out else ""  # a run named twice (--runs a,b,a,b)
            out[name] = _timed(
                lambda f=root / f"{run}-{i}", b=backend: _ended(
                    run_study(study, f, workers=workers, backend=b)
                )
            )
        dask_backend.WORKER_START = start
        if "client" not in runs and "workers" not in runs:
            return out
        with local_cluster(workers) as cluster, Client(cluster) as client:
            pids = list(client.run(os.getpid).values())
            # every worker loads its kernels before the timed runs (a cluster in service)
            small = dataclasses.replace(study, games_per_lineup=24 * workers, chunk_games=24)
            run_study(small, root / "warm", backend=DaskBackend(cluster.scheduler_address))
            for parts in ("client", "workers"):
                if parts not in runs:
                    continue
                backend = DaskBackend(scheduler=cluster.scheduler_address, parts=parts)
                out[f"dask_running_cluster_parts_{parts}"] = _timed(
                    lambda b=backend, p=parts: run_study(study, root / f"r{p}", backend=b),
                    pids,
                )
    finally:
        dask_backend.WORKER_START = start
        shutil.rmtree(root, ignore_errors=True)
    out["load_after"] = os.getloadavg()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--tasks", type=int, default=1000, help="empty tasks (0: none)")
    parser.add_argument("--config", help="a study config to play both ways")
    parser.add_argument("--chunk-games", type=int, help="override the study's chunk_games")
    parser.add_argument(
        "--runs", default=",".join(RUNS), help=f"study runs to time (default: {','.join(RUNS)})"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: dict[str, Any] = {"cpus": os.cpu_count()}
    if args.tasks:
        results["empty_tasks"] = task_overhead(args.workers, args.tasks)
    if args.config:
        runs = args.runs.split(",")
        results["study"] = study_runs(args.config, args.workers, args.chunk_games, runs)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for name, values in results.items():
        print(f"{name}: {values}")


if __name__ == "__main__":
    main()
