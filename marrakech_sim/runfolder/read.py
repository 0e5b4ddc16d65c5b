"""Reading a run folder: the manifest, and each table as a pyarrow dataset or table."""

from __future__ import annotations

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

from marrakech_sim.errors import RunFolderError
from marrakech_sim.play import turns as t
from marrakech_sim.rules.options import COLOUR_LETTERS, FACINGS
from marrakech_sim.runfolder.folder import chunk_of, is_part_name
from marrakech_sim.runfolder.lock import is_locked
from marrakech_sim.runfolder.manifest import Manifest
from marrakech_sim.runfolder.schema import (
    FORMAT_VERSIONS,
    INT_MOVE_COLUMNS,
    MANIFEST,
    SCHEMAS,
    TABLES,
)


def read_manifest(run_dir: str | Path) -> Manifest:
    """The run's manifest; RunFolderError when the folder is not a run folder (or its
    run.json not a manifest: a key missing or of the wrong kind).

    A run whose run.json says 'running' while no writer holds the folder's lock was
    stopped in a way that left it no time to say so (kill -9, a power cut): its status
    reads 'interrupted' (resumable), as Ctrl-C leaves it.
    """
    path = Path(run_dir) / MANIFEST
    try:
        data: Any = json.loads(path.read_text())
    except FileNotFoundError as exc:
        raise RunFolderError(f"{str(run_dir)!r} is not a run folder: no {MANIFEST}") from exc
    except (OSError, ValueError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise RunFolderError(f"cannot read {str(path)!r}: {exc}") from exc
    version = data.get("format_version") if isinstance(data, dict) else None
    if version not in FORMAT_VERSIONS:
        raise RunFolderError(
            f"{str(path)!r}: format_version = {version!r}; this program reads "
            + " and ".join(map(str, FORMAT_VERSIONS))
        )
    manifest = Manifest.from_dict(data, str(path))
    if manifest.status == "running" and not is_locked(run_dir):
        manifest = manifest.replace(status="interrupted")
    return manifest


def open_dataset(run_dir: str | Path, table: str) -> ds.Dataset:
    """One table of a run folder as a pyarrow dataset (its parts; no other file is read)."""
    if table not in TABLES:
        raise RunFolderError(f"unknown table {table!r}; allowed: {', '.join(TABLES)}")
    folder = Path(run_dir) / table
    if not folder.is_dir():
        raise RunFolderError(f"{str(run_dir)!r} has no {table}/ folder")
    schema = SCHEMAS.get(table)  # (the moves schema depends on the run's columns)
    parts = [str(path) for _, path in iter_parts(run_dir, table)]
    return ds.dataset(parts or folder, format="parquet", schema=schema)


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


def is_sorted(data: pa.Table, keys: list[str]) -> bool:
    """Whether the rows are in strictly increasing order of ``keys`` (checked in numpy)."""
    if data.num_rows < 2:
        return True
    cols = [data[k].to_numpy() for k in keys]
    if any(data[k].null_count for k in keys):
        return False
    later = np.zeros(data.num_rows - 1, bool)  # row i+1 after row i on an earlier key
    equal = np.ones(data.num_rows - 1, bool)
    for col in cols:
        later |= equal & (col[1:] > col[:-1])
        equal &= col[1:] == col[:-1]
    return bool(later.all())


def iter_parts(run_dir: str | Path, table: str) -> Iterator[tuple[int, Path]]:
    """(chunk, path) of each part of a table, in chunk order."""
    folder = Path(run_dir) / table
    names = sorted(os.listdir(folder)) if folder.is_dir() else []
    for name in names:
        if is_part_name(name):
            yield chunk_of(name), folder / name


def move_rows(moves: pa.Table, players: int, width: int) -> np.ndarray | None:
    """A moves table back as the game loop's move rows: int32, (rows, width), the
    turns.M_* columns then dirhams_after and visible_after per seat, turns.NULL for null.

    Columns the table does not have stay NULL; None when a dirhams_after or visible_after
    list does not have `players` entries.
    """
    rows = np.full((moves.num_rows, width), t.NULL, np.int32)
    names = set(moves.column_names)
    for name, index in INT_MOVE_COLUMNS:
        if name in names:
            rows[:, index] = int_column(moves.column(name))
    if "colour" in names:
        rows[:, t.M_COLOUR] = _codes(moves.column("colour"), COLOUR_LETTERS)
    if "facing" in names:
        rows[:, t.M_FACING] = _codes(moves.column("facing"), FACINGS)
    if "bankrupt" in names:
        rows[:, t.M_BANKRUPT] = int_column(moves.column("bankrupt").cast(pa.int8()))
    for i, column in enumerate(("dirhams_after", "visible_after")):
        if column in names:
            values = _list_matrix(moves.column(column), players)
            if values is None:
                return None
            at = t.MOVE_COLUMNS + i * players
            rows[:, at : at + players] = values
    return rows


def int_column(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """An integer column as int32 with nulls as turns.NULL."""
    ints: np.ndarray = pc.fill_null(column.cast(pa.int32()), t.NULL).to_numpy().astype(np.int32)
    return ints


def _codes(column: pa.ChunkedArray, letters: str) -> np.ndarray:
    """A one-letter column as each letter's index in `letters` (-1 for null)."""
    found = pc.index_in(column, value_set=pa.array(list(letters)))
    codes: np.ndarray = pc.fill_null(found, -1).to_numpy().astype(np.int32)
    return codes


def _list_matrix(column: pa.ChunkedArray, width: int) -> np.ndarray | None:
    """A list column of fixed length `width` as a (rows, width) matrix; None if ragged."""
    lengths = pc.list_value_length(column).to_numpy(zero_copy_only=False)
    if len(lengths) and not (lengths == width).all():
        return None
    values = pc.list_flatten(column).to_numpy(zero_copy_only=False)
    matrix: np.ndarray = values.astype(np.int32).reshape(-1, width)
    return matrix
