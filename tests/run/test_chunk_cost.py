"""Chunks are sized by the cost of their games; bench times the loop it names."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from marrakech_sim.play.strategy import StrategySpec
from marrakech_sim.rules.options import Rules
from marrakech_sim.run.config import study_from_dict
from marrakech_sim.run.plan import MIN_CHUNK_GAMES, Plan
from marrakech_sim.strategies.basic import RandomStrategy

HERE = Path(__file__).resolve()


class CountingRandom(RandomStrategy):
    """Random through the Python loop, counting the games it starts (in this process)."""

    COMPILED: ClassVar[str | None] = None
    games: ClassVar[int] = 0

    def on_game_start(self, view: Any) -> None:
        type(self).games += 1


def study(lineup: list[str], games: int, **changes: Any) -> Any:
    data: dict[str, Any] = {
        "seed": 3,
        "games_per_lineup": games,
        "rotation": "none",
        "rulesets": {"two": {"players": 2}},
        "strategies": {name: {} for name in dict.fromkeys(lineup)},
        "schedule": {"kind": "lineups", "lineups": [lineup]},
    }
    data.update(changes)
    return study_from_dict(data)


def test_slow_line_ups_get_enough_chunks_for_every_worker() -> None:
    """4,000 games of expectimax against greedy are cut into many chunks of at least
    MIN_CHUNK_GAMES games (not one 4,096-game chunk), with the same games in order."""
    plan = Plan(study(["expectimax", "greedy"], 4000))
    assert plan.chunks >= 4000 // 128
    sizes = np.diff(plan.chunk_first_game)
    assert (sizes[:-1] >= MIN_CHUNK_GAMES).all()
    ids = np.concatenate([plan.chunk_games(c).game_id for c in range(plan.chunks)])
    assert (ids == np.arange(4000)).all()
    # the same schedule with compiled players is cut into 4096-game chunks: same seeds
    other = Plan(study(["random", "greedy"], 4000, chunk_games=4096))
    assert other.chunks < plan.chunks

    def seeds(p: Plan) -> np.ndarray:
        return np.concatenate([p.chunk_games(c).seed for c in range(p.chunks)])

    assert (seeds(plan) == seeds(other)).all()  # other chunks, the same game seeds


def test_compiled_line_ups_keep_chunk_games_per_chunk() -> None:
    """Compiled line-ups cost one a game: chunks are chunk_games games as before."""
    plan = Plan(study(["random", "greedy"], 10_000, chunk_games=4096))
    assert np.diff(plan.chunk_first_game).tolist() == [4096, 4096, 1808]


def test_bench_without_records_plays_python_line_ups_through_the_python_loop() -> None:
    """bench --no-records of a line-up with no compiled twin plays its games through
    the Python game loop (its strategy is asked), not the compiled loop."""
    from marrakech_sim.run.bench import bench

    ref = f"{HERE}:CountingRandom"
    counting = StrategySpec.of(ref).load_class()  # the class bench loads, from this file
    counting.games = 0
    result = bench(Rules(players=2), [ref, ref], games=20, workers=0, records=False)
    assert result["compiled"] is False and result["games"] == 20
    # two seats, the timed games only (the in-process warm-up chunk is for compiled
    # line-ups: a plug-in's games could end the process)
    assert counting.games == 2 * 20


def test_breakdown_times_each_step_of_writing_a_chunk() -> None:
    """bench --breakdown: the writing is split into its steps (encoding the Parquet bytes,
    their digests, the files), which add up to it, and every step took time."""
    from marrakech_sim.run.bench import breakdown

    out = breakdown(Rules(), ["random"] * 4, chunk_games=64, repeats=1)
    steps = ("play", "tables", "write", "encode", "digest", "files")
    assert all(out[f"{step}_us_per_game"] > 0 for step in steps) and out["games"] == 64
    parts = sum(out[f"{step}_us_per_game"] for step in ("encode", "digest", "files"))
    assert parts == pytest.approx(out["write_us_per_game"], abs=0.03)
