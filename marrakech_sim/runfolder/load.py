"""Run folders for analysts: ``load_run`` / ``load_runs`` give the tables in one call.

    run = marrakech_sim.load_run("runs/default")
    run.games, run.seats, run.moves            # pandas DataFrames, pyarrow-backed dtypes

    with marrakech_sim.load_run("runs/default", engine="duckdb") as run:
        run.moves.aggregate("seat, avg(payment)").df()   # closes the connection after

pandas' default conversion turns a nullable integer column (``score``,
``eliminated_turn``, the placement) into float64 and a 12.8-million-row ``moves`` table
takes about 30 s to read that way; with pyarrow-backed dtypes the integers stay integers
(``int16[pyarrow]`` with missing values) and the same read takes about a third of the
time. For runs too large for memory, ``engine="duckdb"`` gives lazy DuckDB relations
(aggregate out of core, then ``.df()``) and ``engine="arrow"`` pyarrow datasets.

A run that stores only the moves columns a replay needs (format version 2, a study's
``move_columns = "replay"``) gives the pandas engine every column of ``moves``, the
outcomes replayed (``runfolder.read_moves``); the lazy engines give the columns stored.

Several runs (``load_runs``) are stacked with a ``run_id`` column first; game ids repeat
across runs, so join on (``run_id``, ``game_id``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from marrakech_sim.errors import RunFolderError
from marrakech_sim.runfolder.manifest import Manifest
from marrakech_sim.runfolder.outcomes import read_moves, replay_only
from marrakech_sim.runfolder.read import is_sorted, open_dataset, read_manifest
from marrakech_sim.runfolder.schema import REPLAY_MOVE_COLUMNS, TABLES

ENGINES = ("pandas", "duckdb", "arrow")
STORED = frozenset(REPLAY_MOVE_COLUMNS)  # the moves columns every run stores
SORT_KEYS = {"games": ["game_id"], "seats": ["game_id", "seat"], "moves": ["game_id", "turn"]}


class Run:
    """A run folder's manifest and tables; each table is read on first use, then kept.

    Attributes:
        paths: the run folders; manifests: their manifests (run.json), in order.
        engine: "pandas" (DataFrames), "duckdb" (relations) or "arrow" (datasets).
    """

    def __init__(self, paths: Sequence[str | Path], engine: str = "pandas") -> None:
        if engine not in ENGINES:
            raise RunFolderError(f"engine {engine!r}; allowed: {', '.join(ENGINES)}")
        if not paths:
            raise RunFolderError("no run folder given")
        self.paths = [Path(p) for p in paths]
        self.manifests = [read_manifest(p) for p in self.paths]
        self.engine = engine
        self._cache: dict[str, Any] = {}
        self._con: Any = None

    def close(self) -> None:
        """Drop the tables read and close the DuckDB connection of ``engine="duckdb"``
        (its relations cannot be read after); a closed run reads its tables anew."""
        self._cache.clear()
        if self._con is not None:
            self._con.close()
            self._con = None

    def __enter__(self) -> Run:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def manifest(self) -> Manifest:
        """The first run's manifest."""
        return self.manifests[0]

    @property
    def run_ids(self) -> list[str]:
        """The runs' ids, in order."""
        return [m.run_id for m in self.manifests]

    @property
    def games(self) -> Any:
        """One row per game (``docs/log-format.md``)."""
        return self.table("games")

    @property
    def seats(self) -> Any:
        """One row per seat of each game."""
        return self.table("seats")

    @property
    def moves(self) -> Any:
        """One row per turn (large: consider ``engine="duckdb"``); with the pandas engine
        every column, a replay-only run's outcome columns replayed."""
        return self.table("moves")

    def table(self, name: str, columns: Sequence[str] | None = None) -> Any:
        """One table in this run's engine; ``columns`` reads only those (pandas)."""
        if name not in TABLES:
            raise RunFolderError(f"unknown table {name!r}; allowed: {', '.join(TABLES)}")
        key = name if columns is None else f"{name}:{','.join(columns)}"
        if key not in self._cache:
            self._cache[key] = getattr(self, f"_{self.engine}")(name, columns)
        return self._cache[key]

    def _arrow(self, name: str, columns: Sequence[str] | None) -> Any:
        sets = [open_dataset(p, name) for p in self.paths]
        if len(sets) == 1:
            return sets[0]
        import pyarrow.dataset as ds

        return ds.dataset(sets)

    def _pandas(self, name: str, columns: Sequence[str] | None) -> pd.DataFrame:
        frames = []
        for manifest, path in zip(self.manifests, self.paths, strict=True):
            wanted = list(columns) if columns else None
            data: pa.Table
            stored = wanted is not None and set(wanted) <= STORED
            if name == "moves" and replay_only(manifest) and not stored:
                data = read_moves(path)  # the outcome columns replayed
                data = data.select(wanted) if wanted else data
            else:
                data = open_dataset(path, name).to_table(columns=wanted)
            keys = [k for k in SORT_KEYS[name] if k in data.column_names]
            if keys and not is_sorted(data, keys):  # parts are written in order: usually sorted
                data = data.sort_by([(k, "ascending") for k in keys])
            frame = data.to_pandas(types_mapper=pd.ArrowDtype)
            if len(self.paths) > 1:
                run_id = manifest.run_id
                frame.insert(0, "run_id", pd.Series([run_id] * len(frame), dtype="string[pyarrow]"))
            frames.append(frame)
        return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)

    def _duckdb(self, name: str, columns: Sequence[str] | None) -> Any:
        import duckdb

        if self._con is None:
            self._con = duckdb.connect()
        parts = []
        for run_id, path in zip(self.run_ids, self.paths, strict=True):
            glob = str(path / name / "part-*.parquet").replace("'", "''")
            rid = run_id.replace("'", "''")
            prefix = f"'{rid}' AS run_id, " if len(self.paths) > 1 else ""
            parts.append(f"SELECT {prefix}* FROM read_parquet('{glob}')")
        return self._con.sql(" UNION ALL BY NAME ".join(parts))


def load_run(path: str | Path, engine: str = "pandas") -> Run:
    """One run folder's tables: pandas DataFrames (pyarrow dtypes), or lazily DuckDB / arrow.

    Args:
        engine: "pandas" (default; each table read whole on first use), "duckdb" (a lazy
            relation per table; ``.df()``, ``.aggregate(...)``) or "arrow" (a
            ``pyarrow.dataset.Dataset`` per table).
    """
    return Run([path], engine)


def load_runs(paths: Sequence[str | Path], engine: str = "pandas") -> Run:
    """Several run folders stacked, each row tagged with its ``run_id``."""
    return Run(list(paths), engine)
