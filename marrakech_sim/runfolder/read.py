"""Reading a run folder: the manifest, and each table as a pyarrow dataset or table."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.dataset as ds

from marrakech_sim.errors import RunFolderError
from marrakech_sim.runfolder.folder import chunk_of, is_part_name
from marrakech_sim.runfolder.lock import is_locked
from marrakech_sim.runfolder.schema import (
    FORMAT_VERSION,
    GAMES_SCHEMA,
    MANIFEST,
    SEATS_SCHEMA,
    TABLES,
)


def read_manifest(run_dir: str | Path) -> dict[str, Any]:
    """The run's manifest; RunFolderError when the folder is not a run folder.

    A run whose run.json says 'running' while no writer holds the folder's lock was
    stopped in a way that left it no time to say so (kill -9, a power cut): its status
    reads 'interrupted' (resumable), as Ctrl-C leaves it.
    """
    path = Path(run_dir) / MANIFEST
    try:
        manifest = json.loads(path.read_text())
    except FileNotFoundError as exc:
        raise RunFolderError(f"{str(run_dir)!r} is not a run folder: no {MANIFEST}") from exc
    except (OSError, ValueError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise RunFolderError(f"cannot read {str(path)!r}: {exc}") from exc
    version = manifest.get("format_version") if isinstance(manifest, dict) else None
    if version != FORMAT_VERSION:
        raise RunFolderError(
            f"{str(path)!r}: format_version = {version!r}; this program reads {FORMAT_VERSION}"
        )
    if manifest.get("status") == "running" and not is_locked(run_dir):
        manifest["status"] = "interrupted"
    return manifest


def open_dataset(run_dir: str | Path, table: str) -> ds.Dataset:
    """One table of a run folder as a pyarrow dataset (its parts; no other file is read)."""
    if table not in TABLES:
        raise RunFolderError(f"unknown table {table!r}; allowed: {', '.join(TABLES)}")
    folder = Path(run_dir) / table
    if not folder.is_dir():
        raise RunFolderError(f"{str(run_dir)!r} has no {table}/ folder")
    schema = GAMES_SCHEMA if table == "games" else SEATS_SCHEMA if table == "seats" else None
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


def iter_parts(run_dir: str | Path, table: str) -> Iterator[tuple[int, Path]]:
    """(chunk, path) of each part of a table, in chunk order."""
    folder = Path(run_dir) / table
    names = sorted(os.listdir(folder)) if folder.is_dir() else []
    for name in names:
        if is_part_name(name):
            yield chunk_of(name), folder / name
