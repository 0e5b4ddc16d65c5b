"""Playing one chunk of a run: its games (through `arena.play_games`) and its tables.

A chunk is whole blocks of games; `play_chunk` has the arena play them, rule set by rule
set, and builds the chunk's three tables (`runfolder.Part`), `write_chunk` writes them.
Here: what the strategies print, the chunk's parts and per-block totals. Nothing here
knows of processes, nor plays a game itself.
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
from marrakech_sim.arena import Buffers, Games, MoveRows, Roster, Ruleset, play_games
from marrakech_sim.play import turns as t
from marrakech_sim.play.strategy import StrategySpec
from marrakech_sim.run.config import StoppingRule, Study
from marrakech_sim.run.plan import ChunkGames, Plan
from marrakech_sim.run.precompile import Helper

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


class Workspace:
    """What one process reuses from chunk to chunk: the arena's buffers, and its marker in
    a worker pool. Never pickled: a `Prepared` sent to another process gets a new one."""

    def __init__(self) -> None:
        #: this worker's shared marker (see run.pool.ChunkPool): [chunk, position of the
        #: Python-loop game being played, its start time]; None outside a pool
        self.marker: Any = None
        self.buffers = Buffers()

    def watch(self, where: np.ndarray) -> Callable[[int | None], None] | None:
        """play_games' on_game for the games `where` of a chunk: the marker names the
        Python-loop game being played (its position in the chunk) and when it began."""
        marker = self.marker
        if marker is None:
            return None

        def on_game(i: int | None) -> None:
            if i is None:
                marker[1] = -1
            else:
                marker[2], marker[1] = time.monotonic(), where[i]

        return on_game


class Prepared:
    """What every chunk of a study needs: the plan, rule sets and the arena's roster of
    the study's strategies (picklable, the same in every process), and this process's
    `workspace` (left out when pickled: the other side gets a new one)."""

    def __init__(self, study: Study) -> None:
        self.study = study
        self.plan = Plan(study)
        self.rulesets = [
            Ruleset.of(rules, name, replay_only=study.replay_only) for name, rules in study.rulesets
        ]
        self.ruleset_index = {r.name: i for i, r in enumerate(self.rulesets)}
        self.names = study.strategy_names
        self.specs: tuple[StrategySpec, ...] = study.strategies
        #: the strategies by index (plan.seating_rows), with their compiled twins
        self.roster = Roster.of(self.specs, self.names)
        self.match_ruleset = np.array(
            [self.ruleset_index[m.ruleset] for m in self.plan.matches], np.int64
        )
        # (line-ups of rule sets with other player counts differ in length)
        self.match_compiled = np.array(
            [
                bool(self.roster.compiled(np.array([self.names.index(x) for x in m.lineup])))
                for m in self.plan.matches
            ],
            bool,
        )
        self.moves_visible = {
            r.name: runfolder.has_visible_after(r.columns, r.rules.players) for r in self.rulesets
        }
        self.visible_after = all(self.moves_visible.values())
        self.moves_schema = runfolder.moves_schema(self.visible_after, study.replay_only)
        #: seconds per decision of a Python-loop strategy (study.decision_seconds)
        self.decision_seconds: float = study.decision_seconds
        #: warm_up's measure of the searching twins: (match, seconds per game at
        #: WARM_UP_BUDGET), see search_seconds
        self.search_game_seconds: tuple[int, float] | None = None
        #: this process's buffers and marker
        self.workspace = Workspace()

    @property
    def codes(self) -> np.ndarray:
        """Per strategy, its compiled twin's code (-1: none)."""
        return self.roster.codes

    @property
    def params(self) -> np.ndarray:
        """Per strategy, its compiled twin's parameter vector."""
        return self.roster.params

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
        (arena.twins.SEARCHING). One game goes through the Python loop per rule set that uses
        it, and one more for each line-up with a built-in no game played yet (greedy
        stands in for plug-ins), so every built-in's kernels are compiled before any of
        its decisions is timed. So a
        forked worker (a replacement too) starts with every kernel of its chunks loaded.

        compiling(words): told first when a loop is to be compiled into an empty kernel
        cache (what, and about how long: minutes on a fresh installation, once).
        """
        # searching twins or not -> the match warmed up: the first without; with, the one
        # of the largest budget (its games are timed for search_seconds: placement-only's
        # budget 0 plays as fast as greedy)
        first: dict[bool, int] = {}
        largest = -1.0
        for m in np.flatnonzero(self.match_compiled).tolist():
            budget = self._search_budget(m)
            if budget is None:
                first.setdefault(False, m)
            elif budget > largest:
                first[True], largest = m, budget
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
        # one Python-loop game per rule set, and one more for each built-in not yet played:
        # their kernels compile here, untimed (in a game a first decision that compiles runs
        # past decision_seconds and is a fault); greedy stands in for a plug-in (one could
        # crash this process)
        rulesets: set[int] = set()
        played: set[str] = set()
        for m in np.flatnonzero(~self.match_compiled).tolist():
            ri = int(self.match_ruleset[m])
            specs = [self.specs[self.names.index(x)] for x in self.plan.matches[m].lineup]
            new = {spec.ref for spec in specs if spec.is_builtin} - played
            if ri in rulesets and not new:
                continue
            rulesets.add(ri)
            played |= new
            builtins = [spec if spec.is_builtin else StrategySpec.of("greedy") for spec in specs]
            seats = np.arange(len(specs))[None, :]
            r = self.rulesets[ri]
            play_games(Roster.of(builtins), r, seats, np.zeros(1, np.uint64), compiled=False)
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
            roster = self.roster
            if searching:  # the kernels load the same at any budget (a value, not a type)
                roster = roster.with_budget_at_most(WARM_UP_BUDGET)
            where = np.arange(2)
            games = play_games(roster, r, self.seatings(r, cg, where), cg.seed)
            if searching:  # timed again: the first play's time is the loop's load or compile
                started = time.perf_counter()
                play_games(roster, r, self.seatings(r, cg, where), cg.seed)
                self.search_game_seconds = (m, (time.perf_counter() - started) / 2)
            elif self.study.keep_moves < 1:
                # blocks whose moves are not kept play the loop that writes no rows
                play_games(roster, r, self.seatings(r, cg, where), cg.seed, keep_moves=False)
            if helper is not None:  # the loop is compiled: merge the helper's kernels
                helper.finish()
                helper = None
                runfolder.warm_up_writer()
            for part in group_parts(self, r, cg, where, games):
                runfolder.parquet_file(part)
            kernel_cache.mark_compiled(kinds[searching])

    def seatings(self, r: Ruleset, cg: ChunkGames, where: np.ndarray) -> np.ndarray:
        """The roster indices of the seats of the games `where` of a chunk (rule set r)."""
        return self.plan.seating_rows[cg.seating[where], : r.rules.players]

    def search_seconds(self) -> float | None:
        """A rough figure for the seconds the study's games with a searching twin take on
        one core, from warm_up's two games (timed once the loop is loaded) of the line-up
        of the largest budget, played at WARM_UP_BUDGET, scaled by each line-up's
        largest budget and its share of the measured line-up's turns times players (a
        search's cost per decision grows with its budget and its horizon, one round of
        every seat); None before warm_up, or without searching twins. An over-estimate
        where the search expands small chance trees exactly instead of sampling them."""
        if self.search_game_seconds is None:
            return None
        measured, seconds = self.search_game_seconds
        played = max(min(self._search_budget(measured) or 1.0, WARM_UP_BUDGET), 1.0)
        plan = self.plan
        per_match = plan.match_rounds * plan.match_size

        def size(m: int) -> float:
            r = self.rulesets[int(self.match_ruleset[m])]
            return float(r.max_turns * r.rules.players)

        total = 0.0
        for m in range(len(plan.matches)):
            budget = self._search_budget(m)
            if budget is None or not self.match_compiled[m]:
                continue
            scale = max(budget, 1.0) / played * size(m) / size(measured)
            total += per_match[m] * seconds * scale
        return total

    def _search_budget(self, m: int) -> float | None:
        """The largest budget of match m's searching twins; None if it seats none."""
        rows = np.array([self.names.index(x) for x in self.plan.matches[m].lineup])
        searching = self.roster.searching(rows[:, None])
        if not searching.any():
            return None
        return float(self.params[rows[searching], 0].max())


