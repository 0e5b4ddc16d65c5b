"""`move_columns = "replay"`: a run whose moves table holds only the columns a replay
needs (format version 2). Its games are the same; every other moves column, rebuilt by
replaying, is what the run with every column wrote; verify, game records, notable games
and the report read it as they read that run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from conftest import play_run

import marrakech_sim
from marrakech_sim import runfolder
from marrakech_sim.cli import main
from marrakech_sim.errors import ConfigError, RunFolderError
from marrakech_sim.record import notable_games, records_from_run
from marrakech_sim.report.build import build_report
from marrakech_sim.run.config import study_from_dict
from marrakech_sim.run.verify import verify_run

#: random through the Python loop, now and then raising: some games end as faults
RAISER = f"{Path(__file__).with_name('test_runner.py')}:Raiser"


CONFIG: dict[str, Any] = {
    "seed": 11,
    "games_per_lineup": 12,
    "chunk_games": 40,
    "rotation": "latin",
    "rulesets": {
        "four": {},
        "three_end": {"players": 3, "orient_at_end": True},
        "two": {"players": 2},
    },
    "strategies": {"random": {}, "greedy": {}, "raiser": {"ref": RAISER}},
    "schedule": {"kind": "round_robin", "repeat": True},
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("columns")
    return {
        columns: play_run(base / columns, {**CONFIG, "move_columns": columns})
        for columns in ("all", "replay")
    }


def _table(run: Path, name: str) -> pa.Table:
    keys = [("game_id", "ascending")] + ([("turn", "ascending")] if name == "moves" else [])
    return pq.read_table(run / name).sort_by(keys)


def test_the_same_games_with_a_moves_table_of_the_replay_columns(runs: dict[str, Path]) -> None:
    full, replay = runs["all"], runs["replay"]
    for name in ("games", "seats"):
        assert _table(replay, name).equals(_table(full, name)), name
    games = _table(full, "games").to_pandas()
    assert (games["end_reason"] == "error").any()  # the Python loop's faults are in it
    assert set(games["players"]) == {2, 3, 4}
    moves = _table(replay, "moves")
    assert tuple(moves.column_names) == runfolder.REPLAY_MOVE_COLUMNS
    assert moves.equals(_table(full, "moves").select(list(runfolder.REPLAY_MOVE_COLUMNS)))
    manifest = json.loads((replay / "run.json").read_text())
    assert manifest["format_version"] == runfolder.REPLAY_FORMAT_VERSION == 2
    assert manifest["config"]["move_columns"] == "replay"
    assert manifest["moves_columns"] == list(runfolder.REPLAY_MOVE_COLUMNS)
    full_manifest = json.loads((full / "run.json").read_text())
    assert full_manifest["format_version"] == 1 and "move_columns" not in full_manifest["config"]


def test_read_moves_rebuilds_every_column(runs: dict[str, Path]) -> None:
    """Replayed, the replay-only table is the other run's table, value for value and
    type for type (payments, bankruptcies, dirhams and visible squares after each turn)."""
    full, replay = runs["all"], runs["replay"]
    rebuilt = runfolder.read_moves(replay)
    assert rebuilt.equals(_table(full, "moves"))
    assert pc_any(rebuilt, "bankrupt") and pc_any(rebuilt, "payment")
    some = [3, 40, 77]
    assert runfolder.read_moves(replay, some).equals(runfolder.read_moves(full, some))
    assert runfolder.read_moves(replay, []).num_rows == 0


def pc_any(table: pa.Table, column: str) -> bool:
    return bool(any(table.column(column).to_pylist()))


def test_an_action_the_rules_refuse_is_named(runs: dict[str, Path]) -> None:
    replay = runs["replay"]
    moves = _table(replay, "moves")
    games = _table(replay, "games").select(["game_id", "ruleset"])
    row = 5  # game 0's sixth turn: a placement away from Assam
    x1 = moves.column("x1").to_pylist()
    x1[row] = (x1[row] + 3) % 7
    bad = moves.set_column(moves.schema.get_field_index("x1"), "x1", pa.array(x1, pa.int8()))
    game = moves.column("game_id")[row].as_py()
    rulesets = runfolder.run_rulesets(runfolder.read_manifest(replay))
    with pytest.raises(RunFolderError, match=rf"game {game}: its recorded actions do not replay"):
        runfolder.with_outcomes(bad, games, rulesets)
    with pytest.raises(RunFolderError, match="unknown rule set 'four'"):
        runfolder.with_outcomes(moves, games, {})


def test_verify_replays_a_replay_only_run(runs: dict[str, Path], tmp_path: Path) -> None:
    report = verify_run(runs["replay"])
    assert report.ok, (report.problems, report.examples)
    assert report.games == len(_table(runs["replay"], "games"))
    copy = tmp_path / "copy"
    shutil.copytree(runs["replay"], copy)
    path = copy / "moves" / "part-000000.parquet"
    data = pq.read_table(path)
    rolls = data.column("roll").to_pylist()
    rolls[7] = 4 if rolls[7] != 4 else 3  # a roll the dice did not give
    index = data.schema.get_field_index("roll")
    data = data.set_column(index, data.schema.field(index), pa.array(rolls, pa.int8()))
    pq.write_table(data, path, compression="zstd")
    report = verify_run(copy)
    assert report.mismatches > 0
    assert any("moves.roll" in e for e in report.examples), report.examples
    assert CliRunner().invoke(main, ["verify", str(copy)]).exit_code == 1


def test_records_and_notable_games_are_those_of_the_full_run(runs: dict[str, Path]) -> None:
    full, replay = runs["all"], runs["replay"]
    records = list(records_from_run(replay))
    assert records == list(records_from_run(full))
    assert any(r.result == "*" for r in records)  # a fault's record too
    found = notable_games(replay)
    assert found == notable_games(full)
    assert {"comeback", "largest_payment", "bankruptcy"} <= {n.kind for n in found}


def test_the_report_is_that_of_the_full_run(tmp_path: Path) -> None:
    """Every table of the report (the per-turn metrics replayed from their sample) is the
    same, also when the study keeps the moves of a share of its blocks."""
    config = {**CONFIG, "games_per_lineup": 24, "keep_moves": 0.5}
    reports = {}
    for columns in ("all", "replay"):
        run = play_run(tmp_path / f"run-{columns}", {**config, "move_columns": columns})
        out = tmp_path / f"report-{columns}"
        build_report([run], out, rating_games=1_000, moves_games=200)
        reports[columns] = out
    tables = sorted(p.name for p in reports["all"].glob("*.csv"))
    assert "score_over_turns.csv" in tables and "choices.csv" in tables
    for name in tables:
        if name == "runs.csv":  # the run's folder, id and digests
            continue
        a = (reports["all"] / name).read_text()
        assert (reports["replay"] / name).read_text() == a, name
    assert "decided_turn" in (reports["replay"] / "variant_summary.csv").read_text()
    said = "their scores after each turn replayed from the actions"
    assert said in (reports["replay"] / "report.md").read_text()
    assert said not in (reports["all"] / "report.md").read_text()


@pytest.mark.parametrize("value", ["some", 1, True, None])
def test_a_bad_move_columns_is_named(value: Any) -> None:
    with pytest.raises(ConfigError) as err:
        study_from_dict({**CONFIG, "move_columns": value})
    assert f"move_columns = {value!r}" in str(err.value)
    assert "'all'" in str(err.value) and "'replay'" in str(err.value)


def test_move_columns_is_in_the_resolved_config_only_when_set() -> None:
    assert "move_columns" not in study_from_dict(CONFIG).to_dict()
    study = study_from_dict({**CONFIG, "move_columns": "replay"})
    assert study.move_columns == "replay"
    assert study_from_dict(study.to_dict()).to_dict() == study.to_dict()


def test_load_run_gives_every_column_of_a_replay_only_run(runs: dict[str, Path]) -> None:
    """pandas: the moves with the outcomes replayed, as the full run's; the lazy engines
    give the stored columns."""
    full = marrakech_sim.load_run(runs["all"]).moves
    replay = marrakech_sim.load_run(runs["replay"])
    pd.testing.assert_frame_equal(replay.moves, full)
    some = replay.table("moves", ["game_id", "turn", "roll"])
    pd.testing.assert_frame_equal(some, full[["game_id", "turn", "roll"]])
    pd.testing.assert_frame_equal(
        replay.table("moves", ["game_id", "payment"]), full[["game_id", "payment"]]
    )
    with marrakech_sim.load_run(runs["replay"], engine="duckdb") as lazy:
        assert tuple(lazy.moves.columns) == runfolder.REPLAY_MOVE_COLUMNS


def test_bench_measures_either_moves_table() -> None:
    """`marrakech bench --move-columns replay` plays with the replay columns written and
    says so; a value not allowed is named with the allowed ones."""
    args = ["bench", "--games", "300", "--players", "2", "--records", "--workers", "0"]
    result = CliRunner().invoke(main, [*args, "--move-columns", "replay", "--json"])
    assert result.exit_code == 0, result.output
    got = json.loads(result.output)
    assert got["move_columns"] == "replay" and got["records"] and got["games"] >= 300
    result = CliRunner().invoke(main, [*args, "--move-columns", "replay"])
    assert "records on (replay columns)" in result.output
    result = CliRunner().invoke(main, [*args, "--move-columns", "some"])
    assert result.exit_code == 2 and "'some' is not one of 'all', 'replay'" in result.output
