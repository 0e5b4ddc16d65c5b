"""Integrity by content (issue 29): a part changed inside, still a readable Parquet file,
is replayed by resume and refused by the report; an edited run.json is refused by both."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import play_run

from marrakech_sim import runfolder
from marrakech_sim.errors import RunFolderError
from marrakech_sim.report import build_report
from marrakech_sim.run.runner import resume_run
from marrakech_sim.run.verify import verify_run

CONFIG = {
    "name": "digests",
    "seed": 9,
    "games_per_lineup": 48,
    "chunk_games": 16,
    "rulesets": {"two": {"players": 2}, "three": {"players": 3}},
    "strategies": {"random": {}, "greedy": {}},
    "schedule": {"kind": "round_robin", "repeat": True},
}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = play_run(tmp_path_factory.mktemp("digests") / "run", CONFIG)
    assert runfolder.read_manifest(out).chunks >= 3
    return out


def rewrite(path: Path, change: Callable[[pa.Table], pa.Table]) -> None:
    """Rewrite one part with a changed value: still a whole, readable Parquet file."""
    table = pq.read_table(path)
    pq.write_table(change(table), path)


def set_first(column: str, value: object) -> Callable[[pa.Table], pa.Table]:
    def change(table: pa.Table) -> pa.Table:
        i = table.schema.get_field_index(column)
        values = table.column(column).to_pylist()
        values[0] = value
        return table.set_column(
            i, table.schema.field(i), pa.array(values, table.schema.field(i).type)
        )

    return change


def other_roll(table: pa.Table) -> pa.Table:
    i = table.schema.get_field_index("roll")
    rolls = table.column("roll").to_pylist()
    rolls[5] = 1 if rolls[5] != 1 else 4
    return table.set_column(i, table.schema.field(i), pa.array(rolls, table.schema.field(i).type))


PART_EDITS = {
    "one roll": ("moves", other_roll),
    "a rule set name": ("games", set_first("ruleset", "three")),
    "an end reason": ("games", set_first("end_reason", "turn_limit")),
    "games.players": ("games", set_first("players", 9)),
}


@pytest.mark.parametrize("edit", list(PART_EDITS))
def test_a_part_changed_inside_is_replayed_by_resume_and_refused_by_report(
    run: Path, tmp_path: Path, edit: str
) -> None:
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    table, change = PART_EDITS[edit]
    rewrite(copy / table / "part-000001.parquet", change)
    assert pq.read_metadata(copy / table / "part-000001.parquet").num_rows > 0  # still whole
    with pytest.raises(RunFolderError, match="chunk 1"):
        build_report([copy], tmp_path / "report")
    result = resume_run(copy, workers=0)
    assert result.status == "complete" and 1 in result.replayed
    for name in runfolder.TABLES:
        pd.testing.assert_frame_equal(
            runfolder.read_table(run, name), runfolder.read_table(copy, name)
        )
    assert verify_run(copy).ok
    build_report([copy], tmp_path / "report")  # whole again


def edit_json(path: Path, change: Callable[[dict], None]) -> None:
    manifest = json.loads(path.read_text())
    change(manifest)
    path.write_text(json.dumps(manifest))


RUN_JSON_EDITS: dict[str, Callable[[dict], None]] = {
    "the seed": lambda m: m.update(seed=m["seed"] + 1),
    "the config's seed": lambda m: m["config"].update(seed=1),
    "a strategy parameter": lambda m: m["config"]["strategies"]["greedy"]["params"].update(x=1),
    "the chunks planned": lambda m: m.update(chunks=m["chunks"] + 1),
}


@pytest.mark.parametrize("edit", list(RUN_JSON_EDITS))
def test_an_edited_run_json_is_refused_by_resume_and_report(
    run: Path, tmp_path: Path, edit: str
) -> None:
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    edit_json(copy / "run.json", RUN_JSON_EDITS[edit])
    with pytest.raises(RunFolderError, match=r"run\.json was edited"):
        resume_run(copy, workers=0)
    with pytest.raises(RunFolderError, match=r"run\.json was edited"):
        build_report([copy], tmp_path / "report")


def test_every_part_has_its_digest_in_run_json(run: Path) -> None:
    manifest = runfolder.read_manifest(run)
    parts = sorted(
        f"{table}/{path.name}"
        for table in runfolder.TABLES
        for _, path in runfolder.iter_parts(run, table)
    )
    assert sorted(manifest.digests) == parts
    assert manifest.manifest_digest == runfolder.manifest_digest(manifest)


def test_a_part_without_its_digest_is_refused_by_the_report(run: Path, tmp_path: Path) -> None:
    """A part copied in from elsewhere (same name, no digest of this run) is not trusted."""
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    edit_json(copy / "run.json", lambda m: m["digests"].pop("seats/part-000002.parquet"))
    with pytest.raises(RunFolderError, match=r"chunk 2: seats/part-000002\.parquet has no digest"):
        build_report([copy], tmp_path / "report")


def test_chunks_done_after_the_last_manifest_write_get_digests_on_resume(
    run: Path, tmp_path: Path
) -> None:
    """A run killed between manifest writes (kill -9): resume checks those chunks by
    structure, records their digests, and the report then trusts them."""
    copy = tmp_path / "run"
    shutil.copytree(run, copy)

    def killed(m: dict) -> None:
        m["digests"] = {k: v for k, v in m["digests"].items() if "part-000000" in k}
        m["status"] = "running"

    edit_json(copy / "run.json", killed)
    result = resume_run(copy, workers=0)
    assert result.status == "complete" and not result.replayed
    assert len(runfolder.read_manifest(copy).digests) == len(runfolder.read_manifest(run).digests)
    build_report([copy], tmp_path / "report")


def test_the_digest_is_of_the_bytes(tmp_path: Path) -> None:
    import blake3

    data = b"marrakech" * 100_000
    path = tmp_path / "x"
    path.write_bytes(data)
    from marrakech_sim.runfolder.digest import file_digest

    assert file_digest(path) == "blake3:" + blake3.blake3(data).hexdigest(16)
    assert runfolder.data_digest([data[:5], memoryview(data)[5:]]) == file_digest(path)
    # a digest recorded as bare hex (runs written before BLAKE3) is checked as BLAKE2b-128
    old = hashlib.blake2b(data, digest_size=16).hexdigest()
    assert file_digest(path, like=old) == old
    with pytest.raises(RunFolderError, match=r"'sha256:.*blake3:<hex> and bare hex"):
        file_digest(path, like="sha256:00")


def blake2b_digests(m: dict, folder: Path) -> None:
    """run.json as a version before BLAKE3 wrote it: every part's digest BLAKE2b-128."""
    m["digests"] = {
        key: hashlib.blake2b((folder / key).read_bytes(), digest_size=16).hexdigest()
        for key in m["digests"]
    }


def test_a_run_with_blake2b_digests_still_reports_resumes_and_finds_a_change(
    run: Path, tmp_path: Path
) -> None:
    """A run written before BLAKE3 (bare-hex BLAKE2b digests) is checked part by part by
    the algorithm of its recorded digest: it reports, resumes, and a changed part is found."""
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    edit_json(copy / "run.json", lambda m: blake2b_digests(m, copy))
    build_report([copy], tmp_path / "report")
    # a resume that plays a lost chunk again: its parts get BLAKE3 digests, the rest keep theirs
    for table in runfolder.TABLES:
        (copy / table / "part-000001.parquet").unlink()
    edit_json(copy / "run.json", lambda m: m.update(status="running"))
    result = resume_run(copy, workers=0)
    assert result.status == "complete" and result.games_this_session == CONFIG["chunk_games"]
    digests = runfolder.read_manifest(copy).digests
    assert digests["moves/part-000001.parquet"].startswith("blake3:")
    assert ":" not in digests["moves/part-000000.parquet"]
    build_report([copy], tmp_path / "report")
    rewrite(copy / "moves" / "part-000002.parquet", other_roll)
    with pytest.raises(RunFolderError, match="chunk 2"):
        build_report([copy], tmp_path / "report")