def play_group(
    prep: Prepared,
    r: Ruleset,
    cg: ChunkGames,
    where: np.ndarray,
    *,
    records: bool = True,
    reuse: bool = False,
    lost: dict[int, str] | None = None,
) -> Games:
    """Have the arena play the games `where` (positions in the chunk) of rule set r.

    records: keep the move rows of the games the study keeps them for (cg.moves_kept).
    reuse: the rows go into this process's buffers, valid until the next call with
    reuse. lost: games (positions in the chunk) not to play, with why (a worker died in
    them twice, see run.pool): they are recorded as faults with no moves. Each seat of a
    Python-loop game has prep.decision_seconds per decision.
    """
    return play_games(
        prep.roster,
        r,
        prep.seatings(r, cg, where),
        cg.seed[where],
        keep_moves=cg.moves_kept[where] if records else False,
        decision_seconds=prep.decision_seconds,
        lost=_positions_in(where, lost),
        buffers=prep.workspace.buffers if reuse else None,
        on_game=prep.workspace.watch(where),
    )


def _positions_in(where: np.ndarray, lost: dict[int, str] | None) -> dict[int, str] | None:
    """`lost` (chunk positions -> why) as positions among the games `where` (sorted)."""
    if not lost:
        return None
    found = np.searchsorted(where, list(lost))
    return {
        int(i): why
        for i, (pos, why) in zip(found, lost.items(), strict=True)
        if i < len(where) and where[i] == pos
    }


