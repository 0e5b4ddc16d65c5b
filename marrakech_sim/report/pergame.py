"""The games and their seats in numpy arrays, one slice of whole blocks at a time.

A run of 10 million games has 40 million seat rows. Reducing them per game in SQL (a hash
aggregate over every seat, then a join back to the games) took most of a 10M-game report's
time; holding them all in numpy arrays took 2.5 GB. So the report reads a run in *slices*
(:func:`plan_slices`): a few of its parts at a time, about ``SLICE_GAMES`` games, each
slice holding whole blocks. The runner writes a chunk of whole blocks as one games part
and one seats part of the same number (run.plan), so the parts of a number go together;
parts whose block ranges overlap (Parquet statistics) go into one slice, and a run whose
games and seats parts do not pair by name is read as one slice (its memory then grows with
it). Within a slice the games are read column-wise with pyarrow (:func:`load_games`, ids
made unique across runs and rule set labels as in report.load) and sorted by block, so
every section sums per block with ``bincount``; the seats are read one batch at a time
and scattered straight into (seats x games) arrays (:func:`build_per_game`), a game's
position found from its id by a lookup table. Per-seat arrays are seat-major: a per-game
reduction over the seats is a few whole-array operations, one per seat. The sections add
each slice's block totals into sums (report.tables) and estimate once at the end.

Rule set and strategy codes are the same in every slice: :func:`scan_names` reads the
names of the whole run first (one column of each table).

:class:`PerGame` holds the games that count for balance statistics (``end_reason`` is not
``error``) and have at least one seat row - the games the SQL ``bseats`` view joins.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from marrakech_sim.errors import StatsInputError
from marrakech_sim.report.load import RUN_SHIFT, RunInfo

MAX_STRATEGIES = 254  # codes are kept in int16 with room for "no seat"; the SQL path packs 8 bits
SEAT_BATCH = 1 << 21  # seat rows decoded at a time
CHUNK = 1 << 20  # games per chunk of the element-wise passes: temporaries stay a few MB
SLICE_GAMES = 1 << 20  # games per slice (about 150 MB of arrays at 4 seats, temporaries included)
SEAT_COLUMNS = ("game_id", "seat", "strategy", "dirhams", "score", "rank", "win_share")


@dataclass(frozen=True, slots=True)
class GameColumns:
    """The columns :class:`Games` and :class:`PerGame` share: one entry per game of a
    slice, the games sorted by block then game id.

    Attributes:
        rulesets: rule set labels in code order (sorted; every run's, :func:`scan_names`); a
            name two runs use with different options is ``name@run_id`` (report.load).
        block, match_id: the game's block and match, made unique across runs.
        ruleset: code into ``rulesets``.
        players: seats of the game.
        turns, tie_broken: float, NaN where null (in :class:`PerGame`: where undefined,
            as ``stats.game_metrics`` has them).
        n_winners: length of ``winners`` (0 when null).
    """

    rulesets: list[str]
    block: np.ndarray
    match_id: np.ndarray
    ruleset: np.ndarray
    players: np.ndarray
    turns: np.ndarray
    tie_broken: np.ndarray
    n_winners: np.ndarray

    def __len__(self) -> int:
        return len(self.block)


@dataclass(frozen=True, slots=True)
class PerGame(GameColumns):
    """The balance games of one slice; its ``rulesets`` are ``Games.rulesets``, so a rule
    set may have no balance game.

    Attributes:
        names: strategy names in code order (sorted); every strategy seated in the runs,
            not only in this slice (:func:`scan_names`).
        block_index: 0, 1, ... numbering the slice's distinct blocks in order; ``n_blocks``
            of them.
        strategy: (seats, games) strategy code, -1 where the game has no such seat (or its
            strategy is null).
        rank: (seats, games) rank, 0 where missing.
        win: (seats, games) the seat's win share is above 0.
        win_value: the largest win share of the game (the winners' share; 0 without any).
        seat_advantage, margin, bankrupt, winner_dirhams_share: with ``turns`` and
            ``tie_broken``, the per-game metrics of ``stats.game_metrics`` (float, NaN where
            undefined).
    """

    names: list[str]
    block_index: np.ndarray
    n_blocks: int
    strategy: np.ndarray
    rank: np.ndarray
    win: np.ndarray
    win_value: np.ndarray
    seat_advantage: np.ndarray
    margin: np.ndarray
    bankrupt: np.ndarray
    winner_dirhams_share: np.ndarray

    @property
    def seats(self) -> int:
        """Width of the per-seat arrays (the most seats any game has)."""
        return int(self.strategy.shape[0])


def _numpy(column: pa.ChunkedArray | pa.Array, dtype: str, fill: float | int) -> np.ndarray:
    """A column as numpy ``dtype`` with nulls replaced by ``fill`` (NaN: as pyarrow does)."""
    if column.null_count and not np.isnan(fill):
        column = pc.fill_null(column, fill)
    return np.asarray(column.to_numpy(zero_copy_only=False), dtype=dtype)


def _game_order(block: np.ndarray, game_id: np.ndarray) -> np.ndarray | None:
    """Permutation sorting games by (block, game_id); None when they already are."""
    if len(block) < 2:
        return None
    db = np.diff(block)
    if np.all((db > 0) | ((db == 0) & (np.diff(game_id) > 0))):
        return None
    by_id = np.argsort(game_id, kind="stable")  # near-linear on nearly sorted input
    return by_id[np.argsort(block[by_id], kind="stable")]


class _Lookup:
    """Stored game id of one run -> position in the per-game arrays (``missing`` if none)."""

    def __init__(self, ids: np.ndarray, positions: np.ndarray, missing: int) -> None:
        self.missing = missing
        self.lo = int(ids.min()) if len(ids) else 0
        span = int(ids.max()) - self.lo + 1 if len(ids) else 0
        self.dense: np.ndarray | None = None
        if span <= 4 * len(ids) + 1024:  # ids are numbered 0.. in a run: a table is cheap
            self.dense = np.full(span + 1, missing, "int64")  # the last entry: not in the run
            self.dense[ids - self.lo] = positions
        else:
            order = np.argsort(ids, kind="stable")
            self.ids, self.pos = ids[order], positions[order]

    def __call__(self, game_id: np.ndarray) -> np.ndarray:
        if self.dense is not None:
            rel = game_id - self.lo
            if len(rel) and (rel.min() < 0 or rel.max() >= len(self.dense) - 1):
                rel[(rel < 0) | (rel >= len(self.dense) - 1)] = len(self.dense) - 1
            looked_up: np.ndarray = self.dense[rel]
            return looked_up
        at = np.minimum(np.searchsorted(self.ids, game_id), max(len(self.ids) - 1, 0))
        if not len(self.ids):
            return np.full(len(game_id), self.missing, "int64")
        return np.where(self.ids[at] == game_id, self.pos[at], self.missing)


def _seat_batches(parts: list[Path]) -> Iterator[pa.RecordBatch]:
    for path in parts:
        file = pq.ParquetFile(path, read_dictionary=["strategy"])
        yield from file.iter_batches(batch_size=SEAT_BATCH, columns=list(SEAT_COLUMNS))


INT16_NULL = -32768  # marks a missing score or dirhams in the int16 seat arrays


class _SeatArrays:
    """(seats x games) arrays the seat rows are scattered into; widened on demand.

    Column ``n`` (one past the last game) takes the rows of games that are not reported.
    """

    present: np.ndarray
    strategy: np.ndarray
    rank: np.ndarray
    win_share: np.ndarray
    score: np.ndarray
    dirhams: np.ndarray

    FILL = (
        ("present", "bool", False),
        ("strategy", "int16", -1),  # codes into the sorted names (scan_names)
        ("rank", "int8", 0),
        ("win_share", "float32", np.nan),
        ("score", "int16", INT16_NULL),
        ("dirhams", "int16", INT16_NULL),
    )

    def __init__(self, n: int, width: int) -> None:
        self.n = n
        for name, dtype, fill in self.FILL:
            setattr(self, name, np.full((width, n + 1), fill, dtype))

    @property
    def width(self) -> int:
        return int(self.present.shape[0])

    def drop(self, *names: str) -> None:
        """Let arrays go once they are used (each is 1-4 bytes per seat of every game)."""
        for name in names:
            setattr(self, name, np.empty((0, 0), getattr(self, name).dtype))

    def widen(self, width: int) -> None:
        extra = width - self.width
        for name, _, fill in self.FILL:
            old = getattr(self, name)
            setattr(self, name, np.pad(old, ((0, extra), (0, 0)), constant_values=fill))


@dataclass(frozen=True, slots=True)
class Games(GameColumns):
    """Every game of one slice (error games too).

    Attributes:
        run: the run's index; game_id: made unique across runs.
        is_error: ``end_reason`` is ``error``; balance: it is another value (not null).
    """

    run: np.ndarray
    game_id: np.ndarray
    is_error: np.ndarray
    balance: np.ndarray


_GAME_DTYPES = {
    "run": "int16",
    "game_id": "int64",
    "block": "int64",
    "match_id": "int64",
    "ruleset": "int32",
    "players": "int8",
    "turns": "float64",
    "tie_broken": "float64",
    "n_winners": "int8",
    "is_error": "bool",
    "balance": "bool",
}
_GAME_ARRAYS = tuple(_GAME_DTYPES)
GAME_COLUMNS = (
    "game_id",
    "match_id",
    "ruleset",
    "players",
    "turns",
    "end_reason",
    "winners",
    "tie_broken",
    "block",
)


def _codes(column: pa.ChunkedArray) -> tuple[np.ndarray, list[str]]:
    """Dictionary indices of a string column (-1 for null) and its dictionary's values."""
    if not pa.types.is_dictionary(column.type):
        column = pc.dictionary_encode(column)
    if column.num_chunks == 0:
        return np.zeros(0, "int64"), []
    if column.num_chunks > 1:
        column = pa.chunked_array([column.combine_chunks()])
    chunk = column.chunk(0)
    return _numpy(chunk.indices, "int64", -1), [str(v) for v in chunk.dictionary.to_pylist()]


@dataclass(frozen=True, slots=True)
class Slice:
    """Parts of one run that hold whole blocks: its games, and the seats of those games.

    Attributes:
        whole_run: every part of the run (its parts could not be cut into slices); seat
            rows of games the games parts do not have are then ignored, as SQL's join does.
    """

    run: RunInfo
    games: list[Path]
    seats: list[Path]
    n_games: int
    whole_run: bool


def _block_range(path: Path) -> tuple[int, int | None, int | None]:
    """Rows of a games part and its least and greatest block (None: no rows, or a null).

    From the footer's statistics when every row group has them, else from the column.
    """
    meta = pq.read_metadata(path)
    if not meta.num_rows:
        return 0, None, None
    column = meta.schema.names.index("block") if "block" in meta.schema.names else -1
    lo: int | None = None
    hi: int | None = None
    for i in range(meta.num_row_groups if column >= 0 else 0):
        st = meta.row_group(i).column(column).statistics
        if st is None or not st.has_min_max or st.null_count:
            break
        lo = int(st.min) if lo is None else min(lo, int(st.min))
        hi = int(st.max) if hi is None else max(hi, int(st.max))
    else:
        if column >= 0:
            return meta.num_rows, lo, hi
    block = pq.read_table(path, columns=["block"]).column(0)
    if block.null_count:
        return meta.num_rows, None, None
    bounds = pc.min_max(block)
    return meta.num_rows, int(bounds["min"].as_py()), int(bounds["max"].as_py())


def plan_slices(runs: list[RunInfo], size: int | None = None) -> list[Slice]:
    """Each run's parts in slices of whole blocks, about ``size`` games each.

    A games part and the seats part of the same name go together (the runner writes a
    chunk of whole blocks that way). Parts whose block ranges overlap are kept in one
    slice, so no block spans two slices; a run whose parts do not pair by name, or whose
    blocks have nulls, is one slice. A run's slices come in increasing block order.
    """
    size = SLICE_GAMES if size is None else size
    out: list[Slice] = []
    for run in runs:
        games = {p.name: p for p in run.parts["games"]}
        seats = {p.name: p for p in run.parts["seats"]}
        ranges = {name: _block_range(path) for name, path in games.items()}
        if games.keys() != seats.keys() or any(
            rows and lo is None for rows, lo, _ in ranges.values()
        ):
            total = sum(rows for rows, _, _ in ranges.values())
            out.append(Slice(run, list(games.values()), list(seats.values()), total, True))
            continue
        # parts in block order; overlapping ranges merge into one group
        order = sorted(ranges, key=lambda name: (ranges[name][1] or 0, name))
        groups: list[list[str]] = []
        high: int | None = None
        for name in order:
            _, lo, hi = ranges[name]
            if groups and (lo is None or (high is not None and lo <= high)):
                groups[-1].append(name)
            else:
                groups.append([name])
            if hi is not None:
                high = hi if high is None else max(high, hi)
        current: list[str] = []
        rows = 0
        for group in groups:
            grows = sum(ranges[name][0] for name in group)
            if current and rows + grows > size:
                out.append(_slice(run, current, games, seats, rows))
                current, rows = [], 0
            current += group
            rows += grows
        if current:
            out.append(_slice(run, current, games, seats, rows))
    return out


def _slice(
    run: RunInfo, names: list[str], games: dict[str, Path], seats: dict[str, Path], rows: int
) -> Slice:
    whole = len(names) == len(games)
    return Slice(run, [games[n] for n in names], [seats[n] for n in names], rows, whole)


def _used_values(column: pa.ChunkedArray | pa.Array) -> list[str | None]:
    """Distinct values of a column (None for null), by way of its dictionary."""
    if isinstance(column, pa.ChunkedArray):
        return [v for chunk in column.chunks for v in _used_values(chunk)]
    if not pa.types.is_dictionary(column.type):
        column = pc.dictionary_encode(column)
    indices = _numpy(column.indices, "int64", -1)
    dictionary = column.dictionary.to_pylist()
    used = np.flatnonzero(np.bincount(indices + 1, minlength=len(dictionary) + 1))
    return [None if i == 0 else dictionary[i - 1] for i in used]


def scan_names(runs: list[RunInfo]) -> tuple[list[str], list[str]]:
    """The rule set labels and the strategy names of the runs, each sorted (their codes).

    Rule sets: as :func:`load_games` labels them (a null rule set is ``"None"``);
    strategies: every one seated anywhere, as ``SELECT DISTINCT strategy FROM seats``.
    """
    rulesets: set[str] = set()
    strategies: set[str] = set()
    for run in runs:
        for path in run.parts["games"]:
            file = pq.ParquetFile(path, read_dictionary=["ruleset"])
            for batch in file.iter_batches(batch_size=SEAT_BATCH, columns=["ruleset"]):
                for v in _used_values(batch.column(0)):
                    name = "None" if v is None else str(v)
                    rulesets.add(run.ruleset_labels.get(name, name))
        for path in run.parts["seats"]:
            file = pq.ParquetFile(path, read_dictionary=["strategy"])
            for batch in file.iter_batches(batch_size=SEAT_BATCH, columns=["strategy"]):
                strategies.update(str(v) for v in _used_values(batch.column(0)) if v is not None)
    names = sorted(strategies)
    if len(names) > MAX_STRATEGIES:
        raise ValueError(
            f"{len(names)} strategies in one report; at most {MAX_STRATEGIES} are supported"
        )
    return sorted(rulesets), names


def load_games(part: Slice, rulesets: list[str]) -> Games:
    """Read the games of one slice (LOG_FORMAT.md) column-wise with pyarrow.

    The arrays are allocated once at their full length (the footers give the row counts)
    and filled part by part, so the table is never held twice, nor in pieces. Rule sets
    are coded into ``rulesets`` (:func:`scan_names`).
    """
    run = part.run
    total = sum(pq.read_metadata(path).num_rows for path in part.games)
    g = {name: np.empty(total, dtype) for name, dtype in _GAME_DTYPES.items()}
    code_of = {name: i for i, name in enumerate(rulesets)}
    at = 0
    off = run.index * RUN_SHIFT
    for path in part.games:
        table = pq.read_table(
            path, columns=list(GAME_COLUMNS), read_dictionary=["ruleset", "end_reason"]
        )
        rows = slice(at, at + table.num_rows)
        at += table.num_rows
        index, names = _codes(table.column("ruleset"))
        if np.any(index < 0):  # a null rule set is named "None", as str() names it
            names.append("None")
            index = np.where(index < 0, len(names) - 1, index)
        used = np.bincount(index, minlength=len(names)) > 0
        to_code = np.array(
            [
                code_of[run.ruleset_labels.get(v, v)] if u else -1
                for v, u in zip(names, used, strict=True)
            ],
            "int32",
        )
        g["ruleset"][rows] = to_code[index]
        reason, reasons = _codes(table.column("end_reason"))
        error = reasons.index("error") if "error" in reasons else -2
        g["run"][rows] = run.index
        for name in ("game_id", "block", "match_id"):
            g[name][rows] = _numpy(table.column(name), "int64", 0) + off
        g["players"][rows] = _numpy(table.column("players"), "int8", 0)
        g["turns"][rows] = _numpy(table.column("turns"), "float64", np.nan)
        g["tie_broken"][rows] = _numpy(table.column("tie_broken"), "float64", np.nan)
        winners = pc.list_value_length(table.column("winners"))
        g["n_winners"][rows] = _numpy(winners, "int8", 0)
        g["is_error"][rows] = reason == error
        g["balance"][rows] = (reason >= 0) & (reason != error)
    order = _game_order(g["block"], g["game_id"])
    if order is not None:
        g = {name: a[order] for name, a in g.items()}
    return Games(rulesets=rulesets, **g)


def build_per_game(games: Games, part: Slice, names: list[str]) -> PerGame:
    """The balance games of ``games`` (one slice) with their seats read from its seats parts.

    Consumes ``games``: its arrays are reused (the balance games moved to the front) so
    that the games are not held twice. Strategies are coded into ``names``
    (:func:`scan_names`). Raises StatsInputError when the slice's seats parts hold rows of
    games its games parts do not have (parts that do not pair, so blocks could be cut).
    """
    rulesets = games.rulesets
    n = int(np.count_nonzero(games.balance))
    # stored id -> position among the balance games; other games of the slice: n
    positions = np.full(len(games), n, "int64")
    positions[games.balance] = np.arange(n)
    lookup = _Lookup(games.game_id - part.run.index * RUN_SHIFT, positions, missing=-1)
    del positions
    if games.balance.all():
        g = {name: getattr(games, name) for name in _GAME_ARRAYS}
    else:
        keep = np.flatnonzero(games.balance)
        g = {}
        for name in _GAME_ARRAYS:
            column = getattr(games, name)
            column[: len(keep)] = column[keep]
            g[name] = column[: len(keep)]
    width = max(int(g["players"].max()) if n else 0, 1)
    arrays = _SeatArrays(n, width)
    code_of = {name: i for i, name in enumerate(names)}
    orphans = 0
    for batch in _seat_batches(part.seats):
        orphans += _scatter(batch, lookup, arrays, code_of)
    del lookup
    if orphans and not part.whole_run:
        raise StatsInputError(
            f"{orphans:,} seat rows in {', '.join(p.name for p in part.seats)} of "
            f"{str(part.run.path)!r} belong to games that are not in the games part of that "
            "name: the report reads a run part by part, and this program's runner writes "
            "the games and the seats of a chunk under one part name"
        )
    # what the metrics do not need goes before they are computed (about 120 bytes per
    # game at 4 seats)
    del games
    for name in ("run", "game_id", "is_error", "balance"):
        del g[name]
    return _finish(g, arrays, names, rulesets)


def _int16(column: pa.Array) -> np.ndarray:
    """An integer column as int16, nulls as ``INT16_NULL``."""
    if column.null_count:
        column = pc.fill_null(column, INT16_NULL)
    return np.asarray(column.to_numpy(zero_copy_only=False), dtype="int16")


def _scatter(
    batch: pa.RecordBatch, lookup: _Lookup, arrays: _SeatArrays, code_of: dict[str, int]
) -> int:
    """Put one batch of seat rows into their games' columns of ``arrays``.

    Returns the rows whose game the lookup does not know (they are left out).
    """
    strategy = batch.column("strategy")
    if not pa.types.is_dictionary(strategy.type):
        strategy = pc.dictionary_encode(strategy)
    indices = _numpy(strategy.indices, "int64", -1)
    dictionary = strategy.dictionary.to_pylist()
    to_code = np.array([code_of.get(str(v), -1) for v in dictionary] + [-1], "int16")
    pos = lookup(_numpy(batch.column("game_id"), "int64", -1))
    seat = _numpy(batch.column("seat"), "int64", -1)
    if not len(seat):
        return 0
    unknown = pos < 0
    orphans = int(np.count_nonzero(unknown))
    if orphans:
        pos[unknown] = arrays.n
    if int(seat.max()) >= arrays.width:
        arrays.widen(int(seat.max()) + 1)
    if int(seat.min()) < 0:  # a seat without a number is not reported
        pos[seat < 0] = arrays.n
        seat[seat < 0] = 0
    cell = seat * (arrays.n + 1) + pos
    arrays.present.ravel()[cell] = True
    arrays.strategy.ravel()[cell] = to_code[indices]
    arrays.rank.ravel()[cell] = _numpy(batch.column("rank"), "int8", 0)
    arrays.win_share.ravel()[cell] = _numpy(batch.column("win_share"), "float32", np.nan)
    arrays.score.ravel()[cell] = _int16(batch.column("score"))
    arrays.dirhams.ravel()[cell] = _int16(batch.column("dirhams"))
    return orphans


def _finish(
    g: dict[str, np.ndarray],
    arrays: _SeatArrays,
    names: list[str],
    rulesets: list[str],
) -> PerGame:
    """Drop games without seats, derive the metrics."""
    n = arrays.n
    has_seat = np.logical_or.reduce(arrays.present[:, :n], axis=0)
    keep: np.ndarray | slice = slice(None, n) if has_seat.all() else np.flatnonzero(has_seat)
    present, ws = arrays.present[:, keep], arrays.win_share[:, keep]
    score, dirhams = arrays.score[:, keep], arrays.dirhams[:, keep]
    strategy = arrays.strategy[:, keep]
    if not isinstance(keep, slice):
        g = {name: a[keep] for name, a in g.items()}
    block, players = g["block"], g["players"]
    n = len(block)
    metrics = {name: np.empty(n) for name in _METRICS}
    won = np.empty(ws.shape, bool)
    for a in range(0, n, CHUNK):
        part = slice(a, min(a + CHUNK, n))
        _chunk_metrics(
            ws[:, part],
            score[:, part],
            dirhams[:, part],
            present[:, part],
            players[part],
            {name: m[part] for name, m in metrics.items()},
            won[:, part],
        )
    del present, ws, score, dirhams  # the metrics are made: keep only rank and strategy
    arrays.drop("present", "win_share", "score", "dirhams")
    starts = np.flatnonzero(np.r_[True, block[1:] != block[:-1]]) if n else np.zeros(0, "int64")
    block_index = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, n]))
    return PerGame(
        names=names,
        rulesets=rulesets,
        block=block,
        block_index=block_index,
        n_blocks=len(starts),
        match_id=g["match_id"],
        ruleset=g["ruleset"],
        players=players,
        n_winners=g["n_winners"],
        strategy=strategy,
        rank=arrays.rank[:, keep],
        win=won,
        turns=g["turns"],
        tie_broken=g["tie_broken"],
        **metrics,
    )


