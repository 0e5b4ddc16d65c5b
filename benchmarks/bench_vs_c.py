"""The runner against the C reference loop, on one worker, in one run (README, Speed).

    .venv/bin/python benchmarks/bench_vs_c.py [--games 200000] [--rounds 3] [--json]

Builds benchmarks/c_loop/marrakech_random.c with the system's C compiler (`cc -O2`), then
takes turns, round by round: the C loop plays `--games` random 4-player games; the runner
(`marrakech_sim.run.bench.bench`, one worker process, the compiled loop) plays as many
with move records written to Parquet, every column of the moves table (the default,
format version 1) and only the columns a replay needs (`move_columns = "replay"`, format
version 2), and as many without. Each figure is games per CPU second (the CPU time of the
process and of its workers), which another job on the machine slows much less than
wall-clock time; the best round of each is kept. Prints each rate, the runner's ratios to
C (targets: 0.5 with records, 0.8 without) and the load average.

It then checks that the two play the same game: the C loop's mean length, share of games
with a bankruptcy and seat win shares against those of the runner's games (the runner
with records, read back from its Parquet files), each difference in standard errors.
The draws differ, so the games differ; the distributions must not.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from marrakech_sim import Rules, runfolder
from marrakech_sim.run.bench import bench, bench_study
from marrakech_sim.run.runner import run_study

SOURCE = Path(__file__).resolve().parent / "c_loop" / "marrakech_random.c"
#: each runner figure: bench's records and move_columns, its words, its target (of C)
MODES = {
    "records": (True, "all", "runner, records: all", 0.5),
    "records_replay": (True, "replay", "runner, records: replay", 0.5),
    "no_records": (False, "all", "runner, no records", 0.8),
}
TARGETS = {key: mode[3] for key, mode in MODES.items()}


def build(folder: Path) -> Path:
    """The C loop, compiled into `folder` (a clear error without a C compiler)."""
    cc = shutil.which(os.environ.get("CC", "cc"))
    if cc is None:
        sys.exit("bench_vs_c: no C compiler (cc) on PATH; install one (e.g. gcc) or set CC")
    exe = folder / "marrakech_random"
    subprocess.run([cc, "-O2", "-o", str(exe), str(SOURCE), "-lm"], check=True)
    return exe


def c_loop(exe: Path, games: int, seed: int) -> dict[str, Any]:
    out = subprocess.run([str(exe), str(games), str(seed)], check=True, capture_output=True)
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def runner_games(games: int) -> dict[str, Any]:
    """Mean length, bankruptcy share and seat shares of the runner's random games, with
    their standard errors (games are independent: one line-up, no rotation)."""
    folder = Path(tempfile.mkdtemp(prefix="marrakech-vs-c-"))
    try:
        study = bench_study(Rules(), ["random"] * 4, games)
        run_study(study, folder / "run", workers=1)
        g = runfolder.read_table(folder / "run", "games")
        s = runfolder.read_table(folder / "run", "seats")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    turns = g["turns"].to_numpy(dtype="float64")
    bankrupt = s.groupby("game_id")["eliminated_turn"].count().to_numpy() > 0
    shares = s.pivot(index="game_id", columns="seat", values="win_share").to_numpy("float64")
    return {
        "games": len(g),
        "mean_turns": float(turns.mean()),
        "se_turns": float(turns.std(ddof=1) / np.sqrt(len(turns))),
        "bankrupt_share": float(bankrupt.mean()),
        "seat_shares": shares.mean(axis=0).tolist(),
        "se_shares": (shares.std(axis=0, ddof=1) / np.sqrt(len(shares))).tolist(),
    }


def agreement(c: dict[str, Any], py: dict[str, Any]) -> list[tuple[str, float, float, float]]:
    """(measure, C, runner, difference in standard errors of the difference)."""
    n_c, n_py = c["games"], py["games"]
    rows = []
    se = np.hypot(c["sd_turns"] / np.sqrt(n_c), py["se_turns"])
    rows.append(
        ("mean turns", c["mean_turns"], py["mean_turns"], _z(c["mean_turns"], py["mean_turns"], se))
    )
    pc, pp = c["bankrupt_share"], py["bankrupt_share"]
    pooled = (pc * n_c + pp * n_py) / (n_c + n_py)
    se = np.sqrt(pooled * (1 - pooled) * (1 / n_c + 1 / n_py))
    rows.append(("games with a bankruptcy", pc, pp, _z(pc, pp, se)))
    for seat in range(4):
        a, b = c["seat_shares"][seat], py["seat_shares"][seat]
        se = np.hypot(np.sqrt(a * (1 - a) / n_c), py["se_shares"][seat])
        rows.append((f"seat {seat + 1} win share", a, b, _z(a, b, se)))
    return rows


def _z(a: float, b: float, se: float) -> float:
    return float((b - a) / se) if se > 0 else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--check-games", type=int, default=200_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(Path(tmp))
        best = {"c": 0.0, **dict.fromkeys(MODES, 0.0)}
        c_check: dict[str, Any] = {}
        for r in range(args.rounds):
            c = c_loop(exe, args.games, seed=r + 1)
            best["c"] = max(best["c"], c["games_per_cpu_s"])
            for key, (records, columns, _, _) in MODES.items():
                got = bench(
                    Rules(), games=args.games, workers=1, records=records, move_columns=columns
                )
                best[key] = max(best[key], got["games_per_cpu_s"] or 0.0)
        c_check = c_loop(exe, args.check_games, seed=99)
    ratios = {key: best[key] / best["c"] for key in TARGETS}
    check = agreement(c_check, runner_games(args.check_games))
    out = {
        "games": args.games,
        "rounds": args.rounds,
        "load_average": os.getloadavg(),
        "games_per_cpu_s": best,
        "ratio_to_c": ratios,
        "targets": TARGETS,
        "agreement": [{"measure": m, "c": a, "runner": b, "z": z} for m, a, b, z in check],
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return
    load = out["load_average"][0]
    print(f"load average {load:.1f}; best of {args.rounds} rounds of {args.games:,} games")
    print(f"  C reference loop          {best['c']:>10,.0f} games per CPU second")
    for key, (_, _, words, _) in MODES.items():
        print(
            f"  {words:<25} {best[key]:>10,.0f} games per CPU second  "
            f"{ratios[key]:.2f} of C (target {TARGETS[key]})"
        )
    print(f"same game? C {args.check_games:,} games against the runner's {args.check_games:,}:")
    for measure, a, b, z in check:
        print(f"  {measure:<24} C {a:8.4f}  runner {b:8.4f}  difference {z:+.1f} se")


if __name__ == "__main__":
    main()
