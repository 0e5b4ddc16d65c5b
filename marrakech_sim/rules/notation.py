"""Position notation (RULES.md section 9): packed state <-> one line of text."""

from __future__ import annotations

import re

import numpy as np

from marrakech_sim.errors import NotationError
from marrakech_sim.rules import core as k
from marrakech_sim.rules.options import COLOUR_LETTERS, FACINGS, Rules

PHASE_LETTERS = "dorpx"  # indexed by the PHASE_* codes
_TOKEN = re.compile(r"\.|([a-z])(\d+)")
_ASSAM = re.compile(r"^(?:(\d)(\d)|(\d+),(\d+))([NESW])$")
_TO_MOVE = re.compile(r"^(\d+)([dorpx])([a-z]?)$")

# the game records hold dirhams as int16 (LOG_FORMAT.md); no game comes near it
MAX_DIRHAMS = 32767


def format_position(s: np.ndarray) -> str:
    """The notation of a packed state."""
    n, p, c = int(s[k.N_]), int(s[k.P_]), int(s[k.C_])
    col, rug = s[k.COLOUR_AT], s[k.RUG_AT]
    rows = []
    for y in range(n):
        tokens = []
        for x in range(n):
            colour = int(s[col + y * n + x])
            tokens.append("." if colour < 0 else f"{COLOUR_LETTERS[colour]}{s[rug + y * n + x]}")
        rows.append("".join(tokens))
    x, y = int(s[k.X_]), int(s[k.Y_])
    assam = f"{x}{y}" if x <= 9 and y <= 9 else f"{x},{y}"
    assam += FACINGS[s[k.FACING_]]
    entries = []
    for seat in range(p):
        letters = COLOUR_LETTERS[seat : p * c : p]
        left = "+".join(str(s[s[k.RUGS_LEFT_AT] + i]) for i in range(seat, p * c, p))
        entry = f"{letters}:{s[s[k.DIRHAMS_AT] + seat]}:{left}"
        if s[s[k.OUT_AT] + seat]:
            entry += ":out"
        entries.append(entry)
    phase = int(s[k.PHASE_])
    to_move = f"{s[k.SEAT_]}{PHASE_LETTERS[phase]}"
    if _shows_colour(s, phase):
        to_move += COLOUR_LETTERS[s[k.COLOUR_]]
    return f"{'/'.join(rows)} {assam} {','.join(entries)} {to_move}"


def _shows_colour(s: np.ndarray, phase: int) -> bool:
    """Section 9: two-colour players' phases between draw and placement carry the letter."""
    if s[k.C_] == 1 or phase in (k.PHASE_DRAW, k.PHASE_OVER):
        return False
    # in "orient at end" the orientation follows the placement and carries no letter
    return not (phase == k.PHASE_ORIENT and s[k.FLAGS_] & k.FLAG_ORIENT_AT_END)


def infer_rules(text: str) -> Rules:
    """Rules with the board size, players and colours a notation implies; defaults otherwise."""
    fields = text.split(" ")
    if len(fields) != 4:
        raise NotationError(
            f"expected 4 fields separated by single spaces (board assam players to-move), "
            f"got {len(fields)} in {text!r}"
        )
    entries = fields[2].split(",")
    letters = entries[0].split(":")[0]
    try:
        return Rules(
            players=len(entries),
            colours_per_player=max(1, len(letters)),
            board_size=len(fields[0].split("/")),
        )
    except ValueError as exc:
        raise NotationError(f"cannot infer rules from {text!r}: {exc}") from exc


