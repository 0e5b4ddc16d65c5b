"""Where numba keeps compiled kernels: a folder keyed by the kernels' source.

numba invalidates a cached function when its own file changes, but not when a function
it calls (and compiled into itself) changes in another file: a stale whole-game loop
would then run against a new state layout. Keying the cache folder by a digest of every
source file of the package makes any change start from a clean cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import logging
import os
import pickle
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


def package_sources() -> list[tuple[str, Path]]:
    """Every .py file of the package as (name from the package's parent, path), sorted."""
    package = Path(__file__).parent
    found = [
        ("marrakech_sim/" + path.relative_to(package).as_posix(), path)
        for path in package.rglob("*.py")
        if "__pycache__" not in path.parts
    ]
    return sorted(found)


def digest_of_sources(keep: Callable[[str, bytes], bool]) -> str:
    """A short digest of the package's .py files that keep(name, source) selects."""
    digest = hashlib.sha256()
    for name, path in package_sources():
        source = path.read_bytes()
        if keep(name, source):
            digest.update(name.encode())
            digest.update(source)
    return digest.hexdigest()[:16]


def source_digest() -> str:
    """A short digest of the package's .py files that define kernels or declare compiled
    twins (the whole-game loop's dispatch is generated from the declarations)."""
    return digest_of_sources(lambda name, source: b"@njit" in source or b"CompiledTwin(" in source)


def _ours(folder: str) -> bool:
    """Whether a cache folder is one configure() chose (marrakech_sim/numba-<digest>)."""
    path = Path(folder)
    return path.parent.name == "marrakech_sim" and path.name.startswith("numba-")


def configure() -> None:
    """Point NUMBA_CACHE_DIR at the folder for this source, unless the user chose one.

    A folder of ours already in the environment was inherited from a parent process,
    which may have run other sources (another checkout of the project): this process
    takes the folder of its own digest, or it would load the parent's stale kernels.
    numba reads the variable when it is imported; a script that imported numba before
    marrakech_sim gets the folder through numba's config instead (else its kernels
    would be cached beside the sources, where a stale whole-game loop survives).
    """
    chosen = os.environ.get("NUMBA_CACHE_DIR")
    if chosen and not _ours(chosen):
        return
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    folder = str(base / "marrakech_sim" / f"numba-{source_digest()}")
    os.environ["NUMBA_CACHE_DIR"] = folder
    if "numba" in sys.modules:
        from numba.core import config

        config.CACHE_DIR = folder


def _marker(kind: str) -> Path | None:
    """The file that records the kernels of `kind` compiled into this cache folder from
    this copy of the package: numba files a kernel under its source file's folder, so the
    same sources at another path (a second checkout) compile again, and say so."""
    folder = os.environ.get("NUMBA_CACHE_DIR")
    if not folder:
        return None
    here = hashlib.sha256(str(Path(__file__).resolve().parent).encode()).hexdigest()[:12]
    return Path(folder) / f"compiled-{kind}-{here}"


def compiled_before(kind: str) -> bool:
    """Whether the kernels of `kind` were compiled into this cache folder before (as
    mark_compiled recorded); True where the folder is not known (nothing to announce)."""
    marker = _marker(kind)
    return marker is None or marker.exists()


def mark_compiled(kind: str) -> None:
    """Record that the kernels of `kind` are in the cache folder (for compiled_before)."""
    marker = _marker(kind)
    if marker is not None:
        with contextlib.suppress(OSError):  # a read-only cache: it is only a message
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()


def merge(folder: Path) -> int:
    """Add the kernels another process compiled into cache folder `folder` (for these same
    sources) to this process's cache folder: those it does not hold yet. Returns how many.

    The other process compiled there rather than here because numba's cache files are not
    safe to write from two processes at once (an index written by one can name a data file
    the other overwrites); call this while no other process compiles into this folder. Each
    data file is in place before the index names it. What cannot be merged (another numba
    version's format) is left out: it compiles on first use, as it would have.
    """
    import numba
    from numba.core import config
    from numba.core.caching import IndexDataCacheFile

    target = config.CACHE_DIR  # where this process's kernels load from (see configure)
    if not target:
        return 0
    added = 0
    for index in sorted(Path(folder).rglob("*.nbi")):
        sub = Path(target) / index.parent.relative_to(folder)
        base = index.name.removesuffix(".nbi")
        try:
            with open(index, "rb") as f:
                version = pickle.load(f)
                stamp, theirs = pickle.loads(f.read())
            if version != numba.__version__:
                continue
            sub.mkdir(parents=True, exist_ok=True)
            ours = IndexDataCacheFile(str(sub), base, stamp)
            held = ours._load_index()  # {} when stale (another stamp) or absent
            for key, name in theirs.items():
                if key in held:
                    continue
                used = set(held.values())
                mine = next(n for i in itertools.count(1) if (n := ours._data_name(i)) not in used)
                tmp = sub / f".{mine}.{os.getpid()}.tmp"
                shutil.copyfile(index.parent / name, tmp)
                os.replace(tmp, sub / mine)
                held[key] = mine
                ours._save_index(held)
                added += 1
        except Exception as e:  # a damaged file, another numba version's layout
            # its kernels compile on first use instead: slower, and said in the run's log
            log.warning("kernel cache: %s not merged (%s: %s)", index, type(e).__name__, e)
    return added


def compiled_signatures(kernel: Any) -> set[Any]:
    """The argument types a cached numba kernel is compiled for: in this process, and in
    the cache folder's index (a process whose callers load from the cache never compiles
    or loads the kernel itself)."""
    found = set(kernel.signatures)
    with contextlib.suppress(AttributeError):
        found |= {key[0] for key in kernel._cache._cache_file._load_index()}
    return found


def holds(kernel: Any) -> bool:
    """Whether the cache folder holds compiled code of `kernel` (a cached numba function),
    for some argument types."""
    try:
        return Path(kernel._cache._cache_file._index_path).exists()
    except AttributeError:  # not cached
        return False
