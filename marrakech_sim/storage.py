"""The run folder of LOG_FORMAT.md: Parquet schemas, atomic part files, the manifest, reading.

    <run folder>/
      run.json               manifest (format_version 1)
      run.log                the run's log (all processes)
      games/part-NNNNNN.parquet   one part per chunk of games, in every table
      seats/part-NNNNNN.parquet
      moves/part-NNNNNN.parquet

A part is written to a hidden temporary name (``.part-NNNNNN.parquet.<pid>.tmp``,
which dataset readers skip) and renamed into place, so a part is whole or absent. A
chunk is done when its part exists in all three tables.

Writing: a chunk's rows are a `Part` per table (numpy columns from the compiled-core
rows, one explicit schema each; `games_part`, `seats_part`, `moves_part`), which
`encode_parquet` turns into a Parquet file directly, laid out as pyarrow lays out the
same table (`Part.to_arrow`); no Arrow arrays, no Python objects per row.

Reading, for the report layer: `read_manifest`, `read_table` (a pandas DataFrame
sorted by game id), `open_dataset` (a pyarrow dataset), `chunks_done`.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import datetime
import functools
import json
import os
import struct
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from marrakech_sim import turns as t
from marrakech_sim._columnar import (
    dictionary_indices,
    flat_levels,
    hybrid_bound,
    list_levels,
    rle_hybrid,
    value_range,
)
from marrakech_sim.errors import RunFolderError
from marrakech_sim.rules.options import COLOUR_LETTERS, FACINGS

FORMAT_VERSION = 1
MANIFEST = "run.json"
LOG_FILE = "run.log"
TABLES = ("games", "seats", "moves")
END_REASONS = ("none", "rugs_exhausted", "one_left", "error")  # by end code
END_ERROR_CODE = 3
COMPRESSION = "zstd"
COMPRESSION_LEVEL = 1  # pyarrow's default; higher levels cost far more than they save


def _field(name: str, kind: pa.DataType, nullable: bool = False) -> pa.Field:
    return pa.field(name, kind, nullable=nullable)


GAMES_SCHEMA = pa.schema(
    [
        _field("game_id", pa.int64()),
        _field("match_id", pa.int64()),
        _field("ruleset", pa.string()),
        _field("seed", pa.uint64()),
        _field("players", pa.int8()),
        _field("turns", pa.int16()),
        _field("end_reason", pa.string()),
        _field("winners", pa.list_(pa.int8())),
        _field("tie_broken", pa.bool_()),
        _field("error", pa.string(), nullable=True),
        # added column: games of a block share their game seed and differ only in seating
        _field("block", pa.int64()),
    ]
)

SEATS_SCHEMA = pa.schema(
    [
        _field("game_id", pa.int64()),
        _field("seat", pa.int8()),
        _field("strategy", pa.string()),
        _field("colours", pa.string()),
        _field("dirhams", pa.int16()),
        _field("visible", pa.int16()),
        _field("score", pa.int16(), nullable=True),
        _field("rank", pa.int8()),
        _field("win_share", pa.float32()),
        _field("eliminated_turn", pa.int16(), nullable=True),
        _field("paid", pa.int16()),
        _field("received", pa.int16()),
    ]
)

_MOVE_FIELDS = [
    _field("game_id", pa.int64()),
    _field("turn", pa.int16()),
    _field("seat", pa.int8()),
    _field("colour", pa.string()),
    _field("rotation", pa.int8(), nullable=True),
    _field("roll", pa.int8()),
    _field("assam_x", pa.int8()),
    _field("assam_y", pa.int8()),
    _field("facing", pa.string()),
    _field("payment", pa.int16()),
    _field("paid_to", pa.int8(), nullable=True),
    _field("bankrupt", pa.bool_()),
    _field("x1", pa.int8(), nullable=True),
    _field("y1", pa.int8(), nullable=True),
    _field("x2", pa.int8(), nullable=True),
    _field("y2", pa.int8(), nullable=True),
    _field("end_rotation", pa.int8(), nullable=True),
    _field("dirhams_after", pa.list_(pa.int16())),
]
# every move column of the compiled rows, in row order, with its Arrow type
_INT_MOVE_COLUMNS = (
    ("seat", t.M_SEAT, np.int8),
    ("rotation", t.M_ROTATION, np.int8),
    ("roll", t.M_ROLL, np.int8),
    ("assam_x", t.M_ASSAM_X, np.int8),
    ("assam_y", t.M_ASSAM_Y, np.int8),
    ("payment", t.M_PAYMENT, np.int16),
    ("paid_to", t.M_PAID_TO, np.int8),
    ("x1", t.M_X1, np.int8),
    ("y1", t.M_Y1, np.int8),
    ("x2", t.M_X2, np.int8),
    ("y2", t.M_Y2, np.int8),
    ("end_rotation", t.M_END_ROTATION, np.int8),
)


def moves_schema(visible_after: bool) -> pa.Schema:
    """The moves schema; `visible_after` (an added column) when the rows carry it."""
    fields = list(_MOVE_FIELDS)
    if visible_after:
        fields.append(_field("visible_after", pa.list_(pa.int16())))
    return pa.schema(fields)


def has_visible_after(columns: int, players: int) -> bool:
    """Whether compiled move rows of `columns` columns carry visible_after per seat."""
    return columns >= t.MOVE_COLUMNS + 2 * players


SCHEMAS = {"games": GAMES_SCHEMA, "seats": SEATS_SCHEMA}


# ---------------------------------------------------------------- building parts


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
        return self.columns[self.schema.get_field_index(name)]

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
    """The moves table from columnised compiled move rows (see `_columnar.columns_into`).

    head: (MOVE_COLUMNS, rows) int16 with turns.NULL for nulls; lists: (1 or 2, rows *
    players) int16, each row's dirhams_after, then visible_after when the rows carry it.
    """
    cols: dict[str, Column] = {"game_id": Column(game_id), "turn": Column(turn)}
    for name, column, _ in _INT_MOVE_COLUMNS:
        cols[name] = _maybe_null(head[column], head[column] == t.NULL)
    cols["colour"] = Column(head[t.M_COLOUR], labels=tuple(COLOUR_LETTERS))
    cols["facing"] = Column(head[t.M_FACING], labels=tuple(FACINGS))
    cols["bankrupt"] = Column(head[t.M_BANKRUPT] == 1)
    cols["dirhams_after"] = _fixed_lists(lists[0], players)
    if "visible_after" in schema.names:
        cols["visible_after"] = _fixed_lists(lists[1], players)
    return Part(schema, tuple(cols[name] for name in schema.names))


# ---------------------------------------------------------------- writing


def part_name(chunk: int) -> str:
    return f"part-{chunk:06d}.parquet"


def write_part(run_dir: Path, table_name: str, chunk: int, table: Part | pa.Table) -> Path:
    """Write one part atomically: a hidden temporary file, then os.replace.

    A `Part` is encoded by `encode_parquet`; an Arrow table by pyarrow (same settings).
    """
    folder = Path(run_dir) / table_name
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / part_name(chunk)
    tmp = folder / f".{part_name(chunk)}.{os.getpid()}.tmp"
    try:
        if isinstance(table, Part):
            with open(tmp, "wb") as f:
                f.writelines(encode_parquet(table))
        else:
            pq.write_table(
                table,
                tmp,
                compression=COMPRESSION,
                compression_level=COMPRESSION_LEVEL,
                write_statistics=list(STATISTICS_COLUMNS),
            )
        os.replace(tmp, final)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    return final


# ---------------------------------------------------------------- Parquet encoding
#
# A Part's file is what pyarrow writes for the same table (one row group per
# ROW_GROUP_ROWS rows, zstd, statistics on game_id, the Arrow schema in the footer) but
# with pages encoded from the numpy columns directly: the nested-level machinery of a
# general writer cost more than everything else of a chunk (list<int16> columns
# dirhams_after and visible_after were half of pyarrow's write). Integer columns are
# dictionary-encoded with the dictionary lo..hi of their values (indices v - lo,
# bit-packed), strings with their labels, booleans and floats plain. Format reference:
# https://github.com/apache/parquet-format (parquet.thrift, Encodings.md).

ROW_GROUP_ROWS = 1 << 20  # pyarrow's default row group length
STATISTICS_COLUMNS = ("game_id",)  # what readers select parts and row groups by
_MAX_DICTIONARY = 1 << 16  # a wider range of integers is written plain

# parquet.thrift enums
_BOOLEAN, _INT32, _INT64, _FLOAT, _DOUBLE, _BYTE_ARRAY = 0, 1, 2, 4, 5, 6
_REQUIRED, _OPTIONAL, _REPEATED = 0, 1, 2
_PLAIN, _RLE, _RLE_DICTIONARY = 0, 3, 8
_DATA_PAGE, _DICTIONARY_PAGE = 0, 2
_ZSTD = 6
_UTF8, _LIST_CONVERTED = 0, 3
_INT_CONVERTED = {(8, True): 15, (16, True): 16, (32, True): 17, (64, True): 18}
_INT_CONVERTED |= {(8, False): 11, (16, False): 12, (32, False): 13, (64, False): 14}


def _leaf_type(kind: pa.DataType) -> tuple[int, list[tuple[int, str, Any]]]:
    """Parquet physical type and SchemaElement annotation fields of an Arrow type."""
    if pa.types.is_boolean(kind):
        return _BOOLEAN, []
    if pa.types.is_float32(kind):
        return _FLOAT, []
    if pa.types.is_float64(kind):
        return _DOUBLE, []
    if pa.types.is_string(kind):
        return _BYTE_ARRAY, [(6, "i32", _UTF8), (10, "struct", _struct((1, "struct", b"\0")))]
    if pa.types.is_integer(kind):
        bits, signed = kind.bit_width, pa.types.is_signed_integer(kind)
        if signed and bits >= 32:  # the physical types themselves, as pyarrow writes them
            return _INT64 if bits == 64 else _INT32, []
        logical = _struct((10, "struct", _struct((1, "i8", bits), (2, "bool", signed))))
        return _INT64 if bits == 64 else _INT32, [
            (6, "i32", _INT_CONVERTED[bits, signed]),
            (10, "struct", logical),
        ]
    raise TypeError(f"the part writer does not encode {kind}")


@functools.lru_cache(maxsize=32)
def _file_constants(schema: pa.Schema) -> tuple[list[bytes], list[bytes], bytes, tuple[int, ...]]:
    """Encoded schema elements, column orders, the Arrow schema key-value; leaf types."""
    elements = [_struct((3, "i32", _REQUIRED), (4, "str", "schema"), (5, "i32", len(schema)))]
    physical = []
    for field in schema:
        repetition = _OPTIONAL if field.nullable else _REQUIRED
        if pa.types.is_list(field.type):
            item = field.type.value_field
            kind, notes = _leaf_type(item.type)
            elements += [
                _struct(
                    (3, "i32", repetition),
                    (4, "str", field.name),
                    (5, "i32", 1),
                    (6, "i32", _LIST_CONVERTED),
                    (10, "struct", _struct((3, "struct", b"\0"))),
                ),
                _struct((3, "i32", _REPEATED), (4, "str", "list"), (5, "i32", 1)),
                _struct(
                    (1, "i32", kind),
                    (3, "i32", _OPTIONAL if item.nullable else _REQUIRED),
                    (4, "str", "element"),
                    *notes,
                ),
            ]
        else:
            kind, notes = _leaf_type(field.type)
            elements.append(
                _struct((1, "i32", kind), (3, "i32", repetition), (4, "str", field.name), *notes)
            )
        physical.append(kind)
    type_order = _struct((1, "struct", b"\0"))
    # pyarrow's readers take column types and names back from the serialised Arrow schema
    arrow_schema = base64.b64encode(schema.serialize().to_pybytes()).decode()
    return (
        elements,
        [type_order] * len(physical),
        _struct((1, "str", "ARROW:schema"), (2, "str", arrow_schema)),
        tuple(physical),
    )


def encode_parquet(part: Part) -> list[bytes | pa.Buffer]:
    """The bytes of a Parquet file holding `part`, in pieces to write one after another."""
    from marrakech_sim import __version__

    elements, orders, arrow_schema, physical = _file_constants(part.schema)
    codec = pa.Codec(COMPRESSION, COMPRESSION_LEVEL)
    pieces: list[bytes | pa.Buffer] = [b"PAR1"]
    offset = 4
    groups = []
    n = part.num_rows
    for ordinal, start in enumerate(range(0, max(n, 1), ROW_GROUP_ROWS)):
        stop = min(start + ROW_GROUP_ROWS, n)
        chunks = []
        group_start = offset
        raw_total = packed_total = 0
        for field, column, kind in zip(part.schema, part.columns, physical, strict=True):
            col = column.slice(start, stop) if (start, stop) != (0, n) else column
            body, meta, raw, packed = _column_chunk(field, col, kind, offset, codec)
            pieces += body
            offset += packed
            raw_total += raw
            packed_total += packed
            chunks.append(_struct((2, "i64", 0), (3, "struct", meta)))
        groups.append(
            _struct(
                (1, "list", ("struct", chunks)),
                (2, "i64", raw_total),
                (3, "i64", stop - start),
                (5, "i64", group_start),
                (6, "i64", packed_total),
                (7, "i16", ordinal),
            )
        )
    footer = _struct(
        (1, "i32", 2),
        (2, "list", ("struct", elements)),
        (3, "i64", n),
        (4, "list", ("struct", groups)),
        (5, "list", ("struct", [arrow_schema])),
        (6, "str", f"marrakech_sim version {__version__}"),
        (7, "list", ("struct", orders)),
    )
    pieces += [footer, struct.pack("<i", len(footer)), b"PAR1"]
    return pieces


def _column_chunk(
    field: pa.Field, col: Column, kind: int, offset: int, codec: pa.Codec
) -> tuple[list[bytes | pa.Buffer], bytes, int, int]:
    """One column chunk: (pages, ColumnMetaData, uncompressed size, compressed size)."""
    body = _page_body(field, col, kind)
    pages: list[bytes | pa.Buffer] = []
    raw_size = packed_size = 0
    dictionary_offset = None
    if body.dictionary is not None:
        entries, plain = body.dictionary
        packed = codec.compress(plain)
        header = _page_header(
            _DICTIONARY_PAGE,
            len(plain),
            packed.size,
            (7, "struct", _struct((1, "i32", entries), (2, "i32", _PLAIN))),
        )
        pages += [header, packed]
        dictionary_offset = offset
        raw_size += len(header) + len(plain)
        packed_size += len(header) + packed.size
    packed = codec.compress(body.data)
    encoding = _PLAIN if body.dictionary is None else _RLE_DICTIONARY
    data_page = _struct(
        (1, "i32", body.levels), (2, "i32", encoding), (3, "i32", _RLE), (4, "i32", _RLE)
    )
    header = _page_header(_DATA_PAGE, len(body.data), packed.size, (5, "struct", data_page))
    pages += [header, packed]
    data_offset = offset + packed_size
    raw_size += len(header) + len(body.data)
    packed_size += len(header) + packed.size
    encodings = [_PLAIN, _RLE] + ([_RLE_DICTIONARY] if body.dictionary is not None else [])
    path = [field.name, "list", "element"] if col.offsets is not None else [field.name]
    statistics = None
    if field.name in STATISTICS_COLUMNS and kind in (_INT32, _INT64):
        statistics = _statistics(body, kind)
    meta = _struct(
        (1, "i32", kind),
        (2, "list", ("i32", encodings)),
        (3, "list", ("str", path)),
        (4, "i32", _ZSTD),
        (5, "i64", body.levels),
        (6, "i64", raw_size),
        (7, "i64", packed_size),
        (9, "i64", data_offset),
        (11, "i64", dictionary_offset),
        (12, "struct", statistics),
    )
    return pages, meta, raw_size, packed_size


@dataclasses.dataclass(frozen=True, slots=True)
class _Body:
    """A column chunk's data page before compression, and what its metadata needs."""

    data: bytes | np.ndarray  # levels, then values (V1 data page)
    levels: int  # level entries (rows, or list items and empty lists): the page's num_values
    dictionary: tuple[int, bytes] | None  # (entries, PLAIN bytes) of the dictionary page
    lo: int  # least and greatest value when an integer column has any (else hi < lo)
    hi: int
    present: int  # non-null values


