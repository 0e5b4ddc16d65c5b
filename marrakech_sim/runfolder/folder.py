"""Writing a run folder: parts written atomically, the manifest, finished chunks.

A part goes to a temporary name beginning with `.` and is renamed into place, so a run
stopped at any moment keeps every finished chunk and no reader ever sees half a file.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import uuid
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from marrakech_sim.errors import ConfigError
from marrakech_sim.runfolder import _parquet
from marrakech_sim.runfolder.manifest import Manifest
from marrakech_sim.runfolder.parts import Part
from marrakech_sim.runfolder.schema import COMPRESSION, COMPRESSION_LEVEL, MANIFEST, TABLES


def part_name(chunk: int) -> str:
    return f"part-{chunk:06d}.parquet"


# "encoder": the project's own Parquet encoder (runfolder._parquet), pages written straight
# from numpy columns, about five times faster than pyarrow's writer per game; "pyarrow":
# pyarrow's writer with the same settings. Both files read back as the same table.
WRITERS = ("encoder", "pyarrow")


def check_writer(writer: str) -> str:
    """`writer` if it names a Parquet writer, else ConfigError naming the allowed ones."""
    if writer not in WRITERS:
        raise ConfigError(f"writer {writer!r}; allowed: {', '.join(map(repr, WRITERS))}")
    return writer


def parquet_file(table: Part | pa.Table, writer: str = "encoder") -> list[bytes | pa.Buffer]:
    """The bytes of one part's Parquet file, by `writer` (`WRITERS`).

    One row group per 2**20 rows, zstd level 1, statistics on game_id, the Arrow schema in
    the footer, whichever writer. An Arrow table is always written by pyarrow.
    """
    if isinstance(table, Part) and check_writer(writer) == "encoder":
        return _parquet.encode_parquet(table)
    arrow = table.to_arrow() if isinstance(table, Part) else table
    sink = pa.BufferOutputStream()
    pq.write_table(
        arrow,
        sink,
        compression=COMPRESSION,
        compression_level=COMPRESSION_LEVEL,
        row_group_size=_parquet.ROW_GROUP_ROWS,
        write_statistics=list(_parquet.STATISTICS_COLUMNS),
    )
    return [sink.getvalue()]


def warm_up_writer() -> None:
    """Load (or compile) the encoder's kernels once, before worker processes fork."""
    _parquet.warm_up()


def write_part(
    run_dir: Path, table_name: str, chunk: int, table: Part | pa.Table, writer: str = "encoder"
) -> Path:
    """Write one part atomically (a hidden temporary file, then os.replace) by `writer`."""
    return write_part_file(run_dir, table_name, chunk, parquet_file(table, writer))


def write_part_file(
    run_dir: Path, table_name: str, chunk: int, data: Sequence[bytes | pa.Buffer]
) -> Path:
    """Write one part's ready-made Parquet bytes (`parquet_file`) atomically."""
    folder = Path(run_dir) / table_name
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / part_name(chunk)
    # unique per writer: on a shared file system two machines may write the same chunk
    tmp = folder / f".{part_name(chunk)}.{uuid.uuid4().hex}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.writelines(data)
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
        found.append({chunk_of(n) for n in names if is_part_name(n)})
    return set.intersection(*found) if found else set()


def chunk_of(name: str) -> int:
    """The chunk of a part's file name (part-<digits>.parquet, any width: other writers of
    the format pad differently); -1 when the name is not a part's."""
    digits = name.removeprefix("part-").removesuffix(".parquet")
    ok = name.startswith("part-") and name.endswith(".parquet")
    if not (ok and digits.isascii() and digits.isdigit() and len(digits) <= 18):
        return -1
    return int(digits)


def is_part_name(name: str) -> bool:
    """Whether a file name is a part's (`part_name` of some chunk)."""
    return chunk_of(name) >= 0


def is_temporary(name: str) -> bool:
    """Whether a file name is a part's temporary file (a write in progress or killed)."""
    return name.startswith(".part-") and name.endswith(".tmp")


def remove_temporaries(run_dir: Path) -> int:
    """Remove leftover temporary part files (a run killed while writing); return how many."""
    count = 0
    for table in TABLES:
        folder = Path(run_dir) / table
        if folder.is_dir():
            for name in os.listdir(folder):
                if is_temporary(name):
                    with contextlib.suppress(FileNotFoundError):
                        (folder / name).unlink()
                        count += 1
    return count


def remove_chunks(run_dir: Path, chunks: Sequence[int]) -> None:
    """Delete the parts of `chunks` in every table (games first: the chunk is then not done),
    under whatever width of name they were written."""
    wanted = set(chunks)
    for table in TABLES:
        folder = Path(run_dir) / table
        names = sorted(os.listdir(folder)) if folder.is_dir() else []
        for name in names:
            if chunk_of(name) in wanted:
                with contextlib.suppress(FileNotFoundError):
                    (folder / name).unlink()


def write_manifest(run_dir: Path, manifest: Manifest) -> None:
    """Write run.json atomically."""
    path = Path(run_dir) / MANIFEST
    tmp = Path(run_dir) / f".{MANIFEST}.{os.getpid()}.tmp"
    try:
        tmp.write_text(manifest.to_json())
        os.replace(tmp, path)
    finally:  # a full disk must not leave a stray temporary file behind
        with contextlib.suppress(OSError):
            tmp.unlink()


def utc_now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
