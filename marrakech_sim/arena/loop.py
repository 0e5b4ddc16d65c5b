"""The compiled whole-game loop for games whose every seat has a compiled twin.

When every seat of a game is a strategy with a compiled twin, `play_batch` plays whole
games inside one compiled function. It uses the same turn steps (`marrakech_sim.play.turns`)
and random streams as the Python game loop, and each twin draws from its seat's stream
exactly as its Python form does, so a game is the same whichever loop plays it
(tests/strategies/test_compiled.py checks this).

The twins are selected by an integer code with a float64 parameter vector
(`marrakech_sim.arena.twins`, generated from the strategies' declarations).
"""

from __future__ import annotations

import numpy as np
from numba import literally, njit, types
from numba.extending import overload

from marrakech_sim.arena.twins import choose_placement, choose_rotation, memory_sizes, searches
from marrakech_sim.play import turns as t
from marrakech_sim.rules import core as k


def _turn(s: np.ndarray, action: int, moves: np.ndarray, records: bool) -> int:
    """turns.record_legal_turn (records) or the rules' apply_legal alone (compiled code only:
    the body is chosen by the overload below, on the compile-time constant `records`)."""
    raise NotImplementedError("compiled code only (numba overload)")


# Not inlined: inlining the rules into the loop without records took that loop from 0.64
# to 0.68 of the C loop (bench_vs_c) but the default study's first compile from 29 to
# 80 s; inlining the turn recorder tripled it (29 -> 88 s)
@overload(_turn)
def _turn_overload(s, action, moves, records):
    if not isinstance(records, types.BooleanLiteral):
        return None
    # the twins' actions are legal (checked in _play): the rules without their checks
    if records.literal_value:
        return lambda s, action, moves, records: t.record_legal_turn(s, action, moves)
    return lambda s, action, moves, records: k.apply_legal(s, action)


@njit(cache=True, _nrt=False)
def _play(s, codes, params, moves, streams, rngs, options, memory, words, searching, records):
    """The turn loop of one game from `s` to the end; 0, or ERR_* for an illegal twin action.
    memory[seat, :words[seat]]: each seat's memory of the game (zero at its start).
    records: a compile-time constant, whether the turns are written into `moves`.

    One call of turns.record_legal_turn for every phase, so the rules (inlined into it) are
    compiled into this loop once.
    """
    while True:
        phase = s[k.PHASE_]
        if phase == k.PHASE_ROLL or phase == k.PHASE_DRAW:
            action = t.k_chance(s, streams)
        elif phase == k.PHASE_ORIENT:
            seat = s[k.SEAT_]
            rng = rngs[seat : seat + 1]
            mine = memory[seat, : words[seat]]
            action = choose_rotation(codes[seat], params[seat], s, rng, mine, searching)
            if action < -1 or action > 1:
                return k.ERR_ROTATION  # a twin's bug (section 3.1)
        elif phase == k.PHASE_PLACE:
            seat = s[k.SEAT_]
            count = k.placements_of_key(s, k.legal_placement_mask(s), options)
            rng = rngs[seat : seat + 1]
            mine = memory[seat, : words[seat]]
            chosen = choose_placement(
                codes[seat], params[seat], s, rng, options, count, mine, searching
            )
            if chosen < 0 or chosen >= count:
                return k.ERR_PLACEMENT_SHAPE  # a twin's bug: not one of the options
            action = options[chosen]
        else:
            return 0
        err = _turn(s, action, moves, records)
        if err < 0:
            return err  # a twin chose an illegal action: a bug, reported by play_batch


