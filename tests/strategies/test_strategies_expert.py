"""`expert` and the restricted players: parameters, determinism, twins, conformance, the
budget knob, and that the restricted players do what their names say."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from conftest import ROOT
from scipy import stats as scipy_stats
from test_strategies_twins import play_compiled

from marrakech_sim import kernel_cache
from marrakech_sim.errors import ConfigError
from marrakech_sim.play import turns
from marrakech_sim.play.conformance import check_strategy
from marrakech_sim.play.game import play_game
from marrakech_sim.play.rng import Rng, new_stream, rng_below, rng_next
from marrakech_sim.play.strategy import StrategySpec, describe, registered
from marrakech_sim.play.view import GameView
from marrakech_sim.rules import core as k
from marrakech_sim.rules.options import COLOUR_LETTERS, Rules
from marrakech_sim.rules.perft import perft
from marrakech_sim.rules.state import GameState
from marrakech_sim.strategies.expert import (
    ENDGAME_ROUNDS,
    ENDGAME_SAMPLES,
    GREEDY_LOOKAHEAD,
    HORIZON_ROUNDS,
    LEAF_WEIGHTS,
    MODEL_CACHE,
    MODEL_LOOKAHEAD,
    MODEL_OUT,
    ROLLOUT_GREEDY,
    TO_THE_END,
    ExpertStrategy,
    PlacementOnlyStrategy,
    RotationOnlyStrategy,
    cached_rotation,
    expert_values,
    leaf_value,
    mean_value,
    model_rotation,
    play_out,
    sampled_total,
    schedule,
    shared_first_turn,
    work_buffers,
)
from marrakech_sim.strategies.greedy import GreedyStrategy
from marrakech_sim.strategies.kernels import draw_colour

TWO = Rules(players=2)


@pytest.mark.parametrize("budget", [0, -3, "big", 2.5, True, 10**6])
@pytest.mark.parametrize("ref", ["expert", "rotation-only", "placement-only"])
def test_bad_budget_is_a_config_error_naming_it(ref: str, budget: object) -> None:
    """A budget that is not an allowed integer is a ConfigError quoting it and what is
    allowed: the range (the strategy's own check) or an integer (the parameter type check
    every strategy gets, which sees a string, a float or a bool first)."""
    if budget == 0 and ref != "expert":
        StrategySpec.of(ref, {"budget": 0}).build()  # the restricted players' greedy mode
        return
    allowed = "is not an integer" if isinstance(budget, str | float | bool) else "is not allowed"
    with pytest.raises(ConfigError) as found:
        StrategySpec.of(ref, {"budget": budget}).build()
    message = str(found.value)
    assert "budget" in message and repr(budget) in message and allowed in message, message


def test_expert_is_deterministic_by_seed() -> None:
    """The same seed gives the same game with expert in it; another seed another game."""
    specs = [StrategySpec.of("expert", {"budget": 2}), StrategySpec.of("greedy")]
    games = [play_game(TWO, [s.build() for s in specs], seed) for seed in (5, 5, 6)]
    assert all(g.error is None for g in games)
    np.testing.assert_array_equal(games[0].moves, games[1].moves)
    assert not np.array_equal(games[0].moves, games[2].moves)


def test_every_caller_of_the_rules_shares_one_compiled_form() -> None:
    """The expert's search, the Python loop's step, the replay loop, the API and perft
    all reach the rules through one compiled kernel for one set of argument types
    (rules.core.k_apply): each further form compiles the rules again, about 10 s cold.
    Counted in this process and in the kernel cache's index (where the callers load from
    the cache, this process never loads the kernel itself)."""
    specs = [StrategySpec.of("expert", {"budget": 2}), StrategySpec.of("greedy")]
    game = play_game(TWO, [s.build() for s in specs], 5)
    assert game.error is None
    turns.replay_rows(TWO, game.moves)
    state = GameState.start()
    assert perft(state, 3) > 0
    while not state.is_over:
        state = state.apply(state.legal_actions()[0])
    forms = kernel_cache.compiled_signatures(k.k_apply_int64)
    assert len(forms) == 1, forms


def test_the_search_passes_no_constant_to_its_kernels() -> None:
    """numba compiles a kernel once per argument types, and a constant argument (-1, 0, 1)
    is a type of its own (a Literal): the search passes int64 values, so the expert (the
    exact and the sampled paths, the pruning's one-sample values) and a restricted
    player's search compile each of its kernels once, not once per constant (up to six
    forms each before: an expert game on an empty kernel cache compiled for 108 s, 83 s
    after). Read from this process and the kernel cache's index, where the tests that
    call these kernels directly add forms of their own types, never a constant's."""
    from numba.core import types

    from marrakech_sim.strategies import expert

    lineups = [
        [StrategySpec.of("expert", {"budget": 2, "width": 1}), StrategySpec.of("greedy")],
        [StrategySpec.of("placement-only", {"budget": 1}), StrategySpec.of("expert")],
    ]
    for specs in lineups:
        assert play_game(TWO, [s.build() for s in specs], 5).error is None
    for kernel in (
        expert.expert_rotation,
        expert.expert_placement,
        expert.expert_values,
        expert.mean_value,
        expert.sampled_total,
        expert.exact_total,
        expert.shared_first_turn,
        expert.play_out,
    ):
        forms = kernel_cache.compiled_signatures(kernel)
        assert forms, kernel.__name__
        constants = [f for f in forms if any(isinstance(a, types.Literal) for a in f)]
        assert not constants, (kernel.__name__, constants)


