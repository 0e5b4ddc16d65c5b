"""The engine's perft counts match the goldens of tests/golden/perft.json.

The goldens (start positions of 2, 3 and 4 players, standard and "orient at end", and
mid-game positions) were produced by tools/regen_perft_goldens.py, which cross-checks each
against tests/reference.py; a changed count means a changed rule.
"""

from __future__ import annotations

import json

import pytest
from conftest import GOLDEN

from marrakech_sim import GameState, Rules, perft

PERFT = json.loads((GOLDEN / "perft.json").read_text())
CASES = {case["name"]: case for case in PERFT["cases"]}


@pytest.mark.parametrize("name", list(CASES))
def test_perft_matches_golden(name: str) -> None:
    """perft at the golden depth (and the reference-checked depth) gives the stored counts."""
    case = CASES[name]
    rules = Rules.from_dict(case["rules"])
    state = GameState.from_notation(case["notation"], rules)
    assert state.to_notation() == case["notation"]
    if name.startswith("start-"):
        assert state == GameState.start(rules)
    assert perft(state, case["reference_depth"]) == case["reference_count"]
    assert perft(state, case["depth"]) == case["count"]


def test_goldens_cover_every_start_position() -> None:
    """The goldens hold 2, 3 and 4 players' starts, standard and orient-at-end, and mid-games."""
    starts = {
        (c["rules"]["players"], c["rules"].get("orient_at_end", False))
        for c in PERFT["cases"]
        if c["name"].startswith("start-")
    }
    assert starts == {(p, o) for p in (2, 3, 4) for o in (False, True)}
    assert sum(c["name"].startswith("mid-") for c in PERFT["cases"]) >= 6