def _page_body(field: pa.Field, col: Column, kind: int) -> _Body:
    """The levels and values of a column chunk's one data page."""
    is_list = col.offsets is not None
    if col.valid is not None and (is_list or not field.nullable):
        raise ValueError(f"column {field.name!r} has nulls; its field does not allow them")
    values = col.values
    if col.offsets is not None:
        values = values[col.offsets[0] : col.offsets[-1]]
    rows = len(col)
    valid = _NO_NULLS if col.valid is None else col.valid.view(np.int8)
    # room for levels (two kinds at most, each length-prefixed) and 16-bit indices
    out = np.empty(
        8 + 2 * hybrid_bound(len(values) + rows, 2) + hybrid_bound(len(values), 16), np.uint8
    )
    levels = rows
    if col.offsets is not None:
        end, levels = list_levels(np.asarray(col.offsets, np.int64), out)
    elif field.nullable:
        end = flat_levels(valid, rows, out)
    else:
        end = 0
    lo, hi, present = 0, -1, rows
    # a dictionary lo..hi of integers, but for unsigned 32 and 64-bit ones, which Parquet
    # stores as the signed integers of the same bits
    item = field.type.value_type if is_list else field.type
    wide_unsigned = pa.types.is_unsigned_integer(item) and item.bit_width >= 32
    ranged = kind in (_INT32, _INT64) and col.labels is None and not wide_unsigned
    if ranged:
        lo, hi, present = (int(x) for x in value_range(values, valid))
    if col.labels is not None:  # the labels are the dictionary, the values its indices
        words = [x.encode() for x in col.labels] or [b""]
        plain = b"".join(struct.pack("<i", len(w)) + w for w in words)
        width = max((len(words) - 1).bit_length(), 1)
        end = dictionary_indices(values, valid, 0, width, out, end)
        return _Body(out[:end], levels, (len(words), plain), lo, hi, present)
    if ranged and present and hi - lo < _MAX_DICTIONARY:  # integers: the dictionary is lo..hi
        entries = np.arange(lo, hi + 1, dtype="<i8" if kind == _INT64 else "<i4").tobytes()
        width = max((hi - lo).bit_length(), 1)
        end = dictionary_indices(values, valid, lo, width, out, end)
        return _Body(out[:end], levels, (hi - lo + 1, entries), lo, hi, present)
    plain = _plain(values if col.valid is None else values[col.valid], kind)
    return _Body(out[:end].tobytes() + plain, levels, None, lo, hi, present)


