"""Tune configs and the tune command's options: a bad one is a one-line error naming it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from marrakech_sim.cli import main
from marrakech_sim.design.tuning import load_tune_config, tune_config_from_dict
from marrakech_sim.errors import ConfigError

GOOD = {"seed": 1, "rulesets": {"two": {"players": 2}}, "strategies": {"greedy": {}}}


def test_a_good_config_takes_its_defaults() -> None:
    """Levels default to every strategy, the margin to 1 pp, the plan to TunePlan's."""
    config = tune_config_from_dict(GOOD)
    assert config.levels == ("greedy",)
    assert config.margin_pp == 1.0
    assert config.plan.confirm_games == 40_000


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"schedule": {"kind": "self_play"}}, "unknown key 'schedule' in a tune config; allowed"),
        ({"tune": {"games": 10}}, "unknown key tune.games; allowed are: levels, margin_pp"),
        ({"tune": {"levels": ["expert"]}}, "tune.levels = ['expert']: allowed is a list"),
        ({"tune": {"levels": []}}, "tune.levels = []: allowed is a list"),
        ({"tune": {"margin_pp": 0}}, "tune.margin_pp = 0: allowed is a number of pp above 0"),
        ({"tune": {"search_games": 1}}, "tune.search_games = 1: allowed is an integer from 2"),
        ({"tune": {"alpha": 2}}, "tune.alpha = 2: allowed is a number between 0 and 1"),
        ({"tune": 3}, "tune = 3: expected a table [tune]"),
        ({"rulesets": {"two": {"players": 1}}}, "players"),
        (
            {"rulesets": {"two": {"players": 2, "seat_dirhams": [30, 31]}}},
            "rulesets.two.seat_dirhams = [30, 31]: a tuned rule set gives every seat",
        ),
    ],
)
def test_a_bad_tune_config_is_one_line_naming_the_key(
    change: dict[str, object], words: str
) -> None:
    """Each bad key or value is refused in one line that names it and what is allowed."""
    with pytest.raises(ConfigError) as info:
        tune_config_from_dict({**GOOD, **change})
    assert words in str(info.value)
    assert "\n" not in str(info.value)


def test_the_command_names_a_bad_level_and_margin(tmp_path: Path) -> None:
    """--level outside the config's levels and --margin <= 0 are one-line errors, exit 1,
    before any game is played."""
    path = tmp_path / "t.toml"
    path.write_text("seed = 1\n[rulesets.two]\nplayers = 2\n[strategies.greedy]\n")
    runner = CliRunner()
    done = runner.invoke(
        main, ["tune", str(path), "--level", "expert", "--out", str(tmp_path / "o")]
    )
    assert done.exit_code == 1
    assert "--level 'expert': allowed are the config's levels: greedy" in done.output
    done = runner.invoke(main, ["tune", str(path), "--margin", "-1", "--out", str(tmp_path / "o")])
    assert done.exit_code == 1
    assert "--margin = -1.0: allowed is a number of pp above 0" in done.output
    assert not (tmp_path / "o").exists()
    assert load_tune_config(path).name == "t"


def test_the_tune_command_has_help() -> None:
    """`marrakech tune --help` names its options."""
    done = CliRunner().invoke(main, ["tune", "--help"])
    assert done.exit_code == 0
    for option in ("--level", "--margin", "--out", "--workers"):
        assert option in done.output
