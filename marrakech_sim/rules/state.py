"""The Python face of the rules: immutable `GameState` values and the `Outcome` of a game."""

from __future__ import annotations

import dataclasses
import enum
import numbers
from collections import Counter
from functools import cache, lru_cache
from typing import Any

import numpy as np

from marrakech_sim.errors import IllegalActionError
from marrakech_sim.rules import core as k
from marrakech_sim.rules.notation import format_position, infer_rules, parse_position
from marrakech_sim.rules.options import COLOUR_LETTERS, FACINGS, Rules

Square = tuple[int, int]
Placement = tuple[Square, Square]
# the action of each phase, as legal_actions gives it and apply takes it
DrawAction = str  # draw: the colour letter of the rug drawn
OrientAction = int  # orient: a rotation, -1 (left), 0 or 1 (right)
RollAction = int  # roll: a die face
PlaceAction = Placement  # place: the rug's two squares
Action = DrawAction | OrientAction | RollAction | PlaceAction

PHASES = ("draw", "orient", "roll", "place", "over")
_k_step = k.k_step  # module-level bindings: the API's hot path is a few microseconds
_new = object.__new__
ROTATIONS = (-1, 0, 1)


class EndReason(enum.IntEnum):
    """Why a game ended (RULES.md section 7), by the kernel's END_* code; `label` is the
    reason as the games table's end_reason column writes it (LOG_FORMAT.md)."""

    NONE = k.END_NONE  # the game has not ended
    RUGS_EXHAUSTED = k.END_RUGS_EXHAUSTED
    ONE_LEFT = k.END_ONE_LEFT
    ERROR = 3  # the game loop ended the game on a strategy's fault (no rule does)

    @property
    def label(self) -> str:
        """'none', 'rugs_exhausted', 'one_left' or 'error'."""
        return self.name.lower()

    @classmethod
    def from_label(cls, label: str) -> EndReason:
        """The reason whose `label` is `label`."""
        return _END_OF_LABEL[label]


_END_OF_LABEL = {reason.label: reason for reason in EndReason}


@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    """The result of a finished game; tuples are indexed by seat."""

    reason: EndReason
    dirhams: tuple[int, ...]
    visible: tuple[int, ...]
    scores: tuple[int | None, ...]  # None for eliminated seats
    ranks: tuple[int, ...]
    winners: tuple[int, ...]
    win_shares: tuple[float, ...]
    tie_broken: bool


def outcome_of(s: np.ndarray) -> Outcome | None:
    """The Outcome of a packed state, or None while the game runs."""
    if s[k.PHASE_] != k.PHASE_OVER:
        return None
    p = int(s[k.P_])
    out = np.empty(4 * p + 1, np.int64)
    k.k_result(s, out)
    res = out.tolist()
    winners = tuple(i for i in range(p) if res[3 * p + i])
    share = 1 / len(winners)
    return Outcome(
        reason=end_reason_of(s),
        dirhams=tuple(s[s[k.DIRHAMS_AT] : s[k.DIRHAMS_AT] + p].tolist()),
        visible=tuple(res[:p]),
        scores=tuple(None if v < 0 else v for v in res[p : 2 * p]),
        ranks=tuple(res[2 * p : 3 * p]),
        winners=winners,
        win_shares=tuple(share if w else 0.0 for w in res[3 * p : 4 * p]),
        tie_broken=bool(res[4 * p]),
    )


@cache
def placement_codes(n: int) -> dict[Placement, int]:
    """Every pair of adjacent squares of an n x n board, both orders, to its kernel code."""
    codes = {}
    for x in range(n):
        for y in range(n):
            for d in range(4):
                x2, y2 = x + int(k.dx(d)), y + int(k.dy(d))
                if 0 <= x2 < n and 0 <= y2 < n:
                    codes[((x, y), (x2, y2))] = int(k.pack_placement(x, y, x2, y2))
    return codes


@cache
def roll_outcomes(die_faces: tuple[int, ...]) -> tuple[tuple[int, float], ...]:
    """Each distinct face of a die and its probability (RULES.md section 8, `die_faces`)."""
    counts = Counter(die_faces)
    return tuple((face, counts[face] / len(die_faces)) for face in sorted(counts))


@cache
def _candidates(n: int, assam: int) -> tuple[Placement | None, ...]:
    """The 16 candidate slots of `legal_placement_mask` as placements (None: no square)."""
    ax, ay = assam % n, assam // n
    slots: list[Placement | None] = []
    for d1 in range(4):
        x1, y1 = ax + int(k.dx(d1)), ay + int(k.dy(d1))
        for d2 in range(4):
            x2, y2 = x1 + int(k.dx(d2)), y1 + int(k.dy(d2))
            on_board = min(x1, y1, x2, y2) >= 0 and max(x1, y1, x2, y2) < n
            slots.append(((x1, y1), (x2, y2)) if on_board and (x2, y2) != (ax, ay) else None)
    return tuple(slots)


