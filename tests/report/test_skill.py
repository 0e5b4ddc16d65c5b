"""The skill sections: seat effects per skill level, their trend, and what decides games."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from conftest import play_run

from marrakech_sim import runfolder, stats
from marrakech_sim.report import build_report
from marrakech_sim.report.findings import trend_sentence
from marrakech_sim.report.sections.skill import _trends

LEVELS = ["random", "greedy-area", "greedy"]


@pytest.fixture(scope="module")
def skill_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("skill")
    lineups = [[s, s] for s in LEVELS] + [["greedy", "random"]]
    run = play_run(
        base / "run",
        {
            "seed": 11,
            "games_per_lineup": 400,
            "rulesets": {"two": {"players": 2}},
            "strategies": {s: {} for s in LEVELS},
            "schedule": {"kind": "lineups", "lineups": lineups},
        },
    )
    build_report([run], base / "report", rating_games=2_000, moves_games=200)
    return run, base / "report"


def _games_and_seats(run: Path) -> pd.DataFrame:
    games = runfolder.read_table(run, "games")
    seats = runfolder.read_table(run, "seats")
    return seats.merge(games[["game_id", "block", "end_reason", "winners"]], on="game_id")


def test_each_level_has_its_own_seat_effects(skill_run: tuple[Path, Path]) -> None:
    """skill_seats holds each level's seat-0 share, equal to a count over its own games."""
    run, report = skill_run
    table = pd.read_csv(report / "skill_seats.csv")
    assert table.drop_duplicates("level")["level"].tolist() == LEVELS  # config order
    rows = _games_and_seats(run)
    rows = rows[rows["end_reason"] != "error"]
    for level in LEVELS:
        mine = rows[(rows["strategy"] == level)]
        games = mine.groupby("game_id")["strategy"].transform("size") == 2
        seat0 = mine[games & (mine["seat"] == 0)]
        share = float(seat0["win_share"].sum()) / len(seat0)
        got = table[(table["level"] == level) & (table["seat"] == 0)].iloc[0]
        assert got["n_games"] == len(seat0)
        assert got["effect_pp"] == pytest.approx(100 * (share - 0.5), abs=1e-9)
        assert got["effect_lo_pp"] < got["effect_pp"] < got["effect_hi_pp"]


def test_trend_is_statsmodels_weighted_least_squares() -> None:
    """The trend's slope and standard error are statsmodels' WLS with known variances."""
    rng = np.random.default_rng(3)
    effect = np.array([4.0, 2.1, 0.9, 0.2]) + rng.normal(0, 0.1, 4)
    se = np.array([0.3, 0.4, 0.5, 0.6])
    seats = pd.DataFrame(
        {
            "players": 2,
            "ruleset": "two",
            "seat": 0,
            "level_index": range(4),
            "level": list("abcd"),
            "effect_pp": effect,
            "effect_lo_pp": effect - 1.96 * se,
            "effect_hi_pp": effect + 1.96 * se,
            "se_pp": se,
            "n_games": 1000,
        }
    )
    row = _trends(seats, 0.95, 0.05).iloc[0]
    fit = sm.WLS(effect, sm.add_constant(np.arange(4.0)), weights=1 / se**2).fit(
        cov_type="fixed scale"
    )
    assert row["slope_pp"] == pytest.approx(fit.params[1], rel=1e-9)
    assert row["slope_hi_pp"] - row["slope_pp"] == pytest.approx(1.959964 * fit.bse[1], rel=1e-5)
    assert row["change"] == "shrinks"
    reversed_ = seats.assign(effect_pp=[3.0, 1.0, -1.0, -3.0])
    reversed_ = reversed_.assign(
        effect_lo_pp=reversed_["effect_pp"] - 0.5, effect_hi_pp=reversed_["effect_pp"] + 0.5
    )
    assert _trends(reversed_, 0.95, 0.05).iloc[0]["change"] == "reverses"
    # up a lot, then down a lot (each step beyond its interval): no one direction, whatever
    # the line through the levels says
    humped = seats.assign(effect_pp=[0.0, 4.0, 4.0, -1.0])
    row = _trends(humped, 0.95, 0.05).iloc[0]
    assert row["change"] == "varies"
    # its test is the two steps, each with its interval: a to b up 4.0, c to d down 5.0
    assert (row["up_from"], row["up_to"], row["down_from"], row["down_to"]) == tuple("abcd")
    assert row["up_pp"] == pytest.approx(4.0) and row["down_pp"] == pytest.approx(-5.0)
    up_half, down_half = 1.959964 * np.hypot(0.3, 0.4), 1.959964 * np.hypot(0.5, 0.6)
    assert row["up_hi_pp"] - row["up_pp"] == pytest.approx(up_half, rel=1e-5)
    assert row["down_pp"] - row["down_lo_pp"] == pytest.approx(down_half, rel=1e-5)
    said = trend_sentence(next(_trends(humped, 0.95, 0.05).itertuples()))
    up = f"up +4.0 pp [{4 - up_half:+.1f}, {4 + up_half:+.1f}] from a to b"
    down = f"down -5.0 pp [{-5 - down_half:+.1f}, {-5 + down_half:+.1f}] from c to d"
    assert "varies with skill:" in said and up in said and down in said, said
    # one step against the trend but within its interval: the trend stands
    dip = seats.assign(effect_pp=[4.0, 2.0, 2.5, 0.0])
    assert _trends(dip, 0.95, 0.05).iloc[0]["change"] == "shrinks"


