"""Game records: one game as text (tags, then every action, one turn to a line).

    [Event "default"]
    [Game "17"]
    [Rules "{}"]
    [Seats "greedy | random | random | random"]
    [Result "0 52-31-40-28"]
    [Final "<RULES.md section 9 notation>"]

    1. S 2 4,1-5,1
    2. L 3 0,2-0,3

docs/game-record.md is the format as this module implements it. A record is built from a
game played through the API (`record_from_game`), from a run folder's Parquet tables
(`records_from_run`), or parsed from text (`parse_records`); `replay` plays it back from
the start position, checking every action, the turn grouping, `Final` and `Result`, and
gives the position before and after every turn with what happened in it (`TurnInfo`).
`notable_games` finds the games of a run worth showing to people.

Errors are `RecordError`, naming the line and the token when the record came from text.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from marrakech_sim.errors import MarrakechError, RecordError
from marrakech_sim.files import read_text
from marrakech_sim.play import turns as loop
from marrakech_sim.play.game import GameRecord
from marrakech_sim.rules import COLOUR_LETTERS, GameState, Placement, Rules
from marrakech_sim.rules import Action as GameAction

TAG_ORDER = ("Event", "Game", "Date", "Rules", "Seats", "Seed", "Start", "Result", "Final")
REQUIRED_TAGS = ("Event", "Game", "Rules", "Seats", "Result", "Final")
ROTATION_TOKENS = {-1: "L", 0: "S", 1: "R"}
_ROTATION_OF = {v: k for k, v in ROTATION_TOKENS.items()}
_TAG = re.compile(r'^\[([A-Za-z][A-Za-z0-9_]*)\s+"((?:[^"\\]|\\.)*)"\]\s*$')
_TURN = re.compile(r"^([0-9]{1,9})\.$")  # ASCII digits, bounded: no 5,000-digit int()
_PLACEMENT = re.compile(r"^([0-9]{1,9}),([0-9]{1,9})-([0-9]{1,9}),([0-9]{1,9})$")
_COMMENT = re.compile(r"\{[^}]*\}")


# ---------------------------------------------------------------- the record


@dataclasses.dataclass(frozen=True, slots=True)
class Record:
    """One game record. `turns` holds each turn's actions in the API's forms."""

    rules: Rules
    seats: tuple[str, ...]
    turns: tuple[tuple[Action, ...], ...]
    result: str
    final: str
    event: str = "?"
    game: str = "?"
    date: str | None = None
    seed: int | None = None
    start: str | None = None
    extra: tuple[tuple[str, str], ...] = ()  # unknown tags, kept in order
    # where it was read from (empty when built in memory): the record's first line, and
    # each turn's line and action tokens as written
    line: int = 0
    tag_lines: tuple[tuple[str, int], ...] = ()
    turn_lines: tuple[int, ...] = ()
    turn_tokens: tuple[tuple[str, ...], ...] = ()

    def tags(self) -> list[tuple[str, str]]:
        """The tag lines' (name, value) pairs, in the order of docs/game-record.md."""
        values = {
            "Event": self.event,
            "Game": self.game,
            "Date": self.date,
            "Rules": rules_tag(self.rules),
            "Seats": " | ".join(self.seats),
            "Seed": None if self.seed is None else str(self.seed),
            "Start": self.start,
            "Result": self.result,
            "Final": self.final,
        }
        tags = [(name, value) for name, value in values.items() if value is not None]
        return tags + list(self.extra)

    def to_text(self) -> str:
        """The record as text (ends with a newline)."""
        lines = [f'[{name} "{_escape(value)}"]' for name, value in self.tags()]
        lines.append("")
        for i, actions in enumerate(self.turns):
            lines.append(" ".join([f"{i + 1}.", *(_token(a) for a in actions)]))
        return "\n".join(lines) + "\n"


def rules_tag(rules: Rules) -> str:
    """The `Rules` tag: the options that differ from the defaults for the player count."""
    diff = rules.differences(Rules(players=rules.players))
    if rules.players != 4:
        diff = {"players": rules.players, **diff}
    return json.dumps(diff, separators=(", ", ": "))


def action_token(action: object) -> str:
    """An action as a record token (`y`, `L`/`S`/`R`, `3`, `3,4-3,5`)."""
    if isinstance(action, str):
        return action
    if isinstance(action, tuple):
        (x1, y1), (x2, y2) = action
        return f"{x1},{y1}-{x2},{y2}"
    raise TypeError(f"not an action: {action!r}")  # rotations and rolls are tagged below


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # C0 but tab and newline, DEL, C1


def printable(text: str) -> str:
    """`text` without control characters: what a record says never moves a terminal's cursor."""
    return _CONTROL.sub("", text)


def _shown(token: str, most: int = 40) -> str:
    """A token as an error message quotes it: printable, cut to `most` characters."""
    token = printable(token)
    return token if len(token) <= most else token[: most - 3] + "..."