@pytest.mark.parametrize(
    "rules",
    [Rules(players=2), Rules(players=3, orient_at_end=True), Rules(board_size=9)],
    ids=["2p", "3p-orient-at-end", "4p-board9"],
)
def test_compiled_twins_play_the_python_games(rules: Rules) -> None:
    """play_batch with the expert and restricted twins plays move for move the games
    play_game plays with their Python forms."""
    entries = [
        ("expert", {"budget": 1}),
        ("rotation-only", {}),
        ("placement-only", {"budget": 1}),
        ("placement-only", {}),
    ]
    specs = [StrategySpec.of(*entries[i % len(entries)]) for i in range(rules.players)]
    seeds = [3, 2**40 + 1]
    moves, _, seats = play_compiled(rules, specs, seeds)
    for g, seed in enumerate(seeds):
        record = play_game(rules, [spec.build() for spec in specs], seed)
        assert record.error is None
        np.testing.assert_array_equal(moves[g, : record.turns], record.moves)
        np.testing.assert_array_equal(seats[g], record.seats)


@pytest.mark.parametrize(
    "params",
    [{"budget": 1}, {"budget": 2}, {"budget": 4, "width": 1}, {"budget": 4, "width": 1, "look": 0}],
)
def test_expert_passes_the_conformance_checker(params: dict[str, int]) -> None:
    """check-strategy finds no problem with expert (every seat, 2-4 players, both orders;
    budget 2: with its memory of the game and the exact round; width 1: the pruned
    search; look 0: the other seats modelled as greedy)."""
    report = check_strategy("expert", params, games=1)
    assert report.ok, report.lines()


@pytest.mark.parametrize("width", [-1, 17, "two", 1.5, True])
def test_bad_width_is_a_config_error_naming_it(width: object) -> None:
    """A width that is not an integer from 0 to 16 is a ConfigError quoting it and what
    is allowed."""
    allowed = "is not an integer" if isinstance(width, str | float | bool) else "from 0"
    with pytest.raises(ConfigError) as found:
        StrategySpec.of("expert", {"budget": 4, "width": width}).build()
    message = str(found.value)
    assert "width" in message and repr(width) in message and allowed in message, message


@pytest.mark.parametrize("budget, look", [(4, MODEL_LOOKAHEAD), (4, 0), (8, 0)])
@pytest.mark.parametrize("rules", [TWO, Rules(players=4)], ids=["2p", "4p"])
def test_expert_with_a_width_plays_the_same_games_compiled_and_in_python(
    rules: Rules, budget: int, look: float
) -> None:
    """expert{width=1} (the pruned search) at budget 4 and 8 (expert-fast of the skill
    study: budget 8, look 0), with the other seats' rotations modelled by the look or as
    greedy's (look 0), plays move for move the same game in play_batch and through
    play_game, and the same again by seed."""
    specs = [StrategySpec.of("expert", {"budget": budget, "width": 1, "look": look})]
    specs += [StrategySpec.of("greedy")] * (rules.players - 1)
    moves, _, seats = play_compiled(rules, specs, [8])
    record = play_game(rules, [spec.build() for spec in specs], 8)
    assert record.error is None
    np.testing.assert_array_equal(moves[0, : record.turns], record.moves)
    np.testing.assert_array_equal(seats[0], record.seats)
    again = play_game(rules, [spec.build() for spec in specs], 8)
    np.testing.assert_array_equal(again.moves, record.moves)


