"""Run a study: chunks of games in worker processes, streamed to Parquet parts, resumable.

    run_study(study, out_dir, workers=2)   a new run folder (LOG_FORMAT.md)
    resume_run(run_dir)                    finish an interrupted run
    summarize_run(run_dir)                 win shares per strategy and per seat

Each chunk (consecutive whole blocks, see `schedule.py`) is played by one worker, which
writes the chunk's three parts itself and sends back only a few counts, so the parent's
memory stays flat and the inter-process traffic is a few hundred bytes per chunk. A
game is played by the compiled loop when every seat has a compiled twin, else by the
Python game loop; both give the same game for the same seed. Everything a game depends
on (its seed, seating, rule set) comes from the plan, so the tables do not depend on the
number of workers, the start method, or where a run was interrupted and resumed.

Logging: the CLI wraps its handlers with multiprocessing-logging (`run_logging`); forked
workers inherit them. Spawned or forkserver workers get a queue of the pool's own
context instead, which the parent drains into the same handlers (a stdlib QueueListener).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import logging.handlers
import multiprocessing
import os
import platform
import signal
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from marrakech_sim import storage
from marrakech_sim import turns as t
from marrakech_sim._columnar import columns_into
from marrakech_sim.config import StoppingRule, Study, study_from_dict
from marrakech_sim.errors import MarrakechError, RunFolderError
from marrakech_sim.game import play_game
from marrakech_sim.provenance import check_same_code, code_digest
from marrakech_sim.rules import core as k
from marrakech_sim.rules.options import Rules
from marrakech_sim.schedule import ChunkGames, Plan
from marrakech_sim.stats.intervals import wilson_interval
from marrakech_sim.strategy import StrategySpec

log = logging.getLogger(__name__)

Progress = Callable[[int, int, float], None]  # (games done, games planned, seconds)
SEED_DERIVATION = (
    "block b's game seed = numpy.random.SeedSequence(seed, spawn_key=(b // 1024,))"
    ".generate_state(1024, numpy.uint64)[b % 1024]; every game of a block uses it"
)


class RunInterrupted(MarrakechError):
    """The run was stopped (Ctrl-C) before it finished; it can be resumed."""


@dataclasses.dataclass(frozen=True, slots=True)
class RunResult:
    """What a finished (or stopped) run produced."""

    run_dir: Path
    games_planned: int
    games_played: int
    games_this_session: int
    seconds: float
    errors: int  # games that ended in a strategy fault (this session)
    stopping: dict[str, Any] | None
    status: str


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


# ---------------------------------------------------------------- preparing a process


@dataclasses.dataclass
class _Ruleset:
    name: str
    rules: Rules
    init: np.ndarray
    max_turns: int
    columns: int


class _Prepared:
    """Per-process state: the plan, rule sets, strategy classes and compiled twins."""

    def __init__(self, study: Study) -> None:
        from strategies.twins import CODES, MAX_PARAMETERS, compiled_twin, encode_params

        self.study = study
        self.plan = Plan(study)
        self.rulesets = []
        for name, rules in study.rulesets:
            columns = int(t.new_moves(rules).shape[1])
            self.rulesets.append(
                _Ruleset(name, rules, k.initial_state(rules), t.max_turns(rules), columns)
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
            r.name: storage.has_visible_after(r.columns, r.rules.players) for r in self.rulesets
        }
        self.visible_after = all(self.moves_visible.values())
        self.moves_schema = storage.moves_schema(self.visible_after)
        self._buffers: dict[str, np.ndarray] = {}
        self._rows: dict[str, _Rows] = {}

    def rows_buffer(self, r: _Ruleset, games: int) -> _Rows:
        """This process's (empty) moves columns for `games` games of rule set r (reused)."""
        rows = self._rows.get(r.name)
        if rows is None or len(rows.turn) < games * r.max_turns:
            rows = _Rows.room_for(r, games)
            self._rows[r.name] = rows
        return _Rows(rows.head, rows.lists, rows.game, rows.turn)

    def moves_buffer(self, r: _Ruleset, games: int) -> np.ndarray:
        """This process's moves buffer for `games` games of rule set r (reused)."""
        buffer = self._buffers.get(r.name)
        if buffer is None or len(buffer) < games * r.max_turns:
            buffer = np.empty((games * r.max_turns, r.columns), np.int32)
            self._buffers[r.name] = buffer
        return buffer

    def warm_up(self) -> None:
        """Load (or compile) the compiled loop and the record writer once, before workers fork.

        Two games of the first compiled match go the whole way to encoded parts (in
        memory), so a forked worker starts with every kernel of its chunks loaded.
        """
        storage.warm_up()
        for m in range(len(self.plan.matches)):
            if self.match_compiled[m]:
                r = self.rulesets[int(self.match_ruleset[m])]
                two = np.ones(2, np.int64)
                cg = ChunkGames(
                    chunk=0,
                    game_id=np.arange(2, dtype=np.int64),
                    match_id=two * m,
                    block=two * 0,
                    seating=two * self.plan.seating_offset[m],
                    seed=np.arange(2, dtype=np.uint64),
                )
                group = _play_compiled(self, r, cg, np.arange(2))
                for part in _group_parts(self, r, cg, group):
                    storage.encode_parquet(part)
                return


