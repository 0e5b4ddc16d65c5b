"""Paired variant comparisons: rule sets on common block seeds, analysed pair by pair."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from marrakech_sim import runfolder
from marrakech_sim.errors import ConfigError
from marrakech_sim.run.config import study_from_dict
from marrakech_sim.run.plan import Plan, block_seeds
from marrakech_sim.run.runner import run_study


def study_data(**changes: Any) -> dict[str, Any]:
    """Two 4-player rule sets and a 3-player one, two line-ups each, latin seatings."""
    data: dict[str, Any] = {
        "seed": 77,
        "games_per_lineup": 40,
        "chunk_games": 24,
        "rotation": "latin",
        "rulesets": {
            "standard": {},
            "orient_at_end": {"base": "standard", "orient_at_end": True},
            "three": {"players": 3},
        },
        "strategies": {"random": {}, "greedy": {}},
        "schedule": {"kind": "round_robin", "repeat": True},
    }
    data.update(changes)
    return data


def seeds_by_block(plan: Plan) -> pd.DataFrame:
    """One row per block: its match's rule set, line-up position, round and seed."""
    rows = []
    for c in range(plan.chunks):
        cg = plan.chunk_games(c)
        first = np.flatnonzero(np.r_[True, np.diff(cg.block) != 0])
        for b, m, seed in zip(cg.block[first], cg.match_id[first], cg.seed[first], strict=True):
            rows.append({"block": int(b), "match": int(m), "seed": int(seed)})
    frame = pd.DataFrame(rows)
    frame["ruleset"] = [plan.matches[m].ruleset for m in frame["match"]]
    frame["lineup"] = [plan.matches[m].lineup for m in frame["match"]]
    frame["round"] = frame.groupby("match").cumcount()
    return frame


def test_common_seeds_share_a_seed_per_round_and_lineup() -> None:
    """With common_seeds, round r of line-up i has one seed in every rule set (exact)."""
    plan = Plan(study_from_dict(study_data(common_seeds=True)))
    frame = seeds_by_block(plan)
    four = frame.loc[frame["ruleset"] != "three"]
    by_pair = four.groupby(["lineup", "round"])["seed"].nunique()
    assert (by_pair == 1).all() and len(by_pair) > 1
    # a rule set never plays one seed twice
    assert not frame.duplicated(["ruleset", "seed"]).any()
    std = four.loc[four["ruleset"] == "standard"].set_index(["lineup", "round"])["seed"]
    end = four.loc[four["ruleset"] == "orient_at_end"].set_index(["lineup", "round"])["seed"]
    pd.testing.assert_series_equal(std.sort_index(), end.sort_index())


def test_without_common_seeds_the_seeds_are_those_of_the_block_numbers() -> None:
    """The default design is unchanged: block b plays block_seeds(seed, b) (exact)."""
    plan = Plan(study_from_dict(study_data()))
    frame = seeds_by_block(plan)
    expected = block_seeds(77, frame["block"].to_numpy())
    assert (frame["seed"].to_numpy(dtype=np.uint64) == expected).all()
    assert frame["seed"].is_unique


def test_common_seeds_must_be_a_boolean() -> None:
    """common_seeds = "yes" is a one-line config error naming the key."""
    with pytest.raises(ConfigError, match="common_seeds"):
        study_from_dict(study_data(common_seeds="yes"))


def test_common_seeds_resolved_config_round_trips() -> None:
    """The manifest's resolved config keeps the option, and a config without it is unchanged."""
    on = study_from_dict(study_data(common_seeds=True))
    assert on.to_dict()["common_seeds"] is True
    assert study_from_dict(on.to_dict()).common_seeds is True
    assert "common_seeds" not in study_from_dict(study_data()).to_dict()


def test_paired_run_is_the_same_whatever_the_workers(tmp_path: Path) -> None:
    """A common_seeds study gives the same tables with 0 and 2 workers (exact)."""
    study = study_from_dict(study_data(common_seeds=True))
    run_study(study, tmp_path / "a", workers=0)
    run_study(study, tmp_path / "b", workers=2)
    for name in runfolder.TABLES:
        pd.testing.assert_frame_equal(
            runfolder.read_table(tmp_path / "a", name), runfolder.read_table(tmp_path / "b", name)
        )
    games = runfolder.read_table(tmp_path / "a", "games")
    first = games.sort_values("game_id").groupby("block").first()
    shared = first.groupby("seed")["ruleset"].nunique()
    assert (shared >= 2).any()  # the rule sets met the same dice