@lru_cache(maxsize=64)
def initial_packed(rules: Rules) -> np.ndarray:
    """The packed start position of a rule set, built once per rule set: copy it."""
    start = k.initial_state(rules)
    start.flags.writeable = False
    return start


# header fields a game never changes: the rule options and the sections' offsets
_FIXED = (
    k.N_, k.P_, k.C_, k.FLAGS_, k.RUGS_, k.STARTING_DIRHAMS_, k.NFACES_,
    *range(k.SEAT_LEFT_AT, k.PARTNER_AT + 1),
)  # fmt: skip


@lru_cache(maxsize=64)
def _fixed_of(rules: Rules) -> tuple[int, np.ndarray, list[int], int]:
    """The state's length, where tampering looks (the fixed fields, the die, the
    dirhams), what the fixed fields and the die hold, and the dirhams in all."""
    start = initial_packed(rules)
    faces = range(int(start[k.FACES_AT]), int(start[k.FACES_AT] + start[k.NFACES_]))
    dirhams = range(int(start[k.DIRHAMS_AT]), int(start[k.DIRHAMS_AT]) + rules.players)
    where = np.array([*_FIXED, *faces, *dirhams], np.int64)
    fixed = len(_FIXED) + len(faces)
    return len(start), where, start[where[:fixed]].tolist(), int(start[where[fixed:]].sum())


def tampering(rules: Rules, packed: np.ndarray) -> str | None:
    """What is wrong with a game's packed state that the kernels alone cannot have made.

    A cheap check (a few microseconds) for the game loop before a record is written:
    the header's rule options and offsets are those of `rules`, the die is unchanged,
    and no dirham was made or lost (RULES.md section 4: payments move dirhams between
    seats). None when nothing is wrong.
    """
    size, where, expected, total = _fixed_of(rules)
    if packed.shape != (size,):
        return f"its shape {packed.shape} is not {(size,)}"
    found = packed[where].tolist()
    fixed = found[: len(expected)]
    if fixed != expected:
        changed = [int(i) for i, a, b in zip(where, fixed, expected, strict=False) if a != b]
        return f"fields {changed} of its header or die changed"
    if sum(found[len(expected) :]) != total:
        return f"the seats hold {sum(found[len(expected) :])} dirhams in all, not {total}"
    return None


_placements_cache: dict[tuple[int, int], tuple[Placement, ...]] = {}


def placements_of(n: int, mask_key: int) -> tuple[Placement, ...]:
    """The placements of a `legal_placement_mask` result, in the kernel's candidate order."""
    key = (n, mask_key)
    found = _placements_cache.get(key)
    if found is None:
        assam, mask = key[1] >> 16, key[1] & 0xFFFF
        slots = _candidates(n, assam)
        found = tuple(slots[i] for i in range(16) if mask >> i & 1)  # type: ignore[misc]
        _placements_cache[key] = found
    return found


_ERRORS = {
    k.ERR_PHASE: "the game is over",
    k.ERR_DRAW: "not a colour of the seat to move with rugs left",
    k.ERR_ROTATION: "rotations are -1 (left), 0 or 1 (right)",
    k.ERR_ROLL: "not a value of the die",
    k.ERR_PLACEMENT_SHAPE: "a rug covers two adjacent squares, one of them next to Assam",
    k.ERR_PLACEMENT_ASSAM: "a rug may not cover Assam's square (RULES.md section 6.2)",
    k.ERR_PLACEMENT_COVER: ("it would cover both visible halves of one rug (RULES.md section 6.3)"),
}


def colour_of(packed: np.ndarray) -> str | None:
    """The letter of the rug to place this turn in a packed state, None before the draw."""
    c = int(packed[k.COLOUR_])
    return COLOUR_LETTERS[c] if c >= 0 else None


def assam_of(packed: np.ndarray) -> tuple[int, int, str]:
    """Assam's (x, y, facing) in a packed state."""
    return int(packed[k.X_]), int(packed[k.Y_]), FACINGS[packed[k.FACING_]]


# ------------------------------------------------------------ named reads of a packed state
# The packed layout (rules/core.py) stays inside rules/: Python code elsewhere reads a
# state through these functions (compiled kernels may index it directly).


def phase_of(packed: np.ndarray) -> int:
    """The phase's code: PHASES[phase_of(packed)] is its name."""
    return int(packed[k.PHASE_])


def seat_to_move(packed: np.ndarray) -> int:
    """The seat to move (after the end: RULES.md section 9's seat)."""
    return int(packed[k.SEAT_])


