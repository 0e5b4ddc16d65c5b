"""`play_games`: games of one rule set, each in the compiled loop or the Python game loop.

    roster = Roster.of([StrategySpec.of("greedy"), StrategySpec.of("random")])
    ruleset = Ruleset.of(Rules(players=2))
    seatings = np.array([[0, 1], [1, 0]])          # per game, the roster index of each seat
    games = play_games(roster, ruleset, seatings, np.array([7, 8], np.uint64))
    games.games[:, 0], games.seats, games.rows     # turns; seat summaries; move rows by column

A game whose every seat has a compiled twin plays in the compiled whole-game loop
(`loop.play_batch`), the others one by one through `play.game.play_game`, which asks
each strategy object; a game is the same whichever loop plays it. What comes back is in
the core's own arrays (the end reason as `rules.EndReason`'s code), the move rows by
column for the Parquet encoder; turning them into tables and files is the caller's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from marrakech_sim import runfolder
from marrakech_sim.arena.loop import move_columns_buffer, play_batch
from marrakech_sim.arena.twins import MAX_PARAMETERS, SEARCHING, compiled_twin, encode_params
from marrakech_sim.play import turns as t
from marrakech_sim.play.game import GameRecord, PassThrough, decision_watchdog, play_game
from marrakech_sim.play.strategy import StrategySpec
from marrakech_sim.rules import core as k
from marrakech_sim.rules.options import Rules
from marrakech_sim.rules.state import EndReason
from marrakech_sim.runfolder.columns import columns_into

# games per call of the compiled loop: its moves buffer (about 0.6 MB for 4 players) stays
# in the core's cache until its rows are copied into the chunk's columns. Played straight
# into a chunk's columns (9.8 MB), a random game took 5.1 us, not 4.7
BATCH_GAMES = 256


@dataclasses.dataclass(frozen=True, eq=False)
class Roster:
    """The strategies games may seat, by index: their specs, names and compiled twins
    (picklable; the strategy objects of the Python loop are built per game from the specs)."""

    specs: tuple[StrategySpec, ...]
    names: tuple[str, ...]
    codes: np.ndarray  # per strategy, its twin's code (-1: it has none)
    params: np.ndarray  # per strategy, its twin's parameter vector (MAX_PARAMETERS)

    @classmethod
    def of(cls, specs: Sequence[StrategySpec], names: Sequence[str] | None = None) -> Roster:
        """The roster of `specs` (names: how errors name them; default their labels)."""
        codes = np.full(len(specs), -1, np.int64)
        params = np.zeros((len(specs), MAX_PARAMETERS))
        for i, spec in enumerate(specs):
            strategy_class = spec.load_class()
            twin = compiled_twin(strategy_class)
            if twin is not None:
                codes[i] = twin.code
                values = {**getattr(strategy_class, "PARAMETERS", {}), **dict(spec.params)}
                params[i] = encode_params(twin.name, values)
        labels = tuple(names) if names is not None else tuple(spec.label for spec in specs)
        return cls(tuple(specs), labels, codes, params)

    def compiled(self, seatings: np.ndarray) -> np.ndarray:
        """Per game (a row of roster indices), whether every seat has a compiled twin."""
        return np.asarray((self.codes[seatings] >= 0).all(axis=-1))

    def searching(self, seatings: np.ndarray) -> np.ndarray:
        """Per game, whether a seat's twin searches (twins.SEARCHING: the expert's family)."""
        return np.asarray(np.isin(self.codes[seatings], list(SEARCHING)).any(axis=-1))

    def with_budget_at_most(self, budget: int) -> Roster:
        """This roster with the searching twins' budget (their first parameter) at most
        `budget` (the kernels are the same at any budget: a value, not a type)."""
        capped = self.params.copy()
        rows = np.isin(self.codes, list(SEARCHING))
        capped[rows, 0] = np.minimum(capped[rows, 0], budget)
        return dataclasses.replace(self, params=capped)


@dataclasses.dataclass(frozen=True, eq=False)
class Ruleset:
    """A rule set as the game loops need it: its packed start state and move rows' shape."""

    rules: Rules
    init: np.ndarray  # the packed start state (rules.core.initial_state)
    max_turns: int  # move rows a game may take
    columns: int  # columns of a move row (play.turns.new_moves)
    name: str = ""  # the study's name for it (keys a Buffers' arrays)

    @classmethod
    def of(cls, rules: Rules, name: str = "", replay_only: bool = False) -> Ruleset:
        """`replay_only`: move rows of the columns a replay needs (play.turns)."""
        columns = t.MOVE_COLUMNS if replay_only else t.move_columns(rules.players)
        return cls(rules, k.initial_state(rules), t.max_turns(rules), columns, name)


