"""run.json as a value: the typed, frozen `Manifest` the run folder is read into and
written from (docs/log-format.md lists its keys).

A manifest changes as its run goes on (status, progress, each chunk's digests, the
sessions): the runner makes a new value (`Manifest.replace`) and writes it. Keys this
program does not know are kept, in order, in `extra` and written back after its own.
The JSON on disk is the same as when run.json was a plain dict: the keys in the same
order, the same indentation.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from marrakech_sim.errors import RunFolderError
from marrakech_sim.runfolder.schema import FORMAT_VERSION

JSON = dict[str, Any]


@dataclasses.dataclass(frozen=True, slots=True)
class Manifest:
    """A run folder's run.json. The first six keys are required of every run folder (one
    written by other code too); the others are None where run.json lacks them."""

    run_id: str
    created: str  # ISO 8601, UTC
    seed: int
    config: Mapping[str, Any]  # the resolved study (`Study.to_dict`)
    games_planned: int
    format_version: int = FORMAT_VERSION
    program_version: str | None = None
    code_digest: str | None = None  # run.provenance.code_digest of the code that played it
    blocks: int | None = None
    chunks: int | None = None
    matches: Sequence[Mapping[str, Any]] | None = None  # Plan.matches_table()
    seed_derivation: str | None = None
    moves_columns: Sequence[str] | None = None  # None: not a run the runner wrote
    status: str | None = None
    games_played: int | None = None
    chunks_played: int | None = None
    stopping: Mapping[str, Any] | None = None  # the stopping rule's state (written as null)
    environment: Mapping[str, Any] | None = None
    sessions: Sequence[Mapping[str, Any]] | None = None
    digests: Mapping[str, str] | None = None  # "games/part-000003.parquet" -> its digest
    manifest_digest: str | None = None  # of the defining keys (runfolder.digest)
    writer: str | None = None
    error: str | None = None  # why the last session failed
    updated: str | None = None  # when the last session ended
    #: keys this program does not know, in their order in run.json
    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def replace(self, **changes: Any) -> Manifest:
        """This manifest with `changes`."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> JSON:
        """The manifest as run.json holds it (key order included)."""
        out: JSON = {}
        for name in KEYS:
            value = getattr(self, name)
            if value is not None or name in ALWAYS_WRITTEN:
                out[name] = value
        out.update(self.extra)
        return out

    def to_json(self) -> str:
        """run.json's text."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=False) + "\n"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str) -> Manifest:
        """The manifest of run.json's object `data`; RunFolderError naming the key and its
        value (and `where`, the file) when one is missing or of the wrong kind."""
        values: JSON = {}
        for name in KEYS:
            if name not in data:
                if name in REQUIRED:
                    raise RunFolderError(f"{where!r} has no {name!r}: not a run's manifest")
                continue
            value = data[name]
            if value is None and name not in REQUIRED:
                values[name] = None
                continue
            check, kind = KINDS[name]
            if not check(value):
                raise RunFolderError(f"{where!r}: {name} = {_short(value)} is not {kind}")
            values[name] = value
        extra = {k: v for k, v in data.items() if k not in FIELDS}
        return cls(**values, extra=extra)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _table(value: Any) -> bool:
    return isinstance(value, dict)


def _list_of(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, list) and all(check(v) for v in value)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


Kind = tuple[Callable[[Any], bool], str]  # a check of a value, and its words for an error

_INTEGER: Kind = (_integer, "an integer")
_COUNT: Kind = (_count, "a count of games or chunks")
_TEXT: Kind = (_text, "a string")
_TABLE: Kind = (_table, "a table")
_TABLES: Kind = (_list_of(_table), "a list of tables")

KINDS: dict[str, Kind] = {
    "format_version": _INTEGER,
    "run_id": _TEXT,
    "created": _TEXT,
    "program_version": _TEXT,
    "code_digest": _TEXT,
    "seed": _INTEGER,
    "config": _TABLE,
    "games_planned": _COUNT,
    "blocks": (_count, "a count of blocks"),
    "chunks": _COUNT,
    "matches": _TABLES,
    "seed_derivation": _TEXT,
    "moves_columns": (_list_of(_text), "a list of column names"),
    "status": _TEXT,
    "games_played": _COUNT,
    "chunks_played": _COUNT,
    "stopping": _TABLE,
    "environment": _TABLE,
    "sessions": _TABLES,
    "digests": (
        lambda v: _table(v) and all(isinstance(d, str) for d in v.values()),
        "a table of digests",
    ),
    "manifest_digest": _TEXT,
    "writer": _TEXT,
    "error": _TEXT,
    "updated": _TEXT,
}
#: run.json's keys in the order it holds them
KEYS = tuple(KINDS)
FIELDS = frozenset(KEYS)
#: keys every run folder's manifest has
REQUIRED = frozenset(("format_version", "run_id", "created", "seed", "config", "games_planned"))
#: keys written when None (as null): the others are left out
ALWAYS_WRITTEN = frozenset(("stopping",))
