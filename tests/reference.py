"""Reference implementation of the Marrakech rules (RULES.md sections 1-10), for tests only.

Written from the rules (docs/rules.md; RULES.md in the comments) alone, without reading
``marrakech_sim``, so that the engine can be checked against an independent reading of the
rules. It is slow and plain on purpose: a dict board, one small method per rule, and
comments citing the section of RULES.md each piece transcribes. Its API mirrors the
engine's public one (``Rules``/``GameState``/``perft`` aliases at the bottom) so the
hand-checked rule tables can run against both.

Readings taken where RULES.md leaves room (also listed in the test report):

- ``rugs left`` counts the rugs not yet placed: a drawn rug (2-colour player) still counts
  until it is placed (§1, §9).
- An eliminated two-colour seat is written ``ry:0:0+0:out`` (one count per colour, §9).
- The over-phase seat after a "rugs exhausted" end is the next seat clockwise after the
  last mover (searched from the seat after it, wrapping round to the mover itself) that is
  still in the game (§9).
- Ranks use the tie-break value as well as the score (§7, "ranked by (score, tie-break
  value)"). Seats already out in a parsed position are taken to have been eliminated in
  seat order, before any elimination that happens afterwards in play.
- With ``players=3`` and two colours each the default ``rugs_per_colour`` is 15 (the §8
  table gives 15 for 3p without distinguishing).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from fractions import Fraction

COLOUR_LETTERS = "rbypgocwkmntv"  # §1, in seat order
FACINGS = "NESW"  # clockwise, so turning right is +1 and left is -1 (§3)
STEP = {"N": (0, -1), "E": (1, 0), "S": (0, 1), "W": (-1, 0)}  # §1
ROTATIONS = (-1, 0, 1)  # left, none, right; never 180 degrees (§3)
PHASE_NAMES = {"d": "draw", "o": "orient", "r": "roll", "p": "place", "x": "over"}

Square = tuple[int, int]
Placement = tuple[Square, Square]


class RefError(Exception):
    """Base error of the reference."""


class NotationError(RefError, ValueError):
    """A position string does not follow RULES.md §9."""


class IllegalActionError(RefError, ValueError):
    """An action that is not in legal_actions()."""


class ConfigError(RefError, ValueError):
    """Rule options outside what RULES.md §8 allows."""


class EndReason(enum.Enum):
    """Why the game ended (§7)."""

    RUGS_EXHAUSTED = "rugs_exhausted"
    ONE_LEFT = "one_left"

    @property
    def label(self) -> str:
        """The reason as the games table writes it (as the package's EndReason.label)."""
        return self.value


@dataclass(frozen=True)
class Outcome:
    """Result of a finished game (§7)."""

    reason: EndReason
    dirhams: tuple[int, ...]
    visible: tuple[int, ...]
    scores: tuple[int | None, ...]
    ranks: tuple[int, ...]
    winners: tuple[int, ...]
    win_shares: tuple[float, ...]
    tie_broken: bool


@dataclass(frozen=True)
class RefRules:
    """The rule options of RULES.md §8; None means the player-count dependent default."""

    players: int = 4
    rugs_per_colour: int | None = None
    colours_per_player: int | None = None
    starting_dirhams: int = 30
    seat_dirhams: tuple[int, ...] | None = None  # §8: one starting purse per seat
    die_faces: tuple[int, ...] = (1, 2, 2, 3, 3, 4)
    initial_facing: str = "N"
    orient_at_end: bool = False
    own_rugs_fully_coverable: bool = False
    tie_break: str = "dirhams"
    end_when_one_left: bool = True
    board_size: int = 7

    def __post_init__(self) -> None:
        # §8: colours_per_player defaults to 2 with 2 players, else 1.
        if self.colours_per_player is None:
            object.__setattr__(self, "colours_per_player", 2 if self.players == 2 else 1)
        # §8: rugs_per_colour 12 (4p), 15 (3p), 12 (2p two colours), 15 (2p one colour), 12 (5p+).
        if self.rugs_per_colour is None:
            if self.players == 2:
                rugs = 12 if self.colours_per_player == 2 else 15
            elif self.players == 3:
                rugs = 15
            else:
                rugs = 12
            object.__setattr__(self, "rugs_per_colour", rugs)
        object.__setattr__(self, "die_faces", tuple(self.die_faces))
        if self.players < 2 or self.players * self.colours_per_player > len(COLOUR_LETTERS):
            raise ConfigError(f"players={self.players} x colours={self.colours_per_player}")
        if self.colours_per_player < 1 or self.rugs_per_colour < 1:
            raise ConfigError("colours_per_player and rugs_per_colour must be positive")
        if self.starting_dirhams < 0:
            raise ConfigError(f"starting_dirhams={self.starting_dirhams}")
        if self.seat_dirhams is not None:
            # §8: its length must equal players, each purse from 0
            object.__setattr__(self, "seat_dirhams", tuple(self.seat_dirhams))
            if len(self.seat_dirhams) != self.players or min(self.seat_dirhams) < 0:
                raise ConfigError(f"seat_dirhams={self.seat_dirhams}")
        if not self.die_faces or any(f < 1 for f in self.die_faces):
            raise ConfigError(f"die_faces={self.die_faces}")
        if self.initial_facing not in FACINGS:
            raise ConfigError(f"initial_facing={self.initial_facing!r}")
        if self.tie_break not in ("dirhams", "visible"):
            raise ConfigError(f"tie_break={self.tie_break!r}")
        if self.board_size < 5 or self.board_size % 2 == 0:
            raise ConfigError(f"board_size={self.board_size}")

    def colours_of(self, seat: int) -> str:
        """§1: seat s owns the letters at indices s, s+P, s+2P, ..."""
        return "".join(
            COLOUR_LETTERS[seat + k * self.players] for k in range(self.colours_per_player)
        )

    @property
    def colours(self) -> str:
        """All colour letters in the game, in letter order."""
        return COLOUR_LETTERS[: self.players * self.colours_per_player]

    def owner_of(self, colour: str) -> int:
        """The seat owning a colour letter (§1)."""
        return COLOUR_LETTERS.index(colour) % self.players


# ---------------------------------------------------------------------------
# §4 and §8: walking and the edge arcs
# ---------------------------------------------------------------------------


def _pairs(n: int, shifted: bool) -> list[tuple[int, int]]:
    """The U-arc pairs along one edge: {0,1},{2,3},... or, shifted, {1,2},{3,4},... (§8)."""
    start = 1 if shifted else 0
    return [(i, i + 1) for i in range(start, n - 1, 2)]


def _partner(i: int, pairs: list[tuple[int, int]]) -> int:
    for a, b in pairs:
        if i == a:
            return b
        if i == b:
            return a
    raise AssertionError(f"{i} is not in a U-arc pair {pairs}")


def edge_arc(x: int, y: int, facing: str, n: int) -> tuple[int, int, str]:
    """Square and facing after a step off the board from (x, y) (§4 table, §8 for size n)."""
    last = n - 1
    if facing == "N":
        # Top edge: columns {0,1},{2,3},... re-enter facing S; (last,0) N -> (last,0) W.
        assert y == 0
        if x == last:
            return last, 0, "W"
        return _partner(x, _pairs(n, shifted=False)), 0, "S"
    if facing == "S":
        # Bottom edge: (0,last) S -> (0,last) E; columns {1,2},{3,4},... re-enter facing N.
        assert y == last
        if x == 0:
            return 0, last, "E"
        return _partner(x, _pairs(n, shifted=True)), last, "N"
    if facing == "W":
        # Left edge: rows {0,1},{2,3},... re-enter facing E; (0,last) W -> (0,last) N.
        assert x == 0
        if y == last:
            return 0, last, "N"
        return 0, _partner(y, _pairs(n, shifted=False)), "E"
    # Right edge: (last,0) E -> (last,0) S; rows {1,2},{3,4},... re-enter facing W.
    assert facing == "E" and x == last
    if y == 0:
        return last, 0, "S"
    return last, _partner(y, _pairs(n, shifted=True)), "W"


def walk(x: int, y: int, facing: str, steps: int, n: int) -> tuple[int, int, str]:
    """Walk `steps` squares straight ahead; a step off the board follows the arc (§4)."""
    for _ in range(steps):
        dx, dy = STEP[facing]
        if 0 <= x + dx < n and 0 <= y + dy < n:
            x, y = x + dx, y + dy
        else:
            # The whole step, arc included, counts as one step (§4).
            x, y, facing = edge_arc(x, y, facing, n)
    return x, y, facing


def neighbours(square: Square, n: int) -> list[Square]:
    """Squares sharing an edge with `square`, on the board (diagonals never count, §5/§6)."""
    x, y = square
    out = []
    for dx, dy in STEP.values():
        if 0 <= x + dx < n and 0 <= y + dy < n:
            out.append((x + dx, y + dy))
    return out


# ---------------------------------------------------------------------------
# The state
# ---------------------------------------------------------------------------


class RefState:
    """A Marrakech position: board, Assam, seats and whose phase it is (§9 fields)."""

    def __init__(self, rules: RefRules) -> None:
        n = rules.board_size
        self.rules = rules
        self.board: dict[Square, tuple[str, int]] = {}  # visible (colour, rug number) per square
        self.assam: Square = (n // 2, n // 2)  # §2: the centre square
        self.facing: str = rules.initial_facing
        # §8: seat_dirhams overrides starting_dirhams, seat by seat
        if rules.seat_dirhams is not None:
            self.dirhams: list[int] = list(rules.seat_dirhams)
        else:
            self.dirhams = [rules.starting_dirhams] * rules.players
        self.rugs_left: dict[str, int] = {c: rules.rugs_per_colour for c in rules.colours}
        self.out: list[bool] = [False] * rules.players
        self.eliminated: list[int] = []  # seats in the order they went bankrupt
        self.seat: int = 0  # §2: seat 0 starts
        self.phase_letter: str = self._first_phase()
        self.drawn: str | None = None  # the drawn colour of a two-colour player (§1)

    # --- construction -----------------------------------------------------

    @classmethod
    def start(cls, rules: RefRules) -> RefState:
        """The set-up of §2."""
        return cls(rules)

    def copy(self) -> RefState:
        new = RefState.__new__(RefState)
        new.rules = self.rules
        new.board = dict(self.board)
        new.assam = self.assam
        new.facing = self.facing
        new.dirhams = list(self.dirhams)
        new.rugs_left = dict(self.rugs_left)
        new.out = list(self.out)
        new.eliminated = list(self.eliminated)
        new.seat = self.seat
        new.phase_letter = self.phase_letter
        new.drawn = self.drawn
        return new

    # --- small queries ----------------------------------------------------

    @property
    def phase(self) -> str:
        return PHASE_NAMES[self.phase_letter]

    def _first_phase(self) -> str:
        """§3/§9: a turn starts with the draw for a two-colour player, else orient (or roll
        in the variant "orient at end")."""
        if self.rules.colours_per_player > 1:
            return "d"
        return "r" if self.rules.orient_at_end else "o"

    def seat_rugs_left(self, seat: int) -> int:
        return sum(self.rugs_left[c] for c in self.rules.colours_of(seat))

    def rug_colour(self) -> str:
        """The colour of the rug the player to move will place."""
        if self.rules.colours_per_player == 1:
            return self.rules.colours_of(self.seat)
        assert self.drawn is not None
        return self.drawn

    def in_game(self) -> list[int]:
        return [s for s in range(self.rules.players) if not self.out[s]]

    def end_reason(self) -> EndReason | None:
        """§7: which end condition holds now, if any ("one left" wins when both do)."""
        in_game = self.in_game()
        if self.rules.end_when_one_left and len(in_game) <= 1:
            return EndReason.ONE_LEFT
        if all(self.seat_rugs_left(s) == 0 for s in in_game):
            return EndReason.RUGS_EXHAUSTED
        return None

    def region(self, square: Square) -> set[Square]:
        """§5: the 4-connected region of the colour showing on `square` (visible halves)."""
        colour = self.board[square][0]
        seen = {square}
        todo = [square]
        while todo:
            sq = todo.pop()
            for nb in neighbours(sq, self.rules.board_size):
                if nb not in seen and nb in self.board and self.board[nb][0] == colour:
                    seen.add(nb)
                    todo.append(nb)
        return seen

    def visible(self, seat: int) -> int:
        """Visible squares of the seat's own colour(s) (§7)."""
        mine = self.rules.colours_of(seat)
        return sum(1 for colour, _ in self.board.values() if colour in mine)

    # --- legal actions ----------------------------------------------------

    def legal_placements(self) -> list[Placement]:
        """§6: the legal placements, the square next to Assam first."""
        n = self.rules.board_size
        mine = self.rules.colours_of(self.seat)
        result = []
        for a in neighbours(self.assam, n):  # §6.1: one square shares an edge with Assam
            for b in neighbours(a, n):
                if b == self.assam:  # §6.2: neither square is Assam's
                    continue
                # (b is never next to Assam too: two neighbours of one square are not adjacent,
                # so each unordered placement is produced exactly once.)
                ta, tb = self.board.get(a), self.board.get(b)
                if ta is not None and ta == tb:
                    # §6.3: both visible halves of one single rug would be covered.
                    own = ta[0] in mine
                    if not (own and self.rules.own_rugs_fully_coverable):
                        continue
                result.append((a, b))
        return result

    def legal_actions(self) -> list:
        p = self.phase_letter
        if p == "d":
            # §1: draw among the colours the player still has rugs of.
            return [c for c in self.rules.colours_of(self.seat) if self.rugs_left[c] > 0]
        if p == "o":
            return list(ROTATIONS)
        if p == "r":
            return sorted(set(self.rules.die_faces))  # §10: one branch per distinct face
        if p == "p":
            return self.legal_placements()
        return []

    def chance_outcomes(self) -> list[tuple[object, Fraction]]:
        """Draw: proportional to rugs left per colour (§1); roll: face frequencies (§1/§8)."""
        if self.phase_letter == "d":
            colours = self.legal_actions()
            total = sum(self.rugs_left[c] for c in colours)
            return [(c, Fraction(self.rugs_left[c], total)) for c in colours]
        if self.phase_letter == "r":
            faces = self.rules.die_faces
            return [(v, Fraction(faces.count(v), len(faces))) for v in sorted(set(faces))]
        raise IllegalActionError(f"no chance outcomes in phase {self.phase!r}")

    # --- applying actions -------------------------------------------------

    def apply(self, action) -> RefState:
        """A new state after `action`; self is unchanged."""
        if self.phase_letter == "p":
            a, b = action
            action = (tuple(a), tuple(b))
            legal = self.legal_placements()
            if action not in legal and (action[1], action[0]) in legal:
                action = (action[1], action[0])  # §6: the placement is unordered
        if action not in self.legal_actions():
            raise IllegalActionError(f"{action!r} is not legal in phase {self.phase}")
        new = self.copy()
        getattr(new, "_do_" + new.phase_letter)(action)
        return new

    def _do_d(self, colour: str) -> None:
        self.drawn = colour  # the rug still counts as "left" until placed
        self.phase_letter = "r" if self.rules.orient_at_end else "o"

    def _do_o(self, rotation: int) -> None:
        self.facing = FACINGS[(FACINGS.index(self.facing) + rotation) % 4]
        if self.rules.orient_at_end:
            # Variant: the orientation is the last act of the turn, for the next player.
            self._next_turn(self.seat)
        else:
            self.phase_letter = "r"

    def _do_r(self, steps: int) -> None:
        x, y = self.assam
        x, y, self.facing = walk(x, y, self.facing, steps, self.rules.board_size)
        self.assam = (x, y)
        if self._pay():
            # §5 bankruptcy: no rug this turn, and (variant) no end orientation.
            self._next_turn(self.seat)
        else:
            self.phase_letter = "p"

    def _pay(self) -> bool:
        """§5: pay the owner of the colour under Assam; True when the payer went bankrupt."""
        token = self.board.get(self.assam)
        if token is None:
            return False  # empty square
        owner = self.rules.owner_of(token[0])
        if owner == self.seat or self.out[owner]:
            return False  # own colour, or an eliminated player's rug
        amount = len(self.region(self.assam))
        if self.dirhams[self.seat] < amount:
            # Bankruptcy: pay all, leave the game, unplaced rugs removed.
            self.dirhams[owner] += self.dirhams[self.seat]
            self.dirhams[self.seat] = 0
            self.out[self.seat] = True
            self.eliminated.append(self.seat)
            for c in self.rules.colours_of(self.seat):
                self.rugs_left[c] = 0
            self.drawn = None
            return True
        self.dirhams[self.seat] -= amount  # paying exactly all (ending on 0) is allowed
        self.dirhams[owner] += amount
        return False

    def _do_p(self, placement: Placement) -> None:
        colour = self.rug_colour()
        # §9: a colour's rugs are numbered 1, 2, ... in the order they were placed.
        number = self.rules.rugs_per_colour - self.rugs_left[colour] + 1
        for sq in placement:
            self.board[sq] = (colour, number)
        self.rugs_left[colour] -= 1
        self.drawn = None
        if self.rules.orient_at_end and self.end_reason() is None:
            self.phase_letter = "o"  # variant: orient for the next player
        else:
            # Standard order, or the last rug of the game: no orientation after it (§3).
            self._next_turn(self.seat)

    def _next_turn(self, last_mover: int) -> None:
        """End of a turn: the game ends (§7) or the next player starts (§2)."""
        players = self.rules.players
        self.drawn = None
        order = [(last_mover + k) % players for k in range(1, players + 1)]  # ends on the mover
        reason = self.end_reason()
        if reason is not None:
            self.phase_letter = "x"
            # §9: the survivor, or the next seat clockwise after the last mover still in game.
            self.seat = next(s for s in order if not self.out[s])
            return
        # §2: the next seat clockwise still in the game and with rugs left.
        self.seat = next(s for s in order if not self.out[s] and self.seat_rugs_left(s) > 0)
        self.phase_letter = self._first_phase()

    # --- end of game ------------------------------------------------------

    def outcome(self) -> Outcome | None:
        """§7 scoring, ranks, winners and tie-break; None until the game is over."""
        if self.phase_letter != "x":
            return None
        reason = self.end_reason()
        assert reason is not None
        players = self.rules.players
        visible = tuple(self.visible(s) for s in range(players))
        scores = tuple(
            None if self.out[s] else self.dirhams[s] + visible[s] for s in range(players)
        )
        tie_value = self.dirhams if self.rules.tie_break == "dirhams" else visible
        in_game = self.in_game()
        key = {s: (scores[s], tie_value[s]) for s in in_game}
        ranks = [0] * players
        for s in in_game:
            # Competition ranking: 1 + the number of seats strictly ahead.
            ranks[s] = 1 + sum(1 for t in in_game if key[t] > key[s])
        # Eliminated seats rank below, later eliminations above earlier ones.
        for i, s in enumerate(reversed(self.eliminated)):
            ranks[s] = len(in_game) + 1 + i
        winners = tuple(s for s in in_game if ranks[s] == 1)
        shares = tuple(1.0 / len(winners) if s in winners else 0.0 for s in range(players))
        top = max(scores[s] for s in in_game)
        n_top = sum(1 for s in in_game if scores[s] == top)
        return Outcome(
            reason=reason,
            dirhams=tuple(self.dirhams),
            visible=visible,
            scores=scores,
            ranks=tuple(ranks),
            winners=winners,
            win_shares=shares,
            tie_broken=n_top >= 2 and len(winners) < n_top,
        )

    # --- §9 notation ------------------------------------------------------

    def to_notation(self) -> str:
        r = self.rules
        n = r.board_size
        rows = []
        for y in range(n):
            row = ""
            for x in range(n):
                token = self.board.get((x, y))
                row += "." if token is None else f"{token[0]}{token[1]}"
            rows.append(row)
        x, y = self.assam
        assam = f"{x}{y}{self.facing}" if x <= 9 and y <= 9 else f"{x},{y}{self.facing}"
        entries = []
        for s in range(r.players):
            colours = r.colours_of(s)
            left = "+".join(str(self.rugs_left[c]) for c in colours)
            entry = f"{colours}:{self.dirhams[s]}:{left}"
            entries.append(entry + ":out" if self.out[s] else entry)
        to_move = f"{self.seat}{self.phase_letter}"
        if self.drawn is not None and self.phase_letter in "orp":
            to_move += self.drawn
        return " ".join(["/".join(rows), assam, ",".join(entries), to_move])

    format = to_notation

    @classmethod
    def from_notation(cls, text: str, rules: RefRules) -> RefState:
        """Parse a §9 position; NotationError names the bad field."""
        state = cls(rules)
        n = rules.board_size
        fields = text.split(" ")
        if len(fields) != 4:
            raise NotationError(f"expected 4 fields separated by single spaces, got {text!r}")
        board_f, assam_f, players_f, move_f = fields

        # board
        rows = board_f.split("/")
        if len(rows) != n:
            raise NotationError(f"board: expected {n} rows, got {len(rows)}")
        board: dict[Square, tuple[str, int]] = {}
        for y, row in enumerate(rows):
            if not re.fullmatch(r"(?:\.|[a-z][1-9][0-9]*)*", row):
                raise NotationError(f"board: bad square token in row {y}: {row!r}")
            tokens = re.findall(r"\.|[a-z][0-9]+", row)
            if len(tokens) != n:
                raise NotationError(f"board: row {y} has {len(tokens)} squares, expected {n}")
            for x, tok in enumerate(tokens):
                if tok == ".":
                    continue
                colour, number = tok[0], int(tok[1:])
                if colour not in rules.colours or number > rules.rugs_per_colour:
                    raise NotationError(f"board: bad square token {tok!r} at ({x},{y})")
                board[(x, y)] = (colour, number)
        squares_of: dict[tuple[str, int], list[Square]] = {}
        for sq, tok in board.items():
            squares_of.setdefault(tok, []).append(sq)
        for tok, sqs in squares_of.items():
            name = f"{tok[0]}{tok[1]}"
            if len(sqs) > 2:
                raise NotationError(f"board: rug {name} is on {len(sqs)} squares (at most 2)")
            if len(sqs) == 2 and sqs[1] not in neighbours(sqs[0], n):
                raise NotationError(f"board: the two halves of rug {name} are not adjacent")
        state.board = board

        # assam
        m = re.fullmatch(r"([0-9])([0-9])([NESW])", assam_f) or re.fullmatch(
            r"([0-9]+),([0-9]+)([NESW])", assam_f
        )
        if not m:
            raise NotationError(f"assam: bad field {assam_f!r}")
        ax, ay = int(m.group(1)), int(m.group(2))
        if not (0 <= ax < n and 0 <= ay < n):
            raise NotationError(f"assam: ({ax},{ay}) is off the {n}x{n} board")
        state.assam, state.facing = (ax, ay), m.group(3)

        # players
        entries = players_f.split(",")
        if len(entries) != rules.players:
            raise NotationError(f"players: {len(entries)} seats, expected {rules.players}")
        for s, entry in enumerate(entries):
            m = re.fullmatch(r"([a-z]+):([0-9]+):([0-9]+(?:\+[0-9]+)*)(:out)?", entry)
            if not m:
                raise NotationError(f"players: bad entry {entry!r} for seat {s}")
            colours = rules.colours_of(s)
            if m.group(1) != colours:
                raise NotationError(
                    f"players: seat {s} has colours {colours!r}, not {m.group(1)!r}"
                )
            counts = [int(c) for c in m.group(3).split("+")]
            if len(counts) != len(colours):
                raise NotationError(f"players: seat {s} needs {len(colours)} rug counts")
            for c, k in zip(colours, counts, strict=True):
                if k > rules.rugs_per_colour:
                    raise NotationError(
                        f"players: {k} {c} rugs left, the rules give {rules.rugs_per_colour}"
                    )
                state.rugs_left[c] = k
            state.dirhams[s] = int(m.group(2))
            state.out[s] = m.group(4) is not None
            if state.out[s] and (state.dirhams[s] != 0 or any(counts)):
                raise NotationError(f"players: eliminated seat {s} must have 0 dirhams and rugs")
        state.eliminated = [s for s in range(rules.players) if state.out[s]]
        # Rug numbers count placements (§9): none above the number placed so far.
        for colour, number in squares_of:
            owner = rules.owner_of(colour)
            placed = rules.rugs_per_colour - state.rugs_left[colour]
            if not state.out[owner] and number > placed:
                raise NotationError(
                    f"board: rug {colour}{number} but only {placed} {colour} rugs placed"
                )

        # to-move
        m = re.fullmatch(r"([0-9]+)([dorpx])([a-z]?)", move_f)
        if not m:
            raise NotationError(f"to-move: bad field {move_f!r}")
        seat, phase, letter = int(m.group(1)), m.group(2), m.group(3)
        if seat >= rules.players:
            raise NotationError(f"to-move: seat {seat} does not exist")
        if state.out[seat]:
            raise NotationError(f"to-move: seat {seat} is out of the game")
        two_colour = rules.colours_per_player > 1
        needs_letter = two_colour and (phase in "rp" or (phase == "o" and not rules.orient_at_end))
        if phase == "d" and not two_colour:
            raise NotationError(f"to-move: phase 'd' needs a two-colour player: {move_f!r}")
        if needs_letter:
            if letter not in rules.colours_of(seat) or not letter:
                raise NotationError(f"to-move: phase {phase!r} needs seat {seat}'s drawn colour")
            if state.rugs_left[letter] == 0:
                raise NotationError(f"to-move: no {letter} rug left to have drawn")
            state.drawn = letter
        elif letter:
            raise NotationError(f"to-move: phase {phase!r} carries no colour letter")
        state.seat, state.phase_letter = seat, phase
        over = state.end_reason() is not None
        if phase == "x" and not over:
            raise NotationError("to-move: phase 'x' but the game is not over")
        if phase != "x" and over:
            raise NotationError(f"to-move: the game is over, phase must be 'x', not {phase!r}")
        variant_orient = phase == "o" and rules.orient_at_end
        if phase != "x" and not variant_orient and state.seat_rugs_left(seat) == 0:
            raise NotationError(f"to-move: seat {seat} has no rugs left")
        return state

    parse = from_notation

    def __repr__(self) -> str:
        return f"RefState({self.to_notation()!r})"


def ref_perft(state: RefState, depth: int) -> int:
    """§10: leaves `depth` phases below `state`; a finished game is a leaf."""
    if depth == 0 or state.phase_letter == "x":
        return 1
    return sum(ref_perft(state.apply(a), depth - 1) for a in state.legal_actions())


# Names matching the engine's public API, so tests can run against either.
Rules = RefRules
GameState = RefState
perft = ref_perft
MarrakechError = RefError