def format_records(records: Iterable[Record]) -> str:
    """Several records as one text, separated by blank lines."""
    return "\n".join(r.to_text() for r in records)


# ---------------------------------------------------------------- turns as actions


@dataclasses.dataclass(frozen=True, slots=True)
class Rotation:
    """A rotation action in a turn's list (so that 0 and a roll of 0 never mix)."""

    value: int


@dataclasses.dataclass(frozen=True, slots=True)
class Roll:
    """A die roll in a turn's list."""

    value: int


# an action in a record's turn: the rules' action, with rotations and rolls tagged
Action = str | Rotation | Roll | Placement


def _token(action: Action) -> str:
    if isinstance(action, Rotation):
        return ROTATION_TOKENS[action.value]
    if isinstance(action, Roll):
        return str(action.value)
    return action_token(action)


def _api_action(action: Action) -> GameAction:
    """The form GameState.apply takes."""
    if isinstance(action, (Rotation, Roll)):
        return action.value
    return action


def turn_actions(row: Sequence[int], rules: Rules) -> tuple[Action, ...]:
    """A LOG_FORMAT.md move row (M_* column order, loop.NULL for null) as the turn's actions."""
    out: list[Action] = []
    if rules.colours_per_player > 1:
        out.append(COLOUR_LETTERS[row[loop.M_COLOUR]])
    if not rules.orient_at_end:
        out.append(Rotation(int(row[loop.M_ROTATION])))
    out.append(Roll(int(row[loop.M_ROLL])))
    # a bankrupt turn places nothing (its placement is null; a moves table of only the
    # replay columns has no bankrupt column: NULL here)
    if row[loop.M_BANKRUPT] != 1 and row[loop.M_X1] != loop.NULL:
        first = (int(row[loop.M_X1]), int(row[loop.M_Y1]))
        out.append((first, (int(row[loop.M_X2]), int(row[loop.M_Y2]))))
    if rules.orient_at_end and row[loop.M_END_ROTATION] != loop.NULL:
        out.append(Rotation(int(row[loop.M_END_ROTATION])))
    return tuple(out)


# ---------------------------------------------------------------- replay


@dataclasses.dataclass(frozen=True, slots=True)
class TurnInfo:
    """What happened in one turn (turn counts from 1, as in the record)."""

    turn: int
    seat: int
    colour: str
    rotation: int | None  # chosen at the start of the turn (standard order)
    roll: int | None
    assam: tuple[int, int, str]  # where Assam stopped
    payment: int
    paid_to: int | None
    bankrupt: bool
    placement: Placement | None
    end_rotation: int | None  # "orient at end": chosen after placing

    def describe(
        self, names: Sequence[str] | None = None, call: Callable[[int], str] = "seat {}".format
    ) -> str:
        """One line in words: `seat 1 (greedy): right, rolls 3, pays 4 to seat 0, places ...`.

        `call` names a seat: the default says "seat 0"; pictures pass `show.words.player`.
        """
        who = call(self.seat) + (f" ({names[self.seat]})" if names else "")
        words = {-1: "turns Assam left", 0: "keeps Assam facing ahead", 1: "turns Assam right"}
        parts = []
        if self.rotation is not None:
            parts.append(words[self.rotation])
        if self.roll is not None:
            x, y, f = self.assam
            parts.append(f"rolls {self.roll} (Assam to {x},{y} facing {f})")
        if self.payment and self.paid_to is not None:
            parts.append(f"pays {self.payment} to {call(self.paid_to)}")
        if self.bankrupt:
            parts.append("is bankrupt and out of the game")
        if self.placement is not None:
            (x1, y1), (x2, y2) = self.placement
            parts.append(f"places {self.colour} on {x1},{y1}-{x2},{y2}")
        if self.end_rotation is not None:
            parts.append(words[self.end_rotation].replace("Assam", "Assam for the next player"))
        return f"{self.turn}. {who}: " + ", ".join(parts)


@dataclasses.dataclass(frozen=True, slots=True)
class Replay:
    """A replayed record: positions[i] is the position before turn i + 1 (the last: Final)."""

    record: Record
    positions: tuple[GameState, ...]
    turns: tuple[TurnInfo, ...]

    @property
    def final(self) -> GameState:
        return self.positions[-1]


def _where(record: Record, turn: int, token: int | None = None) -> str:
    """'line 12, token "3,4-3,5"' when read from text, else 'turn 5, action 2'."""
    if record.turn_lines:
        line = record.turn_lines[turn]
        if token is None:
            return f"line {line}"
        tokens = record.turn_tokens[turn]
        shown = tokens[token] if token < len(tokens) else "(end of line)"
        return f'line {line}, token "{shown}"'
    return f"turn {turn + 1}" + (f", action {token + 1}" if token is not None else "")


