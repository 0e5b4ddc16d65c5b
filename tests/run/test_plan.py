"""The plan: seatings of a block, line-ups per schedule, game numbering, chunks and seeds."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from marrakech_sim.run.config import study_from_dict
from marrakech_sim.run.plan import Plan, block_seeds, lineups_of, seatings


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
        sizes = plan.match_size[plan.block_match[blocks]]
        assert (counts == sizes).all()
        for b in blocks:
            assert len(set(cg.seed[cg.block == b].tolist())) == 1
    ids = np.concatenate(seen)
    assert (ids == np.arange(plan.games_planned)).all()
    # round-major: the first len(matches) blocks are round 0 of every match
    assert plan.block_match[: len(plan.matches)].tolist() == list(range(len(plan.matches)))


def test_block_seeds_come_from_seedsequence_spawn() -> None:
    """Block b's seed is word b % 1024 of SeedSequence(seed).spawn(...)[b // 1024]."""
    blocks = np.array([0, 5, 1023, 1024, 3000])
    got = block_seeds(42, blocks)
    children = np.random.SeedSequence(42).spawn(3)
    for b, seed in zip(blocks, got, strict=True):
        assert seed == children[b // 1024].generate_state(1024, np.uint64)[b % 1024]
    assert (block_seeds(42, blocks[::-1]) == got[::-1]).all()
