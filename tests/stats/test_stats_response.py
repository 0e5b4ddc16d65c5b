"""stats.response.fit_response: the fitted response curve of a seat and its band.

Known truth first: games simulated from a known win probability at each swept value,
with common random numbers (one uniform draw per game of a seed, shared by every value,
as a sweep's values share their dice), so the values' outcomes are strongly correlated
within a seed. The band must cover the truth at its stated rate, and be as wide as a
bootstrap over seeds says it should be.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from marrakech_sim import StatsInputError
from marrakech_sim.stats.response import fit_response, fit_seat_curves

VALUES = (10, 20, 30, 40, 50)
GRID = np.array([10.0, 25.0, 40.0, 50.0])


def truth(x: np.ndarray | float) -> np.ndarray:
    """A seat's win probability against the value: logit quadratic (the model's form)."""
    v = np.asarray(x, dtype="float64") - 30
    return 1.0 / (1.0 + np.exp(-(-1.1 + 0.02 * v - 0.0004 * v**2)))


def simulate(rng: np.random.Generator, blocks: int = 150, games: int = 4) -> pd.DataFrame:
    """Block totals: every value plays each seed's games with the same uniform draws."""
    u = rng.random((blocks, games))
    rows = [(v, b, float((u[b] < truth(v)).sum()), games) for b in range(blocks) for v in VALUES]
    return pd.DataFrame(rows, columns=["x", "cluster", "y", "n"])


def test_band_covers_the_known_truth_at_its_level() -> None:
    """Over 150 simulated sweeps the 95% band covers the true share at each of four
    values 88% to 99.5% of the time (binomial sd of the rate over 150 runs: 1.8 pp)."""
    rng = np.random.default_rng(20261204)
    target = truth(GRID)
    covered = np.zeros(len(GRID))
    runs = 150
    for _ in range(runs):
        fit = fit_response(simulate(rng), grid=GRID)
        covered += (fit["lo"].to_numpy() <= target) & (target <= fit["hi"].to_numpy())
    rate = covered / runs
    assert ((rate >= 0.88) & (rate <= 0.995)).all(), rate


def test_band_width_matches_a_bootstrap_over_seeds() -> None:
    """The band's width agrees with the 2.5-97.5% range of 200 bootstrap fits that
    resample whole seeds (all values of a seed together), within 25%."""
    rng = np.random.default_rng(7)
    data = simulate(rng, blocks=300)
    fit = fit_response(data, grid=GRID)
    by_seed = [part for _, part in data.groupby("cluster")]
    shares = []
    for _ in range(200):
        pick = rng.integers(0, len(by_seed), len(by_seed))
        sample = pd.concat(
            [by_seed[i].assign(cluster=j) for j, i in enumerate(pick)], ignore_index=True
        )
        shares.append(fit_response(sample, grid=GRID)["share"].to_numpy())
    boot = np.quantile(np.array(shares), [0.025, 0.975], axis=0)
    ratio = (fit["hi"] - fit["lo"]).to_numpy() / (boot[1] - boot[0])
    assert ((ratio > 0.8) & (ratio < 1.25)).all(), ratio


def test_the_seeds_shared_by_the_values_are_the_clusters() -> None:
    """Read as one cluster per row (independent values), the same data give a band of
    another width: the clustering is what the band rests on."""
    data = simulate(np.random.default_rng(3), blocks=300)
    clustered = fit_response(data, grid=GRID)
    apart = fit_response(data.assign(cluster=np.arange(len(data))), grid=GRID)
    np.testing.assert_allclose(clustered["share"], apart["share"])
    assert not np.allclose(clustered["hi"] - clustered["lo"], apart["hi"] - apart["lo"], rtol=0.05)


def test_three_values_are_fitted_exactly() -> None:
    """With three values the quadratic has as many terms as values: the curve passes
    through each value's observed share."""
    data = simulate(np.random.default_rng(5), blocks=50)
    data = data.loc[data["x"].isin([10, 30, 50])]
    fit = fit_response(data, grid=np.array([10.0, 30.0, 50.0]))
    observed = data.groupby("x")["y"].sum() / data.groupby("x")["n"].sum()
    np.testing.assert_allclose(fit["share"], observed.to_numpy(), rtol=1e-6)


def test_a_seat_that_never_wins_has_no_curve() -> None:
    """No wins at all: the fit is not defined, and the rows say so with NaN."""
    data = simulate(np.random.default_rng(1), blocks=20).assign(y=0.0)
    fit = fit_response(data, grid=GRID)
    assert fit["share"].isna().all() and fit["lo"].isna().all()