def _starts_turn(state: GameState) -> bool:
    """Whether `state` is the first phase of a turn (or the end)."""
    if state.is_over:
        return True
    if state.rules.colours_per_player > 1:
        return state.phase == "draw"
    return state.phase == ("roll" if state.rules.orient_at_end else "orient")


def replay(record: Record, *, check: bool = True) -> Replay:
    """Play a record from its start; RecordError on an illegal action or a wrong Final/Result.

    check=False skips Final and Result and lets the last turn be unfinished (a game in
    progress); so does an unfinished game's Result "*" (a game ended by a fault, whose
    Final is the position inside its last turn).
    """
    try:
        state = (
            GameState.from_notation(record.start, record.rules)
            if record.start
            else GameState.start(record.rules)
        )
    except MarrakechError as exc:
        raise RecordError(f"record at line {record.line}: bad Start: {exc}") from exc
    positions = [state]
    infos = []
    for i, actions in enumerate(record.turns):
        seat = state.seat
        before = state.dirhams
        out_before = state.eliminated
        info: dict[str, Any] = {"rotation": None, "roll": None, "placement": None}
        info["end_rotation"] = None
        info["assam"] = state.assam
        if not actions:
            raise RecordError(f"{_where(record, i)}: a turn with no actions")
        for j, action in enumerate(actions):
            if j and _starts_turn(state):
                raise RecordError(
                    f"{_where(record, i, j)}: turn {i + 1} is already over (seat {seat}'s "
                    "turn ended); one turn to a line"
                )
            phase = state.phase
            kind = _kind(action)
            if kind != phase:
                allowed = state.legal_actions()
                raise RecordError(
                    f"{_where(record, i, j)}: a {kind} action where the game is in the "
                    f"{phase} phase; legal here: {_legal_tokens(allowed, phase)}"
                )
            try:
                state = state.apply(_api_action(action))
            except MarrakechError as exc:
                raise RecordError(f"{_where(record, i, j)}: illegal action: {exc}") from exc
            if phase == "orient":
                assert isinstance(action, Rotation)  # _kind(action) is the phase
                key = "end_rotation" if record.rules.orient_at_end else "rotation"
                info[key] = action.value
            elif phase == "roll":
                assert isinstance(action, Roll)
                info["roll"] = action.value
                info["assam"] = state.assam
                info["after_roll"] = state.dirhams
            elif phase == "place":
                info["placement"] = action
        # a game that did not finish (Result "*": a strategy's fault, a game left off)
        # may end inside its last turn, as the run's moves of a faulted game do
        last_may_be_open = not check or record.result == "*"
        if not _starts_turn(state) and (not last_may_be_open or i < len(record.turns) - 1):
            raise RecordError(
                f"{_where(record, i, len(actions))}: turn {i + 1} is unfinished (the game is "
                f"in seat {state.seat}'s {state.phase} phase); one whole turn to a line"
            )
        paid = before[seat] - info.get("after_roll", before)[seat]
        after = info.get("after_roll", before)
        paid_to = next((s for s in range(len(before)) if after[s] > before[s]), None)
        colour = positions[-1].colour if record.rules.colours_per_player > 1 else None
        if colour is None:
            colour = _drawn(record, actions, seat)
        infos.append(
            TurnInfo(
                turn=i + 1,
                seat=seat,
                colour=colour,
                rotation=info["rotation"],
                roll=info["roll"],
                assam=info["assam"],
                payment=paid,
                paid_to=paid_to if paid else None,
                bankrupt=state.eliminated[seat] and not out_before[seat],
                placement=info["placement"],
                end_rotation=info["end_rotation"],
            )
        )
        positions.append(state)
    done = Replay(record, tuple(positions), tuple(infos))
    if check:
        _check_end(done)
    return done


def _drawn(record: Record, actions: tuple[Action, ...], seat: int) -> str:
    for a in actions:
        if isinstance(a, str):
            return a
    return record.rules.seat_letters(seat)[0]


def _kind(action: Action) -> str:
    if isinstance(action, Rotation):
        return "orient"
    if isinstance(action, Roll):
        return "roll"
    if isinstance(action, str):
        return "draw"
    return "place"


def _legal_tokens(allowed: tuple[Any, ...], phase: str) -> str:
    if phase == "orient":
        return "L, S, R"
    if phase == "over":
        return "none (the game is over)"
    return ", ".join(action_token(a) if not isinstance(a, int) else str(a) for a in allowed)


def _check_end(done: Replay) -> None:
    record, final = done.record, done.final
    lines = dict(record.tag_lines)

    def where(tag: str, value: str) -> str:
        return f'line {lines[tag]}, token "{value}": ' if tag in lines else ""

    if record.final and final.to_notation() != record.final:
        raise RecordError(
            f"{where('Final', record.final)}the actions lead to {final.to_notation()!r}, the "
            f"Final tag says {record.final!r}"
        )
    expected = result_of(final)
    if record.result != expected:
        raise RecordError(
            f"{where('Result', record.result)}Result {record.result!r} does not agree with the "
            f"final position: {expected!r}"
        )


