"""Statistics layer: intervals, win rates, head-to-head, faults, seat advantage, power,
distributions. Rating and variant tests live in test_stats_ratings.py and
test_stats_variants.py.

Statistical tests run on fixed seeds, so they are deterministic; each states the
tolerance it was designed with (usually about 3 binomial standard deviations), so a
change of seed should pass too.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint
from synthetic_games import (
    combine_runs,
    hand_tables,
    make_run,
    make_turn_scores,
    null_block_totals,
    seat_effects_for_share,
)

from marrakech_sim.stats import (
    LINEUP_SEP,
    StatsInputError,
    equal_share_tests,
    estimators,
    fault_counts,
    flag_underpowered,
    head_to_head,
    length_summary,
    lineup_win_rates,
    margin_summary,
    plan_seat_advantage,
    plan_variant_difference,
    score_over_turns,
    seat_block_totals,
    seat_tests,
    seat_win_shares,
    summarize,
    tie_summary,
    wilson_interval,
    win_rates,
    with_lineup,
)

FOUR = {"a": 0.0, "b": 0.0, "c": 0.0, "d": 0.0}


# ---------------------------------------------------------------- intervals


@pytest.mark.parametrize(
    ("x", "n", "lo", "hi"),
    [
        # Hand-computed from Wilson's formula with z = 1.959964.
        (8, 10, 0.4901625, 0.9433178),
        (0, 10, 0.0, 0.2775328),
        (50, 100, 0.4038315, 0.5961685),
    ],
)
def test_wilson_hand_values(x: int, n: int, lo: float, hi: float) -> None:
    """The Wilson interval matches hand-computed bounds to 1e-6."""
    got = wilson_interval(x, n)
    assert got == pytest.approx((lo, hi), abs=1e-6)


def test_wilson_vectorised_matches_statsmodels() -> None:
    """Array input gives statsmodels' Wilson bounds elementwise, NaN where n is 0."""
    x = np.array([0.0, 3.5, 7.0, 12.0, 0.0])
    n = np.array([5.0, 10.0, 7.0, 40.0, 0.0])
    lo, hi = wilson_interval(x, n, level=0.9)
    ref_lo, ref_hi = proportion_confint(x[:4], n[:4], alpha=0.1, method="wilson")
    np.testing.assert_allclose(lo[:4], ref_lo, atol=1e-12)
    np.testing.assert_allclose(hi[:4], ref_hi, atol=1e-12)
    assert np.isnan(lo[4]) and np.isnan(hi[4])


def test_wilson_with_a_quantile_of_its_own() -> None:
    """`crit` replaces the normal quantile: Wilson's formula with z = crit (here a t
    quantile on 4 degrees of freedom), by hand; a quantile past the normal's range gives
    the formula's limit, [0, 1]."""
    crit = float(sps.t.ppf(0.975, 4))
    x, n = 8.0, 10.0
    p, z2 = x / n, crit**2
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = crit * np.sqrt(p * (1 - p) / n + z2 / (4 * n**2)) / (1 + z2 / n)
    assert wilson_interval(x, n, crit=crit) == pytest.approx((centre - half, centre + half))
    assert wilson_interval(x, n, crit=1e3) == (0.0, 1.0)


# ---------------------------------------------------------------- win rates


