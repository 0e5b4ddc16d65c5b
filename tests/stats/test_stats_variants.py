"""Rule-variant comparison: per-game metrics, lead changes, differences with Holm.

Statistical tests run on fixed seeds; each states its tolerance.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from statsmodels.stats.multitest import multipletests
from synthetic_games import combine_runs, hand_tables, make_run, make_turn_scores

from marrakech_sim.stats import (
    StatsInputError,
    compare_variants,
    estimators,
    game_metrics,
    lead_metrics,
    variant_summary,
)
from marrakech_sim.stats.variants import PRIMARY_METRICS, SECONDARY_METRICS

FOUR = {"a": 0.0, "b": 0.0, "c": 0.0, "d": 0.0}


def test_game_metrics_hand_values() -> None:
    """Seat advantage, margin, bankruptcy, tie-break and dirhams share per hand game."""
    games, seats = hand_tables(
        [
            {"seats": [("a", 50, 40), ("b", 45, 30), ("c", 40, 30)], "turns": 30},
            {"seats": [("a", 50, 40), ("b", 50, 40), ("c", None, 0)]},  # shared win
            {"seats": [("a", 40, 30), ("b", 52, 26), ("c", 52, 13)]},  # tie-break
            {"seats": [("a", 60, 30), ("b", None, 0)]},  # only one score left
            {"seats": [("a", 60, 30), ("b", 1, 0)], "error": "seat 1 (strategy b): x"},
        ]
    )
    m = game_metrics(games, seats).set_index("game_id")
    assert list(m.index) == [0, 1, 2, 3]  # the error game is left out
    assert m["seat_advantage"].tolist() == pytest.approx([2 / 3, 0.5 - 1 / 3, -1 / 3, 0.5])
    assert m.loc[0, "turns"] == 30
    assert m["margin"].iloc[:3].tolist() == [5.0, 0.0, 0.0]
    assert math.isnan(m.loc[3, "margin"])
    assert m["bankrupt"].tolist() == [0.0, 1.0, 0.0, 1.0]
    assert m["tie_broken"].tolist() == [0.0, 0.0, 1.0, 0.0]
    assert m.loc[0, "winner_dirhams_share"] == pytest.approx(40 / 50)
    assert m.loc[1, "winner_dirhams_share"] == pytest.approx(40 / 50)
    assert m.loc[2, "winner_dirhams_share"] == pytest.approx(26 / 52)
    assert m["lead_changes"].isna().all()  # no turn_scores given


def test_lead_changes_and_comeback_hand_case() -> None:
    """Lead changes count new single leaders; a tied leader keeps the lead.

    Scores after each of 6 turns, seats 0/1/2:
      t0: 32 30 30  leader 0
      t1: 32 33 30  leader 1          (change 1)
      t2: 33 33 30  tied, 1 keeps
      t3: 34 33 30  leader 0          (change 2)
      t4: 34 35 35  1 and 2 tied above 0: no single leader
      t5: 36 35 40  leader 2          (change 3); seat 2 wins
    Half-way (turn ceil(6/2) - 1 = 2): seat 2 has 30 < 33, behind: a comeback.
    """
    games, seats = hand_tables(
        [{"seats": [("a", 36, 30), ("b", 35, 30), ("c", 40, 30)], "turns": 6}]
    )
    path = [[32, 30, 30], [32, 33, 30], [33, 33, 30], [34, 33, 30], [34, 35, 35], [36, 35, 40]]
    turn_scores = pd.DataFrame(
        [(0, t, s, float(v)) for t, row in enumerate(path) for s, v in enumerate(row)],
        columns=["game_id", "turn", "seat", "score"],
    )
    lead = lead_metrics(turn_scores, games, seats)
    assert lead.loc[0, "lead_changes"] == 3
    assert lead.loc[0, "comeback"] == 1
    assert lead.loc[0, "decided_turn"] == 6  # seat 2 leads alone only after the last turn
    metrics = game_metrics(games, seats, turn_scores)
    assert metrics.loc[0, "lead_changes"] == 3


def test_no_comeback_when_winner_led_or_tied_at_half() -> None:
    """A winner level with the leader at half-way is not behind: no comeback."""
    games, seats = hand_tables([{"seats": [("a", 40, 30), ("b", 35, 30)], "turns": 4}])
    path = [[31, 32], [33, 33], [38, 34], [40, 35]]
    turn_scores = pd.DataFrame(
        [(0, t, s, float(v)) for t, row in enumerate(path) for s, v in enumerate(row)],
        columns=["game_id", "turn", "seat", "score"],
    )
    lead = lead_metrics(turn_scores, games, seats)
    assert lead.loc[0, "comeback"] == 0
    assert lead.loc[0, "lead_changes"] == 1
    assert lead.loc[0, "decided_turn"] == 3  # level after turn 2, ahead from turn 3 on


def _decided_by_hand(turn_scores: pd.DataFrame, seats: pd.DataFrame) -> dict[int, float]:
    """decided_turn game by game, walking the turns backwards (the second computation)."""
    out = {}
    for game, part in turn_scores.groupby("game_id"):
        won = seats.loc[(seats["game_id"] == game) & (seats["win_share"] > 0), "seat"]
        if len(won) != 1:
            out[int(game)] = math.nan
            continue
        winner = int(won.iloc[0])
        table = part.pivot(index="turn", columns="seat", values="score").sort_index()
        decided = len(table)  # the last turn, when never strictly ahead at the end
        for turn in range(len(table) - 1, -1, -1):
            row = table.iloc[turn]
            rest = [v for s, v in row.items() if s != winner and not math.isnan(v)]
            if not all(row[winner] > v for v in rest):
                break
            decided = turn + 1  # counted from 1
        out[int(game)] = float(decided)
    return out


def test_decided_turn_agrees_with_a_turn_by_turn_walk() -> None:
    """On synthetic games with bankruptcies, ties and shared wins, decided_turn equals a
    plain backwards walk over each game's turns; a tie-break win is decided on its last
    turn."""
    games, seats = make_run(FOUR, 60, bankrupt_rate=0.2, tie_rate=0.1, tie_break_rate=0.1, seed=5)
    turn_scores = make_turn_scores(games, seats, seed=5)
    got = lead_metrics(turn_scores, games, seats)["decided_turn"]
    expected = _decided_by_hand(turn_scores, seats)
    assert got.index.tolist() == sorted(expected)
    assert got.isna().sum() == sum(math.isnan(v) for v in expected.values()) > 0
    assert got.to_dict() == pytest.approx(expected, nan_ok=True)
    turns = games.set_index("game_id")["turns"]
    assert ((got >= 1) & (got <= turns.reindex(got.index))).sum() == got.notna().sum()


def test_lead_metrics_in_chunks_equal_whole() -> None:
    """Processing games in chunks gives the same lead metrics as one pass."""
    import marrakech_sim.stats.variants as variants

    games, seats = make_run(FOUR, 30, bankrupt_rate=0.2, seed=3)
    turn_scores = make_turn_scores(games, seats, seed=3)
    whole = lead_metrics(turn_scores, games, seats)
    old = variants._CHUNK_GAMES
    variants._CHUNK_GAMES = 7
    try:
        chunked = lead_metrics(turn_scores, games, seats)
    finally:
        variants._CHUNK_GAMES = old
    pd.testing.assert_frame_equal(whole, chunked)


def two_variants() -> pd.DataFrame:
    """Metrics of two rule sets: 'alt' triples the tie-break rate, the rest is equal."""
    games, seats = combine_runs(
        [
            make_run(FOUR, 400, ruleset="base", tie_break_rate=0.05, bankrupt_rate=0.1, seed=1),
            make_run(FOUR, 400, ruleset="alt", tie_break_rate=0.15, bankrupt_rate=0.1, seed=2),
        ]
    )
    return game_metrics(games, seats, make_turn_scores(games, seats, seed=1))


@pytest.fixture(scope="module")
def metrics() -> pd.DataFrame:
    """Per-game metrics shared by the comparison tests."""
    return two_variants()


def test_compare_detects_planted_difference(metrics: pd.DataFrame) -> None:
    """A tripled tie-break rate is detected after Holm; its interval covers the truth."""
    out = compare_variants(metrics, baseline="base").set_index("metric")
    seats = [f"seat_{i}_share" for i in range(4)]
    assert list(out.index) == [*seats, *PRIMARY_METRICS, *SECONDARY_METRICS]
    row = out.loc["tie_broken"]
    assert row["reject_holm"] and row["p_holm"] < 1e-6
    assert row["lo"] < 0.10 < row["hi"]
    assert row["n_games"] == (metrics["ruleset"] == "alt").sum()
    assert row["n_blocks"] == 400 and row["n_blocks_baseline"] == 400
    # Untouched metrics whose truth is equal: not rejected (they may differ by chance
    # only once in 20 before correction; with Holm, much more rarely).
    for name in ("seat_0_share", "bankrupt", "comeback"):
        assert not out.loc[name, "reject_holm"]


def test_holm_matches_statsmodels_within_each_family(metrics: pd.DataFrame) -> None:
    """p_holm is statsmodels' Holm over every (metric, rule set) row of one family (1e-7)."""
    third = metrics.loc[metrics["ruleset"] == "alt"].assign(
        ruleset="alt2", block=lambda d: d["block"] + 10_000
    )
    out = compare_variants(pd.concat([metrics, third]), baseline="base")
    primary = out["family"] == "primary"
    assert primary.sum() == 2 * (4 + len(PRIMARY_METRICS))
    assert (~primary).sum() == 2 * len(SECONDARY_METRICS)
    for rows in (out.loc[primary], out.loc[~primary]):
        _, ref, _, _ = multipletests(rows["p_value"], method="holm")
        np.testing.assert_allclose(rows["p_holm"], ref, rtol=1e-7)