def test_a_width_prunes_only_the_rotations_own_placements() -> None:
    """width 0 and a width of at least every placement value alike; width 1 values a
    placement decision's options as width 0 does (they are all played on), and a
    rotation by its play-outs of budget 1's best placement after each roll, which
    changes some rotation's value in the positions tried."""
    rng = np.array([7], np.uint64)
    changed = 0
    for s in random_positions(TWO, 9):
        if s[k.PHASE_] not in (k.PHASE_ORIENT, k.PHASE_PLACE):
            continue
        values = {w: np.empty(16) for w in (0, 1, 16)}
        counts = {
            w: expert_values(s.copy(), 4, rng.copy(), values[w], MODEL_LOOKAHEAD, w) for w in values
        }
        count = counts[0]
        assert counts[1] == counts[16] == count
        np.testing.assert_array_equal(values[0][:count], values[16][:count])
        if s[k.PHASE_] == k.PHASE_PLACE:
            np.testing.assert_array_equal(values[0][:count], values[1][:count])
        else:
            assert (values[1][:count] <= values[0][:count] + 1e-12).all()  # a max over fewer
            changed += not np.array_equal(values[0][:count], values[1][:count])
    assert changed > 0


@pytest.mark.parametrize("look", [-0.1, 1.5, "far", True])
def test_bad_look_is_a_config_error_naming_it(look: object) -> None:
    """A look that is not a number from 0 to 1 is a ConfigError quoting it and what is
    allowed."""
    allowed = "is not a finite number" if isinstance(look, str | bool) else "from 0"
    with pytest.raises(ConfigError) as found:
        StrategySpec.of("expert", {"budget": 4, "look": look}).build()
    message = str(found.value)
    assert "look" in message and repr(look) in message and allowed in message, message


def _decision_states(rules: Rules, phase: str, count: int, seed: int) -> list[GameState]:
    """`count` positions in `phase` from random play (one per game turn, several games)."""
    rnd = np.random.default_rng(seed)
    found: list[GameState] = []
    while len(found) < count:
        state = GameState.start(rules)
        while not state.is_over and len(found) < count:
            if state.phase == phase:
                found.append(state)
            actions = state.legal_actions()
            state = state.apply(actions[int(rnd.integers(len(actions)))])
    return found


def test_rotation_only_places_uniformly_and_turns_as_greedy() -> None:
    """rotation-only's placement is uniform over the legal options (chi-square over 12,000
    draws, p > 0.001) and is exactly the random baseline's draw; its rotation is greedy's."""
    player, greedy = RotationOnlyStrategy(), GreedyStrategy()
    (state,) = _decision_states(TWO, "place", 1, seed=4)
    options = state.legal_actions()
    view = GameView(TWO, np.array(state.packed), state.seat, Rng(9, 1))
    counts = np.zeros(len(options))
    for _ in range(12_000):
        counts[options.index(player.choose_placement(view, options))] += 1
    assert scipy_stats.chisquare(counts).pvalue > 0.001, counts
    for state in _decision_states(TWO, "orient", 30, seed=5):
        mine = GameView(TWO, np.array(state.packed), state.seat, Rng(1, 2))
        theirs = GameView(TWO, np.array(state.packed), state.seat, Rng(1, 2))
        assert player.choose_rotation(mine) == greedy.choose_rotation(theirs)
        assert mine.rng.getstate() == theirs.rng.getstate()


