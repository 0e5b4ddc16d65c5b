"""Sweeps (`[sweep]` in a study config): one rule set per value, common seeds, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from marrakech_sim import ConfigError, runfolder
from marrakech_sim.rules import Rules
from marrakech_sim.run.config import study_from_dict
from marrakech_sim.run.plan import Plan
from marrakech_sim.run.runner import resume_run, run_study
from marrakech_sim.run.sweep import sweep_from_dict, sweep_rules


def config(sweep: Any, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "seed": 11,
        "games_per_lineup": 8,
        "chunk_games": 8,
        "rulesets": {"four": {}, "two": {"players": 2}},
        "strategies": {"random": {}},
        "schedule": {"kind": "self_play"},
        "sweep": sweep,
    }
    data.update(changes)
    return data


def test_one_rule_set_per_value_in_place_of_its_base() -> None:
    """Each swept rule set is replaced by one rule set per value, named BASE_KEY_VALUE,
    that differs from the base in the swept option only; an unswept rule set stays."""
    study = study_from_dict(config({"rulesets": ["four"], "starting_dirhams": [10, 20, 50]}))
    names = study.ruleset_names
    assert names == (
        "four_starting_dirhams_10",
        "four_starting_dirhams_20",
        "four_starting_dirhams_50",
        "two",
    )
    for name, value in zip(names[:3], (10, 20, 50), strict=True):
        assert study.rules(name).differences() == {"starting_dirhams": value}
    assert study.rules("two") == Rules(players=2)
    assert study.schedule.rulesets == names  # played, as every rule set is by default
    assert study.common_seeds  # a sweep plays common seeds
    sweep = study.sweep
    assert sweep is not None and sweep.bases == ("four",)
    assert [p.value("starting_dirhams") for p in sweep.points_of("four")] == [10, 20, 50]
    assert sweep.points[0].title == "four (4 players), starting dirhams 10"


@pytest.mark.parametrize(
    ("sweep", "expected"),
    [
        # one seat's purse: the others keep theirs (seat counted from 0)
        ({"seat_dirhams": {"2": [30, 34]}}, [(30, 30, 30, 30), (30, 30, 34, 30)]),
        ({"rugs_per_colour": [6, 9]}, [6, 9]),
        ({"board_size": [5, 9]}, [5, 9]),
        (
            {"die_faces": {"std": [1, 2, 2, 3, 3, 4], "flat": [1, 2, 3, 4]}},
            [(1, 2, 2, 3, 3, 4), (1, 2, 3, 4)],
        ),
    ],
)
def test_each_sweepable_option(sweep: dict[str, Any], expected: list[Any]) -> None:
    """starting purses, one seat's purse, rugs, board size and named dice lists expand."""
    study = study_from_dict(config({"rulesets": ["four"], **sweep}))
    points = study.sweep.points_of("four") if study.sweep else ()
    key = points[0].values[0][0]
    attr = {"seat_dirhams.2": "purses"}.get(key, key)
    assert [getattr(study.rules(p.ruleset), attr) for p in points] == expected


def test_two_options_make_a_grid_and_seat_purses_follow_a_swept_start() -> None:
    """Two options give every pair of values; a seat's purse changes the purses that the
    swept starting_dirhams gives, leaving the other seats at it."""
    study = study_from_dict(
        config({"rulesets": ["two"], "starting_dirhams": [10, 30], "seat_dirhams": {"1": [0, 40]}})
    )
    got = {name: study.rules(name).purses for name in study.ruleset_names if name != "four"}
    assert got == {
        "two_starting_dirhams_10_seat_dirhams.1_0": (10, 0),
        "two_starting_dirhams_10_seat_dirhams.1_40": (10, 40),
        "two_starting_dirhams_30_seat_dirhams.1_0": (30, 0),
        "two_starting_dirhams_30_seat_dirhams.1_40": (30, 40),
    }


def test_sweep_rules_sets_one_points_options() -> None:
    """sweep_rules (the expansion's one step, for callers that build rule sets) keeps the
    base's other options and seat purses, and sets every purse from a list."""
    base = Rules(players=3, orient_at_end=True, seat_dirhams=(30, 31, 32))
    assert sweep_rules(base, {"seat_dirhams.0": 25}) == Rules(
        players=3, orient_at_end=True, seat_dirhams=(25, 31, 32)
    )
    assert sweep_rules(base, {"seat_dirhams": [1, 2, 3]}).purses == (1, 2, 3)
    assert sweep_rules(Rules(), {"die_faces": [1, 6]}).die_faces == (1, 6)


