"""Plackett-Luce ratings with a seat term: closed forms, a reference library, recovery.

Statistical tests run on fixed seeds; each states its tolerance.
"""

from __future__ import annotations

import math

import choix
import numpy as np
import pandas as pd
import pytest
from scipy import special
from synthetic_games import hand_tables, make_run

from marrakech_sim.stats import StatsInputError, comparable_strategies, fit_ratings, to_elo

PLANTED = {"a": 0.5, "b": 0.2, "c": 0.0, "d": -0.2, "e": -0.5}
SEATS = [0.3, 0.1, 0.0, -0.1]


def two_player_games(
    a_wins_seat0: int, n0: int, b_wins_seat0: int, n1: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A vs B: n0 games with A in seat 0 (A wins a_wins_seat0), n1 with B in seat 0."""
    spec = []
    for i in range(n0):
        a_first = i < a_wins_seat0
        spec.append({"seats": [("A", 50 if a_first else 40, 30), ("B", 40 if a_first else 50, 30)]})
    for i in range(n1):
        b_first = i < b_wins_seat0
        spec.append({"seats": [("B", 50 if b_first else 40, 30), ("A", 40 if b_first else 50, 30)]})
    return hand_tables(spec)


def test_bradley_terry_closed_form_with_seat_term() -> None:
    """Two players, both seatings: the MLE solves the two logits exactly.

    logit P(A wins | A seat 0) = dA - g and logit P(B wins | B seat 0) = -dA - g, with
    dA = theta_A - theta_B and g the seat-1 effect.
    """
    games, seats = two_player_games(70, 100, 40, 100)
    fit = fit_ratings(games, seats)
    l1, l2 = special.logit(0.7), special.logit(0.4)
    ratings = fit.ratings.set_index("strategy")["rating"]
    assert ratings["A"] - ratings["B"] == pytest.approx((l1 - l2) / 2, abs=1e-6)
    assert ratings["A"] + ratings["B"] == pytest.approx(0.0, abs=1e-9)  # anchor: mean 0
    seat1 = fit.seat_effects.set_index(["players", "seat"]).loc[(2, 1), "effect"]
    assert seat1 == pytest.approx(-(l1 + l2) / 2, abs=1e-6)
    assert fit.converged


def test_bradley_terry_closed_form_without_seat_term() -> None:
    """Without the seat term, A winning w of n gives theta_A - theta_B = log(w / (n - w))."""
    games, seats = two_player_games(70, 100, 40, 100)
    fit = fit_ratings(games, seats, seat_term=False)
    ratings = fit.ratings.set_index("strategy")["rating"]
    assert ratings["A"] - ratings["B"] == pytest.approx(math.log(130 / 70), abs=1e-6)


def test_breslow_ties_loglik() -> None:
    """A shared win counts each tied seat as chosen from the full pool (Breslow).

    A beats B once, B beats A once, and one shared win: equal ratings, and the
    log-likelihood is 2 log(1/2) for the decided games plus 2 log(1/2) for the tie.
    """
    games, seats = hand_tables(
        [
            {"seats": [("A", 50, 30), ("B", 40, 30)]},
            {"seats": [("A", 40, 30), ("B", 50, 30)]},
            {"seats": [("A", 50, 30), ("B", 50, 30)]},
        ]
    )
    fit = fit_ratings(games, seats, seat_term=False)
    assert fit.ratings["rating"].abs().max() == pytest.approx(0.0, abs=1e-8)
    assert fit.loglik == pytest.approx(4 * math.log(0.5), abs=1e-9)


def test_matches_choix_without_seat_term() -> None:
    """With no seat term and no ties the fit equals choix's Plackett-Luce MLE (1e-4)."""
    games, seats = make_run(PLANTED, 40, seed=3)
    fit = fit_ratings(games, seats, seat_term=False)
    names = sorted(PLANTED)
    ordered = seats.sort_values(["game_id", "rank"])
    rankings = [
        tuple(names.index(s) for s in group["strategy"])
        for _, group in ordered.groupby("game_id", sort=True)
    ]
    ref = choix.opt_rankings(len(names), rankings, alpha=0.0, tol=1e-9)
    ref = ref - ref.mean()
    got = fit.ratings.set_index("strategy")["rating"].reindex(names).to_numpy()
    np.testing.assert_allclose(got, ref, atol=1e-4)


def test_recovers_planted_strengths_and_seat_effects() -> None:
    """Planted strengths and seat effects come back within 4 standard errors.

    3000 blocks of 4 rotations, with ties, bankruptcies and error games mixed in.
    """
    games, seats = make_run(
        PLANTED,
        3000,
        seat_effects=SEATS,
        tie_rate=0.03,
        bankrupt_rate=0.05,
        error_rate=0.01,
        seed=12,
    )
    fit = fit_ratings(games, seats)
    ratings = fit.ratings.set_index("strategy")
    truth = np.array(list(PLANTED.values()))
    truth = truth - truth.mean()
    for name, value in zip(PLANTED, truth, strict=True):
        assert abs(ratings.loc[name, "rating"] - value) < 4 * ratings.loc[name, "se"]
    effects = fit.seat_effects.set_index("seat")
    for s in range(1, 4):
        planted = SEATS[s] - SEATS[0]
        assert abs(effects.loc[s, "effect"] - planted) < 4 * effects.loc[s, "se"]
    assert list(fit.ratings["strategy"]) == ["a", "b", "c", "d", "e"]
    assert fit.n_games == (games["end_reason"] != "error").sum()
    assert fit.n_blocks == 3000


def test_interval_coverage() -> None:
    """95% intervals of a rating difference cover the truth in 95% of studies.

    100 studies of 150 blocks (shared dice in 30% of games); tolerance: coverage in
    [0.88, 1.0] (about 3 binomial sd below 0.95).
    """
    covered = 0
    z = 1.959963984540054
    for seed in range(100):
        games, seats = make_run(PLANTED, 150, seat_effects=SEATS, shared_dice=0.3, seed=seed)
        fit = fit_ratings(games, seats)
        cov = fit.cov
        diff = fit.ratings.set_index("strategy")["rating"]
        est = diff["a"] - diff["e"]
        se = math.sqrt(cov.loc["a", "a"] + cov.loc["e", "e"] - 2 * cov.loc["a", "e"])
        covered += abs(est - 1.0) < z * se
    assert covered / 100 >= 0.88


def test_block_and_hessian_errors_agree_for_independent_games() -> None:
    """Without shared dice the block sandwich and the inverse Hessian agree within 15%."""
    games, seats = make_run(PLANTED, 1500, seat_effects=SEATS, seed=4)
    block = fit_ratings(games, seats, se_method="block")
    hess = fit_ratings(games, seats, se_method="hessian")
    ratio = block.ratings["se"].to_numpy() / hess.ratings["se"].to_numpy()
    assert np.all(np.abs(ratio - 1) < 0.15)
    np.testing.assert_allclose(block.ratings["rating"], hess.ratings["rating"])


def test_anchor_moves_level_not_differences() -> None:
    """Anchoring at a strategy puts it at 0 and keeps every difference."""
    games, seats = make_run(PLANTED, 200, seed=5)
    mean = fit_ratings(games, seats).ratings.set_index("strategy")
    anchored = fit_ratings(games, seats, anchor="c").ratings.set_index("strategy")
    assert anchored.loc["c", "rating"] == 0.0 and anchored.loc["c", "se"] == 0.0
    shift = mean["rating"] - anchored["rating"].reindex(mean.index)
    assert np.ptp(shift.to_numpy()) < 1e-8


def test_p_above_next_and_order() -> None:
    """Ratings are listed strongest first; clear gaps give p_above_next near 1."""
    games, seats = make_run(PLANTED, 2000, seed=6)
    tab = fit_ratings(games, seats).ratings
    assert tab["rating"].is_monotonic_decreasing
    assert list(tab["order"]) == [1, 2, 3, 4, 5]
    assert (tab["p_above_next"].iloc[:-1] > 0.99).all()
    assert np.isnan(tab["p_above_next"].iloc[-1])
    # Twin strategies: the probability is far from certain.
    twins = make_run({"x": 0.0, "y": 0.0, "z": -1.0}, 300, players=3, seed=7)
    top = fit_ratings(*twins).ratings.iloc[0]
    assert 0.02 < top["p_above_next"] < 0.98


def test_elo_scale() -> None:
    """A log-strength gap of ln(10) is 400 Elo points; the table carries the conversion."""
    assert to_elo(math.log(10)) - to_elo(0.0) == pytest.approx(400.0)
    assert to_elo(0.0) == 1500.0
    games, seats = make_run(PLANTED, 100, seed=1)
    tab = fit_ratings(games, seats).ratings
    np.testing.assert_allclose(tab["elo"], to_elo(tab["rating"]))
    # Elo win expectancy equals the model's head-to-head probability.
    d_elo = tab["elo"].iloc[0] - tab["elo"].iloc[1]
    d = tab["rating"].iloc[0] - tab["rating"].iloc[1]
    assert 1 / (1 + 10 ** (-d_elo / 400)) == pytest.approx(special.expit(d))


def test_seat_win_probability_equal_strategies() -> None:
    """win_prob_equal is the softmax of the seat effects within a player count."""
    games, seats = make_run(PLANTED, 1000, seat_effects=SEATS, seed=8)
    eff = fit_ratings(games, seats).seat_effects
    probs = special.softmax(eff["effect"].to_numpy())
    np.testing.assert_allclose(eff["win_prob_equal"], probs)
    assert eff["win_prob_equal"].sum() == pytest.approx(1.0)


def test_mixed_player_counts_get_own_seat_terms() -> None:
    """Seat effects are fitted per player count, each anchored at its seat 0."""
    from synthetic_games import combine_runs

    games, seats = combine_runs(
        [
            make_run(PLANTED, 300, players=2, seat_effects=[0.4, 0.0], seed=1),
            make_run(PLANTED, 300, players=4, seat_effects=SEATS, seed=2),
        ]
    )
    fit = fit_ratings(games, seats)
    eff = fit.seat_effects
    assert list(zip(eff["players"], eff["seat"], strict=True)) == [
        (2, 0),
        (2, 1),
        (4, 0),
        (4, 1),
        (4, 2),
        (4, 3),
    ]
    assert abs(eff.iloc[1]["effect"] + 0.4) < 4 * eff.iloc[1]["se"]


def test_bad_anchor_is_reported() -> None:
    """An unknown anchor raises StatsInputError listing the strategies."""
    games, seats = make_run(PLANTED, 10)
    with pytest.raises(StatsInputError, match="'zz'"):
        fit_ratings(games, seats, anchor="zz")


def test_runaway_rating_is_not_converged_and_l2_tames_it() -> None:
    """A strategy that wins every game has no finite MLE: flagged; a ridge gives a finite fit."""
    games, seats = hand_tables(
        [{"seats": [("A", 50, 30), ("B", 40, 30)]}, {"seats": [("B", 40, 30), ("A", 50, 30)]}] * 5
        + [{"seats": [("B", 50, 30), ("C", 40, 30)]}, {"seats": [("C", 50, 30), ("B", 40, 30)]}]
    )
    assert not fit_ratings(games, seats).converged
    tamed = fit_ratings(games, seats, l2=0.1)
    assert tamed.converged
    assert tamed.ratings.iloc[0]["strategy"] == "A"


def _two_rule_sets(second: dict[str, float], seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    from synthetic_games import combine_runs

    g1, s1 = make_run({"a": 0.4, "b": 0.0, "c": -0.4}, 600, players=2, ruleset="x", seed=seed)
    g2, s2 = make_run(second, 600, players=2, ruleset="y", seed=seed + 1)
    return combine_runs([(g1, s1), (g2, s2)])


@pytest.mark.parametrize(
    "second, rejected",
    [({"a": 0.4, "b": 0.0, "c": -0.4}, False), ({"a": -0.4, "b": 0.0, "c": 0.4}, True)],
)
def test_pooling_test_rejects_only_a_reversal(second: dict[str, float], rejected: bool) -> None:
    """The likelihood-ratio test keeps a pool of two rule sets with the same planted
    strengths (p > 0.01) and rejects one where the order is reversed (p < 1e-6), with
    df = separate minus pooled parameters."""
    from marrakech_sim.stats.ratings import free_parameters, pooling_test

    games, seats = _two_rule_sets(second, seed=40)
    fits = []
    for rs in ("x", "y"):
        part = games.loc[games["ruleset"] == rs]
        fits.append(fit_ratings(part, seats.loc[seats["game_id"].isin(part["game_id"])]))
    pooled = fit_ratings(games, seats)
    test = pooling_test(fits, pooled)
    assert test["df"] == sum(free_parameters(f) for f in fits) - free_parameters(pooled) == 3
    if rejected:
        assert test["p_value"] < 1e-6
    else:
        assert test["p_value"] > 0.01


def test_pooling_test_needs_the_same_games() -> None:
    """Separate fits of other games than the pooled fit's are an error, not a statistic."""
    from marrakech_sim.stats.ratings import pooling_test

    games, seats = _two_rule_sets({"a": 0.0, "b": 0.0, "c": 0.0}, seed=3)
    part = games.loc[games["ruleset"] == "x"]
    one = fit_ratings(part, seats.loc[seats["game_id"].isin(part["game_id"])])
    with pytest.raises(StatsInputError, match="same games"):
        pooling_test([one], fit_ratings(games, seats))


def _linked_by_search(games: list[list[str]]) -> list[list[str]]:
    """The sets of strategies linked through shared games, by a plain graph search (the
    second computation for comparable_strategies)."""
    neighbours: dict[str, set[str]] = {}
    for game in games:
        for name in game:
            neighbours.setdefault(name, set()).update(game)
    sets, seen = [], set()
    for start in sorted(neighbours):
        if start in seen:
            continue
        todo, members = [start], set()
        while todo:
            name = todo.pop()
            if name not in members:
                members.add(name)
                todo.extend(neighbours[name] - members)
        seen |= members
        sets.append(sorted(members))
    return sorted(sets, key=lambda m: (-len(m), m))


@pytest.mark.parametrize("seed", range(20))
def test_comparable_strategies_are_the_sets_linked_by_games(seed: int) -> None:
    """Random line-ups of 2-4 seats over 8 strategies, self-play among them: the sets
    equal a plain graph search's; a strategy seen only in self-play stands alone."""
    rng = np.random.default_rng(seed)
    names = [f"s{i}" for i in range(8)]
    games = []
    for _ in range(rng.integers(1, 7)):
        players = int(rng.integers(2, 5))
        games.append([str(x) for x in rng.choice(names, size=players)])
    games.append(["loner"] * 3)
    seats = pd.DataFrame(
        [(g, name) for g, game in enumerate(games) for name in game],
        columns=["game_id", "strategy"],
    )
    got = comparable_strategies(seats)
    assert got == _linked_by_search(games)
    assert ["loner"] in got


def test_strategies_that_never_meet_have_no_common_scale() -> None:
    """Why the report rates one linked set only: A-B games and C-D games share no
    strategy, so the likelihood is flat along the gap between the two sets (moving one
    set's ratings changes no game's probability): fit_ratings refuses, naming the sets."""
    spec = []
    for first, second in (("A", "B"), ("C", "D")):
        for i in range(40):
            top, low = (50, 40) if i < 25 else (40, 50)
            spec.append({"seats": [(first, top, 30), (second, low, 30)]})
            spec.append({"seats": [(second, top, 30), (first, low, 30)]})
    games, seats = hand_tables(spec)
    assert comparable_strategies(seats) == [["A", "B"], ["C", "D"]]
    with pytest.raises(StatsInputError, match=r"never meet .*: A, B \| C, D"):
        fit_ratings(games, seats)
    alone, alone_seats = hand_tables([g for g in spec if g["seats"][0][0] in "AB"])
    fit = fit_ratings(alone, alone_seats)
    assert fit.converged and fit.ratings["strategy"].tolist() == ["A", "B"]
    selfplay, selfplay_seats = hand_tables(
        [{"seats": [(name, 50, 30), (name, 40, 30)]} for name in "AB"] * 4
    )
    with pytest.raises(StatsInputError, match=r"never meet .*: A \| B"):
        fit_ratings(selfplay, selfplay_seats)