def test_placement_only_turns_uniformly_and_places_as_greedy() -> None:
    """placement-only's rotation is uniform over left, none, right (chi-square over 6,000
    draws, p > 0.001); its placement is greedy's, drawing as greedy does."""
    player, greedy = PlacementOnlyStrategy(), GreedyStrategy()
    (state,) = _decision_states(TWO, "orient", 1, seed=6)
    view = GameView(TWO, np.array(state.packed), state.seat, Rng(9, 1))
    counts = np.zeros(3)
    for _ in range(6_000):
        counts[player.choose_rotation(view) + 1] += 1
    assert scipy_stats.chisquare(counts).pvalue > 0.001, counts
    for state in _decision_states(TWO, "place", 30, seed=7):
        options = state.legal_actions()
        mine = GameView(TWO, np.array(state.packed), state.seat, Rng(1, 2))
        theirs = GameView(TWO, np.array(state.packed), state.seat, Rng(1, 2))
        assert player.choose_placement(mine, options) == greedy.choose_placement(theirs, options)
        assert mine.rng.getstate() == theirs.rng.getstate()


def test_expert_budget_knob_is_monotone_at_small_sizes() -> None:
    """A larger budget is not worse (ladder sense): budget 4 against budget 1 wins at
    least half of 2-player games within the 95% block-aware interval, and its rate
    against greedy is not below budget 1's interval (60 blocks each)."""
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from skill_ladder import levels, match

    _, greedy, low, high = levels([1, 4])
    head = match(TWO, high, low, 60, seed=11, below=True)
    assert head.high >= 0.5, head
    weak = match(TWO, low, greedy, 60, seed=12, below=False)
    strong = match(TWO, high, greedy, 60, seed=12, below=False)
    assert strong.high >= weak.low, (weak, strong)


def rugs_left(s: np.ndarray) -> int:
    """Rugs still to place by the seats in the game (one turn each)."""
    out = s[k.OUT_AT]
    return sum(k.seat_rugs_left(s, seat) for seat in range(s[k.P_]) if s[out + seat] == 0)


def random_positions(rules: Rules, seed: int) -> Iterator[np.ndarray]:
    """The positions of one game (the same array, changed in place), each before its
    action: Assam never turned, rolls, draws and placements at random."""
    s = k.initial_state(rules)
    stream = new_stream(seed, 0)
    options = np.empty(16, np.int64)
    while s[k.PHASE_] != k.PHASE_OVER:
        yield s
        phase = s[k.PHASE_]
        if phase == k.PHASE_ORIENT:
            k.k_apply(s, 0)
        elif phase == k.PHASE_ROLL:
            k.k_apply(s, s[s[k.FACES_AT] + rng_below(stream, s[k.NFACES_])])
        elif phase == k.PHASE_DRAW:
            k.k_apply(s, draw_colour(s, stream))
        else:
            k.k_apply(s, options[rng_below(stream, k.legal_placements(s, options))])


@pytest.mark.parametrize("players", [2, 4])
def test_expert_plays_on_to_the_end_in_the_last_two_rounds(players: int) -> None:
    """From budget 2 the samples are played on for one round, and to the end of the game
    once at most two rounds of rugs are left; budget 1 values the finished turn."""
    rules = Rules(players=players)
    horizons = {
        rugs_left(s): (schedule(s, 1), schedule(s, 2), schedule(s, 64))
        for s in random_positions(rules, 3)
        if s[k.PHASE_] == k.PHASE_ORIENT
    }
    endgame = ENDGAME_ROUNDS * players
    assert any(left <= endgame for left in horizons) and any(left > endgame for left in horizons)
    for left, (one, two, many) in horizons.items():
        expected = TO_THE_END if left <= endgame else HORIZON_ROUNDS * players
        assert (one, two, many) == (1, expected, expected), (left, one, two, many)
    assert turns.max_turns(rules) < TO_THE_END


