"""Integrity by content: a digest of every part, and of what defines the run, in run.json.

A part that is still a readable Parquet file can hold changed values (one roll, a rule set
name, an end reason); the structural check (`check`) cannot see that, a replay (`verify`)
can but costs as much as playing. The runner records each part's digest (BLAKE3, 128 bits,
written "blake3:<hex>") in the manifest's ``digests`` when its chunk is done, and
``manifest_digest`` over the keys that define the run (config, seed, plan) when it starts.
Resume replays a chunk whose part no longer has its digest and refuses a manifest whose
definition changed; the report refuses both. Reading every part costs well under a second
per GB (BLAKE3 hashes about 6 GB/s on one core), no replay.

A part digest recorded as bare hex is BLAKE2b-128, what runs written before BLAKE3 hold:
each part is checked by the algorithm of its recorded digest, so such a run resumes and
reports as before (and a resumed one records its new parts' digests in BLAKE3).

Runs without ``digests`` (other writers of the format) are checked structurally only.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

import blake3
import pyarrow as pa

from marrakech_sim.errors import RunFolderError
from marrakech_sim.runfolder.folder import chunk_of, parquet_file, part_name, write_part_file
from marrakech_sim.runfolder.manifest import Manifest
from marrakech_sim.runfolder.parts import Part
from marrakech_sim.runfolder.read import iter_parts
from marrakech_sim.runfolder.schema import MANIFEST, TABLES

DEFINING_KEYS = (
    "run_id",
    "created",
    "seed",
    "config",
    "games_planned",
    "blocks",
    "chunks",
    "matches",
    "seed_derivation",
    "moves_columns",
)  # what a resume plays from: an edit to any of them is refused


#: the tag of the digests this version writes
PART_DIGEST = "blake3"


class _Hash(Protocol):
    def update(self, data: Any, /) -> object: ...


def _digester(like: str | None) -> tuple[_Hash, Callable[[], str]]:
    """A hash of the algorithm of the recorded digest `like` (None: of a new one), and
    what gives its digest as written."""
    if like is None or like.startswith(f"{PART_DIGEST}:"):
        new = blake3.blake3()
        return new, lambda: f"{PART_DIGEST}:{new.hexdigest(16)}"
    if ":" not in like:  # bare hex: BLAKE2b-128, written before BLAKE3
        old = hashlib.blake2b(digest_size=16)
        return old, old.hexdigest
    raise RunFolderError(
        f"a part digest in {MANIFEST} is {like!r}: this version checks {PART_DIGEST}:<hex> "
        "and bare hex (BLAKE2b); the run was written by a newer version"
    )


def file_digest(path: Path, like: str | None = None) -> str:
    """The digest of a file's bytes ("blake3:<hex>", 128 bits); with `like`, a recorded
    digest, by that digest's algorithm (bare hex: BLAKE2b-128)."""
    h, digest = _digester(like)
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return digest()


def data_digest(data: Iterable[bytes | pa.Buffer]) -> str:
    """`file_digest` of the file these bytes make, from the bytes (no file read)."""
    h, digest = _digester(None)
    for block in data:
        h.update(block)
    return digest()


def part_key(table_name: str, chunk: int) -> str:
    """A part's key in the manifest's ``digests`` ("games/part-000003.parquet")."""
    return f"{table_name}/{part_name(chunk)}"


def write_digested_part(
    run_dir: str | Path, table_name: str, chunk: int, table: Part | pa.Table, writer: str
) -> tuple[str, str]:
    """Write one part (`folder.write_part`) and return its key and digest, taken from
    the bytes written: the process that writes a part digests it, so the run's own
    process, which records every digest, does not read every part back."""
    data = parquet_file(table, writer)
    write_part_file(Path(run_dir), table_name, chunk, data)
    return part_key(table_name, chunk), data_digest(data)


def manifest_digest(manifest: Manifest) -> str:
    """The digest of the manifest's `DEFINING_KEYS` (as canonical JSON)."""
    defining = {key: getattr(manifest, key) for key in DEFINING_KEYS}
    text = json.dumps(defining, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def chunk_digests(
    run_dir: str | Path, chunks: Iterable[int], recorded: Mapping[str, str] | None = None
) -> dict[str, str]:
    """``{"games/part-000003.parquet": digest, ...}`` of the parts of `chunks`, under
    whatever names they have (one listing of each table's folder), each by the algorithm
    of its digest in `recorded` (a manifest's ``digests``) where it has one."""
    wanted = set(chunks)
    recorded = recorded or {}
    out = {}
    for table in TABLES:
        for chunk, path in iter_parts(run_dir, table):
            if chunk in wanted:
                key = f"{table}/{path.name}"
                out[key] = file_digest(path, recorded.get(key))
    return out


def written_digests(run_dir: str | Path, chunk: int) -> dict[str, str]:
    """The digests of the parts the runner just wrote for `chunk` (their names are
    `part_name`'s: no folder listing, which would grow with the run, per chunk)."""
    out = {}
    for table in TABLES:
        path = Path(run_dir) / table / part_name(chunk)
        if path.is_file():
            out[part_key(table, chunk)] = file_digest(path)
    return out


def chunk_of_key(key: str) -> int:
    """The chunk of a ``digests`` key ("games/part-000003.parquet" -> 3)."""
    return chunk_of(key.rpartition("/")[2])


def forget_chunks(manifest: Manifest, chunks: Iterable[int]) -> Manifest:
    """The manifest without the recorded digests of `chunks` (their parts were removed)."""
    gone = set(chunks)
    if manifest.digests is None:
        return manifest
    kept = {k: v for k, v in manifest.digests.items() if chunk_of_key(k) not in gone}
    return manifest.replace(digests=kept)


def changed_chunks(
    manifest: Manifest, found: Mapping[str, str], *, required: bool
) -> dict[int, str]:
    """The chunks whose parts' digests `found` (`chunk_digests`) differ from those
    recorded (chunk -> why); with `required`, a part with no recorded digest counts as
    changed too. Empty for a manifest without ``digests``."""
    digests = manifest.digests
    if digests is None:
        return {}
    out: dict[int, str] = {}
    for key, digest in sorted(found.items()):
        chunk = chunk_of_key(key)
        recorded = digests.get(key)
        if chunk in out or (recorded is None and not required):
            continue
        if recorded is None:
            out[chunk] = f"{key} has no digest in {MANIFEST} (it was not written by this run)"
        elif recorded != digest:
            out[chunk] = f"{key} changed since it was written (not the digest in {MANIFEST})"
    return out


def edited_definition(manifest: Manifest) -> str | None:
    """What is wrong when the manifest's defining keys changed since the run started."""
    recorded = manifest.manifest_digest
    if recorded is None or recorded == manifest_digest(manifest):
        return None
    return (
        f"{MANIFEST} was edited after the run started (its config, seed or plan no longer "
        "match the digest recorded then): a run's definition cannot change; start a new run"
    )