def test_difference_se_matches_statsmodels_cluster(metrics: pd.DataFrame) -> None:
    """The clustered SE of a difference equals OLS on a dummy with cluster=block."""
    out = compare_variants(metrics, baseline="base", metric_names=("turns",)).iloc[0]
    x = sm.add_constant((metrics["ruleset"] == "alt").to_numpy(dtype="float64"))
    fit = sm.OLS(metrics["turns"].to_numpy(), x).fit(
        cov_type="cluster", cov_kwds={"groups": metrics["block"].to_numpy()}
    )
    n, k = x.shape
    assert out["diff"] == pytest.approx(fit.params[1])
    # statsmodels adds (N-1)/(N-K) to the G/(G-1) factor both use.
    assert out["se"] * math.sqrt((n - 1) / (n - k)) == pytest.approx(fit.bse[1], rel=1e-8)


def test_compare_is_calibrated_under_the_null() -> None:
    """With equal rule sets, a comparison rejects at about the nominal 5%.

    200 null metrics (one call, so one Holm pass) on 150 blocks x 4 games per rule set,
    with a shared block effect (intra-block correlation 0.5). Tolerance: the raw
    rejection rate in [0.015, 0.095] (about 3 binomial sd); after Holm, at most one.
    """
    rng = np.random.default_rng(31)
    block = np.repeat(np.arange(300), 4)
    columns = {f"m{i}": rng.normal(size=300)[block] + rng.normal(size=1200) for i in range(200)}
    frame = pd.DataFrame(
        {
            "game_id": np.arange(1200),
            "block": block,
            "ruleset": np.where(block < 150, "base", "alt"),
            **columns,
        }
    )
    out = compare_variants(frame, baseline="base", metric_names=tuple(columns))
    assert len(out) == 200
    assert 0.015 <= (out["p_value"] < 0.05).mean() <= 0.095
    assert out["reject_holm"].sum() <= 1


