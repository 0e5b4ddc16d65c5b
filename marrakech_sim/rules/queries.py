"""The compiled rule queries a strategy asks: landings, payments, regions, placement features.

Each kernel reads the packed state of `marrakech_sim.rules.core` and changes nothing.
Speed (see `marrakech_sim.rules.core`): the `k_` kernels allocate nothing and are compiled
with `_nrt=False` (no reference counting on the state array); their helpers are
`inline="always"`. The greedy twin (`marrakech_sim.strategies.kernels`) runs them twice a
turn, so the region queries of one decision share one preparation (`prepare_regions`):
on boards of up to 63 squares (N <= 7) the state's own set of each colour's squares,
where a region is a few shifts away; on larger boards a labelling of the whole board in
the state's scratch section. `marrakech_sim.play.view.GameView` is their friendly face.
"""

from __future__ import annotations

from numba import njit

from marrakech_sim.rules import core as k

# columns of `placement_features` (one row per placement)
F_REGION = 0  # squares of the placed colour's region after placing (incl. the new rug)


F_OPPONENT_HALVES = 1  # visible halves of opponents still in the game that it covers (0-2)


F_OWN_HALVES = 2  # visible halves of the mover's own colours that it covers (0-2)


F_OPPONENT_REGION = 3  # largest opponent region (in the game) it covers into, before placing


F_COVERED_SEATS = 4  # bit mask of the seats whose halves it covers


FEATURES = 5


@njit(cache=True, inline="always")
def _owner(c, p):
    """c % p (the seat owning colour c, RULES.md section 1) by subtraction: colours are
    < P * C with few colours per player, and an integer division is slow in hot loops."""
    while c >= p:
        c -= p
    return c


@njit(cache=True, _nrt=False)
def k_next_walker(s):
    """The seat who walks after the rotation now asked for; -1 when nobody will.

    Standard order: the mover. Variant "orient at end" (RULES.md section 3): the next
    seat clockwise still in the game with rugs left (possibly the mover itself).
    """
    if not s[k.FLAGS_] & k.FLAG_ORIENT_AT_END or s[k.PHASE_] != k.PHASE_ORIENT:
        return s[k.SEAT_]
    p = s[k.P_]
    seat = s[k.SEAT_]
    for _ in range(p):
        seat = seat + 1 if seat + 1 < p else 0
        if s[s[k.OUT_AT] + seat] == 0 and k.seat_rugs_left(s, seat) > 0:
            return seat
    return -1


@njit(cache=True, _nrt=False)
def k_landings(s, rotation, out):
    """out[i] = (x, y, facing) where Assam stops for die face i after `rotation`."""
    n = s[k.N_]
    f = (s[k.FACING_] + rotation + 4) & 3
    for i in range(s[k.NFACES_]):
        x, y, g = k.walk(s[k.X_], s[k.Y_], f, s[s[k.FACES_AT] + i], n)
        out[i, 0] = x
        out[i, 1] = y
        out[i, 2] = g


@njit(cache=True, _nrt=False)
def k_payment_totals(s, rotation, payer, payee, out):
    """Sum over the die's faces of what `payer` pays after `rotation` (RULES.md section 5).

    out[0]: total due (before bankruptcy), out[1]: total actually paid (capped at the
    payer's dirhams), out[2]: faces that bankrupt the payer. With payee >= 0 only
    payments to that seat count.
    """
    n = s[k.N_]
    f = (s[k.FACING_] + rotation + 4) & 3
    have = s[s[k.DIRHAMS_AT] + payer]
    out[0] = 0
    out[1] = 0
    out[2] = 0
    for i in range(s[k.NFACES_]):
        x, y, _ = k.walk(s[k.X_], s[k.Y_], f, s[s[k.FACES_AT] + i], n)
        due, to = k.payment_at(s, y * n + x, payer)
        if due > 0 and (payee < 0 or to == payee):
            out[0] += due
            out[1] += min(due, have)
            if due > have:
                out[2] += 1


@njit(cache=True, inline="always")
def _colour_mask(s, c, rb):
    """The bitboard of colour c (-1: the empty squares) on a board of prepare_regions'
    bitboards: the state's kept set of each colour (core.colour_bits)."""
    if c >= 0:
        return k.colour_bits(s, c)
    covered = 0
    for colour in range(s[k.P_] * s[k.C_]):
        covered |= k.colour_bits(s, colour)
    return rb[0] & ~covered


