"""A chunk's tables as numpy columns (`Part`), built from the compiled loops' buffers."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from marrakech_sim.play import turns as t
from marrakech_sim.rules.options import COLOUR_LETTERS, FACINGS
from marrakech_sim.runfolder.schema import END_REASONS, GAMES_SCHEMA, INT_MOVE_COLUMNS, SEATS_SCHEMA


@dataclasses.dataclass(frozen=True, slots=True)
class Column:
    """One column of a part as numpy arrays (what `write_part` encodes, no Arrow needed).

    values: one per row, or for a list column one per item (flat); for a string column,
    indices into `labels`; any value where a row is null. valid: per row, None when no
    row is null. offsets: for a list column (int64, rows + 1), row i's items are
    values[offsets[i]:offsets[i + 1]]; lists and their items are never null.
    """

    values: np.ndarray
    valid: np.ndarray | None = None
    offsets: np.ndarray | None = None
    labels: tuple[str, ...] | None = None

    def __len__(self) -> int:
        return len(self.offsets) - 1 if self.offsets is not None else len(self.values)

    def take(self, rows: np.ndarray) -> Column:
        """The column's rows `rows`, in that order."""
        valid = self.valid[rows] if self.valid is not None else None
        if self.offsets is None:
            return Column(self.values[rows], valid, None, self.labels)
        lengths = np.diff(self.offsets)[rows]
        offsets = np.zeros(len(rows) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        starts = self.offsets[:-1][rows]
        items = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1])
        return Column(self.values[items], valid, offsets, self.labels)

    def slice(self, start: int, stop: int) -> Column:
        """Rows start:stop (views, no copy)."""
        valid = self.valid[start:stop] if self.valid is not None else None
        if self.offsets is None:
            return Column(self.values[start:stop], valid, None, self.labels)
        offsets = self.offsets[start : stop + 1]
        values = self.values[offsets[0] : offsets[-1]]
        return Column(values, valid, offsets - offsets[0], self.labels)


@dataclasses.dataclass(frozen=True, slots=True)
class Part:
    """One table's rows of a chunk: a schema and a `Column` per field, in schema order."""

    schema: pa.Schema
    columns: tuple[Column, ...]

    @property
    def num_rows(self) -> int:
        return len(self.columns[0]) if self.columns else 0

    def column(self, name: str) -> Column:
        column: Column = self.columns[self.schema.get_field_index(name)]
        return column

    def take(self, rows: np.ndarray) -> Part:
        """The part's rows `rows`, in that order."""
        return Part(self.schema, tuple(c.take(rows) for c in self.columns))

    def to_arrow(self) -> pa.Table:
        """The part as an Arrow table of its schema."""
        arrays = [_to_arrow(f.type, c) for f, c in zip(self.schema, self.columns, strict=True)]
        return pa.Table.from_arrays(arrays, schema=self.schema)


def concat_parts(parts: Sequence[Part]) -> Part:
    """The rows of `parts` (one schema) one after the other."""
    schema = parts[0].schema
    columns = []
    for i in range(len(schema)):
        cols = [p.columns[i] for p in parts]
        labels = cols[0].labels
        values = []
        if labels is not None:  # one dictionary for all: the union, in order of appearance
            labels = tuple(dict.fromkeys(x for c in cols for x in c.labels or ()))
            index = {x: j for j, x in enumerate(labels)}
            for c in cols:
                remap = np.array([index[x] for x in c.labels or ()] or [0], np.int32)
                values.append(remap[c.values])
        elif cols[0].offsets is not None:  # the items of the rows only
            values = [c.values[c.offsets[0] : c.offsets[-1]] for c in cols]  # type: ignore[index]
        else:
            values = [c.values for c in cols]
        valid = None
        if any(c.valid is not None for c in cols):
            valid = np.concatenate(
                [c.valid if c.valid is not None else np.ones(len(c), bool) for c in cols]
            )
        offsets = None
        if cols[0].offsets is not None:
            lengths = np.concatenate([np.diff(c.offsets) for c in cols if c.offsets is not None])
            offsets = np.zeros(len(lengths) + 1, np.int64)
            np.cumsum(lengths, out=offsets[1:])
        columns.append(Column(np.concatenate(values), valid, offsets, labels))
    return Part(schema, tuple(columns))


def _to_arrow(kind: pa.DataType, col: Column) -> pa.Array:
    mask = ~col.valid if col.valid is not None else None
    if col.offsets is not None:
        items = pa.array(col.values.astype(kind.value_type.to_pandas_dtype()), kind.value_type)
        return pa.ListArray.from_arrays(pa.array(col.offsets.astype(np.int32)), items, type=kind)
    if col.labels is not None:
        indices = pa.array(col.values.astype(np.int32), mask=mask)
        return pc.take(pa.array(list(col.labels) or [""], kind), indices)
    return pa.array(col.values.astype(kind.to_pandas_dtype()), kind, mask=mask)


