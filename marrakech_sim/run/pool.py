"""Worker processes: a pool that plays chunks, and the run's logging from every process."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import faulthandler
import logging
import logging.handlers
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np

from marrakech_sim import runfolder
from marrakech_sim.errors import RunFolderError, StrategyError
from marrakech_sim.play.game import StopPlay
from marrakech_sim.run.chunk import (
    ChunkResult,
    Prepared,
    play_chunk,
    play_group,
    write_chunk,
)
from marrakech_sim.run.config import Study

log = logging.getLogger(__name__)


WORKER: dict[str, Any] = {}

#: a chunk whose worker dies this many times outside any game (not a strategy's doing:
#: a kill from outside, a full disk) ends the run with an error
DEATHS_OUTSIDE_GAMES = 3
#: seconds a worker has to end when the pool closes, before it is killed
STOP_SECONDS = 10.0
#: seconds between the pool's looks at its workers (deaths are seen at once; this is
#: how late a worker stuck past its game time limit is noticed)
WATCH_SECONDS = 0.5
#: seconds a busy worker may stay stopped (SIGSTOP, a debugger) before it is replaced
STOPPED_SECONDS = 10.0


#: the signals that stop a run (run.runner), held while a worker is forked
STOP_SIGNALS = {
    signal.SIGINT,
    signal.SIGTERM,
    *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else []),
}


#: seconds a busy worker may use no CPU at all outside a Python-loop game (whose own
#: limit is game_seconds) before it is replaced as silent: blocked for good (a lock a
#: fork copied taken, a hung file system). Playing or writing uses CPU all the time.
SILENT_SECONDS = 120.0


def _process_state(pid: int) -> tuple[str, int] | None:
    """A process's state letter and CPU time in clock ticks (user + system) from /proc;
    None where there is none (not Linux, or the process is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        return fields[0], int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None


def init_worker(
    conn: Any,
    prepared: Prepared,
    forked: bool,
    run_dir: str | None,
    level: int,
    writer: str = "encoder",
    memory_mb: int | None = None,
    marker: Any = None,
) -> None:
    """Make this process a worker; conn: its pipe to the pool, which its log records
    take too (forked, it would otherwise write through copies of the parent's handlers).

    prepared: the run's plan, inherited (forked: with the kernels the parent loaded) or
    unpickled (spawn, forkserver: it then loads the kernels itself, `Prepared.warm_up`)."""
    # Ctrl-C goes to the whole process group; the parent stops the pool
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop)  # not the parent's handler (forked)
    ignore_hang_up()
    # a forked worker starts with these blocked (ChunkPool._start): a SIGTERM that came
    # since is handled here, by _stop
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    logger = logging.getLogger("marrakech_sim")
    # QueueHandler formats the record and puts it: _PipeLog sends it (it has no get)
    logger.handlers[:] = [logging.handlers.QueueHandler(cast(Any, _PipeLog(conn)))]
    logger.setLevel(level)
    logger.propagate = False
    faulthandler.disable()  # a strategy's segfault is reported as a fault, not on stderr
    if memory_mb is not None:
        limit_memory(memory_mb)
    np.random.seed(0)  # forked workers share numpy's global state; nothing here uses it
    WORKER["prep"] = prepared
    prepared.workspace.marker = marker
    WORKER["run_dir"] = Path(run_dir) if run_dir is not None else None
    WORKER["writer"] = writer
    if not forked:
        prepared.warm_up()


def ignore_hang_up() -> None:
    """Ignore SIGHUP (the terminal closed, sent to the whole process group): the parent
    stops the run and its workers, which end with it (end_with_parent)."""
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, signal.SIG_IGN)