@njit(cache=True, _nrt=False)
def k_label_regions(s):
    """Label the 4-connected regions of each colour (RULES.md section 5) in the scratch
    section: scratch[sq] = the region's root (its first square), scratch[N*N + root] = its
    size (an empty square is its own root, of size 0); scratch[2*N*N:3*N*N] is cleared
    for _labelled_rug_region's marks.

    One pass over the board (union-find), so a batch of queries costs one labelling
    instead of one flood fill each. The position itself is not changed.
    """
    n = s[k.N_]
    nn = n * n
    col = s[k.COLOUR_AT]
    lab = s[k.SCRATCH_AT]
    size = lab + nn
    mark = size + nn
    # Squares in order, each joined to its left and upper neighbours of its colour. A root
    # is the first square of its region and every parent comes before its child, so
    # the left neighbour's parent is its root already (no union since it was labelled).
    x = 0
    for sq in range(nn):
        s[size + sq] = 0
        s[mark + sq] = 0
        root = sq
        c = s[col + sq]
        if c >= 0:
            if x > 0 and s[col + sq - 1] == c:
                root = s[lab + sq - 1]
            if sq >= n and s[col + sq - n] == c:
                up = sq - n  # its root, by path halving
                while s[lab + up] != up:
                    s[lab + up] = s[lab + s[lab + up]]
                    up = s[lab + up]
                if up < root:
                    if root != sq:
                        s[lab + root] = up  # two regions meet: the later root joins
                    root = up
                elif up > root:
                    s[lab + up] = root
        s[lab + sq] = root
        x += 1
        if x == n:
            x = 0
    # parents come first, so one pass in order flattens every path
    for sq in range(nn):
        if s[col + sq] >= 0:
            root = s[lab + s[lab + sq]]
            s[lab + sq] = root
            s[size + root] += 1


@njit(cache=True, inline="always")
def prepare_regions(s):
    """Prepare the region queries of one decision; the result is passed to them.

    Up to 63 squares: (all squares, edge masks); each colour's squares are the state's
    own sets (core.colour_bits). Larger boards: zeros, and the board labelled by
    k_label_regions.
    """
    if s[k.N_] > k.BIT_BOARDS:
        k_label_regions(s)
        return 0, 0, 0
    return k.board_bits(s[k.N_])


@njit(cache=True, inline="always")
def _region_size(s, sq, c, rb):
    """Squares of the region at sq, whose colour c >= 0 is given (rb from prepare_regions)."""
    full, not_last, not_first = rb
    if full:
        return k.popcount(k.flood(1 << sq, k.colour_bits(s, c), s[k.N_], not_last, not_first))
    lab = s[k.SCRATCH_AT]
    return s[lab + s[k.N_] * s[k.N_] + s[lab + sq]]


@njit(cache=True, _nrt=False)
def _labelled_rug_region(s, x1, y1, x2, y2, stamp):
    """_rug_region on a board labelled by k_label_regions (an ordinary call: the inlined
    bitboard path stays small).

    Each region of the placed colour that the rug covers or touches is counted once, by
    marking its root with `stamp` (> 0, new for each query of one labelling).
    """
    n = s[k.N_]
    nn = n * n
    colour = s[k.COLOUR_]
    col = s[k.COLOUR_AT]
    lab = s[k.SCRATCH_AT]
    size = lab + nn
    mark = size + nn
    sq1 = y1 * n + x1
    sq2 = y2 * n + x2
    region = 2
    for j in range(2):
        x = x1 if j == 0 else x2
        y = y1 if j == 0 else y2
        sq = sq1 if j == 0 else sq2
        other = sq2 if j == 0 else sq1
        if s[col + sq] == colour:
            region -= 1  # counted again with its region below
        # the square itself and its neighbours of the placed colour, except the rug's
        # other square (counted in the 2)
        for d in range(5):
            if d == 0:
                if y == 0:
                    continue
                nb = sq - n
            elif d == 1:
                if x == n - 1:
                    continue
                nb = sq + 1
            elif d == 2:
                if y == n - 1:
                    continue
                nb = sq + n
            elif d == 3:
                if x == 0:
                    continue
                nb = sq - 1
            else:
                nb = sq
            if s[col + nb] != colour or (d < 4 and nb == other):
                continue
            root = s[lab + nb]
            if s[mark + root] != stamp:
                s[mark + root] = stamp
                region += s[size + root]
    return region


@njit(cache=True, inline="always")
def _rug_region(s, x1, y1, x2, y2, rb, own, stamp):
    """Squares of the placed colour's region after placing the turn's rug on (x1, y1),
    (x2, y2) (rb from prepare_regions, own from placing_mask, stamp: see _labelled_rug_region).

    The placed colour's regions only merge: the region is the rug's two squares plus the
    regions of that colour they cover or touch.
    """
    full, not_last, not_first = rb
    if full:
        n = s[k.N_]
        rug = (1 << (y1 * n + x1)) | (1 << (y2 * n + x2))
        return k.popcount(k.flood(rug, own | rug, n, not_last, not_first))
    return _labelled_rug_region(s, x1, y1, x2, y2, stamp)


