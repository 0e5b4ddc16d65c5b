"""The compiled rules: one packed state array and the kernels that read and change it.

Everything that decides a rule lives here, once; the Python face (`state.py`), the
Python game loop and the compiled whole-game loops all call these kernels.

A game state is one int32 array. Its header holds the rule options the kernels need
and the scalar state; the per-seat, per-colour and board sections follow at offsets
that depend on the board size N, the players P and the colours K = P * C:

    [0, HEADER)                 header (the *_ constants below), with the offsets *_AT
                                of the sections:
    DIRHAMS  .. +P              dirhams per seat
    OUT      .. +P              0 while in the game, else the elimination order 1, 2, ...
    ELIM_TURN.. +P              turn of the bankruptcy, -1 while in the game
    PAID     .. +P              total dirhams paid
    RECEIVED .. +P              total dirhams received
    SEAT_LEFT.. +P              unplaced rugs per seat (all its colours; kept in step with
                                RUGS_LEFT so the turn order needs no scan)
    VISIBLE  .. +P              visible squares per seat (all its colours, RULES.md section 7;
                                kept in step with COLOUR by every placement)
    RUGS_LEFT.. +K              rugs left per colour
    PLACED   .. +K              rugs placed per colour (the next rug is number PLACED + 1)
    COLOUR   .. +N*N            visible colour per square (y * N + x), -1 when empty
    RUG      .. +N*N            rug number of the visible half (RULES.md section 9)
    PARTNER  .. +N*N            direction (0-3) from the square to the other half of its
                                rug when both halves are visible (a whole rug, which
                                RULES.md section 6.3 protects), else -1; kept in step with
                                COLOUR and RUG by every placement
    SCRATCH  .. +3*N*N          work space for the flood fill (not part of the position)
    FACES    .. +NFACES         the die's faces (rule option die_faces)
    BITS     .. +2*K            per colour, the squares where it is visible as a 64-bit set
                                (low word, high word; boards up to BIT_BOARDS only, kept in
                                step with COLOUR by every placement; for `region_size`)

Squares are indices y * N + x. Facings are 0 N, 1 E, 2 S, 3 W.

Speed: a compiled call that passes the state array costs 20-30 ns of reference counting
when it is not inlined, and every call passes each array as seven machine words, so the
helpers below are `inline="always"` (numba inlines them into each caller), and so are the
two kernels of every turn, `apply_action` and `legal_placement_mask`: the compiled game
loop then keeps the state's offsets in registers across a whole turn. numba's inlining
is slow to compile (about 10 s for each function the rules are inlined into), so
`apply_action` is inlined into the compiled loops and into one ordinary kernel,
`k_apply`, which everyone else calls (`k_step`, `turns.k_record`, the expert, perft).
Kernels that allocate nothing are compiled with `_nrt=False` (numba's runtime off):
they then do no reference counting at all, whose atomic increments were half the time
of a whole game. numba passes this flag
on to the functions such a kernel calls unless they set it themselves, so a kernel that
allocates and is called from one of these says `_nrt=True`.
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING

import numpy as np
from numba import njit
from numba import types as nb_types
from numba.extending import intrinsic

if TYPE_CHECKING:  # the packing functions read a rule set; the kernels do not
    from marrakech_sim.rules.options import Rules

# header layout
N_ = 0  # board size
P_ = 1  # players
C_ = 2  # colours per player
FLAGS_ = 3  # FLAG_* bits
RUGS_ = 4  # rugs per colour at the start
STARTING_DIRHAMS_ = 5
X_ = 6
Y_ = 7
FACING_ = 8
SEAT_ = 9  # seat to move; after the end, RULES.md section 9's seat for phase x
PHASE_ = 10
COLOUR_ = 11  # colour being placed this turn, -1 before the draw
TURN_ = 12  # index of the current turn (0, 1, ...)
NOUT_ = 13  # seats out of the game
END_ = 14  # END_* reason, END_NONE while the game runs
# what the last roll did, for the game records
LAST_PAYMENT_ = 15
LAST_PAID_TO_ = 16
LAST_BANKRUPT_ = 17
NFACES_ = 18  # number of die faces
SEAT_LEFT_AT = 19  # (offset; the header's free slots are used for the newer sections)
# where each section starts (set by blank_state: reading an offset is one load)
DIRHAMS_AT = 20
OUT_AT = 21
ELIM_TURN_AT = 22
PAID_AT = 23
RECEIVED_AT = 24
RUGS_LEFT_AT = 25
PLACED_AT = 26
COLOUR_AT = 27
RUG_AT = 28
SCRATCH_AT = 29
FACES_AT = 30
VISIBLE_AT = 31
PARTNER_AT = 32
BITS_AT = 33
HEADER = 34

FLAG_ORIENT_AT_END = 1
FLAG_OWN_COVERABLE = 2
FLAG_TIE_VISIBLE = 4
FLAG_END_ONE_LEFT = 8

PHASE_DRAW = 0
PHASE_ORIENT = 1
PHASE_ROLL = 2
PHASE_PLACE = 3
PHASE_OVER = 4

END_NONE = 0
END_RUGS_EXHAUSTED = 1
END_ONE_LEFT = 2

# k_apply's error codes (it returns the new phase, >= 0, on success)
OK = 0
ERR_PHASE = -1  # the game is over
ERR_DRAW = -2  # not a colour of the seat with rugs left
ERR_ROTATION = -3  # not -1, 0 or 1
ERR_ROLL = -4  # not a positive number of steps
ERR_PLACEMENT_SHAPE = -5  # squares off the board, not adjacent, or not next to Assam
ERR_PLACEMENT_ASSAM = -6  # covers Assam's square
ERR_PLACEMENT_COVER = -7  # covers both visible halves of one rug (RULES.md section 6.3)

# A placement travels as one integer: x1 | y1 << 7 | x2 << 14 | y2 << 21 (coordinates
# < 128), decoded with shifts: integer division by the board size is slow in hot loops.
COORD_BITS = 7
COORD_MASK = 127


def state_size(board_size: int, players: int, colours_per_player: int, faces: int) -> int:
    """Length of the packed state array for these dimensions."""
    squares = board_size * board_size
    return HEADER + 7 * players + 4 * players * colours_per_player + 6 * squares + faces


#: an index known to be >= 0, as an unsigned integer: numba checks every read with a
#: signed index for a negative one (Python's wraparound, two instructions on the chain
#: of dependent reads s[s[COLOUR_AT] + sq]); with an unsigned index it does not
U = np.uintp


# ---------------------------------------------------------------- geometry


@njit(cache=True, inline="always")
def step(x, y, f, n):
    """One step of Assam, edge arcs included (RULES.md section 4): returns (x, y, f)."""
    if f == 0:
        if y > 0:
            return x, y - 1, f
        # top edge: columns {0,1} {2,3} ... joined, the last column is the corner arc
        if x == n - 1:
            return x, y, 3
        return x ^ 1, y, 2
    if f == 2:
        if y < n - 1:
            return x, y + 1, f
        # bottom edge: columns {1,2} {3,4} ... joined, column 0 is the corner arc
        if x == 0:
            return x, y, 1
        return (x + 1 if x % 2 == 1 else x - 1), y, 0
    if f == 3:
        if x > 0:
            return x - 1, y, f
        # left edge: rows {0,1} {2,3} ... joined, the last row is the corner arc
        if y == n - 1:
            return x, y, 0
        return x, y ^ 1, 1
    if x < n - 1:
        return x + 1, y, f
    # right edge: rows {1,2} {3,4} ... joined, row 0 is the corner arc
    if y == 0:
        return x, y, 2
    return x, (y + 1 if y % 2 == 1 else y - 1), 3


# Walks of 1 .. WALK_STEPS steps from every square and facing on the boards up to
# WALK_BOARDS, precomputed from `step` (so the edge rule is still decided there): a walk
# is then one load, without step's branches. WALK[WALK_AT[n] + ((y * n + x) * 4 + f) *
# WALK_STEPS + steps - 1] is x | y << 8 | f << 16 of the square reached.
WALK_BOARDS = 11
WALK_STEPS = 6


def _walk_table() -> tuple[np.ndarray, np.ndarray]:
    at = np.zeros(WALK_BOARDS + 1, np.int64)
    rows: list[int] = []
    for n in range(1, WALK_BOARDS + 1):
        at[n] = len(rows)
        for sq in range(n * n):
            for f0 in range(4):
                x, y, f = sq % n, sq // n, f0
                for _ in range(WALK_STEPS):
                    x, y, f = step.py_func(x, y, f, n)
                    rows.append(x | y << 8 | f << 16)
    return at, np.array(rows, np.int32)


WALK_AT, WALK = _walk_table()


@njit(cache=True, inline="always")
def walk(x, y, f, steps, n):
    """Where Assam stops after `steps` steps: (x, y, f)."""
    if n <= WALK_BOARDS:
        while steps > 0:
            leg = min(steps, WALK_STEPS)
            v = WALK[U(WALK_AT[n] + ((y * n + x) * 4 + f) * WALK_STEPS + leg - 1)]
            x, y, f = v & 255, (v >> 8) & 255, v >> 16
            steps -= leg
        return x, y, f
    for _ in range(steps):
        x, y, f = step(x, y, f, n)
    return x, y, f


@njit(cache=True, inline="always")
def dx(d):
    """Column change of direction d (0 N, 1 E, 2 S, 3 W)."""
    return (d == 1) - (d == 3)


@njit(cache=True, inline="always")
def dy(d):
    """Row change of direction d (0 N, 1 E, 2 S, 3 W)."""
    return (d == 2) - (d == 0)


@njit(cache=True, inline="always")
def offset(d, n):
    """Square index change of one step in direction d on an n x n board."""
    return dy(d) * n + dx(d)


@njit(cache=True, inline="always")
def direction(ddx, ddy):
    """The direction (0 N, 1 E, 2 S, 3 W) of the step (ddx, ddy) to a neighbour."""
    return (ddx == 1) + 2 * (ddy == 1) + 3 * (ddx == -1)


@njit(cache=True, inline="always")
def pack_placement(x1, y1, x2, y2):
    """The integer code of placement ((x1, y1), (x2, y2))."""
    return x1 | (y1 << COORD_BITS) | (x2 << 2 * COORD_BITS) | (y2 << 3 * COORD_BITS)


@njit(cache=True, inline="always")
def unpack_placement(code):
    """(x1, y1, x2, y2) of a placement code."""
    return (
        code & COORD_MASK,
        (code >> COORD_BITS) & COORD_MASK,
        (code >> 2 * COORD_BITS) & COORD_MASK,
        (code >> 3 * COORD_BITS) & COORD_MASK,
    )


@njit(cache=True, inline="always")
def touching(x1, y1, x2, y2):
    """Whether squares (x1, y1) and (x2, y2) share an edge."""
    return abs(x1 - x2) + abs(y1 - y2) == 1


@njit(cache=True, inline="always")
def owner(s, colour):
    """The seat owning a colour index >= 0 (RULES.md section 1: seat s owns s, s+P, ...).

    colour % P by subtraction: a seat has few colours, and a division was 3% of a game.
    """
    p = s[P_]
    while colour >= p:
        colour -= p
    return colour


# ---------------------------------------------------------------- queries


@njit(cache=True, _nrt=False, inline="always")
def region_size(s, sq):
    """Squares in the 4-connected region of the visible colour at `sq` (RULES.md section 5).

    Zero for an empty square. On boards of up to 7 x 7 the region grows as a bit set
    (`_region_bits`); on larger ones it is a breadth-first fill (`_region_fill`).
    """
    col = s[COLOUR_AT]
    colour = s[U(col + sq)]
    if colour < 0:
        return 0
    if s[N_] <= BIT_BOARDS:
        return _region_bits(s, sq, colour)
    return _region_fill(s, sq, colour)


# Boards of up to 7 x 7 squares fit one signed 64-bit word, bit y * n + x a square, and
# a region grows a whole step at a time (`flood`). The colour's squares are kept as such a
# set (the BITS section). Against the fill, a random 4-player game took 4.4 us instead of
# 5.1 (the fill was a fifth of the loop's time), and with the kept sets instead of one
# built from COLOUR for each payment, 3.52 us instead of 3.71. `rules.queries` asks its
# region queries of the same sets.
BIT_BOARDS = 7


@intrinsic
def popcount(typingctx, x):
    """The number of set bits of an integer (one instruction)."""
    sig = nb_types.int64(x)

    def codegen(context, builder, signature, args):
        return builder.ctpop(context.cast(builder, args[0], signature.args[0], nb_types.int64))

    return sig, codegen


@njit(cache=True, inline="always")
def board_bits(n):
    """(all squares, all but column N-1, all but column 0) as sets (n <= BIT_BOARDS)."""
    first = 0
    for y in range(n):
        first |= 1 << (y * n)
    return (1 << (n * n)) - 1, ~(first << (n - 1)), ~first


@njit(cache=True, inline="always")
def flood(r, m, n, not_last, not_first):
    """The squares of the set m 4-connected (RULES.md section 5) to r, a subset of m."""
    # a step west (>> 1) must not wrap to the row above's last column, a step east
    # (<< 1) not to the next row's first; north and south fall off the board. Most
    # regions are reached within three steps, taken without a test: the exit of a loop
    # whose length varies is a mispredicted branch, dearer than a step.
    for _ in range(3):
        r = (r | ((r >> 1) & not_last) | ((r << 1) & not_first) | (r >> n) | (r << n)) & m
    while True:
        g = (r | ((r >> 1) & not_last) | ((r << 1) & not_first) | (r >> n) | (r << n)) & m
        if g == r:
            return r
        r = g


@njit(cache=True, inline="always")
def colour_bits(s, colour):
    """The BITS section's set of the squares of `colour` (a board of at most BIT_BOARDS)."""
    at = U(s[BITS_AT] + 2 * colour)
    return (np.int64(s[at]) & 0xFFFFFFFF) | (np.int64(s[at + 1]) << 32)


