"""Faulty strategies end their game with end_reason 'error'; the faulty seat loses."""

from __future__ import annotations

import time
from typing import Any

import pytest
from conftest import EXAMPLES

from marrakech_sim.play import turns
from marrakech_sim.play.game import play_game
from marrakech_sim.play.strategy import BaseStrategy, StrategySpec
from marrakech_sim.rules.options import Rules

BAD = EXAMPLES / "bad.py"


class FirstOption(BaseStrategy):
    """No turn; the first placement offered."""

    def choose_rotation(self, view: Any) -> int:
        return 0

    def choose_placement(self, view: Any, options: Any) -> Any:
        return options[0]


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
    "HugeRotation": (None, "chose 1180591620717411303424"),
    "HugePlacement": (None, "not one of the legal options"),
    "SwallowsTimeouts": (0.2, "time budget of 0.2 s"),
    "Exits": (None, "SystemExit(3)"),
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
    play_game(rules, [StrategySpec.of("random").build()] * 3, 1)  # kernels loaded: not timed
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


@pytest.mark.parametrize("name", ["WritesState", "MakesWriteable"])
def test_writing_into_the_view_does_not_change_the_game(name: str) -> None:
    """A strategy that writes into its view's state (view._s, or view.packed made
    writeable) changes only its own copy: the game is the one an honest first-option
    player plays, and its record is a normal one."""
    rules = Rules(players=2)
    vandal = StrategySpec.of(f"{BAD}:{name}").build()
    honest = FirstOption()
    other = StrategySpec.of("random")
    tampered = play_game(rules, [vandal, other.build()], 4)
    clean = play_game(rules, [honest, other.build()], 4)
    assert tampered.error is None and tampered.end_reason != "error"
    assert (tampered.moves == clean.moves).all()
    assert (tampered.seats == clean.seats).all()


def test_a_tampered_game_state_is_a_fault_not_a_record() -> None:
    """A strategy that reaches the game loop's own state (through the call stack) and
    gives itself dirhams ends the game as a fault with no winner, never a normal record."""
    rules = Rules(players=2)
    thief = StrategySpec.of(f"{BAD}:StealsState").build()
    record = play_game(rules, [thief, StrategySpec.of("random").build()], 8)
    assert record.end_reason == "error"
    assert record.error is not None and "tampered" in record.error
    assert "dirhams" in record.error
    assert record.winners == ()
    assert (record.seats[:, turns.S_WINNER] == 0).all()


def test_a_time_budget_costs_no_signal_calls_per_decision() -> None:
    """Games inside one decision_watchdog reuse its clock: a hang in the fifth game is
    still cut off, and the games before it are the same as without a budget."""
    from marrakech_sim.play.game import decision_watchdog

    rules = Rules(players=2)
    plain = StrategySpec.of("random")
    hang = StrategySpec.of(f"{BAD}:Hangs")
    with decision_watchdog([0.2]):
        timed = [play_game(rules, [plain.build()] * 2, s, time_budgets=[0.2] * 2) for s in range(4)]
        hung = play_game(rules, [hang.build(), plain.build()], 9, time_budgets=[0.2, 0.2])
    untimed = [play_game(rules, [plain.build()] * 2, s) for s in range(4)]
    assert all((a.moves == b.moves).all() for a, b in zip(timed, untimed, strict=True))
    assert hung.error is not None and "time budget of 0.2 s" in hung.error
