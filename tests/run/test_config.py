"""Study configs: validation errors name the key and what is allowed; rule-set inheritance."""

from __future__ import annotations

from pathlib import Path

import pytest

from marrakech_sim.errors import ConfigError
from marrakech_sim.run.config import load_study, study_from_dict


def minimal(**changes: object) -> dict[str, object]:
    data: dict[str, object] = {
        "seed": 1,
        "games_per_lineup": 10,
        "rulesets": {"standard": {}},
        "strategies": {"random": {}},
        "schedule": {"kind": "self_play"},
    }
    data.update(changes)
    return data


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"sedd": 1}, "unknown key 'sedd' at the top level; allowed: name"),
        ({"skill_levels": ["random"]}, "skill_levels = ['random']: expected a list of two or"),
        ({"skill_levels": "random"}, "skill_levels = 'random': expected a list of two or more"),
        ({"skill_levels": ["random", "x"]}, "skill_levels: unknown name 'x'; allowed: random"),
        ({"skill_levels": ["random", "random"]}, "skill_levels"),
        ({"report": 1}, "report = 1: expected a table with matters_pp"),
        ({"report": {"matters": 1}}, "unknown key 'report.matters' in [report]; allowed: matt"),
        ({"report": {"matters_pp": 0}}, "report.matters_pp = 0: allowed are numbers of percent"),
        ({"report": {"matters_pp": True}}, "report.matters_pp = True: allowed are numbers"),
        ({"report": {"matters_pp": 60}}, "above 0 and at most 50"),
        ({"report": {"margins": {"length": 1}}}, "unknown key 'report.margins.length'"),
        ({"report": {"margins": {"turns": -1}}}, "report.margins.turns = -1: allowed are finite"),
        ({"report": {"margins": {"turns": float("nan")}}}, "report.margins.turns = nan"),
        ({"rotation": "some"}, "rotation = 'some': allowed are 'all', 'latin', 'none'"),
        ({"games_per_lineup": 0}, "games_per_lineup = 0: allowed are integers from 1"),
        ({"seed": -1}, "seed = -1: allowed are integers from 0"),
        ({"strategies": {"x": {"ref": "nope"}}}, "strategies.x.ref: unknown strategy 'nope'"),
        (
            {"strategies": {"random": {"params": {"depth": 2}}}},
            "strategies.random.params.depth: unknown parameter",
        ),
        ({"strategies": {"random": {"rf": "random"}}}, "unknown key 'strategies.random.rf'"),
        ({"rulesets": {"a": {"players": 1}}}, "rulesets.a: players = 1"),
        ({"rulesets": {"a": {"colour": 1}}}, "rulesets.a: unknown rule option 'colour'"),
        ({"rulesets": {"a": {"base": "b"}}}, "rulesets.a.base = 'b': allowed are the rule set"),
        (
            {"rulesets": {"a": {"base": "b"}, "b": {"base": "a"}}},
            "the bases form a cycle",
        ),
        ({"schedule": {"kind": "league"}}, "schedule.kind = 'league': allowed are"),
        (
            {"schedule": {"kind": "self_play", "focus": ["random"]}},
            "schedule.focus does not apply to kind = 'self_play'",
        ),
        ({"schedule": {"kind": "gauntlet"}}, "schedule.focus is required for a gauntlet"),
        (
            {"schedule": {"kind": "lineups", "lineups": [["random", "random"]]}},
            "schedule.lineups[0] = ['random', 'random'] has 2 seats; rule set 'standard' "
            "has players = 4",
        ),
        (
            {"schedule": {"kind": "lineups", "lineups": [["random", "greedyy"]]}},
            "schedule.lineups[0]: unknown name 'greedyy'; allowed: random",
        ),
        ({"schedule": {"kind": "round_robin"}}, "cannot fill the 4 seats"),
        ({"schedule": {"kind": "self_play", "rulesets": ["x"]}}, "unknown name 'x'"),
        ({"stopping": {"rule": "interval_width"}}, "stopping.quantity = None: allowed are"),
        (
            {"stopping": {"rule": "interval_width", "quantity": "seat_win_share"}},
            "stopping.width is required",
        ),
        (
            {"stopping": {"rule": "sprt", "quantity": "seat_win_share", "p0": 0.2}},
            "stopping.p1 is required",
        ),
        (
            {
                "stopping": {
                    "rule": "sprt",
                    "quantity": "strategy_win_share",
                    "p0": 0.2,
                    "p1": 0.3,
                    "strategy": "zz",
                }
            },
            "stopping.strategy = 'zz': allowed are random",
        ),
        (
            {
                "stopping": {
                    "rule": "interval_width",
                    "quantity": "seat_win_share",
                    "seat": 4,
                    "width": 0.1,
                }
            },
            "stopping.seat = 4: allowed are integers from 0 to 3",
        ),
    ],
)
def test_config_errors_name_key_and_allowed(changes: dict[str, object], message: str) -> None:
    """A bad config is refused before anything runs, naming the key and what is allowed."""
    with pytest.raises(ConfigError) as info:
        study_from_dict(minimal(**changes))
    assert message in str(info.value)


