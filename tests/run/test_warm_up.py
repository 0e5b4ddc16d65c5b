"""The warm-up before a run: it says so before compiling the game loop into an empty cache."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path

import pytest

from marrakech_sim import kernel_cache
from marrakech_sim.run.chunk import COMPILING, Prepared
from marrakech_sim.run.config import study_from_dict


def _prepared(strategies: list[str]) -> Prepared:
    return Prepared(
        study_from_dict(
            {
                "seed": 1,
                "games_per_lineup": 2,
                "chunk_games": 2,
                "rulesets": {"two": {"players": 2}},
                "strategies": {
                    s: ({"params": {"budget": 1}} if s == "expert" else {}) for s in strategies
                },
                "schedule": {"kind": "round_robin"},
            }
        )
    )


def test_the_warm_up_says_it_compiles_once_per_cache_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Into a cache folder that has not held the loop: a message before it is compiled
    (with the expert's search: a longer one); none the next time; one for both loops."""
    # the marker's folder only: numba keeps loading its kernels from the folder it read
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    told: list[str] = []
    _prepared(["random", "greedy"]).warm_up(told.append)
    assert told == [COMPILING[False]] and "once per installation" in told[0]
    _prepared(["random", "greedy"]).warm_up(told.append)
    assert len(told) == 1
    _prepared(["random", "expert"]).warm_up(told.append)
    assert told[1:] == [COMPILING[True]]
    _prepared(["greedy", "expert"]).warm_up(told.append)
    assert len(told) == 2
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "other"))
    _prepared(["random", "greedy", "expert"]).warm_up(told.append)  # both loops: one message
    assert told[2:] == [COMPILING[True]]
    assert kernel_cache.compiled_before("loop") and kernel_cache.compiled_before("loop-searching")


def test_a_cache_folder_that_cannot_be_written_only_costs_the_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache folder that is a file (or read-only): the run goes on, the message repeats."""
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "file"))
    told: list[str] = []
    for _ in range(2):
        _prepared(["random", "greedy"]).warm_up(told.append)
    assert told == [COMPILING[False]] * 2


def _expert_study(budget: int, games: int = 8) -> dict[str, object]:
    return {
        "seed": 1,
        "games_per_lineup": games,
        "chunk_games": 4,
        "rotation": "none",
        "rulesets": {"four": {"players": 4}},
        "strategies": {"expert": {"params": {"budget": budget}}, "greedy": {}},
        "schedule": {"kind": "lineups", "lineups": [["expert", "greedy", "greedy", "greedy"]]},
    }


def test_the_warm_up_of_the_largest_expert_budget_is_short() -> None:
    """The expert at its largest budget with 4 players: the warm-up plays its two games
    at a small budget (the kernels load as at any), so it takes seconds, not minutes deaf
    to Ctrl-C; the study's own budget is untouched, and the games' cost is estimated."""
    import time

    from marrakech_sim.strategies.expert import MAX_BUDGET

    prep = Prepared(study_from_dict(_expert_study(MAX_BUDGET)))
    started = time.monotonic()
    prep.warm_up()
    assert time.monotonic() - started < 60
    assert prep.params[prep.names.index("expert"), 0] == MAX_BUDGET
    seconds = prep.search_seconds()
    assert seconds is not None and seconds > 8 * prep.search_game_seconds[1] * 1000  # type: ignore[index]


def test_a_long_study_says_so_before_its_games_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Past LONG_RUN_SECONDS of expert games a run warns, with a figure and how to stop."""
    from marrakech_sim.run import runner

    caplog.set_level("INFO", logger="marrakech_sim")
    monkeypatch.setattr(runner, "LONG_RUN_SECONDS", 0.0)
    runner.run_study(study_from_dict(_expert_study(2, games=4)), tmp_path / "run", workers=0)
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("may take up to about" in m and "Ctrl-C stops the run" in m for m in said), said


