"""The compiled core's precomputed and kept data agree with what they stand for.

The core keeps some facts instead of recomputing them each turn: the walk table (from
`step`, RULES.md section 4), and per-seat counters and each square's whole-rug partner
(RULES.md sections 6.3 and 7), which every placement updates. Here the table is checked
against stepping, and the kept data against a fresh recount after every action of random
games in several rule variants.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from marrakech_sim import GameState, Rules
from marrakech_sim.rules import core as k


def _stepped(x: int, y: int, f: int, steps: int, n: int) -> tuple[int, int, int]:
    for _ in range(steps):
        x, y, f = k.step.py_func(x, y, f, n)
    return x, y, f


@pytest.mark.parametrize("n", [5, 7, 9, k.WALK_BOARDS, k.WALK_BOARDS + 2])
def test_walk_table_matches_stepping(n):
    """Every walk, table legs included (and the boards past the table), is step by step."""
    steps_range = range(2 * k.WALK_STEPS + 2)
    walk = k.walk  # the compiled form
    for sq in range(n * n):
        x, y = sq % n, sq // n
        for f in range(4):
            for steps in steps_range:
                where = (x, y, f, steps, n)
                assert tuple(walk(x, y, f, steps, n)) == _stepped(*where), where


@pytest.mark.parametrize("n", [5, 7, k.WALK_BOARDS, k.WALK_BOARDS + 2])
def test_placements_on_an_empty_board_are_the_geometric_candidates(n):
    """With Assam on any square of an empty board, the legal placements (the candidate
    table up to WALK_BOARDS, candidate_mask past it) are exactly the squares next to him
    and a neighbour of theirs other than his (RULES.md sections 6.1 and 6.2)."""
    s = k.initial_state(Rules(board_size=n))
    out = np.empty(16, np.int64)
    for ay in range(n):
        for ax in range(n):
            s[k.X_], s[k.Y_] = ax, ay
            got = {tuple(k.unpack_placement(int(c))) for c in out[: k.legal_placements(s, out)]}
            want = {
                (x1, y1, x2, y2)
                for x1, y1 in ((ax, ay - 1), (ax + 1, ay), (ax, ay + 1), (ax - 1, ay))
                for x2, y2 in ((x1, y1 - 1), (x1 + 1, y1), (x1, y1 + 1), (x1 - 1, y1))
                if max(x1, y1, x2, y2) < n and min(x1, y1, x2, y2) >= 0 and (x2, y2) != (ax, ay)
            }
            assert got == want, (n, ax, ay)


VARIANTS = {
    "4p": {"players": 4},
    "2p": {"players": 2},
    "3p-own-cover": {"players": 3, "own_rugs_fully_coverable": True},
    "2p-own-cover-orient-at-end": {
        "players": 2,
        "own_rugs_fully_coverable": True,
        "orient_at_end": True,
    },
    "4p-board5-poor": {"players": 4, "board_size": 5, "starting_dirhams": 3},
}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_kept_data_match_a_recount(variant):
    """After every action, the counters and partners kept by the kernels are the recount's."""
    rules = Rules(**VARIANTS[variant])
    rnd = random.Random(len(variant))
    whole_rugs_seen = 0
    for _ in range(6):
        state = GameState.start(rules)
        while not state.is_over:
            state = state.apply(rnd.choice(list(state.legal_actions())))
            kept = np.array(state.packed)
            recounted = kept.copy()
            k.k_recount(recounted)
            assert np.array_equal(kept, recounted), state.to_notation()
            partner = kept[kept[k.PARTNER_AT] : kept[k.PARTNER_AT] + rules.board_size**2]
            whole_rugs_seen += int(np.count_nonzero(partner >= 0))
    assert whole_rugs_seen > 0


def _region_by_search(colours: list[int], sq: int, n: int) -> int:
    """RULES.md section 5's region, by a plain depth-first search over (x, y)."""
    colour = colours[sq]
    if colour < 0:
        return 0
    seen, todo = {sq}, [sq]
    while todo:
        x, y = todo[-1] % n, todo.pop() // n
        for nx, ny in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            j = ny * n + nx
            if 0 <= nx < n and 0 <= ny < n and j not in seen and colours[j] == colour:
                seen.add(j)
                todo.append(j)
    return len(seen)


@pytest.mark.parametrize("n", [5, 7, 9, 11])
def test_region_size_is_the_connected_region(n):
    """region_size, as a bit set (boards 5 and 7) or a fill (9 and 11), counts the
    4-connected squares of the colour (none across a row's end), and leaves the position."""
    rules = Rules(board_size=n, players=4)
    rng = random.Random(n)
    for trial in range(300):
        s = k.initial_state(rules)
        colours_in_play = rng.choice([1, 2, 4])  # few colours: large, winding regions
        empty = rng.random() * 0.5
        board = [
            -1 if rng.random() < empty else rng.randrange(colours_in_play) for _ in range(n * n)
        ]
        s[s[k.COLOUR_AT] : s[k.COLOUR_AT] + n * n] = board
        k.k_recount(s)  # the kept sets of each colour's squares (BITS), from the board
        before = s.copy()
        for sq in range(n * n):
            got = k.region_size(s, sq)
            assert got == _region_by_search(board, sq, n), (trial, sq, board)
        scratch = slice(s[k.SCRATCH_AT], s[k.FACES_AT])  # the fill's queue, no position
        s[scratch] = before[scratch]
        assert (s == before).all()
