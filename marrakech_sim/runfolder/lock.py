"""One writer per run folder: an advisory lock (`fcntl.flock`) held for the whole run.

The lock is on the file `.lock` in the run folder, which holds the writer's process id.
The operating system releases the lock when the writer (and every worker process it
forked, which share its open file) has ended, however it ended: a stale `.lock` file never
blocks anyone. Readers (`report`, `verify`) take no lock.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from marrakech_sim.errors import RunFolderError
from marrakech_sim.runfolder.schema import LOG_FILE

LOCK_FILE = ".lock"


@contextlib.contextmanager
def locked(run_dir: str | Path) -> Iterator[Path]:
    """Hold the run folder's lock (creating the folder); RunFolderError when another has it."""
    run_dir = Path(run_dir)
    path = run_dir / LOCK_FILE
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise RunFolderError(
            f"cannot write in run folder {str(run_dir)!r}: {_reason(exc)}"
        ) from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            raise RunFolderError(
                f"run folder {str(run_dir)!r} is in use by another writer (process {holder}): "
                "wait for it to end, or stop it, before running or resuming into this folder"
            ) from None
        with contextlib.suppress(OSError):  # the pid is for people; the lock works without it
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield path
    finally:
        os.close(fd)  # releases the lock once no forked worker holds the file open either


def is_locked(run_dir: str | Path) -> bool:
    """Whether a writer holds the run folder's lock now (a shared lock cannot be had)."""
    try:
        fd = os.open(Path(run_dir) / LOCK_FILE, os.O_RDONLY)
    except OSError:
        return False  # no lock file: no writer ever held it
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # releases the shared lock if it was had
    return False


def holds_a_run(run_dir: str | Path) -> bool:
    """Whether the folder holds anything besides a log and the lock (all a failed start leaves)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        return False
    return any(name not in (LOG_FILE, LOCK_FILE) for name in os.listdir(run_dir))


def describe_os_error(exc: OSError) -> str:
    """An OSError in a few words: what failed, on which file (no traceback)."""
    where = f" ({exc.filename})" if exc.filename else ""
    return _reason(exc) + where


def _reason(exc: OSError) -> str:
    if exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
        return f"{exc.strerror or exc} (the disk or a file size limit is full)"
    if exc.errno == errno.EROFS:
        return f"{exc.strerror or exc} (read-only file system)"
    return exc.strerror or str(exc)