_NO_NULLS = np.empty(0, np.int8)


def _hybrid(values: np.ndarray, lo: int, bit_width: int) -> bytes:
    """values - lo in the RLE / bit-packed hybrid encoding."""
    out = np.empty(hybrid_bound(len(values), bit_width), np.uint8)
    end = rle_hybrid(np.ascontiguousarray(values), lo, bit_width, out, 0)
    return out[:end].tobytes()


def warm_up() -> None:
    """Load (or compile) the writer's kernels for every integer type a column may have."""
    out = np.empty(256, np.uint8)
    for dtype in (np.int8, np.int16, np.int32, np.int64):
        values = np.zeros(9, dtype)
        for valid in (_NO_NULLS, np.ones(9, np.int8)):
            value_range(values, valid)
            dictionary_indices(values, valid, 0, 1, out, 0)
    flat_levels(_NO_NULLS, 9, out)
    list_levels(np.arange(3, dtype=np.int64), out)


def _plain(values: np.ndarray, physical: int) -> bytes:
    """PLAIN encoding of the values of a page."""
    if physical == _BOOLEAN:
        return np.packbits(values.astype(bool), bitorder="little").tobytes()
    if physical in (_FLOAT, _DOUBLE):
        return values.astype("<f4" if physical == _FLOAT else "<f8").tobytes()
    # unsigned values wrap to the signed integers of the same bits, as Parquet stores them
    return values.astype("<i8" if physical == _INT64 else "<i4").tobytes()