def test_paired_blocks_across_variants_shrink_the_interval() -> None:
    """When both rule sets share blocks (common dice), the shared part cancels out."""
    rng = np.random.default_rng(2)
    block = np.repeat(np.arange(200), 2)
    shared = rng.normal(scale=3.0, size=200)[block]
    value = shared + rng.normal(size=400)
    paired = pd.DataFrame(
        {
            "game_id": np.arange(400),
            "block": block,
            "ruleset": np.tile(["base", "alt"], 200),
            "turns": value,
        }
    )
    unpaired = paired.assign(block=np.arange(400))
    se_paired = compare_variants(paired, "base", metric_names=("turns",))["se"].iloc[0]
    se_unpaired = compare_variants(unpaired, "base", metric_names=("turns",))["se"].iloc[0]
    assert se_paired < se_unpaired / 2


def test_variant_summary_counts(metrics: pd.DataFrame) -> None:
    """Per rule set and metric: mean of the non-missing games, with games and blocks."""
    out = variant_summary(metrics).set_index(["ruleset", "metric"])
    row = out.loc[("base", "margin")]
    base = metrics.loc[metrics["ruleset"] == "base", "margin"]
    assert row["mean"] == pytest.approx(base.mean())
    assert row["n_games"] == base.notna().sum()
    assert row["lo"] < row["mean"] < row["hi"]
    assert row["players"] == 4


