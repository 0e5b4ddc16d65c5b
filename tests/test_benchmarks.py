"""The benchmark scripts still run and report every line (a smoke test: no timing asserts).

Each runs in its own process: the scripts pin themselves to one core.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT

BENCHMARKS = ROOT / "benchmarks"


def _run(script: str) -> dict:
    out = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--seconds", "0.05", "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    ).stdout
    return json.loads(out)


def test_bench_engine_reports_each_item_with_its_target():
    result = _run("bench_engine.py")
    assert set(result) == {"compiled", "api", "plugin", "perft"}
    for name in ("compiled", "api", "plugin"):
        assert result[name]["games_per_s"] > 0 and result[name]["target"] > 0
    assert result["perft"]["leaves"] == 1_091_040  # the depth-9 count from the 4-player start
    assert result["perft"]["nodes_per_s"] > 0


def test_bench_strategies_reports_each_line():
    result = _run("bench_strategies.py")
    assert "random, compiled" in result and "mcts 30 rollouts, horizon 4" in result
    assert all(line["games_per_s"] > 0 for line in result.values())


@pytest.mark.slow  # starts a LocalCluster and idles it 5 s
def test_bench_dask_reports_the_cost_per_task():
    """bench_dask.py times empty tasks on a LocalCluster and prints every figure."""
    pytest.importorskip("distributed")
    out = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_dask.py"), "--tasks", "20", "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    ).stdout
    tasks = json.loads(out)["empty_tasks"]
    assert {"idle_cpu_s_per_s", "round_trip_ms", "bulk_cpu_ms"} <= set(tasks)
    assert all(value >= 0 for value in tasks.values())
