"""The compiled twins decide exactly as their Python forms: whole games are equal."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from marrakech_sim.arena import loop, twins
from marrakech_sim.play import turns
from marrakech_sim.play.game import play_game
from marrakech_sim.play.rng import Rng
from marrakech_sim.play.strategy import StrategySpec
from marrakech_sim.play.view import GameView
from marrakech_sim.rules import core as k
from marrakech_sim.rules.options import Rules
from marrakech_sim.rules.queries import (
    F_OPPONENT_HALVES,
    F_OPPONENT_REGION,
    F_OWN_HALVES,
    F_REGION,
)
from marrakech_sim.rules.state import GameState, placement_codes
from marrakech_sim.strategies.kernels import (
    greedy_placement_scores,
    greedy_rotation_scores,
    pick_best,
)

END_REASONS = {k.END_RUGS_EXHAUSTED: "rugs_exhausted", k.END_ONE_LEFT: "one_left"}
RULES = {
    "4p": Rules(),
    "3p-orient-at-end": Rules(players=3, orient_at_end=True),
    "2p": Rules(players=2),
    "4p-orient-at-end-poor": Rules(orient_at_end=True, starting_dirhams=5),
    # region queries by bitboard up to 7 x 7, from a labelling of the board above
    "3p-two-colours-board5": Rules(
        players=3, colours_per_player=2, rugs_per_colour=4, board_size=5
    ),
    "4p-board9": Rules(board_size=9),
    "4p-seat-purses": Rules(seat_dirhams=(20, 30, 40, 50)),
}
LINEUPS = {
    "random": ["random"],
    "greedy": ["greedy"],
    "family": ["greedy-block", "greedy", "greedy-area", "random"],
    "greedy-tuned": [("greedy", {"area": 0.3, "cover": 2.5, "block": 0.0, "ruin": 0.0})],
}


def _specs(entries: list, players: int) -> list[StrategySpec]:
    out = []
    for i in range(players):
        entry = entries[i % len(entries)]
        ref, params = (entry, {}) if isinstance(entry, str) else entry
        out.append(StrategySpec.of(ref, params))
    return out


def play_compiled(rules: Rules, specs: list[StrategySpec], seeds: list[int]) -> tuple:
    """play_batch with the twins of `specs` (one line-up for every seed)."""
    built = [spec.build() for spec in specs]
    found = [twins.twin_of(strategy) for strategy in built]
    assert all(f is not None for f in found)
    g, p = len(seeds), rules.players
    codes = np.array([[twins.CODES[f[0]] for f in found]] * g, np.int64)
    params = np.array([[f[1] for f in found]] * g)
    max_turns = turns.max_turns(rules)
    moves = np.empty((turns.move_columns(p), g * max_turns), np.int16)
    games = np.zeros((g, 3), np.int64)
    seats = np.zeros((g, p, turns.SEAT_COLUMNS), np.int32)
    err = loop.play_batch(
        k.initial_state(rules), np.array(seeds, np.uint64), codes, params, moves, games, seats
    )
    assert err == 0
    return loop.game_rows(moves, games[:, 0], max_turns), games, seats


@pytest.mark.parametrize("rules_name", list(RULES))
@pytest.mark.parametrize("lineup", list(LINEUPS))
def test_compiled_games_equal_python_games(rules_name: str, lineup: str) -> None:
    """play_batch with the twins plays move for move the games play_game plays with the
    Python forms (same seeds, same rng draws, same tie-breaking)."""
    rules = RULES[rules_name]
    specs = _specs(LINEUPS[lineup], rules.players)
    seeds = [7, 123456789, 2**63 + 5, 42]
    moves, games, seats = play_compiled(rules, specs, seeds)
    for g, seed in enumerate(seeds):
        record = play_game(rules, [spec.build() for spec in specs], seed)
        assert record.error is None
        assert games[g, 0] == record.turns
        assert END_REASONS[int(games[g, 1])] == record.end_reason
        assert bool(games[g, 2]) == record.tie_broken
        np.testing.assert_array_equal(moves[g, : record.turns], record.moves)
        assert (moves[g, record.turns :] == turns.NULL).all()
        np.testing.assert_array_equal(seats[g], record.seats)


def test_twin_parameters_follow_the_declared_order() -> None:
    """encode_params writes a twin's parameters in PARAMETER_ORDER and names a missing one."""
    from marrakech_sim.errors import ConfigError
    from marrakech_sim.strategies.greedy import GreedyStrategy

    vector = twins.encode_params("greedy", {**GreedyStrategy.PARAMETERS, "block": 7.0})
    assert vector[twins.PARAMETER_ORDER["greedy"].index("block")] == 7.0
    with pytest.raises(ConfigError, match="'ruin'"):
        twins.encode_params("greedy", {"area": 1, "cover": 1, "block": 1, "waste": 1})
    assert twins.compiled_twin(StrategySpec.of("greedy-block").load_class()).name == "greedy"  # type: ignore[union-attr]
    assert twins.twin_of(StrategySpec.of("expectimax").build()) is None


