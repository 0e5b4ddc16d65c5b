"""Search strategies: depth-limited expectimax and flat Monte Carlo over the chance nodes.

Both search compiled kernels over copies of the packed state (`marrakech_sim.rules.core`)
and model the other seats as the greedy strategy with its default weights (first best,
no random draw), so one search costs no Python calls. The root's choice among equally
valued options is one draw from the seat's stream, so games are reproducible by seed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from numba import njit

from marrakech_sim.errors import ConfigError
from marrakech_sim.play.rng import rng_next
from marrakech_sim.play.strategy import BaseStrategy
from marrakech_sim.play.view import GameView
from marrakech_sim.rules import core as k
from marrakech_sim.rules.state import Placement
from marrakech_sim.strategies.greedy import GreedyStrategy
from marrakech_sim.strategies.kernels import (
    evaluate,
    greedy_placement,
    greedy_rotation,
    pick_best,
    rollout,
)

_OPPONENT = np.array([GreedyStrategy.PARAMETERS[key] for key in GreedyStrategy.PARAMETERS], float)
_POLICIES = {"random": 0, "greedy": 1}


# ---------------------------------------------------------------- expectimax


@njit(cache=True)
def expectimax(s, me, depth, opponent, eval_params):
    """Expected value (evaluate) of `s` for seat `me`, `depth` decisions deep.

    Chance nodes (draw, roll) are always expanded with their probabilities; at my
    decisions the best child counts, at the others' the greedy choice; the value is
    taken at the first decision node below `depth` decisions, or at the end.
    """
    phase = s[k.PHASE_]
    if phase == k.PHASE_OVER or (
        depth <= 0 and (phase == k.PHASE_ORIENT or phase == k.PHASE_PLACE)
    ):
        return evaluate(s, me, eval_params)
    child = np.empty_like(s)
    none = np.empty(0, np.uint64)
    if phase == k.PHASE_ROLL:
        faces = s[k.FACES_AT]
        nf = s[k.NFACES_]
        total = 0.0
        for i in range(nf):
            face = s[faces + i]
            seen = False
            weight = 0
            for j in range(nf):
                if s[faces + j] == face:
                    weight += 1
                    if j < i:
                        seen = True
            if seen:
                continue
            child[:] = s
            k.k_apply(child, face)
            total += weight * expectimax(child, me, depth, opponent, eval_params)
        return total / nf
    if phase == k.PHASE_DRAW:
        seat = s[k.SEAT_]
        left = s[k.RUGS_LEFT_AT]
        total = 0.0
        for c in range(seat, s[k.P_] * s[k.C_], s[k.P_]):
            if s[left + c] > 0:
                child[:] = s
                k.k_apply(child, c)
                total += s[left + c] * expectimax(child, me, depth, opponent, eval_params)
        return total / k.seat_rugs_left(s, seat)
    mover = s[k.SEAT_]
    if phase == k.PHASE_ORIENT:
        if mover != me:
            child[:] = s
            k.k_apply(child, greedy_rotation(s, opponent, none))
            return expectimax(child, me, depth - 1, opponent, eval_params)
        best = -1e18
        for r in range(-1, 2):
            child[:] = s
            k.k_apply(child, r)
            best = max(best, expectimax(child, me, depth - 1, opponent, eval_params))
        return best
    options = np.empty(16, np.int64)
    count = k.legal_placements(s, options)
    if mover != me:
        child[:] = s
        k.k_apply(child, options[greedy_placement(s, opponent, none, options, count)])
        return expectimax(child, me, depth - 1, opponent, eval_params)
    best = -1e18
    for i in range(count):
        child[:] = s
        k.k_apply(child, options[i])
        best = max(best, expectimax(child, me, depth - 1, opponent, eval_params))
    return best


@njit(cache=True)
def expectimax_root(s, me, depth, opponent, eval_params, values):
    """values[i] = the value of the i-th option (rotations -1, 0, 1, or legal placements
    in legal_placements order) at the decision in `s`; returns the number of options."""
    child = np.empty_like(s)
    if s[k.PHASE_] == k.PHASE_ORIENT:
        for r in range(-1, 2):
            child[:] = s
            k.k_apply(child, r)
            values[r + 1] = expectimax(child, me, depth - 1, opponent, eval_params)
        return 3
    options = np.empty(16, np.int64)
    count = k.legal_placements(s, options)
    for i in range(count):
        child[:] = s
        k.k_apply(child, options[i])
        values[i] = expectimax(child, me, depth - 1, opponent, eval_params)
    return count


class ExpectimaxStrategy(BaseStrategy):
    """Expectimax: looks `depth` decisions ahead over the die, others played as greedy.

    The value of a position for a seat is its dirhams + visible * visible squares +
    region * its largest region (exposure: what others may pay it), minus the best
    other seat's value; bankruptcy is -1,000,000.
    """

    COST: ClassVar[int] = 64  # about 1,000 times a compiled game (run.plan)
    PARAMETERS: ClassVar[Mapping[str, Any]] = {
        "depth": 3,  # decisions looked ahead (mine and others'), chance nodes expanded
        "visible": 1.0,  # weight of a visible square (1: the final score)
        "region": 0.5,  # weight of the largest own region
    }

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        depth = self.params["depth"]
        if not isinstance(depth, int) or isinstance(depth, bool) or not 1 <= depth <= 8:
            raise ConfigError(f"expectimax: depth {depth!r} is not an integer from 1 to 8")
        self._eval = np.array([self.params["visible"], self.params["region"]], float)
        self._values = np.empty(16)

    def _choose(self, view: GameView) -> int:
        count = expectimax_root(
            view.packed.copy(), view.seat, self.params["depth"], _OPPONENT, self._eval, self._values
        )
        return int(pick_best(self._values, count, view.rng.state))

    def choose_rotation(self, view: GameView) -> int:
        return self._choose(view) - 1

    def choose_placement(self, view: GameView, options: tuple[Placement, ...]) -> Placement:
        return options[self._choose(view)]


# ---------------------------------------------------------------- flat Monte Carlo


@njit(cache=True)
def monte_carlo_root(s, me, rollouts, explore, policy, horizon, opponent, eval_params, rng, means):
    """Share `rollouts` among the options of the decision in `s` by UCB1 and write each
    option's mean win share into `means`; returns the number of options.

    Each rollout copies the state, plays the option, then plays on with `rollout`
    (chance from `rng`, the seat's own search stream).
    """
    options = np.empty(16, np.int64)
    orient = s[k.PHASE_] == k.PHASE_ORIENT
    count = 3 if orient else k.legal_placements(s, options)
    if orient:
        for r in range(3):
            options[r] = r - 1
    wins = np.zeros(count)
    visits = np.zeros(count)
    child = np.empty_like(s)
    for t in range(max(rollouts, count)):
        if t < count:
            i = t
        else:
            i = 0
            best = -1.0
            log_t = np.log(t)
            for j in range(count):
                u = wins[j] / visits[j] + explore * np.sqrt(log_t / visits[j])
                if u > best:
                    best = u
                    i = j
        child[:] = s
        k.k_apply(child, options[i])
        wins[i] += rollout(child, me, rng, policy, horizon, opponent, eval_params)
        visits[i] += 1
    for j in range(count):
        means[j] = wins[j] / visits[j]
    return count


class MonteCarloStrategy(BaseStrategy):
    """Flat Monte Carlo (UCB1 at the root): short greedy play-outs decide each choice.

    Each decision shares `rollouts` play-outs among its options by UCB1 and takes the
    option with the highest mean win share. Play-outs roll their own dice (from a
    stream seeded by one draw of the seat's stream) and play `policy` ('random' or
    'greedy') for every seat, for `horizon` turns (then the leader by dirhams + visible
    squares counts as the winner) or to the end (horizon 0).
    """

    COST: ClassVar[int] = 64  # about 1,000 times a compiled game (run.plan)
    PARAMETERS: ClassVar[Mapping[str, Any]] = {
        "rollouts": 100,  # play-outs per decision
        "explore": 0.5,  # UCB1 exploration constant
        "policy": "greedy",  # play-out policy: 'random' or 'greedy'
        "horizon": 8,  # turns per play-out; 0: to the end of the game
    }

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        p = self.params
        if p["policy"] not in _POLICIES:
            raise ConfigError(f"mcts: policy {p['policy']!r}; allowed: {', '.join(_POLICIES)}")
        for key in ("rollouts", "horizon"):
            if not isinstance(p[key], int) or isinstance(p[key], bool) or p[key] < 0:
                raise ConfigError(f"mcts: {key} {p[key]!r} is not a non-negative integer")
        self._eval = np.array([1.0, 0.0])
        self._means = np.empty(16)
        self._rng = np.zeros(1, np.uint64)

    def _choose(self, view: GameView) -> int:
        # the search's dice come from a stream seeded by one draw of the seat's stream
        self._rng[0] = rng_next(view.rng.state)
        p = self.params
        count = monte_carlo_root(
            view.packed.copy(),
            view.seat,
            p["rollouts"],
            float(p["explore"]),
            _POLICIES[p["policy"]],
            p["horizon"],
            _OPPONENT,
            self._eval,
            self._rng,
            self._means,
        )
        return int(pick_best(self._means, count, view.rng.state))

    def choose_rotation(self, view: GameView) -> int:
        return self._choose(view) - 1

    def choose_placement(self, view: GameView, options: tuple[Placement, ...]) -> Placement:
        return options[self._choose(view)]
