"""Running a study: plan, play every chunk in worker processes, keep the run folder whole.

A run is deterministic: per-block seeds come from the run seed (`run.plan`), so the same
config and seed give the same games whatever the number of workers, and an interrupted
run resumed with `resume_run` ends with the same tables as an uninterrupted one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import logging.handlers
import os
import platform
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from marrakech_sim import runfolder
from marrakech_sim.errors import ConfigError, RunFolderError, RunInterrupted
from marrakech_sim.play.game import StopPlay, raise_stop_play
from marrakech_sim.run.backend import Backend, InProcessBackend
from marrakech_sim.run.chunk import (
    WARM_UP_BUDGET,
    ChunkResult,
    Prepared,
    block_totals,
    unreproducible,
)
from marrakech_sim.run.config import Study, study_from_dict
from marrakech_sim.run.dask_backend import DaskBackend, DaskChunks
from marrakech_sim.run.plan import Plan
from marrakech_sim.run.pool import ProcessBackend
from marrakech_sim.run.provenance import check_same_code, code_digest
from marrakech_sim.run.stopping import Stopper, stopping_line
from marrakech_sim.runfolder import Manifest

log = logging.getLogger(__name__)
MANIFEST_SECONDS = 5.0  # run.json (with the parts' digests) is rewritten at most this often


# (games done, games planned, seconds this session, faults this session)
Progress = Callable[[int, int, float, int], None]


SEED_DERIVATION = (
    "block b's game seed = numpy.random.SeedSequence(seed, spawn_key=(b // 1024,))"
    ".generate_state(1024, numpy.uint64)[b % 1024]; every game of a block uses it; "
    "with common_seeds, b is the block's seed key (round * lineups + line-up position: "
    "the rule sets share seeds)"
)


@dataclasses.dataclass(frozen=True, slots=True)
class RunResult:
    """What a finished (or stopped) run produced."""

    run_dir: Path
    games_planned: int
    games_played: int
    games_this_session: int
    seconds: float
    errors: int  # games that ended in a strategy fault (this session)
    stopping: dict[str, Any] | None
    status: str
    replayed: dict[int, str] = dataclasses.field(default_factory=dict)  # damaged chunk -> why


def new_run_id(study: Study) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    return f"{study.name}-{stamp}-{uuid.uuid4().hex[:6]}"


def _manifest(study: Study, prep: Prepared, run_id: str, writer: str) -> Manifest:
    import numba

    from marrakech_sim import __version__

    plan = prep.plan
    manifest = Manifest(
        format_version=(
            runfolder.REPLAY_FORMAT_VERSION if study.replay_only else runfolder.FORMAT_VERSION
        ),
        run_id=run_id,
        created=runfolder.utc_now(),
        program_version=__version__,
        code_digest=code_digest(),
        seed=study.seed,
        config=study.to_dict(),
        games_planned=plan.games_planned,
        blocks=plan.blocks,
        chunks=plan.chunks,
        matches=plan.matches_table(),
        seed_derivation=SEED_DERIVATION,
        moves_columns=[f.name for f in prep.moves_schema],
        status="running",
        games_played=0,
        chunks_played=0,
        stopping=None,
        environment={
            "python": platform.python_version(),
            "numpy": np.__version__,
            "pyarrow": pa.__version__,
            "numba": numba.__version__,
            "platform": platform.platform(),
        },
        sessions=[],
        digests={},  # part -> its digest, recorded as each chunk is done
        writer=writer,
    )
    return manifest.replace(manifest_digest=runfolder.manifest_digest(manifest))


def run_study(
    study: Study | None,
    out_dir: str | Path,
    *,
    resume: bool = False,
    workers: int | None = None,
    start_method: str | None = None,
    progress: Progress | None = None,
    writer: str = "encoder",
    backend: DaskBackend | Backend | None = None,
) -> RunResult:
    """Play a study into a new run folder `out_dir`, or (resume=True) finish the run there.

    resume: go on with the run in `out_dir` (`resume_run`): its study is rebuilt from its
    run.json (`study`, when given, must be that one) and its parts keep their writer.
    workers: processes (default: CPU count); 0 plays in this process. writer: the Parquet
    writer of the parts (`runfolder.WRITERS`; the tables are the same). backend: a
    DaskBackend plays the chunks as Dask tasks instead (`run.dask_backend`; `workers`
    then sizes its LocalCluster); any other `run.backend.Backend` plays them its way
    (`workers` and `start_method` then unused). Raises RunFolderError when `out_dir`
    already holds something (a new run) or no run to resume, RunInterrupted on Ctrl-C.
    """
    runfolder.check_writer(writer)
    run_dir = Path(out_dir)
    if resume:
        return _resume(run_dir, study, workers, start_method, progress, backend)
    if study is None:
        raise TypeError("run_study: give the study to play (None only with resume=True)")
    if not (run_dir / runfolder.MANIFEST).exists():
        # a folder that is not a run's is refused before the lock file is made there
        check_new_folder(run_dir)
    with runfolder.locked(run_dir), _writing(run_dir):
        # under the lock: two runs into one folder cannot both pass
        check_new_folder(run_dir, holding_lock=True)
        prep = Prepared(study)
        manifest = _manifest(study, prep, run_dir.name, writer)
        runfolder.write_manifest(run_dir, manifest)
        return _execute(run_dir, manifest, prep, workers, start_method, progress, backend)


def check_new_folder(run_dir: Path, *, holding_lock: bool = False) -> None:
    """RunFolderError unless `run_dir` can take a new run (missing, or holding only what a
    failed start leaves); an unfinished run there is named with the command resuming it.

    holding_lock: the caller holds the folder's lock (a run.json saying 'running' is then
    a run stopped without time to say so)."""
    if not runfolder.holds_a_run(run_dir):
        return
    status = None
    with contextlib.suppress(RunFolderError):
        status = runfolder.read_manifest(run_dir).status
    if status == "running" and holding_lock:  # then no other writer is running it
        status = "interrupted"
    if status is not None and status not in runfolder.FINISHED:
        raise RunFolderError(
            f"{str(run_dir)!r} holds an unfinished run (status {status!r}): resume it with "
            f"`marrakech run --resume {run_dir}`, or choose a new folder"
        )
    raise RunFolderError(f"{str(run_dir)!r} is not empty: choose a new folder")


def resume_run(
    run_dir: str | Path,
    *,
    workers: int | None = None,
    start_method: str | None = None,
    progress: Progress | None = None,
    backend: DaskBackend | Backend | None = None,
) -> RunResult:
    """Finish a run that was interrupted: `run_study(None, run_dir, resume=True, ...)`.

    Exactly the chunks that are not on disk are played. The parts already there are
    checked first (`runfolder.check_parts` against the plan, and each part against its
    digest in run.json); a damaged chunk (a part missing, unreadable, disagreeing with
    the other tables or the plan, or changed since it was written) is removed and played
    again, and named in `RunResult.replayed`. A run.json whose definition (config, seed,
    plan) was edited is refused.
    """
    return run_study(
        None,
        run_dir,
        resume=True,
        workers=workers,
        start_method=start_method,
        progress=progress,
        backend=backend,
    )


def _resume(
    run_dir: Path,
    given: Study | None,
    workers: int | None,
    start_method: str | None,
    progress: Progress | None,
    backend: DaskBackend | Backend | None,
) -> RunResult:
    """`resume_run`'s work: check the folder's run, replay its damaged chunks, play the rest."""
    manifest = runfolder.read_manifest(run_dir)
    edited = runfolder.edited_definition(manifest)
    if edited is not None:
        raise RunFolderError(f"{str(run_dir)!r}: {edited}")
    check_same_code(run_dir, manifest)
    study = _study_of(run_dir, manifest)
    if given is not None and given.to_dict() != study.to_dict():
        raise RunFolderError(
            f"{str(run_dir)!r} holds a run of another study (its run.json's config differs "
            "from the one given): resume it without a study, or choose a new folder"
        )
    with runfolder.locked(run_dir), _writing(run_dir):
        prep = Prepared(study)
        if prep.plan.games_planned != manifest.games_planned:
            raise RunFolderError(
                f"{str(run_dir)!r}: its config now plans {prep.plan.games_planned} games, the "
                f"manifest says {manifest.games_planned!r} (a strategy or program "
                "changed, or run.json was edited?)"
            )
        plan = prep.plan
        planned = {
            c: (int(plan.chunk_first_game[c]), _chunk_size(plan, c)) for c in range(plan.chunks)
        }
        parts = runfolder.check_parts(
            run_dir, planned=planned, every_turn=runfolder.every_move(manifest)
        )
        parts.refuse_strays(run_dir)
        # each part read once, by the algorithm of its recorded digest
        found = runfolder.chunk_digests(run_dir, parts.whole, manifest.digests)
        damaged = {**parts.damaged, **runfolder.changed_chunks(manifest, found, required=False)}
        if damaged:
            log.info(
                "run %s: replaying %s",
                run_dir,
                dataclasses.replace(parts, damaged=damaged).describe(most=len(damaged)),
            )
            runfolder.remove_chunks(run_dir, sorted(damaged))
            manifest = runfolder.forget_chunks(manifest, damaged)
        # chunks done after the manifest was last written (a kill -9) get their digests
        # now; the others' are the same as recorded (a differing one is damaged)
        digests = {
            **(manifest.digests or {}),
            **{k: v for k, v in found.items() if runfolder.chunk_of_key(k) not in damaged},
        }
        manifest = manifest.replace(digests=digests)
        result = _execute(run_dir, manifest, prep, workers, start_method, progress, backend)
        return dataclasses.replace(result, replayed=damaged)


def _study_of(run_dir: Path, manifest: Manifest) -> Study:
    """The study of a run folder's manifest; RunFolderError when its config is not one."""
    try:
        return study_from_manifest(manifest)
    except ConfigError as exc:
        raise RunFolderError(f"{str(run_dir)!r}: run.json's config: {exc}") from exc