# ---------------------------------------------------------------- playing a chunk


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
    def room_for(cls, r: _Ruleset, games: int) -> _Rows:
        rows, p = games * r.max_turns, r.rules.players
        lists = (r.columns - t.MOVE_COLUMNS) // p
        return cls(
            _staggered(t.MOVE_COLUMNS, rows),
            _staggered(lists, rows * p),
            np.empty(rows, np.int64),
            np.empty(rows, np.int16),
        )

    def add(self, r: _Ruleset, moves: np.ndarray, turns: np.ndarray, first: int) -> None:
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


def _play_compiled(
    prep: _Prepared,
    r: _Ruleset,
    cg: ChunkGames,
    where: np.ndarray,
    records: bool = True,
    reuse: bool = False,
) -> _Group:
    """Play the games `where` of a chunk in the compiled loop; their moves by column.

    reuse: the moves columns go into this process's buffers for the rule set, valid
    until the next call with reuse (a fresh 12 MB a chunk cost 3,000 page faults).
    """
    from strategies.compiled import play_batch

    p = r.rules.players
    g = len(where)
    strategies = prep.plan.seating_rows[cg.seating[where], :p]
    seeds = np.ascontiguousarray(cg.seed[where])
    codes = prep.codes[strategies]
    params = prep.params[strategies]
    games = np.zeros((g, 3), np.int64)
    seats = np.zeros((g, p, t.SEAT_COLUMNS), np.int32)
    rows = None
    if records:
        rows = prep.rows_buffer(r, g) if reuse else _Rows.room_for(r, g)
    buffer = prep.moves_buffer(r, BATCH_GAMES)
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


def _play_python(prep: _Prepared, r: _Ruleset, cg: ChunkGames, where: np.ndarray) -> _Group:
    p = r.rules.players
    g = len(where)
    moves = np.full((g * r.max_turns, r.columns), t.NULL, np.int32)
    games = np.zeros((g, 3), np.int64)
    seats = np.zeros((g, p, t.SEAT_COLUMNS), np.int32)
    errors: list[str | None] = [None] * g
    for i, pos in enumerate(where):
        row = prep.plan.seating_rows[cg.seating[pos], :p]
        names = [prep.names[j] for j in row]
        seed = int(cg.seed[pos])
        try:
            # a fresh object per game: no state carried between games, so results do not
            # depend on which worker played which games before
            players = [prep.specs[j].build() for j in row]
            rec = play_game(r.rules, players, seed, names=names)
        except Exception as exc:  # a strategy that fails outside a decision (its constructor)
            errors[i] = f"{type(exc).__name__}: {exc} (game seed {seed})"
            games[i] = (0, storage.END_ERROR_CODE, 0)
            continue
        if rec.error is not None:
            errors[i] = rec.error
        # an error game's last row may be unfinished (no roll): LOG_FORMAT rows are turns
        done = int(np.count_nonzero(rec.moves[: rec.turns, t.M_ROLL] != t.NULL))
        moves[i * r.max_turns : i * r.max_turns + done] = rec.moves[:done]
        end = storage.END_ERROR_CODE if rec.error is not None else int(_END_CODES[rec.end_reason])
        games[i] = (done, end, int(rec.tie_broken))
        seats[i] = rec.seats
    rows = _Rows.room_for(r, g)
    rows.add(r, moves, games[:, 0], 0)
    return _Group(where, games, seats, errors, rows.trimmed(p))