def test_expert_samples_four_times_its_budget_in_the_endgame() -> None:
    """At a placement with at most two rounds of rugs left, budget 2's option values are
    the play-outs to the end over ENDGAME_SAMPLES x 2 = 8 sampled chance sequences (and
    budget 1's value), recomputed here from mean_value: not 2 sequences."""
    s = next(
        s.copy()
        for s in random_positions(TWO, 5)
        if s[k.PHASE_] == k.PHASE_PLACE and rugs_left(s) <= ENDGAME_ROUNDS * 2
    )
    options = np.empty(16, np.int64)
    rng = np.array([2026], np.uint64)
    values = np.empty(16)
    count = expert_values(s.copy(), 2, rng.copy(), values, MODEL_LOOKAHEAD, 0)
    assert count == k.legal_placements(s, options) and schedule(s, 2) == TO_THE_END

    def by_hand(samples: int) -> np.ndarray:
        seed = rng_next(rng.copy())  # the decision's one draw seeds its samples
        weights = np.array(LEAF_WEIGHTS[0])
        greedy = np.array(ROLLOUT_GREEDY)
        work = work_buffers(s)
        faces = [int(s[s[k.FACES_AT] + f]) for f in range(s[k.NFACES_])]
        out = np.zeros(count)
        for i in range(count):
            c = s.copy()
            k.k_apply(c, options[i])
            for face in sorted(set(faces)):  # the next roll, each face once by its count
                first = faces.index(face)
                v = mean_value(
                    c,
                    c.copy(),
                    seed,
                    samples,
                    first,
                    TO_THE_END,
                    s[k.TURN_],
                    s[k.SEAT_],
                    weights,
                    greedy,
                    work,
                )
                out[i] += faces.count(face) * v
        return out / len(faces)

    np.testing.assert_allclose(values[:count], by_hand(ENDGAME_SAMPLES * 2), rtol=1e-12)
    assert not np.allclose(values[:count], by_hand(2))


def test_expert_and_restricted_players_are_registered_compiled_built_ins() -> None:
    """expert, rotation-only and placement-only are registered with a compiled twin, and
    expert's parameters are budget (default 8), width and look (as docs/STRATEGIES.md states)."""
    for name in ("expert", "rotation-only", "placement-only"):
        assert name in registered() and describe(name)["compiled"]
    assert dict(ExpertStrategy.PARAMETERS) == {"budget": 8, "width": 0, "look": MODEL_LOOKAHEAD}


def model_by_hand(rules: Rules, s: np.ndarray) -> int:
    """model_rotation recomputed with the Python greedy over GameState: each rotation's
    greedy score + MODEL_LOOKAHEAD x the sum over the die's faces of the best greedy
    placement score after that roll (the mover's first colour with rugs left), first
    best; greedy's own choice (first best) when the rotation sets the next player's walk."""
    greedy = GreedyStrategy()
    state = GameState.from_packed(rules, s)
    scores = greedy.rotation_scores(GameView(rules, s.copy(), state.seat, Rng(1, 1)))
    if rules.orient_at_end:
        return int(np.argmax(scores)) - 1
    values = []
    for rotation, score in zip((-1, 0, 1), scores, strict=True):
        total = 0.0
        for face in rules.die_faces:
            after = state.apply(rotation).apply(face)
            if after.phase == "draw":
                after = after.apply(after.legal_actions()[0])
            if after.phase != "place":
                total += MODEL_OUT
                continue
            view = GameView(rules, np.array(after.packed), after.seat, Rng(1, 1))
            total += max(greedy.placement_scores(view, after.legal_actions()))
        values.append(score + MODEL_LOOKAHEAD * total)
    return int(np.argmax(values)) - 1


