"""Seat compensation search: the integer starting purses per seat that even the seats out.

The search knows nothing of games: it asks an ``evaluate(purses, seed, games)`` callable for
each seat's effect (win share minus the fair share 1/k, in percentage points) under some
purse vectors, all played on the same seeds (common random numbers), and gets back
:class:`SeatEffects` with their block-clustered covariance. Seat 1 keeps the base purse;
the other seats' purses are the unknowns x (offsets from the base, k - 1 of them).

Method (a noisy Newton search, then a refinement at the integers, then confirmation):

1. **Newton steps.** At the centre c (integers), play c and the k - 1 points c + h e_j on
   one set of seeds. The effects of seats 2..k at c, e(c), and the finite differences
   J[:, j] = (e(c + h e_j) - e(c)) / h estimate the local linear model e(x) = e(c) + J (x - c);
   its root r = c - J^-1 e(c) is the next centre (rounded). Common seeds make the
   differences far more precise than the effects themselves (the games under c and
   c + h e_j share their dice and rug piles and mostly their winner).
2. **Refinement.** The integer points around the root (each offset rounded down and up: the
   corners of the unit cell holding r, 2^(k-1) points) are played on fresh common seeds
   with more games (again around the new root, while it leaves the cell); the candidate
   whose largest absolute seat effect is smallest is the tuned purse vector, its effects
   taken as measured less their common level, which the steps' pooled root sets (common
   seeds make the differences between candidates precise, not the level they share).
   The root is the inverse-variance mean of the roots of the steps near it, each with
   its delta-method variance J^-1 Cov(e) J^-T (the slope J taken as known: its error
   multiplies |x - r|, under a dirham near the root).
3. **Confirmation** (:func:`confirm_purses`, on seeds disjoint from all of
   the above): each seat's effect under the tuned purses with a two one-sided tests
   (TOST) equivalence verdict against +-margin.

Why this and not stochastic approximation or a Bayesian optimiser: the effects are close to
linear in the purses over a few dirhams (the measurements in docs/design-search.md), so a
linear model on common seeds reaches the root in one or two steps, and the k points of a
step cost k times the games of one point while a Kiefer-Wolfowitz iteration spends two
points per coordinate at every one of its many (shrinking) steps.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy import stats as sps

from marrakech_sim.errors import ConfigError

SEARCH, CONFIRM = 0, 1  # the purposes a tune derives seeds for (never the same seeds)


@dataclasses.dataclass(frozen=True, slots=True)
class SeatEffects:
    """Each seat's effect (win share - 1/k, pp) under one purse vector, on one set of seeds.

    cov_pp is the block-clustered covariance of the effects (pp^2), seat by seat.
    """

    purses: tuple[int, ...]
    effect_pp: tuple[float, ...]
    cov_pp: tuple[tuple[float, ...], ...]
    n_games: int
    n_blocks: int

    @property
    def se_pp(self) -> tuple[float, ...]:
        return tuple(math.sqrt(max(self.cov_pp[i][i], 0.0)) for i in range(len(self.purses)))

    @property
    def worst_pp(self) -> float:
        """The largest absolute seat effect."""
        return max(abs(e) for e in self.effect_pp)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SeatEffects:
        return cls(
            purses=tuple(int(v) for v in data["purses"]),
            effect_pp=tuple(float(v) for v in data["effect_pp"]),
            cov_pp=tuple(tuple(float(v) for v in row) for row in data["cov_pp"]),
            n_games=int(data["n_games"]),
            n_blocks=int(data["n_blocks"]),
        )


#: evaluate(purses, seed, games): every seat's effect under each purse vector, one seed set
Evaluate = Callable[[Sequence[tuple[int, ...]], int, int], list[SeatEffects]]


def effects_from_blocks(purses: tuple[int, ...], totals: np.ndarray, n: np.ndarray) -> SeatEffects:
    """SeatEffects from block totals: totals[b, s] the win share of seat s summed over
    block b's n[b] games (stats.seats.seat_block_totals).

    The share is sum(Y_b) / N and its covariance the cluster-robust (sandwich) one,
    B/(B-1) sum_b (Y_b - n_b p)(Y_b - n_b p)' / N^2 (as stats.seats).
    """
    blocks, seats = totals.shape
    big_n = float(n.sum())
    share = totals.sum(axis=0) / big_n
    resid = totals - n[:, None] * share[None, :]
    cov = (blocks / max(blocks - 1, 1)) * (resid.T @ resid) / big_n**2
    return SeatEffects(
        purses=tuple(int(p) for p in purses),
        effect_pp=tuple(float(v) for v in 100.0 * (share - 1.0 / seats)),
        cov_pp=tuple(tuple(float(v) for v in row) for row in 1e4 * cov),
        n_games=int(big_n),
        n_blocks=int(blocks),
    )


@dataclasses.dataclass(frozen=True, slots=True)
class TunePlan:
    """How hard the search works: steps, games, the finite-difference step, bounds."""

    newton_steps: int = 2
    step_dirhams: int = 4  # h, the finite-difference step of a Newton step
    search_games: int = 20_000  # per purse vector of a Newton step
    refine_games: int = 40_000  # per candidate of the refinement
    refine_steps: int = 2  # the most refinements (another when the root leaves the cell)
    confirm_games: int = 40_000  # per rule of the confirmatory run
    max_offset: int = 30  # no seat's purse moves further than this from the base
    level: float = 0.95  # of the intervals
    alpha: float = 0.05  # of the equivalence verdict, over all seats (Bonferroni)

    def __post_init__(self) -> None:
        for key in ("newton_steps", "refine_steps", "step_dirhams", "max_offset"):
            _positive(key, getattr(self, key), 1, 10_000)
        for key in ("search_games", "refine_games", "confirm_games"):
            _positive(key, getattr(self, key), 2, 10**9)
        for key in ("level", "alpha"):
            value = getattr(self, key)
            if not isinstance(value, float | int) or isinstance(value, bool) or not 0 < value < 1:
                raise ConfigError(f"tune.{key} = {value!r}: allowed is a number between 0 and 1")


def _positive(key: str, value: Any, low: int, high: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ConfigError(f"tune.{key} = {value!r}: allowed is an integer from {low} to {high}")


@dataclasses.dataclass(frozen=True, slots=True)
class Step:
    """One step of the search: what it played and what it concluded."""

    kind: str  # 'newton' or 'refine'
    seed: int
    games: int
    points: tuple[SeatEffects, ...]
    root: tuple[float, ...]  # the fitted root: offsets of seats 2..k from the base
    root_se: tuple[float, ...]
    note: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class Search:
    """The search's path and result."""

    base: tuple[int, ...]
    steps: tuple[Step, ...]
    purses: tuple[int, ...]  # the tuned integer purses, seat 1 first
    root: tuple[float, ...]  # continuous root, offsets of seats 2..k
    root_lo: tuple[float, ...]
    root_hi: tuple[float, ...]
    residual_pp: float  # the fitted largest |effect| at the best integers around the root
    # the least and the most residual_pp over the root's interval (None: no interval)
    residual_range_pp: tuple[float, float] | None
    games: int  # games the search played