def result_of(state: GameState) -> str:
    """The `Result` tag of a position: winners and scores, or `*` while the game runs."""
    outcome = state.outcome()
    if outcome is None:
        return "*"
    winners = ",".join(str(w) for w in outcome.winners)
    scores = "-".join("x" if s is None else str(s) for s in outcome.scores)
    return f"{winners} {scores}"


# ---------------------------------------------------------------- parsing


def parse_records(text: str) -> list[Record]:
    """Every record of a text (records separated by blank lines); RecordError names the line.

    A byte-order mark at the start is dropped; control characters in tag values are
    dropped (they never reach a terminal through `replay` or `import`).
    """
    lines = text.removeprefix("\ufeff").splitlines()
    records = []
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        record, i = _parse_one(lines, i)
        records.append(record)
    return records


def _parse_one(lines: list[str], i: int) -> tuple[Record, int]:
    first = i + 1
    tags: list[tuple[str, str, int]] = []
    while i < len(lines) and lines[i].strip():
        m = _TAG.match(lines[i].strip())
        if not m:
            token = lines[i].strip().split()[0]
            raise RecordError(
                f'line {i + 1}, token "{_shown(token)}": expected a tag line [Name "value"] '
                "(the tags come first, then a blank line, then the actions)"
            )
        tags.append((m.group(1), printable(_unescape(m.group(2))), i + 1))
        i += 1
    values = {name: (value, line) for name, value, line in tags}
    for name in REQUIRED_TAGS:
        if name not in values:
            raise RecordError(f"record at line {first}: the required tag {name} is missing")
    i += 1  # the blank line
    turn_lines: list[int] = []
    turn_tokens: list[tuple[str, ...]] = []
    end = i
    while end < len(lines) and lines[end].strip():
        end += 1
    # comments (between actions only) may span lines: blank them, keeping line numbers
    body = _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), "\n".join(lines[i:end]))
    if "{" in body or "}" in body:
        line = i + body[: max(body.find("{"), body.find("}"))].count("\n") + 1
        raise RecordError(f'line {line}, token "{{": a comment that is never closed')
    body_lines = body.split("\n") if end > i else []
    for offset, text_line in enumerate(body_lines):
        i = end - len(body_lines) + offset
        tokens = text_line.split()
        if not tokens:
            continue
        first_at = len(text_line) - len(text_line.lstrip())
        if turn_lines and "}" in lines[i][:first_at]:  # the rest of a comment's line
            turn_tokens[-1] += tuple(tokens)
            continue
        m = _TURN.match(tokens[0])
        if not m or int(m.group(1)) != len(turn_lines) + 1:
            raise RecordError(
                f'line {i + 1}, token "{_shown(tokens[0])}": expected the turn number '
                f"{len(turn_lines) + 1}. (one turn to a line)"
            )
        turn_lines.append(i + 1)
        turn_tokens.append(tuple(tokens[1:]))
    i = end
    rules_text, rules_line = values["Rules"]
    try:
        rules = Rules.from_dict(json.loads(rules_text))
    except (json.JSONDecodeError, TypeError, AttributeError, RecursionError) as exc:
        raise RecordError(
            f'line {rules_line}, token "{_shown(rules_text)}": Rules is not a JSON object of '
            f"rule options: {_shown(str(exc), 120)}"
        ) from exc
    except MarrakechError as exc:
        raise RecordError(f'line {rules_line}, token "{_shown(rules_text)}": {exc}') from exc
    seats_text, seats_line = values["Seats"]
    seats = tuple(s.strip() for s in seats_text.split("|"))
    if len(seats) != rules.players:
        raise RecordError(
            f"line {seats_line}: Seats names {len(seats)} players, the rules have {rules.players}"
        )
    seed = None
    if "Seed" in values:
        seed_text, seed_line = values["Seed"]
        if not (seed_text.isascii() and seed_text.isdigit() and len(seed_text) <= 20):
            raise RecordError(
                f'line {seed_line}, token "{_shown(seed_text)}": Seed is not a number'
            )
        seed = int(seed_text)
        if seed >= 2**64:
            raise RecordError(f"line {seed_line}: Seed {seed} is not below 2**64")
    turns = [
        tuple(_action_of(t, line) for t in tokens)
        for line, tokens in zip(turn_lines, turn_tokens, strict=True)
    ]
    known = set(TAG_ORDER)
    record = Record(
        rules=rules,
        seats=seats,
        turns=tuple(turns),
        result=values["Result"][0],
        final=values["Final"][0],
        event=values["Event"][0],
        game=values["Game"][0],
        date=values.get("Date", (None, 0))[0],
        seed=seed,
        start=values.get("Start", (None, 0))[0],
        extra=tuple((n, v) for n, v, _ in tags if n not in known),
        line=first,
        turn_lines=tuple(turn_lines),
        tag_lines=tuple((name, line) for name, _, line in tags),
        turn_tokens=tuple(turn_tokens),
    )
    return record, i


