"""The seat compensation search and its verdict on a stand-in game with a known answer.

The stand-in: seat s wins a game with probability softmax(a + b * purse)_s (a the seats'
baseline log-odds, b per dirham), one winner per game drawn from one uniform per game
that every purse vector of an evaluation shares (common random numbers, as common block
seeds do for real games). Every seat is even exactly when a_s + b * purse_s is the same
for all seats, so the root is known: offset_s = (a_1 - a_s) / b.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest
from scipy import stats as sps

from marrakech_sim.design.tune import (
    CONFIRM,
    SEARCH,
    SeatEffects,
    TunePlan,
    confirm_purses,
    effects_from_blocks,
    equivalence,
    search_purses,
    seed_for,
)
from marrakech_sim.errors import ConfigError

SHARES = np.array([0.28, 0.26, 0.24, 0.22])  # at equal purses: the first seat ahead
PER_DIRHAM = 0.04  # log-odds per dirham
BASE = (30, 30, 30, 30)
TRUE_ROOT = (np.log(SHARES[0]) - np.log(SHARES[1:])) / PER_DIRHAM  # 1.85, 3.85, 6.03


class StandIn:
    """evaluate(purses, seed, games) of the stand-in game; remembers the seeds it used."""

    def __init__(self, shares: np.ndarray = SHARES, per_dirham: float = PER_DIRHAM) -> None:
        self.logits = np.log(shares)
        self.per_dirham = per_dirham
        self.seeds: list[int] = []

    def probabilities(self, purses: Sequence[int]) -> np.ndarray:
        z = self.logits + self.per_dirham * np.asarray(purses, dtype=float)
        w = np.exp(z - z.max())
        return w / w.sum()

    def __call__(
        self, purses: Sequence[tuple[int, ...]], seed: int, games: int
    ) -> list[SeatEffects]:
        self.seeds.append(seed)
        u = np.random.default_rng(seed).random(games)  # one draw per game, shared
        out = []
        for p in purses:
            winner = np.searchsorted(np.cumsum(self.probabilities(p))[:-1], u, side="right")
            out.append(_single_game_blocks(tuple(p), np.bincount(winner, minlength=len(p)), games))
        return out


def _single_game_blocks(purses: tuple[int, ...], wins: np.ndarray, games: int) -> SeatEffects:
    """effects_from_blocks for blocks of one game each, from the win counts alone: the
    sandwich covariance is then (diag(p) - p p') / (N - 1) (checked below)."""
    share = wins / games
    cov = (np.diag(share) - np.outer(share, share)) / (games - 1)
    return SeatEffects(
        purses,
        tuple(float(v) for v in 100 * (share - 1 / len(purses))),
        tuple(tuple(float(v) for v in row) for row in 1e4 * cov),
        games,
        games,
    )


def test_effects_from_blocks_agree_with_statsmodels_clustered_ols() -> None:
    """Each seat's effect and clustered standard error from block totals equal a statsmodels
    OLS of the seat's win share on a constant with cluster-robust errors by block; with
    one game per block they equal the closed form the stand-in uses."""
    import statsmodels.api as sm

    rng = np.random.default_rng(0)
    blocks, per_block, seats = 300, 3, 4
    strength = rng.normal(size=(blocks, 1, seats))  # games of a block share their luck
    winners = (strength + rng.normal(size=(blocks, per_block, seats))).argmax(axis=2)
    one_hot = np.eye(seats)[winners]  # (block, game, seat)
    got = effects_from_blocks((30,) * seats, one_hot.sum(axis=1), np.full(blocks, per_block))
    groups = np.repeat(np.arange(blocks), per_block)
    for s in range(seats):
        y = one_hot[:, :, s].ravel()
        fit = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": groups})
        assert got.effect_pp[s] == pytest.approx(100 * (fit.params[0] - 1 / seats))
        assert got.se_pp[s] == pytest.approx(100 * fit.bse[0], rel=1e-9)
    single = np.eye(seats)[rng.integers(0, seats, 500)]
    direct = effects_from_blocks((30,) * seats, single, np.ones(500))
    closed = _single_game_blocks((30,) * seats, single.sum(axis=0).astype(int), 500)
    np.testing.assert_allclose(direct.cov_pp, closed.cov_pp, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(direct.effect_pp, closed.effect_pp, atol=1e-12)


def test_the_search_finds_the_known_root_within_its_interval() -> None:
    """On the stand-in the root's interval holds the true root, and the tuned purses are
    one of the integer points around it, with a fitted residual below 0.5 pp."""
    game = StandIn()
    found = search_purses(game, BASE, TunePlan(), seed=11)
    for lo, true, hi in zip(found.root_lo, TRUE_ROOT, found.root_hi, strict=True):
        assert lo <= true <= hi, (found.root_lo, TRUE_ROOT, found.root_hi)
        assert hi - lo < 2.0  # an interval narrow enough to mean something
    offsets = np.array(found.purses[1:]) - 30
    assert found.purses[0] == 30
    assert np.all(np.abs(offsets - TRUE_ROOT) < 1.0), found.purses
    assert found.residual_pp < 0.5
    assert [s.kind for s in found.steps][:3] == ["newton", "newton", "refine"]
    assert found.games == sum(len(s.points) * s.games for s in found.steps)


def test_the_root_interval_covers_the_truth_at_its_level_over_repeated_searches() -> None:
    """Over 100 searches on fresh seeds, each seat's 95% root interval holds the true
    root in at least 88% of them (95% expected; 88% is 3.2 binomial SEs below)."""
    plan = TunePlan(search_games=8_000, refine_games=16_000)
    hits = np.zeros(3)
    reps = 100
    for rep in range(reps):
        found = search_purses(StandIn(), BASE, plan, seed=1000 + rep)
        hits += [
            lo <= t <= hi for lo, t, hi in zip(found.root_lo, TRUE_ROOT, found.root_hi, strict=True)
        ]
    assert np.all(hits / reps >= 0.88), hits / reps


def test_two_players_search_and_a_second_seat_behind() -> None:
    """With two seats the root is one number; a second seat that starts ahead gets a
    negative offset (a smaller purse)."""
    shares = np.array([0.46, 0.54])
    found = search_purses(StandIn(shares), (30, 30), TunePlan(), seed=3)
    true = (np.log(0.46) - np.log(0.54)) / PER_DIRHAM  # -4.0
    assert found.root_lo[0] <= true <= found.root_hi[0]
    assert found.purses[1] - 30 in (np.floor(true), np.ceil(true))


def test_search_and_confirmation_seeds_are_disjoint() -> None:
    """Every seed the search played differs from the confirmatory seed of the same tune."""
    game = StandIn()
    search_purses(game, BASE, TunePlan(search_games=2000, refine_games=2000), seed=5)
    assert len(set(game.seeds)) == len(game.seeds) == 3
    assert seed_for(5, CONFIRM, 0) not in game.seeds
    assert game.seeds[0] == seed_for(5, SEARCH, 0)


def test_the_search_is_deterministic_by_seed() -> None:
    """The same tune seed gives the same path; another seed gives other games."""
    plan = TunePlan(search_games=3000, refine_games=3000)
    one = search_purses(StandIn(), BASE, plan, seed=9)
    assert one == search_purses(StandIn(), BASE, plan, seed=9)
    assert one.steps[0].points != search_purses(StandIn(), BASE, plan, seed=10).steps[0].points


def _confirm_draws(effects_pp: np.ndarray, games: int, reps: int, seed: int) -> list[SeatEffects]:
    """`reps` confirmatory runs of `games` single-game blocks with the given true effects."""
    p = 1.0 / len(effects_pp) + effects_pp / 100.0
    counts = np.random.default_rng(seed).multinomial(games, p, size=reps)
    out = []
    for c in counts:
        share = c / games
        cov = (np.diag(share) - np.outer(share, share)) / (games - 1)  # B/(B-1) sandwich
        out.append(
            SeatEffects(
                (30,) * len(p),
                tuple(100 * (share - 1 / len(p))),
                tuple(map(tuple, 1e4 * cov)),
                games,
                games,
            )
        )
    return out


def test_the_verdict_holds_its_error_rates_over_repeated_confirmations() -> None:
    """TOST with Bonferroni over 4 seats, alpha 0.05, margin 1 pp, 40,000 games:
    a seat truly at the margin (+1 pp) is called fair in at most alpha / 4 of 2,000
    simulated confirmations (plus 3 binomial SEs); with every seat truly even, all four
    are called fair about as often as the power computed from the normal model (within
    3 SEs), which is above 80%."""
    games, reps, margin, alpha = 40_000, 2000, 1.0, 0.05
    at_margin = _confirm_draws(np.array([1.0, -1 / 3, -1 / 3, -1 / 3]), games, reps, 1)
    wrong = np.mean([equivalence(e, margin, alpha)[0].fair for e in at_margin])
    bound = alpha / 4
    assert wrong <= bound + 3 * np.sqrt(bound * (1 - bound) / reps), wrong

    even = _confirm_draws(np.zeros(4), games, reps, 2)
    all_fair = np.mean([all(v.fair for v in equivalence(e, margin, alpha)) for e in even])
    se = 100 * np.sqrt(0.25 * 0.75 / games)
    z = sps.norm.ppf(1 - alpha / 4)
    one_seat = 2 * sps.norm.cdf(margin / se - z) - 1  # P(|e| < margin - z se) at e = 0
    # the seats are dependent (they sum to zero): the joint rate lies between the
    # product (independence) and the smallest one
    assert one_seat**4 - 3 * np.sqrt(0.25 / reps) <= all_fair <= one_seat + 0.01, (
        all_fair,
        one_seat,
    )
    assert all_fair > 0.8


def test_a_seat_known_unfair_is_called_unfair() -> None:
    """A seat 3 pp off with 20,000 games is never called fair within 1 pp."""
    draws = _confirm_draws(np.array([3.0, -1.0, -1.0, -1.0]), 20_000, 200, 3)
    assert not any(equivalence(e, 1.0)[0].fair for e in draws)


def _tunes(game: StandIn, reps: int) -> tuple[float, float, list[tuple[int, ...]]]:
    """`reps` whole tunes (search, then confirmation on fresh seeds) of a 2-seat stand-in:
    the share of them called fair at every seat, the share whose residual exceeds 1 pp,
    the purses each chose."""
    plan = TunePlan()  # the defaults: 20,000 games a search point, 40,000 to refine, confirm
    fair, coarse, chosen = 0, 0, []
    for rep in range(reps):
        found = search_purses(game, (30, 30), plan, seed=rep)
        [(_, verdicts)] = confirm_purses(game, [found.purses], rep, plan, 1.0)
        fair += all(v.fair for v in verdicts)
        coarse += found.residual_pp > 1.0
        chosen.append(found.purses)
    return fair / reps, coarse / reps, chosen


def test_whole_tunes_hold_the_verdicts_error_rates() -> None:
    """Over 200 whole tunes of a stand-in whose root is a whole 3 dirhams, the tune picks
    [30, 33] and the confirmation calls both seats fair within 1 pp in at least 90% (the
    power at 40,000 games is 96%); where one dirham moves a seat by 10 pp and the root is
    half-way between integers (no integer purse within 5 pp), no tune in 200 is called
    fair (at most alpha = 5% may be) and every one reports a residual above the margin."""
    even_at_3 = np.exp(np.array([0.0, -3 * PER_DIRHAM]))
    rate, _, chosen = _tunes(StandIn(even_at_3 / even_at_3.sum()), 200)
    assert rate >= 0.9, rate
    assert chosen.count((30, 33)) >= 190
    steep = 0.4  # log-odds per dirham: about 10 pp per dirham at even odds
    halfway = np.exp(np.array([0.0, -2.5 * steep]))
    rate, coarse, _ = _tunes(StandIn(halfway / halfway.sum(), per_dirham=steep), 200)
    assert rate == 0.0
    assert coarse == 1.0


@pytest.mark.parametrize(
    ("key", "value"),
    [("newton_steps", 0), ("search_games", 1), ("alpha", 1.5), ("step_dirhams", True)],
)
def test_a_bad_plan_value_is_a_one_line_error_naming_it(key: str, value: object) -> None:
    """TunePlan refuses a value out of range, naming the key and what is allowed."""
    with pytest.raises(ConfigError, match=rf"tune\.{key} = .*allowed") as info:
        TunePlan(**{key: value})  # type: ignore[arg-type]
    assert "\n" not in str(info.value)


class Line:
    """evaluate() of a noiseless 2-seat line: seat 2's effect is SLOPE pp per dirham of
    its offset from ROOT, each effect with the standard error `se_pp` (the covariance of
    two mirrored seats)."""

    def __init__(self, root: float, slope: float, se_pp: float) -> None:
        self.root, self.slope, self.var = root, slope, se_pp**2

    def __call__(
        self, purses: Sequence[tuple[int, ...]], seed: int, games: int
    ) -> list[SeatEffects]:
        out = []
        for p in purses:
            e = self.slope * (p[1] - p[0] - self.root)
            cov = ((self.var, -self.var), (-self.var, self.var))
            out.append(SeatEffects(tuple(p), (-e, e), cov, games, games))
        return out


def test_the_residual_comes_with_its_range_over_the_roots_interval() -> None:
    """On a line with root 2.3 dirhams and 2 pp per dirham, the best integer (2) leaves
    0.6 pp, and over the root's interval r +- h the residual runs from 2 (0.3 - h) to
    2 (0.3 + h) pp (the line's effect at the nearer integer, at either end)."""
    found = search_purses(Line(2.3, 2.0, 0.15), (30, 30), TunePlan(), seed=1)
    assert found.root[0] == pytest.approx(2.3)
    half = found.root_hi[0] - found.root[0]
    assert 0.02 < half < 0.2  # the interval stays inside the cell 2..3
    assert found.residual_pp == pytest.approx(0.6)
    assert found.residual_range_pp == pytest.approx((2 * (0.3 - half), 2 * (0.3 + half)))


def test_the_residual_sentence_says_what_the_fit_says_and_its_range() -> None:
    """A tune not shown fair states the fitted residual as the fit's figure with its range
    over the root's interval, never as a bound ("cannot get closer than")."""
    from marrakech_sim.design.tune_report import verdict_sentence
    from marrakech_sim.design.tuning import Replay

    line = Line(2.5, 4.0, 0.1)  # half-way: the best integers leave 2 pp
    plan = TunePlan()
    found = search_purses(line, (30, 30), plan, seed=2)
    [(effects, verdicts)] = confirm_purses(line, [found.purses], 2, plan, 1.0)
    text = verdict_sentence(Replay(None, effects, tuple(verdicts)), 1.0, found, plan.level)
    assert "cannot" not in text
    low, high = found.residual_range_pp or (math.nan, math.nan)
    assert low < found.residual_pp == pytest.approx(2.0) and high == pytest.approx(2.0)
    assert text.endswith(
        "the fitted model puts the best integer purses at about 2.00 pp from fair "
        f"({low:.2f} to 2.00 pp over the root's 95% interval)"
    )
