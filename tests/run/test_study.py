"""`marrakech study`: the main job (play a config, then report), run twice and at scale."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT

from marrakech_sim import runfolder
from marrakech_sim.cli import main
from marrakech_sim.run.provenance import code_digest

SMALL = """
name = "small"
seed = 3
games_per_lineup = 8

[rulesets.two]
players = 2

[strategies.random]

[strategies.greedy]

[schedule]
kind = "round_robin"
"""


def _study(config: Path, tmp_path: Path, *extra: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(
        main,
        [
            "study",
            str(config),
            "--run-dir",
            str(tmp_path / "run"),
            "--report-dir",
            str(tmp_path / "report"),
            "--workers",
            "0",
            *extra,
        ],
        catch_exceptions=False,
    )


def test_study_runs_then_reuses(tmp_path: Path) -> None:
    """The first call plays and reports; the second reuses the finished run."""
    config = tmp_path / "small.toml"
    config.write_text(SMALL)
    first = _study(config, tmp_path)
    assert first.exit_code == 0, first.output
    assert "ran " in first.stdout and "8 of 8 games" in first.stdout
    html = tmp_path / "report" / "report.html"
    assert html.is_file() and str(html) in first.stdout
    second = _study(config, tmp_path)
    assert second.exit_code == 0
    assert "reused the finished run" in second.stdout


def test_study_refuses_a_folder_of_another_study(tmp_path: Path) -> None:
    """A run folder made from another config is not silently mixed in."""
    config = tmp_path / "small.toml"
    config.write_text(SMALL)
    assert _study(config, tmp_path).exit_code == 0
    config.write_text(SMALL.replace("seed = 3", "seed = 4"))
    result = CliRunner().invoke(
        main,
        ["study", str(config), "--run-dir", str(tmp_path / "run"), "--workers", "0"],
    )
    assert result.exit_code != 0
    assert "different study config" in result.output


@pytest.mark.parametrize("status", ["complete", "running"])
def test_study_refuses_a_run_played_by_other_code(tmp_path: Path, status: str) -> None:
    """A finished run is not reused, nor an interrupted one resumed, by other code: it may
    play other games from the same config and seed."""
    config = tmp_path / "small.toml"
    config.write_text(SMALL)
    assert _study(config, tmp_path).exit_code == 0
    path = tmp_path / "run" / runfolder.MANIFEST
    manifest = json.loads(path.read_text())
    assert manifest["code_digest"] == code_digest()
    manifest.update(code_digest="0123456789abcdef", status=status)
    path.write_text(json.dumps(manifest))
    result = CliRunner().invoke(
        main,
        ["study", str(config), "--run-dir", str(tmp_path / "run"), "--workers", "0"],
    )
    assert result.exit_code != 0
    assert "was played by other code (code digest 0123456789abcdef" in result.output
    assert "--run-dir" in result.output


@pytest.mark.slow
def test_default_study_shows_the_ladder(tmp_path: Path) -> None:
    """The default study separates greedy from random: 95% intervals on either side of 1/4.

    Tolerance: the claim is the 95% interval itself; with 24,000 games per rule set the
    intervals are about +-0.6 pp wide and the rates 36% and 2%, far from 25%.
    """
    result = _study(ROOT / "configs" / "default.toml", tmp_path)
    assert result.exit_code == 0, result.output
    with open(tmp_path / "report" / "lineup_win_rates.csv") as f:
        rows = [r for r in csv.DictReader(f) if r["ruleset"] == "standard"]
    rate = {r["strategy"]: (float(r["lo"]), float(r["hi"])) for r in rows}
    assert rate["greedy"][0] > 0.25 > rate["random"][1]


@pytest.mark.parametrize("config", sorted((ROOT / "configs").glob("*.toml")), ids=lambda p: p.name)
def test_shipped_configs_are_valid(config: Path) -> None:
    """Every example config in configs/ loads, validates and plans at least one game."""
    from marrakech_sim.run.config import load_study
    from marrakech_sim.run.plan import Plan

    if "[tune]" in config.read_text():  # a tune config (`marrakech tune`), not a study
        from marrakech_sim.design.tuning import load_tune_config

        tune = load_tune_config(config)
        assert tune.levels and Plan(tune.study).games_planned > 0
        return
    assert Plan(load_study(config)).games_planned > 0


def test_study_trial_with_games_and_seed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--games and --seed make a trial in its own folders, never the full study's run."""
    config = tmp_path / "small.toml"
    config.write_text(SMALL)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        main, ["study", str(config), "--games", "4", "--seed", "9", "--workers", "0"]
    )
    assert result.exit_code == 0, result.output
    run = tmp_path / "runs" / "small-trial-g4-s9"
    manifest = runfolder.read_manifest(run)
    assert manifest.seed == 9 and manifest.config["games_per_lineup"] == 4
    assert (tmp_path / "reports" / "small-trial-g4-s9" / "report.html").is_file()
    assert not (tmp_path / "runs" / "small").exists()
