"""Playing one chunk of a run: its games in the compiled loop or the Python loop, and its tables.

A chunk is whole blocks of games; `play_chunk` plays them and builds the chunk's three
tables (`runfolder.Part`), `write_chunk` writes them. Nothing here knows of processes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import logging
import multiprocessing
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from marrakech_sim import kernel_cache, runfolder
from marrakech_sim.play import turns as t
from marrakech_sim.play.game import GameRecord, PassThrough, decision_watchdog, play_game
from marrakech_sim.play.strategy import StrategySpec
from marrakech_sim.rules import core as k
from marrakech_sim.rules.options import Rules
from marrakech_sim.rules.state import EndReason
from marrakech_sim.run.config import StoppingRule, Study
from marrakech_sim.run.plan import ChunkGames, Plan
from marrakech_sim.run.precompile import Helper
from marrakech_sim.runfolder.columns import columns_into

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, slots=True)
class ChunkResult:
    """A worker's report on one chunk (small: this is all that crosses processes)."""

    chunk: int
    games: int
    moves: int
    errors: int
    first_error: str | None
    seconds: float
    block_y: np.ndarray | None  # stopping-rule totals per block of the chunk
    block_n: np.ndarray | None
    # the live table's totals per block of the chunk: each seat's win share, normal games
    seat_y: np.ndarray | None = None
    seat_n: np.ndarray | None = None
    # the parts' digests, by the process that wrote them (`write_chunk`); None: the runner
    # reads the parts back to digest them
    digests: dict[str, str] | None = None


@dataclasses.dataclass
class Ruleset:
    name: str
    rules: Rules
    init: np.ndarray
    max_turns: int
    columns: int


#: what Prepared.warm_up says before compiling the game loop into an empty kernel cache
#: (measured on 2 cores: about 1.5 min without the expert, 4.5 min with it)
COMPILING = {
    False: "compiling the game kernels: about 1-2 minutes, once per installation",
    True: "compiling the game kernels with the expert's search: about 4-5 minutes, "
    "once per installation",
}


#: the searching twins' budget in warm_up's games: the kernels load as at any budget, and
#: two games at the largest allowed budget took minutes in the main process, deaf to Ctrl-C
WARM_UP_BUDGET = 2


def _capped_budgets(codes: np.ndarray, params: np.ndarray, budget: int) -> np.ndarray:
    """The strategies' twin parameters with the searching twins' budget (their first
    parameter, twins.PARAMETER_ORDER) at most `budget`."""
    from marrakech_sim.strategies.twins import SEARCHING

    capped = params.copy()
    rows = np.isin(codes, list(SEARCHING))
    capped[rows, 0] = np.minimum(capped[rows, 0], budget)
    return capped


class Workspace:
    """What one process reuses from chunk to chunk: the moves buffers, and its marker in a
    worker pool. Never pickled: a `Prepared` sent to another process gets a new one."""

    def __init__(self) -> None:
        #: this worker's shared marker (see run.pool.ChunkPool): [chunk, position of the
        #: Python-loop game being played, its start time]; None outside a pool
        self.marker: Any = None
        self._buffers: dict[str, np.ndarray] = {}
        self._rows: dict[str, _Rows] = {}

    def rows_buffer(self, r: Ruleset, games: int) -> _Rows:
        """This process's (empty) moves columns for `games` games of rule set r (reused)."""
        rows = self._rows.get(r.name)
        if rows is None or len(rows.turn) < games * r.max_turns:
            rows = _Rows.room_for(r, games)
            self._rows[r.name] = rows
        return _Rows(rows.head, rows.lists, rows.game, rows.turn)

    def moves_buffer(self, r: Ruleset, games: int) -> np.ndarray:
        """This process's moves buffer for `games` games of rule set r (reused)."""
        buffer = self._buffers.get(r.name)
        if buffer is None or len(buffer) < games * r.max_turns:
            buffer = np.empty((games * r.max_turns, r.columns), np.int32)
            self._buffers[r.name] = buffer
        return buffer


