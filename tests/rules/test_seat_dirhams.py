"""The seat_dirhams rule option (RULES.md section 8): one starting purse per seat.

Its play is checked against the reference implementation in test_crosscheck.py (random
games and perft), test_perft_golden.py (goldens made with the reference) and the twins'
tests (the compiled loop plays the Python loop's games); here: its value, its errors, and
that a rule set without it reads, writes and compares as before the option existed.
"""

from __future__ import annotations

import json

import pytest

from marrakech_sim import ConfigError, GameState, Rules
from marrakech_sim.record import rules_tag
from marrakech_sim.run.config import study_from_dict

KEYS_BEFORE = [
    "players",
    "rugs_per_colour",
    "colours_per_player",
    "starting_dirhams",
    "die_faces",
    "initial_facing",
    "orient_at_end",
    "own_rugs_fully_coverable",
    "tie_break",
    "end_when_one_left",
    "board_size",
]


def test_seat_dirhams_replaces_starting_dirhams_seat_by_seat() -> None:
    """Each seat starts with its own purse, whatever starting_dirhams says."""
    rules = Rules(players=3, starting_dirhams=99, seat_dirhams=[0, 5, 31])
    assert rules.seat_dirhams == (0, 5, 31)  # a TOML list becomes a tuple (hashable)
    assert rules.purses == (0, 5, 31)
    assert GameState.start(rules).dirhams == (0, 5, 31)
    assert Rules(players=3, starting_dirhams=7).purses == (7, 7, 7)


@pytest.mark.parametrize(
    ("options", "shown"),
    [
        ({"seat_dirhams": [30, 30, 30]}, "seat_dirhams = [30, 30, 30]"),
        ({"players": 2, "seat_dirhams": [30, 30, 30]}, "seat_dirhams = [30, 30, 30]"),
        ({"seat_dirhams": [30, -1, 30, 30]}, "seat_dirhams = [30, -1, 30, 30]"),
        ({"seat_dirhams": [30, 30.5, 30, 30]}, "seat_dirhams = [30, 30.5, 30, 30]"),
        ({"seat_dirhams": [30, True, 30, 30]}, "seat_dirhams = [30, True, 30, 30]"),
        ({"seat_dirhams": "30,30,30,30"}, "seat_dirhams = '30,30,30,30'"),
        ({"seat_dirhams": 30}, "seat_dirhams = 30"),
    ],
)
def test_bad_seat_dirhams_is_a_one_line_error(options: dict, shown: str) -> None:
    """A wrong length, a negative, non-integer or non-list purse is one line naming the
    value and what is allowed (one integer from 0 per seat)."""
    with pytest.raises(ConfigError) as caught:
        Rules(**options)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(shown + ": allowed is a list of")
    players = options.get("players", 4)
    assert f"{players} integers from 0" in message


def test_a_rule_set_without_it_is_written_as_before() -> None:
    """to_dict leaves the key out when it is not set, so run configs, records and their
    digests of rule sets without it are unchanged; with it, the list is there."""
    assert list(Rules().to_dict()) == KEYS_BEFORE
    assert list(Rules(players=2).to_dict()) == KEYS_BEFORE
    with_it = Rules(seat_dirhams=[30, 31, 32, 33]).to_dict()
    assert with_it["seat_dirhams"] == [30, 31, 32, 33]
    assert Rules.from_dict(with_it) == Rules(seat_dirhams=(30, 31, 32, 33))


def test_differences_and_record_tag_name_it_both_ways() -> None:
    """differences() and the game record's Rules tag show seat_dirhams when set, and a
    rule set compared with one that sets it shows it as unset (None)."""
    komi = Rules(seat_dirhams=[30, 31, 32, 33])
    assert komi.differences() == {"seat_dirhams": [30, 31, 32, 33]}
    assert Rules().differences(komi) == {"seat_dirhams": None}
    assert json.loads(rules_tag(komi)) == {"seat_dirhams": [30, 31, 32, 33]}
    assert Rules.from_dict(json.loads(rules_tag(komi))) == komi
    assert json.loads(rules_tag(Rules())) == {}


def test_a_study_with_seat_dirhams_is_not_the_study_without() -> None:
    """A rule set with seat_dirhams has another resolved config (what a run folder is
    matched on before it is reused or resumed), even when the purses equal
    starting_dirhams; without it the config is what it was."""

    def config(options: dict) -> dict:
        return {
            "seed": 1,
            "rulesets": {"base": options},
            "strategies": {"random": {}},
            "schedule": {"kind": "self_play"},
        }

    plain = study_from_dict(config({})).to_dict()
    komi = study_from_dict(config({"seat_dirhams": [30, 30, 30, 30]})).to_dict()
    assert plain != komi
    assert "seat_dirhams" not in plain["rulesets"]["base"]
    assert komi["rulesets"]["base"]["seat_dirhams"] == [30, 30, 30, 30]
    assert study_from_dict(komi).to_dict() == komi


def test_a_rule_set_of_a_study_config_names_its_bad_purses() -> None:
    """In a study config, [rulesets.X] takes seat_dirhams like any option; a rule set that
    changes the players of a base with four purses is one line naming it and the key."""
    data = {
        "seed": 1,
        "rulesets": {
            "four": {"seat_dirhams": [30, 31, 32, 33]},
            "two": {"base": "four", "players": 2},
        },
        "strategies": {"random": {}},
        "schedule": {"kind": "self_play"},
    }
    with pytest.raises(ConfigError) as caught:
        study_from_dict(data)
    assert str(caught.value) == (
        "rulesets.two: seat_dirhams = [30, 31, 32, 33]: allowed is a list of 2 integers from "
        "0 to 30000, one starting purse per seat in seat order (players = 2)"
    )
    data["rulesets"]["two"]["seat_dirhams"] = [25, 35]
    study = study_from_dict(data)
    assert study.rules("two").purses == (25, 35)
    assert study.rules("four").purses == (30, 31, 32, 33)