def _pick_best(view: SimpleNamespace, scores: list[float]) -> int:
    """The tie rule as docs/STRATEGIES.md words it, written plainly: the index of the
    highest score; among several, one draw from the seat's stream in the options' order."""
    best = max(scores)
    ties = [i for i, score in enumerate(scores) if score == best]
    return ties[view.rng.below(len(ties))] if len(ties) > 1 else ties[0]


def _rotation_scores(params: dict, view: GameView) -> list[float]:
    """Greedy's rotation scores from GameView's queries (a second computation of the kernel's)."""
    ruin = float(params["ruin"])
    walker = view.next_walker
    scores = []
    for rotation in (-1, 0, 1):
        if walker is None or walker == view.seat:
            due, _, bankrupt = view.payment_totals(rotation)
            scores.append(-(due + ruin * bankrupt))
        else:
            _, paid, bankrupt = view.payment_totals(rotation, walker, payee=view.seat)
            scores.append(paid + ruin * bankrupt)
    return scores


def _placement_scores(params: dict, view: GameView, options: tuple) -> list[float]:
    """Greedy's placement scores from GameView's queries (a second computation)."""
    area, cover, block, waste = (float(params[key]) for key in ("area", "cover", "block", "waste"))
    return [
        area * row[F_REGION]
        + cover * row[F_OPPONENT_HALVES]
        + block * row[F_OPPONENT_REGION]
        - waste * row[F_OWN_HALVES]
        for row in view.placement_features(options).tolist()
    ]


def test_compiled_pick_best_draws_as_the_python_form() -> None:
    """The one pick_best picks the index the plain tie rule picks from the same stream,
    drawing only among ties, as often; with an empty stream, the first best."""
    rnd = np.random.default_rng(3)
    for trial in range(400):
        count = int(rnd.integers(1, 17))
        scores = rnd.integers(-2, 2, count) * 0.5
        python, twin = Rng(trial, 64), Rng(trial, 64)
        view = SimpleNamespace(rng=python)
        assert pick_best(scores, count, twin.state) == _pick_best(view, scores.tolist())
        assert twin.getstate() == python.getstate()
        first = int(np.flatnonzero(scores == scores.max())[0])
        assert pick_best(scores, count, np.empty(0, np.uint64)) == first


@pytest.mark.parametrize("rules_name", list(RULES))
def test_twin_scores_equal_the_python_scores(rules_name: str) -> None:
    """The greedy kernels' rotation and placement scores (the twin's and the Python
    form's) are, exactly, the floats GameView's queries give by the documented formula, at
    every decision of random games."""
    rules = RULES[rules_name]
    strategies = [StrategySpec.of(ref).build() for ref in ("greedy", "greedy-block")]
    codes_of = placement_codes(rules.board_size)
    rnd = np.random.default_rng(5)
    for _ in range(3):
        state = GameState.start(rules)
        while not state.is_over:
            actions = state.legal_actions()
            if state.phase in ("orient", "place"):
                for strategy in strategies:
                    s = np.array(state.packed)
                    view = GameView(rules, s, state.seat, Rng(1, 64))
                    vector = twins.twin_of(strategy)[1]  # type: ignore[index]
                    if state.phase == "orient":
                        out = np.empty(3)
                        greedy_rotation_scores(s, vector, out)
                        assert out.tolist() == _rotation_scores(strategy.params, view)
                        assert strategy.rotation_scores(view) == out.tolist()
                    else:
                        codes = np.array([codes_of[a] for a in actions], np.int64)
                        out = np.empty(len(actions))
                        greedy_placement_scores(s, vector, codes, len(actions), out)
                        expected = _placement_scores(strategy.params, view, actions)
                        assert out.tolist() == expected
                        assert strategy.placement_scores(view, actions) == expected
            state = state.apply(actions[int(rnd.integers(len(actions)))])
