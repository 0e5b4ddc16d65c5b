"""Measure games per second of the tournament runner, with and without move records.

`bench` plays one line-up under one rule set through the real runner: with records,
every chunk is written to Parquet parts in a temporary run folder; without, the games
are only played. `breakdown` times the steps of one chunk in this process (play,
building the parts, encoding and writing them) per game.
"""

from __future__ import annotations

import resource
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from marrakech_sim import runfolder
from marrakech_sim.rules.options import Rules
from marrakech_sim.run.chunk import Prepared, group_parts, play_chunk, play_group
from marrakech_sim.run.config import MoveColumns, Study, study_from_dict
from marrakech_sim.run.pool import WORKER, ChunkPool, default_start_method, worker_play_only
from marrakech_sim.run.runner import run_study


def bench_study(
    rules: Rules,
    lineup: Sequence[str],
    games: int,
    chunk_games: int = 4096,
    move_columns: MoveColumns = "all",
) -> Study:
    """A study of `games` games of one line-up (strategy refs), seats as given, writing the
    moves table's `move_columns` (run.config.MOVE_COLUMN_CHOICES)."""
    names = {ref: "".join(c if c.isalnum() or c in "_-." else "_" for c in ref) for ref in lineup}
    strategies = {names[ref]: {"ref": ref} for ref in dict.fromkeys(lineup)}
    return study_from_dict(
        {
            "name": "bench",
            "seed": 1,
            "games_per_lineup": games,
            "rotation": "none",
            "chunk_games": chunk_games,
            "rulesets": {"bench": rules.to_dict()},
            "strategies": strategies,
            "schedule": {"kind": "lineups", "lineups": [[names[ref] for ref in lineup]]},
            "move_columns": move_columns,
        }
    )


def bench(
    rules: Rules | None = None,
    lineup: Sequence[str] | None = None,
    *,
    games: int = 100_000,
    workers: int = 1,
    records: bool = True,
    chunk_games: int = 4096,
    start_method: str | None = None,
    move_columns: MoveColumns = "all",
) -> dict[str, Any]:
    """Games per second of a run (workers processes; 0 = in this process), its moves
    table of `move_columns` (all, or those a replay needs) when it writes `records`.

    Returns a dict with games, workers, records, seconds, games_per_s,
    games_per_s_per_worker, cpu_seconds, games_per_cpu_s, main_cpu_seconds,
    main_cpu_us_per_game, players, lineup, compiled, start_method. cpu_seconds is the
    CPU time of this process and its workers while the games ran: on a machine shared
    with other work, games_per_cpu_s is what one worker would do with a core to itself
    (wall-clock figures drop when cores are busy). main_cpu_seconds is this process's
    share (with workers: starting them, taking their results, the run folder's
    bookkeeping), the work that does not spread over more workers.
    """
    rules = rules or Rules()
    lineup = list(lineup or ["random"] * rules.players)
    study = bench_study(rules, lineup, games, chunk_games, move_columns)
    prep = Prepared(study)
    prep.warm_up()
    if prep.match_compiled.all():  # compile / load the record path once, outside the timing
        play_chunk(prep, 0)  # (not a plug-in's games: one could end this process)
        if not records:  # and the loop that writes no move rows
            WORKER["prep"] = prep
            worker_play_only(0)
    folder = Path(tempfile.mkdtemp(prefix="marrakech-bench-"))
    try:
        cpu_before = _cpu_seconds()
        main_before = _cpu_seconds(children=False)
        started = time.perf_counter()
        if records:
            run_study(study, folder / "run", workers=workers, start_method=start_method)
        elif workers == 0:
            WORKER["prep"] = prep
            for chunk in range(prep.plan.chunks):
                worker_play_only(chunk)
        else:
            with ChunkPool(prep, None, workers, start_method, task=worker_play_only) as pool:
                for _ in pool.play(range(prep.plan.chunks)):
                    pass
        seconds = time.perf_counter() - started
        cpu = _cpu_seconds() - cpu_before
        main_cpu = _cpu_seconds(children=False) - main_before
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    played = prep.plan.games_planned
    return {
        "games": played,
        "workers": workers,
        "records": records,
        "move_columns": move_columns,
        "seconds": round(seconds, 4),
        "games_per_s": round(played / seconds, 1),
        "games_per_s_per_worker": round(played / seconds / max(workers, 1), 1),
        "cpu_seconds": round(cpu, 4),
        "games_per_cpu_s": round(played / cpu, 1) if cpu > 0 else None,
        "main_cpu_seconds": round(main_cpu, 4),
        "main_cpu_us_per_game": round(main_cpu / played * 1e6, 3),
        "players": rules.players,
        "lineup": lineup,
        "compiled": bool(prep.match_compiled.all()),
        "start_method": (start_method or default_start_method()) if workers else None,
        "chunk_games": chunk_games,
    }


def _cpu_seconds(children: bool = True) -> float:
    """CPU seconds of this process (all its threads) and, with `children`, of its
    children that have ended (the workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    seconds = own.ru_utime + own.ru_stime
    if children:
        ended = resource.getrusage(resource.RUSAGE_CHILDREN)
        seconds += ended.ru_utime + ended.ru_stime
    return seconds


def breakdown(
    rules: Rules | None = None,
    lineup: Sequence[str] | None = None,
    *,
    chunk_games: int = 4096,
    repeats: int = 3,
) -> dict[str, float]:
    """Microseconds per game of each step of a chunk, in this process (best of `repeats`).

    play: the game loop, its moves copied into columns; tables: the three parts (numpy
    columns, storage.Part); write: what `write_chunk` does with them, the sum of encode
    (the three Parquet files' bytes, zstd included), digest (their BLAKE3 digests for the
    manifest) and files (writing them, rename included).
    """
    import numpy as np

    rules = rules or Rules()
    lineup = list(lineup or ["random"] * rules.players)
    study = bench_study(rules, lineup, chunk_games * 2, chunk_games)
    prep = Prepared(study)
    prep.warm_up()
    play_chunk(prep, 0)
    cg = prep.plan.chunk_games(1)
    r = prep.rulesets[0]
    where = np.arange(len(cg))
    steps = ("play", "tables", "write", "encode", "digest", "files")
    best = dict.fromkeys(steps, float("inf"))
    folder = Path(tempfile.mkdtemp(prefix="marrakech-bench-"))
    try:
        for _ in range(repeats):
            t0 = time.perf_counter()
            # as the runner's workers do: compiled games' moves into reused buffers
            group = play_group(prep, r, cg, where, reuse=True)
            t1 = time.perf_counter()
            tables = group_parts(prep, r, cg, where, group)
            t2 = time.perf_counter()
            # write_chunk's steps, one at a time: the moves, seats and games parts
            files = [runfolder.parquet_file(t) for t in (tables[2], tables[1], tables[0])]
            t3 = time.perf_counter()
            for data in files:
                runfolder.data_digest(data)
            t4 = time.perf_counter()
            for name, data in zip(("moves", "seats", "games"), files, strict=True):
                runfolder.write_part_file(folder, name, 1, data)
            t5 = time.perf_counter()
            took = (t1 - t0, t2 - t1, t5 - t2, t3 - t2, t4 - t3, t5 - t4)
            for key, value in zip(steps, took, strict=True):
                best[key] = min(best[key], value)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    out = {f"{key}_us_per_game": round(v / len(cg) * 1e6, 2) for key, v in best.items()}
    out["games"] = len(cg)
    return out