_END_CODES = {"rugs_exhausted": k.END_RUGS_EXHAUSTED, "one_left": k.END_ONE_LEFT}


def _group_parts(
    prep: _Prepared, r: _Ruleset, cg: ChunkGames, group: _Group
) -> tuple[storage.Part, storage.Part, storage.Part]:
    """The (games, seats, moves) parts of one group, straight from the compiled-core arrays."""
    p = r.rules.players
    where = group.where
    g = len(where)
    turns = group.games[:, 0]
    game_id = cg.game_id[where]
    strategies = prep.plan.seating_rows[cg.seating[where], :p]
    ruleset = np.full(g, prep.ruleset_index[r.name], np.int64)
    games = storage.games_part(
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
    seats = storage.seats_part(
        game_id=game_id,
        players=p,
        colours_per_player=r.rules.colours_per_player,
        strategy_names=prep.names,
        strategy=strategies,
        summary=group.seats,
    )
    assert group.rows is not None
    moves = storage.moves_part(
        game_id=game_id[group.rows.game],
        head=group.rows.head,
        lists=group.rows.lists,
        turn=group.rows.turn,
        players=p,
        schema=prep.moves_schema,
    )
    return games, seats, moves


def play_chunk(
    prep: _Prepared, chunk: int, *, reuse_buffers: bool = False
) -> tuple[ChunkResult, tuple[storage.Part, ...]]:
    """Play one chunk; return its report and its (games, seats, moves) parts.

    reuse_buffers: the moves part is a view of this process's buffers, overwritten by
    the next play_chunk with reuse_buffers (write it first; the runner does).
    """
    started = time.perf_counter()
    cg = prep.plan.chunk_games(chunk)
    rs = prep.match_ruleset[cg.match_id]
    compiled = prep.match_compiled[cg.match_id]
    parts: list[tuple[storage.Part, ...]] = []
    errors: list[str] = []
    for ri, r in enumerate(prep.rulesets):
        for is_compiled in (True, False):
            where = np.flatnonzero((rs == ri) & (compiled == is_compiled))
            if len(where) == 0:
                continue
            if is_compiled:
                group = _play_compiled(prep, r, cg, where, reuse=reuse_buffers)
            else:
                group = _play_python(prep, r, cg, where)
            if group.errors:
                errors.extend(e for e in group.errors if e)
            parts.append(_group_parts(prep, r, cg, group))
    tables = parts[0] if len(parts) == 1 else _in_game_order(parts)
    y = n = None
    if prep.study.stopping is not None:
        games, seats = tables[0].to_arrow(), tables[1].to_arrow()
        y, n = block_totals(prep.study.stopping, games, seats, cg)
    result = ChunkResult(
        chunk=chunk,
        games=len(cg),
        moves=tables[2].num_rows,
        errors=len(errors),
        first_error=errors[0] if errors else None,
        seconds=time.perf_counter() - started,
        block_y=y,
        block_n=n,
    )
    return result, tables


def _in_game_order(parts: list[tuple[storage.Part, ...]]) -> tuple[storage.Part, ...]:
    """Several rule sets or loops in one chunk: their parts as one, in game order."""
    keys = (("game_id",), ("game_id", "seat"), ("game_id", "turn"))
    tables = []
    for i in range(3):
        whole = storage.concat_parts([p[i] for p in parts])
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


def write_chunk(run_dir: Path, chunk: int, tables: tuple[storage.Part, ...]) -> None:
    """The chunk's parts, moves and seats first: a chunk is done when all three exist."""
    for name, table in zip(
        ("moves", "seats", "games"), (tables[2], tables[1], tables[0]), strict=True
    ):
        storage.write_part(run_dir, name, chunk, table)


# ---------------------------------------------------------------- worker processes

_WORKER: dict[str, Any] = {}


def _init_worker(
    study: Study, run_dir: str | None, log_queue: Any, level: int, prepared: Any = None
) -> None:
    # Ctrl-C goes to the whole process group; the parent stops the pool
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if log_queue is not None:  # spawn / forkserver: records go to the parent's listener
        logger = logging.getLogger("marrakech_sim")
        logger.handlers[:] = [logging.handlers.QueueHandler(log_queue)]
        logger.setLevel(level)
        logger.propagate = False
    np.random.seed(0)  # forked workers share numpy's global state; nothing here uses it
    _WORKER["prep"] = prepared if prepared is not None else _Prepared(study)
    _WORKER["run_dir"] = Path(run_dir) if run_dir is not None else None
    if prepared is None:
        _WORKER["prep"].warm_up()


def _worker_chunk(chunk: int) -> ChunkResult:
    prep = _WORKER["prep"]
    run_dir = _WORKER["run_dir"]
    result, tables = play_chunk(prep, chunk, reuse_buffers=True)
    if run_dir is not None:
        write_chunk(run_dir, chunk, tables)
    _log_chunk(result)
    return result


def _worker_play_only(chunk: int) -> ChunkResult:
    """Play a chunk without building records (for bench)."""
    prep = _WORKER["prep"]
    started = time.perf_counter()
    cg = prep.plan.chunk_games(chunk)
    for ri, r in enumerate(prep.rulesets):
        where = np.flatnonzero(prep.match_ruleset[cg.match_id] == ri)
        if len(where):
            _play_compiled(prep, r, cg, where, records=False)
    return ChunkResult(chunk, len(cg), 0, 0, None, time.perf_counter() - started, None, None)


def _log_chunk(result: ChunkResult) -> None:
    log.info(
        "chunk %d: %d games, %d moves in %.2f s (pid %d)",
        result.chunk,
        result.games,
        result.moves,
        result.seconds,
        os.getpid(),
    )
    if result.errors:
        log.warning(
            "chunk %d: %d game(s) ended in a strategy fault, first: %s",
            result.chunk,
            result.errors,
            result.first_error,
        )


def default_start_method() -> str:
    """fork where the platform has it (workers inherit the compiled kernels), else spawn."""
    return "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"


@contextlib.contextmanager
def _pool(
    study: Study,
    run_dir: Path | None,
    workers: int,
    start_method: str | None,
    prep: _Prepared,
) -> Iterator[Any]:
    """A worker pool whose log records reach this process's 'marrakech_sim' handlers."""
    method = start_method or default_start_method()
    ctx = multiprocessing.get_context(method)
    logger = logging.getLogger("marrakech_sim")
    level = logger.getEffectiveLevel()
    queue = listener = None
    if method != "fork":
        queue = ctx.Queue(-1)
        listener = logging.handlers.QueueListener(queue, _Forward(), respect_handler_level=False)
        listener.start()
    # forked workers inherit the prepared plan and compiled code; others rebuild them
    inherited = prep if method == "fork" else None
    pool = ctx.Pool(
        workers,
        initializer=_init_worker,
        initargs=(study, str(run_dir) if run_dir else None, queue, level, inherited),
    )
    try:
        yield pool
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
        if listener is not None:
            listener.stop()  # drains the queue first
        if queue is not None:
            queue.close()
            queue.join_thread()


class _Forward(logging.Handler):
    """Hand a worker's record to this process's logger of the same name."""

    def emit(self, record: logging.LogRecord) -> None:
        logger = logging.getLogger(record.name)
        if logger.isEnabledFor(record.levelno):
            logger.handle(record)


# ---------------------------------------------------------------- stopping rules


class _Stopper:
    """A stopping rule over the run's chunks, taken strictly in chunk order."""

    def __init__(self, rule: StoppingRule, plan: Plan) -> None:
        self.rule = rule
        self.plan = plan
        self.pending: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.next_chunk = 0
        self.sums = np.zeros(6)  # Y, N, sum y^2, sum y*n, sum n^2, blocks
        self.decision: dict[str, Any] | None = None
        self.last: dict[str, Any] = {}

    def add(self, chunk: int, y: np.ndarray, n: np.ndarray) -> int | None:
        """Record a chunk's block totals; return the chunk after which to stop, if any."""
        self.pending[chunk] = (y, n)
        while self.decision is None and self.next_chunk in self.pending:
            y, n = self.pending.pop(self.next_chunk)
            used = n > 0
            y, n = y[used], n[used]
            self.sums += [y.sum(), n.sum(), (y * y).sum(), (y * n).sum(), (n * n).sum(), len(n)]
            games = int(self.plan.chunk_first_game[self.next_chunk + 1])
            self.last = self.statistics(games)
            if self.last["stop"]:
                self.decision = {**self.last, "chunk": self.next_chunk}
                return self.next_chunk
            self.next_chunk += 1
        return None

    def statistics(self, games: int) -> dict[str, Any]:
        rule = self.rule
        big_y, big_n, syy, syn, snn, blocks = self.sums
        out: dict[str, Any] = {
            "rule": rule.rule,
            "quantity": rule.quantity,
            "games": games,
            "blocks": int(blocks),
            "n": int(big_n),
            "stop": False,
        }
        if big_n == 0:
            return out
        p = big_y / big_n
        out["estimate"] = p
        enough = games >= rule.min_games
        if rule.rule == "interval_width":
            assert rule.width is not None
            # block-clustered variance of the ratio estimator (games of a block share dice)
            var = (syy - 2 * p * syn + p * p * snn) / big_n**2 * (blocks / max(blocks - 1, 1))
            n_eff = p * (1 - p) / var if var > 0 and 0 < p < 1 else big_n
            lo, hi = wilson_interval(p * n_eff, n_eff, rule.level)
            out.update(lo=lo, hi=hi, width=hi - lo, n_eff=n_eff)
            out["stop"] = bool(enough and blocks >= 2 and hi - lo < rule.width)
            out["decision"] = "interval narrow enough" if out["stop"] else None
        else:
            assert rule.p0 is not None and rule.p1 is not None
            llr = big_y * np.log(rule.p1 / rule.p0) + (big_n - big_y) * np.log(
                (1 - rule.p1) / (1 - rule.p0)
            )
            upper = float(np.log((1 - rule.beta) / rule.alpha))
            lower = float(np.log(rule.beta / (1 - rule.alpha)))
            out.update(llr=float(llr), upper=upper, lower=lower)
            if enough and llr >= upper:
                out.update(stop=True, decision="accept H1 (p1)")
            elif enough and llr <= lower:
                out.update(stop=True, decision="accept H0 (p0)")
        return out


# ---------------------------------------------------------------- running


def new_run_id(study: Study) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    return f"{study.name}-{stamp}-{uuid.uuid4().hex[:6]}"


def _manifest(study: Study, plan: Plan, prep: _Prepared, run_id: str) -> dict[str, Any]:
    import numba

    from marrakech_sim import __version__

    columns = [f.name for f in prep.moves_schema]
    return {
        "format_version": storage.FORMAT_VERSION,
        "run_id": run_id,
        "created": storage.utc_now(),
        "program_version": __version__,
        "code_digest": code_digest(),
        "seed": study.seed,
        "config": study.to_dict(),
        "games_planned": plan.games_planned,
        "blocks": plan.blocks,
        "chunks": plan.chunks,
        "matches": plan.matches_table(),
        "seed_derivation": SEED_DERIVATION,
        "moves_columns": columns,
        "status": "running",
        "games_played": 0,
        "chunks_played": 0,
        "stopping": None,
        "environment": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "pyarrow": pa.__version__,
            "numba": numba.__version__,
            "platform": platform.platform(),
        },
        "sessions": [],
    }