@dataclasses.dataclass
class MoveRows:
    """Move rows of some games by column (see `runfolder.columns.columns_into`)."""

    # room_for's arrays have room for more rows (their columns are longer); `trimmed`
    # gives those of the `count` rows
    head: np.ndarray  # (MOVE_COLUMNS, rows) int16
    lists: np.ndarray  # (per-seat lists, rows * players) int16
    game: np.ndarray  # (rows,) the game's position among the games played
    turn: np.ndarray  # (rows,) int16
    count: int = 0

    @classmethod
    def room_for(cls, r: Ruleset, games: int) -> MoveRows:
        rows, p = games * r.max_turns, r.rules.players
        lists = (r.columns - t.MOVE_COLUMNS) // p
        # whole arrays (C-contiguous: columns_into's copies vectorise), their columns 64
        # bytes apart modulo 4 KiB (move_columns_buffer): columns_into writes all at once
        return cls(
            move_columns_buffer(t.MOVE_COLUMNS, rows),
            move_columns_buffer(lists, rows * p),
            np.empty(rows, np.int64),
            np.empty(rows, np.int16),
        )

    def add(self, r: Ruleset, moves: np.ndarray, turns: np.ndarray, first: int) -> None:
        """Append the turns of games first, first + 1, ... from play_batch's moves."""
        self.count = columns_into(
            moves,
            turns,
            first,
            r.rules.players,
            self.head,
            self.lists,
            self.game,
            self.turn,
            self.count,
        )

    def trimmed(self, players: int) -> MoveRows:
        n = self.count
        return MoveRows(
            self.head[:, :n], self.lists[:, : n * players], self.game[:n], self.turn[:n], n
        )

    def of_games(self, kept: np.ndarray, players: int) -> MoveRows:
        """The rows of the games (positions among the games played) where `kept` is true."""
        if kept.all():
            return self
        return self.taken(kept[self.game], players)

    def taken(self, rows: np.ndarray, players: int) -> MoveRows:
        """The rows `rows` selects (a boolean mask or row numbers, in their order)."""
        picked = np.arange(self.count)[rows]
        lists = (picked[:, None] * players + np.arange(players)).reshape(-1)
        return MoveRows(
            self.head[:, picked],
            self.lists[:, lists],
            self.game[picked],
            self.turn[picked],
            len(picked),
        )


class Buffers:
    """Arrays one process reuses from call to call of `play_games` (per rule set): the
    compiled loop's moves buffer and the move columns it fills (a fresh 12 MB a chunk cost
    3,000 page faults). Rows played into them are valid until the next call with them."""

    def __init__(self) -> None:
        self._moves: dict[str, np.ndarray] = {}
        self._rows: dict[str, MoveRows] = {}

    def rows(self, r: Ruleset, games: int) -> MoveRows:
        """Empty move columns for `games` games of rule set r (reused)."""
        rows = self._rows.get(r.name)
        if rows is None or len(rows.turn) < games * r.max_turns:
            rows = MoveRows.room_for(r, games)
            self._rows[r.name] = rows
        return MoveRows(rows.head, rows.lists, rows.game, rows.turn)

    def moves(self, r: Ruleset, games: int) -> np.ndarray:
        """A moves buffer for `games` games of rule set r (reused)."""
        buffer = self._moves.get(r.name)
        if buffer is None or buffer.shape[1] < games * r.max_turns:
            buffer = move_columns_buffer(r.columns, games * r.max_turns)
            self._moves[r.name] = buffer
        return buffer


@dataclasses.dataclass
class Games:
    """What `play_games` gives back, per game in the order asked (the core's arrays)."""

    games: np.ndarray  # (games, 3): turns, end code (rules.EndReason or ERROR), tie_broken
    seats: np.ndarray  # (games, players, play.turns.SEAT_COLUMNS): each seat's summary
    #: per game the fault that ended it (None: none); None when no game was played in the
    #: Python loop (a compiled game has no fault: its twins are the built-ins)
    errors: list[str | None] | None
    rows: MoveRows | None  # the kept games' move rows (None: no game kept them)

    def faults(self) -> list[str | None]:
        """Per game the fault that ended it (None: none), whichever loop played it."""
        return self.errors if self.errors is not None else [None] * len(self.games)

    def same_as(self, other: Games) -> bool:
        """Whether these are the same games as `other`: every end, fault, seat column and
        move row."""
        mine, theirs = self.rows, other.rows
        return (
            np.array_equal(self.games, other.games)
            and np.array_equal(self.seats, other.seats)
            and self.faults() == other.faults()
            and (mine is None) == (theirs is None)
            and (
                mine is None
                or theirs is None
                or (
                    np.array_equal(mine.head, theirs.head)
                    and np.array_equal(mine.lists, theirs.lists)
                    and np.array_equal(mine.game, theirs.game)
                )
            )
        )


