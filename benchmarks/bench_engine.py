"""Engine speed on one core, 4 players, uniformly random decisions (README, Speed).

    .venv/bin/python benchmarks/bench_engine.py [--seconds S] [--json]

Prints games per second for
  compiled  whole games inside the compiled loop (arena.loop.play_batch with the
            `random` twin, every move recorded in the buffer, 256 games a call as the
            runner plays them);                                      target >= 100,000
  api       games through the public Python API (GameState.apply; draws and rolls from
            chance_outcomes() by their probabilities, orient and place a random.choice
            of legal_actions(), as a user's own loop plays them);        target >= 3,000
  plugin    a Python plug-in strategy (marrakech_sim.strategies.basic.RandomStrategy, which uses
            view.rng.below) through marrakech_sim.play.game.play_game;      target >= 5,000
and perft nodes (leaves) per second from the 4-player start, with the ratio to each target.
Each figure is the best of ten short timed rounds after a warm-up (compilation
excluded), timed in the thread's CPU time: as with `timeit`, the best round is the one
least disturbed by other load on the machine, which only ever slows a round down. The
items take turns round by round, so a slow spell of the machine does not fall on all of
one item's rounds. This is a measurement, not a test: figures vary with the machine and
its load.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Callable

import numpy as np

from marrakech_sim import GameState, Rules
from marrakech_sim.arena import BATCH_GAMES, twins
from marrakech_sim.arena.loop import move_columns_buffer, play_batch
from marrakech_sim.play import turns as t
from marrakech_sim.play.game import play_game
from marrakech_sim.play.strategy import StrategySpec
from marrakech_sim.rules import core as k
from marrakech_sim.strategies.basic import RandomStrategy

TARGETS = {"compiled": 100_000.0, "api": 3_000.0, "plugin": 5_000.0}
PERFT_DEPTH = 9


def _round(run: Callable[[], int], seconds: float) -> float:
    """Units/s of `run` called until `seconds` of thread CPU time have passed."""
    units = 0
    start = time.thread_time()
    while True:
        units += run()
        elapsed = time.thread_time() - start
        if elapsed >= seconds:
            return units / elapsed


def best_rates(
    runs: dict[str, Callable[[], int]], seconds: float, rounds: int = 10
) -> dict[str, float]:
    """Best units/s of each call (which returns the units it did) over `rounds` rounds of
    about seconds/rounds each, after one warm-up call each. The calls take turns round
    by round, so a slow spell of a shared machine does not fall on all of one's rounds.
    """
    for run in runs.values():
        run()
    best = dict.fromkeys(runs, 0.0)
    for _ in range(rounds):
        for name, run in runs.items():
            best[name] = max(best[name], _round(run, seconds / rounds))
    return best


def compiled_games(
    rules: Rules, ref: str = "random", batch: int = BATCH_GAMES
) -> Callable[[], int]:
    """A call that plays `batch` whole games of `ref`'s compiled twin in every seat through
    play_batch (moves recorded, buffers reused, new seeds each call); returns `batch`.

    As the runner plays them (arena.games): BATCH_GAMES games a call, into a moves buffer
    from move_columns_buffer, which stays in the core's cache.
    """
    twin, vector = twins.twin_of(StrategySpec.of(ref).build())  # type: ignore[misc]
    p = rules.players
    init = k.initial_state(rules)
    codes = np.full((batch, p), twins.CODES[twin], np.int64)
    params = np.broadcast_to(vector, (batch, p, len(vector))).copy()
    moves = move_columns_buffer(t.move_columns(p), batch * t.max_turns(rules))
    games = np.zeros((batch, 3), np.int32)
    seats = np.zeros((batch, p, t.SEAT_COLUMNS), np.int32)
    first = [0]

    def run() -> int:
        seeds = np.arange(first[0], first[0] + batch, dtype=np.uint64)
        first[0] += batch
        if play_batch(init, seeds, codes, params, moves, games, seats) != 0:
            raise RuntimeError("play_batch reported an illegal twin action")
        return batch

    return run


def api_games(rules: Rules) -> Callable[[], int]:
    """Whole games through the public GameState API, as a user's own loop would play them:
    chance phases (draw, roll) from `chance_outcomes()` by their probabilities, the player's
    phases (orient, place) a uniform choice among `legal_actions()`."""
    rnd = random.Random(1)
    start = GameState.start(rules)
    choice, choices = rnd.choice, rnd.choices

    def run() -> int:
        state = start
        while not state.is_over:
            outcomes = state.chance_outcomes()
            if outcomes:
                actions, weights = zip(*outcomes, strict=True)
                state = state.apply(choices(actions, weights)[0])
            else:
                state = state.apply(choice(state.legal_actions()))
        return 1

    return run


def plugin_games(rules: Rules) -> Callable[[], int]:
    """Whole games through play_game with the RandomStrategy plug-in in every seat."""
    lineup = [RandomStrategy() for _ in range(rules.players)]
    seed = [0]

    def run() -> int:
        seed[0] += 1
        play_game(rules, lineup, seed[0])
        return 1

    return run


def perft_leaves(rules: Rules, depth: int = PERFT_DEPTH) -> Callable[[], int]:
    """k_perft from the start position; returns the leaves counted."""
    s = k.initial_state(rules)
    faces = np.array(rules.distinct_faces, dtype=np.int64)
    return lambda: int(k.k_perft(s.copy(), depth, faces))


def options(argv: list[str] | None, doc: str, seconds: float) -> argparse.Namespace:
    """A benchmark's options (--seconds per line, --json); pins the process to one core."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=seconds, help="timed seconds per line")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    args = parser.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    return args


def main(argv: list[str] | None = None) -> int:
    args = options(argv, __doc__, 3.0)
    rules = Rules(players=4)
    perft = perft_leaves(rules)
    results = best_rates(
        {
            "compiled": compiled_games(rules),
            "api": api_games(rules),
            "plugin": plugin_games(rules),
            "perft": perft,
        },
        args.seconds,
    )
    perft_rate, depth, leaves = results.pop("perft"), PERFT_DEPTH, perft()
    if args.json:
        out = {
            name: {"games_per_s": rate, "target": TARGETS[name]} for name, rate in results.items()
        }
        out["perft"] = {"nodes_per_s": perft_rate, "depth": depth, "leaves": leaves}
        print(json.dumps(out, indent=2))
        return 0
    print("one core, 4 players, uniformly random decisions")
    for name, rate in results.items():
        target = TARGETS[name]
        print(f"{name:9s} {rate:12,.0f} games/s   target {target:9,.0f}   x{rate / target:.2f}")
    print(f"perft     {perft_rate:12,.0f} nodes/s   (depth {depth}: {leaves:,} leaves)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