def test_schedule_rulesets_naming_a_base_play_its_points() -> None:
    """schedule.rulesets may name a swept rule set: its points are played in its place."""
    study = study_from_dict(
        config(
            {"rulesets": ["two"], "rugs_per_colour": [5, 6]},
            schedule={"kind": "self_play", "rulesets": ["two"]},
        )
    )
    assert study.schedule.rulesets == ("two_rugs_per_colour_5", "two_rugs_per_colour_6")


def test_resolved_config_reads_back_to_the_same_study() -> None:
    """The resolved config a run folder keeps (rule sets expanded, the sweep with its
    points) reads back to the same study, without expanding twice."""
    study = study_from_dict(config({"starting_dirhams": [20, 40], "board_size": [5, 7]}))
    resolved = study.to_dict()
    assert set(resolved["rulesets"]) == set(study.ruleset_names)
    again = study_from_dict(resolved)
    assert again == study
    assert again.to_dict() == resolved
    # a resolved config whose keys were sorted on the way (JSON tools do) reads the same
    shuffled = study_from_dict(json.loads(json.dumps(resolved, sort_keys=True)))
    assert shuffled.sweep is not None and study.sweep is not None
    assert shuffled.sweep.keys == study.sweep.keys == ("starting_dirhams", "board_size")
    assert sorted(shuffled.sweep.points, key=str) == sorted(study.sweep.points, key=str)


def test_every_value_plays_the_same_block_seeds() -> None:
    """Common random numbers: block r of every value of a base has one seed."""
    study = study_from_dict(config({"starting_dirhams": [10, 20, 30]}, games_per_lineup=40))
    plan = Plan(study)
    seeds: dict[str, list[int]] = {}
    for match in plan.matches:
        blocks = plan.match_blocks(match.match_id)
        assert (plan.block_matches(blocks) == match.match_id).all()
        seeds[match.ruleset] = plan.block_seed_keys(blocks).tolist()
    by_base = {
        base: [seeds[p.ruleset] for p in study.sweep.points_of(base)]  # type: ignore[union-attr]
        for base in ("four", "two")
    }
    for lists in by_base.values():
        assert len(lists) == 3 and all(x == lists[0] for x in lists)
        assert len(set(lists[0])) == len(lists[0])  # blocks of one value: distinct seeds


@pytest.fixture(scope="module")
def swept_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sweep") / "run"
    run_study(
        study_from_dict(config({"rulesets": ["four"], "seat_dirhams": {"3": [30, 90]}})),
        out,
        workers=0,
    )
    return out


def test_values_share_their_games_seeds_and_dice(swept_run: Path) -> None:
    """In a played sweep the two values' games have the same seeds, block by block, and
    roll the same dice as long as the purses have not changed a decision (the first turns
    of random players, whose choices do not depend on the purses, until a bankruptcy)."""
    games = runfolder.read_table(swept_run, "games")
    moves = runfolder.read_table(swept_run, "moves")
    four = games.loc[games["ruleset"].str.startswith("four_")]
    low, high = "four_seat_dirhams.3_30", "four_seat_dirhams.3_90"
    a = four.loc[four["ruleset"] == low].sort_values("game_id")
    b = four.loc[four["ruleset"] == high].sort_values("game_id")
    assert len(a) == len(b) > 0
    assert a["seed"].tolist() == b["seed"].tolist()
    rolls = moves.merge(games[["game_id", "ruleset", "block"]], on="game_id")
    first = rolls.loc[rolls["turn"] < 4].sort_values(["ruleset", "block", "game_id", "turn"])
    roll_a = first.loc[first["ruleset"] == low, "roll"].to_numpy()
    roll_b = first.loc[first["ruleset"] == high, "roll"].to_numpy()
    assert len(roll_a) == len(roll_b) > 0
    np.testing.assert_array_equal(roll_a, roll_b)
    seats = runfolder.read_table(swept_run, "seats").merge(games[["game_id", "ruleset"]])
    rich = seats.loc[(seats["ruleset"] == high) & (seats["seat"] == 3), "dirhams"]
    assert (rich > 0).all()  # 90 dirhams: never bankrupt in these short games