def _statistics(body: _Body, physical: int) -> bytes:
    """Statistics of an integer column chunk: null count, min and max (old and new fields)."""
    nulls = body.levels - body.present
    if not body.present:
        return _struct((3, "i64", nulls))
    fmt = "<q" if physical == _INT64 else "<i"
    low, high = struct.pack(fmt, body.lo), struct.pack(fmt, body.hi)
    return _struct(
        (1, "bin", high), (2, "bin", low), (3, "i64", nulls), (5, "bin", high), (6, "bin", low)
    )


def _page_header(page_type: int, raw: int, packed: int, header: tuple[int, str, Any]) -> bytes:
    return _struct((1, "i32", page_type), (2, "i32", raw), (3, "i32", packed), header)


# Thrift compact protocol, the little of it Parquet's footer and page headers use:
# a struct is field headers (id delta << 4 | type) and values, then a 0 byte.
_TYPE_CODES = {"i8": 3, "i16": 4, "i32": 5, "i64": 6, "bin": 8, "str": 8, "list": 9, "struct": 12}


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _int(n: int) -> bytes:
    return _varint((n << 1) ^ (n >> 63))  # zigzag


def _value(kind: str, value: Any) -> bytes:
    if kind == "i8":
        return bytes([value & 0xFF])
    if kind in ("i16", "i32", "i64"):
        return _int(value)
    if kind in ("bin", "str"):
        data = value.encode() if isinstance(value, str) else value
        return _varint(len(data)) + data
    if kind == "list":
        item_kind, items = value
        return _list(item_kind, [_value(item_kind, x) for x in items])
    return value  # "struct": already encoded


