"""Faulty strategies end their game with end_reason 'error'; the faulty seat loses."""

from __future__ import annotations

import time

import pytest
from conftest import EXAMPLES

from marrakech_sim.play import turns
from marrakech_sim.play.game import play_game
from marrakech_sim.play.strategy import StrategySpec
from marrakech_sim.rules.options import Rules

BAD = EXAMPLES / "bad.py"

# (class in bad.py, time budget per decision, words the error must contain)
FAULTS = {
    "Raises": (None, "boom in choose_placement"),
    "Illegal": (None, "not one of the legal options"),
    "BadRotation": (None, "chose 2"),
    "Garbage": (None, "not one of the legal options"),
    "NoneRotation": (None, "chose None"),
    "Slow": (0.01, "time budget of 0.01 s"),
    "Hangs": (0.2, "time budget of 0.2 s"),
    "Sleeps": (0.2, "time budget of 0.2 s"),
    "StartRaises": (None, "on_game_start raised"),
}


@pytest.mark.parametrize("name", list(FAULTS))
@pytest.mark.parametrize("faulty_seat", [0, 2])
def test_a_fault_ends_the_game_and_the_faulty_seat_loses(name: str, faulty_seat: int) -> None:
    """A strategy that raises, answers illegally or with garbage, is too slow or hangs
    ends its game normally with end_reason 'error' naming strategy, seat, message and
    seed; the faulty seat ranks last and the others share the win."""
    budget, words = FAULTS[name]
    rules = Rules(players=3)
    spec = StrategySpec.of(f"{BAD}:{name}", name=name)
    lineup = [
        spec.build() if i == faulty_seat else StrategySpec.of("random").build() for i in range(3)
    ]
    names = [name if i == faulty_seat else "random" for i in range(3)]
    budgets = [budget if i == faulty_seat else None for i in range(3)]
    started = time.perf_counter()
    record = play_game(rules, lineup, 99, names=names, time_budgets=budgets)
    assert time.perf_counter() - started < 5  # a hang is cut off by the budget
    assert record.end_reason == "error"
    assert record.error is not None
    for part in (words, f"seat {faulty_seat}", f"strategy {name}", "game seed 99"):
        assert part in record.error
    others = tuple(i for i in range(3) if i != faulty_seat)
    assert record.winners == others
    assert record.win_shares[faulty_seat] == 0.0
    assert record.seats[faulty_seat, turns.S_RANK] == 3
    assert record.seats[faulty_seat, turns.S_WINNER] == 0
    assert len(record.moves) == record.turns


def test_games_after_a_fault_play_on() -> None:
    """A fault does not disturb the next game: the same seed with good players plays out."""
    bad = StrategySpec.of(f"{BAD}:Raises").build()
    rules = Rules(players=2)
    faulty = play_game(rules, [bad, StrategySpec.of("random").build()], 5)
    good = play_game(rules, [StrategySpec.of("random").build()] * 2, 5)
    assert faulty.end_reason == "error" and good.end_reason in ("rugs_exhausted", "one_left")