@njit(cache=True, _nrt=False, inline="always")
def _region_bits(s, sq, colour):
    """region_size on a board of at most BIT_BOARDS x BIT_BOARDS, as a set."""
    n = s[N_]
    _, not_last, not_first = board_bits(n)
    return popcount(flood(1 << sq, colour_bits(s, colour), n, not_last, not_first))


@njit(cache=True, _nrt=False, inline="always")
def _region_fill(s, sq, colour):
    """region_size by a breadth-first fill. Uses the scratch section as the queue and
    clears its marks."""
    n = s[N_]
    col = s[COLOUR_AT]
    q = s[SCRATCH_AT]
    # a queued square is marked by shifting its colour out of the colour range; the
    # marks are undone at the end, so the position is unchanged. The queue holds
    # x | y << 8 (coordinates < 128, rules.options.MAX_BOARD_SIZE): no division by n
    # per square, which was most of the fill's time
    mark = n * n
    head = 0
    tail = 1
    y = sq // n
    s[U(q)] = (sq - y * n) | (y << 8)
    s[U(col + sq)] += mark
    last = n - 1
    while head < tail:
        v = s[U(q + head)]
        head += 1
        x = v & 255
        y = v >> 8
        at = col + y * n + x
        # each neighbour without a branch (which square joins is a coin toss the
        # processor mispredicted): off the board, the read falls on the sections beside
        # the board (inside the state) and adds nothing; the queue slot is written
        # either way and kept only when the square joins
        up = (y > 0) & (s[U(at - n)] == colour)
        s[U(at - n)] += mark * up
        s[U(q + tail)] = v - 256
        tail += up
        right = (x < last) & (s[U(at + 1)] == colour)
        s[U(at + 1)] += mark * right
        s[U(q + tail)] = v + 1
        tail += right
        down = (y < last) & (s[U(at + n)] == colour)
        s[U(at + n)] += mark * down
        s[U(q + tail)] = v + 256
        tail += down
        left = (x > 0) & (s[U(at - 1)] == colour)
        s[U(at - 1)] += mark * left
        s[U(q + tail)] = v - 1
        tail += left
    for i in range(tail):
        v = s[U(q + i)]
        s[U(col + (v >> 8) * n + (v & 255))] -= mark
    return tail


