"""The compiled whole-game loop plays exactly the games of the Python loop.

`arena.loop.play_batch` with the `random` twin and `marrakech_sim.play.game.play_game`
with `RandomStrategy` draw from the same seeded streams, so for one seed they must give
the same game move for move, across the rule options that change the turn structure.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from marrakech_sim import GameState, Rules
from marrakech_sim.arena.loop import game_rows, play_batch
from marrakech_sim.arena.twins import lineup_arrays
from marrakech_sim.play import turns as t
from marrakech_sim.play.game import play_game
from marrakech_sim.rules import core as k
from marrakech_sim.rules.options import COLOUR_LETTERS
from marrakech_sim.strategies.basic import RandomStrategy

END_NAMES = {k.END_RUGS_EXHAUSTED: "rugs_exhausted", k.END_ONE_LEFT: "one_left"}

VARIANTS = {
    "2p": {"players": 2},
    "3p": {"players": 3},
    "4p": {"players": 4},
    "4p-orient-at-end": {"players": 4, "orient_at_end": True},
    "2p-orient-at-end": {"players": 2, "orient_at_end": True},
    "4p-poor": {"players": 4, "starting_dirhams": 2},
    "3p-poor-survivor": {"players": 3, "starting_dirhams": 1, "end_when_one_left": False},
    "2p-broke": {"players": 2, "starting_dirhams": 0, "rugs_per_colour": 6},
    "4p-board9": {"players": 4, "board_size": 9},
    "3p-die": {"players": 3, "die_faces": (1, 1, 5, 6, 9)},
    "3p-two-colours": {"players": 3, "colours_per_player": 2, "rugs_per_colour": 5},
    # RULES.md section 8 seat_dirhams: unequal purses (some poor enough to go bankrupt)
    "4p-seat-purses-poor": {"players": 4, "seat_dirhams": (1, 4, 0, 9)},
    "2p-seat-purses": {"players": 2, "seat_dirhams": (25, 35)},
}
SEEDS = list(range(12))


def batch(rules: Rules, seeds: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """play_batch with the random twin in every seat: (moves, games, seats)."""
    p, g, rows = rules.players, len(seeds), t.max_turns(rules)
    codes, params = lineup_arrays([["random"] * p] * g, [[{}] * p] * g)
    moves = np.zeros((t.move_columns(p), g * rows), np.int16)  # play_batch fills NULL itself
    games = np.zeros((g, 3), np.int32)
    seats = np.zeros((g, p, t.SEAT_COLUMNS), np.int32)
    err = play_batch(
        k.initial_state(rules), np.array(seeds, np.uint64), codes, params, moves, games, seats
    )
    assert err == 0
    return game_rows(moves, games[:, 0], rows), games, seats


def test_seat_dirhams_are_the_purses_both_loops_start_from() -> None:
    """seat_dirhams sets each seat's first dirhams_after before any payment: after the first
    turn, whose roll can pay nobody (the board is empty), the purses are the rule's."""
    rules = Rules(players=4, starting_dirhams=99, seat_dirhams=(30, 31, 32, 33))
    moves, _, _ = batch(rules, [5])
    record = play_game(rules, [RandomStrategy() for _ in range(4)], 5)
    for rows in (moves[0], record.moves):
        assert [int(rows[0, t.dirhams_after_col(i, 4)]) for i in range(4)] == [30, 31, 32, 33]


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_batch_matches_play_game(variant: str) -> None:
    """For the same seeds the compiled loop and play_game give identical games."""
    rules = Rules(**VARIANTS[variant])
    moves, games, seats = batch(rules, SEEDS)
    reasons = set()
    for i, seed in enumerate(SEEDS):
        record = play_game(rules, [RandomStrategy() for _ in range(rules.players)], seed)
        turns = int(games[i, 0])
        assert record.turns == turns
        assert record.end_reason == END_NAMES[int(games[i, 1])]
        assert record.tie_broken == bool(games[i, 2])
        np.testing.assert_array_equal(record.moves, moves[i, :turns])
        np.testing.assert_array_equal(record.seats, seats[i])
        reasons.add(record.end_reason)
    if "poor" in variant or "broke" in variant:
        # these variants exist to reach bankruptcies; make sure they do
        assert (seats[:, :, t.S_ELIMINATED_TURN] >= 0).any()
    if variant == "2p-broke":
        assert "one_left" in reasons