def _maybe_null(values: np.ndarray, null: np.ndarray) -> Column:
    return Column(values, ~null if null.any() else None)


def _fixed_lists(values: np.ndarray, width: int) -> Column:
    rows = len(values) // width if width else 0
    return Column(values, offsets=np.arange(0, rows * width + 1, width, dtype=np.int64))


def games_part(
    *,
    game_id: np.ndarray,
    match_id: np.ndarray,
    block: np.ndarray,
    seed: np.ndarray,
    ruleset_names: Sequence[str],
    ruleset: np.ndarray,
    players: np.ndarray,
    turns: np.ndarray,
    end_code: np.ndarray,
    tie_broken: np.ndarray,
    winner: np.ndarray,
    errors: Sequence[str | None] | None = None,
) -> Part:
    """The games table of a chunk.

    winner: (games, seats) 0/1 (padded seats 0); end_code: END_REASONS index.
    """
    rows, cols = np.nonzero(winner)
    offsets = np.zeros(len(game_id) + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=len(game_id)), out=offsets[1:])
    if errors is not None:
        labels = tuple(dict.fromkeys(e for e in errors if e is not None))
        index = {e: i for i, e in enumerate(labels)}
        codes = np.array([index[e] if e is not None else 0 for e in errors], np.int32)
        error = Column(codes, np.array([e is not None for e in errors]), labels=labels)
    else:
        error = Column(np.zeros(len(game_id), np.int32), np.zeros(len(game_id), bool), labels=())
    columns = (
        Column(game_id),
        Column(match_id),
        Column(ruleset, labels=tuple(ruleset_names)),
        Column(seed),
        Column(players),
        Column(turns),
        Column(end_code, labels=END_REASONS),
        Column(cols, offsets=offsets),
        Column(tie_broken.astype(bool)),
        error,
        Column(block),
    )
    return Part(GAMES_SCHEMA, columns)


def seats_part(
    *,
    game_id: np.ndarray,
    players: int,
    colours_per_player: int,
    strategy_names: Sequence[str],
    strategy: np.ndarray,
    summary: np.ndarray,
) -> Part:
    """The seats table of games with `players` seats.

    strategy: (games, players) strategy indices; summary: (games, players, SEAT_COLUMNS).
    """
    g = len(game_id)
    flat = summary.reshape(g * players, -1)
    winners = summary[:, :, t.S_WINNER]
    counts = winners.sum(axis=1, keepdims=True)
    share = np.where(winners > 0, 1.0 / np.maximum(counts, 1), 0.0).astype(np.float32).ravel()
    seat = np.tile(np.arange(players, dtype=np.int8), g)
    letters = tuple(
        COLOUR_LETTERS[s : players * colours_per_player : players] for s in range(players)
    )
    score = flat[:, t.S_SCORE]
    elim = flat[:, t.S_ELIMINATED_TURN]
    columns = (
        Column(np.repeat(game_id, players)),
        Column(seat),
        Column(strategy.ravel(), labels=tuple(strategy_names)),
        Column(seat, labels=letters),
        Column(flat[:, t.S_DIRHAMS]),
        Column(flat[:, t.S_VISIBLE]),
        _maybe_null(score, score < 0),
        Column(flat[:, t.S_RANK]),
        Column(share),
        _maybe_null(elim, elim < 0),
        Column(flat[:, t.S_PAID]),
        Column(flat[:, t.S_RECEIVED]),
    )
    return Part(SEATS_SCHEMA, columns)


def moves_part(
    *,
    game_id: np.ndarray,
    head: np.ndarray,
    lists: np.ndarray,
    turn: np.ndarray,
    players: int,
    schema: pa.Schema,
) -> Part:
    """The moves table from the move rows by column (`arena.MoveRows`).

    head: (MOVE_COLUMNS, rows) int16 with turns.NULL for nulls; lists: (0 to 2, rows *
    players) int16, each row's dirhams_after, then visible_after when the rows carry
    them. The columns are the schema's (a replay's schema has no outcome columns).
    """
    ints = dict(INT_MOVE_COLUMNS)
    others: dict[str, Callable[[], Column]] = {
        "game_id": lambda: Column(game_id),
        "turn": lambda: Column(turn),
        "colour": lambda: Column(head[t.M_COLOUR], labels=tuple(COLOUR_LETTERS)),
        "facing": lambda: Column(head[t.M_FACING], labels=tuple(FACINGS)),
        "bankrupt": lambda: Column(head[t.M_BANKRUPT] == 1),
        "dirhams_after": lambda: _fixed_lists(lists[0], players),
        "visible_after": lambda: _fixed_lists(lists[1], players),
    }

    def column(name: str) -> Column:
        if name in ints:
            values = head[ints[name]]
            return _maybe_null(values, values == t.NULL)
        return others[name]()

    return Part(schema, tuple(column(name) for name in schema.names))