def test_unknown_baseline_is_reported(metrics: pd.DataFrame) -> None:
    """A baseline that is not a rule set raises StatsInputError listing the rule sets."""
    with pytest.raises(StatsInputError, match="'nope'"):
        compare_variants(metrics, baseline="nope")


def test_paired_difference_matches_statsmodels_cluster_on_seed() -> None:
    """Paired by seed: diff, SE and the t interval equal OLS clustered on the seed (1e-8)."""
    rng = np.random.default_rng(5)
    n_blocks = 60  # few clusters: the t reference matters
    seed = np.repeat(rng.integers(0, 2**62, n_blocks, dtype=np.uint64), 6)
    ruleset = np.tile(np.repeat(["base", "alt"], 3), n_blocks)
    value = rng.normal(scale=2.0, size=n_blocks).repeat(6) + rng.normal(size=6 * n_blocks)
    value = value + 0.3 * (ruleset == "alt")
    frame = pd.DataFrame(
        {
            "game_id": np.arange(6 * n_blocks),
            "block": np.arange(6 * n_blocks) // 3,  # each rule set has its own block ids
            "seed": seed,
            "ruleset": ruleset,
            "turns": value,
        }
    )
    out = compare_variants(frame, "base", metric_names=("turns",), cluster="seed").iloc[0]
    x = sm.add_constant((ruleset == "alt").astype("float64"))
    fit = sm.OLS(value, x).fit(cov_type="cluster", cov_kwds={"groups": seed.astype("int64")})
    n, k = x.shape
    se_ref = fit.bse[1] / math.sqrt((n - 1) / (n - k))  # statsmodels' extra (N-1)/(N-K)
    assert out["diff"] == pytest.approx(fit.params[1], rel=1e-8)
    assert out["se"] == pytest.approx(se_ref, rel=1e-8)
    assert out["df"] == n_blocks - 1 and out["paired"] == n_blocks
    from scipy import stats as sps

    t = sps.t.ppf(0.975, n_blocks - 1)
    assert out["hi"] - out["diff"] == pytest.approx(t * se_ref, rel=1e-8)
    # the unpaired analysis of the same games ignores the shared block effect
    assert out["variance_ratio"] < 0.5
    by_block = compare_variants(frame, "base", metric_names=("turns",)).iloc[0]
    assert by_block["se"] == pytest.approx(out["se_unpaired"], rel=1e-12)


def test_unpaired_difference_from_sums_equals_blocks() -> None:
    """With no shared cluster, the difference from each side's sums of block totals (any
    shift) equals the one from the blocks themselves."""
    rng = np.random.default_rng(3)
    sides = []
    for mean, nb in ((30.0, 60), (30.5, 45)):
        m = rng.integers(1, 5, size=nb).astype("float64")
        sides.append((m, mean * m + rng.normal(size=nb) * m))
    blocks = [(np.arange(i * 1000, i * 1000 + len(m)), y, m) for i, (m, y) in enumerate(sides)]
    want = estimators.clustered_difference(blocks[0], blocks[1])
    sums = [
        {**{k: v[0] for k, v in estimators.ratio_sums(y, m, shift=30.0).items()}, "shift": 30.0}
        for m, y in sides
    ]
    got = estimators.clustered_difference_from_sums(sums[0], sums[1])
    assert got.keys() == want.keys()
    for name, value in want.items():
        assert got[name] == pytest.approx(value, rel=1e-10, nan_ok=True), name


def test_a_side_of_one_block_has_no_variance_to_estimate() -> None:
    """The audit's case: one block per rule set, whose games varied. Each side's block
    total is its mean, so the residuals are 0 by construction, not for want of spread:
    the difference has no standard error (NaN, no interval), not a zero one."""

    def sums(y: list[float], m: list[float]) -> dict[str, float]:
        got = estimators.ratio_sums(np.array(y), np.array(m))
        return {k: v[0] for k, v in got.items()}

    one = estimators.clustered_difference_from_sums(sums([3.0], [8.0]), sums([5.0], [8.0]))
    assert one["diff"] == pytest.approx(0.25)
    assert math.isnan(one["se"]) and math.isnan(one["lo"]) and math.isnan(one["hi"])
    two = estimators.clustered_difference_from_sums(
        sums([3.0, 1.0], [8.0, 8.0]), sums([5.0, 4.0], [8.0, 8.0])
    )
    assert two["se"] > 0 and math.isfinite(two["lo"])
