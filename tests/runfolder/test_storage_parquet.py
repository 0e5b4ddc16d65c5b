"""The part writer: files pyarrow, pandas and DuckDB read back exactly, laid out as pyarrow's."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from marrakech_sim import runfolder
from marrakech_sim.errors import ConfigError
from marrakech_sim.runfolder import _parquet
from marrakech_sim.runfolder.parts import Column, Part

SCHEMA = pa.schema(
    [
        pa.field("game_id", pa.int64(), nullable=False),
        pa.field("small", pa.int8(), nullable=False),
        pa.field("maybe", pa.int16(), nullable=True),
        pa.field("nothing", pa.int8(), nullable=True),
        pa.field("wide", pa.int32(), nullable=False),
        pa.field("seed", pa.uint64(), nullable=False),
        pa.field("count", pa.uint32(), nullable=True),
        pa.field("flag", pa.bool_(), nullable=False),
        pa.field("share", pa.float32(), nullable=False),
        pa.field("name", pa.string(), nullable=False),
        pa.field("note", pa.string(), nullable=True),
        pa.field("fixed", pa.list_(pa.int16()), nullable=False),
        pa.field("ragged", pa.list_(pa.int8()), nullable=False),
    ]
)


def _part(rows: int, seed: int = 0) -> Part:
    rng = np.random.default_rng(seed)
    ragged = rng.integers(0, 4, rows)  # some lists empty
    offsets = np.zeros(rows + 1, np.int64)
    np.cumsum(ragged, out=offsets[1:])
    game_id = np.repeat(np.arange(rows), 3)[:rows] + 10**9
    maybe = rng.integers(-300, 300, rows).astype(np.int16)
    columns = (
        Column(game_id),
        Column(rng.integers(-128, 128, rows).astype(np.int8)),
        Column(maybe, rng.random(rows) < 0.7),
        Column(np.zeros(rows, np.int8), np.zeros(rows, bool)),
        Column(rng.integers(-(2**31), 2**31 - 1, rows).astype(np.int32)),
        Column(rng.integers(0, 2**64 - 1, rows, dtype=np.uint64)),
        Column(rng.integers(2**32 - 9, 2**32, rows, dtype=np.uint32), rng.random(rows) < 0.9),
        Column(rng.random(rows) < 0.2),
        Column(rng.random(rows).astype(np.float32)),
        Column(rng.integers(0, 3, rows), labels=("alpha", "béta", "")),
        Column(
            rng.integers(0, 2, rows).astype(np.int32), rng.random(rows) < 0.5, labels=("x", "y")
        ),
        Column(np.full(rows * 4, 7, np.int16), offsets=np.arange(0, rows * 4 + 1, 4)),
        Column(rng.integers(-5, 5, int(offsets[-1])).astype(np.int8), offsets=offsets),
    )
    return Part(SCHEMA, columns)


def _write_both(tmp_path: Path, part: Part) -> tuple[Path, Path]:
    mine = runfolder.write_part(tmp_path / "mine", "t", 0, part)
    theirs = runfolder.write_part(tmp_path / "pyarrow", "t", 0, part, writer="pyarrow")
    return mine, theirs


@pytest.mark.parametrize("rows", [0, 1, 7, 8, 9, 1000, 5003])
def test_part_reads_back_as_written(tmp_path: Path, rows: int) -> None:
    """Every kind of column (nulls, uint64, strings, fixed and ragged lists) reads back exactly."""
    part = _part(rows)
    mine, theirs = _write_both(tmp_path, part)
    expected = part.to_arrow()
    found = pq.read_table(mine)
    assert found.schema.equals(SCHEMA)
    assert found.equals(expected)
    assert found.equals(pq.read_table(theirs))
    assert duckdb.sql(f"SELECT count(*) FROM read_parquet('{mine}')").fetchall() == [(rows,)]


def test_kept_small_pages_give_the_bytes_of_a_fresh_compression(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Small pages compressed once and kept (the encoder's cache) give the file that
    compressing every page afresh gives, part after part."""
    parts = [_part(rows, seed) for rows, seed in ((9, 1), (1000, 2), (9, 3), (1000, 1))]
    kept = [b"".join(map(bytes, _parquet.encode_parquet(p))) for p in parts]
    monkeypatch.setattr(_parquet, "_SMALL_PAGE", -1)  # nothing kept: each page compressed
    fresh = [b"".join(map(bytes, _parquet.encode_parquet(p))) for p in parts]
    assert kept == fresh
    assert len(set(kept)) == len(parts)