@pytest.mark.parametrize(
    "bad",
    [
        pd.DataFrame({"x": [1.0], "cluster": [0], "y": [2.0], "n": [1.0]}),
        pd.DataFrame({"x": [1.0], "cluster": [0], "y": [0.0], "n": [0.0]}),
        pd.DataFrame({"x": [], "cluster": [], "y": [], "n": []}),
    ],
)
def test_bad_blocks_are_refused(bad: pd.DataFrame) -> None:
    """Wins above the games, a block without games, or no block: StatsInputError."""
    with pytest.raises(StatsInputError, match="blocks"):
        fit_response(bad)


# ---------------------------------------------------------------- every seat of a sweep together

SEAT_TRUTHS = ((-1.1, 0.02, -0.0004), (-1.0, -0.015, 0.0003), (-1.2, 0.01, 0.0002))
FAIR = 0.3  # the level the seats' effects are measured from (not a real game's 1/3)


def seat_truth(c: tuple[float, float, float], x: np.ndarray | float) -> np.ndarray:
    v = np.asarray(x, dtype="float64") - 30
    return 1.0 / (1.0 + np.exp(-(c[0] + c[1] * v + c[2] * v**2)))


def simulate_seats(
    rng: np.random.Generator,
    blocks: int = 100,
    games: int = 4,
    bump: float = 0.0,
) -> pd.DataFrame:
    """Games of four seats with one winner each, read from one uniform per game of a seed
    at every value (common random numbers): seats 0-2 win with the known SEAT_TRUTHS, the
    fourth with what is left, and only seats 0-2 are returned (their curves depend on each
    other as a game's seats do: one seat's win is another's loss). ``bump`` adds to seat
    0's share at the middle value (a response the quadratic cannot follow)."""
    u = rng.random((blocks, games))
    rows = []
    for v in VALUES:
        p = np.array([seat_truth(c, v) for c in SEAT_TRUTHS])
        p[0] += bump if v == 30 else 0.0
        winner = np.searchsorted(np.cumsum(p), u)  # 3: the fourth seat
        for seat in range(3):
            wins = (winner == seat).sum(axis=1).astype("float64")
            rows.extend((seat, v, b, wins[b], games) for b in range(blocks))
    return pd.DataFrame(rows, columns=["seat", "x", "cluster", "y", "n"])


def test_the_joint_fit_gives_each_seat_its_own_clustered_band() -> None:
    """The joint sandwich's diagonal blocks are each seat's own clustered covariance
    (statsmodels' cov_type='cluster', small-sample factor included): the pointwise band
    equals fit_response's for each seat."""
    data = simulate_seats(np.random.default_rng(11))
    joint = fit_seat_curves(data, FAIR, grid=GRID)
    for seat in range(3):
        own = fit_response(data.loc[data["seat"] == seat], grid=GRID)
        got = joint.curves.loc[joint.curves["seat"] == seat]
        for col in ("share", "lo", "hi"):
            np.testing.assert_allclose(got[col].to_numpy(), own[col].to_numpy(), rtol=1e-7)


def test_simultaneous_band_fairest_value_and_lack_of_fit_keep_their_levels() -> None:
    """Known truth, 120 simulated sweeps of three seats of a game: the simultaneous band
    covers all three whole curves together 90-99% of the time, where the pointwise band
    does so clearly less often; the fairest value's interval covers the true fairest value
    at least 88% of the time; the lack-of-fit test (Bonferroni over the seats) rejects the
    true quadratic at most 9% of the time (5% nominal; sd over 120 runs 2 pp)."""
    rng = np.random.default_rng(20261205)
    grid = np.linspace(10.0, 50.0, 41)
    truth = np.stack([seat_truth(c, grid) for c in SEAT_TRUTHS])
    fairest = grid[np.argmin(np.abs(truth - FAIR).max(axis=0))]
    runs = 120
    band = pointwise = located = rejected = 0
    for _ in range(runs):
        fit = fit_seat_curves(simulate_seats(rng), FAIR, grid=grid, draws=2000)
        c = fit.curves
        lo, hi = (c[k].to_numpy().reshape(3, -1) for k in ("band_lo", "band_hi"))
        plo, phi = (c[k].to_numpy().reshape(3, -1) for k in ("lo", "hi"))
        band += bool(((lo <= truth) & (truth <= hi)).all())
        pointwise += bool(((plo <= truth) & (truth <= phi)).all())
        located += fit.fairest_lo <= fairest <= fit.fairest_hi
        rejected += fit.lack_p < 0.05
        assert fit.crit > 1.96
    assert 0.90 <= band / runs <= 0.99, band
    assert pointwise / runs < band / runs - 0.08, (pointwise, band)
    assert located / runs >= 0.88, located
    assert rejected / runs <= 0.09, rejected