def parse_position(text: str, rules: Rules) -> np.ndarray:
    """The packed state of a notation, checked against `rules`."""
    fields = text.strip().split(" ")
    if len(fields) != 4:
        raise NotationError(
            f"expected 4 fields separated by single spaces (board assam players to-move), "
            f"got {len(fields)}: {text!r}"
        )
    board, assam, players, to_move = fields
    s = k.blank_state(rules)
    n, p, kk = rules.board_size, rules.players, rules.colours
    _parse_players(s, players, rules)
    _parse_board(s, board, rules)
    k.k_recount(s)  # the per-seat counters (rugs left, visible squares) the kernels keep

    m = _ASSAM.match(assam)
    if not m:
        raise NotationError(
            f"assam field {assam!r}: expected x digit, y digit and facing N/E/S/W, e.g. '33N'"
        )
    x = int(m.group(1) or m.group(3))
    y = int(m.group(2) or m.group(4))
    if not (0 <= x < n and 0 <= y < n):
        raise NotationError(f"assam field {assam!r}: square ({x}, {y}) is off the {n}x{n} board")
    s[k.X_], s[k.Y_], s[k.FACING_] = x, y, FACINGS.index(m.group(5))

    m = _TO_MOVE.match(to_move)
    if not m:
        raise NotationError(
            f"to-move field {to_move!r}: expected a seat number and a phase d/o/r/p/x, "
            f"optionally with a colour letter, e.g. '0o' or '0pr'"
        )
    seat, phase = int(m.group(1)), PHASE_LETTERS.index(m.group(2))
    letter = m.group(3)
    if seat >= p:
        raise NotationError(f"to-move field {to_move!r}: seat {seat} does not exist ({p} players)")
    s[k.SEAT_], s[k.PHASE_] = seat, phase
    out = s[k.OUT_AT]
    left = s[k.RUGS_LEFT_AT]
    in_game = [i for i in range(p) if s[out + i] == 0]
    seats_with_rugs = [i for i in in_game if k.seat_rugs_left(s, i) > 0]
    over = not seats_with_rugs or (len(in_game) <= 1 and rules.end_when_one_left)
    if phase == k.PHASE_OVER:
        if letter:
            raise NotationError(f"to-move field {to_move!r}: phase 'x' takes no colour letter")
        if not over:
            raise NotationError(
                f"to-move field {to_move!r}: the game is not over (seats "
                f"{seats_with_rugs} still have rugs)"
            )
        s[k.END_] = (
            k.END_ONE_LEFT
            if len(in_game) <= 1 and rules.end_when_one_left
            else k.END_RUGS_EXHAUSTED
        )
    else:
        if over:
            raise NotationError(
                f"to-move field {to_move!r}: the game is over, the phase must be 'x'"
            )
        if s[out + seat]:
            raise NotationError(f"to-move field {to_move!r}: seat {seat} is out of the game")
        end_orient = phase == k.PHASE_ORIENT and rules.orient_at_end
        if not end_orient and k.seat_rugs_left(s, seat) == 0:
            raise NotationError(f"to-move field {to_move!r}: seat {seat} has no rugs left")
        if phase == k.PHASE_DRAW and rules.colours_per_player == 1:
            raise NotationError(
                f"to-move field {to_move!r}: phase 'd' needs two colours per player"
            )
        takes_letter = rules.colours_per_player > 1 and not (
            phase == k.PHASE_DRAW or (phase == k.PHASE_ORIENT and rules.orient_at_end)
        )
        if not takes_letter:
            if letter:
                raise NotationError(
                    f"to-move field {to_move!r}: phase {m.group(2)!r} takes no colour letter here"
                )
            s[k.COLOUR_] = seat if rules.colours_per_player == 1 else -1
        else:
            colour = COLOUR_LETTERS.find(letter) if letter else -1
            if colour < 0 or colour >= kk or colour % p != seat:
                raise NotationError(
                    f"to-move field {to_move!r}: expected one of seat {seat}'s colour letters "
                    f"{rules.seat_letters(seat)!r} after the phase"
                )
            if s[left + colour] == 0:
                raise NotationError(
                    f"to-move field {to_move!r}: seat {seat} has no {letter!r} rugs left"
                )
            s[k.COLOUR_] = colour
    s[k.TURN_] = int(s[s[k.PLACED_AT] : s[k.PLACED_AT] + kk].sum()) + int(s[k.NOUT_])
    return s


