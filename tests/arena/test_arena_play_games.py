"""arena.play_games: one call plays each game in the loop its seats allow, the same games."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ROOT

from marrakech_sim.arena import Roster, Ruleset, play_games
from marrakech_sim.arena.twins import TWINS, compiled_twin, declared_twins
from marrakech_sim.play.strategy import CompiledTwin, StrategySpec
from marrakech_sim.rules.options import Rules
from marrakech_sim.rules.state import EndReason

PLUGIN = f"{ROOT / 'strategies' / 'cautious.py'}:Cautious"  # no twin: the Python loop
#: greedy, random (compiled twins) and a plug-in; 2 players
ROSTER = [StrategySpec.of("greedy"), StrategySpec.of("random"), StrategySpec.of(PLUGIN)]
#: games 0 and 2 have a twin in every seat, games 1 and 3 seat the plug-in
SEATINGS = np.array([[0, 1], [2, 0], [1, 0], [1, 2]])
SEEDS = np.array([11, 12, 13, 14], np.uint64)


@pytest.fixture(scope="module")
def two() -> Ruleset:
    return Ruleset.of(Rules(players=2))


def test_a_mixed_batch_plays_each_game_as_the_python_loop_does(two: Ruleset) -> None:
    """Games with twins in every seat (compiled loop) and games with a plug-in (Python loop)
    in one call: every game, its seats and its move rows are those of the Python loop
    playing them all, in the order asked."""
    roster = Roster.of(ROSTER)
    assert roster.compiled(SEATINGS).tolist() == [True, False, True, False]
    mixed = play_games(roster, two, SEATINGS, SEEDS)
    python = play_games(roster, two, SEATINGS, SEEDS, compiled=False)
    assert mixed.same_as(python)
    assert mixed.errors == [None] * 4
    assert mixed.rows is not None
    assert mixed.rows.game.tolist() == sorted(mixed.rows.game.tolist())  # game order
    assert np.bincount(mixed.rows.game).tolist() == mixed.games[:, 0].tolist()
    ends = {int(e) for e in mixed.games[:, 1]}
    assert ends <= {int(e) for e in EndReason}
    # each game alone is the same game
    for i in range(len(SEEDS)):
        alone = play_games(roster, two, SEATINGS[i : i + 1], SEEDS[i : i + 1])
        assert np.array_equal(alone.seats[0], mixed.seats[i])
        assert np.array_equal(alone.games[0], mixed.games[i])


def test_lost_games_kept_moves_and_the_watch_name_positions_of_the_call(two: Ruleset) -> None:
    """In a mixed call, `lost`, `keep_moves` and on_game speak of the games' positions in
    the call (not in either loop's share): a lost game is a fault with no moves, only kept
    games have move rows, and the watch hears of each Python-loop game it plays."""
    heard: list[int | None] = []
    kept = np.array([False, True, True, True])
    games = play_games(
        Roster.of(ROSTER),
        two,
        SEATINGS,
        SEEDS,
        keep_moves=kept,
        lost={1: "a worker died in it twice"},
        on_game=heard.append,
    )
    assert heard == [3, None]
    assert games.errors is not None
    assert games.errors[1] is not None and games.errors[1].startswith("a worker died in it")
    assert [e is None for e in games.errors] == [True, False, True, True]
    assert games.games[1, 0] == 0  # no turns
    assert games.rows is not None
    assert set(games.rows.game.tolist()) == {2, 3}  # game 0 not kept, game 1 unplayed
    assert np.bincount(games.rows.game, minlength=4)[2:].tolist() == games.games[2:, 0].tolist()


def test_the_twins_are_the_declared_values() -> None:
    """The registry is the built-ins' CompiledTwin declarations, codes 0, 1, ... once each;
    a class's twin is its declaration, inherited by presets, and a plug-in's own is none."""
    assert declared_twins() == TWINS
    assert [twin.code for twin in TWINS] == list(range(len(TWINS)))
    assert [twin.name for twin in TWINS][:2] == ["random", "greedy"]
    greedy = StrategySpec.of("greedy").load_class()
    assert compiled_twin(greedy) is greedy.COMPILED is TWINS[1]
    assert compiled_twin(StrategySpec.of("greedy-block").load_class()) is TWINS[1]
    assert compiled_twin(StrategySpec.of("expectimax").load_class()) is None

    class Copycat(greedy):  # type: ignore[misc, valid-type]
        COMPILED = CompiledTwin("copycat", 1, TWINS[1].rotation, TWINS[1].placement)

    assert compiled_twin(Copycat) is None  # not a built-in's declaration


def test_the_package_face_plays_a_batch_as_a_notebook_would() -> None:
    """`marrakech_sim.play_games` with the package's `Roster` and `Ruleset` (the example of
    the arena's docstring): both loops give the same games, one row per game asked."""
    import marrakech_sim as m

    roster = m.Roster.of([m.StrategySpec.of("greedy"), m.StrategySpec.of("random")])
    ruleset = m.Ruleset.of(m.Rules(players=2))
    seatings, seeds = np.array([[0, 1], [1, 0]]), np.array([7, 8], np.uint64)
    games = m.play_games(roster, ruleset, seatings, seeds)
    assert games.same_as(m.play_games(roster, ruleset, seatings, seeds, compiled=False))
    assert games.games.shape[0] == 2 and (games.games[:, 0] > 0).all()
