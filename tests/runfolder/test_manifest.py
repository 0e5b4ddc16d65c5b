"""run.json as a typed, frozen `Manifest`: the same JSON on disk as the plain dict it
replaced, a run's study rebuilt from it, one-line errors for a key missing or wrong."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from marrakech_sim import runfolder
from marrakech_sim.errors import RunFolderError
from marrakech_sim.run.config import study_from_dict
from marrakech_sim.run.runner import run_study, study_from_manifest
from marrakech_sim.runfolder import Manifest

STUDY = {
    "name": "small",
    "seed": 5,
    "games_per_lineup": 8,
    "rulesets": {"two": {"players": 2}},
    "strategies": {"random": {}, "greedy": {}},
    "schedule": {"kind": "round_robin"},
}
#: the keys of a finished run's run.json, in the order the runner wrote them as a dict
#: (before the typed manifest): the order is part of "the same JSON on disk"
WRITTEN_ORDER = [
    "format_version",
    "run_id",
    "created",
    "program_version",
    "code_digest",
    "seed",
    "config",
    "games_planned",
    "blocks",
    "chunks",
    "matches",
    "seed_derivation",
    "moves_columns",
    "status",
    "games_played",
    "chunks_played",
    "stopping",
    "environment",
    "sessions",
    "digests",
    "manifest_digest",
    "writer",
    "updated",
]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("manifest") / "run"
    run_study(study_from_dict(STUDY), out, workers=0)
    return out


def test_run_json_is_the_json_the_dict_was(run: Path) -> None:
    """The file is json.dumps(indent=2) of its keys in the dict's order; read into a
    Manifest and written again it is the same bytes."""
    text = (run / runfolder.MANIFEST).read_text()
    data = json.loads(text)
    assert list(data) == WRITTEN_ORDER
    assert text == json.dumps(data, indent=2, sort_keys=False) + "\n"
    manifest = runfolder.read_manifest(run)
    assert manifest.to_json() == text
    copy = run.parent / "copy"
    shutil.copytree(run, copy)
    runfolder.write_manifest(copy, manifest)
    assert (copy / runfolder.MANIFEST).read_bytes() == (run / runfolder.MANIFEST).read_bytes()


def test_the_manifest_is_typed_and_frozen(run: Path) -> None:
    manifest = runfolder.read_manifest(run)
    assert manifest.status == "complete" and manifest.games_played == manifest.games_planned
    assert manifest.writer == "encoder" and manifest.seed == 5 and manifest.extra == {}
    assert len(manifest.digests or {}) == 3 * (manifest.chunks or 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        manifest.status = "running"  # type: ignore[misc]
    assert manifest.replace(status="failed").status == "failed" and manifest.status == "complete"


def test_a_resume_rebuilds_the_study_from_the_manifest(run: Path) -> None:
    study = study_from_manifest(runfolder.read_manifest(run))
    assert study.to_dict() == study_from_dict(STUDY).to_dict()


def test_unknown_keys_are_kept_in_order(run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    data = json.loads((copy / runfolder.MANIFEST).read_text())
    data["zeta"] = 1
    data["alpha"] = {"x": [1, 2]}
    text = json.dumps(data, indent=2) + "\n"
    (copy / runfolder.MANIFEST).write_text(text)
    manifest = runfolder.read_manifest(copy)
    assert list(manifest.extra) == ["zeta", "alpha"] and manifest.to_json() == text


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("games_played", "many", "games_played = 'many' is not a count of games or chunks"),
        ("games_planned", -1, "games_planned = -1 is not a count of games or chunks"),
        ("config", [1], "config = [1] is not a table"),
        ("seed", True, "seed = True is not an integer"),
        ("digests", {"games/part-000000.parquet": 3}, "is not a table of digests"),
        ("sessions", "x" * 100, "sessions = 'xxxxxxxx"),
        ("run_id", None, "run_id = None is not a string"),
    ],
)
def test_a_key_of_the_wrong_kind_is_one_line(
    run: Path, tmp_path: Path, key: str, value: object, words: str
) -> None:
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    data = json.loads((copy / runfolder.MANIFEST).read_text())
    data[key] = value
    (copy / runfolder.MANIFEST).write_text(json.dumps(data))
    with pytest.raises(RunFolderError, match=r"run\.json") as caught:
        runfolder.read_manifest(copy)
    assert words in str(caught.value) and "\n" not in str(caught.value)
    assert len(str(caught.value)) < 300


@pytest.mark.parametrize("key", ["run_id", "created", "seed", "config", "games_planned"])
def test_a_required_key_missing_is_named(run: Path, tmp_path: Path, key: str) -> None:
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    data = json.loads((copy / runfolder.MANIFEST).read_text())
    del data[key]
    (copy / runfolder.MANIFEST).write_text(json.dumps(data))
    with pytest.raises(RunFolderError, match=f"has no '{key}'"):
        runfolder.read_manifest(copy)


def test_a_manifest_of_other_code_reads_with_what_it_has(tmp_path: Path) -> None:
    """The keys docs/log-format.md asks of every run folder are enough."""
    data = {
        "format_version": 1,
        "run_id": "other",
        "created": "2025-01-01T00:00:00Z",
        "program_version": "0.0.test",
        "seed": 1,
        "config": {"rulesets": {}},
        "games_planned": 10,
    }
    manifest = Manifest.from_dict(data, "run.json")
    assert manifest.status is None and manifest.digests is None and manifest.chunks is None
    assert not runfolder.records_moves(tmp_path, manifest) and runfolder.every_move(manifest)