def small_tournament() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Four hand-made 3-player games, one shared win, one error game."""
    return hand_tables(
        [
            {"seats": [("a", 50, 40), ("b", 45, 30), ("c", 40, 30)]},
            {"seats": [("b", 50, 40), ("a", 50, 40), ("c", 30, 30)]},  # a and b share
            {"seats": [("c", 60, 40), ("a", 45, 30), ("b", None, 0)]},  # b bankrupt
            {
                "seats": [("a", 50, 40), ("b", 45, 30), ("c", 40, 30)],
                "error": "seat 2 (strategy c): ValueError: no legal placement",
            },
        ]
    )


def test_win_rates_hand_counts() -> None:
    """Wins are summed win shares over non-error games, with the games they rest on."""
    games, seats = small_tournament()
    tab = win_rates(games, seats).set_index("strategy")
    assert tab.loc["a", "wins"] == pytest.approx(1.5)
    assert tab.loc["b", "wins"] == pytest.approx(0.5)
    assert tab.loc["c", "wins"] == pytest.approx(1.0)
    assert (tab["n_games"] == 3).all() and (tab["n_blocks"] == 3).all()
    assert tab.loc["a", "rate"] == pytest.approx(0.5)
    assert tab["fair_share"].to_numpy() == pytest.approx(1 / 3)


def test_win_rate_interval_single_game_blocks_is_wilson() -> None:
    """With one game per block and no shared wins the interval is Wilson at n - 1 games.

    The block variance carries the B/(B-1) small-sample factor, so n_eff = n - 1 exactly.
    """
    games, seats = make_run({"a": 0.4, "b": 0.0}, 300, players=2, rotate=False, seed=3)
    tab = win_rates(games, seats).set_index("strategy")
    for name in ("a", "b"):
        row = tab.loc[name]
        n = row["n_seat_games"]
        assert row["n_eff"] == pytest.approx(n - 1)
        lo, hi = wilson_interval(row["rate"] * (n - 1), n - 1)
        assert (row["lo"], row["hi"]) == pytest.approx((lo, hi), abs=1e-12)


def test_lineup_labels_are_sorted_multisets() -> None:
    """A line-up is the sorted strategies of a match, repeats kept, however seated."""
    games, seats = make_run(
        {"x": 0.0, "y": 0.0}, 4, players=3, lineups=[("y", "x", "y"), ("x", "x", "y")]
    )
    labelled = with_lineup(games, seats)
    assert set(labelled["lineup"]) == {LINEUP_SEP.join("xyy"), LINEUP_SEP.join("xxy")}
    tab = lineup_win_rates(games, seats)
    assert set(tab["lineup"]) == set(labelled["lineup"])
    # x in x|x|y is seated twice per game: seat-games double the games.
    row = tab.set_index(["lineup", "strategy"]).loc[(LINEUP_SEP.join("xxy"), "x")]
    assert row["n_seat_games"] == 2 * row["n_games"]


def test_planted_strength_shows_in_win_rates() -> None:
    """A strategy planted stronger has a win rate whose interval lies above the fair share."""
    games, seats = make_run({"strong": 0.7, "b": 0.0, "c": 0.0, "d": 0.0}, 400, seed=11)
    tab = win_rates(games, seats).set_index("strategy")
    assert tab.loc["strong", "lo"] > 0.25
    assert tab.loc["b", "lo"] < 0.25 < tab.loc["b", "hi"] + 0.05


def test_head_to_head_hand_values() -> None:
    """A ahead of B scores 1, a shared rank 1/2; the two directions sum to one."""
    games, seats = small_tournament()
    tab = head_to_head(games, seats).set_index(["strategy", "opponent"])
    # a vs b: ahead, tied (shared win), ahead (b bankrupt) -> 2.5 / 3
    assert tab.loc[("a", "b"), "ahead"] == pytest.approx(2.5)
    assert tab.loc[("a", "b"), "rate"] == pytest.approx(2.5 / 3)
    assert tab.loc[("a", "b"), "tied_pairs"] == 1
    assert tab.loc[("b", "a"), "rate"] == pytest.approx(0.5 / 3)
    assert tab.loc[("c", "a"), "rate"] == pytest.approx(1 / 3)
    both = tab["rate"] + tab.swaplevel().reindex(tab.index)["rate"].to_numpy()
    assert both.to_numpy() == pytest.approx(1.0)
    assert (tab["n_games"] == 3).all()


def test_head_to_head_averages_over_repeated_seats() -> None:
    """A strategy seated twice scores the mean over its seat pairs in that game."""
    games, seats = hand_tables([{"seats": [("a", 50, 40), ("b", 45, 30), ("a", 40, 30)]}])
    tab = head_to_head(games, seats).set_index(["strategy", "opponent"])
    assert tab.loc[("a", "b"), "rate"] == pytest.approx(0.5)
    assert tab.loc[("a", "b"), "n_pairs"] == 2


def test_fault_counts_attribute_errors_to_strategies() -> None:
    """Errors count against the strategy named in the error text, or 'unattributed'."""
    games, seats = hand_tables(
        [
            {
                "seats": [("a", 50, 40), ("greedy(v2)", 45, 30)],
                "error": "seat 1 (strategy greedy(v2)): boom",
            },
            {"seats": [("a", 50, 40), ("greedy(v2)", 45, 30)], "error": "worker died"},
            {"seats": [("a", 50, 40), ("greedy(v2)", 45, 30)]},
        ]
    )
    tab = fault_counts(games, seats).set_index("strategy")
    assert tab.loc["greedy(v2)", "n_errors"] == 1
    assert tab.loc["greedy(v2)", "n_games"] == 3
    assert tab.loc["a", "n_errors"] == 0
    assert tab.loc["<unattributed>", "n_errors"] == 1
    assert tab.loc["greedy(v2)", "error_rate"] == pytest.approx(1 / 3)


def test_missing_column_is_reported() -> None:
    """A table without a needed column raises StatsInputError naming it."""
    games, seats = small_tournament()
    with pytest.raises(StatsInputError, match="block"):
        win_rates(games.drop(columns="block"), seats)


# ---------------------------------------------------------------- seat advantage


def test_planted_seat_advantage_is_detected() -> None:
    """A 5-point seat-0 advantage is found: interval, chi-square and trend all exclude 0."""
    games, seats = make_run(FOUR, 1000, seat_effects=seat_effects_for_share(4, 0.30), seed=5)
    shares = seat_win_shares(games, seats)
    seat0 = shares.iloc[0]
    assert seat0["effect_lo_pp"] > 0
    # Planted 5 pp; the estimate should sit within its own 95% interval of it.
    assert seat0["effect_lo_pp"] < 5.0 < seat0["effect_hi_pp"]
    assert shares["share"].sum() == pytest.approx(1.0)
    assert (shares["n_games"] == 4000).all() and (shares["n_blocks"] == 1000).all()
    tests = seat_tests(games, seats).iloc[0]
    assert tests["p_block"] < 1e-3
    assert tests["trend_p"] < 1e-3 and tests["trend_pp"] < 0


def test_seat_tests_are_calibrated_under_block_correlation() -> None:
    """Under no seat advantage but correlated blocks, the block-aware tests reject at ~5%.

    200 null datasets of 200 blocks (a line-up of strengths ~ N(0, 0.3) in 4 rotations;
    shared dice in 70% of games). In a 4000-dataset study the rates were 0.059 (equal
    shares), 0.052 (trend) and 0.28 (Pearson, independent games assumed).
    Tolerance: rejection rate in [0.015, 0.095], about +-3 binomial sd around 0.05.
    The Pearson test that assumes independent games is shown to over-reject (> 0.15),
    which is why the block-aware test exists.
    """
    rng = np.random.default_rng(20240601)
    p_block, p_trend, p_pearson = [], [], []
    for _ in range(200):
        totals, n = null_block_totals(rng, 200)
        res = equal_share_tests(totals, n)
        p_block.append(res["p_block"])
        p_trend.append(res["trend_p"])
        p_pearson.append(res["p_pearson"])
    assert 0.015 <= np.mean(np.array(p_block) < 0.05) <= 0.095
    assert 0.015 <= np.mean(np.array(p_trend) < 0.05) <= 0.095
    assert np.mean(np.array(p_pearson) < 0.05) > 0.15


def test_seat_interval_coverage_under_block_correlation() -> None:
    """Block-aware 95% seat-share intervals cover the true 1/4 in 95% of null datasets.

    200 datasets as above; tolerance: coverage of seat 0 in [0.905, 0.985] (about 3 sd).
    """
    rng = np.random.default_rng(7)
    covered = 0
    for _ in range(200):
        totals, n = null_block_totals(rng, 200)
        p = totals[:, 0].sum() / n.sum()
        resid = totals[:, 0] - n * p
        b = len(n)
        var = b / (b - 1) * (resid @ resid) / n.sum() ** 2
        n_eff = p * (1 - p) / var
        lo, hi = wilson_interval(p * n_eff, n_eff)
        covered += lo <= 0.25 <= hi
    assert 0.905 <= covered / 200 <= 0.985


def test_trend_matches_statsmodels_clustered_ols() -> None:
    """The trend slope and its clustered SE equal statsmodels OLS with cluster=block."""
    games, seats = make_run(
        {"a": 0.5, "b": 0.0, "c": -0.5},
        60,
        players=3,
        seat_effects=[0.2, 0.0, -0.1],
        shared_dice=0.5,
        tie_rate=0.1,
        seed=2,
    )
    res = seat_tests(games, seats).iloc[0]
    rows = seats.merge(games[["game_id", "block"]], on="game_id")
    x = sm.add_constant(rows["seat"].to_numpy(dtype="float64"))
    fit = sm.OLS(rows["win_share"].to_numpy(dtype="float64"), x).fit(
        cov_type="cluster", cov_kwds={"groups": rows["block"].to_numpy()}
    )
    n, k = x.shape
    # statsmodels' small-sample factor is G/(G-1) * (N-1)/(N-K); ours is G/(G-1).
    se_ours = res["trend_se_pp"] / 100
    assert res["trend_pp"] / 100 == pytest.approx(fit.params[1], rel=1e-10)
    assert se_ours * math.sqrt((n - 1) / (n - k)) == pytest.approx(fit.bse[1], rel=1e-8)


def test_seat_share_variance_matches_statsmodels_cluster() -> None:
    """A seat's block-clustered share variance equals statsmodels' clustered mean."""
    games, seats = make_run(FOUR, 80, shared_dice=0.6, tie_rate=0.1, seed=4)
    shares = seat_win_shares(games, seats)
    rows = seats.merge(games[["game_id", "block"]], on="game_id")
    seat0 = rows.loc[rows["seat"] == 0]
    y = seat0["win_share"].to_numpy(dtype="float64")
    fit = sm.OLS(y, np.ones_like(y)).fit(
        cov_type="cluster", cov_kwds={"groups": seat0["block"].to_numpy()}
    )
    p = shares.iloc[0]["share"]
    assert p == pytest.approx(fit.params[0])
    assert p * (1 - p) / shares.iloc[0]["n_eff"] == pytest.approx(fit.bse[0] ** 2, rel=1e-8)


def test_seat_tests_equal_numpy_path() -> None:
    """seat_tests on tables gives what equal_share_tests gives on the block totals."""
    games, seats = make_run(FOUR, 50, seed=9, error_rate=0.05)
    totals, n = seat_block_totals(games, seats)[(4, "standard")]
    assert seat_tests(games, seats).iloc[0]["chi2_block"] == pytest.approx(
        equal_share_tests(totals, n)["chi2_block"]
    )
    assert n.sum() == (games["end_reason"] != "error").sum()


def test_pearson_reference_matches_scipy() -> None:
    """The independent-games chi-square is scipy's chisquare on the seat win totals."""
    totals = np.array([[3.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0], [2.0, 0.0, 2.0, 0.0]])
    res = equal_share_tests(totals, np.full(3, 4.0))
    ref = sps.chisquare([6.0, 2.0, 3.0, 1.0])
    assert res["chi2_pearson"] == pytest.approx(ref.statistic)
    assert res["p_pearson"] == pytest.approx(ref.pvalue)


