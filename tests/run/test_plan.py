"""The plan: seatings of a block, line-ups per schedule, game numbering, chunks and seeds."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from marrakech_sim.run.config import study_from_dict
from marrakech_sim.run.plan import (
    SEED_GROUP,
    Plan,
    block_seeds,
    lineups_of,
    seatings,
    seed_words,
)


def study(**changes: object):  # type: ignore[no-untyped-def]
    data: dict[str, object] = {
        "seed": 5,
        "games_per_lineup": 50,
        "chunk_games": 60,
        "rulesets": {"four": {}, "three": {"base": "four", "players": 3}},
        "strategies": {n: {"ref": "random"} for n in "abcde"},
        "schedule": {"kind": "round_robin"},
    }
    data.update(changes)
    return study_from_dict(data)


@pytest.mark.parametrize(
    ("lineup", "rotation", "count"),
    [
        (("a", "b", "c", "d"), "all", 24),
        (("a", "a", "b", "b"), "all", 6),
        (("a", "a", "a", "a"), "all", 1),
        (("a", "b", "c", "d"), "latin", 4),
        (("a", "b", "a", "b"), "latin", 2),
        (("a", "b", "c"), "none", 1),
    ],
)
def test_seatings_are_distinct_and_start_with_the_lineup(
    lineup: tuple[str, ...], rotation: str, count: int
) -> None:
    """A block plays each distinct seating once, the line-up itself first."""
    found = seatings(lineup, rotation)
    assert len(found) == count == len(set(found))
    assert found[0] == lineup
    if rotation != "none":  # every strategy sits in every seat equally often
        overall = Counter(x for s in found for x in s)
        for seat in range(len(lineup)):
            per_seat = Counter(s[seat] for s in found)
            assert {x: c * len(lineup) for x, c in per_seat.items()} == overall


def test_lineups_per_schedule_kind() -> None:
    """round_robin: C(n, k) per rule set; gauntlet copies: focus x field; self_play: n."""
    rr = lineups_of(study())
    assert (len(rr["four"]), len(rr["three"])) == (5, 10)
    g = lineups_of(study(schedule={"kind": "gauntlet", "focus": ["a"], "field": ["b", "c"]}))
    assert g["four"] == [("a", "b", "b", "b"), ("a", "c", "c", "c")]
    sp = lineups_of(study(schedule={"kind": "self_play", "strategies": ["b"]}))
    assert sp["three"] == [("b", "b", "b")]


def test_plan_numbers_games_round_by_round_in_whole_block_chunks() -> None:
    """Games are numbered round-major; a block shares one seed; chunks hold whole blocks."""
    plan = Plan(study())
    # 4 players: 24 seatings -> 3 blocks for 50 games; 3 players: 6 -> 9 blocks
    assert plan.games_planned == 5 * 72 + 10 * 54
    seen = []
    for chunk in range(plan.chunks):
        cg = plan.chunk_games(chunk)
        seen.append(cg.game_id)
        # whole blocks: each block in the chunk is complete
        blocks, counts = np.unique(cg.block, return_counts=True)
        sizes = plan.match_size[plan.block_matches(blocks)]
        assert (counts == sizes).all()
        for b in blocks:
            assert len(set(cg.seed[cg.block == b].tolist())) == 1
    ids = np.concatenate(seen)
    assert (ids == np.arange(plan.games_planned)).all()
    # round-major: the first len(matches) blocks are round 0 of every match
    first_round = plan.block_matches(np.arange(len(plan.matches)))
    assert first_round.tolist() == list(range(len(plan.matches)))


def test_block_seeds_come_from_seedsequence_spawn() -> None:
    """Block b's seed is word b % 1024 of SeedSequence(seed).spawn(...)[b // 1024]."""
    blocks = np.array([0, 5, 1023, 1024, 3000])
    got = block_seeds(42, blocks)
    children = np.random.SeedSequence(42).spawn(3)
    for b, seed in zip(blocks, got, strict=True):
        assert seed == children[b // 1024].generate_state(1024, np.uint64)[b % 1024]
    assert (block_seeds(42, blocks[::-1]) == got[::-1]).all()


def test_seed_words_are_seedsequence_generate_state() -> None:
    """The tabled hash gives numpy's own words, for any entropy, child and count."""
    rng = np.random.default_rng(7)
    for _ in range(200):
        seq = np.random.SeedSequence(
            int(rng.integers(0, 2**63)), spawn_key=(int(rng.integers(0, 2**40)),)
        )
        count = int(rng.integers(1, SEED_GROUP + 1))
        assert (seed_words(seq.pool, count) == seq.generate_state(count, np.uint64)).all()


def reference_blocks(plan: Plan) -> dict[str, np.ndarray]:
    """Every block's values listed the straightforward way (the plan before it computed
    them on demand): per-block arrays sorted round-major, running sums of games and costs."""
    from marrakech_sim.run.plan import _lineup_positions, match_costs

    study, sizes = plan.study, plan.match_size
    per_match = -(-study.games_per_lineup // sizes)
    match_of = np.repeat(np.arange(len(sizes)), per_match)
    round_of = np.concatenate([np.arange(n) for n in per_match])
    order = np.lexsort((match_of, round_of))
    match, rounds = match_of[order], round_of[order]
    kept = rounds < np.ceil(study.keep_moves * per_match - 1e-9)[match]
    key = np.arange(len(order))
    if study.common_seeds:
        position = _lineup_positions(plan.matches)
        key = rounds * (position.max() + 1) + position[match]
    costs = match_costs(study, plan.matches)[match] * sizes[match]
    return {
        "match": match,
        "round": rounds,
        "kept": kept,
        "key": key,
        "first": np.concatenate([[0], np.cumsum(sizes[match])]),
        "cost": np.concatenate([[0], np.cumsum(costs)]),
    }


def reference_chunks(first: np.ndarray, cost: np.ndarray, chunk_games: int) -> list[int]:
    """The chunk bounds by binary search over the listed running sums."""
    bounds, blocks = [0], len(first) - 1
    while bounds[-1] < blocks:
        b = bounds[-1]
        by_cost = np.searchsorted(cost, cost[b] + chunk_games, "left")
        by_games = np.searchsorted(first, first[b] + min(64, chunk_games), "left")
        bounds.append(min(max(int(by_cost), int(by_games), b + 1), blocks))
    return bounds


PLANS = {
    "round robin, 2-4 players": {
        "rulesets": {"four": {}, "three": {"players": 3}, "two": {"players": 2}},
        "schedule": {"kind": "round_robin", "repeat": True},
    },
    "latin, common seeds, keep a share": {
        "rotation": "latin",
        "common_seeds": True,
        "keep_moves": 0.13,
        "games_per_lineup": 37,
        "chunk_games": 17,
    },
    "one game a block": {
        "rotation": "none",
        "games_per_lineup": 1001,
        "chunk_games": 333,
        "keep_moves": 0.5,
    },
    "compiled and Python players": {
        "strategies": {"a": {"ref": "random"}, "b": {"ref": "greedy"}, "c": {"ref": "expectimax"}},
        "schedule": {"kind": "round_robin", "repeat": True},
        "games_per_lineup": 300,
        "chunk_games": 200,
        "common_seeds": True,
        "keep_moves": 0.3,
    },
    "gauntlet of combinations": {
        "schedule": {
            "kind": "gauntlet",
            "focus": ["a", "b"],
            "field": ["c", "d", "e"],
            "opponents": "combinations",
            "repeat": True,
        },
        "games_per_lineup": 100,
        "chunk_games": 97,
        "keep_moves": 0.0,
    },
}


@pytest.mark.parametrize("changes", PLANS.values(), ids=PLANS.keys())
def test_blocks_on_demand_equal_the_listed_blocks(changes: dict[str, object]) -> None:
    """The plan's closed form gives every block the match, round, first game, seed key
    and kept moves of the straightforward per-block listing, and the same chunks."""
    plan = Plan(study(**changes))
    ref = reference_blocks(plan)
    blocks = np.arange(plan.blocks)
    assert plan.blocks == len(ref["match"]) and plan.games_planned == ref["first"][-1]
    assert (plan.block_matches(blocks) == ref["match"]).all()
    assert (plan.block_rounds(blocks) == ref["round"]).all()
    assert (plan.block_moves_kept(blocks) == ref["kept"]).all()
    assert (plan.block_seed_keys(blocks) == ref["key"]).all()
    assert (plan.block_first_games(np.arange(plan.blocks + 1)) == ref["first"]).all()
    assert (plan.layout.first(np.arange(plan.blocks + 1), "costs") == ref["cost"]).all()
    for kind in ("games", "costs"):  # the scalar searches the chunk bounds use
        sums = ref["first" if kind == "games" else "cost"]
        for value in np.unique(np.concatenate([sums - 1, sums, sums + 1, [sums[-1] + 2]])).tolist():
            expected = int(np.searchsorted(sums, value, "left"))
            assert plan.layout.reaching(value, kind) == expected, (kind, value)
        some = blocks[:: max(1, plan.blocks // 200)]
        assert [plan.layout.first_one(int(b), kind) for b in some] == sums[some].tolist()
    bounds = reference_chunks(ref["first"], ref["cost"], plan.study.chunk_games)
    assert plan.chunk_first_block.tolist() == bounds
    for m in range(len(plan.matches)):
        assert (plan.match_blocks(m) == np.flatnonzero(ref["match"] == m)).all()
        assert (plan.match_blocks(m, 2) == np.flatnonzero(ref["match"] == m)[:2]).all()
    for c in (0, plan.chunks // 2, plan.chunks - 1):
        cg = plan.chunk_games(c)
        b0, b1 = plan.chunk_first_block[c], plan.chunk_first_block[c + 1]
        assert cg.game_id.tolist() == list(range(ref["first"][b0], ref["first"][b1]))
        assert (
            cg.block == np.repeat(np.arange(b0, b1), plan.match_size[ref["match"][b0:b1]])
        ).all()
        assert (cg.seed == block_seeds(5, ref["key"][cg.block])).all()
        assert (cg.moves_kept == ref["kept"][cg.block]).all()


def test_a_billion_game_plan_is_small() -> None:
    """A study of 10^9 one-game blocks plans in memory of its chunks, not of its blocks:
    the plan pickles to well under a megabyte, and its last chunk ends at the last game."""
    import pickle

    plan = Plan(
        study(
            rulesets={"two": {"players": 2}},
            schedule={"kind": "lineups", "lineups": [["a", "b"]]},
            rotation="none",
            games_per_lineup=10**9,
            chunk_games=65536,
        )
    )
    assert plan.blocks == plan.games_planned == 10**9
    assert plan.chunks == -(-(10**9) // 65536)
    assert len(pickle.dumps(plan)) < 1 << 20
    last = plan.chunk_games(plan.chunks - 1)
    assert last.game_id[-1] == 10**9 - 1 and len(last) == 10**9 % 65536
