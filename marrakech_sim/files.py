"""Reading the text files users hand us, and writing the files we hand back.

The functions every command uses for a file it is given by name:

- `read_text` reads at most `limit` bytes (a record from /dev/zero is refused, not read
  until memory runs out), as UTF-8 with or without a byte-order mark, and names the first
  byte that is not UTF-8 (its line and offset).
- `writing` / `write_atomic` write to a hidden temporary file beside the target and rename
  it over the target, so an interrupted or failed write (a full disk) leaves no partial
  file; a target that exists and is not a regular file (/dev/stdout) is written directly.
  `staged_folder` does the same for a folder of files (a report).

Both raise the caller's error class (RecordError, ConfigError, ...) or OutputError with one
line naming the path and the cause.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from marrakech_sim.errors import MarrakechError, OutputError

TEXT_LIMIT = 256 * 1024 * 1024  # bytes of one text file we read (records, configs)


def read_text(
    path: str | Path,
    what: str,
    error: type[MarrakechError],
    limit: int = TEXT_LIMIT,
) -> str:
    """The UTF-8 text of `path` (a byte-order mark dropped), at most `limit` bytes.

    what: how the message names the file ("game record", "study config").
    """
    name = str(path)
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise error(f"cannot read {what} {name!r}: {exc.strerror or exc}") from exc
    if len(data) > limit:
        raise error(
            f"{what} {name!r} is larger than {limit // (1024 * 1024)} MiB "
            "(a text file of that size is not a record or config)"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(
            f"{what} {name!r} is not UTF-8 text: byte {data[exc.start : exc.start + 1]!r} "
            f"at line {line} (offset {exc.start}); save it as UTF-8"
        ) from exc


def read_toml(path: str | Path, what: str, error: type[MarrakechError]) -> dict[str, Any]:
    """The TOML table of `path` (read as `read_text` does); `error` when it is not TOML."""
    text = read_text(path, what, error)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{what} {str(path)!r} is not valid TOML: {exc}") from exc


@contextlib.contextmanager
def writing(path: str | Path) -> Iterator[Path]:
    """The path to write `path`'s new content to: a hidden temporary file beside it,
    renamed over `path` when the block ends without an error (removed when it fails).

    OutputError, naming the path and the cause, when it cannot be written.
    """
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"cannot write {str(path)!r}: it is a folder; give a file name")
    if path.exists() and not path.is_file():  # a device or a pipe: /dev/stdout, /dev/full
        with _as_output_error(path):
            yield path
        return
    folder = path.parent
    if not folder.is_dir():
        raise OutputError(f"cannot write {str(path)!r}: the folder {str(folder)!r} does not exist")
    tmp = folder / f".{path.stem}.{uuid.uuid4().hex}.tmp{path.suffix}"
    try:
        with _as_output_error(path):
            yield tmp
            os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def write_atomic(path: str | Path, data: str | bytes) -> Path:
    """Write `data` (text as UTF-8) to `path` by a temporary file and a rename."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with writing(path) as tmp, open(tmp, "wb") as f:
        f.write(raw)
    return Path(path)


@contextlib.contextmanager
def staged_folder(out: str | Path) -> Iterator[Path]:
    """A hidden folder beside `out` to write its files into; when the block ends without an
    error they are moved into `out` (created, with its parents, if missing), else removed
    with the folder."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise OutputError(f"cannot write into {str(out)!r}: it is a file, not a folder")
    parent = out.parent
    with _as_output_error(out):
        parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=parent))
    try:
        with _as_output_error(out):
            yield stage
            out.mkdir(exist_ok=True)
            for item in sorted(stage.iterdir()):
                if item.is_dir() and (out / item.name).is_dir():
                    shutil.rmtree(out / item.name)  # an earlier report's notable/ folder
                os.replace(item, out / item.name)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


@contextlib.contextmanager
def _as_output_error(path: Path) -> Iterator[None]:
    try:
        yield
    except OSError as exc:
        raise OutputError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from exc