def _list(item_kind: str, encoded: Sequence[bytes]) -> bytes:
    code = _TYPE_CODES[item_kind]
    n = len(encoded)
    head = bytes([n << 4 | code]) if n < 15 else bytes([0xF0 | code]) + _varint(n)
    return head + b"".join(encoded)


def _struct(*fields: tuple[int, str, Any]) -> bytes:
    out = bytearray()
    last = 0
    for field_id, kind, value in fields:
        if value is None:
            continue
        code = (1 if value else 2) if kind == "bool" else _TYPE_CODES[kind]
        if 0 < field_id - last <= 15:
            out.append((field_id - last) << 4 | code)
        else:
            out.append(code)
            out += _int(field_id)
        last = field_id
        if kind != "bool":
            out += _value(kind, value)
    out.append(0)
    return bytes(out)


def chunks_done(run_dir: Path) -> set[int]:
    """Chunks whose part exists in every table."""
    found: list[set[int]] = []
    for table in TABLES:
        folder = Path(run_dir) / table
        names = os.listdir(folder) if folder.is_dir() else []
        found.append(
            {_chunk_of(n) for n in names if n.startswith("part-") and n.endswith(".parquet")}
        )
    return set.intersection(*found) if found else set()


def _chunk_of(name: str) -> int:
    try:
        return int(name[len("part-") : -len(".parquet")])
    except ValueError:
        return -1


