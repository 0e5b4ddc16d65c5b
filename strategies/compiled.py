"""The compiled whole-game loop for games whose every seat has a compiled twin.

When every seat of a game is a strategy with a compiled twin, `play_batch` plays whole
games inside one compiled function. It uses the same turn steps (`marrakech_sim.turns`)
and random streams as the Python game loop, and each twin draws from its seat's stream
exactly as its Python form does, so a game is the same whichever loop plays it
(tests/test_compiled.py checks this).

The twins themselves, selected by an integer code with a float64 parameter vector,
are in `strategies.twins`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from marrakech_sim import turns as t
from marrakech_sim.rng import STREAM_STRATEGY, _seed_of
from marrakech_sim.rules import core as k
from strategies.twins import choose_placement, choose_rotation


@njit(cache=True)
def play_one(s, seed, codes, params, moves):  # type: ignore[no-untyped-def]
    """Play the game from packed state `s` to the end; moves are recorded by turn."""
    p = s[k.P_]
    streams = np.empty(1 + p, np.uint64)
    streams[0] = _seed_of(seed, 0)
    for i in range(p):
        streams[1 + i] = _seed_of(seed, 1 + i)
    rngs = np.empty(p, np.uint64)
    for i in range(p):
        rngs[i] = _seed_of(seed, STREAM_STRATEGY + i)
    options = np.empty(16, np.int64)
    result = t.k_advance(s, streams, moves)
    while (result & 7) != k.PHASE_OVER:
        seat = s[k.SEAT_]
        rng = rngs[seat : seat + 1]
        if (result & 7) == k.PHASE_ORIENT:
            action = choose_rotation(codes[seat], params[seat], s, rng)
        else:
            count = k.legal_placements(s, options)
            action = options[choose_placement(codes[seat], params[seat], s, rng, options, count)]
        result = t.k_decide(s, action, streams, moves)
        if result < 0:
            return result  # a twin chose an illegal action: a bug, reported by play_batch
    return 0


@njit(cache=True)
def play_batch(init, seeds, codes, params, moves, games, seats):  # type: ignore[no-untyped-def]
    """Play len(seeds) games from `init`; game g seats twins codes[g] with params[g].

    moves: (len(seeds) * max_turns, MOVE_COLUMNS + P) filled with NULL, game g's turns
    at rows g * max_turns ...; games[g] = (turns, end reason, tie_broken);
    seats[g]: the per-seat summary (turns.S_* columns).
    """
    max_turns = moves.shape[0] // seeds.shape[0]
    for g in range(seeds.shape[0]):
        s = init.copy()
        err = play_one(s, seeds[g], codes[g], params[g], moves[g * max_turns : (g + 1) * max_turns])
        if err < 0:
            return err
        games[g, 0] = s[k.TURN_] + 1
        games[g, 1] = s[k.END_]
        games[g, 2] = t.k_summary(s, seats[g])
    return 0