def seed_for(root: int, purpose: int, index: int) -> int:
    """The run seed of step `index` for `purpose` (SEARCH or CONFIRM), from the tune's seed.

    Distinct (purpose, index) give distinct streams of numpy's SeedSequence, so the games'
    seeds drawn from them are disjoint but for 64-bit collisions (checked on real runs)."""
    state = np.random.SeedSequence([root, purpose, index]).generate_state(2, np.uint64)
    return int(state[0] >> np.uint64(1))


def search_purses(evaluate: Evaluate, base: tuple[int, ...], plan: TunePlan, seed: int) -> Search:
    """Find the integer purses (seat 1 at base[0]) minimising the largest seat effect.

    evaluate(purses, seed, games) plays every purse vector of `purses` on the same seeds
    (from `seed`) and returns their SeatEffects in order. Step i plays on the seeds of
    seed_for(seed, SEARCH, i).
    """
    k = len(base)
    if k < 2:
        raise ConfigError(f"players = {k}: a seat compensation needs at least 2 seats")
    low = np.array([-min(b, plan.max_offset) for b in base[1:]], dtype=float)
    high = np.full(k - 1, float(plan.max_offset))
    centre = np.zeros(k - 1, dtype=int)
    steps: list[Step] = []
    jac = np.eye(k - 1)
    for i in range(plan.newton_steps):
        signs = np.where(centre + plan.step_dirhams <= high, 1, -1)
        shifts = [plan.step_dirhams * signs[j] * _unit(k - 1, j) for j in range(k - 1)]
        offsets = [centre, *(centre + d for d in shifts)]
        step_seed = seed_for(seed, SEARCH, i)
        points = evaluate([_purses(base, o) for o in offsets], step_seed, plan.search_games)
        e0 = np.array(points[0].effect_pp[1:])
        jac = np.column_stack(
            [
                (np.array(points[j + 1].effect_pp[1:]) - e0) / (plan.step_dirhams * signs[j])
                for j in range(k - 1)
            ]
        )
        root, se, note = _root(centre, points[0], jac, low, high)
        steps.append(Step("newton", step_seed, plan.search_games, tuple(points), root, se, note))
        centre = np.clip(np.rint(_pooled(steps, plan)[0]), low, high).astype(int)
    # the refinement: the integer corners around the pooled root, on fresh common seeds;
    # again around the new root while it leaves the cell of the corners played
    for r in range(plan.refine_steps):
        root_now = _pooled(steps, plan)[0]
        corners = _corners(root_now, low, high)
        refine_seed = seed_for(seed, SEARCH, plan.newton_steps + r)
        points = evaluate([_purses(base, c) for c in corners], refine_seed, plan.refine_games)
        nearest = int(np.argmin([np.abs(np.array(c) - root_now).sum() for c in corners]))
        root, se, note = _root(np.array(corners[nearest]), points[nearest], jac, low, high)
        steps.append(Step("refine", refine_seed, plan.refine_games, tuple(points), root, se, note))
        pooled = _pooled(steps, plan)[0]
        if all(
            lo - 0.5 <= p <= hi + 0.5 for p, lo, hi in zip(pooled, *_cell(corners), strict=True)
        ):
            break
    last = steps[-1].points
    root_pooled, se_pooled = _pooled(steps, plan)
    # the candidates' differences come from common seeds and are precise; their common
    # level is as noisy as one point's effect. So the level is set by the pooled root of
    # every step (the fitted effects at the nearest corner), the differences kept
    shift = jac @ (np.array(corners[nearest]) - root_pooled) - np.array(last[nearest].effect_pp[1:])
    best = min(range(len(last)), key=lambda c: _worst(np.array(last[c].effect_pp[1:]) + shift))
    z = float(sps.norm.ppf(0.5 + plan.level / 2))
    # what the fit leaves at whole dirhams: the fitted line's largest |effect| at the best
    # integer purses around the pooled root (0 when the root is a whole number of dirhams),
    # and its range over the root's interval (the slope taken as known, as for the root)
    residual = float(_residuals(jac, root_pooled[None, :], low, high)[0])
    half = z * se_pooled
    residual_range = None
    if np.all(np.isfinite(half)) and np.all(np.isfinite(jac)):
        box = _residuals(jac, _box(root_pooled - half, root_pooled + half, low, high), low, high)
        residual_range = (min(float(box.min()), residual), max(float(box.max()), residual))
    return Search(
        base=base,
        steps=tuple(steps),
        purses=last[best].purses,
        root=tuple(float(v) for v in root_pooled),
        root_lo=tuple(float(r - z * s) for r, s in zip(root_pooled, se_pooled, strict=True)),
        root_hi=tuple(float(r + z * s) for r, s in zip(root_pooled, se_pooled, strict=True)),
        residual_pp=residual,
        residual_range_pp=residual_range,
        games=sum(s.games * len(s.points) for s in steps),
    )