def _action_of(token: str, line: int) -> Action:
    if token in _ROTATION_OF:
        return Rotation(_ROTATION_OF[token])
    if token.isascii() and token.isdigit() and len(token) <= 9:
        return Roll(int(token))
    if len(token) == 1 and token in COLOUR_LETTERS:
        return token
    m = _PLACEMENT.match(token)
    if m:
        x1, y1, x2, y2 = (int(v) for v in m.groups())
        return ((x1, y1), (x2, y2))
    raise RecordError(
        f'line {line}, token "{_shown(token)}": not an action; expected a colour letter (draw), '
        "L, S or R (rotation), a die value (roll) or x1,y1-x2,y2 (placement)"
    )


def read_record_file(path: str | Path) -> list[Record]:
    """The records of a file (UTF-8, at most `files.TEXT_LIMIT` bytes; RecordError else)."""
    return parse_records(read_text(path, "game record file", RecordError))


def read_records(text: str) -> list[Replay]:
    """Parse and replay every record of a text (RecordError at the first bad one)."""
    return [replay(r) for r in parse_records(text)]


# ---------------------------------------------------------------- building records


def record_from_actions(
    rules: Rules,
    seats: Sequence[str],
    turns: Sequence[Sequence[Action]],
    **tags: Any,
) -> Record:
    """A record of turns of actions (Rotation/Roll wrapped), with Result and Final replayed."""
    draft = Record(rules, tuple(seats), tuple(tuple(t) for t in turns), "*", "", **tags)
    final = replay(draft, check=False).final
    return dataclasses.replace(draft, result=result_of(final), final=final.to_notation())


def record_from_rows(rules: Rules, seats: Sequence[str], rows: np.ndarray, **tags: Any) -> Record:
    """The record of a game's move rows (LOG_FORMAT.md, a game's turns in order), its Result
    and Final from the one replay loop (`play.turns.replay_moves`).

    Rows the loop does not replay to the letter (an illegal or missing action, rows after
    the end) go through `replay`, which names the action at fault in a RecordError.
    """
    turns = [turn_actions(row, rules) for row in rows.tolist()]
    packed, replayed = loop.replay_rows(rules, rows)
    if replayed is None or not _as_recorded(rules, rows, replayed):
        return record_from_actions(rules, seats, turns, **tags)
    final = GameState.from_packed(rules, packed)
    return Record(rules, tuple(seats), tuple(turns), result_of(final), final.to_notation(), **tags)


def _as_recorded(rules: Rules, rows: np.ndarray, replayed: np.ndarray) -> bool:
    """Whether the replay applied each row's actions as `turn_actions` reads them: the
    same action cells, and none of the cells it always reads is null."""
    if len(rows) == 0:
        return True
    replayed = replayed[: len(rows)]
    columns = list(_ACTION_CELLS)
    if not np.array_equal(rows[:, columns], replayed[:, columns]):
        return False
    # bankrupt is an outcome: compared where the table has it
    stored = rows[:, loop.M_BANKRUPT] != loop.NULL
    if not np.array_equal(rows[stored, loop.M_BANKRUPT], replayed[stored, loop.M_BANKRUPT]):
        return False
    always = [loop.M_ROLL]
    if rules.colours_per_player > 1:
        always.append(loop.M_COLOUR)
    if not rules.orient_at_end:
        always.append(loop.M_ROTATION)
    return not (rows[:, always] == loop.NULL).any()


#: the move cells that hold a turn's actions (what `turn_actions` reads)
_ACTION_CELLS = (
    loop.M_COLOUR,
    loop.M_ROTATION,
    loop.M_ROLL,
    loop.M_X1,
    loop.M_Y1,
    loop.M_X2,
    loop.M_Y2,
    loop.M_END_ROTATION,
)


def record_from_game(
    game: GameRecord,
    rules: Rules,
    seats: Sequence[str],
    *,
    event: str = "?",
    game_id: str | int = "?",
    date: str | None = None,
    seed: int | None = None,
) -> Record:
    """The record of a game played through the API (`play_game`'s GameRecord).

    A game that ended in a strategy's fault keeps its complete turns and reads `*`.
    """
    rows = game.moves[game.moves[:, loop.M_ROLL] != loop.NULL]
    return record_from_rows(
        rules, seats, rows, event=event, game=str(game_id), date=date, seed=seed
    )