def test_ruleset_base_rederives_unset_options() -> None:
    """A rule set built on another with players = 3 re-derives rugs_per_colour (15)."""
    study = study_from_dict(
        minimal(
            rulesets={
                "four": {"starting_dirhams": 20},
                "three": {"base": "four", "players": 3},
                "three_end": {"base": "three", "orient_at_end": True},
            }
        )
    )
    three = study.rules("three_end")
    assert (three.players, three.rugs_per_colour, three.starting_dirhams) == (3, 15, 20)
    assert three.orient_at_end and not study.rules("three").orient_at_end
    assert study.rules("four").rugs_per_colour == 12


def test_resolved_config_reads_back_to_the_same_study() -> None:
    """The manifest's resolved config rebuilds the identical study (what resume relies on)."""
    study = study_from_dict(
        minimal(
            strategies={"a": {"ref": "random"}, "b": {"ref": "random"}},
            schedule={"kind": "gauntlet", "focus": ["a"]},
            stopping={
                "rule": "sprt",
                "quantity": "strategy_win_share",
                "strategy": "a",
                "p0": 0.25,
                "p1": 0.3,
            },
        )
    )
    again = study_from_dict(study.to_dict())
    assert again == study
    assert again.to_dict()["rulesets"]["standard"]["rugs_per_colour"] == 12


def test_unreadable_toml_is_a_config_error(tmp_path: Path) -> None:
    """A TOML syntax error names the file."""
    bad = tmp_path / "bad.toml"
    bad.write_text("seed = = 1\n")
    with pytest.raises(ConfigError, match=r"bad\.toml"):
        load_study(bad)


def test_strategy_file_resolves_from_the_config_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 'file.py:Class' path in a config is found beside the config, from any folder."""
    study_dir = tmp_path / "study"
    study_dir.mkdir()
    (study_dir / "hoard.py").write_text(
        "from marrakech_sim.play.strategy import BaseStrategy\n\n\n"
        "class Hoard(BaseStrategy):\n"
        '    """Never turns; places on the first option."""\n\n'
        "    def choose_rotation(self, view):\n        return 0\n\n"
        "    def choose_placement(self, view, options):\n        return options[0]\n"
    )
    (study_dir / "hoard.toml").write_text(
        '[rulesets.two]\nplayers = 2\n\n[strategies.hoard]\nref = "hoard.py:Hoard"\n\n'
        "[strategies.random]\n"
    )
    monkeypatch.chdir(tmp_path)  # the parent folder, as a user would run it

    def ref_of(path: str | Path) -> str:
        return next(s.ref for s in load_study(path).strategies if s.label == "hoard")

    ref = ref_of("study/hoard.toml")
    assert ref == f"{(study_dir / 'hoard.py').resolve()}:Hoard"
    monkeypatch.chdir(study_dir)
    assert ref_of("hoard.toml") == ref


def test_skill_levels_and_margins_are_kept_in_the_resolved_config() -> None:
    """skill_levels and [report] read back from the resolved config (run.json) unchanged;
    a study without them resolves to a config without those keys."""
    data = minimal(
        strategies={"random": {}, "greedy": {}},
        skill_levels=["random", "greedy"],
        report={"matters_pp": 2.0, "margins": {"turns": 0.5}},
    )
    study = study_from_dict(data)
    again = study_from_dict(study.to_dict())
    assert again.skill_levels == ("random", "greedy")
    assert again.report is not None and again.report.margin("turns") == 0.5
    assert again.report.margin("margin") == 1.0 and again.report.matters_pp == 2.0
    plain = study_from_dict(minimal()).to_dict()
    assert "skill_levels" not in plain and "report" not in plain