def test_lack_of_fit_finds_a_response_the_quadratic_cannot_follow() -> None:
    """A bump of 8 pp at the middle value: the lack-of-fit test rejects in at least 24 of
    30 simulated sweeps."""
    rng = np.random.default_rng(3)
    rejected = sum(
        fit_seat_curves(simulate_seats(rng, bump=0.08), FAIR, grid=GRID, draws=500).lack_p < 0.05
        for _ in range(30)
    )
    assert rejected >= 24, rejected


def test_lack_of_fit_agrees_with_the_likelihood_ratio_on_independent_games() -> None:
    """With one game per seed and no dice shared across values, the clustered Wald
    statistic of the terms the quadratic leaves out agrees with the likelihood-ratio
    statistic of the quadratic against the per-value model (statsmodels deviances)
    within 25%."""
    import statsmodels.api as sm

    rng = np.random.default_rng(17)
    x = np.repeat(np.array(VALUES, dtype="float64"), 3000)
    p = seat_truth(SEAT_TRUTHS[0], x) + 0.03 * np.sin(x / 7.0)
    y = (rng.random(len(x)) < p).astype("float64")
    data = pd.DataFrame({"seat": 0, "x": x, "cluster": np.arange(len(x)), "y": y, "n": 1.0})
    fit = fit_seat_curves(data, FAIR, grid=GRID, draws=200)
    endog = np.column_stack([y, 1.0 - y])
    z = (x - 30.0) / 20.0
    quad = sm.GLM(endog, np.column_stack([z**0, z, z**2]), family=sm.families.Binomial()).fit()
    dummies = pd.get_dummies(x).to_numpy(dtype="float64")
    per_value = sm.GLM(endog, dummies, family=sm.families.Binomial()).fit()
    lr = quad.deviance - per_value.deviance
    wald = float(fit.seats["lack_chi2"].iloc[0])
    assert 0.8 < wald / lr < 1.25, (wald, lr)
    assert int(fit.seats["lack_df"].iloc[0]) == 2


def test_two_seats_share_one_band() -> None:
    """Two seats whose shares sum to one: the second curve is the first's mirror, so the
    joint band's critical value is that of one seat alone (the dependence is used), not
    the larger one of two independent seats."""
    one = simulate(np.random.default_rng(9), blocks=200).assign(seat=0)
    two = pd.concat([one, one.assign(seat=1, y=one["n"] - one["y"])], ignore_index=True)
    alone = fit_seat_curves(one, 0.5, grid=GRID).crit
    both = fit_seat_curves(two, 0.5, grid=GRID).crit
    apart = pd.concat([one, simulate(np.random.default_rng(10), blocks=200).assign(seat=1)])
    independent = fit_seat_curves(apart, 0.5, grid=GRID).crit
    assert abs(both - alone) < 0.05 * alone, (both, alone)
    assert independent > both + 0.05, (independent, both)


def test_a_value_where_a_seat_always_wins_is_a_lack_of_fit() -> None:
    """Two seats; seat 0 wins every game at the first value and half of them elsewhere:
    no logistic quadratic passes through a share of 1, and the per-value Wald test cannot
    see it (its coefficient runs off to infinity), so the curve is rejected and the verdict
    reads the points. With a share just below 1 the Wald test itself rejects."""
    rng = np.random.default_rng(11)
    values = np.array([0.0, 10.0, 20.0, 30.0, 40.0])
    blocks = 400
    rows = []
    for v in values:
        win = np.ones(blocks) if v == 0 else (rng.random(blocks) < 0.5).astype("float64")
        rows += [(0, v, b, win[b], 1.0) for b in range(blocks)]
        rows += [(1, v, b, 1.0 - win[b], 1.0) for b in range(blocks)]
    data = pd.DataFrame(rows, columns=["seat", "x", "cluster", "y", "n"])
    fit = fit_seat_curves(data, 0.5, grid=values, draws=200)
    assert fit.lack_p == 0.0
    assert np.isinf(fit.seats["lack_chi2"]).all()
    nearly = data.copy()
    first = (nearly["x"] == 0) & (nearly["cluster"] < 2)  # two of 400 games lost
    nearly.loc[first, "y"] = 1.0 - nearly.loc[first, "y"]
    assert fit_seat_curves(nearly, 0.5, grid=values, draws=200).lack_p < 1e-6
