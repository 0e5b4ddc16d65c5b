"""Cross-check of the engine against an independent reference, plus property tests.

How the reference was written: ``tests/reference.py`` was written from RULES.md alone,
by someone who did not read ``marrakech_sim`` (and before it existed), as a slow,
direct transcription of the rule text (dict board, one method per rule, comments citing
the RULES.md section). It was validated first against the hand-checked cases of
``test_rules_tables.py``, whose expectations were derived by hand from RULES.md. Here
both implementations play the same seeded random games, step by step, across the rule
options of RULES.md §8: at every step the phase, the set of legal actions, the chance
outcomes and the position string must agree, and at the end the outcome; perft counts
on random mid-game positions must agree too.
"""

from __future__ import annotations

import random
import re

import pytest
import reference
from backends import board_tokens, fields, normalise_chance
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

engine = pytest.importorskip("marrakech_sim")

# Each variant changes a few §8 options; every option is off its default somewhere.
VARIANTS: dict[str, dict] = {
    "4p": {"players": 4},
    "3p": {"players": 3},
    "2p": {"players": 2},
    "5p": {"players": 5},
    "4p-orient-at-end": {"players": 4, "orient_at_end": True},
    "2p-orient-at-end": {"players": 2, "orient_at_end": True, "initial_facing": "S"},
    "3p-own-cover-east": {"players": 3, "own_rugs_fully_coverable": True, "initial_facing": "E"},
    "2p-own-cover": {"players": 2, "own_rugs_fully_coverable": True},
    "4p-visible-poor": {"players": 4, "tie_break": "visible", "starting_dirhams": 3},
    "3p-survivor-poor": {"players": 3, "end_when_one_left": False, "starting_dirhams": 2},
    "2p-one-colour-poor": {
        "players": 2,
        "colours_per_player": 1,
        "starting_dirhams": 4,
        "end_when_one_left": False,
        "orient_at_end": True,
    },
    "2p-broke": {"players": 2, "starting_dirhams": 0, "rugs_per_colour": 6},
    # §8 seat_dirhams: unequal purses, small enough for bankruptcies, and one that
    # overrides a starting_dirhams it disagrees with
    "4p-seat-purses": {"players": 4, "seat_dirhams": (0, 3, 1, 8)},
    "3p-seat-purses-override": {"players": 3, "starting_dirhams": 50, "seat_dirhams": (2, 6, 0)},
    "2p-seat-purses-survivor": {
        "players": 2,
        "seat_dirhams": (4, 0),
        "rugs_per_colour": 6,
        "end_when_one_left": False,
    },
    "3p-board5": {"players": 3, "board_size": 5, "rugs_per_colour": 6, "starting_dirhams": 5},
    "4p-board9-die": {"players": 4, "board_size": 9, "die_faces": (1, 3, 3, 5, 7)},
    "2p-board11-die": {
        "players": 2,
        "board_size": 11,
        "die_faces": (2, 9, 9, 13),
        "rugs_per_colour": 8,
        "initial_facing": "W",
    },
    "3p-two-colours": {
        "players": 3,
        "colours_per_player": 2,
        "rugs_per_colour": 5,
        "starting_dirhams": 6,
    },
    # Tiny games end in ties (and tie-breaks) often.
    "4p-tiny": {"players": 4, "rugs_per_colour": 2, "starting_dirhams": 0, "board_size": 5},
    "3p-tiny-visible": {
        "players": 3,
        "rugs_per_colour": 2,
        "starting_dirhams": 1,
        "tie_break": "visible",
    },
    "2p-tiny-survivor": {
        "players": 2,
        "rugs_per_colour": 1,
        "starting_dirhams": 1,
        "end_when_one_left": False,
    },
}
GAMES_PER_VARIANT = 8
GAMES = {"4p-tiny": 60, "3p-tiny-visible": 60, "2p-tiny-survivor": 60}


def rules_pair(options: dict):
    return engine.Rules(**options), reference.Rules(**options)


def norm_action(action):
    """Actions as plain Python values, placements as ((x, y), (x, y)) tuples."""
    if isinstance(action, str):
        return action
    if isinstance(action, (tuple, list)):
        return tuple(norm_action(a) for a in action)
    return int(action)


