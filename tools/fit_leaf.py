"""Fit the expert's leaf evaluation (strategies/expert.py LEAF_WEIGHTS) from games it plays.

Games are played in a compiled loop (the twins of the compiled runner, with a share of
uniformly random decisions mixed in so that the positions a search reaches off the
players' usual path are seen too). At every turn's start (the positions leaf_value
values) each seat's leaf_features are recorded; the game's winner shares are the
labels. A conditional logit (the winner's probability is the softmax over the seats of
weights . features) is fitted per player count by Newton's method with a small ridge
penalty, to all positions (the committed weights) and, for comparison, to the positions
of games with an expert seat only (measured worse: docs/STRATEGIES.md). Reproducible
by --seed; prints LEAF_WEIGHTS to paste into strategies/expert.py.

    python tools/fit_leaf.py                      # the committed weights (a few minutes)
    python tools/fit_leaf.py --players 2 --scale 0.05   # a quick look
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from numba import njit

from marrakech_sim.arena import twins
from marrakech_sim.arena.twins import CODES, choose_placement, choose_rotation
from marrakech_sim.play import turns as t
from marrakech_sim.play.rng import rng_below, rng_next
from marrakech_sim.rules import core as k
from marrakech_sim.rules.options import Rules
from marrakech_sim.strategies.expert import (
    LEAF_FEATURES,
    MODEL_LOOKAHEAD,
    expert_values_with,
    leaf_features,
    rollout_greedy,
)
from marrakech_sim.strategies.greedy import GreedyStrategy
from marrakech_sim.strategies.kernels import pick_best

NF = len(LEAF_FEATURES)

#: the leaf weights of the expert seats of the games played (2, 3, 4 players): the first
#: guess (dirhams, visible squares and the walk at 0.1, the old income term at 0.1 ALPHA /
#: (P - 1)^2), so that the data do not depend on the weights fitted from them
BOOTSTRAP = np.array(
    [
        [0.1, 0.1, 0.1, 0.05, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [0.1, 0.1, 0.1, 0.025, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [0.1, 0.1, 0.1, 0.017, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    ]
)

#: (games at scale 1, seat 0's twin and budget, the other seats', share of random decisions)
MIX = (
    (20000, "greedy", 0, "greedy", 0, 0.1),
    (20000, "greedy", 0, "greedy", 0, 0.0),
    (3000, "expert", 1, "greedy", 0, 0.05),
    (3000, "expert", 1, "expert", 1, 0.05),
    (600, "expert", 4, "expert", 1, 0.0),
)

EXPERT = CODES["expert"]


@njit(cache=True)
def record_games(init, seeds, codes, params, eps, boot, feats, seat_of, game_of, shares):
    """Play each game g (twins codes[g], params[g], the expert with leaf weights `boot`;
    each decision uniformly random with probability eps[g]) and record at every turn's
    start each seat's leaf_features into feats[row, seat] (rows of seats out: 0);
    game_of[row] = g. shares[g] = each seat's win share at the end. Returns the number
    of rows."""
    p = init[k.P_]
    s = init.copy()
    streams = np.empty(1 + p, np.uint64)
    rngs = np.empty(p, np.uint64)
    noise = np.empty(1, np.uint64)
    options = np.empty(16, np.int64)
    greedy = rollout_greedy()
    result = np.empty(4 * p + 1, np.int64)
    values = np.empty(16)
    unused = np.zeros(0, np.int64)  # the greedy twins' memory: they keep none
    row = 0
    for g in range(seeds.shape[0]):
        s[:] = init
        t.seed_streams(seeds[g], p, streams, rngs)
        noise[0] = seeds[g] ^ np.uint64(0x9E3779B97F4A7C15)
        rng_next(noise)
        last = -1
        while s[k.PHASE_] != k.PHASE_OVER:
            if s[k.TURN_] != last and row < feats.shape[0]:
                last = s[k.TURN_]
                feats[row] = 0.0
                leaf_features(s, greedy, result, noise[0:0], feats[row])
                seat_of[row] = s[k.SEAT_]
                game_of[row] = g
                row += 1
            phase = s[k.PHASE_]
            seat = s[k.SEAT_]
            wild = phase >= k.PHASE_ORIENT and rng_below(noise, 1000) < eps[g] * 1000
            if phase == k.PHASE_ROLL or phase == k.PHASE_DRAW:
                action = t.k_chance(s, streams)
            elif phase == k.PHASE_ORIENT:
                if wild:
                    action = rng_below(noise, 3) - 1
                elif codes[g, seat] == EXPERT:
                    n = expert_values_with(
                        s,
                        int(params[g, seat, 0]),
                        rngs[seat : seat + 1],
                        values,
                        boot,
                        MODEL_LOOKAHEAD,
                        0,
                    )
                    action = pick_best(values, n, rngs[seat : seat + 1]) - 1
                else:
                    action = choose_rotation(
                        codes[g, seat], params[g, seat], s, rngs[seat : seat + 1], unused, False
                    )
            else:
                count = k.placements_of_key(s, k.legal_placement_mask(s), options)
                if wild:
                    action = options[rng_below(noise, count)]
                elif codes[g, seat] == EXPERT:
                    n = expert_values_with(
                        s,
                        int(params[g, seat, 0]),
                        rngs[seat : seat + 1],
                        values,
                        boot,
                        MODEL_LOOKAHEAD,
                        0,
                    )
                    action = options[pick_best(values, n, rngs[seat : seat + 1])]
                else:
                    rng = rngs[seat : seat + 1]
                    action = options[
                        choose_placement(
                            codes[g, seat], params[g, seat], s, rng, options, count, unused, False
                        )
                    ]
            k.k_apply(s, action)
        k.k_result(s, result)
        winners = 0
        for q in range(p):
            winners += result[3 * p + q]
        for q in range(p):
            shares[g, q] = result[3 * p + q] / winners if winners > 0 else 0.0
    return row


def play_mix(
    players: int, scale: float, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(features (rows, P, NF), in-game mask (rows, P), labels (rows, P), expert (rows:
    True for rows of games with an expert seat)) of the MIX games with `players` seats,
    seat-rotated (each line-up's seat 0 in every seat in turn)."""
    rules = Rules(players=players)
    init = k.initial_state(rules)
    greedy = dict(GreedyStrategy.PARAMETERS)
    xs, ms, ys, es = [], [], [], []
    for i, (games, a, ba, b, bb, eps) in enumerate(MIX):
        n = max(players, int(games * scale) // players * players)
        codes = np.empty((n, players), np.int64)
        params = np.zeros((n, players, twins.MAX_PARAMETERS))
        for g in range(n):
            for seat in range(players):
                twin, budget = (a, ba) if seat == g % players else (b, bb)
                codes[g, seat] = twins.CODES[twin]
                values = (
                    greedy
                    if twin == "greedy"
                    else {"budget": budget, "width": 0, "look": MODEL_LOOKAHEAD}
                )
                params[g, seat] = twins.encode_params(twin, values)
        rng = np.random.default_rng([seed, players, i])
        seeds = rng.integers(0, 2**63, n, dtype=np.uint64)
        cap = n * t.max_turns(rules)
        feats = np.zeros((cap, players, NF))
        seat_of = np.zeros(cap, np.int64)
        game_of = np.zeros(cap, np.int64)
        shares = np.zeros((n, players))
        started = time.perf_counter()
        rows = record_games(
            init,
            seeds,
            codes,
            params,
            np.full(n, eps),
            BOOTSTRAP[players - 2],
            feats,
            seat_of,
            game_of,
            shares,
        )
        print(
            f"  {players}p {a}{ba} vs {b}{bb} eps {eps}: {n} games, {rows} positions, "
            f"{time.perf_counter() - started:.1f} s",
            flush=True,
        )
        x = feats[:rows]
        xs.append(x)
        ms.append(np.abs(x).sum(axis=2) > 0)
        ys.append(shares[game_of[:rows]])
        es.append(np.full(rows, a == "expert"))
    return np.concatenate(xs), np.concatenate(ms), np.concatenate(ys), np.concatenate(es)


def fit_logit(x: np.ndarray, mask: np.ndarray, y: np.ndarray, ridge: float) -> np.ndarray:
    """Weights w maximising sum over rows and seats of y log softmax(x . w) over the seats
    in the game, minus ridge * |w|^2 (features standardised for the penalty)."""
    scale = x[mask].std(axis=0)
    scale[scale == 0] = 1.0
    z = x / scale
    w = np.zeros(x.shape[2])
    rows = x.shape[0]
    for _ in range(30):
        u = np.where(mask, z @ w, -np.inf)
        u -= u.max(axis=1, keepdims=True)
        e = np.exp(u)
        pi = e / e.sum(axis=1, keepdims=True)
        mean = np.einsum("rs,rsf->rf", pi, z)
        grad = np.einsum("rs,rsf->f", y - pi, z) / rows - 2 * ridge * w
        zz = np.einsum("rs,rsf,rsg->fg", pi, z, z)
        hess = -(zz - mean.T @ mean) / rows - 2 * ridge * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return w / scale


def log_loss(x: np.ndarray, mask: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    """Mean cross-entropy of the labels under the softmax of x . w."""
    u = np.where(mask, x @ w, -np.inf)
    u -= u.max(axis=1, keepdims=True)
    logp = u - np.log(np.exp(u).sum(axis=1, keepdims=True))
    return float(-(y * np.where(mask, logp, 0.0)).sum(axis=1).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--scale", type=float, default=0.3, help="times MIX's game counts")
    parser.add_argument("--ridge", type=float, default=1e-4)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--save", help="write the data of each player count to PREFIX{P}.npz")
    args = parser.parse_args()
    fits: dict[str, list[np.ndarray]] = {"all": [], "expert": []}
    for players in args.players:
        x, mask, y, expert = play_mix(players, args.scale, args.seed)
        if args.save:
            np.savez_compressed(f"{args.save}{players}.npz", x=x, mask=mask, y=y, expert=expert)
        held = np.arange(len(x)) % 5 == 0  # held-out rows (every fifth position)
        for name, rows in (("all", np.ones(len(x), bool)), ("expert", expert)):
            train, test = rows & ~held, rows & held
            w = fit_logit(x[train], mask[train], y[train], args.ridge)
            loss = log_loss(x[test], mask[test], y[test], w)
            base = log_loss(x[test], mask[test], y[test], np.zeros(NF))
            print(
                f"{players}p, {name} positions: {rows.sum()}, held-out log loss {loss:.4f} "
                f"(uniform {base:.4f})"
            )
            w = fit_logit(x[rows], mask[rows], y[rows], args.ridge)
            for feature, value in zip(LEAF_FEATURES, w, strict=True):
                print(f"    {feature:>13} {value:+.5f}")
            fits[name].append(w)
    for name in ("all", "expert"):
        committed = " (the committed LEAF_WEIGHTS)" if name == "all" else ""
        print(f"fitted to {name} positions{committed}:\nLEAF_WEIGHTS = (")
        for w in fits[name]:
            print("    (" + ", ".join(f"{v:.5g}" for v in w) + "),")
        print(")")


if __name__ == "__main__":
    main()