def remove_temporaries(run_dir: Path) -> int:
    """Remove leftover temporary part files (a run killed while writing); return how many."""
    count = 0
    for table in TABLES:
        folder = Path(run_dir) / table
        if folder.is_dir():
            for name in os.listdir(folder):
                if name.startswith(".part-") and name.endswith(".tmp"):
                    with contextlib.suppress(FileNotFoundError):
                        (folder / name).unlink()
                        count += 1
    return count


def remove_chunks(run_dir: Path, chunks: Sequence[int]) -> None:
    """Delete the parts of `chunks` in every table (games first: the chunk is then not done)."""
    for chunk in chunks:
        for table in TABLES:
            with contextlib.suppress(FileNotFoundError):
                (Path(run_dir) / table / part_name(chunk)).unlink()


def write_manifest(run_dir: Path, manifest: dict[str, Any]) -> None:
    """Write run.json atomically."""
    path = Path(run_dir) / MANIFEST
    tmp = Path(run_dir) / f".{MANIFEST}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=False) + "\n")
    os.replace(tmp, path)


def utc_now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---------------------------------------------------------------- reading


def read_manifest(run_dir: str | Path) -> dict[str, Any]:
    """The run's manifest; RunFolderError when the folder is not a run folder."""
    path = Path(run_dir) / MANIFEST
    try:
        manifest = json.loads(path.read_text())
    except FileNotFoundError as exc:
        raise RunFolderError(f"{str(run_dir)!r} is not a run folder: no {MANIFEST}") from exc
    except (OSError, json.JSONDecodeError) as exc:
        raise RunFolderError(f"cannot read {str(path)!r}: {exc}") from exc
    version = manifest.get("format_version") if isinstance(manifest, dict) else None
    if version != FORMAT_VERSION:
        raise RunFolderError(
            f"{str(path)!r}: format_version = {version!r}; this program reads {FORMAT_VERSION}"
        )
    return manifest