def move_columns_buffer(columns: int, rows: int) -> np.ndarray:
    """An int16 (columns, stride) array, stride >= rows, for play_batch's moves: its move
    columns start 64 bytes apart modulo 4 KiB. The loop writes every column of a turn at
    once; columns a multiple of 4 KiB apart share one set of the L1 cache and evict each
    other (3-4x slower for 15 columns)."""
    stride = -(-max(rows - 32, 0) // 2048) * 2048 + 32  # 2 * stride = 64 (mod 4096)
    return np.empty((columns, stride), np.int16)


def game_rows(moves: np.ndarray, turns: np.ndarray, max_turns: int) -> np.ndarray:
    """play_batch's moves as each game's rows: (games, max_turns, columns) int32, game g's
    turns[g] rows (games[:, 0]) then NULL, as play.game.play_game's GameRecord.moves."""
    out = np.full((len(turns), max_turns, moves.shape[0]), t.NULL, np.int32)
    start = 0
    for g, n in enumerate(turns.tolist()):
        out[g, :n] = moves[:, start : start + n].T
        start += n
    return out


def play_batch(
    init: np.ndarray,
    seeds: np.ndarray,
    codes: np.ndarray,
    params: np.ndarray,
    moves: np.ndarray,
    games: np.ndarray,
    seats: np.ndarray,
    records: bool = True,
) -> int:
    """Play len(seeds) games from `init`; game g seats twins codes[g] with params[g].

    moves: the move rows by column, int16 of shape (turns.move_columns(P), rows) with rows
    at least len(seeds) * max_turns (`move_columns_buffer`): row i is moves[:, i], so
    each move column is contiguous, as Parquet stores it (runfolder.columns.columns_into
    appends them to a chunk's columns with vector copies, not a transpose). The games'
    rows follow one another (game g's first is row games[0, 0] + ... + games[g - 1, 0];
    `game_rows` splits them), and each game's max_turns rows are filled with NULL before
    it plays, so a buffer can be reused. games[g] = (turns, end reason, tie_broken);
    seats[g]: the per-seat summary (turns.S_* columns). Returns 0, or an ERR_* code when
    a twin chose an illegal action (a bug).
    records=False: the moves are not written (`moves` is left as it was, and may have no
    rows), for batches that keep no game's moves; the games are the same.

    The loop is compiled twice: with the searching twins (the expert's family) and
    without, for batches that seat none, so a study without the expert never compiles
    its search (minutes on a fresh installation; twins.SEARCHING).
    """
    if moves.dtype != np.int16 or not moves.flags.c_contiguous:
        # one array type, one compiled loop: another would compile it again (minutes)
        layout = "" if moves.flags.c_contiguous else " (not C-contiguous)"
        raise TypeError(
            f"moves must be a C-contiguous int16 array (move_columns_buffer), not "
            f"{moves.dtype}{layout}"
        )
    most = len(seeds) * t.max_turns_of.py_func(init)
    if records and moves.shape[1] < most:
        raise ValueError(
            f"moves has room for {moves.shape[1]} turns; {len(seeds)} games may take {most}"
        )
    if searches(codes):  # (the search's cost dwarfs the rows': always written)
        entry = _play_batch_searching
    else:
        entry = _play_batch_basic if records else _play_batch_quiet
    sizes = memory_sizes(init)  # each twin's words of memory of a game (by code)
    err: int = entry(init, seeds, codes, params, moves, games, seats, sizes)
    return err


# Two entry points with the flag fixed inside compiled code: a literal argument passed
# from Python (numba.literally) costs milliseconds of dispatch on every call, which at
# the runner's batches of 256 games was most of the time of a random game.
@njit(cache=True)
def _play_batch_basic(init, seeds, codes, params, moves, games, seats, sizes):
    return _play_batch(init, seeds, codes, params, moves, games, seats, sizes, False, True)


@njit(cache=True)
def _play_batch_searching(init, seeds, codes, params, moves, games, seats, sizes):
    return _play_batch(init, seeds, codes, params, moves, games, seats, sizes, True, True)


# compiled only when a batch keeps no moves (keep_moves < 1, the benchmark without records)
@njit(cache=True)
def _play_batch_quiet(init, seeds, codes, params, moves, games, seats, sizes):
    return _play_batch(init, seeds, codes, params, moves, games, seats, sizes, False, False)


@njit(cache=True)
def _play_batch(init, seeds, codes, params, moves, games, seats, sizes, searching, records):
    p = init[k.P_]
    # one state and one set of buffers for the whole batch: no allocation per game
    s = init.copy()
    streams = np.empty(1 + p, np.uint64)
    rngs = np.empty(p, np.uint64)
    options = np.empty(16, np.int64)
    memory = np.zeros((p, sizes.max()), np.int64)
    words = np.zeros(p, np.int64)
    scratch = (s, streams, rngs, options, memory, words)
    return _batch(
        init,
        seeds,
        codes,
        params,
        moves,
        games,
        seats,
        sizes,
        scratch,
        literally(searching),
        literally(records),
    )


@njit(cache=True, _nrt=False)
def _batch(init, seeds, codes, params, moves, games, seats, sizes, scratch, searching, records):
    """play_batch's games, in buffers it allocated (`scratch`: the state and the per-game
    buffers, reused game after game): compiled without numba's runtime, so without
    reference counting (see marrakech_sim.rules.core), and so with plain loops where a
    slice assignment would need the runtime."""
    s, streams, rngs, options, memory, words = scratch
    max_turns = t.max_turns_of(init)
    p = init[k.P_]
    by_turn = moves.T  # moves[:, i] is turn row i: the row writer indexes [turn, column]
    row = 0
    for g in range(seeds.shape[0]):
        for i in range(init.shape[0]):
            s[i] = init[i]
        block = by_turn[row : row + max_turns]
        if records:
            for c in range(moves.shape[0]):
                if moves.shape[0] == t.MOVE_COLUMNS and t.is_outcome(c):
                    continue  # a replay's rows: the row writer leaves these alone
                column = moves[c, row : row + max_turns]  # contiguous: a vector fill
                for i in range(column.shape[0]):  # (numba's column[:] = NULL is slower)
                    column[i] = t.NULL
        for seat in range(p):  # each seat's memory of the game: its twin's words, zero
            words[seat] = sizes[codes[g, seat]]
            for i in range(words[seat]):
                memory[seat, i] = 0
        t.seed_streams(seeds[g], p, streams, rngs)
        err = _play(
            s, codes[g], params[g], block, streams, rngs, options, memory, words, searching, records
        )
        if err < 0:
            return err
        games[g, 0] = s[k.TURN_] + 1
        games[g, 1] = s[k.END_]
        games[g, 2] = t.k_summary(s, seats[g])
        if records:
            row += games[g, 0]
    return 0
