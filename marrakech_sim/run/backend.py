"""Where a run's chunks are played: one protocol, three places.

The runner (`run.runner`) owns the run folder, the manifest, resume and the stopping
rule; a `Backend` only plays chunks and writes their parts. The runner drives every
backend the same way:

    backend.start(prep, run_dir, writer)
    for result in backend.play(todo):   # each chunk's parts are on disk when it comes
        ...                             # (break when a stopping rule decides)
    backend.close(stop=...)

- `InProcessBackend`: this process plays the chunks one after the other.
- `run.pool.ProcessBackend`: worker processes of this machine (`run.pool.ChunkPool`).
- `run.dask_backend.DaskChunks`: Dask tasks, on a LocalCluster or a running cluster.

Which games a chunk holds never depends on the backend: the tables are the same.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from marrakech_sim.run.chunk import ChunkResult, Prepared, play_chunk, write_chunk
from marrakech_sim.run.pool import log_chunk


@runtime_checkable
class Backend(Protocol):
    """Plays a run's chunks and writes their parts into the run folder."""

    @property
    def workers(self) -> int | None:
        """Processes that play the chunks, forked from this one after the runner's warm-up
        (0: this process plays them); None: a cluster's own workers (the runner's estimate
        of a long run is then per core)."""
        ...

    def describe(self) -> dict[str, Any]:
        """The session's fields for run.json (after 'started'): workers and how they run."""
        ...

    def start(self, prep: Prepared, run_dir: Path, writer: str) -> None:
        """Get ready to play the chunks of `prep`'s study into `run_dir` with `writer`."""
        ...

    def play(self, todo: Sequence[int]) -> Iterator[ChunkResult]:
        """Play the chunks `todo`; yield each one's result once its parts are on disk
        (in the order they finish)."""
        ...

    def close(self, *, stop: bool = False) -> None:
        """End what `start` began. stop: the run ends early (a stopping rule, Ctrl-C, an
        error): chunks still in flight are abandoned, not waited for."""
        ...


class InProcessBackend:
    """This process plays the chunks, in order (`workers=0`)."""

    workers = 0

    def __init__(self) -> None:
        self._job: tuple[Prepared, Path, str] | None = None

    def describe(self) -> dict[str, Any]:
        return {"workers": 0, "start_method": "in-process"}

    def start(self, prep: Prepared, run_dir: Path, writer: str) -> None:
        self._job = (prep, run_dir, writer)

    def play(self, todo: Sequence[int]) -> Iterator[ChunkResult]:
        if self._job is None:
            raise RuntimeError("InProcessBackend.play before start")
        prep, run_dir, writer = self._job
        for chunk in todo:
            result, tables = play_chunk(prep, chunk, reuse_buffers=True)
            digests = write_chunk(run_dir, chunk, tables, writer)
            log_chunk(result)
            yield dataclasses.replace(result, digests=digests)

    def close(self, *, stop: bool = False) -> None:
        self._job = None