def test_same_seed_same_game_different_seeds_differ() -> None:
    """A seed fixes the game (twice the same record); different seeds give different games."""
    rules = Rules(players=4)
    first = batch(rules, [7, 8, 9])
    again = batch(rules, [7, 8, 9])
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    moves = first[0]
    assert not np.array_equal(moves[0], moves[1])
    assert not np.array_equal(moves[1], moves[2])


def test_buffer_reuse_leaves_no_stale_rows() -> None:
    """A reused move buffer holds only the new games' rows (play_batch fills NULL itself),
    one game's after another's, and the games' rows only."""
    rules = Rules(players=2, starting_dirhams=0, rugs_per_colour=6)  # short games
    p, rows = rules.players, t.max_turns(rules)
    codes, params = lineup_arrays([["random"] * p] * 2, [[{}] * p] * 2)
    moves = np.full((t.move_columns(p), 2 * rows), 99, np.int16)
    games = np.zeros((2, 3), np.int32)
    seats = np.zeros((2, p, t.SEAT_COLUMNS), np.int32)
    init = k.initial_state(rules)
    assert play_batch(init, np.array([3, 4], np.uint64), codes, params, moves, games, seats) == 0
    fresh, fresh_games, _ = batch(rules, [3, 4])
    np.testing.assert_array_equal(games, fresh_games)
    np.testing.assert_array_equal(game_rows(moves, games[:, 0], rows), fresh)
    end = int(games[:, 0].sum())
    assert (moves[:, end : games[0, 0] + rows] == t.NULL).all()  # the last game's room
    assert games[0, 0] < rows  # the first ended early: the second wrote into its room


def test_play_batch_refuses_a_moves_buffer_it_would_compile_again_for_or_overrun() -> None:
    """moves of another type would compile the whole loop again (minutes), one too short
    would be written past its end: both are refused with what was wrong."""
    rules = Rules(players=2)
    rows = t.max_turns(rules)
    codes, params = lineup_arrays([["random", "random"]], [[{}, {}]])
    games = np.zeros((1, 3), np.int32)
    seats = np.zeros((1, 2, t.SEAT_COLUMNS), np.int32)
    init, seeds = k.initial_state(rules), np.array([1], np.uint64)
    wrong = np.zeros((t.move_columns(2), rows), np.int32)
    with pytest.raises(
        TypeError, match=r"C-contiguous int16 array \(move_columns_buffer\), not int32"
    ):
        play_batch(init, seeds, codes, params, wrong, games, seats)
    short = np.zeros((t.move_columns(2), rows - 1), np.int16)
    with pytest.raises(ValueError, match=f"room for {rows - 1} turns; 1 games may take {rows}"):
        play_batch(init, seeds, codes, params, short, games, seats)


def _visible_by_scan(state: GameState) -> list[int]:
    """Visible squares per seat, counted square by square (RULES.md section 7)."""
    rules = state.rules
    counts = [0] * rules.players
    for y in range(rules.board_size):
        for x in range(rules.board_size):
            half = state.square(x, y)
            if half is not None:
                counts[COLOUR_LETTERS.index(half[0]) % rules.players] += 1
    return counts


@pytest.mark.parametrize(
    "options",
    [{"players": 4}, {"players": 2}, {"players": 3, "starting_dirhams": 2, "orient_at_end": True}],
)
def test_move_rows_replay_with_dirhams_and_visible_after(options: dict) -> None:
    """Replaying a record's rows through GameState reproduces dirhams_after and visible_after."""
    rules = Rules(**options)
    p = rules.players
    record = play_game(rules, [RandomStrategy() for _ in range(p)], 11)
    state = GameState.start(rules)
    for row in record.moves:
        if state.phase == "draw":
            state = state.apply(COLOUR_LETTERS[row[t.M_COLOUR]])
        if state.phase == "orient":
            state = state.apply(int(row[t.M_ROTATION]))
        state = state.apply(int(row[t.M_ROLL]))
        assert list(state.dirhams) == [row[t.dirhams_after_col(i, p)] for i in range(p)]
        if state.phase == "place":
            placement = ((int(row[t.M_X1]), int(row[t.M_Y1])), (int(row[t.M_X2]), int(row[t.M_Y2])))
            state = state.apply(placement)
        else:
            assert row[t.M_BANKRUPT] == 1 and row[t.M_X1] == t.NULL
        if rules.orient_at_end and state.phase == "orient":
            state = state.apply(int(row[t.M_END_ROTATION]))
        assert _visible_by_scan(state) == [row[t.visible_after_col(i, p)] for i in range(p)]
    assert state.is_over
    assert state.outcome().visible == tuple(record.seats[:, t.S_VISIBLE])