@pytest.mark.parametrize(
    "rules",
    [TWO, Rules(players=4), Rules(players=3, orient_at_end=True), Rules(board_size=9)],
    ids=str,
)
def test_the_play_outs_model_of_a_rotation_is_greedy_looking_where_it_can_place(
    rules: Rules,
) -> None:
    """model_rotation, the other seats' rotations in the expert's play-outs, is the
    rotation the Python greedy's scores give when each also counts the best placement
    the roll leads to (model_by_hand), at every rotation of two games; under "orient at
    end" it is greedy's; in the standard order it differs from greedy's in some. A 9 x 9
    board (81 squares) takes the labelled region queries instead of the bitboards. With
    the weight 0 (expert's look = 0) it is greedy's first best everywhere."""
    greedy = np.array(ROLLOUT_GREEDY)
    n = rules.board_size
    buffers = (
        np.empty(16, np.int64),
        k.initial_state(rules),
        np.empty(3),
        np.empty(2 * n * n),
        np.full(1, MODEL_LOOKAHEAD),
    )
    memory = np.empty((MODEL_CACHE, len(buffers[1])), np.int64)
    turned = np.full(MODEL_CACHE + 1, -2, np.int64)
    turned[-1] = 0
    earlier: list[np.ndarray] = []
    differ = seen = 0
    for seed in (11, 12):
        for s in random_positions(rules, seed):
            if s[k.PHASE_] != k.PHASE_ORIENT:
                continue
            got = model_rotation(s, greedy, *buffers)
            assert got == model_by_hand(rules, s), (seed, int(s[k.TURN_]))
            # the search's cache of the model's answers: the same answer, asked anew or
            # again, with the earlier positions asked in between
            earlier.append(s.copy())
            for again in (s, *earlier[-3:], s):
                cached = cached_rotation(again, greedy, *buffers[:4], memory, turned, buffers[4])
                assert cached == model_rotation(again.copy(), greedy, *buffers)
            view = GameView(rules, s.copy(), int(s[k.SEAT_]), Rng(1, 1))
            plain = GreedyStrategy().rotation_scores(view)
            differ += got != int(np.argmax(plain)) - 1
            # look 0 (expert's `look` parameter): greedy's first best, the look not computed
            as_greedy = model_rotation(s, greedy, *buffers[:4], np.zeros(1))
            assert as_greedy == int(np.argmax(plain)) - 1
            seen += 1
    assert seen > 20
    assert (differ == 0) if rules.orient_at_end else (differ > 0), (differ, seen)


def round_by_hand(rules: Rules, c: np.ndarray, face: int, me: int) -> float:
    """The expected leaf_value for `me` one round on from c (the other seat's turn, 2
    players, the expert having placed), its roll `face`, recomputed with the Python
    engine: each colour it may draw by its rugs of that colour left, then its rotation
    by model_by_hand, its roll, and greedy's first best placement (the Python greedy)."""
    greedy = GreedyStrategy()
    state = GameState.from_packed(rules, c)
    seat = state.seat
    left = {colour: int(c[c[k.RUGS_LEFT_AT] + colour]) for colour in (seat, seat + 2)}
    total = 0.0
    for colour, count in left.items():
        if count == 0:
            continue
        drawn = state.apply(COLOUR_LETTERS[colour])
        turned = drawn.apply(model_by_hand(rules, np.array(drawn.packed)))
        rolled = turned.apply(face)
        if rolled.phase == "place":
            view = GameView(rules, np.array(rolled.packed), rolled.seat, Rng(1, 1))
            legal = rolled.legal_actions()
            rolled = rolled.apply(legal[int(np.argmax(greedy.placement_scores(view, legal)))])
        leaf = np.array(rolled.packed)
        assert leaf[k.TURN_] == c[k.TURN_] + 1 or leaf[k.PHASE_] == k.PHASE_OVER
        work = work_buffers(leaf)
        values, result, none, feats = work[1], work[2], work[3][0:0], work[5]
        weights = np.array(LEAF_WEIGHTS[0])
        value = leaf_value(leaf, me, np.array(ROLLOUT_GREEDY), values, result, none, weights, feats)
        total += count * value
    return total / sum(left.values())


def test_with_two_players_the_round_is_expanded_exactly() -> None:
    """With 2 players one round of play-out holds one rug draw and one roll of the other
    seat: a placement's value is their exact expectation (round_by_hand, averaged over
    the die's faces for that roll), so budgets 2 and 8 value alike before the last two
    rounds (two positions, all their placements). A rotation's round has 8 outcomes
    (2 colours, 4 faces): budget 8 and 16 expand it alike, budget 2 samples it."""
    positions = [
        s.copy()
        for s in random_positions(TWO, 8)
        if s[k.PHASE_] == k.PHASE_PLACE and rugs_left(s) > ENDGAME_ROUNDS * 2 + 4
    ][5:7]
    assert len(positions) == 2
    options = np.empty(16, np.int64)
    for s in positions:
        me = int(s[k.SEAT_])
        values = {}
        for budget in (2, 8):
            values[budget] = np.empty(16)
            count = expert_values(
                s.copy(), budget, np.array([7], np.uint64), values[budget], MODEL_LOOKAHEAD, 0
            )
        assert count == k.legal_placements(s, options)
        np.testing.assert_array_equal(values[2][:count], values[8][:count])
        faces = [int(s[s[k.FACES_AT] + f]) for f in range(s[k.NFACES_])]
        for i in range(count):
            c = s.copy()
            k.k_apply(c, options[i])
            expected = sum(round_by_hand(TWO, c, face, me) for face in faces) / len(faces)
            assert values[2][i] == pytest.approx(expected, rel=1e-12), i
    turn = next(
        s.copy()
        for s in random_positions(TWO, 8)
        if s[k.PHASE_] == k.PHASE_ORIENT and rugs_left(s) > ENDGAME_ROUNDS * 2 + 4
    )
    rotations = {budget: np.empty(16) for budget in (2, 8, 16)}
    for budget, values in rotations.items():
        expert_values(turn.copy(), budget, np.array([7], np.uint64), values, MODEL_LOOKAHEAD, 0)
    np.testing.assert_array_equal(rotations[8][:3], rotations[16][:3])
    assert not np.array_equal(rotations[2][:3], rotations[8][:3])