def worker_memory_mb(study: Study, workers: int) -> int:
    """The memory (MB) each of `workers` workers may grow by: the study's worker_memory_mb,
    else the machine's memory shared among the workers and the main process (>= 1 GB)."""
    if study.worker_memory_mb is not None:
        return study.worker_memory_mb
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1 << 20)
    return max(1024, total // (workers + 1))


def game_limit(prep: Prepared) -> float:
    """Seconds a Python-loop game may run before its worker is killed (a strategy stuck
    where the decision watchdog cannot interrupt it): every decision of the longest
    game at its full budget, and half a minute more."""
    turns = max(r.max_turns for r in prep.rulesets)
    return prep.study.decision_seconds * 2 * turns + 30.0


def limit_memory(grow_mb: int) -> None:
    """Bound this process's address space at what it holds now plus `grow_mb` MB
    (RLIMIT_AS): a strategy that allocates past it gets a MemoryError, a fault of its game,
    instead of wedging the machine."""
    import resource

    try:
        with open("/proc/self/statm") as f:  # Linux; elsewhere the bound is not set
            size = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    limit = size + grow_mb * (1 << 20)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def worker_chunk(chunk: int, lost: dict[int, str] | None = None) -> ChunkResult:
    """Play a chunk (its `lost` games recorded as faults) and write its parts."""
    prep = WORKER["prep"]
    run_dir = WORKER["run_dir"]
    result, tables = play_chunk(prep, chunk, reuse_buffers=True, lost=lost)
    if run_dir is not None:
        digests = write_chunk(run_dir, chunk, tables, WORKER["writer"])
        result = dataclasses.replace(result, digests=digests)
    log_chunk(result)
    return result


def worker_play_only(chunk: int, lost: dict[int, str] | None = None) -> ChunkResult:
    """Play a chunk without building records or parts (for bench)."""
    prep = WORKER["prep"]
    started = time.perf_counter()
    cg = prep.plan.chunk_games(chunk)
    for ri, r in enumerate(prep.rulesets):
        where = np.flatnonzero(prep.match_ruleset[cg.match_id] == ri)
        if len(where):
            play_group(prep, r, cg, where, records=False, lost=lost)
    return ChunkResult(chunk, len(cg), 0, 0, None, time.perf_counter() - started, None, None)


def log_chunk(result: ChunkResult) -> None:
    log.info(
        "chunk %d: %d games, %d moves in %.2f s (pid %d)",
        result.chunk,
        result.games,
        result.moves,
        result.seconds,
        os.getpid(),
    )
    if result.errors:
        log.warning(
            "chunk %d: %d game(s) ended in a strategy fault, first: %s",
            result.chunk,
            result.errors,
            result.first_error,
        )


def default_start_method() -> str:
    """fork where the platform has it (workers inherit the compiled kernels), else spawn."""
    return "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"


def end_with_parent() -> None:
    """Have the kernel kill this process when its parent dies (Linux; elsewhere nothing).

    A worker must not outlive the run: killed with its parent, it would go on writing
    parts nobody reads and print broken-pipe tracebacks.
    """
    parent = os.getppid()
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _stop(signum: int, frame: Any) -> None:
    """SIGTERM from the pool: leave the chunk; the process then ends normally, which
    hands its last log records to the run's log (a SIGKILL would lose them). StopPlay,
    not a plain KeyboardInterrupt: a strategy's own KeyboardInterrupt is its game's fault."""
    raise StopPlay


class _PipeLog:
    """A worker's pipe to the pool as a QueueHandler's queue: ("log", record) messages.

    Not a multiprocessing queue shared by the workers: its write lock is a semaphore
    between processes, and a worker killed (or stopped) while its feeder thread held it
    left the lock taken for good, and the run hung when it closed its logs. A pipe per
    worker, with a lock of the worker's own, dies with its worker.
    """

    lock = threading.Lock()  # one per process: the worker's messages do not interleave

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def put_nowait(self, record: logging.LogRecord) -> None:
        self.send(("log", record))

    def send(self, message: tuple[str, Any]) -> None:
        with self.lock:
            self.conn.send(message)


def _worker_main(conn: Any, task: Callable[..., ChunkResult], initargs: tuple[Any, ...]) -> None:
    """A worker's life: play the chunks the pool sends until it sends None (or SIGTERM)."""
    # the pool may stop (SIGTERM) a worker that is still starting
    with contextlib.suppress(KeyboardInterrupt):
        end_with_parent()
        init_worker(conn, *initargs)
        _serve(_PipeLog(conn), task)


def _serve(pipe: _PipeLog, task: Callable[..., ChunkResult]) -> None:
    while True:
        try:
            job = pipe.conn.recv()
        except (EOFError, OSError):  # the pool is gone
            return
        if job is None:
            return
        chunk, lost = job
        reply: tuple[str, Any]
        try:
            reply = ("done", task(chunk, lost))
        except Exception as exc:
            reply = ("failed", exc)
        try:
            pipe.send(reply)
        except Exception:  # an exception that does not pickle goes as its text
            pipe.send(("failed", RuntimeError(f"{type(reply[1]).__name__}: {reply[1]}")))


@dataclasses.dataclass
class _Worker:
    process: Any
    conn: Any
    marker: Any  # shared doubles: chunk, game position in it (-1: none), game start time
    chunk: int | None = None  # the chunk it plays, None when idle
    stopped_at: float | None = None  # when it was first seen stopped (SIGSTOP), if it is
    cpu: tuple[int, float] | None = None  # its CPU time at its last change, and when


class ChunkPool:
    """Worker processes that play chunks, and replace a worker that dies.

    Why not multiprocessing.Pool or concurrent.futures: a Pool's imap waits forever for
    a worker that died (os._exit, a segfault, kill -9), and a ProcessPoolExecutor
    breaks as a whole (BrokenProcessPool) without saying which task killed it. Here each
    worker has its own pipe and a small shared marker (the chunk and the game it is
    playing, written before every Python-loop game), so the pool knows what a dead
    worker was doing:

    - it dies in a game (the marker names one): the chunk is replayed in a fresh
      worker; if the same game kills it again, that game is recorded as a fault
      (end_reason 'error', the death named) and the chunk is replayed once more
      without it. A death that does not repeat (a kill from outside) costs nothing
      but the replay: every game of the chunk is kept, as played.
    - it dies outside any game: the chunk is replayed; after DEATHS_OUTSIDE_GAMES such
      deaths of one chunk the run ends with a StrategyError naming the exits.
    - a game runs past `game_seconds` (a strategy stuck where the decision watchdog's
      signal cannot reach it, in C code): the worker is killed, which is then a death
      in that game.

    Which games a chunk holds, and their results, never depend on which worker played
    them or how often a chunk was replayed.

    As a context manager (``with ChunkPool(...) as pool:``) its workers end with the
    block, killed at once when the block raises.
    """

    def __init__(
        self,
        prep: Prepared,
        run_dir: Path | None,
        workers: int,
        start_method: str | None = None,
        writer: str = "encoder",
        task: Callable[..., ChunkResult] = worker_chunk,
        game_seconds: float | None = None,
        memory_mb: int | None = None,
    ) -> None:
        """memory_mb: what each worker may grow by (default `worker_memory_mb`)."""
        self.method = start_method or default_start_method()
        # a start method's context (fork, spawn, forkserver): they all make processes
        self.ctx: Any = multiprocessing.get_context(self.method)
        self.task = task
        self.game_seconds = game_seconds
        logger = logging.getLogger("marrakech_sim")
        # forked workers inherit the prepared plan and the loaded kernels; the others get
        # the plan pickled (a few kB whatever the study's size: the plan computes its
        # blocks on demand; 24 kB at 10^7 one-game blocks, where the per-block arrays
        # it kept before pickled to 330 MB), which saves each the 0.3 CPU s of planning
        # the study again and keeps it on the parent's plan; they load the kernels
        self.initargs = (
            prep,
            self.method == "fork",
            str(run_dir) if run_dir else None,
            logger.getEffectiveLevel(),
            writer,
            memory_mb if memory_mb is not None else worker_memory_mb(prep.study, workers),
        )
        self.names = prep.names
        self.plan = prep.plan
        self.started = 0  # workers started, replacements included
        self.workers = [self._start() for _ in range(workers)]
        self.deaths = 0  # workers that died (for the log and the tests)
        self.closed = False

    def _start(self) -> _Worker:
        marker = self.ctx.RawArray("d", 3)
        marker[0], marker[1] = -1, -1
        ours, theirs = self.ctx.Pipe()
        self.started += 1
        process = self.ctx.Process(
            name=f"Worker-{self.started}",
            target=_worker_main,
            args=(theirs, self.task, (*self.initargs, marker)),
            daemon=True,
        )
        # a forked child runs this process's signal handlers (the runner's: SIGTERM raises
        # StopPlay) until init_worker replaces them: a SIGTERM from close() then raised in
        # multiprocessing's start of the child, which printed a traceback. Blocked here,
        # the signals wait for init_worker in the child (this process gets them once
        # the child is started)
        before = None
        if self.method == "fork":
            before = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            process.start()
        finally:
            if before is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, before)
        theirs.close()
        return _Worker(process, ours, marker)

    def play(self, chunks: Sequence[int]) -> Iterator[ChunkResult]:
        """Play `chunks`; yield each one's result as it finishes (in any order)."""
        pending = collections.deque(chunks)
        lost: dict[int, dict[int, str]] = {}
        suspect: dict[int, int] = {}  # chunk -> the game its last dead worker was playing
        outside: dict[int, list[str]] = {}  # chunk -> deaths outside any game
        while pending or any(w.chunk is not None for w in self.workers):
            for w in self.workers:
                if w.chunk is None and pending:
                    w.chunk = pending.popleft()
                    w.marker[0], w.marker[1] = w.chunk, -1
                    # a worker that died while idle has a broken pipe: its death is seen
                    # below (sentinel) and the chunk replayed, as any other death
                    with contextlib.suppress(OSError):
                        w.conn.send((w.chunk, lost.get(w.chunk)))
            ready = multiprocessing.connection.wait(
                [w.conn for w in self.workers] + [w.process.sentinel for w in self.workers],
                timeout=WATCH_SECONDS,
            )
            for i, w in enumerate(self.workers):
                reply = _receive(w.conn) if w.conn in ready else None
                if reply is not None:
                    chunk, w.chunk = w.chunk, None
                    if reply[0] == "failed":
                        raise reply[1]
                    yield reply[1]
                    continue
                overtime = self._overtime(w)
                if overtime is not None:
                    w.process.kill()
                    w.process.join()
                if not w.process.is_alive() or w.process.sentinel in ready:
                    w.process.join()
                    self.deaths += 1
                    chunk = w.chunk
                    ended = exit_words(w.process.exitcode)
                    self.workers[i] = self._start()
                    if chunk is None:
                        log.warning("an idle worker died (%s); replaced", ended)
                        continue
                    how = overtime or f"the worker process died ({ended})"
                    game = int(w.marker[1]) if int(w.marker[0]) == chunk else -1
                    self._after_death(chunk, game, how, lost, suspect, outside)
                    pending.appendleft(chunk)

    def _overtime(self, w: _Worker) -> str | None:
        """Why a busy worker is to be killed: stopped (SIGSTOP) for STOPPED_SECONDS,
        silent (no CPU used) for SILENT_SECONDS outside a Python-loop game, or a game
        past game_seconds; else None."""
        if w.chunk is None:
            w.cpu = None
            return None
        now = time.monotonic()
        state = _process_state(w.process.pid)
        if state is not None and state[0] in ("T", "t"):
            w.stopped_at = w.stopped_at if w.stopped_at is not None else now
            if now - w.stopped_at > STOPPED_SECONDS:
                return f"the worker was stopped (SIGSTOP) for {now - w.stopped_at:.0f} s"
        else:
            w.stopped_at = None
        if state is not None and w.marker[1] < 0:
            if w.cpu is None or w.cpu[0] != state[1]:
                w.cpu = (state[1], now)
            elif now - w.cpu[1] > SILENT_SECONDS:
                return f"the worker used no CPU for {now - w.cpu[1]:.0f} s (blocked)"
        else:
            w.cpu = None  # a Python-loop game has its own limit
        if self.game_seconds is None or w.marker[1] < 0:
            return None
        spent = now - w.marker[2]
        if spent <= self.game_seconds:
            return None
        return f"the game ran {spent:.0f} s, past its limit of {self.game_seconds:.0f} s"

    def _after_death(
        self,
        chunk: int,
        game: int,
        how: str,
        lost: dict[int, dict[int, str]],
        suspect: dict[int, int],
        outside: dict[int, list[str]],
    ) -> None:
        if game < 0:
            seen = outside.setdefault(chunk, [])
            seen.append(how)
            log.warning("chunk %d: %s outside any game; replaying the chunk", chunk, how)
            if len(seen) >= DEATHS_OUTSIDE_GAMES:
                raise StrategyError(
                    f"chunk {chunk}: its worker died {len(seen)} times outside any game "
                    f"({'; '.join(seen)})"
                )
            return
        if suspect.get(chunk) == game:
            lost.setdefault(chunk, {})[game] = f"{how}, twice, during this game"
            del suspect[chunk]
            log.warning("chunk %d: game %d killed its worker twice: a fault", chunk, game)
        else:
            suspect[chunk] = game
            log.warning("chunk %d: %s during game %d; replaying the chunk", chunk, how, game)

    def __enter__(self) -> ChunkPool:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        self.close(terminate=kind is not None)

    def close(self, *, terminate: bool = False) -> None:
        """End the workers and the log listener; once.

        terminate: stop them in their chunks (SIGTERM, their log records kept), else
        when they are idle. A worker still there STOP_SECONDS later is killed.
        """
        if self.closed:
            return
        self.closed = True
        for w in self.workers:
            if terminate:
                w.process.terminate()
            else:
                with contextlib.suppress(OSError):
                    w.conn.send(None)
        deadline = time.monotonic() + STOP_SECONDS
        alive = list(self.workers)
        while alive and time.monotonic() < deadline:  # their last log records come too
            ready = multiprocessing.connection.wait(
                [w.conn for w in alive] + [w.process.sentinel for w in alive],
                timeout=deadline - time.monotonic(),
            )
            for w in alive:
                if w.conn in ready:
                    _receive(w.conn)
            alive = [w for w in alive if w.process.is_alive()]
        for w in self.workers:
            if w.process.is_alive():  # stuck (a strategy)
                w.process.kill()
            w.process.join()
            while w.conn.poll() and _receive(w.conn) is not None:  # what is left in it
                pass
            w.conn.close()


