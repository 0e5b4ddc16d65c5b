"""The warm-up before a run: it says so before compiling the game loop into an empty cache."""

from __future__ import annotations

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