def run_study(
    study: Study,
    out_dir: str | Path,
    *,
    workers: int | None = None,
    start_method: str | None = None,
    progress: Progress | None = None,
) -> RunResult:
    """Play a study into a new run folder `out_dir`.

    workers: processes (default: CPU count); 0 plays in this process. Raises
    RunFolderError when `out_dir` already holds something, RunInterrupted on Ctrl-C.
    """
    run_dir = Path(out_dir)
    if run_dir.exists() and any(p.name != storage.LOG_FILE for p in run_dir.iterdir()):
        raise RunFolderError(
            f"{str(run_dir)!r} is not empty; choose a new folder, or resume a stopped run "
            "with resume_run (marrakech run --resume)"
        )
    run_dir.mkdir(parents=True, exist_ok=True)
    prep = _Prepared(study)
    manifest = _manifest(study, prep.plan, prep, run_dir.name)
    storage.write_manifest(run_dir, manifest)
    return _execute(run_dir, manifest, prep, workers, start_method, progress)


def resume_run(
    run_dir: str | Path,
    *,
    workers: int | None = None,
    start_method: str | None = None,
    progress: Progress | None = None,
) -> RunResult:
    """Finish a run that was interrupted: play exactly the chunks that are not on disk."""
    run_dir = Path(run_dir)
    manifest = storage.read_manifest(run_dir)
    check_same_code(run_dir, manifest)
    study = study_from_manifest(manifest)
    prep = _Prepared(study)
    if prep.plan.games_planned != manifest["games_planned"]:
        raise RunFolderError(
            f"{str(run_dir)!r}: its config now plans {prep.plan.games_planned} games, the "
            f"manifest says {manifest['games_planned']} (a strategy or program changed?)"
        )
    return _execute(run_dir, manifest, prep, workers, start_method, progress)