def records_from_run(
    run_dir: str | Path,
    game_ids: Sequence[int] | None = None,
    where: str | None = None,
) -> Iterator[Record]:
    """Records of a run folder's games (all, the given ids, or those matching `where`).

    where: a DuckDB SQL condition over the games table's columns, e.g.
    `turns > 60 AND tie_broken` or `'one_left' = end_reason`.

    A record needs the game's moves: a game the run kept none of (its study's
    `keep_moves` below 1) is left out when choosing by `where` or taking all, and refused
    (RecordError naming it) when asked for by id.
    """
    import pyarrow.dataset as ds

    from marrakech_sim import runfolder

    manifest = runfolder.read_manifest(run_dir)
    config = manifest.config
    rulesets = runfolder.run_rulesets(manifest)
    event = str(config.get("name") or "?")
    date = manifest.created[:10] or None
    ids = list(game_ids) if game_ids is not None else None
    if where is not None:
        matched = games_where(run_dir, where)
        ids = matched if ids is None else [g for g in ids if g in set(matched)]
    games_ds = runfolder.open_dataset(run_dir, "games")
    flt = ds.field("game_id").isin(ids) if ids is not None else None
    games = games_ds.to_table(columns=["game_id", "ruleset", "seed", "turns"], filter=flt)
    games = games.sort_by("game_id").to_pylist()
    if ids is not None:
        found = {g["game_id"] for g in games}
        missing = [g for g in ids if g not in found]
        if missing:
            raise RecordError(f"run {str(run_dir)!r} has no game {missing[0]}")
    seats_ds = runfolder.open_dataset(run_dir, "seats")
    moves_ds = runfolder.open_dataset(run_dir, "moves")
    # (a table of only the replay columns has no bankrupt column)
    stored = [c for c in _ACTION_COLUMNS if c in moves_ds.schema.names]
    step = 4096  # games read at a time: memory stays flat on a large run
    for at in range(0, len(games), step):
        batch = games[at : at + step]
        batch_ids = [g["game_id"] for g in batch]
        flt = ds.field("game_id").isin(batch_ids)
        seats = seats_ds.to_table(columns=["game_id", "seat", "strategy"], filter=flt)
        moves = moves_ds.to_table(columns=["game_id", "turn", *stored], filter=flt)
        names: dict[int, list[tuple[int, str]]] = {}
        for row in seats.to_pylist():
            names.setdefault(row["game_id"], []).append((row["seat"], row["strategy"]))
        moves = moves.sort_by([("game_id", "ascending"), ("turn", "ascending")])
        rows = runfolder.move_rows(moves, 0, loop.MOVE_COLUMNS)
        assert rows is not None  # no list columns read
        row_game = moves.column("game_id").to_numpy()
        for g in batch:
            rules = rulesets.get(g["ruleset"])
            if rules is None:
                raise RecordError(f"game {g['game_id']}: unknown rule set {g['ruleset']!r}")
            at = np.searchsorted(row_game, g["game_id"], side="left")
            to = np.searchsorted(row_game, g["game_id"], side="right")
            if g["turns"] and at == to:  # played, its moves not kept
                if game_ids is None:
                    continue
                raise RecordError(
                    f"run {str(run_dir)!r} kept no moves of game {g['game_id']} (its study's "
                    f"keep_moves is {config.get('keep_moves', 1)}), and a record needs them: "
                    "choose a game whose moves were kept"
                )
            yield record_from_rows(
                rules,
                [name for _, name in sorted(names.get(g["game_id"], []))],
                rows[at:to],
                event=event,
                game=str(g["game_id"]),
                date=date,
                seed=int(g["seed"]),
            )


#: the moves columns turn_actions reads
_ACTION_COLUMNS = ("colour", "rotation", "roll", "bankrupt", "x1", "y1", "x2", "y2", "end_rotation")


def games_where(run_dir: str | Path, where: str) -> list[int]:
    """Game ids of a run whose games row matches a DuckDB SQL condition.

    The condition is one expression over the games table's columns and nothing else: the
    table is handed to DuckDB as an Arrow dataset on a connection with file access off
    (no COPY, read_text or read_parquet), the text must parse as one SELECT, and the
    expression must be true or false (BOOLEAN) for each game.
    """
    import duckdb

    from marrakech_sim import runfolder

    columns = (
        "game_id, match_id, ruleset, seed, players, turns, end_reason, winners, "
        "tie_broken, error, block"
    )
    hint = f"the condition is one SQL expression over the games table's columns ({columns})"
    shown = _shown(where, 80)
    if "--" in where or "/*" in where:  # a comment could close the parenthesis below
        raise RecordError(f"--where {shown!r}: comments (-- or /*) are not allowed; {hint}")
    query = f"SELECT game_id FROM games WHERE ({where}) ORDER BY game_id"
    con = duckdb.connect(config={"enable_external_access": False})
    try:
        try:
            statements = duckdb.extract_statements(query)
        except duckdb.Error as exc:
            raise RecordError(f"--where {shown!r}: not SQL ({_first_line(exc)}); {hint}") from exc
        if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
            raise RecordError(f"--where {shown!r}: one condition, not statements; {hint}")
        con.register("games", runfolder.open_dataset(run_dir, "games"))
        kind = con.execute(f"DESCRIBE SELECT ({where}) AS c FROM games").fetchall()[0][1]
        if kind != "BOOLEAN":
            raise RecordError(
                f"--where {shown!r} is {kind}, not true or false for each game; {hint}"
            )
        rows = con.execute(query).fetchall()
    except duckdb.Error as exc:
        raise RecordError(f"--where {shown!r}: {_first_line(exc)}; {hint}") from exc
    finally:
        con.close()
    return [int(r[0]) for r in rows]


