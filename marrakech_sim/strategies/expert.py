"""`expert`: a shallow expectimax with greedy roll-outs over sampled dice; one compute
knob, `budget`, and `width`, which plays on only the best of a rotation's placements.

At each decision every option (3 rotations, or each legal placement) is valued:

- The first roll after the option is expanded over the die's distinct faces, weighted
  by their counts (RULES.md section 1: 1, 2, 2, 3, 3, 4).
- When the option is the mover's own rotation (standard turn order), the mover's
  placement after each roll is the best of all its legal placements (the search's
  max node); otherwise the position after the option is played on.
- Playing on: every seat places as greedy (default weights, first best); the expert
  turns Assam as greedy, the other seats as a player who also looks where the roll
  will let it place (`model_rotation`). Each sample plays on until one round (every
  seat's turn) after the decision's turn, `budget` samples (or to the end of the game,
  4 x `budget`, when at most two rounds of rugs are left), each with one sampled chance
  sequence (later rolls and, with two colours a seat, the rug draws). Every option and
  face meets the same `budget` sequences (common random numbers), so their differences
  are not drowned in dice noise. With 2 players a round holds one draw and one roll,
  and where their outcomes are no more than the budget they are expanded exactly
  instead (`exact_total`). With budget 1 the position right after the turn is valued
  instead (nothing to sample).
- With 2 players the expert remembers the game (`memory`: the state of its last
  placement) and so sees each rotation of the other seat; a seat that has only turned
  Assam as greedy would is modelled as greedy (`GREEDY_LOOKAHEAD`), one that once did
  otherwise as a strong player (`MODEL_LOOKAHEAD`).
- `leaf_value` values the position reached by a learned evaluation: each seat's
  utility is a weighted sum of its features (dirhams, visible squares, the walk about
  to happen at its expectation, its regions' size^2 and their expected income, ...:
  LEAF_FEATURES), and my value is my share of the softmax of the utilities, the chance
  that I win (a conditional logit fitted to the winners of logged positions by
  tools/fit_leaf.py: LEAF_WEIGHTS). A finished game: my win share.

The option with the best value is played; exact ties by one draw of the seat's stream.
Measured choices (horizon, the evaluation, the max node) are in docs/STRATEGIES.md.

Randomness: one draw of the seat's stream seeds a decision's samples, and one more
only when options tie, so the Python form and the compiled twin (`ExpertStrategy.COMPILED`,
code 2) make the same draws and play the same games.

The restricted players of the "what decides games" measure are here too:
`rotation-only` turns Assam as greedy (or expert) and places uniformly at random;
`placement-only` turns at random and places as greedy (or expert).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from numba import njit, typeof, uint64

from marrakech_sim.errors import ConfigError
from marrakech_sim.play.rng import rng_below, rng_next
from marrakech_sim.play.strategy import BaseStrategy, CompiledTwin
from marrakech_sim.play.view import GameView
from marrakech_sim.rules import core as k
from marrakech_sim.rules.queries import (
    k_label_regions,
    k_next_walker,
    prepare_regions,
    rotation_totals,
)
from marrakech_sim.rules.state import Placement
from marrakech_sim.strategies.kernels import (
    draw_colour,
    greedy_best_score,
    greedy_placement,
    greedy_rotation,
    greedy_rotation_scores,
    pick_best,
    random_placement,
    random_rotation,
)

#: rounds (turns of every seat) each sample is played on before the position is valued
HORIZON_ROUNDS = 1
#: when at most this many rounds of rugs are left in the game, the samples are played on
#: to its end instead, so the leaves are finished games (budgets >= 2; docs/STRATEGIES.md)
ENDGAME_ROUNDS = 2
#: a horizon in turns that no game reaches: play on to the end
TO_THE_END = 1 << 20
#: in those last rounds each decision samples this many times `budget` chance sequences:
#: a finished game's value (won or lost) is noisier than the evaluation's, and the
#: play-outs are short (docs/STRATEGIES.md)
ENDGAME_SAMPLES = 4
#: the per-seat features leaf_value weighs (leaf_features), in weight order
LEAF_FEATURES = (
    "dirhams",
    "visible",  # visible squares
    "walk",  # expected payment of the walk about to happen: + received, - paid
    "income",  # sum(region size^2) / squares x walks of the others still to come
    "squares2",  # sum(region size^2) / squares
    "largest",  # largest own region
    "visible_late",  # visible squares x share of all rugs still to place
    "rugs_left",
    "walker",  # 1 for the seat about to walk
    "next",  # 1 for the seat after it
    "poor",  # max(0, POOR - dirhams)
)
(
    F_DIRHAMS,
    F_VISIBLE,
    F_WALK,
    F_INCOME,
    F_SQUARES2,
    F_LARGEST,
    F_VISIBLE_LATE,
    F_RUGS_LEFT,
    F_WALKER,
    F_NEXT,
    F_POOR,
) = range(len(LEAF_FEATURES))
#: dirhams below which a seat counts as poor (the feature "poor")
POOR = 8
#: weight of the utility difference beside the win share in leaf_value (breaks near-ties
#: of sure wins and losses)
TIE_EPS = 0.01
#: leaf_value's weights for 2, 3 and 4 players (LEAF_FEATURES order): a conditional
#: logit of the winner on the features, fitted by tools/fit_leaf.py (docs/STRATEGIES.md)
# fmt: off
LEAF_WEIGHTS = (
    (0.12604, 0.13859, 0.080643, 0.020624, 0.10507, 0.012295,
     0.015384, 0.12161, 0.11736, -0.11736, -0.1358),
    (0.14915, 0.17662, 0.10158, 0.0081486, 0.082295, -0.015712,
     -0.033563, 0.12106, 0.23122, 0.10016, 0.26495),
    (0.23849, 0.26561, 0.14913, 0.0038211, 0.12911, -0.028138,
     -0.10888, 0.27843, 0.14552, 0.050098, -0.22883),
)
# fmt: on
#: expert's default budget
DEFAULT_BUDGET = 8
#: largest budget: samples per option and decision
MAX_BUDGET = 4096
#: largest width (the mover's placements played on after each roll of a rotation; the
#: search's option buffers hold 16)
MAX_WIDTH = 16
#: the greedy weights of the roll-outs: GreedyStrategy's defaults, in GREEDY_PARAMETERS order
ROLLOUT_GREEDY = (1.0, 1.0, 0.5, 1.0, 10.0)
#: the play-outs' model of the other seats' rotations: greedy's rotation score plus this
#: weight times the best greedy placement score each face of the die leads to (summed
#: over the faces). 0.2 predicts the expert's own rotations best (docs/STRATEGIES.md)
MODEL_LOOKAHEAD = 0.2
#: with 2 players, while every rotation the other seat was seen to make was one of
#: greedy's best (the expert's memory of the game), the model's weight for that seat:
#: greedy's rotation, its ties broken by the look (docs/STRATEGIES.md)
GREEDY_LOOKAHEAD = 1e-6
#: states whose model rotation a search remembers (cached_rotation)
MODEL_CACHE = 4
#: the model's value of a face whose walk ends the mover's game (no placement follows)
MODEL_OUT = -1000.0
#: mixes a decision's seed with the sample number (an odd 64-bit constant)
_SAMPLE_MIX = uint64(0xD1B54A32D192ED03)
#: the expert's memory of a game, an int64 array of memory_size(s) (2 players: what it
#: needs to see how the other seat turned Assam): flags, and the state right after its
#: last placement
M_FLAGS, M_STATE = 0, 1
#: M_FLAGS bits: the last placement is stored; the other seat once turned otherwise than greedy
PLACED, NOT_GREEDY = 1, 2


# ---------------------------------------------------------------- valuing a position


@njit(cache=True, _nrt=False)
def rugs_left_in_game(c):
    """The rugs the seats still in the game have left to place (one turn each)."""
    out_ = c[k.OUT_AT]
    left = 0
    for seat in range(c[k.P_]):
        if c[out_ + seat] == 0:
            left += k.seat_rugs_left(c, seat)
    return left


@njit(cache=True, _nrt=False)
def leaf_features(c, greedy, result, none, feats):
    """feats[seat, :] = the LEAF_FEATURES of each seat in the game in the running position
    c (rows of seats out of the game are left as they are; result: int64[4P + 1]).

    The walk about to happen is charged at its expectation over the die (the walker's
    facing as greedy would turn it, or as set in the variant "orient at end", RULES.md
    section 3), capped at the walker's dirhams on each face. The regions' income: a walk
    stopping on a uniformly random square pays the region there, so sum(size^2) /
    squares per walk of the others (RULES.md section 5), for every rug the others have
    left.
    """
    p = c[k.P_]
    out_ = c[k.OUT_AT]
    dirhams = c[k.DIRHAMS_AT]
    n = c[k.N_]
    nn = n * n
    walker = c[k.SEAT_]
    left = rugs_left_in_game(c)
    late = left / (p * c[k.C_] * c[k.RUGS_])  # share of all rugs still to place
    for seat in range(p):
        if c[out_ + seat] != 0:
            continue
        money = c[dirhams + seat]
        visible = k.visible_squares(c, seat)
        feats[seat, F_DIRHAMS] = money
        feats[seat, F_VISIBLE] = visible
        feats[seat, F_WALK] = 0.0
        feats[seat, F_VISIBLE_LATE] = visible * late
        feats[seat, F_RUGS_LEFT] = k.seat_rugs_left(c, seat)
        feats[seat, F_WALKER] = 1.0 if seat == walker else 0.0
        feats[seat, F_NEXT] = 1.0 if seat == (walker + 1) % p else 0.0
        feats[seat, F_POOR] = max(0, POOR - money)
    phase = c[k.PHASE_]
    if c[k.FLAGS_] & k.FLAG_ORIENT_AT_END or phase == k.PHASE_ROLL:
        r = 1  # Assam's facing is already set for this walk
    else:
        r = greedy_rotation(c, greedy, none) + 1  # the walker turns him as greedy
    rb = prepare_regions(c)
    share = 1.0 / c[k.NFACES_]
    for q in range(p):
        if q != walker and c[out_ + q] == 0:
            _, paid, _ = rotation_totals(c, r, walker, q, rb)
            feats[walker, F_WALK] -= paid * share
            feats[q, F_WALK] += paid * share
    k_label_regions(c)
    col = c[k.COLOUR_AT]
    lab = c[k.SCRATCH_AT]
    for seat in range(p):
        result[seat] = 0
        result[p + seat] = 0
    for sq in range(nn):
        colour = c[col + sq]
        if colour >= 0 and c[lab + sq] == sq:
            size = c[lab + nn + sq]
            result[colour % p] += size * size
            result[p + colour % p] = max(result[p + colour % p], size)
    for seat in range(p):
        if c[out_ + seat] == 0:
            walks = left - k.seat_rugs_left(c, seat)
            feats[seat, F_INCOME] = walks * result[seat] / nn
            feats[seat, F_SQUARES2] = result[seat] / nn
            feats[seat, F_LARGEST] = result[p + seat]


@njit(cache=True, _nrt=False)
def leaf_value(c, me, greedy, values, result, none, weights, feats):
    """The value of position c for seat `me`: my expected win share, plus TIE_EPS times
    my utility minus the best other seat's (buffers: values float64[P], result
    int64[4P + 1], feats float64[P, len(LEAF_FEATURES)]; none: an empty uint64 array,
    greedy's tie-breaking off; weights: the LEAF_WEIGHTS row of the player count).

    Running: each seat's utility is weights . leaf_features, and its win share the
    softmax of the utilities of the seats in the game (a conditional logit fitted to
    logged games' winners: tools/fit_leaf.py). Finished (RULES.md section 7): my win
    share, plus TIE_EPS times my final score minus the best other's in dirhams' utility.
    Out of the game: -1; everybody else out: 2.
    """
    p = c[k.P_]
    out_ = c[k.OUT_AT]
    if c[k.PHASE_] == k.PHASE_OVER:
        k.k_result(c, result)
        if c[out_ + me] != 0:
            return -1.0
        winners = 0
        best = -1.0
        for seat in range(p):
            winners += result[3 * p + seat]
            if seat != me and c[out_ + seat] == 0 and result[p + seat] > best:
                best = result[p + seat]
        share = result[3 * p + me] / winners if winners > 0 else 0.0
        if best < 0:
            return 2.0
        return share + TIE_EPS * weights[F_DIRHAMS] * (result[p + me] - best)
    if c[out_ + me] != 0:
        return -1.0
    leaf_features(c, greedy, result, none, feats)
    for seat in range(p):
        if c[out_ + seat] == 0:
            v = 0.0
            for f in range(weights.shape[0]):
                v += weights[f] * feats[seat, f]
            values[seat] = v
    best = -1e18
    for seat in range(p):
        if seat != me and c[out_ + seat] == 0 and values[seat] > best:
            best = values[seat]
    if best < -1e17:
        return 2.0
    total = 0.0
    for seat in range(p):
        if c[out_ + seat] == 0:
            total += np.exp(values[seat] - best)
    return np.exp(values[me] - best) / total + TIE_EPS * (values[me] - best)


@njit(cache=True, inline="always")
def face_weight(s, f):
    """How many of the die's faces show the number of face index f, when f is the first
    index showing it, else 0: visiting f = 0 .. NFACES - 1 and skipping the zeros visits
    each distinct face once, with its weight (RULES.md section 1: 1, 2, 2, 3, 3, 4)."""
    faces = s[k.FACES_AT]
    weight = 0
    for g in range(s[k.NFACES_]):
        if s[faces + g] == s[faces + f]:
            if g < f:
                return 0
            weight += 1
    return weight


@njit(cache=True)
def rollout_greedy():
    """ROLLOUT_GREEDY as a new float64 array: the greedy weights of the play-outs."""
    greedy = np.empty(len(ROLLOUT_GREEDY))
    for i in range(len(ROLLOUT_GREEDY)):
        greedy[i] = ROLLOUT_GREEDY[i]
    return greedy


@njit(cache=True, inline="always")
def draw_first_colour(c):
    """At a rug draw, draw the drawing seat's first colour with rugs left (a look ahead
    that does not sample the draw); elsewhere nothing."""
    if c[k.PHASE_] == k.PHASE_DRAW:
        left = c[k.RUGS_LEFT_AT]
        for colour in range(c[k.SEAT_], c[k.P_] * c[k.C_], c[k.P_]):
            if c[left + colour] > 0:
                k.k_apply(c, colour)
                return


@njit(cache=True, _nrt=False)
def model_rotation(c, greedy, options, e, scores, memo, look):
    """The rotation (-1, 0 or 1) the play-outs give a seat other than the searching one in
    c: the best of greedy's rotation score + look[0] x the sum over the die's
    faces of the best greedy placement score after that roll (the rug: the mover's first
    colour with rugs left; a walk that ends the mover's game: MODEL_OUT), first best.
    Greedy turns Assam away from payments only; strong players (the expert, expectimax)
    also turn him towards good places for their rug. Under "orient at end" (RULES.md
    section 3) the rotation sets the next player's walk: greedy's rotation. look[0] is
    the expert's `look` (MODEL_LOOKAHEAD by default; 0: greedy's rotation, the look not
    computed), or GREEDY_LOOKAHEAD for a seat seen to turn as greedy. Buffers:
    options int64[16], e a state, scores float64[3], memo float64[2 x squares].

    Each distinct face is scored once and counted by its number of faces, the board's
    region queries are prepared once, and each placement is scored once however many
    landings offer it (a walk moves Assam and dirhams, not rugs: greedy_best_score's
    memo); scores are multiples of 0.5, so the sums are exact and equal the face-by-face
    sums.
    """
    greedy_rotation_scores(c, greedy, scores)
    if look[0] == 0.0 or k_next_walker(c) != c[k.SEAT_]:
        return np.argmax(scores) - 1  # greedy's first best (look 0: the look adds nothing)
    faces = c[k.FACES_AT]
    nf = c[k.NFACES_]
    shared = c[k.N_] * c[k.N_] < 64  # bitboard queries: one preparation serves every landing
    rb = prepare_regions(c)
    memo[:] = np.nan
    best = -1e300
    chosen = 0
    for r in range(3):
        total = 0.0
        for f in range(nf):
            weight = face_weight(c, f)
            if weight == 0:
                continue
            for a in range(c.shape[0]):
                e[a] = c[a]
            k.k_apply(e, r - 1)
            k.k_apply(e, e[faces + f])
            draw_first_colour(e)
            if e[k.PHASE_] != k.PHASE_PLACE:
                total += weight * MODEL_OUT
                continue
            count = k.legal_placements(e, options)
            here = rb if shared else prepare_regions(e)
            total += weight * greedy_best_score(e, greedy, options, count, here, memo)
        value = scores[r] + look[0] * total
        if value > best:
            best = value
            chosen = r
    return chosen - 1


@njit(cache=True, _nrt=False)
def cached_rotation(c, greedy, options, e, scores, memo, seen, turned, look):
    """model_rotation(c, ...), remembered: seen[i] holds a state the model turned in and
    turned[i] its rotation (turned[-1]: the slot written next). A search meets the same
    state at the other seat's rotation many times (a decision's options expand every
    face of a roll that comes after it, and every colour of a draw before it), and the
    model's answer depends on the state alone (greedy and look are fixed in a search):
    the same rotations, computed once."""
    n = c.shape[0]
    for i in range(seen.shape[0]):
        if turned[i] < -1:
            continue  # an empty slot
        same = True
        for a in range(n):
            if seen[i, a] != c[a]:
                same = False
                break
        if same:
            return turned[i]
    r = model_rotation(c, greedy, options, e, scores, memo, look)
    slot = turned[-1]
    for a in range(n):
        seen[slot, a] = c[a]
    turned[slot] = r
    turned[-1] = (slot + 1) % seen.shape[0]
    return r


@njit(cache=True, _nrt=False)
def modelled_decision(c, me, greedy, model, none):
    """Apply the play-outs' decision at c's orient or place phase: the searching seat `me`
    turns Assam as greedy, the others as model_rotation (cached_rotation); every seat
    places as greedy. model: as play_out's; none: an empty uint64 array (greedy's ties:
    first best)."""
    options, e, scores, memo, seen, turned, look = model
    if c[k.PHASE_] == k.PHASE_ORIENT and c[k.SEAT_] == me:
        k.k_apply(c, greedy_rotation(c, greedy, none))
    elif c[k.PHASE_] == k.PHASE_ORIENT:
        k.k_apply(c, cached_rotation(c, greedy, options, e, scores, memo, seen, turned, look))
    else:
        count = k.legal_placements(c, options)
        k.k_apply(c, options[greedy_placement(c, greedy, none, options, count)])


@njit(cache=True, _nrt=False)
def play_out(c, stream, first_face, first_colour, horizon, start, me, greedy, model):
    """Play c on in place until turn start + horizon or the end: every seat places as
    greedy, the searching seat `me` turns Assam as greedy and the others as
    model_rotation; rolls and rug draws from `stream`, except the first roll, which is
    die face index first_face, and the first draw, colour first_colour, when >= 0.
    model: (options, state, scores, memo, seen, turned, look), model_rotation's buffers
    and its cache (cached_rotation)."""
    faces = c[k.FACES_AT]
    nf = c[k.NFACES_]
    none = stream[0:0]
    first = drawn = True
    while c[k.PHASE_] != k.PHASE_OVER and c[k.TURN_] - start < horizon:
        phase = c[k.PHASE_]
        if phase == k.PHASE_ROLL:
            i = first_face if first and first_face >= 0 else rng_below(stream, nf)
            first = False
            k.k_apply(c, c[faces + i])
        elif phase == k.PHASE_DRAW:
            colour = first_colour if drawn and first_colour >= 0 else draw_colour(c, stream)
            drawn = False
            k.k_apply(c, colour)
        else:
            modelled_decision(c, me, greedy, model, none)


@njit(cache=True, _nrt=False)
def shared_first_turn(c, first_face, me, greedy, model, none):
    """Play c on in place to the end of its running turn, the roll being die face index
    first_face, as play_out plays it; returns the number of rugs the turn's rug draw was
    among (0: no draw), or -1 when the turn is not the same in every sample (it draws
    among two colours or more, or it does not roll). A turn that draws among one colour
    only consumes one draw of a sample's stream (draw_colour) and lands on that colour
    whatever the draw: every sample of sampled_total plays it alike. none: an empty
    uint64 array (greedy's ties: first best)."""
    turn = c[k.TURN_]
    drawn_among = 0
    rolled = False
    while c[k.PHASE_] != k.PHASE_OVER and c[k.TURN_] == turn:
        phase = c[k.PHASE_]
        if phase == k.PHASE_ROLL:
            if rolled or first_face < 0:
                return -1
            rolled = True
            k.k_apply(c, c[c[k.FACES_AT] + first_face])
        elif phase == k.PHASE_DRAW:
            left = c[k.RUGS_LEFT_AT]
            only = -1
            for colour in range(c[k.SEAT_], c[k.P_] * c[k.C_], c[k.P_]):
                if c[left + colour] > 0:
                    if only >= 0:
                        return -1  # a real draw: each sample its own colour
                    only = colour
            drawn_among = k.seat_rugs_left(c, c[k.SEAT_])
            k.k_apply(c, only)
        else:
            modelled_decision(c, me, greedy, model, none)
    return drawn_among if rolled else -1


@njit(cache=True)
def work_buffers(s):
    """The buffers of a search in s (sampled_total's `work`): options, values, result,
    stream, mixer, feats, and model_rotation's state, rotation scores, memo, the cache
    of its answers (cached_rotation: MODEL_CACHE states, their rotations and the next
    slot), a state (the shared first turn) and look (model_rotation's weight,
    MODEL_LOOKAHEAD until set)."""
    turned = np.full(MODEL_CACHE + 1, -2, np.int64)
    turned[-1] = 0
    p = s[k.P_]
    return (
        np.empty(16, np.int64),
        np.empty(p),
        np.empty(4 * p + 1, np.int64),
        np.empty(1, np.uint64),
        np.empty(1, np.uint64),
        np.zeros((p, len(LEAF_FEATURES))),
        np.empty_like(s),
        np.empty(3),
        np.empty(2 * s[k.N_] * s[k.N_]),
        np.empty((MODEL_CACHE, s.shape[0]), np.int64),
        turned,
        np.empty_like(s),
        np.full(1, MODEL_LOOKAHEAD),
    )


@njit(cache=True, _nrt=False)
def sampled_total(c, d, seed, samples, first_face, horizon, start, me, weights, greedy, work):
    """The sum of leaf_value for `me` over `samples` sampled chance sequences of playing
    on from c (not changed; d: a state buffer) to turn start + horizon; the first roll is
    face index first_face when >= 0. work: work_buffers.

    When the running turn is the same in every sample (its roll is first_face, its rug
    draw among one colour: shared_first_turn), it is played once and each sample goes on
    from its end, its stream advanced past that draw: the same games, a turn fewer each.
    """
    options, values, result, stream, mixer, feats, state, scores, memo, seen, turned = work[:11]
    first, look = work[11], work[12]
    model = (options, state, scores, memo, seen, turned, look)
    shared = -1
    no_face = np.int64(-1)  # not the constant -1: see expert_values_with
    if samples > 1 and first_face >= 0 and c[k.TURN_] + 1 - start <= horizon:
        for a in range(c.shape[0]):
            first[a] = c[a]
        shared = shared_first_turn(first, first_face, me, greedy, model, stream[0:0])
    total = 0.0
    for j in range(samples):
        # sample j's chance sequence: the same for every option (common random numbers)
        mixer[0] = seed ^ (uint64(j + 1) * _SAMPLE_MIX)
        stream[0] = rng_next(mixer)
        if shared >= 0:
            for a in range(c.shape[0]):
                d[a] = first[a]
            if shared > 0:
                rng_below(stream, shared)  # the draw the shared turn made
            play_out(d, stream, no_face, no_face, horizon, start, me, greedy, model)
        else:
            for a in range(c.shape[0]):
                d[a] = c[a]
            play_out(d, stream, first_face, no_face, horizon, start, me, greedy, model)
        total += leaf_value(d, me, greedy, values, result, stream[0:0], weights, feats)
    return total


@njit(cache=True, _nrt=False)
def round_outcomes(c, first_face):
    """The chance outcomes of exact_total from c: the colours the drawing seat may draw
    (1 when c is not at a draw) times the die's distinct faces (1 when first_face >= 0)."""
    colours = 1
    if c[k.PHASE_] == k.PHASE_DRAW:
        colours = 0
        for colour in range(c[k.SEAT_], c[k.P_] * c[k.C_], c[k.P_]):
            colours += c[c[k.RUGS_LEFT_AT] + colour] > 0
    faces = 1
    if first_face < 0:
        faces = 0
        for f in range(c[k.NFACES_]):
            faces += face_weight(c, f) > 0
    return colours * faces


@njit(cache=True, _nrt=False)
def exact_total(c, d, seed, first_face, horizon, start, me, weights, greedy, work):
    """The expected leaf_value for `me` of playing on from c (not changed; d: a state
    buffer) to turn start + horizon, when the only chance on the way is one rug draw
    and one roll (2 players, one round): every colour the drawing seat may draw, by its
    rugs of that colour left, times every face of the die (or face index first_face
    when >= 0), by its count (RULES.md section 1). A further draw or roll, which one
    round with 2 players does not hold, would be sampled from the decision's seed."""
    options, values, result, stream, mixer, feats, state, scores, memo, seen, turned = work[:11]
    model = (options, state, scores, memo, seen, turned, work[12])
    nf = c[k.NFACES_]
    left = c[k.RUGS_LEFT_AT]
    seat = c[k.SEAT_]
    draws = c[k.PHASE_] == k.PHASE_DRAW
    end = c[k.P_] * c[k.C_] if draws else seat + 1  # the drawing seat's colours, or one pass
    total = 0.0
    for colour in range(seat, end, c[k.P_]):
        chance = c[left + colour] if draws else 1
        if chance == 0:
            continue
        for f in range(nf):
            weight = 1 if f == first_face else (face_weight(c, f) if first_face < 0 else 0)
            if weight == 0:
                continue
            for a in range(c.shape[0]):
                d[a] = c[a]
            mixer[0] = seed ^ _SAMPLE_MIX
            stream[0] = rng_next(mixer)
            drawn = np.int64(colour) if draws else np.int64(-1)
            play_out(d, stream, np.int64(f), drawn, horizon, start, me, greedy, model)
            value = leaf_value(d, me, greedy, values, result, stream[0:0], weights, feats)
            total += chance * weight * value
    faces = 1 if first_face >= 0 else nf
    return total / (faces * (k.seat_rugs_left(c, seat) if draws else 1))


@njit(cache=True, _nrt=False)
def mean_value(c, d, seed, budget, first_face, horizon, start, me, weights, greedy, work):
    """The mean leaf_value for `me` of the position c reached at turn start + horizon
    (sampled_total over `budget` chance sequences). From budget 2 on (horizon past the
    turn), budget 1's value, the turn finished, counts as one more sample: the sampled
    play-outs model every seat's placements by greedy's one-move look, and this term
    keeps a small budget from playing worse than budget 1 (docs/STRATEGIES.md). With 2
    players one round holds one rug draw and one roll: where their outcomes are no more
    than the budget (all 8 from budget 8; the 2 draws of a placement's round, its roll
    expanded, from budget 2), exact_total takes their expectation instead, exact and no
    dearer than the samples. Not recursive: numba cannot load a cached recursive
    kernel."""
    values, result, stream, feats = work[1], work[2], work[3], work[5]
    if c[k.PHASE_] == k.PHASE_OVER or c[k.TURN_] - start >= horizon:
        return leaf_value(c, me, greedy, values, result, stream[0:0], weights, feats)
    if c[k.P_] == 2 and horizon == HORIZON_ROUNDS * 2 and round_outcomes(c, first_face) <= budget:
        return exact_total(c, d, seed, first_face, horizon, start, me, weights, greedy, work)
    total = sampled_total(c, d, seed, budget, first_face, horizon, start, me, weights, greedy, work)
    if horizon == 1:
        return total / budget
    one = np.int64(1)  # not the constant 1: see expert_values_with
    total += sampled_total(c, d, seed, one, first_face, one, start, me, weights, greedy, work)
    return total / (budget + 1)


@njit(cache=True, _nrt=False)
def schedule(s, budget):
    """The horizon in turns of a search in s at `budget`: budget 1 values the position
    right after the turn (nothing left to sample); larger budgets play on HORIZON_ROUNDS
    rounds (every seat's turn once) and sample their chance, or to the end of the game
    when at most ENDGAME_ROUNDS rounds of rugs are left (each turn places one rug)."""
    if budget == 1:
        return 1
    p = s[k.P_]
    return TO_THE_END if rugs_left_in_game(s) <= ENDGAME_ROUNDS * p else HORIZON_ROUNDS * p


#: LEAF_WEIGHTS as an array (a compile-time constant of the kernels)
_LEAF_WEIGHTS = np.array(LEAF_WEIGHTS, np.float64)


@njit(cache=True, _nrt=False)
def keep_best(pre, count, width, keep):
    """keep[i] = 1 for the `width` options of pre[:count] with the highest values (the
    first of equal values first), 0 for the others; all of them when width is 0 or at
    least count."""
    for i in range(count):
        keep[i] = 1 if width == 0 or width >= count else 0
    if width == 0 or width >= count:
        return
    for _ in range(width):
        best = -1e300
        chosen = 0
        for i in range(count):
            if keep[i] == 0 and pre[i] > best:
                best = pre[i]
                chosen = i
        keep[chosen] = 1


@njit(cache=True, _nrt=True)
def expert_values(s, budget, rng, values, look, width):
    """values[i] = the value of option i of the decision in s (rotations -1, 0, 1, or the
    legal placements in legal_placements order); returns the number of options: the
    search of expert_values_with, with the fitted LEAF_WEIGHTS of the player count."""
    row = min(s[k.P_], 1 + _LEAF_WEIGHTS.shape[0]) - 2
    return expert_values_with(s, budget, rng, values, _LEAF_WEIGHTS[row], look, width)


@njit(cache=True, _nrt=True)
def expert_values_with(s, budget, rng, values, weights, look, width):
    """values[i] = the value of option i of the decision in s (rotations -1, 0, 1, or the
    legal placements in legal_placements order), leaves valued with `weights`, the other
    seats' rotations in the play-outs modelled with weight `look` (model_rotation);
    returns the number of options.

    The first roll after the option is expanded over the die's distinct faces (weighted
    by their counts); when the option is the mover's own rotation, the mover's
    placement after each roll is the best of its placements (each valued by mean_value),
    else the position after the roll is valued by mean_value (horizon: `schedule`).
    With `width` >= 1 and play-outs (budget >= 2), a rotation's best placement after
    each roll is the best by mean_value of only the `width` placements best by budget
    1's value (the finished turn, valued by leaf_value; first best first): the others
    are not played on. width 0: all. A placement decision's own options are all played
    on (pruning them by budget 1's value lost about 3 points against greedy:
    docs/STRATEGIES.md).
    Draws once from `rng`; s is not changed (NRT on: it allocates its buffers, and is
    called from kernels without it).
    """
    horizon = schedule(s, budget)
    if horizon == TO_THE_END:
        budget *= ENDGAME_SAMPLES  # finished games are worth 0 or 1: noisier leaves
    me = s[k.SEAT_]
    nf = s[k.NFACES_]
    faces = s[k.FACES_AT]
    start = s[k.TURN_]
    greedy = rollout_greedy()
    options = np.empty(16, np.int64)
    mine = np.empty(16, np.int64)
    work = work_buffers(s)
    work[-1][0] = look
    orient = s[k.PHASE_] == k.PHASE_ORIENT
    if orient:
        count = 3
        for r in range(3):
            options[r] = r - 1
        nested = k_next_walker(s) == me  # the mover walks (standard order)
    else:
        count = k.legal_placements(s, options)
        nested = False
    seed = rng_next(rng)
    c = np.empty_like(s)
    d = np.empty_like(s)
    e = np.empty_like(s)
    pruning = width > 0 and budget >= 2
    pre = np.empty(16)
    keep = np.ones(16, np.int64)
    # int64 values, not constants: numba compiles a kernel once per argument types, and a
    # constant (-1, 1) is a type of its own: each would compile mean_value's tree again
    one, no_face = np.int64(1), np.int64(-1)
    for i in range(count):
        values[i] = 0.0
        for f in range(nf):
            weight = face_weight(s, f)  # the first roll: each distinct face once
            if weight == 0:
                continue
            for a in range(s.shape[0]):
                c[a] = s[a]
            k.k_apply(c, options[i])
            if not nested:
                values[i] += weight * mean_value(
                    c, d, seed, budget, np.int64(f), horizon, start, me, weights, greedy, work
                )
                continue
            k.k_apply(c, s[faces + f])
            if c[k.PHASE_] != k.PHASE_PLACE:  # bankrupt, or the game is over
                values[i] += weight * mean_value(
                    c, d, seed, budget, no_face, horizon, start, me, weights, greedy, work
                )
                continue
            best = -1e18
            placements = k.legal_placements(c, mine)
            if pruning:
                for q in range(placements):
                    for a in range(c.shape[0]):
                        e[a] = c[a]
                    k.k_apply(e, mine[q])
                    pre[q] = mean_value(
                        e, d, seed, one, no_face, one, start, me, weights, greedy, work
                    )
                keep_best(pre, placements, width, keep)
            for q in range(placements):
                if keep[q] == 0:
                    continue
                for a in range(c.shape[0]):
                    e[a] = c[a]
                k.k_apply(e, mine[q])
                v = mean_value(
                    e, d, seed, budget, no_face, horizon, start, me, weights, greedy, work
                )
                best = max(best, v)
            values[i] += weight * best
        values[i] /= nf
    return count


# ---------------------------------------------------------------- the decisions and the memory


@njit(cache=True)
def memory_size(s):
    """The length of the expert's memory of a game in s (M_STATE + the state)."""
    return M_STATE + s.shape[0]


@njit(cache=True, _nrt=True)
def other_turned_as_greedy(s, memory):
    """Whether the other seat (2 players), in the turn before this one of mine, turned
    Assam as greedy would: of the rotations that, with some face of the die, take him
    from where my last placement left him to where he stands now, 1 when one is among
    greedy's best rotations there, 0 when none is; -1 when it cannot be told (no
    placement of mine stored, or that rotation did not set the mover's own walk)."""
    if memory[M_FLAGS] & PLACED == 0:
        return -1
    # the other seat's turn starts; as int32, the state's own type (one compiled k_apply)
    c = memory[M_STATE:].astype(np.int32)
    draw_first_colour(c)  # its rug's colour moves neither Assam nor dirhams
    if c[k.PHASE_] != k.PHASE_ORIENT or k_next_walker(c) != c[k.SEAT_]:
        return -1
    scores = np.empty(3)
    greedy_rotation_scores(c, rollout_greedy(), scores)
    top = scores.max()
    seen = False
    e = np.empty_like(c)
    for r in range(3):
        for f in range(c[k.NFACES_]):
            e[:] = c
            k.k_apply(e, r - 1)
            k.k_apply(e, c[c[k.FACES_AT] + f])
            if e[k.X_] == s[k.X_] and e[k.Y_] == s[k.Y_] and e[k.FACING_] == s[k.FACING_]:
                if scores[r] == top:
                    return 1
                seen = True
    return 0 if seen else -1


@njit(cache=True)
def remembers(s, budget):
    """Whether the expert keeps its memory of the game: with 2 players, where the other
    seat's turns are seen one by one, and from budget 2 (budget 1 has no play-outs)."""
    return s[k.P_] == 2 and budget >= 2


@njit(cache=True)
def lookahead(s, budget, memory, look):
    """model_rotation's weight for the other seats: the expert's `look` (MODEL_LOOKAHEAD
    by default), but GREEDY_LOOKAHEAD while the expert remembers and has not seen the
    other seat turn Assam otherwise than greedy (a player not seen to differ from greedy
    is modelled as greedy); look 0 (every other seat turns as greedy) stays 0."""
    if look != 0.0 and remembers(s, budget) and memory[M_FLAGS] & NOT_GREEDY == 0:
        return GREEDY_LOOKAHEAD
    return look


@njit(cache=True, _nrt=True)
def expert_rotation(s, budget, width, look, rng, memory):
    """The expert's rotation (-1, 0 or 1) in s at `budget`, `width` and `look`
    (expert_values, lookahead); memory: its memory of the game (memory_size(s), zero at
    the game's start), read and updated."""
    if remembers(s, budget):
        if other_turned_as_greedy(s, memory) == 0:
            memory[M_FLAGS] |= NOT_GREEDY
        memory[M_FLAGS] &= ~PLACED
    values = np.empty(16)
    count = expert_values(s, budget, rng, values, lookahead(s, budget, memory, look), width)
    return pick_best(values, count, rng) - 1


@njit(cache=True, _nrt=True)
def expert_placement(s, budget, width, look, rng, memory):
    """The expert's placement as an index into legal_placements order; memory as in
    expert_rotation (where it remembers: the state after the placement chosen)."""
    values = np.empty(16)
    count = expert_values(s, budget, rng, values, lookahead(s, budget, memory, look), width)
    chosen = pick_best(values, count, rng)
    if remembers(s, budget):
        options = np.empty(16, np.int64)
        k.legal_placements(s, options)
        after = s.copy()  # applied in the state's own type (one compiled k_apply)
        k.k_apply(after, options[chosen])
        memory[M_STATE:] = after
        memory[M_FLAGS] |= PLACED
    return chosen


@njit(cache=True, _nrt=True)
def well_rotation(s, budget, rng, memory):
    """The restricted players' well-chosen rotation: greedy's (default weights, ties by
    a draw) with budget 0, else the expert's at that budget."""
    if budget == 0:
        return greedy_rotation(s, rollout_greedy(), rng)
    return expert_rotation(s, budget, np.int64(0), MODEL_LOOKAHEAD, rng, memory)


@njit(cache=True, _nrt=True)
def well_placement(s, budget, rng, options, count, memory):
    """The restricted players' well-chosen placement (an index into options[:count], in
    legal_placements order): greedy's with budget 0, else the expert's."""
    if budget == 0:
        return greedy_placement(s, rollout_greedy(), rng, options, count)
    return expert_placement(s, budget, np.int64(0), MODEL_LOOKAHEAD, rng, memory)


# ---------------------------------------------------------------- the twins' kernels
#
# The compiled twins' entry points in the form every twin's kernels take
# (play.strategy.CompiledTwin; parameter vectors in the order the classes below declare):
# inlined into the compiled loop, where they call the search (not inlined: it allocates,
# so it is compiled with numba's runtime on; see marrakech_sim.rules.core on `_nrt`).


@njit(cache=True, inline="always")
def expert_twin_rotation(s, params, rng, memory):
    """ExpertStrategy.choose_rotation at budget params[0], width params[1], look params[2]."""
    return expert_rotation(s, int(params[0]), int(params[1]), params[2], rng, memory)


@njit(cache=True, inline="always")
def expert_twin_placement(s, params, rng, options, count, memory):
    """ExpertStrategy.choose_placement at budget params[0], width params[1], look params[2]."""
    return expert_placement(s, int(params[0]), int(params[1]), params[2], rng, memory)


@njit(cache=True, inline="always")
def well_twin_rotation(s, params, rng, memory):
    """RotationOnlyStrategy.choose_rotation at budget params[0]."""
    return well_rotation(s, int(params[0]), rng, memory)


@njit(cache=True, inline="always")
def well_twin_placement(s, params, rng, options, count, memory):
    """PlacementOnlyStrategy.choose_placement at budget params[0]."""
    return well_placement(s, int(params[0]), rng, options, count, memory)


# ---------------------------------------------------------------- the Python forms


def _compile(kernels: tuple[Any, ...], *args: Any) -> None:
    """Compile (or load from the cache) each kernel for these arguments' types, without
    running it: called from on_game_start, which has no time budget, so that a cold
    cache's compilation is not charged to the first timed decision (check-strategy's
    5 s budget would interrupt it, again at every decision)."""
    signature = tuple(typeof(a) for a in args)
    for kernel in kernels:
        kernel.compile(signature)


def check_budget(name: str, budget: Any, low: int) -> int:
    """`budget` as an int from `low` to MAX_BUDGET, or a ConfigError naming it."""
    if isinstance(budget, bool) or not isinstance(budget, int) or not low <= budget <= MAX_BUDGET:
        raise ConfigError(
            f"{name}: budget {budget!r} is not allowed; it is an integer from {low} "
            f"to {MAX_BUDGET} (samples per option and decision)"
        )
    return budget


def check_width(name: str, width: Any) -> int:
    """`width` as an int from 0 to MAX_WIDTH (0: every placement is played on), or a
    ConfigError naming it."""
    if isinstance(width, bool) or not isinstance(width, int) or not 0 <= width <= MAX_WIDTH:
        raise ConfigError(
            f"{name}: width {width!r} is not allowed; it is an integer from 0 (every "
            f"placement played on) to {MAX_WIDTH} (own placements played on after each roll)"
        )
    return width


def check_look(name: str, look: Any) -> float:
    """`look` as a float from 0 to 1 (the play-outs' model of the other seats' rotations:
    greedy's score + look x the best placement score of each face; 0: greedy's rotation),
    or a ConfigError naming it."""
    if isinstance(look, bool) or not isinstance(look, int | float) or not 0 <= look <= 1:
        raise ConfigError(
            f"{name}: look {look!r} is not allowed; it is a number from 0 (the other seats "
            f"turn Assam as greedy in the play-outs) to 1 (default {MODEL_LOOKAHEAD})"
        )
    return float(look)


class _Remembering(BaseStrategy):
    """A player that keeps the expert's memory of a game (expert_rotation's `memory`):
    fresh at each game's start, or when a decision comes from a game it does not fit."""

    _budget: int  # set by each player

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._memory = np.zeros(0, np.int64)

    def on_game_start(self, view: GameView) -> None:
        self._memory = np.zeros(memory_size(view.packed), np.int64)

    def memory(self, view: GameView) -> np.ndarray:
        """The memory of the game in `view`, read and updated by the kernels."""
        size = memory_size(view.packed)
        if len(self._memory) != size:  # on_game_start was not called for this game
            self._memory = np.zeros(size, np.int64)
        return self._memory

    def _kernel_args(self, view: GameView) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
        """The decision kernels' first arguments: a copy of the position, the budget, the
        seat's stream and the memory of the game."""
        memory = self.memory(view)
        return view.packed.copy(), self._budget, view.rng.state, memory


class ExpertStrategy(_Remembering):
    """Expert: greedy roll-outs over `budget` sampled chance sequences per option.

    Larger budgets play no worse and cost more (see docs/STRATEGIES.md, the skill
    ladder). With 2 players it remembers the game (how the other seat turns Assam).
    Compiled twin: `COMPILED` (code 2).
    """

    PARAMETERS: ClassVar[Mapping[str, Any]] = {
        "budget": DEFAULT_BUDGET,  # chance sequences sampled per option and decision
        "width": 0,  # own placements played on after each roll of a rotation (0: all)
        "look": MODEL_LOOKAHEAD,  # the play-outs' model of the others' rotations (0: greedy)
    }
    COMPILED: ClassVar[CompiledTwin | None] = CompiledTwin(
        "expert",
        code=2,
        rotation=expert_twin_rotation,
        placement=expert_twin_placement,
        params=("budget", "width", "look"),
        memory=memory_size,
        searches=True,
    )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._budget = check_budget("expert", self.params["budget"], 1)
        self._width = check_width("expert", self.params["width"])
        self._look = check_look("expert", self.params["look"])

    def on_game_start(self, view: GameView) -> None:
        super().on_game_start(view)
        s, state, width, look = view.packed.copy(), view.rng.state, self._width, self._look
        kernels = (expert_rotation, expert_placement)
        _compile(kernels, s, self._budget, width, look, state, self._memory)

    @property
    def other_seems_greedy(self) -> bool:
        """Whether, in its game so far, every rotation the other seat was seen to make
        was one of greedy's best (seen with 2 players from budget 2; its rotations are
        then modelled as greedy's)."""
        return len(self._memory) == 0 or not self._memory[M_FLAGS] & NOT_GREEDY

    def choose_rotation(self, view: GameView) -> int:
        s, budget, rng, memory = self._kernel_args(view)
        return int(expert_rotation(s, budget, self._width, self._look, rng, memory))

    def choose_placement(self, view: GameView, options: tuple[Placement, ...]) -> Placement:
        s, budget, rng, memory = self._kernel_args(view)
        return options[int(expert_placement(s, budget, self._width, self._look, rng, memory))]


class _Restricted(_Remembering):
    """Shared by the restricted players: budget 0 decides as greedy, >= 1 as expert."""

    NAME: ClassVar[str] = "restricted"
    PARAMETERS: ClassVar[Mapping[str, Any]] = {
        "budget": 0,  # the well-played decision: 0 as greedy, B >= 1 as expert at budget B
    }

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._budget = check_budget(self.NAME, self.params["budget"], 0)
        self._codes = np.empty(16, np.int64)

    def on_game_start(self, view: GameView) -> None:
        super().on_game_start(view)
        s, state, memory = view.packed.copy(), view.rng.state, self._memory
        _compile((well_rotation,), s, self._budget, state, memory)
        _compile((well_placement,), s, self._budget, state, self._codes, 16, memory)

    def _rotation(self, view: GameView) -> int:
        return int(well_rotation(*self._kernel_args(view)))

    def _placement(self, view: GameView, options: tuple[Placement, ...]) -> Placement:
        s, budget, rng, memory = self._kernel_args(view)
        count = k.legal_placements(s, self._codes)
        return options[int(well_placement(s, budget, rng, self._codes, count, memory))]


class RotationOnlyStrategy(_Restricted):
    """Turns Assam well (greedy, or expert at `budget`); places uniformly at random."""

    NAME: ClassVar[str] = "rotation-only"
    COMPILED: ClassVar[CompiledTwin | None] = CompiledTwin(
        "rotation-only",
        code=3,
        rotation=well_twin_rotation,
        placement=random_placement,  # exactly choose_placement's draw
        params=("budget",),
        memory=memory_size,
        searches=True,
    )

    def choose_rotation(self, view: GameView) -> int:
        return self._rotation(view)

    def choose_placement(self, view: GameView, options: tuple[Placement, ...]) -> Placement:
        return options[view.rng.below(len(options))]


class PlacementOnlyStrategy(_Restricted):
    """Turns Assam uniformly at random; places well (greedy, or expert at `budget`)."""

    NAME: ClassVar[str] = "placement-only"
    COMPILED: ClassVar[CompiledTwin | None] = CompiledTwin(
        "placement-only",
        code=4,
        rotation=random_rotation,  # exactly choose_rotation's draw
        placement=well_twin_placement,
        params=("budget",),
        memory=memory_size,
        searches=True,
    )

    def choose_rotation(self, view: GameView) -> int:
        return view.rng.below(3) - 1

    def choose_placement(self, view: GameView, options: tuple[Placement, ...]) -> Placement:
        return self._placement(view, options)
