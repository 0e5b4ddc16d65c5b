"""What a strategy sees of a running game: `GameView`, and the compiled queries behind it.

The view wraps the game loop's one mutable packed state (no copy per decision) and
answers the questions a strategy author asks without re-implementing rules. Each query
is one call into compiled code: the kernels below, over the packed state of
`marrakech_sim.rules.core`. Search strategies may read `view.packed` (read-only) and
run their own kernels on a copy.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from marrakech_sim.rng import Rng
from marrakech_sim.rules import core as k
from marrakech_sim.rules.options import COLOUR_LETTERS, FACINGS, Rules
from marrakech_sim.rules.state import GameState, Placement, _placement_codes

# columns of `placement_features` (one row per placement)
F_REGION = 0  # squares of the placed colour's region after placing (incl. the new rug)
F_OPPONENT_HALVES = 1  # visible halves of opponents still in the game that it covers (0-2)
F_OWN_HALVES = 2  # visible halves of the mover's own colours that it covers (0-2)
F_OPPONENT_REGION = 3  # largest opponent region (in the game) it covers into, before placing
F_COVERED_SEATS = 4  # bit mask of the seats whose halves it covers
FEATURES = 5


# ---------------------------------------------------------------- compiled queries


@njit(cache=True)
def k_next_walker(s):  # type: ignore[no-untyped-def]
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


@njit(cache=True)
def k_landings(s, rotation, out):  # type: ignore[no-untyped-def]
    """out[i] = (x, y, facing) where Assam stops for die face i after `rotation`."""
    n = s[k.N_]
    f = (s[k.FACING_] + rotation + 4) % 4
    for i in range(s[k.NFACES_]):
        x, y, g = k.walk(s[k.X_], s[k.Y_], f, s[s[k.FACES_AT] + i], n)
        out[i, 0] = x
        out[i, 1] = y
        out[i, 2] = g


@njit(cache=True)
def k_payment_totals(s, rotation, payer, payee, out):  # type: ignore[no-untyped-def]
    """Sum over the die's faces of what `payer` pays after `rotation` (RULES.md section 5).

    out[0]: total due (before bankruptcy), out[1]: total actually paid (capped at the
    payer's dirhams), out[2]: faces that bankrupt the payer. With payee >= 0 only
    payments to that seat count.
    """
    n = s[k.N_]
    f = (s[k.FACING_] + rotation + 4) % 4
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


@njit(cache=True)
def _find(s, lab, x):  # type: ignore[no-untyped-def]
    """Root of square x in the union-find forest at lab (path halving)."""
    while s[lab + x] != x:
        s[lab + x] = s[lab + s[lab + x]]
        x = s[lab + x]
    return x


@njit(cache=True)
def k_label_regions(s):  # type: ignore[no-untyped-def]
    """Label the 4-connected regions of each colour (RULES.md section 5) in the scratch
    section: scratch[sq] = the region's root square, scratch[N*N + root] = its size.

    One pass over the board (union-find), so a batch of queries costs one labelling
    instead of one flood fill each. The position itself is not changed.
    """
    n = s[k.N_]
    col = s[k.COLOUR_AT]
    lab = s[k.SCRATCH_AT]
    size = lab + n * n
    for sq in range(n * n):
        s[lab + sq] = sq
        s[size + sq] = 0
    sq = 0
    for y in range(n):
        for x in range(n):
            c = s[col + sq]
            if c >= 0:
                if x > 0 and s[col + sq - 1] == c:
                    a = _find(s, lab, sq)
                    b = _find(s, lab, sq - 1)
                    if a != b:
                        s[lab + max(a, b)] = min(a, b)
                if y > 0 and s[col + sq - n] == c:
                    a = _find(s, lab, sq)
                    b = _find(s, lab, sq - n)
                    if a != b:
                        s[lab + max(a, b)] = min(a, b)
            sq += 1
    for sq in range(n * n):
        if s[col + sq] >= 0:
            root = _find(s, lab, sq)
            s[lab + sq] = root
            s[size + root] += 1


@njit(cache=True)
def _labelled_size(s, sq):  # type: ignore[no-untyped-def]
    """Region size at sq after k_label_regions (0 when empty)."""
    if s[s[k.COLOUR_AT] + sq] < 0:
        return 0
    lab = s[k.SCRATCH_AT]
    return s[lab + s[k.N_] * s[k.N_] + s[lab + sq]]


@njit(cache=True)
def k_rotation_totals(s, payer, payee, out):  # type: ignore[no-untyped-def]
    """out[r + 1] = k_payment_totals(s, r, payer, payee) for r = -1, 0, 1, with one
    walk and at most one flood fill per distinct consecutive face."""
    n = s[k.N_]
    p = s[k.P_]
    col = s[k.COLOUR_AT]
    faces = s[k.FACES_AT]
    have = s[s[k.DIRHAMS_AT] + payer]
    k_label_regions(s)
    for r in range(3):
        f = (s[k.FACING_] + r + 3) % 4
        x, y, g = s[k.X_], s[k.Y_], f
        prev = 0
        due = 0
        out[r, 0] = 0
        out[r, 1] = 0
        out[r, 2] = 0
        for i in range(s[k.NFACES_]):
            face = s[faces + i]
            if i == 0 or face != prev:
                if face >= prev:
                    x, y, g = k.walk(x, y, g, face - prev, n)
                else:
                    x, y, g = k.walk(s[k.X_], s[k.Y_], f, face, n)
                prev = face
                sq = y * n + x
                c = s[col + sq]
                due = 0
                if c >= 0:
                    to = c % p
                    if to != payer and s[s[k.OUT_AT] + to] == 0 and (payee < 0 or to == payee):
                        due = _labelled_size(s, sq)
            if due > 0:
                out[r, 0] += due
                out[r, 1] += min(due, have)
                if due > have:
                    out[r, 2] += 1


@njit(cache=True)
def k_placements_features(s, codes, count, out):  # type: ignore[no-untyped-def]
    """What placing the turn's rug on each of codes[:count] would change (F_* columns).

    One row of `out` each, from one region labelling: the placed colour's regions only
    merge, so the region after placing is the two squares plus the distinct regions of
    that colour touching them.
    """
    n = s[k.N_]
    p = s[k.P_]
    mover = s[k.SEAT_]
    colour = s[k.COLOUR_]
    col = s[k.COLOUR_AT]
    out_ = s[k.OUT_AT]
    lab = s[k.SCRATCH_AT]
    size = lab + n * n
    k_label_regions(s)
    roots = np.empty(10, np.int64)
    for i in range(count):
        x1, y1, x2, y2 = k.unpack_placement(codes[i])
        row = out[i]
        opponent = 0
        own = 0
        largest = 0
        seats = 0
        region = 2
        nroots = 0
        for j in range(2):
            x = x1 if j == 0 else x2
            y = y1 if j == 0 else y2
            sq = y * n + x
            c = s[col + sq]
            if c >= 0:
                o = c % p
                seats |= 1 << o
                if o == mover:
                    own += 1
                elif s[out_ + o] == 0:
                    opponent += 1
                    largest = max(largest, s[size + s[lab + sq]])
                if c == colour:
                    region -= 1  # counted again with its region below
            for d in range(5):
                nx = x + (k.dx(d) if d < 4 else 0)
                ny = y + (k.dy(d) if d < 4 else 0)
                if nx < 0 or ny < 0 or nx >= n or ny >= n:
                    continue
                nb = ny * n + nx
                if s[col + nb] != colour:
                    continue
                if d < 4 and ((nx == x1 and ny == y1) or (nx == x2 and ny == y2)):
                    continue  # the other square of the rug: counted in the 2
                root = s[lab + nb]
                seen = False
                for m in range(nroots):
                    if roots[m] == root:
                        seen = True
                if not seen:
                    roots[nroots] = root
                    nroots += 1
                    region += s[size + root]
        row[F_REGION] = region
        row[F_OPPONENT_HALVES] = opponent
        row[F_OPPONENT_REGION] = largest
        row[F_OWN_HALVES] = own
        row[F_COVERED_SEATS] = seats


@njit(cache=True)
def k_regions(s, out):  # type: ignore[no-untyped-def]
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


# ---------------------------------------------------------------- the view


class PlacementEffect(NamedTuple):
    """What a placement would change (see `GameView.placement_effect`)."""

    covered: tuple[tuple[str, int] | None, tuple[str, int] | None]  # halves covered
    covered_seats: tuple[int, ...]  # seats whose visible halves it covers
    region: int  # squares of the placed colour's region after placing
    opponent_halves: int  # halves of opponents still in the game it covers
    own_halves: int  # halves of the mover's own colours it covers
    opponent_region: int  # largest opponent region it covers into (size before placing)


class GameView:
    """What a strategy sees of a running game: read-only, live, with fast rule queries.

    Squares are (x, y). Queries call the compiled core; none of them changes the game.
    A view belongs to one seat (`seat`) and carries that seat's random stream (`rng`).
    """

    __slots__ = ("_codes", "_features", "_land", "_s", "_tot", "rng", "rules", "seat")

    def __init__(self, rules: Rules, packed: np.ndarray, seat: int, rng: Rng) -> None:
        self.rules = rules
        self._s = packed
        self.seat = seat  # the seat this view belongs to
        self.rng = rng  # this seat's own seeded random stream
        self._land = np.empty((len(rules.die_faces), 3), np.int64)
        self._tot = np.empty(3, np.int64)
        self._features = np.empty((16, FEATURES), np.int64)
        self._codes = _placement_codes(rules.board_size)

    # ------------------------------------------------------------ the position

    @property
    def packed(self) -> np.ndarray:
        """A read-only view of the packed state (marrakech_sim.rules.core) for kernels."""
        view = self._s.view()
        view.flags.writeable = False
        return view

    @property
    def to_move(self) -> int:
        return int(self._s[k.SEAT_])

    @property
    def turn(self) -> int:
        """Index of the current turn (0, 1, ...)."""
        return int(self._s[k.TURN_])

    @property
    def phase(self) -> str:
        return ("draw", "orient", "roll", "place", "over")[self._s[k.PHASE_]]

    @property
    def orient_for_next(self) -> bool:
        """True when the rotation asked for sets the next player's walk (the variant)."""
        return bool(self._s[k.FLAGS_] & k.FLAG_ORIENT_AT_END)

    @property
    def next_walker(self) -> int | None:
        """The seat whose walk the rotation asked for now sets (the mover, or in the
        variant the next player); None when nobody walks again."""
        seat = int(k_next_walker(self._s))
        return None if seat < 0 else seat

    @property
    def colour(self) -> str | None:
        """The letter of the rug to place this turn (None before the draw)."""
        c = int(self._s[k.COLOUR_])
        return COLOUR_LETTERS[c] if c >= 0 else None

    @property
    def assam(self) -> tuple[int, int, str]:
        """Assam's (x, y, facing)."""
        return int(self._s[k.X_]), int(self._s[k.Y_]), FACINGS[self._s[k.FACING_]]

    def dirhams(self, seat: int | None = None) -> int:
        """Dirhams of `seat` (default: this view's seat)."""
        return int(self._s[self._s[k.DIRHAMS_AT] + (self.seat if seat is None else seat)])

    def rugs_left(self, seat: int | None = None) -> int:
        """Unplaced rugs of all of `seat`'s colours (default: this view's seat)."""
        return int(k.seat_rugs_left(self._s, self.seat if seat is None else seat))

    def is_eliminated(self, seat: int) -> bool:
        return bool(self._s[self._s[k.OUT_AT] + seat])

    def visible(self, seat: int | None = None) -> int:
        """Visible squares of `seat`'s colours (RULES.md section 7)."""
        return int(k.visible_squares(self._s, self.seat if seat is None else seat))

    def square(self, x: int, y: int) -> tuple[str, int] | None:
        """The visible rug half at (x, y) as (colour letter, rug number), or None."""
        n = self.rules.board_size
        c = int(self._s[self._s[k.COLOUR_AT] + y * n + x])
        if c < 0:
            return None
        return COLOUR_LETTERS[c], int(self._s[self._s[k.RUG_AT] + y * n + x])

    def owner(self, x: int, y: int) -> int | None:
        """The seat owning the visible rug half at (x, y), or None when empty."""
        c = int(self._s[self._s[k.COLOUR_AT] + y * self.rules.board_size + x])
        return None if c < 0 else c % self.rules.players

    def board(self) -> np.ndarray:
        """Visible colour index per square as an (N, N) array indexed [y, x]; -1 empty.

        The colour index c is COLOUR_LETTERS[c], owned by seat c % players.
        """
        n = self.rules.board_size
        o = self._s[k.COLOUR_AT]
        return self._s[o : o + n * n].reshape(n, n).copy()

    def rugs(self) -> np.ndarray:
        """Rug number of the visible half per square, (N, N) indexed [y, x]; 0 empty."""
        n = self.rules.board_size
        o = self._s[k.RUG_AT]
        return self._s[o : o + n * n].reshape(n, n).copy()

    def state(self) -> GameState:
        """An independent GameState copy of the position (for search strategies)."""
        return GameState.from_packed(self.rules, self._s)

    # ------------------------------------------------------------ queries

    def landing(self, rotation: int, roll: int) -> tuple[int, int, str]:
        """Where Assam stops if turned by `rotation` now and walking `roll` steps."""
        s = self._s
        x, y, f = k.walk(s[k.X_], s[k.Y_], (s[k.FACING_] + rotation + 4) % 4, roll, s[k.N_])
        return int(x), int(y), FACINGS[f]

    def landings(self, rotation: int) -> np.ndarray:
        """(faces, 3) array: (x, y, facing index) of the stop for each die face, in order."""
        k_landings(self._s, rotation, self._land)
        return self._land.copy()

    def landing_distribution(self, rotation: int) -> list[tuple[tuple[int, int, str], float]]:
        """[((x, y, facing), probability), ...] over the die for a rotation."""
        k_landings(self._s, rotation, self._land)
        share = 1 / len(self.rules.die_faces)
        dist: dict[tuple[int, int, str], float] = {}
        for x, y, f in self._land.tolist():
            spot = (x, y, FACINGS[f])
            dist[spot] = dist.get(spot, 0.0) + share
        return list(dist.items())

    def payment_at(self, x: int, y: int, seat: int | None = None) -> tuple[int, int | None]:
        """(amount due, payee) if `seat` (default: this view's) stopped on (x, y) now."""
        due, payee = k.payment_at(
            self._s, y * self.rules.board_size + x, self.seat if seat is None else seat
        )
        return int(due), (int(payee) if payee >= 0 else None)

    def payment_totals(
        self, rotation: int, payer: int | None = None, payee: int | None = None
    ) -> tuple[int, int, int]:
        """Over the die's faces (each face once): (total due, total paid, bankrupting faces)
        for `payer` (default: this view's seat) after `rotation`; with `payee`, only
        payments to that seat count. Divide by len(rules.die_faces) for expectations."""
        k_payment_totals(
            self._s,
            rotation,
            self.seat if payer is None else payer,
            -1 if payee is None else payee,
            self._tot,
        )
        due, paid, bankrupt = self._tot.tolist()
        return due, paid, bankrupt

    def expected_payment(
        self, rotation: int, seat: int | None = None, payee: int | None = None
    ) -> float:
        """The payment `seat` can expect over the die after `rotation` (before bankruptcy)."""
        return self.payment_totals(rotation, seat, payee)[0] / len(self.rules.die_faces)

    def region_size(self, x: int, y: int) -> int:
        """Squares of the 4-connected region of the colour at (x, y); 0 when empty."""
        return int(k.region_size(self._s, y * self.rules.board_size + x))

    def largest_regions(self) -> dict[str, int]:
        """The largest visible region of each colour letter (0 when none is visible)."""
        out = np.empty(self.rules.colours, np.int64)
        k_regions(self._s, out)
        return {COLOUR_LETTERS[c]: int(v) for c, v in enumerate(out.tolist())}

    def placement_effect(self, placement: Placement) -> PlacementEffect:
        """What placing this turn's rug on `placement` would change (nothing changes)."""
        if self._s[k.PHASE_] != k.PHASE_PLACE:
            raise ValueError(f"no rug to place in the {self.phase} phase")
        code = self._codes.get(placement)
        (x1, y1), (x2, y2) = placement
        if code is None or (
            k.placement_error(self._s, x1, y1, x2, y2) != k.OK
            and k.placement_error(self._s, x2, y2, x1, y1) != k.OK
        ):
            raise ValueError(f"{placement!r} is not a legal placement now")
        k_placements_features(self._s, np.array([code], np.int64), 1, self._features)
        region, opponent, own, largest, seats = self._features[0].tolist()
        return PlacementEffect(
            covered=(self.square(x1, y1), self.square(x2, y2)),
            covered_seats=tuple(i for i in range(self.rules.players) if seats >> i & 1),
            region=region,
            opponent_halves=opponent,
            own_halves=own,
            opponent_region=largest,
        )

    def placement_features(self, options: tuple[Placement, ...]) -> np.ndarray:
        """One row per option of the F_* columns of this module, in one compiled call.

        The fast form of `placement_effect` for all the legal options at once.
        """
        codes = self._codes
        packed = np.array([codes[o] for o in options], np.int64)
        out = np.empty((len(options), FEATURES), np.int64)
        k_placements_features(self._s, packed, len(options), out)
        return out
