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
from marrakech_sim.stats.response import fit_response

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