def test_ties_reported_separately() -> None:
    """Shared wins and tie-break wins are counted per group and per seat."""
    games, seats = hand_tables(
        [
            {"seats": [("a", 50, 40), ("b", 50, 40)]},  # shared
            {"seats": [("a", 50, 41), ("b", 50, 40)]},  # tie-break for seat 0
            {"seats": [("a", 40, 30), ("b", 50, 40)]},
            {"seats": [("a", 50, 40), ("b", 30, 20)]},
        ]
    )
    ties = tie_summary(games, seats).iloc[0]
    assert (ties["n_games"], ties["shared_wins"], ties["tie_broken"]) == (4, 1, 1)
    assert ties["shared_rate"] == pytest.approx(0.25)
    shares = seat_win_shares(games, seats).set_index("seat")
    assert shares.loc[0, "wins"] == pytest.approx(2.5)
    assert (shares.loc[0, "outright_wins"], shares.loc[0, "shared_wins"]) == (2, 1)
    assert shares.loc[0, "tie_broken_wins"] == 1 and shares.loc[1, "tie_broken_wins"] == 0


# ---------------------------------------------------------------- power


def test_plan_seat_advantage_hand_formula() -> None:
    """Games for a seat advantage follow n = ((z_a/2 + z_b) / h)^2 with Cohen's h."""
    h = 2 * math.asin(math.sqrt(0.26)) - 2 * math.asin(math.sqrt(0.25))
    z = sps.norm.ppf(0.975) + sps.norm.ppf(0.8)
    expected = math.ceil((z / h) ** 2)
    row = plan_seat_advantage(players=4, effect=0.01).iloc[0]
    # solve_power is iterative; allow one game either side of the closed form.
    assert abs(row["n_games"] - expected) <= 1
    assert row["n_blocks"] == row["n_games"]