@njit(cache=True, inline="always")
def payment_at(s, sq, seat):
    """(amount due, payee) if `seat` stopped on `sq` now; (0, -1) when nothing is due.

    RULES.md section 5: no payment on an empty square, on the seat's own colours, or on
    a rug of an eliminated player. The amount is the region size, before bankruptcy.
    """
    colour = s[U(s[COLOUR_AT] + sq)]
    if colour < 0:
        return 0, -1
    payee = owner(s, colour)
    if payee == seat or s[U(s[OUT_AT] + payee)] != 0:
        return 0, -1
    return region_size(s, sq), payee


@njit(cache=True, inline="always")
def protected_half(s, sq):
    """The direction from `sq` to the other half of its rug when the mover may not cover
    both (RULES.md section 6.3), else -1.

    Barred: both visible halves of one rug, by identity (colour, number; two different
    rugs of one colour may be covered), kept in the PARTNER section. The option
    own_rugs_fully_coverable exempts the mover's own colours.
    """
    d = s[U(s[PARTNER_AT] + sq)]
    # the option first: the same all game, so a well-predicted branch, where d's sign is
    # a coin toss
    if s[FLAGS_] & FLAG_OWN_COVERABLE and d >= 0 and owner(s, s[s[COLOUR_AT] + sq]) == s[SEAT_]:
        return -1
    return d