@njit(cache=True, inline="always")
def placing_mask(s, rb):
    """The bitboard of the colour being placed (0 on labelled boards)."""
    return _colour_mask(s, s[k.COLOUR_], rb) if rb[0] else 0


@njit(cache=True, inline="always")
def rotation_totals(s, r, payer, payee, rb):
    """(due, paid, bankrupting faces) of k_payment_totals for rotation r - 1 (rb from
    prepare_regions), with one walk and one region query per distinct consecutive face."""
    n = s[k.N_]
    p = s[k.P_]
    col = s[k.COLOUR_AT]
    faces = s[k.FACES_AT]
    out_ = s[k.OUT_AT]
    have = s[s[k.DIRHAMS_AT] + payer]
    x0 = s[k.X_]
    y0 = s[k.Y_]
    f = (s[k.FACING_] + r + 3) & 3
    x, y, g = x0, y0, f
    prev = 0
    due = 0
    total_due = 0
    total_paid = 0
    bankrupt = 0
    for i in range(s[k.NFACES_]):
        face = s[faces + i]
        if i == 0 or face != prev:
            if face >= prev:
                x, y, g = k.walk(x, y, g, face - prev, n)
            else:
                x, y, g = k.walk(x0, y0, f, face, n)
            prev = face
            sq = y * n + x
            c = s[col + sq]
            due = 0
            if c >= 0:  # RULES.md section 5: what a stop on sq costs the payer
                to = _owner(c, p)
                if to != payer and s[out_ + to] == 0 and (payee < 0 or to == payee):
                    due = _region_size(s, sq, c, rb)
        if due > 0:
            total_due += due
            total_paid += min(due, have)
            if due > have:
                bankrupt += 1
    return total_due, total_paid, bankrupt


@njit(cache=True, _nrt=False)
def k_rotation_totals(s, payer, payee, out):
    """out[r + 1] = k_payment_totals(s, r, payer, payee) for r = -1, 0, 1, from one
    preparation of the region queries."""
    rb = prepare_regions(s)
    for r in range(3):
        out[r, 0], out[r, 1], out[r, 2] = rotation_totals(s, r, payer, payee, rb)


@njit(cache=True, inline="always")
def placement_features(s, code, rb, own, stamp):
    """The F_* features of placing the turn's rug on `code` (rb, own: prepare_regions and
    placing_mask; stamp: see _rug_region) as (region, opponent halves, own halves,
    opponent region, covered seats)."""
    n = s[k.N_]
    p = s[k.P_]
    mover = s[k.SEAT_]
    col = s[k.COLOUR_AT]
    out_ = s[k.OUT_AT]
    x1, y1, x2, y2 = k.unpack_placement(code)
    opponent = 0
    mine = 0
    largest = 0
    seats = 0
    for j in range(2):
        sq = y1 * n + x1 if j == 0 else y2 * n + x2
        c = s[col + sq]
        if c >= 0:
            o = _owner(c, p)
            seats |= 1 << o
            if o == mover:
                mine += 1
            elif s[out_ + o] == 0:
                opponent += 1
                largest = max(largest, _region_size(s, sq, c, rb))
    region = _rug_region(s, x1, y1, x2, y2, rb, own, stamp)
    return region, opponent, mine, largest, seats


@njit(cache=True, _nrt=False)
def k_placements_features(s, codes, count, out):
    """What placing the turn's rug on each of codes[:count] would change (F_* columns).

    One row of `out` each, from one preparation of the region queries.
    """
    rb = prepare_regions(s)
    own = placing_mask(s, rb)
    for i in range(count):
        region, opponent, mine, largest, seats = placement_features(s, codes[i], rb, own, i + 1)
        out[i, F_REGION] = region
        out[i, F_OPPONENT_HALVES] = opponent
        out[i, F_OPPONENT_REGION] = largest
        out[i, F_OWN_HALVES] = mine
        out[i, F_COVERED_SEATS] = seats


@njit(cache=True)
def k_regions(s, out):
    """out[colour] = the largest visible region of each colour (RULES.md section 5)."""
    n = s[k.N_]
    col = s[k.COLOUR_AT]
    for c in range(out.shape[0]):
        out[c] = 0
    for sq in range(n * n):
        c = s[col + sq]
        if c >= 0 and out[c] < n * n:
            size = k.region_size(s, sq)
            if size > out[c]:
                out[c] = size
