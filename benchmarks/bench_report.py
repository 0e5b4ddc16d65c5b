"""Time `marrakech report` on real or synthetic run folders; print seconds and peak memory.

The real default study mix, played at each size (games per line-up: 83,334 and 250,000 are
1 M and 3 M games), then reported; one JSON line per size with the peak RSS and wall time
of `marrakech run` (its closing summary included) and of `marrakech report`, then the
ratios of the last size to the first:

    python benchmarks/bench_report.py --study configs/default.toml --sizes 83334 250000 \
        --dir /tmp/bench_default

Each command runs in its own process and its peak is that process tree's largest RSS
(``wait4``'s ``ru_maxrss``, as ``/usr/bin/time -f %M`` reports it). ``--reuse`` reports
run folders already played. The synthetic mode (no ``--study``) writes a run folder of
planted effects instead, fast at tens of millions of games, but its mix (one player count,
five strategies, few moves) is not a real study's:

    python benchmarks/bench_report.py --games 10000000 --moves-games 0 --dir /tmp/bench_run
    python benchmarks/bench_report.py --games 1000000 --moves-games 1000000 --dir /tmp/bench_run_m
    python benchmarks/bench_report.py --games 10000000 --dir /tmp/bench_run --reuse --summary
    python benchmarks/bench_report.py --games 10000000 --paired --dir /tmp/bench_run_p

The synthetic run folder follows LOG_FORMAT.md: games and seats for ``--games`` games (4 players,
two rule sets, 5 strategies with planted strengths, a planted seat advantage, seat
rotation in blocks of 4 games, a few ties and errors; with ``--paired`` a common-seeds
run: each block shares its seed with the block of the same line-up and round under the
other rule set, and the report pairs them), and a moves table for the first
``--moves-games`` games (48 turns each). Writing 500 million move rows for 10 million
games takes longer than the report itself, so the moves-derived part is measured on a
smaller run and scales with the moves rows scanned (the report reads whole moves only for
its sample of ``MOVES_GAMES`` games). The report runs in a child process so its peak RSS
(``ru_maxrss`` of the child, DuckDB included) is the report's alone. ``--summary`` times
the closing summary of ``marrakech run`` (``run.summary.summarize_run``) instead.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

K = 4
TURNS = 48
STRATEGIES = np.array(["random", "greedy", "cautious", "bold", "lazy"])
THETA = np.array([0.0, 0.3, 0.1, 0.2, -0.2])
LINEUPS = np.array([[i for i in range(5) if i != skip] for skip in range(5)])
GAMMA = np.array([0.15, 0.05, 0.0, -0.05])
RULESETS = {"standard": {"players": 4}, "orient_at_end": {"players": 4, "orient_at_end": True}}


def _write(table: pa.Table, folder: Path, part: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".part-{part:05d}.parquet"
    pq.write_table(table, tmp, compression="zstd")
    tmp.replace(folder / f"part-{part:05d}.parquet")


def _list(values: np.ndarray, width: int, arrow_type: pa.DataType) -> pa.Array:
    n = len(values) // width
    return pa.ListArray.from_arrays(
        pa.array(np.arange(0, n * width + 1, width, dtype="int32")),
        pa.array(values, type=arrow_type),
    )


def write_chunk(
    run: Path,
    part: int,
    first_block: int,
    n_blocks: int,
    moves: bool,
    rng: np.random.Generator,
    paired: bool = False,
) -> None:
    """Write one part of games and seats (and moves) for ``n_blocks`` blocks of 4 games."""
    n = n_blocks * K
    block = np.repeat(np.arange(first_block, first_block + n_blocks), K)
    game_id = block * K + np.tile(np.arange(K), n_blocks)
    lineup = block % len(LINEUPS)
    ruleset_idx = (block // len(LINEUPS)) % 2
    match_id = lineup + len(LINEUPS) * ruleset_idx
    shift = game_id % K
    who = LINEUPS[lineup[:, None], (np.arange(K)[None, :] - shift[:, None]) % K]
    util = THETA[who] + GAMMA[None, :] * (1 - ruleset_idx[:, None]) + rng.gumbel(size=(n, K))
    order = np.argsort(-util, axis=1)
    place = np.argsort(order, axis=1)
    top = rng.integers(55, 80, size=n)
    gaps = np.cumsum(rng.integers(1, 8, size=(n, K)), axis=1) - 1
    score = (top[:, None] - np.take_along_axis(gaps, place, axis=1)).astype("int16")
    visible = rng.integers(5, 20, size=(n, K)).astype("int16")
    error = rng.random(n) < 1e-4
    tie_broken = (rng.random(n) < 0.02) & ~error
    winner = order[:, 0]
    win_share = np.where(place == 0, 1.0, 0.0).astype("float32")
    win_share[error] = 0.0
    end = np.where(error, "error", "rugs_exhausted")
    err_text = np.where(
        error,
        np.char.add(np.char.add("seat 1 (strategy ", STRATEGIES[who[:, 1]]), "): ValueError: x"),
        None,
    )
    games = pa.table(
        {
            "game_id": pa.array(game_id, pa.int64()),
            "match_id": pa.array(match_id, pa.int64()),
            "ruleset": pa.array(np.array(list(RULESETS))[ruleset_idx])
            .dictionary_encode()
            .cast(pa.string()),
            "seed": pa.array(
                # common seeds: one seed per (round, line-up), shared by the two rule sets
                (block // 10 * 5 + block % 5).astype("uint64") + 1
                if paired
                else game_id.astype("uint64") * 7919
            ),
            "players": pa.array(np.full(n, K, "int8")),
            "turns": pa.array(np.full(n, TURNS, "int16")),
            "end_reason": pa.array(end),
            "winners": pa.ListArray.from_arrays(
                pa.array(np.r_[0, np.cumsum(~error)].astype("int32")),
                pa.array(winner[~error].astype("int8")),
            ),
            "tie_broken": pa.array(tie_broken),
            "error": pa.array(err_text, pa.string()),
            "block": pa.array(block, pa.int64()),
        }
    )
    rank = (place + 1).astype("int8")
    null_err = np.repeat(error, K)
    seats = pa.table(
        {
            "game_id": pa.array(np.repeat(game_id, K), pa.int64()),
            "seat": pa.array(np.tile(np.arange(K, dtype="int8"), n)),
            "strategy": pa.array(STRATEGIES[who.ravel()]),
            "colours": pa.array(np.tile(np.array(list("rbyp")), n)),
            "dirhams": pa.array((score - visible).ravel()),
            "visible": pa.array(visible.ravel()),
            "score": pa.array(score.ravel(), mask=null_err),
            "rank": pa.array(rank.ravel(), mask=null_err),
            "win_share": pa.array(win_share.ravel()),
            "eliminated_turn": pa.nulls(n * K, pa.int16()),
            "paid": pa.array(np.zeros(n * K, "int16")),
            "received": pa.array(np.zeros(n * K, "int16")),
        }
    )
    _write(games, run / "games", part)
    _write(seats, run / "seats", part)
    if moves:
        t = np.arange(TURNS)
        frac = (t + 1) / TURNS
        path = (
            30
            + frac[None, :, None] * (score[:, None, :] - 30)
            + rng.normal(0, 2, size=(n, TURNS, K))
        )
        path[:, -1, :] = score
        path = np.maximum(np.round(path), 0).astype("int16")
        vis = (path // 3).astype("int16")
        rows = n * TURNS
        turn = np.tile(t, n).astype("int16")
        small = np.zeros(rows, "int8")
        _write(
            pa.table(
                {
                    "game_id": pa.array(np.repeat(game_id, TURNS), pa.int64()),
                    "turn": pa.array(turn),
                    "seat": pa.array((turn % K).astype("int8")),
                    "colour": pa.array(np.array(list("rbyp"))[turn % K]),
                    "rotation": pa.array(small),
                    "roll": pa.array((1 + turn % 4).astype("int8")),
                    "assam_x": pa.array(small),
                    "assam_y": pa.array(small),
                    "facing": pa.array(np.full(rows, "N")),
                    "payment": pa.array(np.zeros(rows, "int16")),
                    "paid_to": pa.nulls(rows, pa.int8()),
                    "bankrupt": pa.array(np.zeros(rows, bool)),
                    "x1": pa.array(small),
                    "y1": pa.array(small),
                    "x2": pa.array(small),
                    "y2": pa.array(small),
                    "end_rotation": pa.nulls(rows, pa.int8()),
                    "dirhams_after": _list((path - vis).ravel(), K, pa.int16()),
                    "visible_after": _list(vis.ravel(), K, pa.int16()),
                }
            ),
            run / "moves",
            part,
        )


def _matches(n_blocks: int) -> list[dict[str, object]]:
    """The matches as a real run's run.json lists them: write_chunk's block b plays match
    b % 10, line-up b % 5 under rule set (b // 5) % 2."""
    every = 2 * len(LINEUPS)
    return [
        {
            "match_id": m,
            "ruleset": list(RULESETS)[m // len(LINEUPS)],
            "lineup": STRATEGIES[LINEUPS[m % len(LINEUPS)]].tolist(),
            "seatings": K,
            "blocks": len(range(m, n_blocks, every)),
        }
        for m in range(every)
    ]


def generate(
    run: Path, games: int, moves_games: int, chunk_games: int = 500_000, paired: bool = False
) -> None:
    """Write the whole run folder in chunks (memory stays flat)."""
    rng = np.random.default_rng(2025)
    n_blocks = games // K
    per = chunk_games // K
    run.mkdir(parents=True, exist_ok=True)
    manifest = {
        "format_version": 1,
        "run_id": run.name,
        "created": "2025-01-01T00:00:00Z",
        "program_version": "bench",
        "seed": 2025,
        "config": {
            "rulesets": RULESETS,
            "strategies": [{"name": s} for s in STRATEGIES],
            "common_seeds": paired,
        },
        "games_planned": n_blocks * K,
        "matches": _matches(n_blocks),
    }
    (run / "run.json").write_text(json.dumps(manifest))
    for part, first in enumerate(range(0, n_blocks, per)):
        write_chunk(
            run, part, first, min(per, n_blocks - first), first * K < moves_games, rng, paired
        )


_CLI = "from marrakech_sim.cli import main; main()"


def measure(args: list[str]) -> tuple[float, float]:
    """Peak RSS (MiB) of the process tree and wall seconds of ``marrakech ARGS``."""
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-c", _CLI, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert child.stderr is not None
    err = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"marrakech {' '.join(args)} failed:\n{err.decode()[-2000:]}")
    return usage.ru_maxrss / 1024, time.perf_counter() - start


def study_sizes(study: Path, sizes: list[int], folder: Path, reuse: bool) -> list[dict[str, Any]]:
    """Play ``study`` at each size (games per line-up) and report it: one row per size."""
    rows = []
    for size in sizes:
        run, out = folder / f"run-{size}", folder / f"report-{size}"
        row: dict[str, Any] = {"games_per_lineup": size}
        if not (reuse and (run / "run.json").is_file()):
            shutil.rmtree(run, ignore_errors=True)
            peak, wall = measure(["run", str(study), "--games", str(size), "--out", str(run)])
            row.update(run_peak_mb=round(peak), run_s=round(wall, 1))
        row["games"] = sum(pq.read_metadata(p).num_rows for p in (run / "games").glob("*.parquet"))
        shutil.rmtree(out, ignore_errors=True)
        peak, wall = measure(["report", str(run), "--out", str(out)])
        row.update(report_peak_mb=round(peak), report_s=round(wall, 1))
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def ratios(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Each figure of the last size over the first's."""
    first, last = rows[0], rows[-1]
    keys = ("run_peak_mb", "run_s", "report_peak_mb", "report_s")
    return {f"{k}_ratio": round(last[k] / first[k], 2) for k in keys if k in first and k in last}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10_000_000)
    parser.add_argument("--moves-games", type=int, default=0, help="games that get a moves table")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/bench_report_run"))
    parser.add_argument("--reuse", action="store_true", help="reuse an existing run folder")
    parser.add_argument("--paired", action="store_true", help="a common-seeds run (see above)")
    parser.add_argument(
        "--summary", action="store_true", help="time the run's closing summary, not the report"
    )
    parser.add_argument("--study", type=Path, help="play this study config at each --sizes")
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[83_334, 250_000], help="games per line-up"
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.study:
        args.dir.mkdir(parents=True, exist_ok=True)
        rows = study_sizes(args.study, args.sizes, args.dir, args.reuse)
        if len(rows) > 1:
            print(json.dumps(ratios(rows)))
        return
    out = args.dir.with_name(args.dir.name + "_report")
    if args.child and args.summary:
        from marrakech_sim.run.summary import summarize_run

        start = time.perf_counter()
        summary = summarize_run(args.dir)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        print(
            json.dumps(
                {
                    "games": summary.games,
                    "summary_s": round(time.perf_counter() - start, 1),
                    "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
                    "peak_rss_mb": round(usage.ru_maxrss / 1024),
                }
            )
        )
        return
    if args.child:
        from marrakech_sim.report import build_report

        start = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_SELF)
        result = build_report([args.dir], out)
        seconds = time.perf_counter() - start
        usage = resource.getrusage(resource.RUSAGE_SELF)
        peak = usage.ru_maxrss / 1024
        # CPU seconds (all threads): on a shared machine wall time also counts others' load
        cpu = usage.ru_utime + usage.ru_stime - before.ru_utime - before.ru_stime
        print(
            json.dumps(
                {
                    "games": result.facts["n_games"],
                    "report_s": round(seconds, 1),
                    "cpu_s": round(cpu, 1),
                    "peak_rss_mb": round(peak),
                    "moves_games_read": result.facts.get("moves_games", 0),
                    "rating_games": result.facts.get("rating_games"),
                    "seconds": result.facts.get("seconds"),
                }
            )
        )
        return
    if not (args.reuse and (args.dir / "run.json").is_file()):
        start = time.perf_counter()
        generate(args.dir, args.games, args.moves_games, paired=args.paired)
        print(
            f"generated {args.games:,} games ({args.moves_games:,} with moves) "
            f"in {time.perf_counter() - start:.0f} s"
        )
    size = sum(p.stat().st_size for p in args.dir.rglob("*.parquet")) / 1e6
    print(f"run folder {args.dir}: {size:.0f} MB of Parquet")
    child = subprocess.run(
        [sys.executable, __file__, "--dir", str(args.dir), "--child"]
        + (["--summary"] if args.summary else []),
        capture_output=True,
        text=True,
        check=True,
    )
    print(child.stdout.strip())


if __name__ == "__main__":
    main()