@njit(cache=True, inline="always")
def placement_error(s, x1, y1, x2, y2):
    """OK when a rug may go on (x1, y1) (next to Assam) and (x2, y2) now (RULES.md section 6)."""
    n = s[N_]
    if min(x1, y1, x2, y2) < 0 or max(x1, y1, x2, y2) >= n or not touching(x1, y1, x2, y2):
        return ERR_PLACEMENT_SHAPE
    ax = s[X_]
    ay = s[Y_]
    if (x1 == ax and y1 == ay) or (x2 == ax and y2 == ay):
        return ERR_PLACEMENT_ASSAM  # section 6.2
    if not touching(ax, ay, x1, y1):
        return ERR_PLACEMENT_SHAPE  # section 6.1 (callers put the square next to Assam first)
    if protected_half(s, y1 * n + x1) == direction(x2 - x1, y2 - y1):
        return ERR_PLACEMENT_COVER  # section 6.3
    return OK


@njit(cache=True, inline="always")
def candidate_mask(ax, ay, n):
    """The candidates of legal_placement_mask that sections 6.1 and 6.2 allow with Assam
    on (ax, ay): bit d1 * 4 + d2 for (Assam + d1, Assam + d1 + d2) on the board and not
    back on Assam's square."""
    mask = 0
    for d1 in range(4):
        x1 = ax + dx(d1)
        y1 = ay + dy(d1)
        if x1 < 0 or y1 < 0 or x1 >= n or y1 >= n:
            continue
        for d2 in range(4):
            x2 = x1 + dx(d2)
            y2 = y1 + dy(d2)
            # not back onto Assam's square (section 6.2), not off the board
            if d2 != (d1 + 2) & 3 and x2 >= 0 and y2 >= 0 and x2 < n and y2 < n:
                mask |= 1 << (d1 * 4 + d2)
    return mask