def _pooled(steps: Sequence[Step], plan: TunePlan) -> tuple[np.ndarray, np.ndarray]:
    """The inverse-variance mean of the steps' roots, per seat, and its standard error.

    Only steps whose centre lies within step_dirhams / 2 of the latest step's root count:
    a step far from the root extrapolates its line, and the effects curve a little.
    """
    latest = np.array(steps[-1].root)
    roots, weights = [], []
    for step in steps:
        centre = np.array(step.points[0].purses[1:]) - np.array(steps[0].points[0].purses[1:])
        se = np.array(step.root_se)
        near = np.all(np.abs(centre - latest) <= max(plan.step_dirhams / 2, 1.0))
        if (near or step is steps[-1]) and np.all(np.isfinite(se)) and np.all(se > 0):
            roots.append(np.array(step.root))
            weights.append(1.0 / se**2)
    if not roots:
        return latest, np.array(steps[-1].root_se)
    w = np.array(weights)
    return (w * np.array(roots)).sum(axis=0) / w.sum(axis=0), 1.0 / np.sqrt(w.sum(axis=0))


def _cell(corners: list[tuple[int, ...]]) -> tuple[np.ndarray, np.ndarray]:
    arr = np.array(corners)
    return arr.min(axis=0), arr.max(axis=0)