def test_a_study_without_the_expert_has_no_estimate(tmp_path: Path) -> None:
    prep = _prepared(["random", "greedy"])
    prep.warm_up()
    assert prep.search_seconds() is None


@pytest.mark.parametrize("where", ["local cluster", "scheduler"])
def test_a_long_study_on_dask_says_so_before_its_games_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, where: str
) -> None:
    """The Dask backend warns as the process backend does (the same figure, from the
    runner's warm-up): on its own LocalCluster for its workers, on a cluster given by its
    scheduler per core (the cluster's workers are its own). The run then plays."""
    pytest.importorskip("distributed")
    from marrakech_sim.run import runner
    from marrakech_sim.run.dask_backend import DaskBackend, local_cluster

    caplog.set_level("INFO", logger="marrakech_sim")
    monkeypatch.setattr(runner, "LONG_RUN_SECONDS", 0.0)
    study = study_from_dict(_expert_study(2, games=4))
    with contextlib.ExitStack() as stack:
        if where == "scheduler":
            cluster = stack.enter_context(local_cluster(1))
            backend, workers = DaskBackend(scheduler=cluster.scheduler_address), None
        else:
            backend, workers = DaskBackend(), 1
        result = runner.run_study(study, tmp_path / "run", workers=workers, backend=backend)
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    long = [m for m in said if "may take up to about" in m and "Ctrl-C stops the run" in m]
    assert len(long) == 1, said
    assert " on 1 core (a rough figure" in long[0]
    assert result.games_played == 4


WARMED = """
from marrakech_sim.run.chunk import Prepared
from marrakech_sim.run.config import study_from_dict
from marrakech_sim.strategies import search

study = study_from_dict({
    "seed": 1, "games_per_lineup": 2, "chunk_games": 2, "rulesets": {"two": {"players": 2}},
    "strategies": {"random": {}, "expectimax": {"params": {"depth": 1}},
                   "mcts": {"params": {"rollouts": 4}}},
    "schedule": {"kind": "lineups",
                 "lineups": [["expectimax", "random"], ["mcts", "random"]]},
})
Prepared(study).warm_up()
print(len(search.expectimax_root.signatures), len(search.monte_carlo_root.signatures))
"""


def test_the_warm_up_loads_every_builtins_kernels_not_only_the_first_line_ups() -> None:
    """Two Python-loop line-ups in one rule set, expectimax's then mcts's: the warm-up
    plays a game of each, so mcts's first decision in the run is not its kernels' compile
    (under load into an empty cache, past decision_seconds: a fault). A fresh process,
    whose kernels none were called before."""
    out = subprocess.run(
        [sys.executable, "-c", WARMED], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["1", "1"], out


def test_the_cost_estimate_times_the_largest_budgets_games_once_loaded() -> None:
    """Self-play of placement-only (a searching twin at budget 0: greedy's speed) before
    the expert at budget 8: the estimate times the expert's line-up, not the first
    searching one, and times it once the loop is loaded (the first play's time is the
    loop's load: it made a 10-minute study 3 hours); each line-up's games are scaled by
    its budget over the timed games' (2)."""
    import time

    data: dict[str, object] = {
        **_expert_study(8, games=4),
        "strategies": {"placement-only": {}, "expert": {"params": {"budget": 8}}},
        "schedule": {"kind": "self_play"},
    }
    prep = Prepared(study_from_dict(data))
    prep.warm_up()
    started = time.perf_counter()
    prep.warm_up()  # loaded now: its two timed games again, and two untimed
    again = time.perf_counter() - started
    assert prep.search_game_seconds is not None
    measured, seconds = prep.search_game_seconds
    assert prep.plan.matches[measured].lineup[0] == "expert"
    assert 2 * seconds < again  # the timed games are a part of a warm-up
    # 4 expert games at budget 8, 4 placement-only games at budget 0 (counted as 1)
    assert prep.search_seconds() == pytest.approx(4 * seconds * 8 / 2 + 4 * seconds * 1 / 2)