def _first_line(exc: Exception) -> str:
    """DuckDB's message without the query it quotes on the lines after the first."""
    return _shown(str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc), 160)


# ---------------------------------------------------------------- notable games


@dataclasses.dataclass(frozen=True, slots=True)
class NotableGame:
    """A game worth showing: why, which game, and its decisive turn (counting from 1)."""

    kind: str  # comeback, largest_payment, bankruptcy, tie_break, longest, shortest
    game_id: int
    turn: int
    detail: str


NOTABLE_BATCH_GAMES = 1 << 16  # games whose moves one batch of notable_games reads
NOTABLE_KINDS = ("comeback", "largest_payment", "bankruptcy", "tie_break", "longest", "shortest")


def notable_games(run_dir: str | Path) -> list[NotableGame]:
    """The largest comeback, largest single payment, a bankruptcy, a tie-break decision,
    and the longest and shortest game of a run (each absent when the run has none); in a
    run whose study keeps the moves of a sample of its games (`keep_moves` below 1), of
    the games whose moves were kept.

    The comeback is the largest score deficit (dirhams + visible squares, from the moves'
    dirhams_after and visible_after) that a sole winner made up; its decisive turn is the
    one after which the winner was never behind again.

    The run is read in batches of about ``NOTABLE_BATCH_GAMES`` games (the games and moves
    parts of one name hold the same games: the runner writes a chunk that way), and each
    kind keeps the best game of the batches under its own order, so memory holds one
    batch's moves however many games the run has. A run whose parts do not pair is one
    batch.
    """
    import duckdb

    from marrakech_sim import runfolder

    for table in ("games", "moves"):
        if next(runfolder.iter_parts(run_dir, table), None) is None:
            raise RecordError(
                f"run {str(run_dir)!r} has no {table} parts: notable games are found in "
                "the games and moves tables"
            )
    # a run that keeps the moves of a sample of its games (keep_moves < 1): the notable
    # games are those of the sample, since a record (and a picture) needs the moves
    manifest = runfolder.read_manifest(run_dir)
    sampled = not runfolder.every_move(manifest)
    rulesets = runfolder.run_rulesets(manifest) if runfolder.replay_only(manifest) else None
    best: dict[str, tuple[tuple[Any, ...], NotableGame]] = {}
    with duckdb.connect() as con:
        for games, moves in _notable_batches(con, Path(run_dir)):
            if rulesets is not None:  # the run stores the actions: the batch's outcomes replayed
                actions = con.sql(f"SELECT * FROM {moves}").arrow().read_all()
                those = con.sql(f"SELECT game_id, ruleset FROM {games}").arrow().read_all()
                con.register("notable_moves", runfolder.with_outcomes(actions, those, rulesets))
                moves = "notable_moves"
            if sampled:
                games = f"(SELECT * FROM {games} WHERE game_id IN (SELECT game_id FROM {moves}))"
            for key, game in _batch_notables(con, games, moves):
                if game.kind not in best or key < best[game.kind][0]:
                    best[game.kind] = (key, game)
    return [best[kind][1] for kind in NOTABLE_KINDS if kind in best]


def _notable_batches(con: Any, base: Path) -> list[tuple[str, str]]:
    """``read_parquet`` expressions of the games and the moves of each batch of parts."""
    games = {p.name: p for p in sorted((base / "games").glob("*.parquet"))}
    moves = {p.name: p for p in sorted((base / "moves").glob("*.parquet"))}

    def scan(paths: Iterable[Path]) -> str:
        return "read_parquet([" + ", ".join(f"'{_quote(p)}'" for p in paths) + "])"

    whole = [(scan(games.values()), scan(moves.values()))]
    if games.keys() != moves.keys():
        return whole
    import pyarrow.parquet as pq

    batches: list[list[str]] = [[]]
    rows = 0
    for name, path in games.items():
        n = pq.read_metadata(path).num_rows
        if batches[-1] and rows + n > NOTABLE_BATCH_GAMES:
            batches.append([])
            rows = 0
        batches[-1].append(name)
        rows += n
    out = [(scan(games[n] for n in b), scan(moves[n] for n in b)) for b in batches if b]
    for g, m in out:  # a move of a game another batch holds: the parts do not pair
        if con.sql(f"SELECT count(*) FROM {m} ANTI JOIN {g} USING (game_id)").fetchall()[0][0]:
            return whole
    return out


def _quote(path: Path) -> str:
    return str(path).replace("'", "''")