@contextlib.contextmanager
def _writing(run_dir: Path) -> Iterator[None]:
    """A failed write (full disk, read-only file system) as a RunFolderError naming the cause."""
    try:
        yield
    except OSError as exc:
        raise RunFolderError(
            f"cannot write the run folder {str(run_dir)!r}: {runfolder.describe_os_error(exc)}; "
            f"the chunks written so far are kept: free the space or fix the permissions, then "
            f"`marrakech run --resume {run_dir}` (or start again if it holds no run.json)"
        ) from exc


def study_from_manifest(manifest: Manifest) -> Study:
    """The study a run folder was made from (its resolved config)."""
    config = dict(manifest.config)
    return study_from_dict(config, default_name=config.get("name", "study"))


def _backend(
    workers: int, start_method: str | None, backend: DaskBackend | Backend | None
) -> Backend:
    """The backend that plays the run's chunks: the one given (a DaskBackend's chunks on
    Dask), else worker processes, or this process when `workers` is 0."""
    if isinstance(backend, DaskBackend):
        return DaskChunks(backend, workers)
    if backend is not None:
        return backend
    return ProcessBackend(workers, start_method) if workers else InProcessBackend()


def _execute(
    run_dir: Path,
    manifest: Manifest,
    prep: Prepared,
    workers: int | None,
    start_method: str | None,
    progress: Progress | None,
    backend: DaskBackend | Backend | None = None,
) -> RunResult:
    study, plan = prep.study, prep.plan
    if workers is None:
        workers = os.cpu_count() or 1
    player = _backend(workers, start_method, backend)
    removed = runfolder.remove_temporaries(run_dir)
    done = {c for c in runfolder.chunks_done(run_dir) if 0 <= c < plan.chunks}
    writer = manifest.writer or "encoder"
    stopper = Stopper(study.stopping, plan) if study.stopping else None
    stop_at: int | None = None
    if stopper is not None:  # the rule sees the chunks already on disk, in order
        for chunk in sorted(done):
            y, n = _chunk_totals_from_disk(run_dir, prep, chunk)
            found = stopper.add(chunk, y, n)
            stop_at = found if found is not None else stop_at
    todo = [c for c in range(plan.chunks) if c not in done]
    if stop_at is not None:
        todo = []
    described = player.describe()
    session = {"started": runfolder.utc_now(), **described, "chunks_to_play": len(todo)}
    # what changes as the run goes on; each write of run.json makes a new Manifest of them
    digests = dict(manifest.digests or {})
    sessions = [*(manifest.sessions or []), session]

    games_before = sum(_chunk_size(plan, c) for c in done)
    played = games_before

    def save(**changes: Any) -> None:
        nonlocal manifest
        manifest = manifest.replace(digests=dict(digests), sessions=list(sessions), **changes)
        runfolder.write_manifest(run_dir, manifest)

    def close_session(status: str, **changes: Any) -> None:
        sessions[-1] = {**session, "finished": runfolder.utc_now()}
        save(status=status, **changes, **_closing(played, done, stopper))

    save(status="running")
    log.info(
        "run %s: %d of %d chunks to play (%d games planned, %d on disk%s), %s",
        run_dir,
        len(todo),
        plan.chunks,
        plan.games_planned,
        games_before,
        f", {removed} unfinished part(s) removed" if removed else "",
        f"{described['workers']} workers" if described.get("workers") else "in-process",
    )
    started = time.perf_counter()
    errors = 0
    session_games = 0

    written = [time.perf_counter()]  # when run.json was last written

    def finished(result: ChunkResult) -> int | None:
        nonlocal played, errors, session_games
        played += result.games
        session_games += result.games
        errors += result.errors
        done.add(result.chunk)
        # the chunk's parts as written: a later change to them is found by resume and report
        # (digested by the process that wrote them, else read back here)
        if result.digests is not None:
            digests.update(result.digests)
        else:
            digests.update(runfolder.written_digests(run_dir, result.chunk))
        if time.perf_counter() - written[0] > MANIFEST_SECONDS:
            save(games_played=played, chunks_played=len(done))
            written[0] = time.perf_counter()
        if progress is not None:
            progress(played, plan.games_planned, time.perf_counter() - started, errors)
        found = None
        if stopper is not None:
            assert result.block_y is not None and result.block_n is not None
            found = stopper.add(result.chunk, result.block_y, result.block_n)
        # the command line's live table: the chunk's block totals and the rule's state
        chunk_done = getattr(progress, "chunk_done", None)
        if chunk_done is not None:
            chunk_done(result, plan, stopper.last if stopper is not None else None)
        return found

    stop = _StopRequest()
    try:
        with _sigterm_as_ctrl_c(stop):
            for warning in unreproducible(prep) if todo else []:
                log.warning("%s", warning)
            if todo:
                # forked workers (a LocalCluster's too) inherit the loaded kernels; games/s
                # counts from here; on every backend a long run says so before it starts (a
                # cluster's workers are its own: its figure is per core)
                prep.warm_up(getattr(progress, "compiling", None))
                cores = player.workers if player.workers is not None else 1
                _say_when_long(prep, 1 - games_before / plan.games_planned, cores)
                started = time.perf_counter()
            if todo:
                player.start(prep, run_dir, writer)
                try:
                    for result in player.play(todo):
                        if (found := finished(result)) is not None:
                            stop_at = found
                            break
                        stop.check()
                    stop.check()
                except BaseException:
                    player.close(stop=True)
                    raise
                player.close(stop=stop_at is not None)
                # a stop that came while the pool closed, its exception dropped where it was
                # raised, stops the run all the same
                stop.check()
    except KeyboardInterrupt:
        close_session("interrupted")
        raise _interrupted(played, plan, run_dir) from None
    except Exception as exc:
        if stop.requested:
            # the stop, as the code it interrupted turned it into an error of its own
            # (Python 3.11 wraps an exception raised in a class's __set_name__, as in an
            # import that the signal came in, in a RuntimeError): the run is interrupted
            close_session("interrupted")
            raise _interrupted(played, plan, run_dir) from None
        # the run stopped on an error: its status says so, not 'running'
        with contextlib.suppress(OSError):  # a full disk may refuse this write too
            close_session("failed", error=runfolder.one_line(exc))
        raise
    if stop_at is not None:
        # the decision is taken on the chunks in order: later chunks are not part of the run
        later = [c for c in range(stop_at + 1, plan.chunks)]
        runfolder.remove_chunks(run_dir, later)
        gone = set(later)
        for key in [k for k in digests if runfolder.chunk_of_key(k) in gone]:
            del digests[key]
        runfolder.remove_temporaries(run_dir)
        done = {c for c in done if c <= stop_at}
        played = sum(_chunk_size(plan, c) for c in done)
    complete = len(done) == plan.chunks or (stop_at is not None and len(done) == stop_at + 1)
    close_session(("stopped" if stop_at is not None else "complete") if complete else "incomplete")
    seconds = time.perf_counter() - started
    log.info("run %s: %s, %d games in %.1f s", run_dir, manifest.status, session_games, seconds)
    return RunResult(
        run_dir=run_dir,
        games_planned=plan.games_planned,
        games_played=played,
        games_this_session=session_games,
        seconds=seconds,
        errors=errors,
        stopping=None if manifest.stopping is None else dict(manifest.stopping),
        status=str(manifest.status),
    )


