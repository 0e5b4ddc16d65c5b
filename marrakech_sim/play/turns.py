"""Compiled turn steps shared by the Python and the compiled game loops.

Both loops draw chance from the same streams (`rng.py`), apply actions with the rules
kernel and write the same move rows, through these functions only. That is what makes
a game played by compiled strategies identical to the same game played through Python.

A game's moves are an int32 array of shape (max_turns, move_columns(players)), one row
per turn; NULL marks a missing value (LOG_FORMAT.md's nulls). The columns are

    0 .. MOVE_COLUMNS - 1                  M_SEAT .. M_END_ROTATION
    MOVE_COLUMNS + seat                    dirhams_after of `seat` (after the turn's roll)
    MOVE_COLUMNS + players + seat          visible_after of `seat`: its visible squares
                                           after the turn (RULES.md section 7 counting)

`dirhams_after_col` and `visible_after_col` give these indices.

Rows of only MOVE_COLUMNS columns are a replay's rows (a study's `move_columns =
"replay"`): the row writer fills the columns a replay needs and leaves the outcome
columns M_ASSAM_X .. M_BANKRUPT alone (they are not written to the file).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from marrakech_sim.play.rng import STREAM_DICE, STREAM_PILE, STREAM_STRATEGY, rng_below, seed_of
from marrakech_sim.rules import core as k
from marrakech_sim.rules.options import Rules
from marrakech_sim.rules.state import initial_packed

NULL = -32768

# move columns (LOG_FORMAT.md `moves`); dirhams_after follows, one column per seat
M_SEAT = 0
M_COLOUR = 1
M_ROTATION = 2
M_ROLL = 3
M_ASSAM_X = 4
M_ASSAM_Y = 5
M_FACING = 6
M_PAYMENT = 7
M_PAID_TO = 8
M_BANKRUPT = 9
M_X1 = 10
M_Y1 = 11
M_X2 = 12
M_Y2 = 13
M_END_ROTATION = 14
MOVE_COLUMNS = 15
# M_ASSAM_X .. M_BANKRUPT, with the per-seat columns after MOVE_COLUMNS: what the rules
# made of a turn's actions (LOG_FORMAT.md), which a replay rebuilds
FIRST_OUTCOME = M_ASSAM_X
LAST_OUTCOME = M_BANKRUPT

# per-seat summary columns (LOG_FORMAT.md `seats`), from `k_summary`
S_DIRHAMS = 0
S_VISIBLE = 1
S_SCORE = 2  # -1 when eliminated
S_RANK = 3
S_WINNER = 4
S_ELIMINATED_TURN = 5  # -1 while in the game
S_PAID = 6
S_RECEIVED = 7
SEAT_COLUMNS = 8


def move_columns(players: int) -> int:
    """Width of a move row: the M_* columns, then dirhams_after and visible_after per seat."""
    return MOVE_COLUMNS + 2 * players


def dirhams_after_col(seat: int, players: int) -> int:
    """Column of `seat`'s dirhams after the turn."""
    return MOVE_COLUMNS + seat


def visible_after_col(seat: int, players: int) -> int:
    """Column of `seat`'s visible squares after the turn."""
    return MOVE_COLUMNS + players + seat


def max_turns(rules: Rules) -> int:
    """An upper bound on the turns of a game: one per rug, plus one bankrupt turn per seat."""
    return rules.colours * rules.rugs_per_colour + rules.players


@njit(cache=True, inline="always")
def max_turns_of(s):
    """`max_turns` of the rules of packed state s: one turn per rug, one bankrupt turn per seat."""
    return s[k.P_] * s[k.C_] * s[k.RUGS_] + s[k.P_]


def new_moves(rules: Rules) -> np.ndarray:
    """An empty moves buffer for one game."""
    return np.full((max_turns(rules), move_columns(rules.players)), NULL, dtype=np.int32)


@njit(cache=True, inline="always")
def is_outcome(column):
    """Whether move column `column` (< MOVE_COLUMNS) is an outcome, not an action."""
    return FIRST_OUTCOME <= column <= LAST_OUTCOME


@njit(cache=True, inline="always")
def seed_streams(seed, p, streams, rngs):
    """A game's chance streams (dice, then each seat's pile) into `streams` and each
    seat's strategy stream into `rngs`, from the game seed (uint64); both loops use it."""
    streams[0] = seed_of(seed, STREAM_DICE)
    for i in range(p):
        streams[1 + i] = seed_of(seed, STREAM_PILE + i)
        rngs[i] = seed_of(seed, STREAM_STRATEGY + i)