#: the end code of a game a fault ended (runfolder's "error" end reason)
ERROR = runfolder.END_ERROR_CODE


def play_games(
    roster: Roster,
    ruleset: Ruleset,
    seatings: np.ndarray,
    seeds: np.ndarray,
    *,
    keep_moves: bool | np.ndarray = True,
    decision_seconds: float | None = None,
    lost: Mapping[int, str] | None = None,
    buffers: Buffers | None = None,
    on_game: Callable[[int | None], None] | None = None,
    compiled: bool = True,
) -> Games:
    """Play games under `ruleset`: game i seats roster strategies seatings[i] (seat order)
    with seed seeds[i]. Every seat with a compiled twin: the compiled loop; else the Python
    game loop, a fresh strategy object per game and seat.

    keep_moves: whether to keep each game's move rows (one flag for all, or one per game).
    decision_seconds: each Python-loop decision's time budget (past it, a fault; None: no
    clock). lost: Python-loop games (by position) not to play, with why: they are faults
    with no moves. buffers: arrays to reuse (the rows come back in them, valid until the
    next call with them); None: new arrays. on_game(i): told before Python-loop game i,
    and on_game(None) after it (a worker pool's watch on a game that may hang).
    compiled=False: every game through the Python loop (the same games; to load the
    Python forms' kernels, or to check them).
    """
    g, p = seatings.shape
    kept = np.broadcast_to(np.asarray(keep_moves, bool), (g,))
    twins = roster.compiled(seatings) if compiled else np.zeros(g, bool)
    if twins.all():
        return _compiled(roster, ruleset, seatings, seeds, kept, buffers)
    if not twins.any():
        return _python(roster, ruleset, seatings, seeds, kept, decision_seconds, lost, on_game)
    fast, slow = np.flatnonzero(twins), np.flatnonzero(~twins)
    a = _compiled(roster, ruleset, seatings[fast], seeds[fast], kept[fast], buffers)
    b = _python(
        roster,
        ruleset,
        seatings[slow],
        seeds[slow],
        kept[slow],
        decision_seconds,
        {int(np.searchsorted(slow, i)): why for i, why in (lost or {}).items() if i in slow},
        None if on_game is None else lambda i: on_game(None if i is None else int(slow[i])),
    )
    return _merged(p, (fast, a), (slow, b))


def _merged(players: int, *parts: tuple[np.ndarray, Games]) -> Games:
    """Games played in parts (their positions, their games) as one, in position order."""
    g = sum(len(where) for where, _ in parts)
    games = np.zeros((g, *parts[0][1].games.shape[1:]), parts[0][1].games.dtype)
    seats = np.zeros((g, *parts[0][1].seats.shape[1:]), parts[0][1].seats.dtype)
    errors: list[str | None] = [None] * g
    pieces = []
    for where, part in parts:
        games[where], seats[where] = part.games, part.seats
        for i, error in zip(where.tolist(), part.errors or (), strict=False):
            errors[i] = error
        if part.rows is not None:
            pieces.append(dataclasses.replace(part.rows, game=where[part.rows.game]))
    rows = None
    if pieces:
        whole = MoveRows(
            np.concatenate([x.head for x in pieces], axis=1),
            np.concatenate([x.lists for x in pieces], axis=1),
            np.concatenate([x.game for x in pieces]),
            np.concatenate([x.turn for x in pieces]),
            sum(x.count for x in pieces),
        )
        # each game's rows stay in turn order: a stable sort by game
        rows = whole.taken(np.argsort(whole.game, kind="stable"), players)
    return Games(games, seats, errors, rows)


