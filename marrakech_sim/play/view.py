"""What a strategy sees of a running game: `GameView`.

The view wraps the game loop's one mutable packed state (no copy per decision) and
answers the questions a strategy author asks without re-implementing rules. Each query
is one call into compiled code (`marrakech_sim.rules.queries`). Search strategies may read
`view.packed` (read-only) and run their own kernels on a copy.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from marrakech_sim.errors import IllegalActionError
from marrakech_sim.play.rng import Rng
from marrakech_sim.rules import core as k
from marrakech_sim.rules.options import COLOUR_LETTERS, FACINGS, Rules
from marrakech_sim.rules.queries import (
    FEATURES,
    k_landings,
    k_next_walker,
    k_payment_totals,
    k_placements_features,
    k_regions,
)
from marrakech_sim.rules.state import (
    PHASES,
    GameState,
    Placement,
    PositionReads,
    colour_grid,
    colour_index_at,
    dirhams_of,
    is_orient_at_end,
    is_out,
    landing_of,
    phase_of,
    placement_codes,
    read_only,
    rug_grid,
    seat_to_move,
    square_of,
    turn_of,
)


class PlacementEffect(NamedTuple):
    """What a placement would change (see `GameView.placement_effect`)."""

    covered: tuple[
        tuple[str, int] | None, tuple[str, int] | None
    ]  # the visible half under each of the two squares, (colour, rug number) or None
    covered_seats: tuple[int, ...]  # seats whose visible halves it covers
    region: int  # squares of the placed colour's region after placing
    opponent_halves: int  # halves of opponents still in the game it covers
    own_halves: int  # halves of the mover's own colours it covers
    opponent_region: int  # largest opponent region it covers into (size before placing)


class GameView(PositionReads):
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
        self._codes = placement_codes(rules.board_size)

    # ------------------------------------------------------------ the position

    @property
    def packed(self) -> np.ndarray:
        """A read-only view of the packed state (marrakech_sim.rules.core) for kernels."""
        return read_only(self._s)

    @property
    def to_move(self) -> int:
        """The seat whose turn it is."""
        return seat_to_move(self._s)

    @property
    def turn(self) -> int:
        """Index of the current turn (0, 1, ...)."""
        return turn_of(self._s)

    @property
    def phase(self) -> str:
        """The phase: 'draw', 'orient', 'roll', 'place' or 'over' (docs/rules.md section 9)."""
        return PHASES[phase_of(self._s)]

    @property
    def orient_for_next(self) -> bool:
        """True when the rotation asked for sets the next player's walk (the variant)."""
        return is_orient_at_end(self._s)

    @property
    def next_walker(self) -> int | None:
        """The seat whose walk the rotation asked for now sets (the mover, or in the
        variant the next player); None when nobody walks again."""
        seat = int(k_next_walker(self._s))
        return None if seat < 0 else seat

    def dirhams(self, seat: int | None = None) -> int:
        """Dirhams of `seat` (default: this view's seat)."""
        return dirhams_of(self._s, self.seat if seat is None else seat)

    def rugs_left(self, seat: int | None = None) -> int:
        """Unplaced rugs of all of `seat`'s colours (default: this view's seat)."""
        return int(k.seat_rugs_left(self._s, self.seat if seat is None else seat))

    def is_eliminated(self, seat: int) -> bool:
        """Whether `seat` went bankrupt and is out of the game."""
        return is_out(self._s, seat)

    def visible(self, seat: int | None = None) -> int:
        """Visible squares of `seat`'s colours (RULES.md section 7)."""
        return int(k.visible_squares(self._s, self.seat if seat is None else seat))

    def square(self, x: int, y: int) -> tuple[str, int] | None:
        """The visible rug half at (x, y) as (colour letter, rug number), or None."""
        return square_of(self._s, self.rules.board_size, x, y)

    def owner(self, x: int, y: int) -> int | None:
        """The seat owning the visible rug half at (x, y), or None when empty."""
        c = colour_index_at(self._s, self.rules.board_size, x, y)
        return None if c < 0 else c % self.rules.players

    def board(self) -> np.ndarray:
        """Visible colour index per square as an (N, N) array indexed [y, x]; -1 empty.

        The colour index c is COLOUR_LETTERS[c], owned by seat c % players.
        """
        return colour_grid(self._s, self.rules.board_size)

    def rugs(self) -> np.ndarray:
        """Rug number of the visible half per square, (N, N) indexed [y, x]; 0 empty."""
        return rug_grid(self._s, self.rules.board_size)

    def state(self) -> GameState:
        """An independent GameState copy of the position (for search strategies)."""
        return GameState.from_packed(self.rules, self._s)

    # ------------------------------------------------------------ queries

    def landing(self, rotation: int, roll: int) -> tuple[int, int, str]:
        """Where Assam stops if turned by `rotation` now and walking `roll` steps."""
        return landing_of(self._s, rotation, roll)

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
        if phase_of(self._s) != k.PHASE_PLACE:
            raise IllegalActionError(f"no rug to place in the {self.phase} phase")
        code = self._codes.get(placement)
        (x1, y1), (x2, y2) = placement
        if code is None or (
            k.placement_error(self._s, x1, y1, x2, y2) != k.OK
            and k.placement_error(self._s, x2, y2, x1, y1) != k.OK
        ):
            raise IllegalActionError(f"{placement!r} is not a legal placement now")
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