def _lineup_batch(
    rules: Rules, lineups: list[list[str]], params: list[list[dict[str, float]]]
) -> np.ndarray:
    """The moves (games x rows x columns) of play_batch for these line-ups, seeds 0, 1, ..."""
    g, rows = len(lineups), t.max_turns(rules)
    codes, vectors = lineup_arrays(lineups, params)
    moves = np.zeros((t.move_columns(rules.players), g * rows), np.int16)
    games = np.zeros((g, 3), np.int64)
    seats = np.zeros((g, rules.players, t.SEAT_COLUMNS), np.int32)
    seeds = np.arange(g, dtype=np.uint64)
    assert play_batch(k.initial_state(rules), seeds, codes, vectors, moves, games, seats) == 0
    return game_rows(moves, games[:, 0], rows)


def test_the_loop_without_the_searching_twins_plays_the_same_games() -> None:
    """play_batch compiles a loop without the expert's family for batches that seat none
    of it (twins.SEARCHING); its games are those of the loop with them, move for move."""
    from marrakech_sim.strategies.kernels import GREEDY_PARAMETERS

    rules = Rules(players=2)
    greedy = dict.fromkeys(GREEDY_PARAMETERS, 1.0)
    lineups = [["random", "greedy"], ["greedy", "greedy"], ["greedy", "random"]] * 4
    params = [[{} if name == "random" else greedy for name in lineup] for lineup in lineups]
    without = _lineup_batch(rules, lineups, params)
    # one game of the expert in the batch: the whole batch goes through the loop with them
    with_expert = _lineup_batch(
        rules,
        [*lineups, ["expert", "random"]],
        [*params, [{"budget": 1, "width": 0, "look": 0.2}, {}]],
    )
    assert (without == with_expert[: len(lineups)]).all()
    assert (without != t.NULL).any()


@pytest.mark.parametrize("variant", ["4p", "3p-two-colours", "4p-poor", "2p-orient-at-end"])
def test_the_loop_without_move_rows_plays_the_same_games(variant: str) -> None:
    """play_batch(records=False), for batches that keep no moves, ends every game as the
    loop that writes the rows does (same turns, end, seats) and leaves the buffer alone."""
    rules = Rules(**VARIANTS[variant])
    p, g, rows = rules.players, 24, t.max_turns(rules)
    codes, params = lineup_arrays([["random"] * p] * g, [[{}] * p] * g)
    _, games, seats = batch(rules, list(range(g)))
    untouched = np.full((t.move_columns(p), g * rows), 7, np.int16)
    quiet_games = np.zeros_like(games)
    quiet_seats = np.zeros_like(seats)
    seeds = np.arange(g, dtype=np.uint64)
    err = play_batch(
        k.initial_state(rules),
        seeds,
        codes,
        params,
        untouched,
        quiet_games,
        quiet_seats,
        records=False,
    )
    assert err == 0
    assert (quiet_games == games).all() and (quiet_seats == seats).all()
    assert (untouched == 7).all()
    assert (games[:, 0] > 0).all()


@pytest.mark.slow  # compiles the loop into an empty kernel cache (over a minute)
def test_a_study_without_the_expert_does_not_compile_its_search(tmp_path: Path) -> None:
    """Into an empty kernel cache, a random and greedy study's warm-up compiles the loop
    without the searching twins: the expert's kernels stay uncompiled."""
    script = (
        "from marrakech_sim.run.chunk import Prepared\n"
        "from marrakech_sim.run.config import study_from_dict\n"
        "from marrakech_sim.strategies import expert\n"
        "study = study_from_dict({'seed': 1, 'games_per_lineup': 2, 'chunk_games': 2,\n"
        "    'rulesets': {'two': {'players': 2}}, 'strategies': {'random': {}, 'greedy': {}},\n"
        "    'schedule': {'kind': 'self_play'}})\n"
        "Prepared(study).warm_up()\n"
        "print(len(expert.expert_rotation.signatures), len(expert.expert_placement.signatures))\n"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "kernels")}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["0", "0"]