class Prepared:
    """What every chunk of a study needs: the plan, rule sets, strategy classes and
    compiled twins (picklable, the same in every process), and this process's
    `workspace` (left out when pickled: the other side gets a new one)."""

    def __init__(self, study: Study) -> None:
        from marrakech_sim.strategies.twins import (
            CODES,
            MAX_PARAMETERS,
            compiled_twin,
            encode_params,
        )

        self.study = study
        self.plan = Plan(study)
        self.rulesets = []
        for name, rules in study.rulesets:
            columns = int(t.new_moves(rules).shape[1])
            self.rulesets.append(
                Ruleset(name, rules, k.initial_state(rules), t.max_turns(rules), columns)
            )
        self.ruleset_index = {r.name: i for i, r in enumerate(self.rulesets)}
        self.names = study.strategy_names
        self.specs: tuple[StrategySpec, ...] = study.strategies
        n = len(self.specs)
        self.codes = np.full(n, -1, np.int64)
        self.params = np.zeros((n, MAX_PARAMETERS))
        for i, spec in enumerate(self.specs):
            cls = spec.load_class()
            twin = compiled_twin(cls)
            if twin is not None:
                self.codes[i] = CODES[twin]
                values = {**getattr(cls, "PARAMETERS", {}), **dict(spec.params)}
                self.params[i] = encode_params(twin, values)
        self.match_ruleset = np.array(
            [self.ruleset_index[m.ruleset] for m in self.plan.matches], np.int64
        )
        self.match_compiled = np.array(
            [all(self.codes[self.names.index(x)] >= 0 for x in m.lineup) for m in self.plan.matches]
        )
        self.moves_visible = {
            r.name: runfolder.has_visible_after(r.columns, r.rules.players) for r in self.rulesets
        }
        self.visible_after = all(self.moves_visible.values())
        self.moves_schema = runfolder.moves_schema(self.visible_after)
        #: seconds per decision of a Python-loop strategy (study.decision_seconds)
        self.decision_seconds: float = study.decision_seconds
        #: warm_up's measure of the searching twins: (match, seconds per game at
        #: WARM_UP_BUDGET), see search_seconds
        self.search_game_seconds: tuple[int, float] | None = None
        #: this process's buffers and marker
        self.workspace = Workspace()

    def __getstate__(self) -> dict[str, Any]:
        """The plan without this process's workspace (its buffers, its pool marker)."""
        return {k: v for k, v in vars(self).items() if k != "workspace"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        vars(self).update(state)
        self.workspace = Workspace()

    def warm_up(self, compiling: Callable[[str], None] | None = None) -> None:
        """Load (or compile) the compiled loop and the record writer once, before workers fork.

        Two games of the first compiled match go the whole way to encoded parts (in
        memory), and two of the first that seats a searching twin (the expert), if one
        does: the loop without them is compiled apart, in far less time
        (twins.SEARCHING). One game goes through the Python loop per rule set that uses
        it, played by the first such line-up's built-in strategies (greedy for its
        plug-ins), so their kernels are compiled before any decision is timed. So a
        forked worker (a replacement too) starts with every kernel of its chunks loaded.

        compiling(words): told first when a loop is to be compiled into an empty kernel
        cache (what, and about how long: minutes on a fresh installation, once).
        """
        from marrakech_sim.strategies.twins import searches

        first: dict[bool, int] = {}  # searching twins or not -> the first such match
        for m in np.flatnonzero(self.match_compiled).tolist():
            lineup = self.plan.matches[m].lineup
            first.setdefault(searches(self.codes[[self.names.index(x) for x in lineup]]), m)
        kinds = {searching: "loop-searching" if searching else "loop" for searching in first}
        cold = [s for s in first if not kernel_cache.compiled_before(kinds[s])]
        if cold and compiling is not None:
            compiling(COMPILING[max(cold)])  # (the longer, when both are to be compiled)
        # on another core, the encoder's and the rules API's kernels (run.precompile)
        helper = Helper.start() if cold else None
        try:
            self._warm_up(first, kinds, helper)
        finally:
            if helper is not None:
                helper.close()

    def _warm_up(
        self, first: dict[bool, int], kinds: dict[bool, str], helper: Helper | None
    ) -> None:
        if helper is None:
            runfolder.warm_up_writer()
        python: dict[int, int] = {}  # rule set -> its first Python-loop match
        for m in np.flatnonzero(~self.match_compiled).tolist():
            python.setdefault(int(self.match_ruleset[m]), m)
        for ri, m in sorted(python.items()):
            # the match's built-in players (their kernels compile here, untimed: in a game
            # a first decision that compiles runs past decision_seconds and is a fault),
            # greedy for a plug-in (one could crash this process)
            rules = self.rulesets[ri].rules
            specs = [self.specs[self.names.index(x)] for x in self.plan.matches[m].lineup]
            players = [
                spec.build() if spec.is_builtin else StrategySpec.of("greedy").build()
                for spec in specs
            ]
            play_game(rules, players, 0)
        for searching, m in first.items():
            r = self.rulesets[int(self.match_ruleset[m])]
            two = np.ones(2, np.int64)
            cg = ChunkGames(
                chunk=0,
                game_id=np.arange(2, dtype=np.int64),
                match_id=two * m,
                block=two * 0,
                seating=two * self.plan.seating_offset[m],
                seed=np.arange(2, dtype=np.uint64),
                moves_kept=np.ones(2, bool),
            )
            params = self.params
            if searching:  # the kernels load the same at any budget (a value, not a type)
                self.params = _capped_budgets(self.codes, params, WARM_UP_BUDGET)
            try:
                started = time.perf_counter()
                group = play_compiled(self, r, cg, np.arange(2))
                if searching:
                    self.search_game_seconds = (m, (time.perf_counter() - started) / 2)
            finally:
                self.params = params
            if helper is not None:  # the loop is compiled: merge the helper's kernels
                helper.finish()
                helper = None
                runfolder.warm_up_writer()
            for part in group_parts(self, r, cg, group):
                runfolder.parquet_file(part)
            kernel_cache.mark_compiled(kinds[searching])

    def search_seconds(self) -> float | None:
        """A rough figure for the seconds the study's games with a searching twin take on
        one core, from warm_up's two games at WARM_UP_BUDGET, scaled by each line-up's
        largest budget and its share of the measured line-up's turns times players (a
        search's cost per decision grows with its budget and its horizon, one round of
        every seat); None before warm_up, or without searching twins. An over-estimate
        where the search expands small chance trees exactly instead of sampling them."""
        from marrakech_sim.strategies.twins import SEARCHING

        if self.search_game_seconds is None:
            return None
        measured, seconds = self.search_game_seconds
        searching = np.isin(self.codes, list(SEARCHING))
        plan = self.plan
        per_match = plan.match_rounds * plan.match_size

        def size(m: int) -> float:
            r = self.rulesets[int(self.match_ruleset[m])]
            return float(r.max_turns * r.rules.players)

        total = 0.0
        for m, match in enumerate(self.plan.matches):
            rows = [self.names.index(x) for x in match.lineup]
            budgets = [self.params[i, 0] for i in rows if searching[i]]
            if not budgets or not self.match_compiled[m]:
                continue
            scale = max(budgets) / WARM_UP_BUDGET * size(m) / size(measured)
            total += per_match[m] * seconds * max(scale, 1.0)
        return total


@dataclasses.dataclass
class _Group:
    """Games of one rule set played by one loop: compiled-core arrays, moves by column."""

    where: np.ndarray  # positions in the chunk
    games: np.ndarray  # (games, 3): turns, end code, tie_broken
    seats: np.ndarray  # (games, players, SEAT_COLUMNS)
    errors: list[str | None] | None
    rows: _Rows | None  # None when the moves were not kept


@dataclasses.dataclass
class _Rows:
    """Move rows of a group by column (see `_columnar.columns_into`)."""

    head: np.ndarray  # (MOVE_COLUMNS, rows) int16
    lists: np.ndarray  # (per-seat lists, rows * players) int16
    game: np.ndarray  # (rows,) the game's position in the group
    turn: np.ndarray  # (rows,) int16
    count: int = 0

    @classmethod
    def room_for(cls, r: Ruleset, games: int) -> _Rows:
        rows, p = games * r.max_turns, r.rules.players
        lists = (r.columns - t.MOVE_COLUMNS) // p
        return cls(
            _staggered(t.MOVE_COLUMNS, rows),
            _staggered(lists, rows * p),
            np.empty(rows, np.int64),
            np.empty(rows, np.int16),
        )

    def add(self, r: Ruleset, moves: np.ndarray, turns: np.ndarray, first: int) -> None:
        """Append the turns of games first, first + 1, ... from a moves buffer."""
        self.count = columns_into(
            moves,
            r.max_turns,
            turns,
            first,
            r.rules.players,
            self.head,
            self.lists,
            self.game,
            self.turn,
            self.count,
        )

    def trimmed(self, players: int) -> _Rows:
        n = self.count
        return _Rows(
            self.head[:, :n], self.lists[:, : n * players], self.game[:n], self.turn[:n], n
        )

    def of_games(self, kept: np.ndarray, players: int) -> _Rows:
        """The rows of the games (positions in the group) where `kept` is true."""
        if kept.all():
            return self
        row = kept[self.game]
        return _Rows(
            self.head[:, row],
            self.lists[:, np.repeat(row, players)],
            self.game[row],
            self.turn[row],
            int(row.sum()),
        )


def _staggered(columns: int, rows: int) -> np.ndarray:
    """An int16 (columns, rows) array whose columns start 64 bytes apart modulo 4 KiB.

    columns_into writes every column at once; columns a multiple of 4 KiB apart share
    one set of the L1 cache and evict each other (3-4x slower for 15 columns).
    """
    stride = -(-max(rows - 32, 0) // 2048) * 2048 + 32  # 2 * stride = 64 (mod 4096)
    return np.empty((columns, stride), np.int16)[:, :rows]


# games per call of the compiled loop: its moves buffer (about 1.2 MB for 4 players) stays
# in the core's cache until its rows are copied into columns
BATCH_GAMES = 256


def play_compiled(
    prep: Prepared,
    r: Ruleset,
    cg: ChunkGames,
    where: np.ndarray,
    records: bool = True,
    reuse: bool = False,
) -> _Group:
    """Play the games `where` of a chunk in the compiled loop; their moves by column.

    reuse: the moves columns go into this process's buffers for the rule set, valid
    until the next call with reuse (a fresh 12 MB a chunk cost 3,000 page faults).
    """
    from marrakech_sim.strategies.compiled import play_batch

    p = r.rules.players
    g = len(where)
    strategies = prep.plan.seating_rows[cg.seating[where], :p]
    seeds = np.ascontiguousarray(cg.seed[where])
    codes = prep.codes[strategies]
    params = prep.params[strategies]
    games = np.zeros((g, 3), np.int64)
    seats = np.zeros((g, p, t.SEAT_COLUMNS), np.int32)
    rows = None
    if records and cg.moves_kept[where].any():  # else no game of theirs keeps its moves
        rows = prep.workspace.rows_buffer(r, g) if reuse else _Rows.room_for(r, g)
    buffer = prep.workspace.moves_buffer(r, BATCH_GAMES)
    for a in range(0, g, BATCH_GAMES):
        b = min(a + BATCH_GAMES, g)
        # play_batch fills each game's rows with NULL first: the buffer is reused
        moves = buffer[: (b - a) * r.max_turns]
        err = play_batch(r.init, seeds[a:b], codes[a:b], params[a:b], moves, games[a:b], seats[a:b])
        if err < 0:
            raise RuntimeError(f"a compiled twin chose an illegal action (code {err}): a bug")
        if rows is not None:
            rows.add(r, moves, games[a:b, 0], a)
    return _Group(where, games, seats, None, rows.trimmed(p) if rows is not None else None)


def play_python(
    prep: Prepared,
    r: Ruleset,
    cg: ChunkGames,
    where: np.ndarray,
    lost: dict[int, str] | None = None,
) -> _Group:
    """Play the games `where` of a chunk through the Python game loop.

    lost: games (positions in the chunk) not to play, with why (a worker died in them
    twice, see run.pool): they are recorded as faults with no moves. Each seat has
    prep.decision_seconds per decision; the chunk's games share one decision watchdog.
    """
    p = r.rules.players
    g = len(where)
    moves = np.full((g * r.max_turns, r.columns), t.NULL, np.int32)
    games = np.zeros((g, 3), np.int64)
    seats = np.zeros((g, p, t.SEAT_COLUMNS), np.int32)
    errors: list[str | None] = [None] * g
    budgets = [prep.decision_seconds] * p
    marker = prep.workspace.marker
    with decision_watchdog(budgets):
        for i, pos in enumerate(where):
            row = prep.plan.seating_rows[cg.seating[pos], :p]
            names = [prep.names[j] for j in row]
            seed = int(cg.seed[pos])
            if lost and int(pos) in lost:
                errors[i] = f"{lost[int(pos)]} (strategies {', '.join(names)}, game seed {seed})"
                _unplayed(r, games[i], seats[i])
                continue
            if marker is not None:
                marker[2], marker[1] = time.monotonic(), pos
            try:
                # a fresh object per game: no state carried between games, so results do
                # not depend on which worker played which games before
                players = [prep.specs[j].build() for j in row]
                rec = play_game(r.rules, players, seed, names=names, time_budgets=budgets)
            except PassThrough:
                raise
            except BaseException as exc:  # a strategy failing outside a decision (constructor)
                errors[i] = f"{type(exc).__name__}: {exc} (game seed {seed})"
                _unplayed(r, games[i], seats[i])
                continue
            finally:
                if marker is not None:
                    marker[1] = -1
            _keep(r, rec, i, moves, games, seats, errors)
    rows = _Rows.room_for(r, g)
    rows.add(r, moves, games[:, 0], 0)
    return _Group(where, games, seats, errors, rows.trimmed(p))


def _unplayed(r: Ruleset, game: np.ndarray, seats: np.ndarray) -> None:
    """A fault before the first move: no turns, the start position's seat columns, no
    winner (nobody to blame by seat), every seat ranked last."""
    game[:] = (0, runfolder.END_ERROR_CODE, 0)
    t.k_summary(r.init.copy(), seats)
    seats[:, t.S_WINNER] = 0
    seats[:, t.S_RANK] = r.rules.players


def _keep(
    r: Ruleset,
    rec: GameRecord,
    i: int,
    moves: np.ndarray,
    games: np.ndarray,
    seats: np.ndarray,
    errors: list[str | None],
) -> None:
    """Copy game i's record into the group's arrays."""
    if rec.error is not None:
        errors[i] = rec.error
    # an error game's last row may be unfinished (no roll): LOG_FORMAT rows are turns
    done = int(np.count_nonzero(rec.moves[: rec.turns, t.M_ROLL] != t.NULL))
    moves[i * r.max_turns : i * r.max_turns + done] = rec.moves[:done]
    end = (
        runfolder.END_ERROR_CODE
        if rec.error is not None
        else int(EndReason.from_label(rec.end_reason))
    )
    games[i] = (done, end, int(rec.tie_broken))
    seats[i] = rec.seats


def group_parts(
    prep: Prepared, r: Ruleset, cg: ChunkGames, group: _Group
) -> tuple[runfolder.Part, runfolder.Part, runfolder.Part]:
    """The (games, seats, moves) parts of one group, straight from the compiled-core arrays."""
    p = r.rules.players
    where = group.where
    g = len(where)
    turns = group.games[:, 0]
    game_id = cg.game_id[where]
    strategies = prep.plan.seating_rows[cg.seating[where], :p]
    ruleset = np.full(g, prep.ruleset_index[r.name], np.int64)
    games = runfolder.games_part(
        game_id=game_id,
        match_id=cg.match_id[where],
        block=cg.block[where],
        seed=cg.seed[where],
        ruleset_names=[x.name for x in prep.rulesets],
        ruleset=ruleset,
        players=np.full(g, p, np.int8),
        turns=turns,
        end_code=group.games[:, 1],
        tie_broken=group.games[:, 2],
        winner=group.seats[:, :, t.S_WINNER],
        errors=group.errors if group.errors and any(group.errors) else None,
    )
    assert r.rules.colours_per_player is not None
    seats = runfolder.seats_part(
        game_id=game_id,
        players=p,
        colours_per_player=r.rules.colours_per_player,
        strategy_names=prep.names,
        strategy=strategies,
        summary=group.seats,
    )
    rows = group.rows if group.rows is not None else _Rows.room_for(r, 0)
    rows = rows.of_games(cg.moves_kept[where], p)  # the study's keep_moves
    moves = runfolder.moves_part(
        game_id=game_id[rows.game],
        head=rows.head,
        lists=rows.lists,
        turn=rows.turn,
        players=p,
        schema=prep.moves_schema,
    )
    return games, seats, moves


#: characters of what strategies print during a chunk that run.log keeps (the rest counted)
KEPT_OUTPUT_CHARS = 2000


class CappedOutput(io.TextIOBase):
    """A text stream that keeps its first `most` characters and counts the rest."""

    def __init__(self, most: int = KEPT_OUTPUT_CHARS) -> None:
        super().__init__()
        self.most, self.kept, self.chars, self.lines = most, io.StringIO(), 0, 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        room = self.most - self.chars
        if room > 0:
            self.kept.write(text[:room])
        self.chars += len(text)
        self.lines += text.count("\n")
        return len(text)


@contextlib.contextmanager
def captured_output(where: str) -> Iterator[CappedOutput]:
    """While Python-loop games play: what strategies print to standard output or error is
    caught (never sent through the run's output: one printing on every decision wrote
    4.5 GB), and its beginning logged to run.log with the count of the rest."""
    capped = CappedOutput()
    with contextlib.redirect_stdout(capped), contextlib.redirect_stderr(capped):
        yield capped
    if capped.chars:  # run.log only: the console shows warnings, this is a plug-in's chatter
        log.info(
            "%s: strategies printed %s characters (%s lines); the first %d: %r",
            where,
            f"{capped.chars:,}",
            f"{capped.lines:,}",
            min(capped.chars, capped.most),
            capped.kept.getvalue(),
        )


def play_chunk(
    prep: Prepared,
    chunk: int,
    *,
    reuse_buffers: bool = False,
    lost: dict[int, str] | None = None,
) -> tuple[ChunkResult, tuple[runfolder.Part, ...]]:
    """Play one chunk; return its report and its (games, seats, moves) parts.

    lost: games not to play, recorded as faults (see `play_python`).

    reuse_buffers: the moves part is a view of this process's buffers, overwritten by
    the next play_chunk with reuse_buffers (write it first; the runner does).
    """
    started = time.perf_counter()
    cg = prep.plan.chunk_games(chunk)
    rs = prep.match_ruleset[cg.match_id]
    compiled = prep.match_compiled[cg.match_id]
    parts: list[tuple[runfolder.Part, ...]] = []
    errors: list[str] = []
    for ri, r in enumerate(prep.rulesets):
        for is_compiled in (True, False):
            where = np.flatnonzero((rs == ri) & (compiled == is_compiled))
            if len(where) == 0:
                continue
            if is_compiled:
                group = play_compiled(prep, r, cg, where, reuse=reuse_buffers)
            else:
                with captured_output(f"chunk {chunk}"):
                    group = play_python(prep, r, cg, where, lost)
            if group.errors:
                errors.extend(e for e in group.errors if e)
            parts.append(group_parts(prep, r, cg, group))
    tables = parts[0] if len(parts) == 1 else in_game_order(parts)
    y = n = None
    if prep.study.stopping is not None:
        games, seats = tables[0].to_arrow(), tables[1].to_arrow()
        y, n = block_totals(prep.study.stopping, games, seats, cg)
    seat_y, seat_n = seat_block_totals(tables[0], tables[1], cg)
    result = ChunkResult(
        chunk=chunk,
        games=len(cg),
        moves=tables[2].num_rows,
        errors=len(errors),
        first_error=errors[0] if errors else None,
        seconds=time.perf_counter() - started,
        block_y=y,
        block_n=n,
        seat_y=seat_y,
        seat_n=seat_n,
    )
    return result, tables


def in_game_order(parts: list[tuple[runfolder.Part, ...]]) -> tuple[runfolder.Part, ...]:
    """Several rule sets or loops in one chunk: their parts as one, in game order."""
    keys = (("game_id",), ("game_id", "seat"), ("game_id", "turn"))
    tables = []
    for i in range(3):
        whole = runfolder.concat_parts([p[i] for p in parts])
        order = np.lexsort([whole.column(c).values for c in reversed(keys[i])])
        tables.append(whole.take(order))
    return tuple(tables)


def block_totals(
    rule: StoppingRule, games: pa.Table, seats: pa.Table, cg: ChunkGames
) -> tuple[np.ndarray, np.ndarray]:
    """Per block of the chunk: the stopping quantity's win shares (y) and seat-games (n)."""
    b0 = int(cg.block[0])
    nblocks = int(cg.block[-1]) - b0 + 1
    g0 = int(cg.game_id[0])
    gid = games.column("game_id").to_numpy()
    ok = games.column("end_reason").to_numpy(zero_copy_only=False) != "error"
    if rule.ruleset is not None:
        ok &= games.column("ruleset").to_numpy(zero_copy_only=False) == rule.ruleset
    good = np.zeros(len(cg), bool)
    good[gid - g0] = ok
    block_of = np.empty(len(cg), np.int64)
    block_of[gid - g0] = games.column("block").to_numpy() - b0
    sg = seats.column("game_id").to_numpy() - g0
    if rule.quantity == "seat_win_share":
        pick = seats.column("seat").to_numpy() == rule.seat
    else:
        pick = seats.column("strategy").to_numpy(zero_copy_only=False) == rule.strategy
    pick &= good[sg]
    share = seats.column("win_share").to_numpy().astype(np.float64)
    y = np.bincount(block_of[sg[pick]], weights=share[pick], minlength=nblocks)
    n = np.bincount(block_of[sg[pick]], minlength=nblocks).astype(np.float64)
    return y, n


def seat_block_totals(
    games: runfolder.Part, seats: runfolder.Part, cg: ChunkGames
) -> tuple[np.ndarray, np.ndarray]:
    """Per block of the chunk: each seat's summed win share (y, blocks x seats) and the
    games that did not end in a fault (n); the live table of the command line adds them.

    Read from the parts' numpy columns (no Arrow table: this runs for every chunk).
    """
    b0 = int(cg.block[0])
    nblocks = int(cg.block[-1]) - b0 + 1
    g0 = int(cg.game_id[0])
    gid = games.column("game_id").values - g0
    end = games.column("end_reason")
    labels = end.labels or ()
    ok = end.values != labels.index("error") if "error" in labels else np.ones(len(gid), bool)
    good = np.zeros(len(cg), bool)
    good[gid] = ok
    block_of = np.empty(len(cg), np.int64)
    block_of[gid] = games.column("block").values - b0
    n = np.bincount(block_of[gid[ok]], minlength=nblocks).astype(np.float64)
    sg = seats.column("game_id").values - g0
    seat = seats.column("seat").values.astype(np.int64)
    width = int(seat.max()) + 1 if len(seat) else 1
    pick = good[sg]
    share = seats.column("win_share").values.astype(np.float64)
    cell = block_of[sg[pick]] * width + seat[pick]
    y = np.bincount(cell, weights=share[pick], minlength=nblocks * width)
    return y.reshape(nblocks, width), n


def write_chunk(
    run_dir: Path, chunk: int, tables: tuple[runfolder.Part, ...], writer: str = "encoder"
) -> dict[str, str]:
    """The chunk's parts, moves and seats first: a chunk is done when all three exist;
    their digests for the manifest (`runfolder.write_digested_part`)."""
    return dict(
        runfolder.write_digested_part(run_dir, name, chunk, table, writer)
        for name, table in zip(
            ("moves", "seats", "games"), (tables[2], tables[1], tables[0]), strict=True
        )
    )


def unreproducible(prep: Prepared, games: int = 2) -> list[str]:
    """Warnings for the Python-loop strategies whose games differ between two plays of
    the same seed (a strategy using a global random generator, not view.rng).

    Each such strategy plays the first `games` block seeds of its first match twice, in
    a child process (a strategy that crashes it is left to the run's fault handling).
    A cheap sample before a run, not a proof: check-strategy looks harder.
    """
    from marrakech_sim.play.conformance import in_child_process
    from marrakech_sim.run.plan import block_seeds

    samples = []
    for name in dict.fromkeys(n for i, n in enumerate(prep.names) if prep.codes[i] < 0):
        found = [
            m for m in prep.plan.matches if name in m.lineup and not prep.match_compiled[m.match_id]
        ]
        if not found:
            continue
        m = found[0]
        blocks = prep.plan.match_blocks(m.match_id, games)
        seeds = [int(x) for x in block_seeds(prep.study.seed, blocks)]
        samples.append((name, m.ruleset, m.lineup, seeds))
    if not samples or "fork" not in multiprocessing.get_all_start_methods():
        return []
    silence = (prep.decision_seconds or 1.0) * 400 * games * len(samples) + 60.0
    found = in_child_process(_differing, (prep, samples), silence)[0]
    return list(found) if found is not None else []


def _differing(
    prep: Prepared, samples: list[tuple[str, str, tuple[str, ...], list[int]]], progress: Any
) -> list[str]:
    from marrakech_sim.play.conformance import same_game

    out = []
    for name, ruleset, lineup, seeds in samples:
        rules = prep.study.rules(ruleset)
        specs = [prep.study.strategy(x) for x in lineup]
        budgets = [prep.decision_seconds] * len(lineup)
        for seed in seeds:
            with captured_output("the reproducibility check before the run"):
                a, b = (
                    play_game(rules, [x.build() for x in specs], seed, time_budgets=budgets)
                    for _ in range(2)
                )
            if a.error is not None or b.error is not None:
                # a fault (a decision past its time budget while its kernels compiled, under
                # load) says nothing of the seed's use: the run handles faults
                continue
            if not same_game(a, b):
                out.append(
                    f"strategy {name!r} played two different games from one seed ({seed}, "
                    f"line-up {', '.join(lineup)}): its games cannot be reproduced (does it use "
                    "a global random generator instead of view.rng?)"
                )
                break
    return out
