"""Games per second of the built-in strategies, 4 players, standard rules, one core.

    python benchmarks/bench_strategies.py [--seconds 2]

Lines: random and greedy through the compiled loop (strategies.compiled.play_batch
with the twins); greedy, a Python plug-in random (a user's file strategy,
tests/strategies_examples/good.py:PlainRandom), expectimax and mcts (small budgets)
through play_game. Compilation is done before timing.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from marrakech_sim import turns
from marrakech_sim.game import play_game
from marrakech_sim.rules import core as k
from marrakech_sim.rules.options import Rules
from marrakech_sim.strategy import StrategySpec
from strategies import compiled, twins

RULES = Rules()
PLUGIN = str(Path(__file__).resolve().parent.parent / "tests/strategies_examples/good.py")


def compiled_rate(ref: str, games: int) -> Callable[[], float]:
    twin, vector = twins.twin_of(StrategySpec.of(ref).build())  # type: ignore[misc]
    p = RULES.players
    codes = np.full((games, p), twins.CODES[twin], np.int64)
    params = np.broadcast_to(vector, (games, p, len(vector))).copy()
    max_turns = turns.max_turns(RULES)
    moves = np.full((games * max_turns, turns.new_moves(RULES).shape[1]), turns.NULL, np.int32)
    out = np.zeros((games, 3), np.int64)
    seats = np.zeros((games, p, turns.SEAT_COLUMNS), np.int32)
    init = k.initial_state(RULES)

    def run() -> float:
        seeds = np.arange(games, dtype=np.uint64) + np.uint64(time.time_ns() % 1000)
        started = time.perf_counter()
        compiled.play_batch(init, seeds, codes, params, moves, out, seats)
        return games / (time.perf_counter() - started)

    return run


def python_rate(ref: str, params: dict, games: int) -> Callable[[], float]:
    spec = StrategySpec.of(ref, params)

    def run() -> float:
        started = time.perf_counter()
        for seed in range(games):
            play_game(RULES, [spec.build() for _ in range(RULES.players)], seed)
        return games / (time.perf_counter() - started)

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs")
    args = parser.parse_args()
    cases = [
        ("random, compiled", compiled_rate("random", 50_000)),
        ("greedy, compiled", compiled_rate("greedy", 5_000)),
        ("greedy, Python", python_rate("greedy", {}, 100)),
        ("plug-in random (file, Python)", python_rate(f"{PLUGIN}:PlainRandom", {}, 300)),
        ("expectimax depth 2", python_rate("expectimax", {"depth": 2}, 5)),
        ("mcts 30 rollouts, horizon 4", python_rate("mcts", {"rollouts": 30, "horizon": 4}, 3)),
    ]
    for name, run in cases:
        run()  # compile / warm up
        best = max(run() for _ in range(args.repeats))
        print(f"{name:34s} {best:12,.0f} games/s", flush=True)


if __name__ == "__main__":
    main()