def group_parts(
    prep: Prepared, r: Ruleset, cg: ChunkGames, where: np.ndarray, group: Games
) -> tuple[runfolder.Part, runfolder.Part, runfolder.Part]:
    """The (games, seats, moves) parts of the games `where` of the chunk (rule set r),
    straight from the arena's arrays."""
    p = r.rules.players
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
    # the rows of the games the study keeps moves for (play_group's records)
    rows = group.rows if group.rows is not None else MoveRows.room_for(r, 0).trimmed(p)
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

    lost: games not to play, recorded as faults (see `play_group`).

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
        where = np.flatnonzero(rs == ri)
        if len(where) == 0:
            continue
        with contextlib.ExitStack() as python_loop:
            if not compiled[where].all():
                python_loop.enter_context(captured_output(f"chunk {chunk}"))
            group = play_group(prep, r, cg, where, reuse=reuse_buffers, lost=lost)
        if group.errors:
            errors.extend(e for e in group.errors if e)
        parts.append(group_parts(prep, r, cg, where, group))
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
    out = []
    for name, ruleset, lineup, seeds in samples:
        r = prep.rulesets[prep.ruleset_index[ruleset]]
        roster = Roster.of([prep.study.strategy(x) for x in lineup], lineup)
        seats = np.arange(len(lineup))[None, :]
        for seed in seeds:
            with captured_output("the reproducibility check before the run"):
                a, b = (
                    play_games(
                        roster,
                        r,
                        seats,
                        np.array([seed], np.uint64),
                        decision_seconds=prep.decision_seconds,
                        compiled=False,
                    )
                    for _ in range(2)
                )
            if any(a.errors or ()) or any(b.errors or ()):
                # a fault (a decision past its time budget while its kernels compiled, under
                # load) says nothing of the seed's use: the run handles faults
                continue
            if not a.same_as(b):
                out.append(
                    f"strategy {name!r} played two different games from one seed ({seed}, "
                    f"line-up {', '.join(lineup)}): its games cannot be reproduced (does it use "
                    "a global random generator instead of view.rng?)"
                )
                break
    return out