def study_from_manifest(manifest: dict[str, Any]) -> Study:
    """The study a run folder was made from (its resolved config)."""
    config = dict(manifest["config"])
    return study_from_dict(config, default_name=config.get("name", "study"))


def _execute(
    run_dir: Path,
    manifest: dict[str, Any],
    prep: _Prepared,
    workers: int | None,
    start_method: str | None,
    progress: Progress | None,
) -> RunResult:
    study, plan = prep.study, prep.plan
    if workers is None:
        workers = os.cpu_count() or 1
    removed = storage.remove_temporaries(run_dir)
    done = {c for c in storage.chunks_done(run_dir) if 0 <= c < plan.chunks}
    stopper = _Stopper(study.stopping, plan) if study.stopping else None
    stop_at: int | None = None
    if stopper is not None:  # the rule sees the chunks already on disk, in order
        for chunk in sorted(done):
            y, n = _chunk_totals_from_disk(run_dir, prep, chunk)
            found = stopper.add(chunk, y, n)
            stop_at = found if found is not None else stop_at
    todo = [c for c in range(plan.chunks) if c not in done]
    if stop_at is not None:
        todo = []
    session = {
        "started": storage.utc_now(),
        "workers": workers,
        "start_method": (start_method or default_start_method()) if workers else "in-process",
        "chunks_to_play": len(todo),
    }
    manifest["status"] = "running"
    manifest.setdefault("sessions", []).append(session)
    storage.write_manifest(run_dir, manifest)
    games_before = sum(_chunk_size(plan, c) for c in done)
    log.info(
        "run %s: %d of %d chunks to play (%d games planned, %d on disk%s), %s",
        run_dir,
        len(todo),
        plan.chunks,
        plan.games_planned,
        games_before,
        f", {removed} unfinished part(s) removed" if removed else "",
        f"{workers} workers" if workers else "in-process",
    )
    started = time.perf_counter()
    played = games_before
    errors = 0
    session_games = 0

    def finished(result: ChunkResult) -> int | None:
        nonlocal played, errors, session_games
        played += result.games
        session_games += result.games
        errors += result.errors
        done.add(result.chunk)
        if progress is not None:
            progress(played, plan.games_planned, time.perf_counter() - started)
        if stopper is not None:
            assert result.block_y is not None and result.block_n is not None
            return stopper.add(result.chunk, result.block_y, result.block_n)
        return None

    try:
        if todo and workers == 0:
            for chunk in todo:
                result, tables = play_chunk(prep, chunk, reuse_buffers=True)
                write_chunk(run_dir, chunk, tables)
                _log_chunk(result)
                if (found := finished(result)) is not None:
                    stop_at = found
                    break
        elif todo:
            prep.warm_up()  # forked workers inherit the loaded kernels
            with _pool(study, run_dir, workers, start_method, prep) as pool:
                for result in pool.imap_unordered(_worker_chunk, todo, chunksize=1):
                    if (found := finished(result)) is not None:
                        stop_at = found
                        pool.terminate()
                        break
    except KeyboardInterrupt:
        manifest["status"] = "interrupted"
        _close_session(manifest, session, played, plan, done, stopper)
        storage.write_manifest(run_dir, manifest)
        raise RunInterrupted(
            f"run interrupted after {played} of {plan.games_planned} games; resume it with "
            f"`marrakech run --resume {run_dir}`"
        ) from None
    if stop_at is not None:
        # the decision is taken on the chunks in order: later chunks are not part of the run
        later = [c for c in range(stop_at + 1, plan.chunks)]
        storage.remove_chunks(run_dir, later)
        storage.remove_temporaries(run_dir)
        done = {c for c in done if c <= stop_at}
        played = sum(_chunk_size(plan, c) for c in done)
    complete = len(done) == plan.chunks or (stop_at is not None and len(done) == stop_at + 1)
    manifest["status"] = (
        ("stopped" if stop_at is not None else "complete") if complete else "incomplete"
    )
    _close_session(manifest, session, played, plan, done, stopper)
    storage.write_manifest(run_dir, manifest)
    seconds = time.perf_counter() - started
    log.info("run %s: %s, %d games in %.1f s", run_dir, manifest["status"], session_games, seconds)
    return RunResult(
        run_dir=run_dir,
        games_planned=plan.games_planned,
        games_played=played,
        games_this_session=session_games,
        seconds=seconds,
        errors=errors,
        stopping=manifest["stopping"],
        status=manifest["status"],
    )


