"""What keeps the report's memory flat: parts of the run are read in bounded batches.

No timing and no RSS here (benchmarks/bench_report.py measures those): these tests check
that a batch holds a bounded number of games, and that reading in batches gives the same
result as reading the whole run at once.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
from conftest import ROOT, play_run

from marrakech_sim import record


@pytest.fixture(scope="module")
def parts_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A played run of many small parts (chunk_games 24), with move records."""
    return play_run(
        tmp_path_factory.mktemp("memory") / "run",
        {
            "seed": 11,
            "games_per_lineup": 96,
            "chunk_games": 24,
            "rulesets": {"two": {"players": 2}, "four": {}},
            "strategies": {"random": {}, "greedy": {}},
            "schedule": {"kind": "round_robin", "repeat": True},
        },
    )


def _batch_games(batch: str) -> int:
    return int(duckdb.sql(f"SELECT count(*) FROM {batch}").fetchall()[0][0])


def test_notable_batches_are_bounded_by_a_number_of_games(
    parts_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """notable_games reads at most NOTABLE_BATCH_GAMES games at once (or one part's worth)."""
    monkeypatch.setattr(record, "NOTABLE_BATCH_GAMES", 50)
    part_rows = [pq.read_metadata(p).num_rows for p in (parts_run / "games").glob("*.parquet")]
    assert len(part_rows) > 4
    batches = record._notable_batches(duckdb.connect(), parts_run)
    sizes = [_batch_games(games) for games, _ in batches]
    assert len(batches) > 1
    assert sum(sizes) == sum(part_rows)
    assert max(sizes) <= max(50, max(part_rows))


def test_notable_games_in_batches_equal_one_pass(
    parts_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each kind's game is the same whether the run is read part by part or all at once."""
    monkeypatch.setattr(record, "NOTABLE_BATCH_GAMES", 1 << 40)
    whole = record.notable_games(parts_run)
    assert len(record._notable_batches(duckdb.connect(), parts_run)) == 1
    monkeypatch.setattr(record, "NOTABLE_BATCH_GAMES", 1)
    assert len(record._notable_batches(duckdb.connect(), parts_run)) > 4
    assert record.notable_games(parts_run) == whole
    assert {"longest", "shortest", "largest_payment"} <= {g.kind for g in whole}


@pytest.mark.parametrize("damage", ["renamed", "swapped"])
def test_parts_that_do_not_pair_are_read_as_one_batch(
    parts_run: Path, tmp_path: Path, damage: str
) -> None:
    """A run whose moves parts do not hold the games of the games part of their name (a
    name apart, or two parts' contents swapped) is read in one batch, with the same result."""
    run = tmp_path / "run"
    shutil.copytree(parts_run, run)
    moves = sorted((run / "moves").glob("*.parquet"))
    if damage == "renamed":
        moves[0].rename(moves[0].with_name("part-99999.parquet"))
    else:
        moves[0].rename(run / "moves" / "_swap")
        moves[1].rename(moves[0])
        (run / "moves" / "_swap").rename(moves[1])
    assert len(record._notable_batches(duckdb.connect(), run)) == 1
    assert record.notable_games(run) == record.notable_games(parts_run)


@pytest.mark.slow  # plays a study twice and reports it twice (about a minute)
def test_bench_report_plays_a_study_and_prints_each_size(tmp_path: Path) -> None:
    """bench_report.py --study prints run and report peak RSS and wall time per size, and
    their ratios."""
    study = tmp_path / "tiny.toml"
    study.write_text(
        "seed = 3\n[rulesets.two]\nplayers = 2\n[strategies.random]\n[strategies.greedy]\n"
        '[schedule]\nkind = "round_robin"\n'
    )
    script = ROOT / "benchmarks" / "bench_report.py"
    sizes = ["--sizes", "20", "40", "--dir", str(tmp_path / "bench")]
    out = subprocess.run(
        [sys.executable, str(script), "--study", str(study), *sizes],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    ).stdout
    *rows, ratio = [json.loads(line) for line in out.splitlines()]
    assert [r["games"] for r in rows] == [20, 40]
    for row in rows:
        assert min(row[k] for k in ("run_peak_mb", "run_s", "report_peak_mb", "report_s")) > 0
    assert set(ratio) == {
        "run_peak_mb_ratio",
        "run_s_ratio",
        "report_peak_mb_ratio",
        "report_s_ratio",
    }
