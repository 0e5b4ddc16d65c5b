"""The Parquet encoder behind `runfolder.write_part`: pages straight from numpy columns.

Private to the run folder package: call `marrakech_sim.runfolder.write_part`.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import struct
from typing import Any

import numpy as np
import pyarrow as pa

from marrakech_sim.runfolder.columns import (
    dictionary_indices,
    flat_levels,
    hybrid_bound,
    list_levels,
    rle_hybrid,
    value_range,
)
from marrakech_sim.runfolder.parts import Column, Part
from marrakech_sim.runfolder.schema import COMPRESSION, COMPRESSION_LEVEL

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
        packed = _compressed(codec, plain)
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
    packed = _compressed(codec, body.data)
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


#: pages of at most this many bytes are compressed once per process (`_compressed`)
_SMALL_PAGE = 1024
_small_pages: dict[bytes, pa.Buffer] = {}


def _compressed(codec: pa.Codec, data: bytes | np.ndarray) -> pa.Buffer:
    """`data` compressed by `codec` (the file's one codec and level). A small page (most
    dictionaries, a column of one value) recurs part after part, and each compression
    call costs about 10 us whatever its size (zstd makes a context each time): the small
    ones are kept, by their bytes (the same bytes compress to the same bytes)."""
    if len(data) > _SMALL_PAGE:
        return codec.compress(data)
    key = bytes(data)
    packed = _small_pages.get(key)
    if packed is None:
        if len(_small_pages) >= 4096:  # a bound on the memory they hold (about 4 MB)
            _small_pages.clear()
        packed = _small_pages[key] = codec.compress(data)
    return packed


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
_INTEGERS = frozenset(("i16", "i32", "i64"))  # written zigzag varints


def _put_varint(out: bytearray, n: int) -> None:
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _put(out: bytearray, kind: str, value: Any) -> None:
    """Append one value of a Thrift type (an integer zigzag-encoded) to `out`."""
    if kind in _INTEGERS:
        _put_varint(out, (value << 1) ^ (value >> 63))
    elif kind == "struct":  # already encoded
        out += value
    elif kind in ("bin", "str"):
        data = value.encode() if isinstance(value, str) else value
        _put_varint(out, len(data))
        out += data
    elif kind == "i8":
        out.append(value & 0xFF)
    else:  # "list"
        item_kind, items = value
        code, n = _TYPE_CODES[item_kind], len(items)
        if n < 15:
            out.append(n << 4 | code)
        else:
            out.append(0xF0 | code)
            _put_varint(out, n)
        for item in items:
            _put(out, item_kind, item)


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
            _put_varint(out, (field_id << 1) ^ (field_id >> 63))
        last = field_id
        if kind != "bool":
            _put(out, kind, value)
    out.append(0)
    return bytes(out)