def exit_words(code: int | None) -> str:
    """How a process ended, from its exit code: 'exit code 1', 'killed by SIGSEGV'."""
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
    return f"exit code {code}"


class ProcessBackend:
    """The run's chunks played by `workers` worker processes of this machine (a
    `ChunkPool`); the `run.backend.Backend` of `run_study(workers=N)`, N >= 1.

    start_method: how the workers start (default `default_start_method`); forked ones
    inherit the kernels the runner's warm-up loaded.
    """

    def __init__(self, workers: int, start_method: str | None = None) -> None:
        self.workers = workers
        self.start_method = start_method
        self._pool: ChunkPool | None = None
        self._run_dir: Path | None = None

    def describe(self) -> dict[str, Any]:
        return {
            "workers": self.workers,
            "start_method": self.start_method or default_start_method(),
        }

    def start(self, prep: Prepared, run_dir: Path, writer: str) -> None:
        self._run_dir = run_dir
        self._pool = ChunkPool(
            prep, run_dir, self.workers, self.start_method, writer, game_seconds=game_limit(prep)
        )

    def play(self, todo: Sequence[int]) -> Iterator[ChunkResult]:
        if self._pool is None:
            raise RuntimeError("ProcessBackend.play before start")
        return self._pool.play(todo)

    def close(self, *, stop: bool = False) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        pool.close(terminate=stop)
        if pool.deaths and self._run_dir is not None:
            # a worker killed while writing leaves its temporary part
            runfolder.remove_temporaries(self._run_dir)


