"""Compiled pieces the built-in strategies share: greedy scores, evaluation, rollouts.

The greedy scores and choices here are greedy's one implementation: the Python form
(`marrakech_sim.strategies.greedy`) calls them, and so does its compiled twin
(`greedy_twin_rotation`, `greedy_twin_placement`), so both decide exactly the same.
`pick_best` is the one tie rule of the built-ins. The search strategies
(`marrakech_sim.strategies.search`) use the greedy choice as their model of the other players.

Greedy parameter vector (`GREEDY_PARAMETERS` order): area, cover, block, waste, ruin.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from marrakech_sim.play.rng import rng_below
from marrakech_sim.rules import core as k
from marrakech_sim.rules.queries import (
    k_next_walker,
    placement_features,
    placing_mask,
    prepare_regions,
    rotation_totals,
)

GREEDY_PARAMETERS = ("area", "cover", "block", "waste", "ruin")
G_AREA, G_COVER, G_BLOCK, G_WASTE, G_RUIN = range(5)


# ---------------------------------------------------------------- greedy scores
#
# Speed: the greedy decisions run inside the compiled game loop, which is compiled
# without numba's runtime (see marrakech_sim.rules.core). They allocate nothing (scores
# are scalars, ties a bit mask), so they are `_nrt=False` too; each prepares its region
# queries once (marrakech_sim.rules.queries.prepare_regions) and scores with inlined helpers.


@njit(cache=True, inline="always")
def _rotation_score(s, r, me, walker, ruin, rb):
    """The greedy score of rotation r - 1 (see greedy_rotation_scores; rb: prepare_regions).

    One call of the inlined rotation_totals (not one per branch): each inlined copy costs
    seconds of compile time on a fresh installation."""
    mover = walker == me or walker < 0
    payer = me if mover else walker
    payee = -1 if mover else me
    due, paid, bankrupt = rotation_totals(s, r, payer, payee, rb)
    if mover:
        return -(due + ruin * bankrupt)
    return paid + ruin * bankrupt


@njit(cache=True, _nrt=False)
def greedy_rotation_scores(s, params, out):
    """out[r + 1] = the greedy score of rotation r (higher is better).

    Standard order (the mover walks): -(total due over the die's faces + ruin * faces
    that bankrupt the mover). Variant "orient at end" (the next player walks): total
    the next player would pay the mover (capped at what they have) + ruin * faces that
    bankrupt them paying the mover.
    """
    me = s[k.SEAT_]
    walker = k_next_walker(s)
    rb = prepare_regions(s)
    for r in range(3):
        out[r] = _rotation_score(s, r, me, walker, params[G_RUIN], rb)


@njit(cache=True, inline="always")
def _placement_score(s, params, code, rb, own, stamp):
    """The greedy score of placing on `code` (see greedy_placement_scores)."""
    region, opponent, mine, largest, _ = placement_features(s, code, rb, own, stamp)
    return (
        params[G_AREA] * region
        + params[G_COVER] * opponent
        + params[G_BLOCK] * largest
        - params[G_WASTE] * mine
    )


@njit(cache=True, _nrt=False)
def greedy_placement_scores(s, params, options, count, out):
    """out[i] = area * own region after + cover * opponent halves covered
    + block * largest opponent region covered into - waste * own halves covered."""
    rb = prepare_regions(s)
    own = placing_mask(s, rb)
    for i in range(count):
        out[i] = _placement_score(s, params, options[i], rb, own, i + 1)


@njit(cache=True, _nrt=False)
def greedy_best_score(s, params, options, count, rb, memo):
    """max(greedy_placement_scores) over options[:count] (count >= 1), with the region
    queries already prepared: rb = prepare_regions of a position with the same rugs on
    the board (a model that scores several landings of one board prepares it once).

    memo: float64[2 x squares], each placement's score by its first square and its
    direction, NaN where not scored yet. A score does not depend on where Assam stands,
    so a caller scoring several landings of one board and one rug to place keeps the memo
    between them, and each placement they share is scored once.
    """
    own = placing_mask(s, rb)
    n = s[k.N_]
    best = -np.inf
    for i in range(count):
        x1, y1, x2, y2 = k.unpack_placement(options[i])
        key = 2 * min(y1 * n + x1, y2 * n + x2) + (x1 == x2)
        if np.isnan(memo[key]):
            memo[key] = _placement_score(s, params, options[i], rb, own, i + 1)
        best = max(best, memo[key])
    return best


@njit(cache=True, inline="always")
def _tie(best, ties, mask, i, score):
    """One step of pick_best's scan: (best, ties, bit mask of the tied indices) after
    the score of index i."""
    if score > best:
        return score, 1, 1 << i
    if score == best:
        return best, ties + 1, mask | (1 << i)
    return best, ties, mask


@njit(cache=True, inline="always")
def _pick_tied(ties, mask, rng):
    """The index picked among the `ties` tied ones in `mask`: the lowest, or with a
    non-empty rng and several tied, the one chosen by one draw."""
    if ties > 1 and rng.shape[0] > 0:
        for _ in range(rng_below(rng, ties)):
            mask &= mask - 1  # drop the lowest
    i = 0
    while not (mask >> i) & 1:
        i += 1
    return i


@njit(cache=True, _nrt=False)
def pick_best(scores, count, rng):
    """Index of the best of scores[:count] (count <= 63); ties by one draw from `rng`
    (only if tied).

    With rng of length 0 the first best is taken (the search strategies' opponent model).
    """
    best, ties, mask = scores[0], 1, 1
    for i in range(1, count):
        best, ties, mask = _tie(best, ties, mask, i, scores[i])
    return _pick_tied(ties, mask, rng)


@njit(cache=True, _nrt=False)
def greedy_rotation(s, params, rng):
    """The greedy rotation (-1, 0 or 1): pick_best of greedy_rotation_scores.

    The inlined scoring is called at one place, in the loop (each inlined copy costs
    seconds of compile time on a fresh installation)."""
    me = s[k.SEAT_]
    walker = k_next_walker(s)
    ruin = params[G_RUIN]
    rb = prepare_regions(s)
    best, ties, mask = 0.0, 0, 0
    for r in range(3):
        score = _rotation_score(s, r, me, walker, ruin, rb)
        if r == 0:
            best, ties, mask = score, 1, 1
        else:
            best, ties, mask = _tie(best, ties, mask, r, score)
    return _pick_tied(ties, mask, rng) - 1


@njit(cache=True, _nrt=False)
def greedy_placement(s, params, rng, options, count):
    """Index into options[:count] of the greedy placement: pick_best of
    greedy_placement_scores. The inlined scoring is called at one place (see
    greedy_rotation); options[0] is scored even with count 0."""
    rb = prepare_regions(s)
    own = placing_mask(s, rb)
    best, ties, mask = 0.0, 0, 0
    for i in range(max(count, 1)):
        score = _placement_score(s, params, options[i], rb, own, i + 1)
        if i == 0:
            best, ties, mask = score, 1, 1
        else:
            best, ties, mask = _tie(best, ties, mask, i, score)
    return _pick_tied(ties, mask, rng)


# ---------------------------------------------------------------- twins' kernels
#
# The compiled twins of random and greedy (basic.RandomStrategy, greedy.GreedyStrategy
# declare them) in the form every twin's kernels take (play.strategy.CompiledTwin):
# inlined into the compiled loop, which runs without reference counting.


@njit(cache=True, inline="always")
def random_rotation(s, params, rng, memory):
    """RandomStrategy.choose_rotation: each rotation with probability 1/3."""
    return rng_below(rng, 3) - 1


@njit(cache=True, inline="always")
def random_placement(s, params, rng, options, count, memory):
    """RandomStrategy.choose_placement: each of the `count` options with probability 1/count."""
    return rng_below(rng, count)


@njit(cache=True, inline="always")
def greedy_twin_rotation(s, params, rng, memory):
    """GreedyStrategy.choose_rotation with the weights `params` (GREEDY_PARAMETERS order)."""
    return greedy_rotation(s, params, rng)


@njit(cache=True, inline="always")
def greedy_twin_placement(s, params, rng, options, count, memory):
    """GreedyStrategy.choose_placement with the weights `params`."""
    return greedy_placement(s, params, rng, options, count)


# ---------------------------------------------------------------- evaluation


@njit(cache=True)
def seat_values(s, params, out):
    """out[seat] = dirhams + visible_w * visible + region_w * largest own region;
    -1e9 for eliminated seats. params: (visible_w, region_w)."""
    p = s[k.P_]
    n = s[k.N_]
    col = s[k.COLOUR_AT]
    largest = np.zeros(p, np.int64)
    visible = np.zeros(p, np.int64)
    for sq in range(n * n):
        c = s[col + sq]
        if c >= 0:
            o = c % p
            visible[o] += 1
            if params[1] != 0.0:
                size = k.region_size(s, sq)
                if size > largest[o]:
                    largest[o] = size
    for seat in range(p):
        if s[s[k.OUT_AT] + seat] != 0:
            out[seat] = -1e9
        else:
            out[seat] = (
                s[s[k.DIRHAMS_AT] + seat] + params[0] * visible[seat] + params[1] * largest[seat]
            )


@njit(cache=True)
def evaluate(s, me, params):
    """My value minus the best other seat's (RULES.md section 7 score as the base)."""
    p = s[k.P_]
    values = np.empty(p)
    seat_values(s, params, values)
    if values[me] < -1e8:
        return -1e6
    best = -1e9
    for seat in range(p):
        if seat != me and values[seat] > best:
            best = values[seat]
    if best < -1e8:
        return 1e6  # everybody else is out
    return values[me] - best


@njit(cache=True)
def draw_colour(s, rng):
    """A uniform draw among the seat to move's remaining rugs (RULES.md section 1)."""
    seat = s[k.SEAT_]
    left = s[k.RUGS_LEFT_AT]
    r = rng_below(rng, k.seat_rugs_left(s, seat))
    for c in range(seat, s[k.P_] * s[k.C_], s[k.P_]):
        r -= s[left + c]
        if r < 0:
            return c
    return -1


@njit(cache=True)
def win_share(s, me, proxy):
    """My share of the win: the result when the game is over, else the share by
    `proxy` values (seat_values)."""
    p = s[k.P_]
    if s[k.PHASE_] == k.PHASE_OVER:
        res = np.empty(4 * p + 1, np.int64)
        k.k_result(s, res)
        if res[3 * p + me] == 0:
            return 0.0
        winners = 0
        for seat in range(p):
            winners += res[3 * p + seat]
        return 1.0 / winners
    best = -1e18
    for seat in range(p):
        best = max(best, proxy[seat])
    if proxy[me] < best:
        return 0.0
    ties = 0
    for seat in range(p):
        if proxy[seat] == best:
            ties += 1
    return 1.0 / ties


@njit(cache=True)
def rollout(s, me, rng, policy, horizon, greedy, eval_params):
    """Play on from `s` (changed in place) with chance from `rng`; return my win share.

    policy 0: uniformly random decisions; 1: greedy (first best, `greedy` weights).
    horizon > 0 stops after that many turns and scores by seat_values(eval_params).
    """
    start = s[k.TURN_]
    options = np.empty(16, np.int64)
    none = rng[0:0]
    faces = s[k.FACES_AT]
    while s[k.PHASE_] != k.PHASE_OVER:
        if horizon > 0 and s[k.TURN_] - start >= horizon:
            break
        phase = s[k.PHASE_]
        if phase == k.PHASE_ROLL:
            k.k_apply(s, s[faces + rng_below(rng, s[k.NFACES_])])
        elif phase == k.PHASE_DRAW:
            k.k_apply(s, draw_colour(s, rng))
        elif phase == k.PHASE_ORIENT:
            if policy == 1:
                k.k_apply(s, greedy_rotation(s, greedy, none))
            else:
                k.k_apply(s, rng_below(rng, 3) - 1)
        else:
            count = k.legal_placements(s, options)
            if policy == 1:
                k.k_apply(s, options[greedy_placement(s, greedy, none, options, count)])
            else:
                k.k_apply(s, options[rng_below(rng, count)])
    proxy = np.empty(s[k.P_])
    seat_values(s, eval_params, proxy)
    return win_share(s, me, proxy)