def _chunk_size(plan: Plan, chunk: int) -> int:
    return int(plan.chunk_first_game[chunk + 1] - plan.chunk_first_game[chunk])


def _close_session(
    manifest: dict[str, Any],
    session: dict[str, Any],
    played: int,
    plan: Plan,
    done: set[int],
    stopper: _Stopper | None,
) -> None:
    session["finished"] = storage.utc_now()
    manifest["games_played"] = played
    manifest["chunks_played"] = len(done)
    manifest["updated"] = storage.utc_now()
    if stopper is not None:
        manifest["stopping"] = {
            "rule": stopper.rule.to_dict(),
            "stopped": stopper.decision is not None,
            "statistics": _plain(stopper.decision or stopper.last),
        }


def _plain(data: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in data.items()}


def _chunk_totals_from_disk(
    run_dir: Path, prep: _Prepared, chunk: int
) -> tuple[np.ndarray, np.ndarray]:
    import pyarrow.parquet as pq

    assert prep.study.stopping is not None
    name = storage.part_name(chunk)
    games = pq.read_table(run_dir / "games" / name)
    seats = pq.read_table(run_dir / "seats" / name)
    return block_totals(prep.study.stopping, games, seats, prep.plan.chunk_games(chunk))


# ---------------------------------------------------------------- logging and summary