def _interrupted(played: int, plan: Plan, run_dir: Path) -> RunInterrupted:
    return RunInterrupted(
        f"run interrupted after {played:,} of {plan.games_planned:,} games; resume it with "
        f"`marrakech run --resume {run_dir}`"
    )


class _StopRequest:
    """Whether a stop signal came: its handler raises `StopPlay`, and `check` raises it
    again where the run can act on it, since Python drops an exception raised while it
    runs a finaliser or a callback ("Exception ignored in ..."), and the run went on."""

    def __init__(self) -> None:
        self.requested = False

    def handler(self, signum: int, frame: Any) -> None:
        self.requested = True
        raise_stop_play(signum, frame)

    def check(self) -> None:
        if self.requested:
            raise StopPlay


@contextlib.contextmanager
def _sigterm_as_ctrl_c(stop: _StopRequest) -> Iterator[None]:
    """While a run plays, SIGTERM and SIGHUP stop it as Ctrl-C does (status 'interrupted',
    resumable); in the main thread only, the previous handlers restored after. Both raise
    `StopPlay`, which passes through a game where a strategy's own KeyboardInterrupt is
    a fault.

    A StopPlay that Python drops (raised in a finaliser or in an at-fork callback, as a
    worker starts) is not reported on stderr: the stop is kept, and `check` raises it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    previous = signal.signal(signal.SIGTERM, stop.handler)
    # the terminal closed: SIGHUP ended the process with run.json saying 'running'
    hang_up = signal.signal(HANG_UP, stop.handler) if HANG_UP is not None else None
    ctrl_c = signal.getsignal(signal.SIGINT)
    if ctrl_c is signal.default_int_handler:
        signal.signal(signal.SIGINT, stop.handler)
    unraisable = sys.unraisablehook

    def dropped(report: Any) -> None:
        if not issubclass(report.exc_type, StopPlay):
            unraisable(report)

    sys.unraisablehook = dropped
    try:
        yield
    finally:
        sys.unraisablehook = unraisable
        signal.signal(signal.SIGTERM, previous)
        if HANG_UP is not None:
            signal.signal(HANG_UP, hang_up)
        if ctrl_c is signal.default_int_handler:
            signal.signal(signal.SIGINT, ctrl_c)


#: the hang-up signal, where the platform has one
HANG_UP = getattr(signal, "SIGHUP", None)


#: seconds of games past which a run says, before it starts, how long they may take
LONG_RUN_SECONDS = 600.0


def _say_when_long(prep: Prepared, share_left: float, workers: int) -> None:
    """Warn, before the games start, when those of the searching twins left to play
    would take more than LONG_RUN_SECONDS (Prepared.search_seconds: a rough figure)."""
    seconds = prep.search_seconds()
    if seconds is None:
        return
    seconds *= share_left / max(workers, 1)
    log.info("the games with the expert's search: roughly %.0f s (rough figure)", seconds)
    if seconds > LONG_RUN_SECONDS:
        log.warning(
            "the games with the expert's search may take up to about %s on %s (a rough "
            "figure: two games at budget %d scaled to the study's budgets and board "
            "sizes); Ctrl-C stops the run, `marrakech run --resume` goes on",
            _duration(seconds),
            f"{workers} workers" if workers > 1 else "1 core",
            WARM_UP_BUDGET,
        )


def _duration(seconds: float) -> str:
    """'3 h 20 min', '45 min', '2 days'."""
    minutes = round(seconds / 60)
    if minutes >= 2 * 24 * 60:
        return f"{minutes / (24 * 60):,.0f} days"
    if minutes >= 60:
        return f"{minutes // 60} h {minutes % 60} min"
    return f"{minutes} min"


def _chunk_size(plan: Plan, chunk: int) -> int:
    return int(plan.chunk_first_game[chunk + 1] - plan.chunk_first_game[chunk])


def _closing(played: int, done: set[int], stopper: Stopper | None) -> dict[str, Any]:
    """The manifest's keys as a session ends: progress, and the stopping rule's state."""
    out: dict[str, Any] = {
        "games_played": played,
        "chunks_played": len(done),
        "updated": runfolder.utc_now(),
    }
    if stopper is not None:
        statistics = _plain(stopper.decision or stopper.last)
        out["stopping"] = {
            "rule": stopper.rule.to_dict(),
            "stopped": stopper.decision is not None,
            "statistics": statistics,
            # the run keeps whole chunks: the games after the stopping block in its chunk
            "games_in_run": played,
            "summary": stopping_line(statistics, stopper.decision is not None)
            + (
                f"; decided at game {statistics['games']:,}, the run keeps {played:,} "
                "(whole chunks)"
                if stopper.decision is not None
                else ""
            ),
        }
    return out


def _plain(data: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in data.items()}


def _chunk_totals_from_disk(
    run_dir: Path, prep: Prepared, chunk: int
) -> tuple[np.ndarray, np.ndarray]:
    import pyarrow.parquet as pq

    assert prep.study.stopping is not None
    name = runfolder.part_name(chunk)
    games = pq.read_table(run_dir / "games" / name)
    seats = pq.read_table(run_dir / "seats" / name)
    return block_totals(prep.study.stopping, games, seats, prep.plan.chunk_games(chunk))
