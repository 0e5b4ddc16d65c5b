"""The run folder matches LOG_FORMAT.md and opens in pandas, pyarrow and DuckDB."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from conftest import play_run

from marrakech_sim import runfolder

# LOG_FORMAT.md's columns and types (Arrow spelling); "?" marks a nullable column
EXPECTED = {
    "games": {
        "game_id": "int64",
        "match_id": "int64",
        "ruleset": "string",
        "seed": "uint64",
        "players": "int8",
        "turns": "int16",
        "end_reason": "string",
        "winners": "list<int8>",
        "tie_broken": "bool",
        "error": "string?",
        "block": "int64",
    },
    "seats": {
        "game_id": "int64",
        "seat": "int8",
        "strategy": "string",
        "colours": "string",
        "dirhams": "int16",
        "visible": "int16",
        "score": "int16?",
        "rank": "int8",
        "win_share": "float",
        "eliminated_turn": "int16?",
        "paid": "int16",
        "received": "int16",
    },
    "moves": {
        "game_id": "int64",
        "turn": "int16",
        "seat": "int8",
        "colour": "string",
        "rotation": "int8?",
        "roll": "int8",
        "assam_x": "int8",
        "assam_y": "int8",
        "facing": "string",
        "payment": "int16",
        "paid_to": "int8?",
        "bankrupt": "bool",
        "x1": "int8?",
        "y1": "int8?",
        "x2": "int8?",
        "y2": "int8?",
        "end_rotation": "int8?",
        "dirhams_after": "list<int16>",
    },
}


def _type_name(field: pa.Field) -> str:
    kind = field.type
    name = f"list<{kind.value_type}>" if pa.types.is_list(kind) else str(kind)
    return name + ("?" if field.nullable else "")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    config = {
        "seed": 9,
        "games_per_lineup": 60,
        "chunk_games": 50,
        "rulesets": {"four": {}, "two": {"players": 2}},
        "strategies": {"random": {}},
        "schedule": {"kind": "self_play"},
    }
    return play_run(tmp_path_factory.mktemp("storage") / "run", config)


def test_manifest_has_the_contract_fields(run_dir: Path) -> None:
    """run.json holds format_version 1, ids, dates, versions, seed, resolved config, plan."""
    m = runfolder.read_manifest(run_dir).to_dict()
    for key in ("run_id", "created", "program_version", "seed", "config", "games_planned"):
        assert key in m
    assert m["format_version"] == 1 and m["status"] == "complete"
    assert m["games_planned"] == m["games_played"] == 120
    assert m["config"]["rulesets"]["two"]["colours_per_player"] == 2


@pytest.mark.parametrize("table", runfolder.TABLES)
def test_columns_and_types_match_log_format(run_dir: Path, table: str) -> None:
    """Every LOG_FORMAT.md column is there with its type; added columns come after."""
    schema = ds.dataset(run_dir / table, format="parquet").schema
    found = {f.name: _type_name(f) for f in schema}
    for name, kind in EXPECTED[table].items():
        assert found[name] == kind, name
    assert list(found)[: len(EXPECTED[table])] == list(EXPECTED[table])
    extra = set(found) - set(EXPECTED[table])
    assert extra <= {"visible_after"}


def test_tables_open_in_pandas_pyarrow_and_duckdb(run_dir: Path) -> None:
    """pandas, pyarrow and DuckDB read the same rows from the table folders."""
    for table in runfolder.TABLES:
        via_pandas = pd.read_parquet(run_dir / table)
        via_arrow = ds.dataset(run_dir / table, format="parquet").to_table()
        via_duckdb = duckdb.sql(
            f"SELECT count(*) AS n FROM read_parquet('{run_dir / table}/*.parquet')"
        ).df()
        assert len(via_pandas) == via_arrow.num_rows == via_duckdb["n"].iloc[0] > 0
    games = runfolder.read_table(run_dir, "games")
    moves = runfolder.read_table(run_dir, "moves")
    assert (games["game_id"].to_numpy() == range(120)).all()
    assert (moves.groupby("game_id").size().to_numpy() == games["turns"].to_numpy()).all()
    per_game = duckdb.sql(
        f"SELECT game_id, count(*) AS n FROM read_parquet('{run_dir}/moves/*.parquet') "
        "GROUP BY game_id ORDER BY game_id"
    ).df()
    assert (per_game["n"].to_numpy() == games["turns"].to_numpy()).all()


def test_two_player_rows_carry_two_colours_and_lists(run_dir: Path) -> None:
    """Two-player seats own two colours; dirhams_after has one entry per seat."""
    seats = runfolder.read_table(run_dir, "seats")
    games = runfolder.read_table(run_dir, "games")
    two = games.loc[games["players"] == 2, "game_id"]
    assert set(seats.loc[seats["game_id"].isin(two), "colours"]) == {"ry", "bp"}
    moves = pq.read_table(run_dir / "moves").to_pandas()
    lengths = moves["dirhams_after"].map(len)
    assert set(lengths) == {2, 4}


def test_part_writes_are_atomic_and_temporaries_are_skipped(tmp_path: Path) -> None:
    """A part is written under a hidden name then renamed; readers skip leftovers."""
    table = pa.table({"game_id": pa.array([1, 2], pa.int64())})
    runfolder.write_part(tmp_path, "games", 0, table)
    (tmp_path / "games" / ".part-000001.parquet.99.tmp").write_bytes(b"half a file")
    assert sorted(p.name for p in (tmp_path / "games").iterdir()) == [
        ".part-000001.parquet.99.tmp",
        "part-000000.parquet",
    ]
    assert ds.dataset(tmp_path / "games", format="parquet").to_table().num_rows == 2
    assert runfolder.remove_temporaries(tmp_path) == 1