def turn_of(packed: np.ndarray) -> int:
    """The current turn's index (0, 1, ...)."""
    return int(packed[k.TURN_])


def is_orient_at_end(packed: np.ndarray) -> bool:
    """Whether the rotation asked for sets the next player's walk (the variant)."""
    return bool(packed[k.FLAGS_] & k.FLAG_ORIENT_AT_END)


def end_reason_of(packed: np.ndarray) -> EndReason:
    """Why the game ended; EndReason.NONE while it runs."""
    return EndReason(int(packed[k.END_]))


def dirhams_of(packed: np.ndarray, seat: int) -> int:
    """The dirhams of `seat`."""
    return int(packed[packed[k.DIRHAMS_AT] + seat])


def is_out(packed: np.ndarray, seat: int) -> bool:
    """Whether `seat` went bankrupt and is out of the game."""
    return bool(packed[packed[k.OUT_AT] + seat])


def colour_index_at(packed: np.ndarray, n: int, x: int, y: int) -> int:
    """The visible colour index (COLOUR_LETTERS[c]) at (x, y) of an n x n board; -1 empty."""
    return int(packed[packed[k.COLOUR_AT] + y * n + x])


def square_of(packed: np.ndarray, n: int, x: int, y: int) -> tuple[str, int] | None:
    """The visible rug half at (x, y) of an n x n board as (colour letter, rug number)."""
    c = colour_index_at(packed, n, x, y)
    if c < 0:
        return None
    return COLOUR_LETTERS[c], int(packed[packed[k.RUG_AT] + y * n + x])


def colour_grid(packed: np.ndarray, n: int) -> np.ndarray:
    """Visible colour index per square, a copy (n, n) indexed [y, x]; -1 empty."""
    o = packed[k.COLOUR_AT]
    return packed[o : o + n * n].reshape(n, n).copy()


def rug_grid(packed: np.ndarray, n: int) -> np.ndarray:
    """Rug number of the visible half per square, a copy (n, n) indexed [y, x]; 0 empty."""
    o = packed[k.RUG_AT]
    return packed[o : o + n * n].reshape(n, n).copy()


def landing_of(packed: np.ndarray, rotation: int, roll: int) -> tuple[int, int, str]:
    """Where Assam stops if turned by `rotation` now and walking `roll` steps."""
    s = packed
    x, y, f = k.walk(s[k.X_], s[k.Y_], (s[k.FACING_] + rotation + 4) % 4, roll, s[k.N_])
    return int(x), int(y), FACINGS[f]


def read_only(packed: np.ndarray) -> np.ndarray:
    """A view of a packed state that cannot be written through (kernels may still read it)."""
    view = packed.view()
    view.flags.writeable = False
    return view


class PositionReads:
    """What a GameState and a strategy's GameView both answer from their packed state."""

    __slots__ = ()
    _s: np.ndarray

    @property
    def colour(self) -> str | None:
        """The letter of the rug to place this turn, None before the draw."""
        return colour_of(self._s)

    @property
    def assam(self) -> tuple[int, int, str]:
        """Assam's (x, y, facing)."""
        return assam_of(self._s)