def test_planned_games_give_the_power_asked() -> None:
    """Simulated at the planned size, the test rejects in 80% of studies (tolerance 0.03).

    4000 binomial studies of seat 0 winning 0.27 vs 0.25 at the planned n.
    """
    n = int(plan_seat_advantage(players=4, effect=0.02).iloc[0]["n_games"])
    rng = np.random.default_rng(1)
    wins = rng.binomial(n, 0.27, size=4000)
    h = 2 * np.arcsin(np.sqrt(wins / n)) - 2 * np.arcsin(math.sqrt(0.25))
    reject = np.abs(h * math.sqrt(n)) > sps.norm.ppf(0.975)
    assert abs(reject.mean() - 0.8) < 0.03


def test_plan_scales_with_design_effect_and_blocks() -> None:
    """A design effect multiplies the games; they round up to whole blocks."""
    base = plan_seat_advantage(players=4, effect=[0.01, 0.02])
    blocked = plan_seat_advantage(players=4, effect=[0.01, 0.02], design_effect=2.0, block_size=4)
    assert (blocked["n_games"] % 4 == 0).all()
    assert (blocked["n_games"] >= 2 * base["n_games_independent"]).all()
    assert (blocked["n_games"] - 2 * base["n_games_independent"] < 4 + 2).all()
    assert base.iloc[1]["n_games"] < base.iloc[0]["n_games"] / 3