def open_dataset(run_dir: str | Path, table: str) -> ds.Dataset:
    """One table of a run folder as a pyarrow dataset (all its parts)."""
    if table not in TABLES:
        raise RunFolderError(f"unknown table {table!r}; allowed: {', '.join(TABLES)}")
    folder = Path(run_dir) / table
    if not folder.is_dir():
        raise RunFolderError(f"{str(run_dir)!r} has no {table}/ folder")
    schema = GAMES_SCHEMA if table == "games" else SEATS_SCHEMA if table == "seats" else None
    return ds.dataset(folder, format="parquet", schema=schema)


def read_table(
    run_dir: str | Path, table: str, columns: Sequence[str] | None = None
) -> pd.DataFrame:
    """One table as a pandas DataFrame, sorted by game id (then seat or turn)."""
    data = open_dataset(run_dir, table).to_table(columns=list(columns) if columns else None)
    keys = {"games": ["game_id"], "seats": ["game_id", "seat"], "moves": ["game_id", "turn"]}
    present = [k for k in keys[table] if k in data.column_names]
    if present:
        data = data.sort_by([(k, "ascending") for k in present])
    return data.to_pandas()


def iter_parts(run_dir: str | Path, table: str) -> Iterator[tuple[int, Path]]:
    """(chunk, path) of each part of a table, in chunk order."""
    folder = Path(run_dir) / table
    names = sorted(os.listdir(folder)) if folder.is_dir() else []
    for name in names:
        if name.startswith("part-") and name.endswith(".parquet"):
            yield _chunk_of(name), folder / name
