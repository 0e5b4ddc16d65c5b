"""The run folder of LOG_FORMAT.md: Parquet schemas, atomic part files, the manifest, reading.

    <run folder>/
      run.json               manifest (format_version 1)
      run.log                the run's log (all processes)
      games/part-NNNNNN.parquet   one part per chunk of games, in every table
      seats/part-NNNNNN.parquet
      moves/part-NNNNNN.parquet

A part is written to a hidden temporary name (``.part-NNNNNN.parquet.<pid>.tmp``,
which dataset readers skip) and renamed into place, so a part is whole or absent. A
chunk is done when its part exists in all three tables. Tables are built from numpy
arrays (compiled-core rows), never from Python tuples, with one explicit schema each.

Reading, for the report layer: `read_manifest`, `read_table` (a pandas DataFrame
sorted by game id), `open_dataset` (a pyarrow dataset), `chunks_done`.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
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
from marrakech_sim.errors import RunFolderError
from marrakech_sim.rules.options import COLOUR_LETTERS, FACINGS

FORMAT_VERSION = 1
MANIFEST = "run.json"
LOG_FILE = "run.log"
TABLES = ("games", "seats", "moves")
END_REASONS = ("none", "rugs_exhausted", "one_left", "error")  # by end code
END_ERROR_CODE = 3
COMPRESSION = "zstd"  # default level: higher levels cost far more than they save

_LETTERS = pa.array(list(COLOUR_LETTERS), pa.string())
_FACINGS = pa.array(list(FACINGS), pa.string())
_END_REASONS = pa.array(list(END_REASONS), pa.string())


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


# ---------------------------------------------------------------- building tables


def _nullable(values: np.ndarray, dtype: type) -> pa.Array:
    """An Arrow integer array with turns.NULL as null (validity bitmap built in numpy)."""
    mask = values == t.NULL
    arr = values.astype(dtype)
    if not mask.any():
        return pa.array(arr)
    bits = np.packbits(~mask, bitorder="little")
    kind = pa.from_numpy_dtype(np.dtype(dtype))
    return pa.Array.from_buffers(kind, len(arr), [pa.py_buffer(bits), pa.py_buffer(arr)])


def _lists(values: np.ndarray, width: int | np.ndarray, kind: pa.DataType) -> pa.Array:
    """A list array from a flat numpy array and a fixed or per-row list length."""
    if np.isscalar(width):
        rows = len(values) // int(width) if width else 0
        offsets = np.arange(0, rows * int(width) + 1, int(width), dtype=np.int32)
    else:
        offsets = np.zeros(len(width) + 1, dtype=np.int32)
        np.cumsum(width, out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values, type=kind))


def games_table(
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
) -> pa.Table:
    """The games table of a chunk.

    winner: (games, seats) 0/1 (padded seats 0); end_code: END_REASONS index.
    """
    rows, cols = np.nonzero(winner)
    if errors is not None:
        error = pa.array(errors, pa.string())
    else:
        error = pa.nulls(len(game_id), pa.string())
    columns = [
        pa.array(game_id.astype(np.int64)),
        pa.array(match_id.astype(np.int64)),
        pc.take(pa.array(list(ruleset_names), pa.string()), pa.array(ruleset.astype(np.int32))),
        pa.array(seed.astype(np.uint64)),
        pa.array(players.astype(np.int8)),
        pa.array(turns.astype(np.int16)),
        pc.take(_END_REASONS, pa.array(end_code.astype(np.int32))),
        _lists(cols.astype(np.int8), np.bincount(rows, minlength=len(game_id)), pa.int8()),
        pa.array(tie_broken.astype(bool)),
        error,
        pa.array(block.astype(np.int64)),
    ]
    return pa.Table.from_arrays(columns, schema=GAMES_SCHEMA)


def seats_table(
    *,
    game_id: np.ndarray,
    players: int,
    colours_per_player: int,
    strategy_names: Sequence[str],
    strategy: np.ndarray,
    summary: np.ndarray,
) -> pa.Table:
    """The seats table of games with `players` seats.

    strategy: (games, players) strategy indices; summary: (games, players, SEAT_COLUMNS).
    """
    g = len(game_id)
    flat = summary.reshape(g * players, -1)
    winners = summary[:, :, t.S_WINNER]
    counts = winners.sum(axis=1, keepdims=True)
    share = np.where(winners > 0, 1.0 / np.maximum(counts, 1), 0.0).astype(np.float32).ravel()
    seat = np.tile(np.arange(players, dtype=np.int8), g)
    letters = pa.array(
        [COLOUR_LETTERS[s : players * colours_per_player : players] for s in range(players)],
        pa.string(),
    )
    score = flat[:, t.S_SCORE]
    elim = flat[:, t.S_ELIMINATED_TURN]
    columns = [
        pa.array(np.repeat(game_id.astype(np.int64), players)),
        pa.array(seat),
        pc.take(
            pa.array(list(strategy_names), pa.string()), pa.array(strategy.ravel().astype(np.int32))
        ),
        pc.take(letters, pa.array(seat.astype(np.int32))),
        pa.array(flat[:, t.S_DIRHAMS].astype(np.int16)),
        pa.array(flat[:, t.S_VISIBLE].astype(np.int16)),
        pa.array(score.astype(np.int16), mask=score < 0),
        pa.array(flat[:, t.S_RANK].astype(np.int8)),
        pa.array(share),
        pa.array(elim.astype(np.int16), mask=elim < 0),
        pa.array(flat[:, t.S_PAID].astype(np.int16)),
        pa.array(flat[:, t.S_RECEIVED].astype(np.int16)),
    ]
    return pa.Table.from_arrays(columns, schema=SEATS_SCHEMA)


def moves_table(
    *,
    game_id: np.ndarray,
    head: np.ndarray,
    tail: np.ndarray,
    turn: np.ndarray,
    players: int,
    schema: pa.Schema,
) -> pa.Table:
    """The moves table from columnised compiled move rows (see `_columnar.columns_of`).

    head: (MOVE_COLUMNS, rows) int16 with turns.NULL for nulls; tail: (rows, per-seat
    columns) int16: dirhams_after, then visible_after when the rows carry it.
    """
    cols: dict[str, pa.Array] = {
        "game_id": pa.array(game_id.astype(np.int64)),
        "turn": pa.array(turn.astype(np.int16)),
    }
    for name, column, dtype in _INT_MOVE_COLUMNS:
        cols[name] = _nullable(head[column], dtype)
    cols["colour"] = pc.take(_LETTERS, pa.array(head[t.M_COLOUR]))
    cols["facing"] = pc.take(_FACINGS, pa.array(head[t.M_FACING]))
    cols["bankrupt"] = pa.array(head[t.M_BANKRUPT] == 1)
    cols["dirhams_after"] = _lists(
        np.ascontiguousarray(tail[:, :players]).ravel(), players, pa.int16()
    )
    if "visible_after" in schema.names:
        vis = np.ascontiguousarray(tail[:, players : 2 * players]).ravel()
        cols["visible_after"] = _lists(vis, players, pa.int16())
    return pa.Table.from_arrays([cols[name] for name in schema.names], schema=schema)


# ---------------------------------------------------------------- writing


def part_name(chunk: int) -> str:
    return f"part-{chunk:06d}.parquet"


def write_part(run_dir: Path, table_name: str, chunk: int, table: pa.Table) -> Path:
    """Write one part atomically: a hidden temporary file, then os.replace."""
    folder = Path(run_dir) / table_name
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / part_name(chunk)
    tmp = folder / f".{part_name(chunk)}.{os.getpid()}.tmp"
    try:
        # min/max statistics only on game_id, what readers select parts and row groups
        # by: statistics on every column cost about 15% of the write
        pq.write_table(
            table, tmp, compression=COMPRESSION, use_dictionary=True, write_statistics=["game_id"]
        )
        os.replace(tmp, final)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    return final


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
