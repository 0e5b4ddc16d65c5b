"""Worker processes: a pool that plays chunks, and the run's logging from every process."""

from __future__ import annotations

import contextlib
import logging
import logging.handlers
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from marrakech_sim import runfolder
from marrakech_sim.run.chunk import ChunkResult, Prepared, play_chunk, play_compiled, write_chunk
from marrakech_sim.run.config import Study

log = logging.getLogger(__name__)


WORKER: dict[str, Any] = {}


def init_worker(
    study: Study,
    run_dir: str | None,
    log_queue: Any,
    level: int,
    prepared: Any = None,
    writer: str = "encoder",
) -> None:
    # Ctrl-C goes to the whole process group; the parent stops the pool
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if log_queue is not None:  # spawn / forkserver: records go to the parent's listener
        logger = logging.getLogger("marrakech_sim")
        logger.handlers[:] = [logging.handlers.QueueHandler(log_queue)]
        logger.setLevel(level)
        logger.propagate = False
    np.random.seed(0)  # forked workers share numpy's global state; nothing here uses it
    WORKER["prep"] = prepared if prepared is not None else Prepared(study)
    WORKER["run_dir"] = Path(run_dir) if run_dir is not None else None
    WORKER["writer"] = writer
    if prepared is None:
        WORKER["prep"].warm_up()


def worker_chunk(chunk: int) -> ChunkResult:
    prep = WORKER["prep"]
    run_dir = WORKER["run_dir"]
    result, tables = play_chunk(prep, chunk, reuse_buffers=True)
    if run_dir is not None:
        write_chunk(run_dir, chunk, tables, WORKER["writer"])
    log_chunk(result)
    return result


def worker_play_only(chunk: int) -> ChunkResult:
    """Play a chunk without building records (for bench)."""
    prep = WORKER["prep"]
    started = time.perf_counter()
    cg = prep.plan.chunk_games(chunk)
    for ri, r in enumerate(prep.rulesets):
        where = np.flatnonzero(prep.match_ruleset[cg.match_id] == ri)
        if len(where):
            play_compiled(prep, r, cg, where, records=False)
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


@contextlib.contextmanager
def worker_pool(
    study: Study,
    run_dir: Path | None,
    workers: int,
    start_method: str | None,
    prep: Prepared,
    writer: str = "encoder",
) -> Iterator[Any]:
    """A worker pool whose log records reach this process's 'marrakech_sim' handlers."""
    method = start_method or default_start_method()
    ctx = multiprocessing.get_context(method)
    logger = logging.getLogger("marrakech_sim")
    level = logger.getEffectiveLevel()
    queue = listener = None
    if method != "fork":
        queue = ctx.Queue(-1)
        listener = logging.handlers.QueueListener(queue, Forward(), respect_handler_level=False)
        listener.start()
    # forked workers inherit the prepared plan and compiled code; others rebuild them
    inherited = prep if method == "fork" else None
    pool = ctx.Pool(
        workers,
        initializer=init_worker,
        initargs=(study, str(run_dir) if run_dir else None, queue, level, inherited, writer),
    )
    try:
        yield pool
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
        if listener is not None:
            listener.stop()  # drains the queue first
        if queue is not None:
            queue.close()
            queue.join_thread()


class Forward(logging.Handler):
    """Hand a worker's record to this process's logger of the same name."""

    def emit(self, record: logging.LogRecord) -> None:
        logger = logging.getLogger(record.name)
        if logger.isEnabledFor(record.levelno):
            logger.handle(record)


@contextlib.contextmanager
def run_logging(run_dir: Path, console_level: int = logging.WARNING) -> Iterator[None]:
    """Log to run_dir/run.log (INFO) and stderr, from this process and its workers.

    For the CLI (process-wide logging is the entry point's business, not the library's).
    The handlers are wrapped with multiprocessing-logging's MultiProcessingHandler so
    forked workers' records come through its queue; removed and drained on exit.
    """
    from multiprocessing_logging import MultiProcessingHandler

    run_dir.mkdir(parents=True, exist_ok=True)
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(processName)s %(name)s: %(message)s")
    file_handler = logging.FileHandler(run_dir / runfolder.LOG_FILE)
    file_handler.setLevel(logging.INFO)
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(console_level)
    console.setFormatter(logging.Formatter("%(levelname)s %(processName)s: %(message)s"))
    file_handler.setFormatter(fmt)
    logger = logging.getLogger("marrakech_sim")
    wrapped = [
        MultiProcessingHandler(f"mp-handler-{i}", sub_handler=h)
        for i, h in enumerate((file_handler, console))
    ]
    old_level, old_propagate = logger.level, logger.propagate
    for h in wrapped:
        logger.addHandler(h)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield
    finally:
        for h in wrapped:
            logger.removeHandler(h)
            h.close()  # waits until its queue is drained
        logger.setLevel(old_level)
        logger.propagate = old_propagate
