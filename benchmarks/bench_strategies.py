"""Games per second of the built-in strategies, 4 players, standard rules, one core.

    .venv/bin/python benchmarks/bench_strategies.py [--seconds S] [--json]

Lines: random and greedy through the compiled loop (arena.loop.play_batch with
the twins, every move recorded, buffers reused); greedy, a Python plug-in random (a user's
file strategy, strategies/cautious.py:PlainRandom), expectimax and mcts (small
budgets) through play_game; the plug-in again with a study's 10 s budget per decision
(one decision watchdog around all games, as a study's worker has around a chunk).
Targets (README, Speed): compiled random >= 100,000, compiled greedy
>= 10,000, the plug-in >= 5,000.

Each figure is the best of ten short timed rounds after a warm-up (compilation excluded),
timed in the thread's CPU time, the lines taking turns round by round, as in
bench_engine.py: other load on the machine only ever slows a round down. A measurement,
not a test: figures vary with the machine.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from bench_engine import best_rates, compiled_games, options  # (this folder is on sys.path)

from marrakech_sim.play.game import decision_watchdog, play_game
from marrakech_sim.play.strategy import StrategySpec
from marrakech_sim.rules.options import Rules

RULES = Rules()
PLUGIN = str(Path(__file__).resolve().parent.parent / "strategies/cautious.py")
TARGETS = {
    "random, compiled": 100_000.0,
    "greedy, compiled": 10_000.0,
    "plug-in random (file, Python)": 5_000.0,
}


def python_rate(ref: str, params: dict, budget: float | None = None) -> Callable[[], int]:
    """One whole game of `ref` in every seat through play_game per call, new seeds;
    with `budget` seconds per decision, as a study's worker plays them."""
    spec = StrategySpec.of(ref, params)
    seed = [0]
    budgets = [budget] * RULES.players

    def run() -> int:
        seed[0] += 1
        play_game(
            RULES, [spec.build() for _ in range(RULES.players)], seed[0], time_budgets=budgets
        )
        return 1

    return run


def main(argv: list[str] | None = None) -> int:
    args = options(argv, __doc__, 2.0)
    cases = {
        "random, compiled": compiled_games(RULES, "random"),
        "greedy, compiled": compiled_games(RULES, "greedy"),
        "greedy, Python": python_rate("greedy", {}),
        "plug-in random (file, Python)": python_rate(f"{PLUGIN}:PlainRandom", {}),
        "plug-in random, 10 s budget": python_rate(f"{PLUGIN}:PlainRandom", {}, 10.0),
        "expectimax depth 2": python_rate("expectimax", {"depth": 2}),
        "mcts 30 rollouts, horizon 4": python_rate("mcts", {"rollouts": 30, "horizon": 4}),
    }
    with decision_watchdog([10.0]):  # one for all games, as around a study's chunk
        results = best_rates(cases, args.seconds)
    if args.json:
        out = {
            name: {"games_per_s": rate, "target": TARGETS.get(name)}
            for name, rate in results.items()
        }
        print(json.dumps(out, indent=2))
        return 0
    for name, rate in results.items():
        target = TARGETS.get(name)
        versus = f"  ({rate / target:.1f}x the target {target:,.0f})" if target else ""
        print(f"{name:31s} {rate:10,.0f} games/s{versus}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
