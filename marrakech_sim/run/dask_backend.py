"""Playing a run's chunks as Dask tasks: a LocalCluster on this machine, or a cluster.

`DaskChunks` is the runner's `run.backend.Backend` on Dask: the runner hands it the
chunks to play and gets their `ChunkResult`s back, as from its worker processes;
everything else about a run (the folder, the manifest, resume, the stopping rule,
`verify`) stays the runner's. Each chunk is one task
(`play_chunk` on whole blocks, seeded by the plan), so the tables do not depend on which
worker played what, nor on a worker lost mid-run: the scheduler runs its unfinished
tasks again elsewhere, and a chunk's parts are written whole, once, under the chunk's
own name.

Who writes the part files (`DaskBackend.parts`):

- "client" (default): the task encodes its chunk's three Parquet parts and returns the
  bytes; this process writes them. No shared folder is needed, and a chunk that is not
  wanted any more (a stopping rule decided, Ctrl-C) writes nothing.
- "workers": the task writes its parts into the run folder itself, which every worker
  must reach at the same path (a shared file system). Nothing but a small report
  crosses the network: for clusters whose games outrun one client's network or disk.

A task also returns the log records its chunk made; they are logged here, so worker
records reach the run's log as with worker processes.

A study with plug-in strategies (games of the Python loop) plays each chunk in a worker
process of the Dask worker's own (`run.pool.ChunkPool`, one per Dask worker thread, kept
for the session): a strategy that calls `os._exit` or segfaults then ends only its game
under the process backend's replay-then-fault rule, the decision time limit
(`decision_seconds`, a SIGALRM in that process's main thread) and the worker memory bound
hold, and a stopped worker is replaced. Compiled line-ups run no strategy code and play
in the task's thread. `distributed` is imported only
when a run uses this backend (`pip install 'marrakech_sim[dask]'`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable, Generator, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from marrakech_sim import runfolder
from marrakech_sim.errors import ClusterError, ConfigError, MissingDependency
from marrakech_sim.run.chunk import ChunkResult, Prepared, play_chunk, write_chunk
from marrakech_sim.run.config import Study
from marrakech_sim.run.pool import (
    WORKER,
    ChunkPool,
    end_with_parent,
    game_limit,
    ignore_hang_up,
    log_chunk,
    worker_chunk,
    worker_memory_mb,
)
from marrakech_sim.run.provenance import code_digest

if TYPE_CHECKING:
    from distributed import Client, Future, LocalCluster, as_completed

log = logging.getLogger(__name__)

PARTS = ("client", "workers")
INSTALL_HINT = "pip install 'marrakech_sim[dask]'"
CONNECT_TIMEOUT_S = 30
# Dask's background work in every process of a LocalCluster, measured idle on 2 cores
# (benchmarks/bench_dask.py): 0.118 CPU-seconds a second by default, 0.018 with these.
# The workers' statistical profiler samples the busy thread every 10 ms; nobody reads it.
QUIET_CLUSTER = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.interval": "5s",  # memory and CPU samples
    "distributed.admin.tick.interval": "1s",  # the event-loop health check
    # each worker and nanny reads its worker's memory 10 times a second by default; a
    # chunk's memory is bounded (its games' buffers), so once a second is plenty
    "distributed.worker.memory.monitor-interval": "1s",
    # moving queued tasks between workers: with two tasks per thread in flight and equal
    # workers there is nothing to balance, and it runs every second
    "distributed.scheduler.work-stealing": False,
    # a daemonic process may not start processes: the workers start the processes that
    # play plug-in strategies (module docstring); those end with their worker
    # (run.pool.end_with_parent)
    "distributed.worker.daemon": False,
}
# How a LocalCluster's nannies start their workers: forked by multiprocessing's fork
# server, a process of one thread that imports FORKSERVER_PRELOAD and, for a run's own
# cluster, loads the run's kernels (run.fork_server), once per process. Forked from the
# run's process instead (as here before, on Python < 3.12), a worker copied every lock of
# it as it stood, and the nannies fork from threads of their own while others run (the
# cluster's event loop, a log handler, a progress bar): a lock another thread held at
# that instant stayed held in the worker for ever. A thread writing to a buffered
# sys.stderr holds its lock through each write, and multiprocessing flushes stderr before
# it starts a process (a worker's players of plug-in strategies): with such a thread,
# 10 clusters of 10 had a worker stuck on its first flush, and 5 and 6 runs of 8 hung
# (tools/fork_lock_repro.py; a full test suite hung so once); from the fork server, 0 of
# 10 and 0 of 8. The CPU seconds of a run of the default study on 2 workers, all its
# processes (benchmarks/bench_dask.py, 2 shared cores, 4 runs of each): forked from the
# run's process 9.5-10.2, forked by the fork server 13.0-14.1 (the server's 1.3 as it
# starts and 0.4 as it ends, once; a worker plays as a forked one does), spawned as Dask
# does by default 14.9-16.5 (each worker imports Dask and the package and loads the
# kernels: 1.8 more); wall 4.9-5.1 s, 7.4 s and 7.6-7.7 s on a quiet machine.
WORKER_START = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
# what the fork server imports as it starts: run.fork_server first (it ignores Ctrl-C and
# loads a run's kernels), then what every worker imports
FORKSERVER_PRELOAD = ["marrakech_sim.run.fork_server", "distributed", __name__]
# how a Dask worker starts its players of plug-in strategies (module docstring): forked,
# they inherit its plan and loaded kernels; Python 3.12 warns against forking a process
# with threads, as a Dask worker is, so there they are spawned. A player stuck on a lock
# its fork copied is replaced (run.pool.SILENT_SECONDS).
FORK_PLAYERS = "fork" in multiprocessing.get_all_start_methods() and sys.version_info < (3, 12)
# tasks queued per worker thread: enough to keep every thread busy between two results,
# few enough that a stopping rule or Ctrl-C leaves little unwanted work behind
TASKS_PER_THREAD = 2


@dataclasses.dataclass(frozen=True, slots=True)
class DaskBackend:
    """Run the chunks as Dask tasks.

    scheduler: a running scheduler's address (`tcp://HOST:PORT`); None starts a
    LocalCluster on 127.0.0.1 with the run's worker count (one thread per worker
    process). parts: who writes the part files, "client" or "workers" (module docstring).
    """

    scheduler: str | None = None
    parts: str = "client"

    def __post_init__(self) -> None:
        require_distributed()
        if self.parts not in PARTS:
            raise ConfigError(
                f"parts written by {self.parts!r}; allowed: {', '.join(map(repr, PARTS))}"
            )
        if self.scheduler is not None and "://" not in self.scheduler:
            raise ConfigError(
                f"scheduler address {self.scheduler!r}; give it with its protocol, "
                "as in 'tcp://HOST:8786'"
            )

    def describe(self, workers: int) -> dict[str, Any]:
        """The session's backend, for the manifest."""
        return {
            "backend": "dask",
            "scheduler": self.scheduler or "a LocalCluster on 127.0.0.1",
            "workers": workers if self.scheduler is None else "the cluster's",
            "parts_written_by": self.parts,
        }