def test_seating_changes_counted_over_blocks(skill_run: tuple[Path, Path]) -> None:
    """The share of greedy-vs-random blocks whose winning strategy changes with the seating
    equals a direct count over the blocks' winners."""
    run, report = skill_run
    decides = pd.read_csv(report / "decides.csv")
    row = decides[decides["measure"] == "seating"].iloc[0]
    rows = _games_and_seats(run)
    mixed = rows.groupby("game_id")["strategy"].transform("nunique") == 2
    won = rows[mixed & (rows["win_share"] > 0)]
    sole = won.groupby("game_id").filter(lambda g: len(g) == 1)
    shared = set(won["game_id"]) - set(sole["game_id"])
    winner = sole.set_index("game_id")["strategy"].to_dict() | {g: "shared" for g in shared}
    blocks = rows[mixed].drop_duplicates("game_id")[["game_id", "block"]]
    blocks["winner"] = blocks["game_id"].map(winner)
    per_block = blocks.dropna().groupby("block")["winner"].agg(["nunique", "size"])
    per_block = per_block[per_block["size"] > 1]
    assert row["n"] == len(per_block)
    assert row["rate"] == pytest.approx(float((per_block["nunique"] > 1).mean()))


def test_the_report_says_how_each_seat_changes_with_skill(skill_run: tuple[Path, Path]) -> None:
    """report.md has the skill section with a sentence per seat naming the levels, and the
    what-decides-games section with greedy against random."""
    _, report = skill_run
    md = (report / "report.md").read_text(encoding="utf-8")
    assert re.search(r"^## \d+\. Balance per skill level$", md, re.M)
    assert re.search(r"^## \d+\. What decides games$", md, re.M)
    for seat in (0, 1):
        assert f"Seat {seat}" in md
    assert "when every seat plays random" in md and "when every seat plays greedy" in md
    assert "greedy against random" in md


def test_seating_changes_are_found_beside_games_of_more_players(tmp_path: Path) -> None:
    """With 4-player games in the report too (wider seat arrays), the 2-player mixed blocks
    still give the seating measure (a seat past a game's player count is not a strategy)."""
    two = play_run(
        tmp_path / "two",
        {
            "seed": 2,
            "games_per_lineup": 60,
            "rulesets": {"two": {"players": 2}},
            "strategies": {"random": {}, "greedy-area": {}},
            "schedule": {"kind": "lineups", "lineups": [["greedy-area", "random"]]},
        },
    )
    four = play_run(
        tmp_path / "four",
        {
            "seed": 3,
            "games_per_lineup": 40,
            "rulesets": {"four": {}},
            "strategies": {"random": {}, "greedy-area": {}},
            "schedule": {"kind": "self_play"},
        },
    )
    build_report([two, four], tmp_path / "report", rating_games=500, moves_games=50)
    decides = pd.read_csv(tmp_path / "report" / "decides.csv")
    seating = decides[decides["measure"] == "seating"]
    assert seating["players"].tolist() == [2]
    assert int(seating["n"].iloc[0]) == 30  # 60 games: 30 blocks of both seatings
    # self-play says nothing about which strategy is stronger: the 4-player games get
    # no rating and no strategy order, and the note says why
    ratings = pd.read_csv(tmp_path / "report" / "ratings.csv")
    assert ratings["players"].unique().tolist() == [2]
    md = (tmp_path / "report" / "report.md").read_text()
    assert "four, 4 players: not rated, no two strategies met in a game" in md
    assert "Strategy order (four" not in md


