"""The strategy ladder: head-to-head win rates with seat rotation and 95% intervals.

For each pair (stronger A, weaker B) and each player count k, a block is one seed
played under every rotation of the line-up [A, B, ..., B] (A in each seat once, the same
dice): A's win share over the block's games is one observation. The rate's 95%
interval is Wilson's at the block-effective number of games (the block-aware interval
of marrakech_sim.stats, from block totals); A beats B when the interval lies above 1/k.

    python benchmarks/ladder.py --blocks 60            # the table in docs/STRATEGIES.md

Games of compiled-only line-ups run through the compiled loop; the others through
play_game (one core).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from marrakech_sim.play.game import play_game
from marrakech_sim.play.strategy import StrategySpec
from marrakech_sim.rules.options import Rules
from marrakech_sim.stats import wilson_interval

#: (stronger, weaker) pairs, weakest first; specs as (registered name, parameters)
LADDER = [
    (("greedy", {}), ("random", {})),
    (("expectimax", {}), ("greedy", {})),
    (("mcts", {}), ("greedy", {})),
    (("mcts", {}), ("random", {})),
]


def label(ref: str, params: dict) -> str:
    return ref + (str(params).replace("'", "") if params else "")


def block_share(rules: Rules, a: StrategySpec, b: StrategySpec, seed: int) -> float:
    """A's mean win share over the k rotations of [A, B, ..., B] with one seed."""
    k = rules.players
    total = 0.0
    for seat in range(k):
        lineup = [a.build() if i == seat else b.build() for i in range(k)]
        record = play_game(rules, lineup, seed)
        if record.error is not None:
            raise RuntimeError(record.error)
        total += record.win_shares[seat]
    return total / k


def rate_interval(shares: np.ndarray) -> tuple[float, float, float]:
    """Mean of block shares and its Wilson interval at the effective number of games."""
    rate = float(shares.mean())
    var = float(shares.var(ddof=1)) / len(shares) if len(shares) > 1 else 0.0
    n_eff = rate * (1 - rate) / var if var > 0 else float(len(shares))
    lo, hi = wilson_interval(rate * n_eff, n_eff)
    return rate, float(lo), float(hi)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=60, help="seeds per pair and k")
    parser.add_argument("--players", type=int, nargs="+", default=[4, 2])
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()
    print("| k | stronger | weaker | blocks | games | stronger's win rate | 95% interval | 1/k |")
    print("|---|---|---|---:|---:|---:|---|---:|")
    for players in args.players:
        rules = Rules(players=players)
        for (ra, pa), (rb, pb) in LADDER:
            a, b = StrategySpec.of(ra, pa), StrategySpec.of(rb, pb)
            started = time.perf_counter()
            shares = np.array([block_share(rules, a, b, args.seed + i) for i in range(args.blocks)])
            rate, lo, hi = rate_interval(shares)
            verdict = "beats" if lo > 1 / players else "not shown"
            print(
                f"| {players} | {label(ra, pa)} | {label(rb, pb)} | {args.blocks} | "
                f"{args.blocks * players} | {rate:.3f} | [{lo:.3f}, {hi:.3f}] {verdict} | "
                f"{1 / players:.3f} |",
                flush=True,
            )
            print(f"<!-- {time.perf_counter() - started:.0f} s -->", flush=True)


if __name__ == "__main__":
    main()