def require_distributed() -> None:
    """Raise MissingDependency (saying how to install it) unless `distributed` imports."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise MissingDependency(
            f"the dask backend needs Dask's distributed scheduler: {INSTALL_HINT}"
        ) from None


class DaskChunks:
    """The `run.backend.Backend` of a run with `backend=DaskBackend(...)`: its chunks as
    Dask tasks, on a LocalCluster of `workers` processes or on the backend's scheduler.

    Results come in the order chunks finish. `close(stop=True)` stops early: with
    parts="workers" that waits for the chunks already running (their parts must land
    before the runner tidies the folder); otherwise they are cancelled.
    """

    def __init__(self, backend: DaskBackend, workers: int) -> None:
        self.backend = backend
        self.cluster_workers = workers
        self._stack = contextlib.ExitStack()
        self._job: tuple[Client, Prepared, str, Path, str, _Isolation] | None = None
        self._results: Generator[ChunkResult, None, None] | None = None

    @property
    def workers(self) -> int | None:
        """A LocalCluster's worker processes; None for a cluster at a scheduler, whose
        workers are its own."""
        return self.cluster_workers if self.backend.scheduler is None else None

    def describe(self) -> dict[str, Any]:
        return self.backend.describe(self.cluster_workers)

    def start(self, prep: Prepared, run_dir: Path, writer: str) -> None:
        backend, workers = self.backend, self.cluster_workers
        if backend.scheduler is None and workers < 1:
            raise ConfigError(f"workers {workers}: a LocalCluster needs at least 1 worker")
        study_key = f"{prep.study.name}-{uuid.uuid4().hex[:8]}"  # this session's study
        # the bounds of the processes that play plug-in strategies (module docstring): a
        # LocalCluster's workers share this machine; a cluster's workers size their own
        isolation = _Isolation(
            game_limit(prep),
            worker_memory_mb(prep.study, workers)
            if backend.scheduler is None
            else prep.study.worker_memory_mb,
        )
        try:
            client = self._stack.enter_context(_client(backend.scheduler, workers, prep))
        except BaseException:
            self._stack.close()
            raise
        self._job = (client, prep, study_key, run_dir, writer, isolation)

    def play(self, todo: Sequence[int]) -> Iterator[ChunkResult]:
        if self._job is None:
            raise RuntimeError("DaskChunks.play before start")
        client, prep, study_key, run_dir, writer, isolation = self._job
        self._results = _play(
            client, prep, study_key, run_dir, list(todo), self.backend, writer, isolation
        )
        return self._results

    def close(self, *, stop: bool = False) -> None:
        results, self._results, self._job = self._results, None, None
        try:
            if results is not None:
                results.close()  # (GeneratorExit in _play: waits or cancels, as above)
        finally:
            self._stack.close()


@contextlib.contextmanager
def local_cluster(
    workers: int, *, method: str | None = None, warm: Prepared | None = None
) -> Iterator[LocalCluster]:
    """A LocalCluster of `workers` single-thread worker processes, on 127.0.0.1 only,
    for the block's length (a context manager).

    Every port it opens (scheduler, nannies, workers, dashboard) is on the loopback
    address, so nothing outside this machine can reach it. method: how its nannies start
    the workers, a multiprocessing start method (default `WORKER_START`). warm: a study
    whose kernels a fork server this starts loads for the workers (run.fork_server).
    """
    require_distributed()
    import dask

    method = method or WORKER_START
    settings: dict[str, Any] = dict(QUIET_CLUSTER)
    # read as each nanny starts its worker, a replacement for a lost one too
    starts = {"distributed.worker.multiprocessing-method": method}
    # read when the scheduler and the nannies start; the nannies hand them to the workers
    with dask.config.set({**settings, **starts}):
        if method == "forkserver":
            _start_fork_server(warm)
        cluster = _new_cluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            scheduler_port=0,
            dashboard_address="127.0.0.1:0",  # a free port: 8787 may be another cluster's
            # a task's error reaches the run as its exception; the rest (a heartbeat
            # racing the shutdown) is noise on the run's terminal
            silence_logs=logging.CRITICAL,
            preload=[__name__],  # dask_setup below, in every worker as it starts
        )
    # a nanny reads these each time it starts a worker, a replacement for a lost one too
    # (which would otherwise be daemonic, and play plug-ins unprotected)
    with cluster, dask.config.set({"distributed.worker.daemon": False, **starts}):
        yield cluster


def _start_fork_server(warm: Prepared | None) -> None:
    """Have multiprocessing's fork server import FORKSERVER_PRELOAD as it starts; with
    `warm`, start it now, handing it that study (run.fork_server.STUDY, set here only
    until the server has started). One already running keeps what it loaded."""
    import multiprocessing.forkserver

    from distributed.utils import get_mp_context

    from marrakech_sim.run import fork_server

    # Dask sets its own list on its first call (distributed and the packages it uses,
    # which the package imports too): ours replaces it
    context: Callable[[], Any] = get_mp_context
    context().set_forkserver_preload(FORKSERVER_PRELOAD)
    if warm is None:  # it starts with the first worker
        return
    os.environ[fork_server.STUDY] = fork_server.encode(warm.study)
    try:
        multiprocessing.forkserver.ensure_running()
    finally:
        del os.environ[fork_server.STUDY]


def dask_setup(worker: Any) -> None:
    """Dask's preload hook, run in a LocalCluster's workers as they start (their parent is
    the fork server, or the run's process where it spawns them, `WORKER_START`).

    Ctrl-C reaches the whole process group; the run stops the cluster itself (as with
    worker processes, `run.pool`), so the workers need not die with a traceback each.
    A worker forked from the run's process (`local_cluster(method="fork")`) drops what it
    inherited of the run's signal and log handling.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    ignore_hang_up()
    # ended by the kernel with its parent, as run.pool's workers are. A kill -9 of the run
    # ends the workers through Dask's own watch (a pipe whose other end only the run's
    # process holds); the fork server then ends with them. That watch fails for workers
    # forked from one process: when two nannies start at once, each worker can inherit
    # the other's end, and after a kill -9 of the run both lived on (seen once in a full
    # test suite)
    end_with_parent()
    # a forked worker has the run's handler (SIGTERM as Ctrl-C, run.runner): the nanny's
    # SIGTERM must end it
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # and the run's log handlers (run.pool.run_logging: run.log), which
    # would log each record a second time: its records travel back with its results
    logging.getLogger("marrakech_sim").handlers.clear()


@contextlib.contextmanager
def _client(scheduler: str | None, workers: int, prep: Prepared) -> Iterator[Client]:
    if scheduler is None:
        with local_cluster(workers, warm=prep) as cluster, _new_client(cluster) as client:
            yield client
        return
    client = _connect(scheduler)
    with client:
        yield client


def _connect(scheduler: str) -> Client:
    """A client of the scheduler at `scheduler`, or ClusterError within about twice
    CONNECT_TIMEOUT_S: also when something that is not a Dask scheduler listens there
    (an HTTP server accepts and never answers the handshake; another sends bytes that read
    as a frame of exabytes)."""
    box: dict[str, Any] = {}

    def connect() -> None:
        try:
            box["client"] = _new_client(scheduler, timeout=CONNECT_TIMEOUT_S)
        except Exception as exc:  # OSError, a malformed frame (ValueError, MemoryError), ...
            box["error"] = exc

    thread = threading.Thread(target=connect, name="dask-connect", daemon=True)
    thread.start()
    thread.join(2 * CONNECT_TIMEOUT_S + 1)
    if thread.is_alive():
        raise ClusterError(
            f"{scheduler!r} accepts connections but no Dask scheduler answers there within "
            f"{2 * CONNECT_TIMEOUT_S + 1:.0f} s (another server on that port?); start one with "
            "`dask scheduler` (docs/cluster.md)"
        )
    if "error" in box:
        exc = box["error"]
        raise ClusterError(
            f"no Dask scheduler answers at {scheduler!r} ({type(exc).__name__}: "
            f"{runfolder.one_line(exc)}); start one with `dask scheduler` (docs/cluster.md)"
        ) from None
    client: Client = box["client"]
    return client


@dataclasses.dataclass(frozen=True, slots=True)
class _Done:
    """What a task sends back: the chunk's report, its parts' bytes, its log records."""

    result: ChunkResult
    parts: tuple[bytes, bytes, bytes] | None  # (games, seats, moves); None: written there
    records: list[logging.LogRecord]


def _play(
    client: Client,
    prep: Prepared,
    study_key: str,
    run_dir: Path,
    todo: list[int],
    backend: DaskBackend,
    writer: str,
    isolation: _Isolation,
) -> Generator[ChunkResult, None, None]:
    from distributed import KilledWorker

    study = prep.study  # small; in every task, so no worker holds data others need
    level = logging.getLogger("marrakech_sim").getEffectiveLevel()
    folder = str(run_dir) if backend.parts == "workers" else None
    digest = code_digest()
    pending = list(reversed(todo))  # popped from the end: chunks go out in order
    in_flight: dict[Any, int] = {}
    finished = _as_completed()

    threads = [0, 0.0]  # worker threads, when counted: workers may come and go

    def top_up() -> None:
        if time.monotonic() - threads[1] > 1.0:  # a scheduler round trip, not per chunk
            threads[:] = [_threads(client), time.monotonic()]
        while pending and len(in_flight) < max(2, TASKS_PER_THREAD * int(threads[0])):
            chunk = pending.pop()
            future = client.submit(
                _play_task,
                study,
                study_key,
                chunk,
                folder,
                writer,
                level,
                digest,
                isolation,
                key=f"marrakech-chunk-{chunk:06d}-{study_key}",
                pure=False,
            )
            in_flight[future] = chunk
            _add(finished, future)

    try:
        top_up()
        for future in finished:
            chunk = in_flight.pop(future)
            try:
                done: _Done = future.result()
            except KilledWorker as exc:
                raise ClusterError(
                    f"chunk {chunk} was lost with every worker that tried it ({exc}); "
                    "is a worker running out of memory?"
                ) from None
            future.release()
            for record in done.records:
                _forward(record)
            if done.parts is not None:
                # as write_chunk: moves and seats first, a chunk is done once games exists
                for name, data in zip(("moves", "seats", "games"), done.parts[::-1], strict=True):
                    runfolder.write_part_file(run_dir, name, chunk, [data])
            top_up()
            yield done.result
    except GeneratorExit:  # the runner stops early
        if backend.parts == "workers":  # a running task cannot be stopped: let it land
            _wait(list(in_flight))
        raise
    finally:
        _cancel(client, list(in_flight))


# distributed's calls are untyped: each goes through one typed function here


def _new_cluster(**options: Any) -> LocalCluster:
    from distributed import LocalCluster

    make: Callable[..., LocalCluster] = LocalCluster
    return make(**options)


def _new_client(address: str | LocalCluster, **options: Any) -> Client:
    from distributed import Client

    make: Callable[..., Client] = Client
    return make(address, **options)


def _as_completed() -> as_completed:
    """An empty `as_completed` iterator that futures are added to."""
    from distributed import as_completed

    make: Callable[[], as_completed] = as_completed
    return make()


def _add(finished: as_completed, future: Future[Any]) -> None:
    add: Callable[[Future[Any]], None] = finished.add
    add(future)


def _threads(client: Client) -> int:
    """The worker threads of the client's cluster now."""
    nthreads: Callable[[], dict[str, int]] = client.nthreads
    return sum(nthreads().values())


def _wait(futures: list[Future[Any]]) -> None:
    from distributed import wait

    wait_for: Callable[[list[Future[Any]]], object] = wait
    wait_for(futures)


def _cancel(client: Client, futures: list[Future[Any]]) -> None:
    cancel: Callable[[list[Future[Any]]], object] = client.cancel
    cancel(futures)


def _forward(record: logging.LogRecord) -> None:
    """Hand a worker's record to this process's logger of the same name."""
    logger = logging.getLogger(record.name)
    if logger.isEnabledFor(record.levelno):
        logger.handle(record)


# ---- on the worker -------------------------------------------------------------------

_LOCAL = threading.local()  # per worker thread: play_chunk reuses its Prepared's buffers


@dataclasses.dataclass(frozen=True, slots=True)
class _Isolation:
    """The bounds of the processes a Dask worker plays plug-in strategies in."""

    game_seconds: float  # a game past it has its process killed (run.pool.game_limit)
    memory_mb: int | None  # what such a process may grow by; None: its machine's share


def _play_task(
    study: Study,
    study_key: str,
    chunk: int,
    run_dir: str | None,
    writer: str,
    level: int,
    digest: str,
    isolation: _Isolation,
) -> _Done:
    """One chunk on a worker: play it, write or encode its parts, keep its log records."""
    if code_digest() != digest:  # before anything is written
        raise ClusterError(
            f"worker {_worker_name()} runs other marrakech_sim code (code digest "
            f"{code_digest()}; the client's is {digest}), which may play other games: "
            "install the same version on every worker"
        )
    prep = getattr(_LOCAL, "prepared", None)
    if prep is None or _LOCAL.study_key != study_key:
        prep = Prepared(study)
        _LOCAL.prepared = prep  # one study at a time per thread
        _LOCAL.study_key = study_key
        _close_pool()
    with _records(level) as records:
        if not prep.match_compiled.all() and _can_start_processes():
            result, parts = _play_isolated(prep, chunk, run_dir, writer, isolation)
        else:
            result, parts = _play_here(prep, chunk, run_dir, writer)
            log_chunk(result)
    return _Done(result, parts, records)


def _play_here(
    prep: Prepared, chunk: int, run_dir: str | None, writer: str
) -> tuple[ChunkResult, tuple[bytes, bytes, bytes] | None]:
    """Play a chunk in this thread; write its parts into run_dir, or return their bytes."""
    result, tables = play_chunk(prep, chunk, reuse_buffers=True)
    if run_dir is not None:
        digests = write_chunk(Path(run_dir), chunk, tables, writer)
        return dataclasses.replace(result, digests=digests), None
    return _with_files(result, tables, writer)


def _play_isolated(
    prep: Prepared,
    chunk: int,
    run_dir: str | None,
    writer: str,
    isolation: _Isolation,
) -> tuple[ChunkResult, tuple[bytes, bytes, bytes] | None]:
    """Play a chunk in this thread's worker process (started on first use, replaced when
    it dies: `ChunkPool.play`'s replay-then-fault rule), which writes its parts into
    run_dir or sends their bytes back."""
    pool = getattr(_LOCAL, "pool", None)
    if pool is None:
        method = "fork" if FORK_PLAYERS else "spawn"  # a fork inherits the plan and kernels
        task = worker_chunk if run_dir is not None else _encoded_chunk
        pool = ChunkPool(
            prep,
            Path(run_dir) if run_dir is not None else None,
            1,
            method,
            writer,
            task=task,
            game_seconds=isolation.game_seconds,
            memory_mb=isolation.memory_mb,
        )
        _LOCAL.pool = pool
    try:
        (reply,) = list(pool.play([chunk]))
    except BaseException:
        _close_pool(terminate=True)  # a fresh one for the next chunk
        raise
    if run_dir is not None:
        return reply, None
    result, parts = cast(tuple[ChunkResult, tuple[bytes, bytes, bytes]], reply)
    return result, parts


def _encoded_chunk(chunk: int, lost: dict[int, str] | None = None) -> Any:
    """`ChunkPool`'s task for parts="client": play a chunk (its `lost` games recorded as
    faults) and return its result with its parts' bytes."""
    prep = WORKER["prep"]
    result, tables = play_chunk(prep, chunk, reuse_buffers=True, lost=lost)
    log_chunk(result)
    return _with_files(result, tables, WORKER["writer"])


def _close_pool(*, terminate: bool = False) -> None:
    """End this thread's worker process, if it has one (a new study, or a failed chunk)."""
    pool = getattr(_LOCAL, "pool", None)
    _LOCAL.pool = None
    if pool is not None:
        pool.close(terminate=terminate)


def _can_start_processes() -> bool:
    """Whether this process may start worker processes: a daemonic one may not (a Dask
    worker started with `distributed.worker.daemon` true, the default of `dask worker`);
    its chunks then play in the task's thread, with no process of their own, and say so."""
    if not multiprocessing.current_process().daemon:
        return True
    if not getattr(_LOCAL, "warned", False):
        _LOCAL.warned = True
        log.warning(
            "worker %s is a daemonic process, so plug-in strategies play in its threads: "
            "a strategy that ends its process or stops there is not isolated, and "
            "decision_seconds is checked only when a decision returns; start the workers "
            "with DASK_DISTRIBUTED__WORKER__DAEMON=False (docs/cluster.md)",
            _worker_name(),
        )
    return False


def _with_files(
    result: ChunkResult, tables: tuple[runfolder.Part, ...], writer: str
) -> tuple[ChunkResult, tuple[bytes, bytes, bytes]]:
    """A chunk's result with its parts' digests, and its (games, seats, moves) parts as
    Parquet files' bytes (the client writes them; the worker digests them)."""
    games, seats, moves = (b"".join(runfolder.parquet_file(t, writer)) for t in tables)
    digests = {
        runfolder.part_key(name, result.chunk): runfolder.data_digest([data])
        for name, data in (("games", games), ("seats", seats), ("moves", moves))
    }
    return dataclasses.replace(result, digests=digests), (games, seats, moves)


def _worker_name() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except ValueError:  # not inside a worker (tests calling the task directly)
        return f"pid {os.getpid()}"


class _Keep(logging.Handler):
    """Keep this thread's records, made plain so they pickle."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []
        self.thread = threading.get_ident()

    def emit(self, record: logging.LogRecord) -> None:
        # records this thread handles: its own, and those its worker process sends
        # (run.pool hands them to the loggers in the thread that reads them)
        if threading.get_ident() != self.thread:
            return
        if record.exc_info:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
            record.exc_info = None
        record.msg, record.args = record.getMessage(), None
        if record.process != os.getpid():  # from the process the chunk played in (isolation)
            record.processName = f"{multiprocessing.current_process().name}/{record.processName}"
        self.records.append(record)


@contextlib.contextmanager
def _records(level: int) -> Iterator[list[logging.LogRecord]]:
    """Collect the 'marrakech_sim' records this thread makes (at `level` and above)."""
    logger = logging.getLogger("marrakech_sim")
    keep = _Keep()
    logger.addHandler(keep)
    # the records travel back with the result; the worker's own log stays quiet
    logger.setLevel(level)
    logger.propagate = False
    try:
        yield keep.records
    finally:
        logger.removeHandler(keep)