def _batch_notables(con: Any, games: str, moves: str) -> list[tuple[tuple[Any, ...], NotableGame]]:
    """Each kind's best game of one batch, with the key that orders it (least is best)."""
    ok = "end_reason <> 'error'"
    out: list[tuple[tuple[Any, ...], NotableGame]] = []

    def one(sql: str) -> tuple[Any, ...] | None:
        rows = con.sql(sql).fetchall()
        return rows[0] if rows else None

    row = one(
        f"SELECT m.game_id, m.turn, m.payment, m.seat, m.paid_to FROM {moves} m JOIN {games} g "
        f"USING (game_id) WHERE {ok} ORDER BY m.payment DESC, m.game_id, m.turn LIMIT 1"
    )
    if row and row[2] is not None and row[2] > 0:
        # players counted from 1, as the report and the game records name them
        detail = f"player {row[3] + 1} paid {row[2]} dirhams to player {row[4] + 1}"
        found = NotableGame("largest_payment", row[0], row[1] + 1, detail)
        out.append(((-row[2], row[0], row[1]), found))
    row = one(
        f"SELECT game_id, turn, seat FROM {moves} WHERE bankrupt ORDER BY game_id, turn LIMIT 1"
    )
    if row:
        detail = f"player {row[2] + 1} went bankrupt"
        found = NotableGame("bankruptcy", row[0], row[1] + 1, detail)
        out.append(((row[0], row[1]), found))
    row = one(
        f"SELECT game_id, turns, winners FROM {games} WHERE tie_broken AND {ok} "
        "ORDER BY game_id LIMIT 1"
    )
    if row:
        winners = " and ".join(f"player {w + 1}" for w in row[2])
        detail = f"the tie-break gave {winners} the win"
        out.append(((row[0],), NotableGame("tie_break", row[0], row[1], detail)))
    for kind, order, sign in (("longest", "DESC", -1), ("shortest", "ASC", 1)):
        row = one(
            f"SELECT game_id, turns, end_reason FROM {games} WHERE {ok} "
            f"ORDER BY turns {order}, game_id LIMIT 1"
        )
        if row:
            # ORDER BY puts a null number of turns last, in either order
            key = (row[1] is None, sign * (row[1] or 0), row[0])
            out.append((key, NotableGame(kind, row[0], row[1], f"{row[1]} turns ({row[2]})")))
    comeback = _comeback(con, games, moves, ok)
    if comeback:
        out.append(comeback)
    return out


def _comeback(
    con: Any, games: str, moves: str, ok: str
) -> tuple[tuple[Any, ...], NotableGame] | None:
    """The batch's largest comeback, with its key (the larger deficit first, then game id).

    DuckDB reads and joins the rows; the per-seat arithmetic is numpy's over the flattened
    lists (DuckDB's list lambdas over every move took twice the CPU).
    """
    import pyarrow.compute as pc

    names = con.sql(f"SELECT * FROM {moves} LIMIT 0").columns
    visible = ", m.visible_after AS v" if "visible_after" in names else ""
    rows = (
        con.sql(
            f"SELECT m.game_id, m.turn, g.winners[1] AS w, m.dirhams_after AS d{visible} "
            f"FROM {moves} m JOIN {games} g USING (game_id) WHERE {ok} AND len(g.winners) = 1"
        )
        .arrow()
        .read_all()
    )
    if rows.num_rows == 0:
        return None
    dirhams = rows.column("d").combine_chunks()
    score = pc.list_flatten(dirhams).to_numpy().astype(np.int32)  # each seat's, row by row
    if visible:
        score += pc.list_flatten(rows.column("v").combine_chunks()).to_numpy()
    seats = pc.list_value_length(dirhams).to_numpy()
    starts = np.zeros(len(seats), dtype=np.int64)  # where each row's seats begin
    np.cumsum(seats[:-1], out=starts[1:])
    at = starts + rows.column("w").to_numpy().astype(np.int64)  # the winner's entry
    own = score[at]
    score[at] = np.iinfo(np.int32).min
    deficit = np.maximum.reduceat(score, starts) - own  # best other seat minus the winner
    game = rows.column("game_id").to_numpy()
    worst = int(deficit.max())
    if worst <= 0:
        return None
    worst_game = int(game[deficit == worst].min())
    behind = (game == worst_game) & (deficit > 0)
    decisive = int(rows.column("turn").to_numpy()[behind].max()) + 1  # never behind after it
    detail = f"the winner was {worst} points behind and won"
    return (-worst, worst_game), NotableGame("comeback", worst_game, decisive + 1, detail)


__all__ = [
    "NotableGame",
    "Record",
    "RecordError",
    "Replay",
    "Roll",
    "Rotation",
    "TurnInfo",
    "format_records",
    "games_where",
    "notable_games",
    "parse_records",
    "read_records",
    "record_from_actions",
    "record_from_game",
    "records_from_run",
    "replay",
    "result_of",
    "rules_tag",
    "turn_actions",
]
