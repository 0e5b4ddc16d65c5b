"""`expert`: a shallow expectimax with greedy roll-outs over sampled dice; one compute
knob, `budget`.

At each decision every option (3 rotations, or each legal placement) is valued:

- The first roll after the option is expanded over the die's distinct faces, weighted
  by their counts (RULES.md section 1: 1, 2, 2, 3, 3, 4).
- When the option is the mover's own rotation (standard turn order), the mover's
  placement after each roll is the best of all its legal placements (the search's
  max node); otherwise the position after the option is played on.
- Playing on: every seat, the expert too, is played by greedy (default weights, first
  best) until one round (every seat's turn) after the decision's turn, `budget` times,
  each time with one sampled chance sequence (later rolls and, with two colours a
  seat, the rug draws). Every option and face meets the same `budget` sequences
  (common random numbers), so their differences are not drowned in dice noise. With
  budget 1 the position right after the turn is valued instead (nothing to sample).
- `leaf_value` values the position reached: each seat's dirhams + visible squares;
  the walk about to happen charged at its expectation (the walker turns Assam as
  greedy would); and the income the seat's regions may still earn: sum(size^2) /
  squares per walk of the others, for every rug they have left, weighted by
  ALPHA / (P - 1)^2. Then my value minus the best other seat's. A finished game: final
  scores plus WIN_BONUS times my win share.

The option with the best value is played; exact ties by one draw of the seat's stream.
Measured choices (horizon, ALPHA, the max node) are in docs/STRATEGIES.md.

Randomness: one draw of the seat's stream seeds a decision's samples, and one more
only when options tie, so the Python form and the compiled twin (`strategies.twins`,
code EXPERT) make the same draws and play the same games.

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
from marrakech_sim.play.strategy import BaseStrategy
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
    greedy_placement,
    greedy_rotation,
    pick_best,
)

#: rounds (turns of every seat) each sample is played on before the position is valued
HORIZON_ROUNDS = 1
#: weight of a region's expected future income in leaf_value with 2 players (schedule)
ALPHA = 0.5
#: expert's default budget
DEFAULT_BUDGET = 8
#: added to a finished game's value per unit of win share (the score difference stays)
WIN_BONUS = 10.0
#: the value of being out of the game (and, negated, of everyone else being out)
OUT_VALUE = 1000.0
#: largest budget: samples per option and decision
MAX_BUDGET = 4096
#: the greedy weights of the roll-outs: GreedyStrategy's defaults, in GREEDY_PARAMETERS order
ROLLOUT_GREEDY = (1.0, 1.0, 0.5, 1.0, 10.0)
#: mixes a decision's seed with the sample number (an odd 64-bit constant)
_SAMPLE_MIX = uint64(0xD1B54A32D192ED03)


# ---------------------------------------------------------------- valuing a position


@njit(cache=True, _nrt=False)
def leaf_value(c, me, greedy, values, result, none, alpha):
    """The value of position c for seat `me` (buffers: values float64[P], result
    int64[4P + 1]; none: an empty uint64 array, greedy's tie-breaking off).

    Finished (RULES.md section 7): my final score minus the best other's, plus
    WIN_BONUS times my win share. Running: each seat's dirhams + visible squares; the
    walk about to happen is charged at its expectation over the die (the walker's
    facing as greedy would turn it, or as set in the variant "orient at end",
    RULES.md section 3), capped at the walker's dirhams on each face; then mine minus
    the best other seat's in the game. Out of the game: -OUT_VALUE; everybody else out:
    +OUT_VALUE.
    """
    p = c[k.P_]
    out_ = c[k.OUT_AT]
    dirhams = c[k.DIRHAMS_AT]
    if c[k.PHASE_] == k.PHASE_OVER:
        k.k_result(c, result)
        if c[out_ + me] != 0:
            return -OUT_VALUE
        winners = 0
        best = -1.0
        for seat in range(p):
            winners += result[3 * p + seat]
            if seat != me and c[out_ + seat] == 0 and result[p + seat] > best:
                best = result[p + seat]
        share = result[3 * p + me] / winners if winners > 0 else 0.0
        if best < 0:
            return OUT_VALUE
        return result[p + me] - best + WIN_BONUS * share
    if c[out_ + me] != 0:
        return -OUT_VALUE
    for seat in range(p):
        values[seat] = c[dirhams + seat] + k.visible_squares(c, seat)
    walker = c[k.SEAT_]
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
            values[walker] -= paid * share
            values[q] += paid * share
    if alpha > 0.0:
        # what each seat's regions may still earn: a walk stopping on a uniformly random
        # square pays the region there, so sum(size^2) / squares per walk of the others
        # (RULES.md section 5), for every rug the others have left, discounted by alpha
        # for the covering and avoiding to come
        k_label_regions(c)
        n = c[k.N_]
        nn = n * n
        col = c[k.COLOUR_AT]
        lab = c[k.SCRATCH_AT]
        left = 0
        for seat in range(p):
            if c[out_ + seat] == 0:
                left += k.seat_rugs_left(c, seat)
        for seat in range(p):
            result[seat] = 0
        for sq in range(nn):
            colour = c[col + sq]
            if colour >= 0 and c[lab + sq] == sq:
                size = c[lab + nn + sq]
                result[colour % p] += size * size
        for seat in range(p):
            if c[out_ + seat] == 0:
                walks = left - k.seat_rugs_left(c, seat)
                values[seat] += alpha * walks * result[seat] / nn
    best = -1e18
    for seat in range(p):
        if seat != me and c[out_ + seat] == 0 and values[seat] > best:
            best = values[seat]
    if best < -1e17:
        return OUT_VALUE
    return values[me] - best


@njit(cache=True, _nrt=False)
def play_out(c, stream, first_face, horizon, start, greedy, options):
    """Play c on in place with greedy for every seat until turn start + horizon or the
    end; rolls from `stream`, except the first, which is die face index first_face."""
    faces = c[k.FACES_AT]
    nf = c[k.NFACES_]
    none = stream[0:0]
    first = True
    while c[k.PHASE_] != k.PHASE_OVER and c[k.TURN_] - start < horizon:
        phase = c[k.PHASE_]
        if phase == k.PHASE_ROLL:
            i = first_face if first and first_face >= 0 else rng_below(stream, nf)
            first = False
            k.k_apply(c, c[faces + i])
        elif phase == k.PHASE_DRAW:
            k.k_apply(c, draw_colour(c, stream))
        elif phase == k.PHASE_ORIENT:
            k.k_apply(c, greedy_rotation(c, greedy, none))
        else:
            count = k.legal_placements(c, options)
            k.k_apply(c, options[greedy_placement(c, greedy, none, options, count)])


@njit(cache=True, _nrt=False)
def mean_value(c, d, seed, budget, first_face, horizon, start, me, alpha, greedy, work):
    """The mean leaf_value for `me` over `budget` sampled chance sequences of playing on
    from c (not changed; d: a state buffer) to turn start + horizon; the first roll is
    face index first_face when >= 0. work: (options, values, result, stream, mixer)."""
    options, values, result, stream, mixer = work
    if c[k.PHASE_] == k.PHASE_OVER or c[k.TURN_] - start >= horizon:
        return leaf_value(c, me, greedy, values, result, stream[0:0], alpha)
    total = 0.0
    for j in range(budget):
        for a in range(c.shape[0]):
            d[a] = c[a]
        # sample j's chance sequence: the same for every option (common random numbers)
        mixer[0] = seed ^ (uint64(j + 1) * _SAMPLE_MIX)
        stream[0] = rng_next(mixer)
        play_out(d, stream, first_face, horizon, start, greedy, options)
        total += leaf_value(d, me, greedy, values, result, stream[0:0], alpha)
    return total / budget


@njit(cache=True, _nrt=False)
def schedule(s, budget):
    """(horizon in turns, income weight) of a search in s at `budget`.

    Budget 1 values the position right after the turn (nothing left to sample); larger
    budgets play on HORIZON_ROUNDS rounds (every seat's turn once) and sample their
    chance. The regions' income weighs ALPHA / (P - 1)^2: the others' walks are shared
    among P - 1 seats, and so is each seat's income (measured: docs/STRATEGIES.md)."""
    p = s[k.P_]
    horizon = 1 if budget == 1 else HORIZON_ROUNDS * p
    return horizon, ALPHA / ((p - 1) * (p - 1))


@njit(cache=True, _nrt=True)
def expert_values(s, budget, rng, values):
    """values[i] = the value of option i of the decision in s (rotations -1, 0, 1, or the
    legal placements in legal_placements order); returns the number of options.

    The first roll after the option is expanded over the die's distinct faces (weighted
    by their counts); when the option is the mover's own rotation, the mover's
    placement after each roll is the best of its placements (each valued by mean_value),
    else the position after the roll is valued by mean_value (horizon and weights:
    `schedule`). Draws once from `rng`; s is not changed (NRT on: it
    allocates its buffers, and is called from kernels without it).
    """
    horizon, alpha = schedule(s, budget)
    me = s[k.SEAT_]
    p = s[k.P_]
    nf = s[k.NFACES_]
    faces = s[k.FACES_AT]
    start = s[k.TURN_]
    greedy = np.empty(5)
    for i in range(5):
        greedy[i] = ROLLOUT_GREEDY[i]
    options = np.empty(16, np.int64)
    mine = np.empty(16, np.int64)
    work = (
        np.empty(16, np.int64),
        np.empty(p),
        np.empty(4 * p + 1, np.int64),
        np.empty(1, np.uint64),
        np.empty(1, np.uint64),
    )
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
    for i in range(count):
        values[i] = 0.0
        for f in range(nf):
            weight = 0  # the first roll: each distinct face once, weighted by its count
            for g in range(nf):
                if s[faces + g] == s[faces + f]:
                    if g < f:
                        weight = 0
                        break
                    weight += 1
            if weight == 0:
                continue
            for a in range(s.shape[0]):
                c[a] = s[a]
            k.k_apply(c, options[i])
            if not nested:
                values[i] += weight * mean_value(
                    c, d, seed, budget, f, horizon, start, me, alpha, greedy, work
                )
                continue
            k.k_apply(c, s[faces + f])
            if c[k.PHASE_] != k.PHASE_PLACE:  # bankrupt, or the game is over
                values[i] += weight * mean_value(
                    c, d, seed, budget, -1, horizon, start, me, alpha, greedy, work
                )
                continue
            best = -1e18
            for q in range(k.legal_placements(c, mine)):
                for a in range(c.shape[0]):
                    e[a] = c[a]
                k.k_apply(e, mine[q])
                v = mean_value(e, d, seed, budget, -1, horizon, start, me, alpha, greedy, work)
                best = max(best, v)
            values[i] += weight * best
        values[i] /= nf
    return count


# ---------------------------------------------------------------- the twins' entry points


@njit(cache=True, _nrt=True)
def expert_rotation(s, budget, rng):
    """The expert's rotation (-1, 0 or 1) in s."""
    values = np.empty(16)
    count = expert_values(s, budget, rng, values)
    return pick_best(values, count, rng) - 1


@njit(cache=True, _nrt=True)
def expert_placement(s, budget, rng):
    """The expert's placement as an index into legal_placements order."""
    values = np.empty(16)
    count = expert_values(s, budget, rng, values)
    return pick_best(values, count, rng)


@njit(cache=True, _nrt=True)
def well_rotation(s, budget, rng):
    """The restricted players' well-chosen rotation: greedy's (default weights, ties by
    a draw) with budget 0, else the expert's at that budget."""
    if budget == 0:
        greedy = np.empty(5)
        for i in range(5):
            greedy[i] = ROLLOUT_GREEDY[i]
        return greedy_rotation(s, greedy, rng)
    return expert_rotation(s, budget, rng)


@njit(cache=True, _nrt=True)
def well_placement(s, budget, rng, options, count):
    """The restricted players' well-chosen placement (an index into options[:count], in
    legal_placements order): greedy's with budget 0, else the expert's."""
    if budget == 0:
        greedy = np.empty(5)
        for i in range(5):
            greedy[i] = ROLLOUT_GREEDY[i]
        return greedy_placement(s, greedy, rng, options, count)
    return expert_placement(s, budget, rng)


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


class ExpertStrategy(BaseStrategy):
    """Expert: greedy roll-outs over `budget` sampled chance sequences per option.

    Larger budgets play better and cost proportionally more (see docs/STRATEGIES.md,
    the skill ladder). Compiled twin: play_batch plays it.
    """

    PARAMETERS: ClassVar[Mapping[str, Any]] = {
        "budget": DEFAULT_BUDGET,  # chance sequences sampled per option and decision
    }
    COMPILED: ClassVar[str | None] = "expert"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._budget = check_budget("expert", self.params["budget"], 1)

    def on_game_start(self, view: GameView) -> None:
        _compile(
            (expert_rotation, expert_placement), view.packed.copy(), self._budget, view.rng.state
        )

    def choose_rotation(self, view: GameView) -> int:
        return int(expert_rotation(view.packed.copy(), self._budget, view.rng.state))

    def choose_placement(self, view: GameView, options: tuple[Placement, ...]) -> Placement:
        return options[int(expert_placement(view.packed.copy(), self._budget, view.rng.state))]


class _Restricted(BaseStrategy):
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
        s, state = view.packed.copy(), view.rng.state
        _compile((well_rotation,), s, self._budget, state)
        _compile((well_placement,), s, self._budget, state, self._codes, 16)

    def _rotation(self, view: GameView) -> int:
        return int(well_rotation(view.packed.copy(), self._budget, view.rng.state))

    def _placement(self, view: GameView, options: tuple[Placement, ...]) -> Placement:
        s = view.packed.copy()
        count = k.legal_placements(s, self._codes)
        return options[int(well_placement(s, self._budget, view.rng.state, self._codes, count))]


class RotationOnlyStrategy(_Restricted):
    """Turns Assam well (greedy, or expert at `budget`); places uniformly at random."""

    NAME: ClassVar[str] = "rotation-only"
    COMPILED: ClassVar[str | None] = "rotation-only"

    def choose_rotation(self, view: GameView) -> int:
        return self._rotation(view)

    def choose_placement(self, view: GameView, options: tuple[Placement, ...]) -> Placement:
        return options[view.rng.below(len(options))]


class PlacementOnlyStrategy(_Restricted):
    """Turns Assam uniformly at random; places well (greedy, or expert at `budget`)."""

    NAME: ClassVar[str] = "placement-only"
    COMPILED: ClassVar[str | None] = "placement-only"

    def choose_rotation(self, view: GameView) -> int:
        return view.rng.below(3) - 1

    def choose_placement(self, view: GameView, options: tuple[Placement, ...]) -> Placement:
        return self._placement(view, options)