class GameState(PositionReads):
    """An immutable game position with its rules; `apply` returns a new state."""

    __slots__ = ("_mask", "_phase", "_s", "rules")

    rules: Rules
    _s: np.ndarray
    _phase: int  # the PHASE_* code, kept as a Python int for speed
    _mask: int  # legal_placement_mask in the place phase

    def __init__(self, rules: Rules, packed: np.ndarray) -> None:
        self.rules = rules
        self._s = packed
        self._phase = int(packed[k.PHASE_])
        self._mask = k.legal_placement_mask(packed) if self._phase == k.PHASE_PLACE else 0

    @classmethod
    def start(cls, rules: Rules | None = None) -> GameState:
        """The start position of a rule set (RULES.md section 2)."""
        rules = rules or Rules()
        return cls(rules, initial_packed(rules).copy())

    @classmethod
    def from_notation(cls, text: str, rules: Rules | None = None) -> GameState:
        """Parse RULES.md section 9 notation; without rules, the dimensions are inferred."""
        rules = rules or infer_rules(text)
        return cls(rules, parse_position(text, rules))

    @classmethod
    def from_packed(cls, rules: Rules, packed: np.ndarray) -> GameState:
        """Wrap a packed state (copied) from the compiled core."""
        return cls(rules, packed.copy())

    def to_notation(self) -> str:
        """RULES.md section 9 notation."""
        return format_position(self._s)

    def __repr__(self) -> str:
        return f"GameState.from_notation({self.to_notation()!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GameState):
            return NotImplemented
        return self.rules == other.rules and self.to_notation() == other.to_notation()

    def __hash__(self) -> int:
        return hash((self.rules, self.to_notation()))

    # ------------------------------------------------------------ reading

    @property
    def packed(self) -> np.ndarray:
        """A read-only view of the packed array (for the compiled core)."""
        return read_only(self._s)

    @property
    def phase(self) -> str:
        """'draw', 'orient', 'roll', 'place' or 'over'."""
        return PHASES[self._phase]

    @property
    def is_over(self) -> bool:
        return self._phase == k.PHASE_OVER

    @property
    def seat(self) -> int:
        """The seat to move (after the end: RULES.md section 9's seat)."""
        return seat_to_move(self._s)

    @property
    def dirhams(self) -> tuple[int, ...]:
        o = self._s[k.DIRHAMS_AT]
        return tuple(int(v) for v in self._s[o : o + self.rules.players])

    @property
    def rugs_left(self) -> dict[str, int]:
        """Unplaced rugs per colour letter."""
        o = self._s[k.RUGS_LEFT_AT]
        return {COLOUR_LETTERS[c]: int(self._s[o + c]) for c in range(self.rules.colours)}

    @property
    def eliminated(self) -> tuple[bool, ...]:
        o = self._s[k.OUT_AT]
        return tuple(bool(v) for v in self._s[o : o + self.rules.players])

    def square(self, x: int, y: int) -> tuple[str, int] | None:
        """The visible rug half at (x, y) as (colour letter, rug number), or None."""
        return square_of(self._s, self.rules.board_size, x, y)

    # ------------------------------------------------------------ actions

    def legal_actions(self) -> tuple[Action, ...]:
        """The choices of the current phase (see the README for each phase's form)."""
        phase = self._phase
        if phase == k.PHASE_PLACE:
            return placements_of(self.rules.board_size, self._mask)
        if phase == k.PHASE_ORIENT:
            return ROTATIONS
        if phase == k.PHASE_ROLL:
            return self.rules.distinct_faces
        if phase == k.PHASE_DRAW:
            return tuple(letter for letter, _ in self.chance_outcomes())
        return ()

    def chance_outcomes(self) -> list[tuple[Action, float]]:
        """Draw and roll phases: [(action, probability), ...]; empty in the others."""
        phase = self._phase
        if phase == k.PHASE_ROLL:
            return list(roll_outcomes(self.rules.die_faces))
        if phase == k.PHASE_DRAW:
            # RULES.md section 1: a shuffled pile = drawing uniformly among remaining rugs
            seat = int(self._s[k.SEAT_])
            o = self._s[k.RUGS_LEFT_AT]
            left = {
                COLOUR_LETTERS[c]: int(self._s[o + c])
                for c in range(seat, self.rules.colours, self.rules.players)
                if self._s[o + c] > 0
            }
            total = sum(left.values())
            return [(letter, count / total) for letter, count in left.items()]
        return []

    def action_code(self, action: object) -> int:
        """The kernel's integer code for an action of the current phase."""
        phase = self._phase
        code: int | None = None
        if phase == k.PHASE_PLACE:
            try:
                if isinstance(action, tuple):
                    code = placement_codes(self.rules.board_size).get(action)
            except TypeError:  # unhashable
                code = None
        elif phase == k.PHASE_ROLL and type(action) is int:  # the common case, fast
            code = action if action in self.rules.distinct_faces else None
        elif phase == k.PHASE_DRAW:
            if isinstance(action, str) and len(action) == 1:
                c = COLOUR_LETTERS.find(action)
                code = c if 0 <= c < self.rules.colours else None
        elif type(action) is int or (
            isinstance(action, numbers.Integral) and not isinstance(action, bool)
        ):
            allowed = ROTATIONS if phase == k.PHASE_ORIENT else self.rules.distinct_faces
            code = int(action) if action in allowed else None
        if code is None:
            raise IllegalActionError(self._illegal(action, None))
        return code

    def apply(self, action: Action) -> GameState:
        """The state after `action`; raises IllegalActionError if it is not legal."""
        code = self.action_code(action)
        s = self._s.copy()
        result = _k_step(s, code)
        if result < 0:
            raise IllegalActionError(self._illegal(action, result))
        new = _new(GameState)
        new.rules = self.rules
        new._s = s
        new._phase = result & 7
        new._mask = result >> 3
        return new

    def _illegal(self, action: Any, err: int | None) -> str:
        reason = _ERRORS.get(err, "") if err is not None else ""
        legal = self.legal_actions()
        shown = ", ".join(repr(a) for a in legal[:12]) or "none (the game is over)"
        why = f" ({reason})" if reason else ""
        return f"{action!r} is not a legal {self.phase} action{why}; legal: {shown}"

    def outcome(self) -> Outcome | None:
        """None until the game is over; then scores, ranks and winners."""
        return outcome_of(self._s)