def legal_set(state) -> set:
    actions = [norm_action(a) for a in state.legal_actions()]
    assert len(actions) == len(set(actions)), "duplicate legal actions"
    return set(actions)


def assert_same(eng, ref, history) -> None:
    """Phase, notation, legal actions and chance outcomes agree."""
    where = f"after {history[-6:]} at {ref.to_notation()!r}"
    assert eng.phase == ref.phase, where
    assert eng.to_notation() == ref.to_notation(), where
    assert legal_set(eng) == legal_set(ref), where
    if ref.phase in ("draw", "roll"):
        assert normalise_chance(eng.chance_outcomes()) == pytest.approx(
            normalise_chance(ref.chance_outcomes())
        ), where


def assert_same_outcome(eng, ref) -> None:
    e, r = eng.outcome(), ref.outcome()
    assert (e is None) == (r is None)
    if r is None:
        return
    where = ref.to_notation()
    assert e.reason.label == r.reason.label, where
    assert tuple(e.dirhams) == r.dirhams, where
    assert tuple(e.visible) == r.visible, where
    assert tuple(e.scores) == r.scores, where
    assert tuple(e.ranks) == r.ranks, where
    assert tuple(e.winners) == r.winners, where
    assert tuple(e.win_shares) == pytest.approx(r.win_shares), where
    assert bool(e.tie_broken) == r.tie_broken, where


def play_both(options: dict, seed: int, check_parse: bool = True) -> list[str]:
    """Play one seeded random game on both implementations; return the positions seen."""
    rng = random.Random(seed)
    eng_rules, ref_rules = rules_pair(options)
    eng = engine.GameState.start(eng_rules)
    ref = reference.GameState.start(ref_rules)
    history: list = []
    seen = []
    while True:
        assert_same(eng, ref, history)
        assert_same_outcome(eng, ref)
        text = ref.to_notation()
        seen.append(text)
        if check_parse:
            parsed = engine.GameState.from_notation(text, eng_rules)
            assert parsed.to_notation() == text
            assert legal_set(parsed) == legal_set(ref), text
            # The reference's stricter parser accepts every position of real play.
            assert reference.GameState.from_notation(text, ref_rules).to_notation() == text
        if ref.phase == "over":
            return seen
        action = rng.choice(ref.legal_actions())
        history.append(action)
        before = eng.to_notation()
        eng = eng.apply(action)
        assert eng is not None
        ref = ref.apply(action)
        if len(history) % 17 == 0:
            assert engine.GameState.from_notation(before, eng_rules).to_notation() == before


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_random_games_match_reference(variant):
    """Engine and reference agree at every step of seeded random games in every variant."""
    options = VARIANTS[variant]
    positions = 0
    games = GAMES.get(variant, GAMES_PER_VARIANT)
    for game in range(games):
        positions += len(play_both(options, seed=1000 * game + len(variant)))
    assert positions >= 5 * games


def _sample_positions(count: int, seed: int) -> list[tuple[str, str]]:
    """Random mid-game positions (variant name, notation) from seeded reference games."""
    rng = random.Random(seed)
    names = list(VARIANTS)
    result = []
    for i in range(count):
        name = names[i % len(names)]
        ref = reference.GameState.start(reference.Rules(**VARIANTS[name]))
        stop = rng.randrange(1, 160)
        for _ in range(stop):
            if ref.phase == "over":
                break
            ref = ref.apply(rng.choice(ref.legal_actions()))
        result.append((name, ref.to_notation()))
    return result


PERFT_POSITIONS = _sample_positions(48, seed=7)


@pytest.mark.parametrize(
    ("variant", "text"),
    PERFT_POSITIONS,
    ids=[f"{i}-{v}" for i, (v, _) in enumerate(PERFT_POSITIONS)],
)
def test_perft_matches_reference(variant, text):
    """perft on random mid-game positions agrees with the reference at depths 1-3 (§10)."""
    eng_rules, ref_rules = rules_pair(VARIANTS[variant])
    eng = engine.GameState.from_notation(text, eng_rules)
    ref = reference.GameState.from_notation(text, ref_rules)
    for depth in range(4):
        assert engine.perft(eng, depth) == reference.perft(ref, depth), (depth, text)


