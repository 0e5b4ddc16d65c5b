"""What a strategy sees of a running game: `GameView`."""

from __future__ import annotations

from typing import Any

import numpy as np

from marrakech_sim.rng import Rng
from marrakech_sim.rules import core as k
from marrakech_sim.rules.options import COLOUR_LETTERS, FACINGS, Rules
from marrakech_sim.rules.state import GameState, Placement, _placement_codes


class GameView:
    """What a strategy sees of a running game: read-only, live, with fast rule queries.

    Squares are (x, y). Queries call the compiled core; none of them changes the game.
    """

    __slots__ = ("_s", "rng", "rules", "seat")

    def __init__(self, rules: Rules, packed: np.ndarray, seat: int, rng: Rng) -> None:
        self.rules = rules
        self._s = packed
        self.seat = seat  # the seat this view belongs to
        self.rng = rng  # this seat's own seeded random stream

    # ------------------------------------------------------------ the position

    @property
    def to_move(self) -> int:
        return int(self._s[k.SEAT_])

    @property
    def phase(self) -> str:
        return ("draw", "orient", "roll", "place", "over")[self._s[k.PHASE_]]

    @property
    def orient_for_next(self) -> bool:
        """True when the rotation asked for sets the next player's walk (the variant)."""
        return bool(self._s[k.FLAGS_] & k.FLAG_ORIENT_AT_END)

    @property
    def colour(self) -> str | None:
        """The letter of the rug to place this turn (None before the draw)."""
        c = int(self._s[k.COLOUR_])
        return COLOUR_LETTERS[c] if c >= 0 else None

    @property
    def assam(self) -> tuple[int, int, str]:
        return int(self._s[k.X_]), int(self._s[k.Y_]), FACINGS[self._s[k.FACING_]]

    def dirhams(self, seat: int | None = None) -> int:
        return int(self._s[self._s[k.DIRHAMS_AT] + (self.seat if seat is None else seat)])

    def rugs_left(self, seat: int | None = None) -> int:
        return int(k.seat_rugs_left(self._s, self.seat if seat is None else seat))

    def is_eliminated(self, seat: int) -> bool:
        return bool(self._s[self._s[k.OUT_AT] + seat])

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
        """Visible colour index per square as an (N, N) array indexed [y, x]; -1 empty."""
        n = self.rules.board_size
        o = self._s[k.COLOUR_AT]
        return self._s[o : o + n * n].reshape(n, n).copy()

    def state(self) -> GameState:
        """An independent GameState copy of the position (for search strategies)."""
        return GameState.from_packed(self.rules, self._s)

    # ------------------------------------------------------------ queries

    def landing(self, rotation: int, roll: int) -> tuple[int, int, str]:
        """Where Assam stops if turned by `rotation` now and walking `roll` steps."""
        s = self._s
        x, y, f = k.walk(s[k.X_], s[k.Y_], (s[k.FACING_] + rotation) % 4, roll, s[k.N_])
        return int(x), int(y), FACINGS[f]

    def landing_distribution(self, rotation: int) -> list[tuple[tuple[int, int, str], float]]:
        """[((x, y, facing), probability), ...] over the die for a rotation."""
        faces = self.rules.die_faces
        dist: dict[tuple[int, int, str], float] = {}
        for face in faces:
            spot = self.landing(rotation, face)
            dist[spot] = dist.get(spot, 0.0) + 1 / len(faces)
        return list(dist.items())

    def payment_at(self, x: int, y: int, seat: int | None = None) -> tuple[int, int | None]:
        """(amount due, payee) if `seat` (default: this view's) stopped on (x, y) now."""
        due, payee = k.payment_at(
            self._s, y * self.rules.board_size + x, self.seat if seat is None else seat
        )
        return int(due), (int(payee) if payee >= 0 else None)

    def expected_payment(self, rotation: int, seat: int | None = None) -> float:
        """The payment `seat` can expect over the die after `rotation` (before bankruptcy)."""
        return sum(
            p * self.payment_at(x, y, seat)[0]
            for (x, y, _), p in self.landing_distribution(rotation)
        )

    def region_size(self, x: int, y: int) -> int:
        """Squares of the 4-connected region of the colour at (x, y); 0 when empty."""
        return int(k.region_size(self._s, y * self.rules.board_size + x))

    def placement_effect(self, placement: Placement) -> dict[str, Any]:
        """What a placement would change: what it covers and the placed colour's region.

        Returns {'covered': [(letter, number) or None, ...], 'region': squares of the new
        rug's colour region after placing, 'covered_seats': seats whose halves it covers}.
        """
        s = self._s.copy()
        s[k.PHASE_] = k.PHASE_PLACE
        if s[k.COLOUR_] < 0:
            raise ValueError("no rug is drawn yet: placements come after the draw")
        (x1, y1), (x2, y2) = placement
        covered = [self.square(x1, y1), self.square(x2, y2)]
        code = _placement_codes(self.rules.board_size)[placement]
        if k.k_apply(s, code) < 0:
            raise ValueError(f"{placement!r} is not a legal placement now")
        n = self.rules.board_size
        seats = sorted({COLOUR_LETTERS.index(c[0]) % self.rules.players for c in covered if c})
        return {
            "covered": covered,
            "covered_seats": seats,
            "region": int(k.region_size(s, y1 * n + x1)),
        }
