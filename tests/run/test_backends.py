"""The run's three backends behind one protocol (`run.backend.Backend`): the same study
played through each gives byte-identical Parquet parts, and the runner drives them all
with one loop."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_runner import study_data

from marrakech_sim import runfolder
from marrakech_sim.run.backend import Backend, InProcessBackend
from marrakech_sim.run.chunk import Prepared
from marrakech_sim.run.config import study_from_dict
from marrakech_sim.run.pool import ProcessBackend
from marrakech_sim.run.runner import run_study


def part_digests(run_dir: Path) -> dict[str, str]:
    """Each Parquet part file's sha256, by its path in the run folder."""
    return {
        str(p.relative_to(run_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(run_dir.rglob("*.parquet"))
    }


def backends() -> Iterator[tuple[str, Any]]:
    yield "in-process", InProcessBackend()
    yield "processes", ProcessBackend(2)
    distributed = pytest.importorskip("distributed")  # noqa: F841
    from marrakech_sim.run.dask_backend import DaskBackend, DaskChunks

    yield "dask", DaskChunks(DaskBackend(), 2)  # its own LocalCluster of 2 processes


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("reference") / "run"
    run_study(study_from_dict(study_data()), out, workers=0)
    return out


def test_every_backend_is_a_backend() -> None:
    for _, backend in backends():
        assert isinstance(backend, Backend)


@pytest.mark.parametrize("name", ["in-process", "processes", "dask"])
def test_each_backend_through_the_protocol_writes_the_same_parts(
    reference: Path, tmp_path: Path, name: str
) -> None:
    """run_study(backend=...) with each backend: the parts are byte for byte those of the
    plain in-process run, run.json's session names the backend, and its digests (taken
    by the processes that wrote the parts) are those of the files."""
    backend = dict(backends())[name]
    out = tmp_path / "run"
    result = run_study(study_from_dict(study_data()), out, backend=backend)
    assert result.status == "complete" and result.games_played == result.games_planned
    found = part_digests(out)
    manifest = runfolder.read_manifest(out)
    assert found == part_digests(reference) and len(found) == 3 * manifest.chunks > 3
    assert manifest.digests == runfolder.chunk_digests(out, range(manifest.chunks))
    (session,) = manifest.sessions
    assert {k: session[k] for k in backend.describe()} == backend.describe()


def test_the_protocol_alone_plays_chunks_into_a_folder(reference: Path, tmp_path: Path) -> None:
    """start, play, close without the runner: the chunks asked for, each on disk as it
    comes with its parts' digests, the same bytes as the runner's; close(stop=True) after
    the first ends early."""
    prep = Prepared(study_from_dict(study_data()))
    for name, backend in backends():
        out = tmp_path / name
        for table in runfolder.TABLES:
            (out / table).mkdir(parents=True)
        backend.start(prep, out, "encoder")
        results = backend.play([3, 1])
        first = next(results)
        assert first.chunk in (1, 3) and first.chunk in runfolder.chunks_done(out)
        rest = list(results)
        backend.close()
        assert sorted([first.chunk] + [r.chunk for r in rest]) == [1, 3], name
        for result in [first, *rest]:
            assert result.digests == runfolder.written_digests(out, result.chunk), name
        assert runfolder.chunks_done(out) == {1, 3}, name
        for chunk in (1, 3):
            for table in runfolder.TABLES:
                part = Path(table) / runfolder.part_name(chunk)
                assert (out / part).read_bytes() == (reference / part).read_bytes(), (name, part)
        backend.start(prep, out, "encoder")
        stopped = backend.play([0, 2, 4, 5])
        next(stopped)
        backend.close(stop=True)


def test_a_prepared_study_pickles_without_its_workspace(reference: Path, tmp_path: Path) -> None:
    """Prepared is a plan that pickles (for a process that does not fork) and a workspace
    of this process's that does not travel: its buffers and its pool marker (which cannot
    be pickled) stay here; the copy plays the same chunk to the same bytes."""
    import multiprocessing
    import pickle

    from marrakech_sim.run.chunk import play_chunk, write_chunk

    prep = Prepared(study_from_dict(study_data()))
    play_chunk(prep, 1, reuse_buffers=True)  # the workspace now holds buffers
    bare = len(pickle.dumps(Prepared(study_from_dict(study_data()))))
    prep.workspace.marker = multiprocessing.get_context("fork").RawArray("d", 3)
    data = pickle.dumps(prep)
    assert len(data) == bare  # no buffers, no marker
    copy = pickle.loads(data)
    assert copy.workspace is not prep.workspace and copy.workspace.marker is None
    _, tables = play_chunk(copy, 1, reuse_buffers=True)
    write_chunk(tmp_path, 1, tables, "encoder")
    for table in runfolder.TABLES:
        part = Path(table) / runfolder.part_name(1)
        assert (tmp_path / part).read_bytes() == (reference / part).read_bytes()