# candidate_mask of every square of the boards up to WALK_BOARDS, precomputed from it (so
# sections 6.1 and 6.2 are still decided there): CANDIDATES[CANDIDATES_AT[n] + y * n + x]
# is the mask with Assam on (x, y), one load instead of 16 candidates' checks
def _candidate_table() -> tuple[np.ndarray, np.ndarray]:
    # candidate_mask's own code run as Python, with dx and dy as Python too: calling their
    # compiled forms here would compile them whenever this module is imported
    names = {**globals(), "dx": dx.py_func, "dy": dy.py_func}
    mask_of = types.FunctionType(candidate_mask.py_func.__code__, names)
    at = np.zeros(WALK_BOARDS + 1, np.int64)
    rows: list[int] = []
    for n in range(1, WALK_BOARDS + 1):
        at[n] = len(rows)
        rows += [mask_of(sq % n, sq // n, n) for sq in range(n * n)]
    return at, np.array(rows, np.int32)


CANDIDATES_AT, CANDIDATES = _candidate_table()


@njit(cache=True, inline="always")
def legal_placement_mask(s):
    """Assam's square * 65536 + a mask whose bit d1 * 4 + d2 is set when the placement
    (Assam + d1, Assam + d1 + d2) is legal.

    The candidates are enumerated in this fixed order everywhere, so the i-th legal
    placement means the same thing to the Python face and to the compiled loops. By
    construction (candidate_mask) they meet sections 6.1 and 6.2; section 6.3 is checked.
    """
    n = s[N_]
    ax = s[X_]
    ay = s[Y_]
    assam = ay * n + ax
    small = n <= WALK_BOARDS
    mask = CANDIDATES[U(CANDIDATES_AT[n] + assam)] if small else candidate_mask(ax, ay, n)
    own = s[FLAGS_] & FLAG_OWN_COVERABLE
    for d1 in range(4):
        # section 6.3, without a branch: d is -1 (nothing barred) or a direction. Without
        # the option, every square next to Assam is read, on the board or not (whether it
        # is, is a coin toss): off the board, the read falls beside the PARTNER section
        # (inside the state) and clears a bit of d1's candidates, which are none
        if own == 0 or mask >> (d1 * 4) & 15:
            d = protected_half(s, assam + offset(d1, n))
            mask &= ~((d >= 0) * 1 << (d1 * 4 + (d & 3)))
    return assam * 65536 + mask


@njit(cache=True, _nrt=False)
def legal_placements(s, out):
    """Write the codes of the legal placements into `out` in candidate order; return the count."""
    return placements_of_key(s, legal_placement_mask(s), out)


def _candidate_delta(i: int) -> int:
    """pack_placement(x1, y1, x2, y2) - pack_placement(ax, ay, ax, ay) for candidate i.

    Candidate i = d1 * 4 + d2 is (Assam + d1, Assam + d1 + d2); the packed fields add
    without carries because every coordinate of a real candidate stays in the board.
    """
    d1, d2 = i >> 2, i & 3
    x1, y1 = dx.py_func(d1), dy.py_func(d1)  # the kernels' own direction steps
    x2, y2 = x1 + dx.py_func(d2), y1 + dy.py_func(d2)
    # a sum, not pack_placement's `|`: the differences may be negative
    code: int = x1 + (y1 << COORD_BITS) + (x2 << 2 * COORD_BITS) + (y2 << 3 * COORD_BITS)
    return code


CANDIDATE_DELTA = np.array([_candidate_delta(i) for i in range(16)], dtype=np.int64)


@njit(cache=True, inline="always")
def placements_of_key(s, key, out):
    """legal_placements from a legal_placement_mask result already at hand (no recompute).

    `out` needs 16 slots: every candidate's code is written at out[count] and kept only
    when its bit is set (no branch on the bits, which the processor cannot predict).
    """
    base = pack_placement(s[X_], s[Y_], s[X_], s[Y_])
    # an int64, not the literal 0: typed as a literal first, count would compile every
    # kernel it is passed to twice (once for the literal, once for int64)
    count = np.int64(0)
    for i in range(16):
        out[count] = base + CANDIDATE_DELTA[i]
        count += (key >> i) & 1
    return count


@njit(cache=True, inline="always")
def visible_squares(s, seat):
    """Visible squares of all of a seat's colours (RULES.md section 7), from the counter."""
    return s[s[VISIBLE_AT] + seat]


@njit(cache=True, inline="always")
def seat_rugs_left(s, seat):
    """Unplaced rugs of all of a seat's colours, from the counter."""
    return s[s[SEAT_LEFT_AT] + seat]


@njit(cache=True)
def k_recount(s):
    """Rebuild the kept data (SEAT_LEFT, VISIBLE, PARTNER, BITS) from the rugs left and the board.

    For states built field by field (notation); the kernels keep them in step afterwards.
    """
    p = s[P_]
    left = s[RUGS_LEFT_AT]
    col = s[COLOUR_AT]
    for seat in range(p):
        s[s[SEAT_LEFT_AT] + seat] = 0
        s[s[VISIBLE_AT] + seat] = 0
    for c in range(p * s[C_]):
        s[s[SEAT_LEFT_AT] + c % p] += s[left + c]
        s[s[BITS_AT] + 2 * c] = 0
        s[s[BITS_AT] + 2 * c + 1] = 0
    n = s[N_]
    rug = s[RUG_AT]
    partner = s[PARTNER_AT]
    for i in range(n * n):
        c = s[col + i]
        s[partner + i] = -1
        if c < 0:
            continue
        s[s[VISIBLE_AT] + c % p] += 1
        if n <= BIT_BOARDS:
            _recolour_bit(s, i, -1, c)
        x = i % n
        y = i // n
        for d in range(4):
            nx = x + dx(d)
            ny = y + dy(d)
            if 0 <= nx < n and 0 <= ny < n:
                j = i + offset(d, n)
                if s[col + j] == c and s[rug + j] == s[rug + i]:
                    s[partner + i] = d  # the other half of a whole rug


# ---------------------------------------------------------------- changes


@njit(cache=True, inline="always")
def _begin_turn(s, seat):
    """Start `seat`'s turn: its first phase (RULES.md sections 3 and 9)."""
    s[SEAT_] = seat
    if s[C_] > 1:
        s[COLOUR_] = -1
        s[PHASE_] = PHASE_DRAW  # a two-colour player draws even with one colour left
    else:
        s[COLOUR_] = seat
        s[PHASE_] = PHASE_ROLL if s[FLAGS_] & FLAG_ORIENT_AT_END else PHASE_ORIENT


@njit(cache=True, inline="always")
def _finish(s, reason, last):
    """End the game; the seat shown is the next one in the game after `last` (section 9)."""
    p = s[P_]
    out = s[OUT_AT]
    s[END_] = reason
    s[PHASE_] = PHASE_OVER
    s[COLOUR_] = -1
    seat = last
    for _ in range(p):
        seat = seat + 1 if seat + 1 < p else 0
        if s[out + seat] == 0:
            s[SEAT_] = seat
            return


@njit(cache=True, inline="always")
def _next_turn(s):
    """Pass to the next seat clockwise in the game with rugs left, or end (section 2, 7)."""
    p = s[P_]
    out = s[OUT_AT]
    last = s[SEAT_]
    seat = last
    for _ in range(p):
        seat = seat + 1 if seat + 1 < p else 0
        if s[out + seat] == 0 and seat_rugs_left(s, seat) > 0:
            s[TURN_] += 1
            _begin_turn(s, seat)
            return
    _finish(s, END_RUGS_EXHAUSTED, last)


@njit(cache=True, inline="always")
def _roll(s, steps):
    """Walk, pay, and go bankrupt if need be (RULES.md sections 3.2, 3.3, 4, 5)."""
    n = s[N_]
    x, y, f = walk(s[X_], s[Y_], s[FACING_], steps, n)
    s[X_] = x
    s[Y_] = y
    s[FACING_] = f
    seat = s[SEAT_]
    due, payee = payment_at(s, y * n + x, seat)
    dirhams = s[DIRHAMS_AT]
    have = s[U(dirhams + seat)]
    bankrupt = due > have  # section 5: paying exactly all one's dirhams is not bankruptcy
    paid = have if bankrupt else due
    # without a branch on whether anything is paid: nothing (0) goes to seat 0
    to = max(payee, 0)
    s[U(dirhams + seat)] -= paid
    s[U(dirhams + to)] += paid
    s[U(s[PAID_AT] + seat)] += paid
    s[U(s[RECEIVED_AT] + to)] += paid
    s[LAST_PAYMENT_] = paid
    s[LAST_PAID_TO_] = payee if paid > 0 else -1
    s[LAST_BANKRUPT_] = 1 if bankrupt else 0
    if not bankrupt:
        s[PHASE_] = PHASE_PLACE
        return
    # section 5, bankruptcy: out of the game, unplaced rugs removed, no rug this turn
    s[NOUT_] += 1
    s[s[OUT_AT] + seat] = s[NOUT_]
    s[s[ELIM_TURN_AT] + seat] = s[TURN_]
    left = s[RUGS_LEFT_AT]
    for c in range(seat, s[P_] * s[C_], s[P_]):
        s[left + c] = 0
    s[s[SEAT_LEFT_AT] + seat] = 0
    if s[P_] - s[NOUT_] <= 1 and s[FLAGS_] & FLAG_END_ONE_LEFT:
        _finish(s, END_ONE_LEFT, seat)  # section 7: "one left" wins when both ends coincide
    else:
        _next_turn(s)


@njit(cache=True, inline="always")
def _recolour_bit(s, sq, old, new):
    """Square sq (< 64) passes from colour `old` (-1: empty) to `new` in the BITS section;
    without a branch on `old`: an empty square clears nothing (in colour 0's set)."""
    bit = np.uint32(1) << np.uint32(sq & 31)
    word = sq >> 5
    bits = s[BITS_AT]
    s[U(bits + 2 * max(old, 0) + word)] &= ~np.int32(bit * np.uint32(old >= 0))
    s[U(bits + 2 * new + word)] |= np.int32(bit)


@njit(cache=True, inline="always")
def _place(s, a, b, d):
    """Lay the turn's rug on squares a and b (b is in direction d from a), then orient
    (variant) or pass the turn."""
    colour = s[COLOUR_]
    mover = s[SEAT_]
    p = s[P_]
    placed = s[PLACED_AT] + colour
    s[U(placed)] += 1
    col = s[COLOUR_AT]
    rug = s[RUG_AT]
    # section 7's visible squares: the owners of the covered halves lose them, the mover
    # (who owns the placed colour) gains two
    visible = s[VISIBLE_AT]
    # without branches on what lay under the rug (a coin toss the processor mispredicted):
    # an empty square (-1) takes 0 from seat 0
    under_a = s[U(col + a)]
    under_b = s[U(col + b)]
    s[U(visible + owner(s, max(under_a, 0)))] -= under_a >= 0
    s[U(visible + owner(s, max(under_b, 0)))] -= under_b >= 0
    s[U(visible + mover)] += 2
    # the rugs under a and b are whole no more; the new one is (section 6.3). Without a
    # whole rug under a, its partner is -1 and offset(-1) is 0: the -1 is written on a's
    # own entry, which is -1 already (and set below)
    n = s[N_]
    partner = s[PARTNER_AT]
    s[U(partner + a + offset(s[U(partner + a)], n))] = -1
    s[U(partner + b + offset(s[U(partner + b)], n))] = -1
    s[U(partner + a)] = d
    s[U(partner + b)] = (d + 2) & 3
    s[U(col + a)] = colour
    s[U(col + b)] = colour
    s[U(rug + a)] = s[U(placed)]
    s[U(rug + b)] = s[U(placed)]
    if n <= BIT_BOARDS:
        _recolour_bit(s, a, under_a, colour)
        _recolour_bit(s, b, under_b, colour)
    s[U(s[RUGS_LEFT_AT] + colour)] -= 1
    s[U(s[SEAT_LEFT_AT] + mover)] -= 1
    if s[FLAGS_] & FLAG_ORIENT_AT_END:
        # section 3, variant: orient for the next player, except after the game's last rug
        for seat in range(p):
            if s[s[OUT_AT] + seat] == 0 and seat_rugs_left(s, seat) > 0:
                s[PHASE_] = PHASE_ORIENT
                return
        _finish(s, END_RUGS_EXHAUSTED, s[SEAT_])
    else:
        _next_turn(s)


@njit(cache=True, inline="always")
def _orient(s, action):
    """Turn Assam by `action` (-1, 0 or 1; section 3.1), then roll or, in the variant,
    pass the turn."""
    s[FACING_] = (s[FACING_] + action + 4) % 4
    if s[FLAGS_] & FLAG_ORIENT_AT_END:
        _next_turn(s)
    else:
        s[PHASE_] = PHASE_ROLL


@njit(cache=True, inline="always")
def _place_at(s, x1, y1, x2, y2):
    """_place on (x1, y1), next to Assam, and (x2, y2), a legal placement (section 6)."""
    n = s[N_]
    _place(s, y1 * n + x1, y2 * n + x2, direction(x2 - x1, y2 - y1))


@njit(cache=True, inline="always")
def apply_action(s, action):
    """Apply one action of the current phase in place; return the new phase or an ERR_* code.

    draw: a colour index; orient: -1, 0 or 1; roll: the die value; place: a placement
    code (pack_placement; either square may come first). Nothing changes on error.
    This is the one implementation; it is inlined into the hot loops, and `k_apply` is
    its ordinary compiled form for everyone else.
    """
    phase = s[PHASE_]
    if phase == PHASE_DRAW:
        seat = s[SEAT_]
        if action < 0 or action >= s[P_] * s[C_] or action % s[P_] != seat:
            return ERR_DRAW
        if s[s[RUGS_LEFT_AT] + action] <= 0:
            return ERR_DRAW
        s[COLOUR_] = action
        s[PHASE_] = PHASE_ROLL if s[FLAGS_] & FLAG_ORIENT_AT_END else PHASE_ORIENT
        return s[PHASE_]
    if phase == PHASE_ORIENT:
        if action < -1 or action > 1:
            return ERR_ROTATION  # section 3.1: never 180 degrees
        _orient(s, action)
        return s[PHASE_]
    if phase == PHASE_ROLL:
        if action < 1:
            return ERR_ROLL
        _roll(s, action)
        return s[PHASE_]
    if phase == PHASE_PLACE:
        if action < 0:
            return ERR_PLACEMENT_SHAPE
        x1, y1, x2, y2 = unpack_placement(action)
        # the placement is unordered: put the square next to Assam first
        if not touching(s[X_], s[Y_], x1, y1):
            x1, y1, x2, y2 = x2, y2, x1, y1
        err = placement_error(s, x1, y1, x2, y2)
        if err != OK:
            return err
        _place_at(s, x1, y1, x2, y2)
        return s[PHASE_]
    return ERR_PHASE


@njit(cache=True, inline="always")
def apply_legal(s, action):
    """apply_action for an action the kernels offered as legal, without its checks: a
    chance action of k_chance, a rotation -1, 0 or 1, or a placement code of
    legal_placements (the square next to Assam first). Returns the new phase.

    For the compiled loop without move records, whose twins choose a rotation and an
    index into legal_placements (play_batch checks both): the same change as apply_action.
    """
    phase = s[PHASE_]
    if phase == PHASE_ORIENT:
        _orient(s, action)
    elif phase == PHASE_ROLL:
        _roll(s, action)
    elif phase == PHASE_PLACE:
        x1, y1, x2, y2 = unpack_placement(action)
        _place_at(s, x1, y1, x2, y2)
    else:
        s[COLOUR_] = action  # the draw (a colour of the seat with rugs left)
        s[PHASE_] = PHASE_ROLL if s[FLAGS_] & FLAG_ORIENT_AT_END else PHASE_ORIENT
    return s[PHASE_]


@njit(cache=True, _nrt=False)
def k_apply_int64(s, action):
    """apply_action as an ordinary compiled function (see apply_action), for an int64
    action: called through `k_apply`, which makes it one."""
    return apply_action(s, action)


@njit(cache=True, inline="always")
def k_apply(s, action):
    """apply_action through one ordinary compiled function, the same for every caller:
    the action goes over as an int64. numba compiles a kernel once per argument types, and
    a constant is a type of its own (`Literal[int](-1)`), so a caller passing -1, an
    int32 or an int64 would each compile the rules again (about 10 s each, cold)."""
    return k_apply_int64(s, np.int64(action))


@njit(cache=True, _nrt=False)
def k_step(s, action):
    """k_apply for the Python face: the new phase + 8 * legal_placement_mask when placing.

    Handing the placement mask back with the phase saves the Python API one call into
    the compiled core per turn. The rules are called (`k_apply`), not inlined again: one
    compiled form of them serves the API, the Python loop, the replay and the expert.
    """
    phase = k_apply(s, action)
    if phase == PHASE_PLACE:
        return phase + 8 * legal_placement_mask(s)
    return phase


# ---------------------------------------------------------------- results


@njit(cache=True, _nrt=False)
def k_result(s, out):
    """Per-seat results of a finished game into `out` (RULES.md section 7).

    out[0:P] visible squares, out[P:2P] scores (-1 when eliminated), out[2P:3P] ranks,
    out[3P:4P] 1 for winners; out[4P] is 1 when the tie-break decided the game.
    """
    p = s[P_]
    dirhams = s[DIRHAMS_AT]
    out_ = s[OUT_AT]
    tie_visible = s[FLAGS_] & FLAG_TIE_VISIBLE
    in_game = 0
    for seat in range(p):
        out[seat] = visible_squares(s, seat)
        out[3 * p + seat] = 0
        if s[out_ + seat] == 0:
            out[p + seat] = s[dirhams + seat] + out[seat]
            in_game += 1
        else:
            out[p + seat] = -1
    for seat in range(p):
        if s[out_ + seat] == 0:
            # competition ranking by (score, tie-break value): 1 + the number strictly ahead
            tb = out[seat] if tie_visible else s[dirhams + seat]
            ahead = 0
            for other in range(p):
                if other == seat or s[out_ + other] != 0:
                    continue
                tbo = out[other] if tie_visible else s[dirhams + other]
                score, score_other = out[p + seat], out[p + other]
                if score_other > score or (score_other == score and tbo > tb):
                    ahead += 1
            out[2 * p + seat] = 1 + ahead
            if ahead == 0:
                out[3 * p + seat] = 1
        else:
            # eliminated seats rank below all others, later eliminations above earlier
            later = 0
            for other in range(p):
                if s[out_ + other] > s[out_ + seat]:
                    later += 1
            out[2 * p + seat] = in_game + later + 1
    top = -1
    for seat in range(p):
        top = max(top, out[p + seat])
    at_top = 0
    winners = 0
    for seat in range(p):
        if s[out_ + seat] == 0 and out[p + seat] == top:
            at_top += 1
        winners += out[3 * p + seat]
    out[4 * p] = 1 if at_top >= 2 and winners < at_top else 0


# ---------------------------------------------------------------- perft


@njit(cache=True)
def k_perft(s, depth, faces):
    """Leaves `depth` phases below `s` (RULES.md section 10); `faces` are the distinct rolls."""
    if depth == 0 or s[PHASE_] == PHASE_OVER:
        return 1
    phase = s[PHASE_]
    total = 0
    child = np.empty_like(s)
    if phase == PHASE_DRAW:
        left = s[RUGS_LEFT_AT]
        for c in range(s[SEAT_], s[P_] * s[C_], s[P_]):
            if s[left + c] > 0:
                child[:] = s
                k_apply(child, c)
                total += k_perft(child, depth - 1, faces)
    elif phase == PHASE_ORIENT:
        for rotation in range(-1, 2):
            child[:] = s
            k_apply(child, rotation)
            total += k_perft(child, depth - 1, faces)
    elif phase == PHASE_ROLL:
        for i in range(faces.shape[0]):
            child[:] = s
            k_apply(child, faces[i])
            total += k_perft(child, depth - 1, faces)
    else:
        codes = np.empty(16, np.int64)
        count = legal_placements(s, codes)
        if depth == 1:
            return count
        for i in range(count):
            child[:] = s
            k_apply(child, codes[i])
            total += k_perft(child, depth - 1, faces)
    return total


# ---------------------------------------------------------------- packing (Python)

FACING_INDEX = {"N": 0, "E": 1, "S": 2, "W": 3}


def blank_state(rules: Rules) -> np.ndarray:
    """A packed array with the rule header filled in and an empty board."""
    n, p, c = rules.board_size, rules.players, rules.colours_per_player
    s = np.zeros(state_size(n, p, c, len(rules.die_faces)), dtype=np.int32)
    s[N_] = n
    s[P_] = p
    s[C_] = c
    s[FLAGS_] = (
        (FLAG_ORIENT_AT_END if rules.orient_at_end else 0)
        | (FLAG_OWN_COVERABLE if rules.own_rugs_fully_coverable else 0)
        | (FLAG_TIE_VISIBLE if rules.tie_break == "visible" else 0)
        | (FLAG_END_ONE_LEFT if rules.end_when_one_left else 0)
    )
    s[RUGS_] = rules.rugs_per_colour
    s[STARTING_DIRHAMS_] = rules.starting_dirhams
    squares = n * n
    s[DIRHAMS_AT] = HEADER
    s[OUT_AT] = HEADER + p
    s[ELIM_TURN_AT] = HEADER + 2 * p
    s[PAID_AT] = HEADER + 3 * p
    s[RECEIVED_AT] = HEADER + 4 * p
    s[SEAT_LEFT_AT] = HEADER + 5 * p
    s[VISIBLE_AT] = HEADER + 6 * p
    s[RUGS_LEFT_AT] = HEADER + 7 * p
    s[PLACED_AT] = HEADER + 7 * p + p * c
    s[COLOUR_AT] = HEADER + 7 * p + 2 * p * c
    s[RUG_AT] = s[COLOUR_AT] + squares
    s[PARTNER_AT] = s[RUG_AT] + squares
    s[SCRATCH_AT] = s[PARTNER_AT] + squares
    s[FACES_AT] = s[SCRATCH_AT] + 3 * squares
    s[BITS_AT] = s[FACES_AT] + len(rules.die_faces)
    s[NFACES_] = len(rules.die_faces)
    s[s[FACES_AT] : s[FACES_AT] + len(rules.die_faces)] = rules.die_faces
    s[LAST_PAID_TO_] = -1
    s[COLOUR_] = -1
    s[s[ELIM_TURN_AT] : s[ELIM_TURN_AT] + p] = -1
    s[s[COLOUR_AT] : s[COLOUR_AT] + n * n] = -1
    s[s[PARTNER_AT] : s[PARTNER_AT] + n * n] = -1
    return s


def initial_state(rules: Rules) -> np.ndarray:
    """The packed start position of a rule set (RULES.md section 2)."""
    s = blank_state(rules)
    p = rules.players
    s[X_] = s[Y_] = rules.board_size // 2
    s[FACING_] = FACING_INDEX[rules.initial_facing]
    # RULES.md section 8: seat_dirhams, when set, is each seat's purse (else starting_dirhams)
    s[s[DIRHAMS_AT] : s[DIRHAMS_AT] + p] = rules.purses
    s[s[RUGS_LEFT_AT] : s[RUGS_LEFT_AT] + rules.colours] = rules.rugs_per_colour
    k_recount(s)
    _begin_turn(s, 0)
    return s