def test_plan_variant_difference_two_samples() -> None:
    """Games per variant use the two-sample normal power of statsmodels (ratio 1)."""
    h = 2 * math.asin(math.sqrt(0.26)) - 2 * math.asin(math.sqrt(0.25))
    z = sps.norm.ppf(0.975) + sps.norm.ppf(0.8)
    row = plan_variant_difference(players=4, effect=0.01).iloc[0]
    assert abs(row["n_games_per_variant"] - math.ceil(2 * (z / h) ** 2)) <= 1
    assert row["n_games_total"] == 2 * row["n_games_per_variant"]


def test_plan_rejects_impossible_share() -> None:
    """An effect that pushes the share outside (0, 1) raises with the value quoted."""
    with pytest.raises(StatsInputError, match=r"1\.1"):
        plan_seat_advantage(players=2, effect=0.6)


def test_flag_underpowered_hand_case() -> None:
    """Half-width above the effect flags the claim; n scales by (half-width/effect)^2."""
    claims = pd.DataFrame(
        {
            "effect": [1.0, 3.0, 0.0],
            "lo": [-0.5, 2.0, -1.0],
            "hi": [2.5, 4.0, 1.0],
            "n_games": [100] * 3,
        }
    )
    out = flag_underpowered(claims, "effect", "lo", "hi")
    assert out["underpowered"].tolist() == [True, False, True]
    assert out["half_width"].tolist() == [1.5, 1.0, 1.0]
    assert out["n_to_settle"].iloc[0] == 225
    assert out["n_more"].iloc[0] == 125 and out["n_more"].iloc[1] == 0
    assert math.isinf(out["n_to_settle"].iloc[2])


def test_flag_underpowered_on_seat_table() -> None:
    """A tiny study's seat effects are flagged, a large study's planted one is not."""
    small = make_run(FOUR, 20, seat_effects=seat_effects_for_share(4, 0.3), seed=1)
    large = make_run(FOUR, 2000, seat_effects=seat_effects_for_share(4, 0.3), seed=1)
    for (games, seats), expect in ((small, True), (large, False)):
        table = flag_underpowered(
            seat_win_shares(games, seats), "effect_pp", "effect_lo_pp", "effect_hi_pp"
        )
        assert bool(table.iloc[0]["underpowered"]) is expect


# ---------------------------------------------------------------- distributions


