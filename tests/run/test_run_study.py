"""`run_study` is the one call that plays a study: a new run, or (resume=True) the rest
of the run in a folder; `marrakech run` is that call with logging and a progress bar."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from test_runner import study_data

from marrakech_sim import runfolder
from marrakech_sim.cli import main
from marrakech_sim.errors import RunFolderError
from marrakech_sim.run.config import study_from_dict
from marrakech_sim.run.runner import run_study


def games_of(run: Path, chunk: int) -> int:
    """The games of a chunk, from its games part."""
    return pq.read_metadata(run / "games" / runfolder.part_name(chunk)).num_rows


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run") / "run"
    run_study(study_from_dict(study_data()), out, workers=0)
    return out


def test_resume_plays_the_missing_chunks_to_the_same_tables(run: Path, tmp_path: Path) -> None:
    """A chunk's parts removed: run_study(None, folder, resume=True) plays that chunk only,
    and the tables equal the uninterrupted run's; with the study given, the same."""
    for given in (None, study_from_dict(study_data())):
        copy = tmp_path / f"copy-{given is None}"
        shutil.copytree(run, copy)
        runfolder.remove_chunks(copy, [2])
        result = run_study(given, copy, resume=True, workers=0)
        assert result.status == "complete" and result.games_this_session == games_of(run, 2)
        for name in runfolder.TABLES:
            pd.testing.assert_frame_equal(
                runfolder.read_table(run, name), runfolder.read_table(copy, name)
            )


def test_resume_with_another_study_is_refused(run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    other = study_from_dict(study_data(seed=124))
    with pytest.raises(RunFolderError, match="holds a run of another study"):
        run_study(other, copy, resume=True, workers=0)


def test_a_new_run_needs_a_study(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="give the study"):
        run_study(None, tmp_path / "run", workers=0)


def test_the_cli_into_a_folder_not_a_runs_writes_nothing_there(tmp_path: Path) -> None:
    """`marrakech run --out` a folder holding other files: one line, and the folder is as
    it was (no run.log, no lock file): run_study refuses it before it takes the lock."""
    config = tmp_path / "study.toml"
    config.write_text(
        '[rulesets.two]\nplayers = 2\n[strategies.random]\n[schedule]\nkind = "self_play"\n'
    )
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine\n")
    result = CliRunner().invoke(main, ["run", str(config), "--out", str(folder), "--workers", "0"])
    assert result.exit_code == 1 and "is not empty: choose a new folder" in result.output
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]


def test_the_cli_resumes_through_run_study(run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    runfolder.remove_chunks(copy, [0])
    args = ["run", "--resume", str(copy), "--workers", "0", "--no-summary"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "complete:" in result.output and f"({games_of(run, 0)} now" in result.output
    for name in runfolder.TABLES:
        pd.testing.assert_frame_equal(
            runfolder.read_table(run, name), runfolder.read_table(copy, name)
        )