def test_strategies_seen_only_in_self_play_are_not_rated(skill_run: tuple[Path, Path]) -> None:
    """In the skill fixture only greedy and random meet (greedy-area plays itself alone):
    the ratings cover those two, and the note names greedy-area as not comparable."""
    _, report = skill_run
    ratings = pd.read_csv(report / "ratings.csv")
    assert sorted(ratings["strategy"]) == ["greedy", "random"]
    md = (report / "report.md").read_text()
    assert "rated greedy, random only; greedy-area never met them in a game" in md
    assert "less the 400 games of strategies that no fit can compare" in md  # its self-play
    order = [line for line in md.splitlines() if line.startswith("- Strategy order")]
    assert len(order) == 1 and "greedy-area" not in order[0], order


def test_a_variant_is_judged_per_level_not_pooled(tmp_path: Path) -> None:
    """Self-play at two levels under a base and a variant: the summary says per seat how
    the variant's effect changes with skill (the slope statsmodels' WLS of the per-level
    differences), and states no variant finding pooled over the levels."""
    run = play_run(
        tmp_path / "run",
        {
            "seed": 5,
            "games_per_lineup": 240,
            "rulesets": {"standard": {}, "late": {"base": "standard", "orient_at_end": True}},
            "strategies": {"random": {}, "greedy": {}},
            "schedule": {"kind": "self_play"},
        },
    )
    build_report([run], tmp_path / "report", rating_games=500, moves_games=50)
    variants = pd.read_csv(tmp_path / "report" / "skill_variants.csv")
    trends = pd.read_csv(tmp_path / "report" / "skill_variant_trends.csv")
    assert sorted(trends["seat"]) == [0, 1, 2, 3]
    assert set(trends["ruleset"]) == {"late"} and set(trends["baseline"]) == {"standard"}
    for r in trends.itertuples():
        part = variants[variants["seat"] == r.seat].sort_values("level_index")
        assert part["level"].tolist() == ["random", "greedy"]
        diff = part["difference_pp"].to_numpy()
        se = part["se_pp"].to_numpy()
        fit = sm.WLS(diff, sm.add_constant(np.arange(2.0)), weights=1 / se**2).fit(
            cov_type="fixed scale"
        )
        assert r.slope_pp == pytest.approx(fit.params[1], rel=1e-9)
        assert r.p == pytest.approx(fit.pvalues[1], rel=1e-6)
        assert r.weakest_pp == pytest.approx(diff[0]) and r.strongest_pp == pytest.approx(diff[1])
    findings = pd.read_csv(tmp_path / "report" / "findings.csv")
    assert (findings["question"] == "skill: variant").sum() == 4
    assert not findings["question"].str.startswith("variant:").any()
    md = (tmp_path / "report" / "report.md").read_text()
    assert "late against standard (4 players), seat 3:" in md
    assert "late against standard (4 players): among these strategies" not in md
    assert md.count("the figures here pool every level's games") == 2  # seats, variants
    assert "![late minus standard against skill, 4 players](skill_variant_4_late.png)" in md
    assert (tmp_path / "report" / "skill_variant_4_late.png").stat().st_size > 10_000
    # the per-game metrics, level by level: each difference is the two rule sets' means
    # over that level's games, recomputed from stats.game_metrics
    games = runfolder.read_table(run, "games")
    seats = runfolder.read_table(run, "seats")
    metrics = stats.game_metrics(games, seats)
    level_of = seats.groupby("game_id")["strategy"].first()
    metrics["level"] = level_of.reindex(metrics.index).to_numpy()  # indexed by game_id
    got = pd.read_csv(tmp_path / "report" / "skill_metric_variants.csv")
    assert set(got["metric"]) == {
        "margin",
        "bankrupt",
        "turns",
        "tie_broken",
        "winner_dirhams_share",
    }
    for r in got.itertuples():
        mean = metrics.groupby(["ruleset", "level"])[r.metric].mean()
        want = mean["late", r.level] - mean["standard", r.level]
        assert r.difference_value == pytest.approx(want)
    metric_trends = pd.read_csv(tmp_path / "report" / "skill_metric_variant_trends.csv")
    for r in metric_trends.itertuples():
        part = got[got["metric"] == r.metric].sort_values("level_index")
        diff, se = part["difference_value"].to_numpy(), part["se_value"].to_numpy()
        se = np.maximum(se, 1e-9)  # a level where neither rule set varies (no tie-breaks)
        fit = sm.WLS(diff, sm.add_constant(np.arange(2.0)), weights=1 / se**2).fit(
            cov_type="fixed scale"
        )
        assert r.slope_value == pytest.approx(fit.params[1], rel=1e-9, abs=1e-9)
    assert (findings["question"] == "skill: variant metric").sum() == len(metric_trends) == 5
    assert "late against standard (4 players), the winning margin:" in md