def test_perft_depth_five_from_start():
    """A deeper perft from the 4-player start agrees with the reference (§10)."""
    eng_rules, ref_rules = rules_pair({})
    assert engine.perft(engine.GameState.start(eng_rules), 5) == reference.perft(
        reference.GameState.start(ref_rules), 5
    )


# --- property tests on the engine alone ------------------------------------------


def _players(text: str) -> list[dict]:
    seats = []
    for entry in fields(text)["players"].split(","):
        parts = entry.split(":")
        seats.append(
            {
                "colours": parts[0],
                "dirhams": int(parts[1]),
                "left": [int(k) for k in parts[2].split("+")],
                "out": len(parts) == 4 and parts[3] == "out",
            }
        )
    return seats


def _check_invariants(text: str, state, rugs_per_colour: int, placed: dict, total: int) -> None:
    seats = _players(text)
    # Money only moves between players (§5): the total is conserved, never negative.
    assert sum(s["dirhams"] for s in seats) == total
    assert all(s["dirhams"] >= 0 for s in seats)
    tokens = board_tokens(text)
    squares: dict[str, list] = {}
    for sq, tok in tokens.items():
        squares.setdefault(tok, []).append(sq)
    for tok, sqs in squares.items():
        # Every visible token is one physical rug: at most two squares, adjacent (§9).
        assert len(sqs) <= 2, (tok, text)
        if len(sqs) == 2:
            (ax, ay), (bx, by) = sqs
            assert abs(ax - bx) + abs(ay - by) == 1, (tok, text)
        colour, number = tok[0], int(tok[1:])
        assert 1 <= number <= placed.get(colour, 0), (tok, text)
    for seat in seats:
        if seat["out"]:
            assert seat["dirhams"] == 0 and not any(seat["left"])
            continue
        for colour, left in zip(seat["colours"], seat["left"], strict=True):
            # Rugs placed + rugs left = rugs per colour for players still in the game.
            assert left + placed.get(colour, 0) == rugs_per_colour, (colour, text)
    if state.phase == "place":
        assert 2 <= len(state.legal_actions()) <= 12, text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variant=st.sampled_from(sorted(VARIANTS)), data=st.data())
def test_random_play_keeps_invariants(variant, data):
    """Random legal play keeps money, rug counts and notation round-trips consistent."""
    options = VARIANTS[variant]
    rules = engine.Rules(**options)
    state = engine.GameState.start(rules)
    start = state.to_notation()
    rugs_per_colour = max(k for s in _players(start) for k in s["left"])
    total = sum(s["dirhams"] for s in _players(start))
    placed: dict[str, int] = {}
    while state.phase != "over":
        text = state.to_notation()
        assert engine.GameState.from_notation(text, rules).to_notation() == text
        _check_invariants(text, state, rugs_per_colour, placed, total)
        actions = list(state.legal_actions())
        action = data.draw(st.sampled_from(actions))
        mover_field = re.fullmatch(r"([0-9]+)([dorpx])([a-z]?)", fields(text)["to_move"])
        mover = int(mover_field.group(1))
        # The rug to place: the drawn colour, or the seat's only colour (§9).
        colour = mover_field.group(3) or _players(text)[mover]["colours"]
        before = _players(text)
        phase = state.phase
        state = state.apply(action)
        after_text = state.to_notation()
        after = _players(after_text)
        if phase == "place":
            placed[colour] = placed.get(colour, 0) + 1
            toks = board_tokens(after_text)
            a, b = (tuple(map(int, sq)) for sq in action)
            assert toks[a] == toks[b] == f"{colour}{placed[colour]}", after_text
        if phase == "roll":
            # A payment moves money from the mover to exactly one other seat (§5).
            changes = [after[s]["dirhams"] - before[s]["dirhams"] for s in range(len(before))]
            losers = [s for s, c in enumerate(changes) if c < 0]
            gainers = [s for s, c in enumerate(changes) if c > 0]
            assert losers in ([], [mover]) and len(gainers) <= 1 and mover not in gainers
            assert sum(changes) == 0
        else:
            assert [s["dirhams"] for s in after] == [s["dirhams"] for s in before]
    outcome = state.outcome()
    assert outcome is not None
    assert sum(outcome.win_shares) == pytest.approx(1.0)
    assert all(outcome.ranks[w] == 1 for w in outcome.winners)