def _unit(n: int, j: int) -> np.ndarray:
    out = np.zeros(n, dtype=int)
    out[j] = 1
    return out


def _purses(base: tuple[int, ...], offsets: np.ndarray | Sequence[int]) -> tuple[int, ...]:
    return (base[0], *(int(b + o) for b, o in zip(base[1:], offsets, strict=True)))


def _root(
    centre: np.ndarray, at: SeatEffects, jac: np.ndarray, low: np.ndarray, high: np.ndarray
) -> tuple[tuple[float, ...], tuple[float, ...], str]:
    """The linear model's root from the effects at `centre`, its standard error, a note."""
    e0 = np.array(at.effect_pp[1:])
    cov = np.array(at.cov_pp)[1:, 1:]
    if not np.all(np.isfinite(jac)) or np.linalg.cond(jac) > 1e8:
        return (
            tuple(float(c) for c in centre),
            (math.inf,) * len(centre),
            ("the purses show no measurable effect here: the centre is kept"),
        )
    inv = np.linalg.inv(jac)
    root = centre - inv @ e0
    se = np.sqrt(np.clip(np.diag(inv @ cov @ inv.T), 0.0, None))
    clipped = np.clip(root, low, high)
    note = "" if np.allclose(clipped, root) else "the root lies outside the allowed purses"
    return tuple(float(r) for r in clipped), tuple(float(s) for s in se), note


def _corners(root: np.ndarray, low: np.ndarray, high: np.ndarray) -> list[tuple[int, ...]]:
    """The integer points around `root` (each coordinate rounded down and up), in bounds."""
    choices = []
    for r, lo, hi in zip(root, low, high, strict=True):
        down, up = math.floor(r), math.ceil(r)
        choices.append(sorted({int(np.clip(down, lo, hi)), int(np.clip(up, lo, hi))}))
    return [tuple(c) for c in itertools.product(*choices)]