_METRICS = ("win_value", "seat_advantage", "margin", "bankrupt", "winner_dirhams_share")


def _chunk_metrics(
    ws: np.ndarray,
    score: np.ndarray,
    dirhams: np.ndarray,
    present: np.ndarray,
    players: np.ndarray,
    out: dict[str, np.ndarray],
    won: np.ndarray,
) -> None:
    """The per-game metrics of ``stats.game_metrics`` for a chunk of games, into ``out``.

    One seat at a time, as the SQL per-game aggregate computed them.
    """
    np.greater(ws, 0, out=won)
    np.fmax.reduce(ws, axis=0, out=out["win_value"], dtype="float64")
    out["win_value"][np.isnan(out["win_value"])] = 0.0  # no win share at all: no winner
    np.subtract(ws[0], 1.0 / players, out=out["seat_advantage"], dtype="float64")
    # margin: top score minus the second (top two values, duplicates counted); NaN with < 2.
    # NaN stands for "no score": fmax skips it, minimum passes it on.
    n = len(players)
    top = np.full(n, np.nan, "float32")
    second = np.full(n, np.nan, "float32")
    bankrupt = np.zeros(n, bool)
    share_sum = np.zeros(n)
    n_share = np.zeros(n, "int16")
    share = np.empty(n)
    value = np.empty(n, "float32")
    mine = np.empty(n)
    for seat in range(len(ws)):
        missing = score[seat] == INT16_NULL
        value[:] = score[seat]
        value[missing] = np.nan
        np.fmax(second, np.minimum(top, value), out=second)
        np.fmax(top, value, out=top)
        bankrupt |= present[seat] & missing
        # winner_dirhams_share: mean over the winners of dirhams / score, in seat order
        mine[:] = dirhams[seat]
        mine[dirhams[seat] == INT16_NULL] = np.nan
        share.fill(np.nan)
        with np.errstate(invalid="ignore", divide="ignore"):
            np.divide(mine, value, out=share, where=won[seat])
        counted = ~np.isnan(share)
        np.add(share_sum, share, out=share_sum, where=counted)
        n_share += counted
    np.subtract(top, second, out=out["margin"], dtype="float64")
    out["bankrupt"][:] = bankrupt
    with np.errstate(invalid="ignore", divide="ignore"):
        np.divide(share_sum, n_share, out=out["winner_dirhams_share"])
    out["winner_dirhams_share"][n_share == 0] = np.nan