@pytest.mark.parametrize("other", ["greedy", "random"])
def test_expert_models_a_seat_it_sees_turn_as_greedy_as_greedy(other: str) -> None:
    """With 2 players the expert remembers how the other seat turns Assam: against
    greedy every rotation seen is one of greedy's best (it stays modelled as greedy,
    GREEDY_LOOKAHEAD), against random one is not (modelled as a strong player,
    MODEL_LOOKAHEAD). The compiled twin remembers alike: the same games."""
    assert 0 < GREEDY_LOOKAHEAD < 1e-3 < MODEL_LOOKAHEAD
    specs = [StrategySpec.of("expert", {"budget": 2}), StrategySpec.of(other)]
    seeds = [3, 4]
    moves, _, _ = play_compiled(TWO, specs, seeds)
    for g, seed in enumerate(seeds):
        expert = specs[0].build()
        record = play_game(TWO, [expert, specs[1].build()], seed)
        assert record.error is None
        np.testing.assert_array_equal(moves[g, : record.turns], record.moves)
        assert expert.other_seems_greedy == (other == "greedy"), seed


@pytest.mark.parametrize("look", [MODEL_LOOKAHEAD, 0.0])
def test_a_turn_shared_by_every_sample_is_played_once_with_the_same_values(look: float) -> None:
    """sampled_total, which plays a turn that is the same in every sample once
    (shared_first_turn: 4 players, one colour a seat), gives exactly the sum of the samples
    played each from the start (play_out, then leaf_value, each sample's stream as the
    search seeds it), after the placements of two 4-player games and each face."""
    rules = Rules(players=4)
    greedy = np.array(ROLLOUT_GREEDY)
    weights = np.array(LEAF_WEIGHTS[2])
    mix = 0xD1B54A32D192ED03  # expert's sample mix: sample j's seed ^ (j + 1) x mix
    options = np.empty(16, np.int64)
    shared = compared = 0
    for game in (21, 22):
        for s in random_positions(rules, game):
            if s[k.PHASE_] != k.PHASE_PLACE or s[k.TURN_] % 3 != 0:
                continue
            start, me = int(s[k.TURN_]), int(s[k.SEAT_])
            c = s.copy()
            k.k_apply(c, options[k.legal_placements(c, options) - 1])
            work = work_buffers(c)
            work[-1][0] = look
            model = (work[0], work[6], work[7], work[8], work[9], work[10], work[-1])
            for face in range(int(c[k.NFACES_])):
                got = sampled_total(
                    c, c.copy(), np.uint64(99), 3, face, 4, start, me, weights, greedy, work
                )
                expected = 0.0
                for j in range(3):
                    d = c.copy()
                    mixer = np.array([99 ^ ((j + 1) * mix % 2**64)], np.uint64)
                    stream = np.array([rng_next(mixer)], np.uint64)
                    play_out(d, stream, face, -1, 4, start, me, greedy, model)
                    expected += leaf_value(d, me, greedy, *work[1:3], stream[0:0], weights, work[5])
                assert got == expected, (game, start, face)
                first = c.copy()
                shared += shared_first_turn(first, face, me, greedy, model, stream[0:0]) >= 0
                compared += 1
    assert compared > 20 and shared > 10, (compared, shared)