def test_summarize_hand_values() -> None:
    """Counts, mean, sd and quantiles per group match numpy on a hand table."""
    table = pd.DataFrame(
        {
            "ruleset": ["x"] * 5 + ["y"] * 3,
            "block": [0, 0, 1, 1, 2, 3, 3, 4],
            "margin": [1.0, 2.0, 3.0, 4.0, np.nan, 10.0, 20.0, 30.0],
        }
    )
    out = summarize(table, "margin").set_index("ruleset")
    assert out.loc["x", "n"] == 4 and out.loc["x", "n_missing"] == 1
    assert out.loc["x", "n_blocks"] == 2
    assert out.loc["x", "mean"] == pytest.approx(2.5)
    assert out.loc["x", "sd"] == pytest.approx(np.std([1, 2, 3, 4], ddof=1))
    assert out.loc["y", "q50"] == pytest.approx(20.0)
    assert out.loc["y", "q5"] == pytest.approx(np.quantile([10, 20, 30], 0.05))


def test_margin_and_length_summaries() -> None:
    """Margin and length summaries read game_metrics columns per rule set."""
    from marrakech_sim.stats import game_metrics

    games, seats = combine_runs(
        [make_run(FOUR, 30, ruleset="r1", tie_rate=0.2), make_run(FOUR, 30, ruleset="r2", seed=2)]
    )
    metrics = game_metrics(games, seats)
    margins = margin_summary(metrics)
    lengths = length_summary(metrics)
    assert list(margins["ruleset"]) == ["r1", "r2"]
    assert (lengths["n"] == 120).all()
    assert margins.set_index("ruleset").loc["r1", "min"] == 0.0  # shared wins have margin 0


def test_score_over_turns_means_and_counts() -> None:
    """Per (seat, turn) means equal a plain groupby; counts fall as games end."""
    games, seats = make_run(FOUR, 15, bankrupt_rate=0.3, error_rate=0.1, seed=8)
    turn_scores = make_turn_scores(games, seats)
    out = score_over_turns(turn_scores, games)
    plain = turn_scores.groupby(["seat", "turn"])["score"].mean()
    got = out.set_index(["seat", "turn"])["mean"]
    np.testing.assert_allclose(got.to_numpy(), plain.reindex(got.index).to_numpy())
    seat0 = out.loc[out["seat"] == 0]
    assert seat0["n_games"].iloc[0] == (games["end_reason"] != "error").sum()
    assert seat0["n_games"].is_monotonic_decreasing
    assert (out["lo"] <= out["mean"]).all() and (out["mean"] <= out["hi"]).all()


def test_prospective_power_matches_statsmodels() -> None:
    """The 80%-power detectable effect and games at a stated effect agree with statsmodels.

    Tolerance 1e-4 relative: statsmodels also counts the far tail's tiny rejection chance.
    """
    from statsmodels.stats.power import NormalIndPower

    from marrakech_sim.stats import prospective_power

    p, n, target = 0.25, 20_000.0, 0.01
    sd = math.sqrt(p * (1 - p))
    claims = pd.DataFrame({"se": [sd / math.sqrt(n)], "n": [n], "target": [target]})
    out = prospective_power(claims, "se", "n", "target").iloc[0]
    h = NormalIndPower().solve_power(nobs1=n, alpha=0.05, power=0.8, ratio=0.0)
    assert out["mde"] == pytest.approx(h * sd, rel=1e-4)
    n_ref = NormalIndPower().solve_power(effect_size=target / sd, alpha=0.05, power=0.8, ratio=0)
    assert out["n_for_power"] == pytest.approx(n_ref, rel=1e-4, abs=1.0)
    assert out["detectable"] == (out["mde"] <= target)