def test_both_writers_write_the_same_run(tmp_path: Path) -> None:
    """A run written by pyarrow's writer has the tables of the encoder's, every table and column."""
    from marrakech_sim.run.config import study_from_dict
    from marrakech_sim.run.runner import run_study

    study = study_from_dict(
        {
            "seed": 3,
            "games_per_lineup": 24,
            "rulesets": {"two": {"players": 2}, "four": {"players": 4, "orient_at_end": True}},
            "strategies": {"random": {"ref": "random"}, "greedy": {"ref": "greedy"}},
            "schedule": {"kind": "round_robin", "repeat": True},
        }
    )
    for writer in runfolder.WRITERS:
        run_study(study, tmp_path / writer, workers=0, writer=writer)
    assert runfolder.read_manifest(tmp_path / "pyarrow").writer == "pyarrow"
    for table in runfolder.TABLES:
        mine = runfolder.open_dataset(tmp_path / "encoder", table).to_table()
        theirs = runfolder.open_dataset(tmp_path / "pyarrow", table).to_table()
        assert mine.num_rows > 0
        assert mine.equals(theirs), table


def test_unknown_writer_is_a_clear_error(tmp_path: Path) -> None:
    """A writer that is not one of WRITERS is refused, naming it and the allowed ones."""
    with pytest.raises(ConfigError, match=r"'fast'.*'encoder', 'pyarrow'"):
        runfolder.write_part(tmp_path, "t", 0, _part(3), writer="fast")


def test_parquet_schema_and_metadata_match_pyarrow(tmp_path: Path) -> None:
    """Physical and logical types, repetition, codec and game_id statistics are pyarrow's."""
    mine, theirs = _write_both(tmp_path, _part(100))
    a, b = pq.ParquetFile(mine), pq.ParquetFile(theirs)
    assert a.schema.equals(b.schema)
    assert a.schema_arrow.equals(b.schema_arrow)
    assert a.metadata.metadata == b.metadata.metadata  # the Arrow schema in the footer
    for i in range(a.metadata.num_columns):
        column = a.metadata.row_group(0).column(i)
        assert column.compression == "ZSTD"
        assert column.path_in_schema == b.metadata.row_group(0).column(i).path_in_schema
        assert column.is_stats_set == (column.path_in_schema == "game_id")
    stats = a.metadata.row_group(0).column(0).statistics
    assert (stats.min, stats.max, stats.null_count) == (10**9, 10**9 + 33, 0)


def test_duckdb_and_pandas_read_the_same_rows(tmp_path: Path) -> None:
    """DuckDB and pandas see the values pyarrow sees."""
    part = _part(777, seed=3)
    mine, _ = _write_both(tmp_path, part)
    expected = part.to_arrow().to_pandas()
    via_duckdb = duckdb.sql(f"SELECT * FROM read_parquet('{mine}')").df()
    via_pandas = __import__("pandas").read_parquet(mine)
    for name in ("game_id", "small", "wide", "flag", "name"):
        assert (via_duckdb[name].to_numpy() == expected[name].to_numpy()).all(), name
        assert (via_pandas[name].to_numpy() == expected[name].to_numpy()).all(), name
    assert via_duckdb["maybe"].isna().sum() == expected["maybe"].isna().sum()
    assert [list(x) for x in via_duckdb["ragged"]] == [list(x) for x in expected["ragged"]]
    assert (via_duckdb["seed"].to_numpy().astype(np.uint64) == expected["seed"].to_numpy()).all()


def test_row_groups_split_long_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A part longer than ROW_GROUP_ROWS becomes several row groups, read back whole."""
    monkeypatch.setattr(_parquet, "ROW_GROUP_ROWS", 300)
    part = _part(1000, seed=5)
    mine, _ = _write_both(tmp_path, part)
    assert pq.ParquetFile(mine).metadata.num_row_groups == 4
    assert pq.read_table(mine).equals(part.to_arrow())
    # readers skip row groups by their game_id statistics
    found = ds.dataset(mine).to_table(filter=ds.field("game_id") < 10**9 + 5)
    assert found.num_rows == 15


def test_concat_and_take_match_arrow(tmp_path: Path) -> None:
    """concat_parts and Part.take give Arrow's concat_tables and take (labels merged)."""
    a, b = _part(50, seed=1), _part(70, seed=2)
    b = Part(
        b.schema,
        tuple(
            Column(c.values, c.valid, c.offsets, ("zeta", "alpha", "new"))
            if c.labels == ("alpha", "béta", "")
            else c
            for c in b.columns
        ),
    )
    whole = runfolder.concat_parts([a, b])
    expected = pa.concat_tables([a.to_arrow(), b.to_arrow()])
    assert whole.to_arrow().equals(expected)
    order = np.random.default_rng(0).permutation(120)
    assert whole.take(order).to_arrow().equals(expected.take(pa.array(order)))
    mine = runfolder.write_part(tmp_path, "t", 0, whole.take(order))
    assert pq.read_table(mine).equals(expected.take(pa.array(order)))