def test_a_sweep_resumes_and_plays_the_same_games(swept_run: Path, tmp_path: Path) -> None:
    """A sweep runs like any study: interrupted and resumed, or played by two workers,
    it gives the same tables as one serial run."""
    study = study_from_dict(config({"rulesets": ["four"], "seat_dirhams": {"3": [30, 90]}}))
    parallel = tmp_path / "parallel"
    run_study(study, parallel, workers=2)
    for name in runfolder.TABLES:
        pd.testing.assert_frame_equal(
            runfolder.read_table(swept_run, name), runfolder.read_table(parallel, name)
        )
    manifest = runfolder.read_manifest(parallel)
    assert manifest.config["sweep"]["points"]
    # a resume of the finished run reads its resolved config back and has nothing to do
    assert resume_run(parallel, workers=0).status == "complete"


@pytest.mark.parametrize(
    ("sweep", "changes", "message"),
    [
        ({"initial_facing": ["N", "E"]}, {}, "unknown key 'sweep.initial_facing' in [sweep]"),
        ({}, {}, "sweep: no option to sweep"),
        (
            {"starting_dirhams": [1, 2], "board_size": [5, 7], "rugs_per_colour": [3, 4]},
            {},
            "sweep: 3 options",
        ),
        ({"starting_dirhams": 20}, {}, "sweep.starting_dirhams = 20: allowed is a list of 2"),
        ({"starting_dirhams": [20]}, {}, "sweep.starting_dirhams = [20]: allowed is a list"),
        ({"starting_dirhams": [20, 20]}, {}, "sweep.starting_dirhams = [20, 20]: a value appears"),
        ({"starting_dirhams": [20, -1]}, {}, "integers from 0"),
        ({"rugs_per_colour": [0, 3]}, {}, "sweep.rugs_per_colour = [0, 3]: allowed"),
        ({"board_size": [5, 6]}, {}, "board_size = 6: must be odd"),
        ({"board_size": [True, 5]}, {}, "sweep.board_size = [True, 5]"),
        ({"seat_dirhams": [30, 31]}, {}, "sweep.seat_dirhams = [30, 31]: sweep one seat's purse"),
        ({"seat_dirhams": {"x": [30, 31]}}, {}, "sweep.seat_dirhams.x: SEAT is a seat number"),
        (
            {"seat_dirhams": {"3": [30, 31]}},
            {},
            "sweep.seat_dirhams.3: the rule set has seats 0 to 1 (2 players), in rule set "
            "'two' with seat_dirhams.3 = 30",
        ),
        ({"die_faces": [[1, 2], [3]]}, {}, "sweep.die_faces = [[1, 2], [3]]: allowed is a table"),
        ({"die_faces": {"a": [1, 2], "b": [0]}}, {}, "sweep.die_faces.b: die_faces = [0]"),
        ({"rulesets": ["five"], "board_size": [5, 7]}, {}, "sweep.rulesets: unknown name 'five'"),
        ({"rulesets": "four", "board_size": [5, 7]}, {}, "sweep.rulesets = 'four': expected"),
        ({"board_size": [5, 7]}, {"common_seeds": False}, "common_seeds = false: a sweep"),
        (
            {"starting_dirhams": [20, 40]},
            {"rulesets": {"four": {"seat_dirhams": [30, 31, 32, 33]}}},
            "sweep.starting_dirhams: the rule set sets seat_dirhams",
        ),
        (
            {"board_size": [5, 7]},
            {"rulesets": {"four": {}, "four_board_size_5": {}}},
            "'four_board_size_5' it makes is already a rule set",
        ),
        ("starting_dirhams", {}, "sweep = 'starting_dirhams': expected a table"),
        ({"board_size": [5, 7], "axes": ["board_size"]}, {}, "sweep.axes = ['board_size']: only"),
    ],
)
def test_bad_sweep_is_a_one_line_error(sweep: Any, changes: dict[str, Any], message: str) -> None:
    """A bad [sweep] is one line naming the key and what is allowed."""
    with pytest.raises(ConfigError) as caught:
        study_from_dict(config(sweep, **changes))
    text = str(caught.value)
    assert "\n" not in text
    assert message in text


def test_resolved_points_must_name_rule_sets() -> None:
    """A resolved sweep's points are checked against the rule sets it came with."""
    rulesets = {"a": Rules()}
    raw = {"rulesets": ["four"], "board_size": [5, 7], "points": {"b": {"base": "four"}}}
    with pytest.raises(ConfigError, match=r"sweep\.points\.b: not a rule set of the config"):
        sweep_from_dict(raw, rulesets)
