"""The skill ladder: `expert`'s strength against its budget, with 95% block-aware intervals.

Levels, weakest first: random, greedy, then expert at each budget. For each player count
and each level L above random, L plays the level below it and (expert levels) greedy:
one block is one seed played under every rotation of the line-up [L, B, ..., B] (L in
each seat once, the same dice); L's mean win share over the block is one observation,
and the interval is Wilson's at the block-effective number of games (as
benchmarks/ladder.py). Every game runs in the compiled loop (play_batch), one core.
Games per second of each level: self-play (the level in every seat), thread CPU time.

    python benchmarks/skill_ladder.py                                  # docs/STRATEGIES.md table
    python benchmarks/skill_ladder.py --budgets 1 4 --blocks 20 --players 2   # a quick look
    python benchmarks/skill_ladder.py --against expectimax --budgets 8 --players 2 --blocks 100
    python benchmarks/skill_ladder.py --restricted --blocks 2000     # which decision matters
    python benchmarks/skill_ladder.py --budgets 4 --width 1 --players 2 --blocks 500 --seed 10000
    python benchmarks/skill_ladder.py --budgets 1 8 --width 1 --look 0 --blocks 200   # expert-fast

With --against REF (a strategy without a compiled twin, such as expectimax) each expert
level plays REF instead, through play_game (the Python loop, one core).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ladder import block_share, rate_interval

from marrakech_sim.arena import loop, twins
from marrakech_sim.play import turns
from marrakech_sim.play.strategy import StrategySpec
from marrakech_sim.rules import core as k
from marrakech_sim.rules.options import Rules
from marrakech_sim.strategies.expert import MODEL_LOOKAHEAD
from marrakech_sim.strategies.greedy import GreedyStrategy

#: a level: (label, twin name, parameters)
Level = tuple[str, str, dict]


def expert_level(budget: int, width: int = 0, look: float = MODEL_LOOKAHEAD) -> Level:
    """expert at `budget`, `width` and `look` (the defaults, 0 and MODEL_LOOKAHEAD, are
    not in the label)."""
    label = f"expert{{budget={budget}" + (f",width={width}" if width else "")
    label += (f",look={look:g}" if look != MODEL_LOOKAHEAD else "") + "}"
    return (label, "expert", {"budget": budget, "width": width, "look": look})


def levels(budgets: list[int], width: int = 0, look: float = MODEL_LOOKAHEAD) -> list[Level]:
    """random, greedy, then expert at each budget (in the order given), `width` and
    `look` (both from budget 2: budget 1 has no play-outs)."""
    out: list[Level] = [
        ("random", "random", {}),
        ("greedy", "greedy", dict(GreedyStrategy.PARAMETERS)),
    ]
    out += [expert_level(b, width, look) if b >= 2 else expert_level(b) for b in budgets]
    return out


def play(rules: Rules, lineups: list[list[Level]], seeds: np.ndarray) -> tuple[np.ndarray, float]:
    """play_batch over games (lineups[g] with seeds[g]); (win share per game and seat,
    thread CPU seconds)."""
    p = rules.players
    g = len(lineups)
    codes = np.empty((g, p), np.int64)
    params = np.zeros((g, p, twins.MAX_PARAMETERS))
    for i, lineup in enumerate(lineups):
        for seat, (_, twin, values) in enumerate(lineup):
            codes[i, seat] = twins.CODES[twin]
            params[i, seat] = twins.encode_params(twin, values)
    max_turns = turns.max_turns(rules)
    moves = np.empty((turns.move_columns(p), g * max_turns), np.int16)
    games = np.zeros((g, 3), np.int64)
    seats = np.zeros((g, p, turns.SEAT_COLUMNS), np.int32)
    started = time.thread_time()
    err = loop.play_batch(k.initial_state(rules), seeds, codes, params, moves, games, seats)
    spent = time.thread_time() - started
    if err != 0:
        raise RuntimeError(f"play_batch failed with code {err}")
    winners = seats[:, :, turns.S_WINNER].astype(float)
    return winners / winners.sum(axis=1, keepdims=True), spent


@dataclass(frozen=True, slots=True)
class Row:
    """One match of the ladder: `stronger` in one seat against `weaker` in the others."""

    players: int
    stronger: str
    weaker: str
    blocks: int
    games: int
    rate: float
    low: float
    high: float
    games_per_s: float
    below: bool  # weaker is the level just below stronger


def match(rules: Rules, a: Level, b: Level, blocks: int, seed: int, below: bool) -> Row:
    """A against B with seat rotation: `blocks` seeds, each under all k rotations."""
    p = rules.players
    lineups = [
        [a if i == seat else b for i in range(p)] for _ in range(blocks) for seat in range(p)
    ]
    seeds = np.repeat(np.arange(seed, seed + blocks, dtype=np.uint64), p)
    shares, spent = play(rules, lineups, seeds)
    own = shares[np.arange(len(lineups)), np.tile(np.arange(p), blocks)]
    rate, low, high = rate_interval(own.reshape(blocks, p).mean(axis=1))
    return Row(p, a[0], b[0], blocks, blocks * p, rate, low, high, len(lineups) / spent, below)


def match_python(rules: Rules, budget: int, against: str, blocks: int, seed: int) -> Row:
    """expert at `budget` against `against` (registered name, default parameters) with
    seat rotation, through play_game."""
    a, b = StrategySpec.of("expert", {"budget": budget}), StrategySpec.of(against)
    started = time.thread_time()
    shares = np.array([block_share(rules, a, b, seed + i) for i in range(blocks)])
    spent = time.thread_time() - started
    rate, low, high = rate_interval(shares)
    p = rules.players
    return Row(
        p,
        f"expert{{budget={budget}}}",
        against,
        blocks,
        blocks * p,
        rate,
        low,
        high,
        blocks * p / spent,
        False,
    )


def self_play_speed(rules: Rules, level: Level, games: int, seed: int) -> float:
    """Games per second (thread CPU time) of `level` in every seat."""
    _, spent = play(
        rules, [[level] * rules.players] * games, np.arange(seed, seed + games, dtype=np.uint64)
    )
    return games / spent


def chart(rows: list[Row], speeds: dict[str, dict[int, float]], path: Path) -> None:
    """Win rate against greedy and against the level below, per budget (object API)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 4))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 2, sharey=True)
    for ax, against in zip(axes, ("greedy", "below"), strict=True):
        for players, marker in ((2, "o"), (4, "s")):
            picked = [
                r
                for r in rows
                if r.players == players
                and r.stronger.startswith("expert")
                and (r.weaker == "greedy" if against == "greedy" else r.below)
            ]
            if not picked:
                continue
            budgets = [int(r.stronger.split("=")[1].split(",")[0].rstrip("}")) for r in picked]
            rate = np.array([r.rate for r in picked])
            err = np.array([[r.rate - r.low for r in picked], [r.high - r.rate for r in picked]])
            ax.errorbar(
                budgets, rate, yerr=err, marker=marker, capsize=3, label=f"{players} players"
            )
            ax.axhline(1 / players, color="grey", linewidth=0.8, linestyle=":")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("expert budget (samples per option and decision)")
        ax.set_title("against greedy" if against == "greedy" else "against the level below")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("win rate, 95% block-aware interval (dotted: 1/k)")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata={"Software": None})


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--budgets", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32])
    parser.add_argument("--blocks", type=int, default=100, help="seeds per match")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument(
        "--width", type=int, default=0, help="the expert levels' width from budget 2 (0: all)"
    )
    parser.add_argument(
        "--look",
        type=float,
        default=MODEL_LOOKAHEAD,
        help="the expert levels' look from budget 2 (0: the other seats modelled as greedy)",
    )
    parser.add_argument(
        "--speed-games", type=int, default=40, help="self-play games per speed line"
    )
    parser.add_argument(
        "--png", type=Path, help="write the chart here (e.g. docs/img/skill_ladder.png)"
    )
    parser.add_argument("--json", type=Path, help="write the rows and speeds here")
    parser.add_argument("--against", help="play each expert level against this strategy only")
    parser.add_argument(
        "--restricted",
        action="store_true",
        help="rotation-only and placement-only (greedy-based) against each other, random, greedy",
    )
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    if args.restricted:
        rotation = ("rotation-only", "rotation-only", {"budget": 0})
        placement = ("placement-only", "placement-only", {"budget": 0})
        random_, greedy = levels([])
        print("| k | stronger | weaker | blocks | games | stronger's win rate | 95% interval |")
        print("|---|---|---|---:|---:|---:|---|")
        for players in args.players:
            rules = Rules(players=players)
            for a, b in [
                (rotation, placement),
                (rotation, random_),
                (placement, random_),
                (greedy, rotation),
                (greedy, placement),
            ]:
                row = match(rules, a, b, args.blocks, args.seed, below=False)
                print(
                    f"| {players} | {row.stronger} | {row.weaker} | {row.blocks} | {row.games} "
                    f"| {row.rate:.3f} | [{row.low:.3f}, {row.high:.3f}] |",
                    flush=True,
                )
        return
    if args.against:
        print(
            "| k | stronger | weaker | blocks | games | stronger's win rate | 95% interval "
            "| games/s |"
        )
        print("|---|---|---|---:|---:|---:|---|---:|")
        for players in args.players:
            for budget in args.budgets:
                row = match_python(
                    Rules(players=players), budget, args.against, args.blocks, args.seed
                )
                print(
                    f"| {players} | {row.stronger} | {row.weaker} | {row.blocks} | {row.games} "
                    f"| {row.rate:.3f} | [{row.low:.3f}, {row.high:.3f}] | "
                    f"{row.games_per_s:,.1f} |",
                    flush=True,
                )
        return
    ladder = levels(args.budgets, args.width, args.look)
    for players in args.players:  # compile (or load) the kernels before any timing
        self_play_speed(Rules(players=players), ladder[-1], 1, args.seed)
    rows: list[Row] = []
    speeds: dict[str, dict[int, float]] = {}
    print(
        "| k | stronger | weaker | blocks | games | stronger's win rate | 95% interval "
        "| games/s of the match |"
    )
    print("|---|---|---|---:|---:|---:|---|---:|")
    for players in args.players:
        rules = Rules(players=players)
        for i in range(1, len(ladder)):
            pairs = [ladder[i - 1]] + ([ladder[1]] if i > 2 else [])
            for below in pairs:
                row = match(rules, ladder[i], below, args.blocks, args.seed, below is ladder[i - 1])
                rows.append(row)
                print(
                    f"| {players} | {row.stronger} | {row.weaker} | {row.blocks} | {row.games} | "
                    f"{row.rate:.3f} | [{row.low:.3f}, {row.high:.3f}] | {row.games_per_s:,.0f} |",
                    flush=True,
                )
    print()
    print(
        "| level | " + " | ".join(f"games/s, {p} players (self-play)" for p in args.players) + " |"
    )
    print("|---|" + "---:|" * len(args.players))
    for level in ladder:
        speeds[level[0]] = {
            p: self_play_speed(Rules(players=p), level, args.speed_games, args.seed)
            for p in args.players
        }
        cells = " | ".join(f"{speeds[level[0]][p]:,.0f}" for p in args.players)
        print(f"| {level[0]} | {cells} |", flush=True)
    if args.png:
        chart(rows, speeds, args.png)
    if args.json:
        args.json.write_text(
            json.dumps({"rows": [asdict(r) for r in rows], "speeds": speeds}, indent=1)
        )


if __name__ == "__main__":
    main()
