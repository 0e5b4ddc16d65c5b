"""marrakech_sim.load_run: a run folder's tables in one call, nullable integers kept."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow.dataset as ds
import pytest
from report_runs import write_run
from synthetic_games import make_run, make_turn_scores

import marrakech_sim
from marrakech_sim.errors import RunFolderError


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two small synthetic run folders with bankruptcies (null scores)."""
    out = []
    for i in range(2):
        games, seats = make_run({"x": 0.2, "y": 0.0}, 40, players=2, bankrupt_rate=0.2, seed=i)
        turns = make_turn_scores(games, seats, seed=i)
        folder = tmp_path_factory.mktemp("runs") / f"r{i}"
        out.append(
            write_run(folder, games, seats, turns, {"standard": {"players": 2}}, run_id=f"r{i}")
        )
    return out


def test_pandas_tables_keep_nullable_integers(runs: list[Path]) -> None:
    """Tables are DataFrames with pyarrow dtypes: a score with nulls stays an integer."""
    run = marrakech_sim.load_run(runs[0])
    seats = run.seats
    assert isinstance(seats, pd.DataFrame)
    assert str(seats["score"].dtype) == "int16[pyarrow]"
    assert seats["score"].isna().any() and not seats["score"].dropna().empty
    assert str(run.games["game_id"].dtype) == "int64[pyarrow]"
    assert run.games["game_id"].is_monotonic_increasing
    assert len(run.moves) > 0 and "dirhams_after" in run.moves
    assert run.manifest.run_id == "r0" and run.seats is seats  # read once, then kept


def test_duckdb_and_arrow_are_lazy_and_agree(runs: list[Path]) -> None:
    """The DuckDB relation and the pyarrow dataset give the same totals as pandas."""
    want = marrakech_sim.load_run(runs[0]).seats["win_share"].sum()
    rel = marrakech_sim.load_run(runs[0], engine="duckdb").seats
    got = rel.aggregate("sum(win_share) AS s").fetchall()[0][0]
    assert got == pytest.approx(float(want))
    data = marrakech_sim.load_run(runs[0], engine="arrow").seats
    assert isinstance(data, ds.Dataset)
    assert data.count_rows() == len(marrakech_sim.load_run(runs[0]).seats)


def test_a_run_used_as_a_context_closes_its_duckdb_connection(runs: list[Path]) -> None:
    """`with load_run(..., engine="duckdb") as run:` closes the connection on leaving: its
    relations can no longer be read, and the run reads its tables anew if asked."""
    import duckdb

    with marrakech_sim.load_run(runs[0], engine="duckdb") as run:
        rel = run.games
        n = rel.aggregate("count(*)").fetchall()[0][0]
        assert n > 0
    with pytest.raises(duckdb.ConnectionException):
        rel.aggregate("count(*)").fetchall()
    assert run.games.aggregate("count(*)").fetchall()[0][0] == n
    run.close()


def test_several_runs_are_tagged(runs: list[Path]) -> None:
    """load_runs stacks the runs with a run_id column first, in pandas and in DuckDB."""
    both = marrakech_sim.load_runs(runs)
    games = both.games
    assert games.columns[0] == "run_id"
    assert games.groupby("run_id").size().to_dict() == {
        r: len(marrakech_sim.load_run(p).games) for r, p in zip(("r0", "r1"), runs, strict=True)
    }
    rel = marrakech_sim.load_runs(runs, engine="duckdb").games
    assert rel.aggregate("count(DISTINCT run_id)").fetchall()[0][0] == 2


def test_bad_input_is_a_run_folder_error(tmp_path: Path, runs: list[Path]) -> None:
    """A folder that is not a run, an unknown engine or table: RunFolderError naming it."""
    with pytest.raises(RunFolderError, match="not a run folder"):
        marrakech_sim.load_run(tmp_path)
    with pytest.raises(RunFolderError, match="allowed: pandas, duckdb, arrow"):
        marrakech_sim.load_run(runs[0], engine="polars")
    with pytest.raises(RunFolderError, match="unknown table"):
        marrakech_sim.load_run(runs[0]).table("players")


def test_sortedness_check() -> None:
    """Rows already in key order are recognised (no sort needed); any inversion is not."""
    import pyarrow as pa

    from marrakech_sim.runfolder.read import is_sorted

    table = pa.table({"game_id": [0, 0, 1, 2, 2], "turn": [0, 1, 0, 0, 1]})
    assert is_sorted(table, ["game_id", "turn"])
    assert not is_sorted(table.take([0, 2, 1, 3, 4]), ["game_id", "turn"])
    assert not is_sorted(table.take([1, 0, 2, 3, 4]), ["game_id", "turn"])
    assert not is_sorted(pa.table({"game_id": [0, 0]}), ["game_id"])  # a repeat is not sorted