def _compiled(
    roster: Roster,
    r: Ruleset,
    seatings: np.ndarray,
    seeds: np.ndarray,
    kept: np.ndarray,
    buffers: Buffers | None,
) -> Games:
    """The games in the compiled loop, BATCH_GAMES a call; their moves by column."""
    p = r.rules.players
    g = len(seatings)
    seeds = np.ascontiguousarray(seeds, np.uint64)
    codes = roster.codes[seatings]
    params = roster.params[seatings]
    games = np.zeros((g, 3), np.int64)
    seats = np.zeros((g, p, t.SEAT_COLUMNS), np.int32)
    rows = None
    if kept.any():  # else no game of theirs keeps its moves
        rows = buffers.rows(r, g) if buffers is not None else MoveRows.room_for(r, g)
    if buffers is not None:
        buffer = buffers.moves(r, BATCH_GAMES)
    else:
        buffer = move_columns_buffer(r.columns, min(g, BATCH_GAMES) * r.max_turns)
    for a in range(0, g, BATCH_GAMES):
        b = min(a + BATCH_GAMES, g)
        # play_batch fills each game's rows with NULL first: the buffer is reused
        err = play_batch(
            r.init,
            seeds[a:b],
            codes[a:b],
            params[a:b],
            buffer,
            games[a:b],
            seats[a:b],
            records=rows is not None,  # no kept moves: the loop writes no rows
        )
        if err < 0:
            raise RuntimeError(f"a compiled twin chose an illegal action (code {err}): a bug")
        if rows is not None:
            rows.add(r, buffer, games[a:b, 0], a)
    if rows is not None:
        rows = rows.trimmed(p).of_games(kept, p)
    return Games(games, seats, None, rows)


def _python(
    roster: Roster,
    r: Ruleset,
    seatings: np.ndarray,
    seeds: np.ndarray,
    kept: np.ndarray,
    decision_seconds: float | None,
    lost: Mapping[int, str] | None,
    on_game: Callable[[int | None], None] | None,
) -> Games:
    """The games through the Python game loop, one by one; they share one decision clock."""
    p = r.rules.players
    g = len(seatings)
    moves = move_columns_buffer(r.columns, g * r.max_turns)
    written = 0  # rows of moves
    games = np.zeros((g, 3), np.int64)
    seats = np.zeros((g, p, t.SEAT_COLUMNS), np.int32)
    errors: list[str | None] = [None] * g
    budgets = [decision_seconds] * p
    with decision_watchdog(budgets):
        for i in range(g):
            row = seatings[i]
            names = [roster.names[j] for j in row]
            seed = int(seeds[i])
            if lost and i in lost:
                errors[i] = f"{lost[i]} (strategies {', '.join(names)}, game seed {seed})"
                _unplayed(r, games[i], seats[i])
                continue
            if on_game is not None:
                on_game(i)
            try:
                # a fresh object per game: no state carried between games, so results do
                # not depend on which worker played which games before
                players = [roster.specs[j].build() for j in row]
                rec = play_game(r.rules, players, seed, names=names, time_budgets=budgets)
            except PassThrough:
                raise
            except BaseException as exc:  # a strategy failing outside a decision (constructor)
                errors[i] = f"{type(exc).__name__}: {exc} (game seed {seed})"
                _unplayed(r, games[i], seats[i])
                continue
            finally:
                if on_game is not None:
                    on_game(None)
            written += _keep(rec, i, moves[:, written:], games, seats, errors)
    rows = MoveRows.room_for(r, g)
    rows.add(r, moves, games[:, 0], 0)
    return Games(games, seats, errors, rows.trimmed(p).of_games(kept, p))


def _unplayed(r: Ruleset, game: np.ndarray, seats: np.ndarray) -> None:
    """A fault before the first move: no turns, the start position's seat columns, no
    winner (nobody to blame by seat), every seat ranked last."""
    game[:] = (0, ERROR, 0)
    t.k_summary(r.init.copy(), seats)
    seats[:, t.S_WINNER] = 0
    seats[:, t.S_RANK] = r.rules.players


def _keep(
    rec: GameRecord,
    i: int,
    moves: np.ndarray,
    games: np.ndarray,
    seats: np.ndarray,
    errors: list[str | None],
) -> int:
    """Copy game i's record into the arrays of the games played, its rows into moves
    (by column, from its first row); return its rows."""
    if rec.error is not None:
        errors[i] = rec.error
    # an error game's last row may be unfinished (no roll): LOG_FORMAT rows are turns
    done = int(np.count_nonzero(rec.moves[: rec.turns, t.M_ROLL] != t.NULL))
    moves[:, :done] = rec.moves[:done, : moves.shape[0]].T  # a replay's rows: their columns
    end = ERROR if rec.error is not None else int(EndReason.from_label(rec.end_reason))
    games[i] = (done, end, int(rec.tie_broken))
    seats[i] = rec.seats
    return done