@pytest.mark.parametrize(("bend", "fits"), [(0.0, True), (0.06, False)])
def test_a_lines_lack_of_fit_is_hotellings_test_of_the_curvature_contrasts(
    bend: float, fits: bool
) -> None:
    """Blocks of 6 games, 4 seats whose true shares lie on a line (bend 0) or bend: the
    lack-of-fit F is Hotelling's T^2 of the two contrasts orthogonal to (1, seat) on the
    blocks' seat shares, F-scaled, by hand; a bend shows, a line does not."""
    rng = np.random.default_rng(11)
    blocks, k = 800, 4
    seat = np.arange(k, dtype="float64")
    truth = 0.25 + 0.02 * (1.5 - seat) + bend * np.array([1, -1, -1, 1]) / 4
    shares = rng.dirichlet(truth * 60, size=blocks)
    n = np.full(blocks, 6.0)
    got = estimators.equal_share_tests_from_sums(**estimators.equal_share_sums(shares * 6, n))
    contrasts = np.array([[1.0, -1.0, -1.0, 1.0], [-1.0, 3.0, -3.0, 1.0]])  # (1, seat)-free
    mean, cov = shares.mean(axis=0), np.cov(shares, rowvar=False) / blocks
    c = contrasts @ mean
    t2 = float(c @ np.linalg.solve(contrasts @ cov @ contrasts.T, c))
    q = 2
    f = (blocks - q) / (q * (blocks - 1)) * t2
    assert got["lack_of_fit_df"] == q
    assert got["lack_of_fit_f"] == pytest.approx(f, rel=1e-9)
    assert got["lack_of_fit_p"] == pytest.approx(sps.f.sf(f, q, blocks - q), rel=1e-9)
    assert (got["lack_of_fit_p"] > 0.01) == fits
    pairs = rng.dirichlet([30.0, 30.0], size=blocks) * 6
    two = estimators.equal_share_tests_from_sums(**estimators.equal_share_sums(pairs, n))
    assert two["lack_of_fit_df"] == 0 and math.isnan(two["lack_of_fit_p"])  # a line fits


def test_equal_share_sums_add_over_blocks() -> None:
    """The equal-share tests from the sums of two halves of the blocks, added, equal the
    tests on every block (what the report's slices rely on)."""
    rng = np.random.default_rng(5)
    n = rng.integers(2, 6, size=40).astype("float64")
    totals = rng.dirichlet(np.ones(3), size=40) * n[:, None]  # shares of each game add to 1
    halves = [estimators.equal_share_sums(totals[s], n[s]) for s in (slice(0, 17), slice(17, 40))]
    added = {name: halves[0][name] + halves[1][name] for name in estimators.SHARE_SUMS}
    want = equal_share_tests(totals, n)
    got = estimators.equal_share_tests_from_sums(**added)
    assert got.keys() == want.keys()
    for name, value in want.items():
        assert got[name] == pytest.approx(value, rel=1e-12, nan_ok=True), name
    seat = estimators.seat_ratio_sums(added, 1)
    ratio = estimators.ratio_from_sums(*(seat[c] for c in estimators.SUMS))
    block = estimators.block_ratio(totals[:, 1], n)
    assert float(ratio["var"]) == pytest.approx(float(block["var"][0]), rel=1e-12)


def test_ratio_sums_shift_changes_nothing_but_rounding() -> None:
    """Sums taken about a shift give the same ratio and variance as plain sums."""
    rng = np.random.default_rng(6)
    m = rng.integers(1, 5, size=50).astype("float64")
    y = 40 * m + rng.normal(size=50)
    plain = estimators.block_ratio(y, m)
    sums = estimators.ratio_sums(y, m, shift=40.0)
    shifted = estimators.ratio_from_sums(*(sums[c] for c in estimators.SUMS), shift=40.0)
    for name in ("total", "n", "estimate", "var"):
        assert shifted[name][0] == pytest.approx(plain[name][0], rel=1e-9), name


def test_zero_variance_falls_back_to_blocks_not_games() -> None:
    """A rate of 100% in each of 1,000 blocks of 2 games has no block variance: its
    Wilson interval counts the 1,000 blocks, not the 2,000 games (statsmodels' Wilson at
    n = 1,000), so it is wider than the games would make it."""
    from statsmodels.stats.proportion import proportion_confint

    from marrakech_sim.stats.estimators import rate_interval

    got = rate_interval(1.0, 0.0, 2000, 0.95, n_blocks=1000)
    lo, hi = proportion_confint(1000, 1000, alpha=0.05, method="wilson")
    assert got["n_eff"][0] == 1000
    assert got["lo"][0] == pytest.approx(lo) and got["hi"][0] == pytest.approx(hi)
    assert got["lo"][0] < rate_interval(1.0, 0.0, 2000)["lo"][0]