def new_streams(players: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A game's chance streams [dice, pile of seat 0, ...] and strategy streams [seat 0, ...]."""
    streams = np.empty(1 + players, np.uint64)
    rngs = np.empty(players, np.uint64)
    seed_streams(np.uint64(seed % 2**64), players, streams, rngs)
    return streams, rngs


@njit(cache=True, inline="always")
def k_chance(s, streams):
    """The chance action of a draw or roll phase, from the game's streams.

    roll: a uniform face of the die from the dice stream (one stream per game, so the
    k-th roll is the same whoever plays). draw: RULES.md section 1, a shuffled pile is a
    uniform draw among the seat's remaining rugs, from that seat's pile stream.
    """
    if s[k.PHASE_] == k.PHASE_ROLL:
        return s[s[k.FACES_AT] + rng_below(streams[0:1], s[k.NFACES_])]
    seat = s[k.SEAT_]
    left = s[k.RUGS_LEFT_AT]
    r = rng_below(streams[1 + seat : 2 + seat], k.seat_rugs_left(s, seat))
    for c in range(seat, s[k.P_] * s[k.C_], s[k.P_]):
        r -= s[left + c]
        if r < 0:
            return c
    return -1  # unreachable: the seat to draw has rugs left


@njit(cache=True, inline="always")
def _write_visible(s, moves, turn):
    """visible_after of every seat into the turn's row (a placement changes several)."""
    p = s[k.P_]
    _copy_seats(s, s[k.VISIBLE_AT], p, moves[turn, MOVE_COLUMNS + p : MOVE_COLUMNS + 2 * p])


@njit(cache=True, inline="always")
def _copy_seats(s, at, p, out):
    """out[:p] = s[at:at + p], a per-seat section of the state into a row's columns.

    Through slices: indexed as s[at + i], every read would be checked for a negative index
    (numba's wraparound), which made these four-value copies slow vector gathers.
    """
    seats = s[at : at + p]
    for i in range(p):
        out[i] = seats[i]


@njit(cache=True, inline="always")
def record_turn(s, action, moves):
    """Apply `action` and record it in its turn's row; return the new phase or ERR_*.

    For Python code (`k_record`) and the replay loop: the rules are called (`k_apply`, the
    one compiled form of them that the API, the expert and perft share), not inlined
    again. The whole-game loop inlines `record_legal_turn`.
    """
    phase = s[k.PHASE_]
    turn = s[k.TURN_]
    seat = s[k.SEAT_]
    result = k.k_apply(s, action)
    if result < 0:
        return result
    _write_row(s, phase, turn, seat, action, moves)
    return result


@njit(cache=True, inline="always")
def record_legal_turn(s, action, moves):
    """record_turn for an action the kernels offered as legal (see rules.core.apply_legal:
    a placement with the square next to Assam first), without the rules' checks: the
    compiled loop's, whose twins choose from the legal lists (checked there)."""
    phase = s[k.PHASE_]
    turn = s[k.TURN_]
    seat = s[k.SEAT_]
    result = k.apply_legal(s, action)
    _write_row(s, phase, turn, seat, action, moves)
    return result


@njit(cache=True, inline="always")
def _write_row(s, phase, turn, seat, action, moves):
    """The row of turn `turn`, from the action `seat` took in `phase` and the state after it."""
    moves[turn, M_SEAT] = seat
    if phase == k.PHASE_DRAW:
        moves[turn, M_COLOUR] = action
    elif phase == k.PHASE_ORIENT:
        if s[k.FLAGS_] & k.FLAG_ORIENT_AT_END:
            moves[turn, M_END_ROTATION] = action
        else:
            moves[turn, M_ROTATION] = action
    elif phase == k.PHASE_ROLL:
        if s[k.C_] == 1:
            moves[turn, M_COLOUR] = seat
        moves[turn, M_ROLL] = action
        if moves.shape[1] == MOVE_COLUMNS:
            return  # a replay's rows: no outcome columns
        moves[turn, M_ASSAM_X] = s[k.X_]
        moves[turn, M_ASSAM_Y] = s[k.Y_]
        moves[turn, M_FACING] = s[k.FACING_]
        moves[turn, M_PAYMENT] = s[k.LAST_PAYMENT_]
        moves[turn, M_PAID_TO] = s[k.LAST_PAID_TO_] if s[k.LAST_PAID_TO_] >= 0 else NULL
        moves[turn, M_BANKRUPT] = s[k.LAST_BANKRUPT_]
        p = s[k.P_]
        _copy_seats(s, s[k.DIRHAMS_AT], p, moves[turn, MOVE_COLUMNS : MOVE_COLUMNS + p])
        _write_visible(s, moves, turn)  # final for a bankrupt turn: no rug is placed
    else:
        x1, y1, x2, y2 = k.unpack_placement(action)
        # LOG_FORMAT.md: (x1, y1) is the square next to Assam (who did not move)
        if not k.touching(s[k.X_], s[k.Y_], x1, y1):
            x1, y1, x2, y2 = x2, y2, x1, y1
        moves[turn, M_X1] = x1
        moves[turn, M_Y1] = y1
        moves[turn, M_X2] = x2
        moves[turn, M_Y2] = y2
        if moves.shape[1] > MOVE_COLUMNS:
            _write_visible(s, moves, turn)


@njit(cache=True, _nrt=False)
def k_record(s, action, moves):
    """record_turn as an ordinary compiled function: the Python loop's steps and the replay
    loop call it (the replay loop inlining the rules compiled 13 s more, and replayed no
    faster)."""
    return record_turn(s, action, moves)


# status bits of `replay_moves`
REPLAY_NOT_OVER = 1  # the rows end before the game does
REPLAY_ILLEGAL = 2  # a recorded action the rules refuse


@njit(cache=True, inline="always")
def row_action(s, row):
    """The action a recorded move row holds for the position's phase; NULL where the row
    has none (an unfinished turn: the game ended in a fault)."""
    phase = s[k.PHASE_]
    if phase == k.PHASE_DRAW:
        return row[M_COLOUR]
    if phase == k.PHASE_ROLL:
        return row[M_ROLL]
    if phase == k.PHASE_ORIENT:
        return row[M_END_ROTATION] if s[k.FLAGS_] & k.FLAG_ORIENT_AT_END else row[M_ROTATION]
    if row[M_X1] == NULL or row[M_Y1] == NULL or row[M_X2] == NULL or row[M_Y2] == NULL:
        return NULL
    return k.pack_placement(row[M_X1], row[M_Y1], row[M_X2], row[M_Y2])


@njit(cache=True, _nrt=False)
def replay_moves(s, rows, out, streams):
    """Replay recorded turns from position `s` (in place): the one replay loop.

    Applies each phase's action from `rows` (one move row per turn) with the rules kernel,
    and writes the move rows the rules make of them into `out`. Given chance streams
    (`len(streams) > 0`), a draw's colour and a roll in `out` are the ones the streams
    give, so they can be compared with the record; the recorded ones are applied either
    way. Returns REPLAY_* status bits (0: the rows replay to the game's end).
    """
    n = rows.shape[0]
    chance_from_streams = streams.shape[0] > 0
    status = 0
    while s[k.PHASE_] != k.PHASE_OVER:
        turn = s[k.TURN_]
        if turn >= n:
            break
        phase = s[k.PHASE_]
        chance = -1
        if chance_from_streams and (phase == k.PHASE_DRAW or phase == k.PHASE_ROLL):
            chance = k_chance(s, streams)
        action = row_action(s, rows[turn])
        if action == NULL:
            break  # an unfinished record (a game that ended in a fault)
        if k_record(s, action, out) < 0:
            status |= REPLAY_ILLEGAL
            break
        if chance_from_streams:
            if phase == k.PHASE_DRAW:
                out[turn, M_COLOUR] = chance
            elif phase == k.PHASE_ROLL:
                out[turn, M_ROLL] = chance
    if s[k.PHASE_] != k.PHASE_OVER:
        status |= REPLAY_NOT_OVER
    return status


REPLAY_UNFINISHED = 4  # (replay_outcomes) a row after the end or after a refused action


@njit(cache=True)
def replay_outcomes(inits, sizes, code, first, counts, rows, offsets, outcomes, per_seat, width):
    """Replay each game g, its action rows rows[first[g] : first[g] + counts[g]] (the M_*
    columns) from its rule set's start, inits[code[g], :sizes[code[g]]], with the one
    replay loop (`replay_moves`, no chance check), and write what the rules made of each
    row: its outcome columns, M_ASSAM_X .. M_BANKRUPT, into outcomes[row]; every seat's
    dirhams and visible squares after it into per_seat[0] and per_seat[1] from
    offsets[row] on. width: the widest move row of the rule sets (`move_columns`).
    Returns each game's REPLAY_* status bits.

    A game's rows go through a small buffer, so memory holds the outcomes, not every
    column of every row.
    """
    status = np.zeros(first.shape[0], np.int64)
    no_streams = np.zeros(0, np.uint64)
    most = 0
    for g in range(first.shape[0]):
        most = max(most, counts[g])
    buffer = np.empty((most + 1, width), np.int32)
    for g in range(first.shape[0]):
        s = inits[code[g], : sizes[code[g]]].copy()
        a = first[g]
        n = counts[g]
        out = buffer[:n]
        for r in range(n):
            out[r, M_SEAT] = NULL
        status[g] = replay_moves(s, rows[a : a + n], out, no_streams)
        p = s[k.P_]
        for r in range(n):
            if out[r, M_SEAT] == NULL:
                status[g] |= REPLAY_UNFINISHED
                break
            for j in range(FIRST_OUTCOME, LAST_OUTCOME + 1):
                outcomes[a + r, j - FIRST_OUTCOME] = out[r, j]
            at = offsets[a + r]
            for q in range(p):
                per_seat[0, at + q] = out[r, MOVE_COLUMNS + q]
                per_seat[1, at + q] = out[r, MOVE_COLUMNS + p + q]
    return status


def replay_rows(rules: Rules, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """The packed position after replaying a game's move rows from the start (no chance
    check), and the rows the rules make of them; None for those when an action is illegal."""
    s = initial_packed(rules).copy()
    out = np.full((max(len(rows), 1), move_columns(rules.players)), NULL, dtype=np.int32)
    status = replay_moves(s, np.ascontiguousarray(rows, dtype=np.int32), out, NO_STREAMS)
    return s, None if status & REPLAY_ILLEGAL else out


NO_STREAMS = np.zeros(0, np.uint64)


@njit(cache=True, inline="always")
def _advance(s, streams, moves, shown):
    """k_advance's body, shared with k_decide."""
    while s[k.PHASE_] == k.PHASE_ROLL or s[k.PHASE_] == k.PHASE_DRAW:
        k_record(s, k_chance(s, streams), moves)
    for i in range(len(s)):  # here, not from Python: a copy per decision for free
        shown[i] = s[i]
    if s[k.PHASE_] == k.PHASE_PLACE:
        return k.PHASE_PLACE + 8 * k.legal_placement_mask(s)
    return s[k.PHASE_]


@njit(cache=True, _nrt=False)
def k_advance(s, streams, moves, shown):
    """Play the chance phases (draw, roll) up to the next decision or the end, and copy
    the state into `shown` (what the strategies see; they may write into it).

    Returns the phase + 8 * the legal placement mask in the place phase.
    """
    return _advance(s, streams, moves, shown)


@njit(cache=True, _nrt=False)
def k_decide(s, action, streams, moves, shown):
    """Play a strategy's decision (rotation or placement code), then k_advance.

    Returns an ERR_* code (< 0, nothing changed, `shown` not refreshed) for an illegal
    action.
    """
    err = k_record(s, action, moves)
    if err < 0:
        return err
    return _advance(s, streams, moves, shown)


@njit(cache=True, _nrt=False)
def k_summary(s, seats):
    """Fill `seats` (players x SEAT_COLUMNS) for a finished game; return tie_broken.

    k_result writes into the state's scratch section (free once the game is over), so
    no array is allocated per game.
    """
    p = s[k.P_]
    res = s[s[k.SCRATCH_AT] : s[k.SCRATCH_AT] + 4 * p + 1]
    k.k_result(s, res)
    for seat in range(p):
        seats[seat, S_DIRHAMS] = s[s[k.DIRHAMS_AT] + seat]
        seats[seat, S_VISIBLE] = res[seat]
        seats[seat, S_SCORE] = res[p + seat]
        seats[seat, S_RANK] = res[2 * p + seat]
        seats[seat, S_WINNER] = res[3 * p + seat]
        seats[seat, S_ELIMINATED_TURN] = s[s[k.ELIM_TURN_AT] + seat]
        seats[seat, S_PAID] = s[s[k.PAID_AT] + seat]
        seats[seat, S_RECEIVED] = s[s[k.RECEIVED_AT] + seat]
    return res[4 * p]