@contextlib.contextmanager
def run_logging(run_dir: Path, console_level: int = logging.WARNING) -> Iterator[None]:
    """Log to run_dir/run.log (INFO) and stderr, from this process and its workers.

    For the CLI (process-wide logging is the entry point's business, not the library's).
    The handlers are wrapped with multiprocessing-logging's MultiProcessingHandler so
    forked workers' records come through its queue; removed and drained on exit.
    """
    from multiprocessing_logging import MultiProcessingHandler

    run_dir.mkdir(parents=True, exist_ok=True)
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(processName)s %(name)s: %(message)s")
    file_handler = logging.FileHandler(run_dir / storage.LOG_FILE)
    file_handler.setLevel(logging.INFO)
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(console_level)
    console.setFormatter(logging.Formatter("%(levelname)s %(processName)s: %(message)s"))
    file_handler.setFormatter(fmt)
    logger = logging.getLogger("marrakech_sim")
    wrapped = [
        MultiProcessingHandler(f"mp-handler-{i}", sub_handler=h)
        for i, h in enumerate((file_handler, console))
    ]
    old_level, old_propagate = logger.level, logger.propagate
    for h in wrapped:
        logger.addHandler(h)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield
    finally:
        for h in wrapped:
            logger.removeHandler(h)
            h.close()  # waits until its queue is drained
        logger.setLevel(old_level)
        logger.propagate = old_propagate


def summarize_run(run_dir: str | Path) -> dict[str, Any]:
    """Win shares per strategy and per seat (block-aware intervals) of a run folder."""
    from marrakech_sim.stats import seat_win_shares, win_rates

    games = storage.read_table(
        run_dir,
        "games",
        ["game_id", "match_id", "ruleset", "players", "turns", "end_reason", "tie_broken", "block"],
    )
    seats = storage.read_table(
        run_dir, "seats", ["game_id", "seat", "strategy", "dirhams", "score", "rank", "win_share"]
    )
    errors = int((games["end_reason"] == "error").sum())
    out: dict[str, Any] = {"games": len(games), "errors": errors}
    if len(games) - errors > 0:
        out["strategies"] = win_rates(games, seats, by=("ruleset",))
        out["seats"] = seat_win_shares(games, seats)
    return out