def _residuals(jac: np.ndarray, roots: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """For each root (a row of `roots`), the linear model's largest |seat effect| at the
    best of the integer points around it (`_corners`): what whole dirhams leave."""
    down = np.clip(np.floor(roots), low, high)
    up = np.clip(np.ceil(roots), low, high)
    best = np.full(len(roots), np.inf)
    for pick in itertools.product((False, True), repeat=roots.shape[1]):
        corner = np.where(np.array(pick)[None, :], up, down)
        rest = (corner - roots) @ jac.T  # the fitted effects of seats 2..k at the corner
        worst = np.maximum(np.abs(rest).max(axis=1), np.abs(rest.sum(axis=1)))
        best = np.minimum(best, worst)
    return best


def _box(lo: np.ndarray, hi: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Points filling the box lo..hi (within the allowed offsets): a grid of 11 per
    offset, with every whole and half dirham inside, where the residual is least and most."""
    lo, hi = np.clip(lo, low, high), np.clip(hi, low, high)
    axes = []
    for a, b in zip(lo, hi, strict=True):
        halves = np.arange(math.ceil(2 * a), math.floor(2 * b) + 1) / 2
        axes.append(np.unique(np.concatenate([np.linspace(a, b, 11), halves])))
    return np.array(list(itertools.product(*axes)), dtype=float)


def _worst(rest: np.ndarray) -> float:
    """The largest |effect| of all seats from those of seats 2..k (they sum to zero)."""
    return float(max(np.abs(rest).max(), abs(rest.sum())))


def confirm_purses(
    evaluate: Evaluate,
    purses: Sequence[tuple[int, ...]],
    seed: int,
    plan: TunePlan,
    margin_pp: float,
) -> list[tuple[SeatEffects, list[SeatVerdict]]]:
    """Play `purses` on the confirmatory seeds of the tune seeded `seed` (never a search's:
    seed_for(seed, CONFIRM, 0)) and give each its effects and per-seat verdicts."""
    effects = evaluate(purses, seed_for(seed, CONFIRM, 0), plan.confirm_games)
    return [(e, equivalence(e, margin_pp, plan.alpha)) for e in effects]


@dataclasses.dataclass(frozen=True, slots=True)
class SeatVerdict:
    """One seat's confirmatory effect and its equivalence verdict."""

    seat: int  # 1-based
    effect_pp: float
    lo_pp: float  # the interval the verdict uses, at verdict_level(alpha, seats)
    hi_pp: float
    p_equivalence: float  # TOST p-value against +-margin (the larger one-sided p)
    fair: bool  # p_equivalence < alpha / seats: the interval lies inside +-margin


def verdict_level(alpha: float, seats: int) -> float:
    """The level of the intervals that match the verdict: 1 - 2 alpha / seats.

    Both one-sided tests at alpha / seats reject exactly when this interval lies inside
    +-margin."""
    return 1.0 - 2.0 * alpha / seats


def equivalence(effects: SeatEffects, margin_pp: float, alpha: float = 0.05) -> list[SeatVerdict]:
    """Each seat's TOST verdict: fair within +-margin_pp, Bonferroni-corrected over the seats.

    Seat s is called fair when both one-sided tests (effect > -margin, effect < +margin)
    reject at alpha / k, Student's t with n_blocks - 1 degrees of freedom on the
    block-clustered standard error: the chance that any seat whose effect lies outside
    +-margin is called fair is at most alpha. The joint verdict "every seat is fair" is an
    intersection-union test and keeps its level alpha with or without the correction.
    The same verdict reads off the seat's interval at verdict_level(alpha, k): fair exactly
    when it lies inside +-margin (the verdict is taken from the interval, so that the two
    never disagree by rounding). With 2 seats the effects mirror each other (they sum to
    zero), so the two tests are one and the correction over 2 is conservative.
    """
    if not (isinstance(margin_pp, float | int) and margin_pp > 0):
        raise ConfigError(f"margin = {margin_pp!r}: allowed is a positive number of pp")
    k = len(effects.purses)
    df = max(effects.n_blocks - 1, 1)
    t_ci = float(sps.t.ppf(0.5 + verdict_level(alpha, k) / 2, df))  # t at 1 - alpha / k
    out = []
    for s, (e, se) in enumerate(zip(effects.effect_pp, effects.se_pp, strict=True)):
        if se > 0:
            p_low = float(sps.t.sf((e + margin_pp) / se, df))  # H0: effect <= -margin
            p_high = float(sps.t.cdf((e - margin_pp) / se, df))  # H0: effect >= +margin
            p = max(p_low, p_high)
        else:
            p = 0.0 if abs(e) < margin_pp else 1.0
        lo, hi = e - t_ci * se, e + t_ci * se
        out.append(SeatVerdict(s + 1, e, lo, hi, p, -margin_pp < lo and hi < margin_pp))
    return out