@settings(max_examples=60, deadline=None)
@given(
    runs=st.lists(
        st.tuples(st.integers(0, 2**12 - 1), st.integers(1, 40)), min_size=1, max_size=40
    ),
    bits=st.sampled_from([1, 2, 3, 7, 8, 9, 12]),
)
def test_rle_hybrid_round_trips(runs: list[tuple[int, int]], bits: int) -> None:
    """Runs of any length, any bit width: the RLE / bit-packed hybrid decodes to the values."""
    values = np.concatenate([np.full(n, v % (1 << bits), np.int32) for v, n in runs]) + 5
    data = _parquet._hybrid(values, 5, bits)
    assert _decode_hybrid(data, bits, len(values)) == (values - 5).tolist()


@settings(max_examples=80, deadline=None)
@given(
    runs=st.lists(
        st.tuples(st.integers(0, 2**12 - 1), st.integers(1, 70)), min_size=0, max_size=60
    ),
    bits=st.sampled_from([1, 2, 3, 5, 7, 8, 9, 12, 16]),
    dtype=st.sampled_from([np.int8, np.int16, np.int32, np.int64]),
)
def test_rle_hybrid_writes_the_reference_bytes(
    runs: list[tuple[int, int]], bits: int, dtype: type
) -> None:
    """The compiled encoder writes the runs of the plain reference below, byte for byte
    (the parts' bytes are fixed: the run digests depend on them)."""
    top = min(1 << bits, int(np.iinfo(dtype).max) - 5)
    values = np.concatenate([np.full(n, v % top, dtype) for v, n in runs] or [np.zeros(0, dtype)])
    values = values + dtype(5)
    assert _parquet._hybrid(values, 5, bits) == _reference_hybrid((values - 5).tolist(), bits)


def _reference_hybrid(values: list[int], bits: int) -> bytes:
    """The runs the part writer chooses, written plainly: groups of 8 values; 8 equal
    values start a repeated run that takes every equal value after them; other groups
    are bit-packed, 63 groups at most a run, the last group padded with zeros."""
    out = bytearray()
    literal: list[int] = []  # the open bit-packed run's values

    def close() -> None:
        if literal:
            groups = len(literal) // 8
            out.append(groups << 1 | 1)
            packed = sum(v << (i * bits) for i, v in enumerate(literal))
            out.extend(packed.to_bytes(groups * bits, "little"))
            literal.clear()

    i, n = 0, len(values)
    while i < n:
        group = values[i : i + 8]
        if len(group) == 8 and len(set(group)) == 1:
            close()
            j = i + 8
            while j < n and values[j] == group[0]:
                j += 1
            header = (j - i) << 1
            while header >= 0x80:
                out.append(header & 0x7F | 0x80)
                header >>= 7
            out.append(header)
            out.extend(group[0].to_bytes((bits + 7) // 8, "little"))
            i = j
            continue
        if len(literal) == 8 * 63:
            close()
        literal.extend(group + [0] * (8 - len(group)))
        i += 8
    close()
    return bytes(out)


def _decode_hybrid(data: bytes, bits: int, count: int) -> list[int]:
    """A reference decoder of the format's RLE / bit-packed hybrid."""
    out: list[int] = []
    pos = 0
    while len(out) < count:
        header = shift = 0
        while True:
            byte = data[pos]
            pos += 1
            header |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        if header & 1:  # bit-packed: header >> 1 groups of 8
            n = (header >> 1) * 8
            packed = int.from_bytes(data[pos : pos + n * bits // 8], "little")
            pos += n * bits // 8
            out += [(packed >> (i * bits)) & ((1 << bits) - 1) for i in range(n)]
        else:
            width = (bits + 7) // 8
            value = int.from_bytes(data[pos : pos + width], "little")
            pos += width
            out += [value] * (header >> 1)
    assert pos == len(data)
    return out[:count]