def _parse_players(s: np.ndarray, field: str, rules: Rules) -> None:
    p, c, r = rules.players, rules.colours_per_player, rules.rugs_per_colour
    entries = field.split(",")
    if len(entries) != p:
        raise NotationError(f"players field {field!r}: expected {p} seats, got {len(entries)}")
    out_order = 0
    for seat, entry in enumerate(entries):
        parts = entry.split(":")
        expected = rules.seat_letters(seat)
        if len(parts) not in (3, 4) or (len(parts) == 4 and parts[3] != "out"):
            raise NotationError(
                f"players field, seat {seat} {entry!r}: expected "
                f"'<colours>:<dirhams>:<rugs left>' optionally followed by ':out'"
            )
        if parts[0] != expected:
            raise NotationError(
                f"players field, seat {seat} {entry!r}: seat {seat}'s colours are {expected!r}"
            )
        if not (parts[1].isascii() and parts[1].isdigit()):
            raise NotationError(
                f"players field, seat {seat} {entry!r}: dirhams {parts[1]!r} is not a "
                f"non-negative integer"
            )
        if int(parts[1]) > MAX_DIRHAMS:
            raise NotationError(
                f"players field, seat {seat} {entry!r}: dirhams {parts[1]} is more than "
                f"{MAX_DIRHAMS}, the most a seat can hold"
            )
        counts = parts[2].split("+")
        if len(counts) != c or not all(x.isascii() and x.isdigit() for x in counts):
            raise NotationError(
                f"players field, seat {seat} {entry!r}: rugs left must be {c} count(s) "
                f"joined by '+'"
            )
        for i, count in enumerate(counts):
            if int(count) > r:
                raise NotationError(
                    f"players field, seat {seat} {entry!r}: {count} rugs left of colour "
                    f"{expected[i]!r}, more than the {r} the rules give"
                )
            s[s[k.RUGS_LEFT_AT] + seat + i * p] = int(count)
        s[s[k.DIRHAMS_AT] + seat] = int(parts[1])
        if len(parts) == 4:
            if int(parts[1]) != 0 or any(int(x) for x in counts):
                raise NotationError(
                    f"players field, seat {seat} {entry!r}: an eliminated seat has 0 dirhams "
                    f"and 0 rugs left"
                )
            out_order += 1
            s[s[k.OUT_AT] + seat] = out_order  # the order of eliminations is not recorded
    s[k.NOUT_] = out_order
    # rugs placed so far; an eliminated seat's count is raised by the board below
    for colour in range(rules.colours):
        if not s[s[k.OUT_AT] + colour % p]:
            s[s[k.PLACED_AT] + colour] = r - s[s[k.RUGS_LEFT_AT] + colour]


def _parse_board(s: np.ndarray, field: str, rules: Rules) -> None:
    n, p = rules.board_size, rules.players
    rows = field.split("/")
    if len(rows) != n:
        raise NotationError(f"board field: expected {n} rows separated by '/', got {len(rows)}")
    col, rug = s[k.COLOUR_AT], s[k.RUG_AT]
    seen: dict[tuple[int, int], list[int]] = {}
    for y, row in enumerate(rows):
        x = 0
        pos = 0
        while pos < len(row):
            m = _TOKEN.match(row, pos)
            if not m:
                raise NotationError(
                    f"board row {y} {row!r}: bad square token at {row[pos:]!r} "
                    f"(expected '.' or a colour letter and a rug number, e.g. 'r1')"
                )
            pos = m.end()
            if x >= n:
                raise NotationError(f"board row {y} {row!r}: more than {n} squares")
            if m.group(1):
                colour = COLOUR_LETTERS.find(m.group(1))
                number = int(m.group(2))
                if colour < 0 or colour >= rules.colours:
                    raise NotationError(
                        f"board row {y} {row!r}: colour {m.group(1)!r} is not in this game "
                        f"({COLOUR_LETTERS[: rules.colours]!r})"
                    )
                if not 1 <= number <= rules.rugs_per_colour:
                    raise NotationError(
                        f"board row {y} {row!r}: rug number {number}; allowed are 1 to "
                        f"{rules.rugs_per_colour} (rugs_per_colour)"
                    )
                sq = y * n + x
                s[col + sq] = colour
                s[rug + sq] = number
                seen.setdefault((colour, number), []).append(sq)
            x += 1
        if x != n:
            raise NotationError(f"board row {y} {row!r}: expected {n} squares, got {x}")
    for (colour, number), squares in seen.items():
        token = f"{COLOUR_LETTERS[colour]}{number}"
        if len(squares) > 2:
            raise NotationError(
                f"board: rug {token} shows on {len(squares)} squares; a rug covers two"
            )
        if len(squares) == 2:
            a, b = squares
            if abs(a % n - b % n) + abs(a // n - b // n) != 1:
                raise NotationError(f"board: the two halves of rug {token} are not adjacent")
        placed = s[k.PLACED_AT] + colour
        if s[s[k.OUT_AT] + colour % p]:
            s[placed] = max(s[placed], number)
        elif number > s[placed]:
            raise NotationError(
                f"board: rug {token} is shown, but only {s[placed]} {COLOUR_LETTERS[colour]!r} "
                f"rugs have been placed ({s[s[k.RUGS_LEFT_AT] + colour]} of "
                f"{rules.rugs_per_colour} left)"
            )