def _receive(conn: Any) -> tuple[str, Any] | None:
    """A worker's next reply from its pipe, handing the log records before it to this
    process's loggers; None when the pipe holds no reply now (or is closed)."""
    while True:
        try:
            message: tuple[str, Any] = conn.recv()
        except (EOFError, OSError):  # the worker died (perhaps half way through a message)
            return None
        if message[0] != "log":
            return message
        record = message[1]
        logger = logging.getLogger(record.name)
        if logger.isEnabledFor(record.levelno):
            logger.handle(record)
        if not conn.poll():
            return None


@contextlib.contextmanager
def run_logging(run_dir: Path, console_level: int = logging.WARNING) -> Iterator[None]:
    """Log to run_dir/run.log (INFO) and stderr, from this process and its workers.

    For the CLI (process-wide logging is the entry point's business, not the library's).
    Workers' records come through their pipes (ChunkPool) and are handled here.
    """
    if run_dir.exists() and not run_dir.is_dir():
        raise RunFolderError(f"{str(run_dir)!r} is not a folder: give a run folder's name")
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        # opened at the first record: a run refused before it logs anything (a folder
        # that is not a run's, `run_study`) leaves no run.log there
        file_handler = logging.FileHandler(run_dir / runfolder.LOG_FILE, delay=True)
    except OSError as exc:  # /proc/x, a file's name, a read-only or full file system
        raise RunFolderError(
            f"cannot write the run folder {str(run_dir)!r}: {runfolder.describe_os_error(exc)}"
        ) from exc
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(processName)s %(name)s: %(message)s")
    file_handler.setLevel(logging.INFO)
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(console_level)
    console.setFormatter(logging.Formatter("%(levelname)s %(processName)s: %(message)s"))
    file_handler.setFormatter(fmt)
    logger = logging.getLogger("marrakech_sim")
    handlers = (file_handler, console)
    old_level, old_propagate = logger.level, logger.propagate
    for h in handlers:
        logger.addHandler(h)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield
    finally:
        for h in handlers:
            logger.removeHandler(h)
            h.close()
        logger.setLevel(old_level)
        logger.propagate = old_propagate
