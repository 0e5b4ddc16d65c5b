"""The skill sections: declared levels, their measured strength, trends that fit, steps."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from conftest import play_run
from scipy import stats as sps

from marrakech_sim import runfolder, stats
from marrakech_sim.report import build_report, findings
from marrakech_sim.report.sections.skill import _lines, _steps
from marrakech_sim.report.tables import ReportTables
from marrakech_sim.stats import trends

LEVELS = ["random", "greedy-area", "greedy"]


@pytest.fixture(scope="module")
def skill_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Self-play at three declared levels, with the neighbouring levels' ladder games."""
    base = tmp_path_factory.mktemp("skill")
    lineups = [[s, s] for s in LEVELS] + [["greedy-area", "random"], ["greedy", "greedy-area"]]
    run = play_run(
        base / "run",
        {
            "seed": 11,
            "games_per_lineup": 400,
            "rulesets": {"two": {"players": 2}},
            "strategies": {s: {} for s in LEVELS},
            "schedule": {"kind": "lineups", "lineups": lineups},
            "skill_levels": LEVELS,
        },
    )
    build_report([run], base / "report", rating_games=4_000, moves_games=200)
    return run, base / "report"


def _games_and_seats(run: Path) -> pd.DataFrame:
    games = runfolder.read_table(run, "games")
    seats = runfolder.read_table(run, "seats")
    return seats.merge(games[["game_id", "block", "end_reason", "winners"]], on="game_id")


def test_each_level_has_its_own_seat_effects(skill_run: tuple[Path, Path]) -> None:
    """skill_seats holds each declared level's seat-0 share, equal to a count over its own
    self-play games, in the declared order."""
    run, report = skill_run
    table = pd.read_csv(report / "skill_seats.csv")
    assert table.drop_duplicates("level")["level"].tolist() == LEVELS
    assert set(table["kind"]) == {"skill level"}
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


def test_a_level_strength_is_its_elo_from_the_ladder_games(skill_run: tuple[Path, Path]) -> None:
    """Each level's strength is its rating from the games where levels meet; a level with
    no win against the others has no finite strength."""
    _, report = skill_run
    strength = pd.read_csv(report / "skill_strength.csv")
    ratings = pd.read_csv(report / "ratings.csv").set_index("strategy")
    lineups = pd.read_csv(report / "lineup_win_rates.csv")
    for r in strength.itertuples():
        names = lineups["lineup"].str.split("|")
        mixed = lineups[(lineups["strategy"] == r.level) & (names.map(set).map(len) > 1)]
        if (mixed["rate"] == 0).all():
            assert r.status == "never won" and np.isnan(r.elo)
        elif (mixed["rate"] == 1).all():
            assert r.status == "never lost"
        else:
            assert r.status == "measured"
            assert r.elo == pytest.approx(ratings.loc[r.level, "elo"])


def test_lines_and_q_are_statsmodels_wls() -> None:
    """The line's slope (per 100 Elo), its standard error (known variances), the
    lack-of-fit statistic and Cochran's Q are statsmodels' WLS with the scale fixed at 1."""
    rng = np.random.default_rng(3)
    elo = np.array([1200.0, 1500.0, 1510.0, 1720.0])
    effect = 4.0 - 0.01 * elo / 1 + rng.normal(0, 0.2, 4)
    se = np.array([0.3, 0.4, 0.5, 0.6])
    fit = sm.WLS(effect, sm.add_constant(elo / 100), weights=1 / se**2).fit(cov_type="fixed scale")
    got = trends.line(elo, effect, se)
    assert got.slope == pytest.approx(fit.params[1], rel=1e-9)
    assert got.se == pytest.approx(fit.bse[1], rel=1e-9)
    assert got.p == pytest.approx(fit.pvalues[1], rel=1e-6)
    assert got.lack_of_fit == pytest.approx(fit.ssr, rel=1e-9) and got.df == 2
    # the change from the weakest to the strongest level: a contrast of the coefficients
    contrast = np.array([0.0, (elo.max() - elo.min()) / 100])
    change, change_se = got.change(float(elo.min()), float(elo.max()))
    test = fit.t_test(contrast)
    assert change == pytest.approx(float(test.effect[0]), rel=1e-9)
    assert change == pytest.approx(got.at(float(elo.max())) - got.at(float(elo.min())))
    assert change_se == pytest.approx(float(test.sd[0, 0]), rel=1e-9)
    flat = sm.WLS(effect, np.ones((4, 1)), weights=1 / se**2).fit()
    het = trends.heterogeneity(effect, se)
    assert het.q == pytest.approx(flat.ssr, rel=1e-9) and het.df == 3


def test_unequal_strengths_move_the_axis() -> None:
    """The same effects at levels 10 Elo and 690 Elo apart give the slope of a line on
    Elo, not on the levels' index: a step of +10 Elo is not a step of +680."""
    effect = np.array([6.0, 0.0, -0.3])
    se = np.array([0.5, 0.5, 0.5])
    on_elo = trends.line(np.array([800.0, 1490.0, 1500.0]), effect, se)
    on_index = trends.line(np.array([0.0, 100.0, 200.0]), effect, se)
    # equal weights: ordinary least squares on each axis (pp per 100 Elo / per "level")
    assert on_elo.slope == pytest.approx(np.polyfit([8.0, 14.9, 15.0], effect, 1)[0])
    assert on_index.slope == pytest.approx(np.polyfit([0.0, 1.0, 2.0], effect, 1)[0])
    assert on_index.slope < 3 * on_elo.slope < 0  # the index overstates the change 3-fold


def _seats(effects: list[float], ses: list[float], names: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "players": 4,
            "ruleset": "standard",
            "level_index": range(len(effects)),
            "level": names,
            "kind": "skill level",
            "seat": 0,
            "effect_pp": effects,
            "se_pp": ses,
            "share": [0.25 + e / 100 for e in effects],
            "n_eff": [1 / (s / 100) ** 2 * 0.1875 for s in ses],
            "n_games": 4000,
            "n_blocks": 1000,
        }
    )


def _strength(names: list[str], elo: list[float]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "players": 4,
            "ruleset": "standard",
            "level": names,
            "elo": elo,
            "status": "measured",
            "separated": [False] + [True] * (len(names) - 1),
        }
    )


def _family(seats: pd.DataFrame, strength: pd.DataFrame) -> pd.DataFrame:
    rt = ReportTables()
    rt.tables.skill_seats = seats
    rt.tables.skill_steps = _steps(seats, 0.95)
    rt.tables.skill_trends = _lines(seats, strength, {"random"})
    return findings.find(rt)


def test_a_v_shape_is_not_called_a_trend() -> None:
    """A simulated V (down 4 pp, then up 4 pp, tight intervals) fails the line's
    lack-of-fit test: the findings are the steps between levels, not a trend."""
    names = ["a", "b", "c"]
    seats = _seats([4.0, 0.0, 4.0], [0.3, 0.3, 0.3], names)
    table = _family(seats, _strength(names, [1000.0, 1300.0, 1600.0]))
    assert (table["question"] == "skill trend").sum() == 0
    steps = table.loc[table["question"] == "skill step"]
    assert steps["model"].tolist() == ["a to b", "b to c"]
    assert steps["estimate"].tolist() == pytest.approx([-4.0, 4.0])
    assert (steps["verdict"] == "matters").all()


def test_a_line_that_fits_is_a_trend_with_and_without_random() -> None:
    """A straight decline on four measured levels is one trend finding over every level
    and one over the levels other than random, each judged on the line's change over its
    levels' range (-0.5 pp per 100 Elo: -5.5 pp over 800-1,900 Elo, -2 pp over 1,500-1,900)."""
    names = ["random", "greedy", "b1", "b2"]
    elo = [800.0, 1500.0, 1700.0, 1900.0]
    effects = [6.0 - 0.5 * (x - 800) / 100 for x in elo]
    table = _family(_seats(effects, [0.2] * 4, names), _strength(names, elo))
    lines = table.loc[table["question"] == "skill trend"]
    assert sorted(lines["model"]) == ["skill levels (every level)", "skill levels (without random)"]
    assert lines["estimate"].tolist() == pytest.approx([-5.5, -2.0])
    assert (lines["unit"] == "pp over the levels' range").all()
    assert (table["question"] == "skill step").sum() == 0
    assert all("shrinks as skill rises" in s for s in lines["sentence"])


def test_a_slope_small_per_100_elo_is_not_negligible_over_a_wide_range() -> None:
    """-0.2 pp per 100 Elo (within the 1 pp margin per 100 Elo) over 1,650 Elo is a change
    of -3.3 pp: with tight intervals that matters, and it is never called negligible (the
    audit's case: a trend called negligible per 100 Elo that added up to 3 pp)."""
    names = ["random", "placement-only", "greedy", "expert-fast"]
    elo = [570.0, 1540.0, 1910.0, 2220.0]
    effects = [4.0 - 0.2 * (x - 570) / 100 for x in elo]
    table = _family(_seats(effects, [0.1] * 4, names), _strength(names, elo))
    line = table.loc[
        (table["question"] == "skill trend") & (table["model"] == "skill levels (every level)")
    ].iloc[0]
    assert line["estimate"] == pytest.approx(-3.3)
    assert line["verdict"] == "matters"
    assert "-3.3 pp" in line["sentence"] and "slope -0.2 pp per 100 Elo" in line["sentence"]


def test_levels_not_separated_in_strength_give_no_line() -> None:
    """Three levels of which two overlap in strength: fewer than three distinct levels,
    so the steps are stated instead of a line."""
    names = ["a", "b", "c"]
    strength = _strength(names, [1000.0, 1300.0, 1310.0]).assign(separated=[False, True, False])
    table = _family(_seats([3.0, 1.0, 0.5], [0.3] * 3, names), strength)
    assert (table["question"] == "skill trend").sum() == 0
    assert (table["question"] == "skill step").sum() == 2


def test_the_report_states_levels_steps_and_strengths(skill_run: tuple[Path, Path]) -> None:
    """report.md has the skill section with the strength table and a finding per step,
    players counted from 1."""
    _, report = skill_run
    md = (report / "report.md").read_text(encoding="utf-8")
    assert re.search(r"^## \d+\. Balance per skill level$", md, re.M)
    assert "Each skill level's strength" in md
    assert "from random to greedy-area players" in md
    assert "player 2's" not in md.split("## 1.")[0]  # 2 players: only player 1 is tested


def test_the_skill_section_lists_its_findings_under_their_verdicts(
    skill_run: tuple[Path, Path],
) -> None:
    """The skill section gives each of its findings (findings.csv's skill trends and steps)
    once, whole (with its players), under its verdict's heading, what matters first."""
    _, report = skill_run
    md = (report / "report.md").read_text(encoding="utf-8")
    section = re.split(r"^## \d+\. Balance per skill level$", md, flags=re.M)[1].split("\n## ")[0]
    found = pd.read_csv(report / "findings.csv")
    skill = found.loc[found["question"].isin(["skill trend", "skill step"])]
    assert len(skill)
    for sentence in skill["sentence"]:
        assert section.count(f"- {sentence}\n") == 1
    heads = "It matters|Real, size undecided|Real but small|Negligible|Undecided"
    headings = re.findall(rf"^\*\*({heads}): (\d+) findings?\*\*$", section, re.M)
    labels = [findings.verdict_label(r.verdict, r.lo, r.hi) for r in skill.itertuples()]
    counts = pd.Series(labels).value_counts().to_dict()
    assert {"matters" if h == "It matters" else h.lower(): int(n) for h, n in headings} == counts
    order = [h for h, _ in headings]
    assert order == sorted(order, key=heads.split("|").index)


def test_undeclared_self_play_strategies_are_player_models(tmp_path: Path) -> None:
    """Self-play without skill_levels: each strategy is a player model shown beside the
    others, with no steps and no trend; the sections on the study's mix have no game."""
    run = play_run(
        tmp_path / "run",
        {
            "seed": 5,
            "games_per_lineup": 120,
            "rulesets": {"standard": {}, "late": {"base": "standard", "orient_at_end": True}},
            "strategies": {"greedy": {}, "greedy-area": {}},
            "schedule": {"kind": "self_play"},
        },
    )
    build_report([run], tmp_path / "report", rating_games=500, moves_games=50)
    seats = pd.read_csv(tmp_path / "report" / "skill_seats.csv")
    assert set(seats["kind"]) == {"player model"}
    assert pd.read_csv(tmp_path / "report" / "skill_steps.csv").empty
    found = pd.read_csv(tmp_path / "report" / "findings.csv")
    assert not found["question"].str.startswith("skill").any()
    assert pd.read_csv(tmp_path / "report" / "seat_shares.csv").empty
    md = (tmp_path / "report" / "report.md").read_text()
    assert "Balance per player model" in md and "no trend runs through them" in md


@pytest.fixture(scope="module")
def levels_alone(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two declared levels in self-play under a base and a variant, with no games between
    the levels (so no level's strength is measured): the run and its report folder."""
    base = tmp_path_factory.mktemp("levels_alone")
    run = play_run(
        base / "run",
        {
            "seed": 5,
            "games_per_lineup": 240,
            "rulesets": {"standard": {}, "late": {"base": "standard", "orient_at_end": True}},
            "strategies": {"random": {}, "greedy": {}},
            "schedule": {"kind": "self_play"},
            "skill_levels": ["random", "greedy"],
        },
    )
    build_report([run], base / "report", rating_games=500, moves_games=50)
    return run, base / "report"


def test_a_variant_is_judged_per_level_not_pooled(levels_alone: tuple[Path, Path]) -> None:
    """Two declared levels under a base and a variant: the variant's findings are per
    level and seat (the two rule sets' level means, recomputed from stats.game_metrics
    for the per-game metrics), and none pools the levels."""
    run, report = levels_alone
    found = pd.read_csv(report / "findings.csv")
    per_level = found.loc[found["question"] == "variant: seat_0_share"]
    assert sorted(per_level["model"]) == [
        "greedy players in every seat",
        "random players in every seat",
    ]
    assert (found["model"].str.contains("mix", regex=False)).sum() == 0
    games = runfolder.read_table(run, "games")
    seats = runfolder.read_table(run, "seats")
    metrics = stats.game_metrics(games, seats)
    level_of = seats.groupby("game_id")["strategy"].first()
    metrics["level"] = level_of.reindex(metrics.index).to_numpy()  # indexed by game_id
    got = pd.read_csv(report / "skill_metric_variants.csv")
    for r in got.itertuples():
        mean = metrics.groupby(["ruleset", "level"])[r.metric].mean()
        assert r.difference_value == pytest.approx(
            mean["late", r.level] - mean["standard", r.level]
        )


def test_levels_never_measured_are_one_sentence_not_rows(
    levels_alone: tuple[Path, Path],
) -> None:
    """Declared levels with no games between them have no strength: the report says so in
    one sentence naming each player count and rule set, with no table row per level (the
    CSV keeps them), and its findings compare neighbouring levels step by step."""
    _, report = levels_alone
    strength = pd.read_csv(report / "skill_strength.csv")
    assert (strength["status"] == "not measured").all() and len(strength) == 4
    md = (report / "report.md").read_text(encoding="utf-8")
    section = re.split(r"^## \d+\. Balance per skill level$", md, flags=re.M)[1].split("\n## ")[0]
    said = re.search(r"No level's strength is measured in (.*?): the study has no games", section)
    assert said and sorted(said.group(1).split("; ")) == ["late, 4 players", "standard, 4 players"]
    assert "Each skill level's strength" not in section
    assert "not measured (no games against the other levels)" not in md
    found = pd.read_csv(report / "findings.csv")
    steps = found.loc[found["question"] == "skill step", "sentence"]
    assert len(steps) and all("from random to greedy players" in x for x in steps)


def test_a_self_play_rate_is_no_estimate(tmp_path: Path) -> None:
    """A strategy in every seat wins exactly its fair share: its games give no win rate
    with an interval (the win-rate tables leave self-play out), and no power claim."""
    run = play_run(
        tmp_path / "run",
        {
            "seed": 8,
            "games_per_lineup": 60,
            "rulesets": {"standard": {}},
            "strategies": {"greedy": {}},
            "schedule": {"kind": "self_play"},
        },
    )
    build_report([run], tmp_path / "report", rating_games=200, moves_games=20)
    assert pd.read_csv(tmp_path / "report" / "lineup_win_rates.csv").empty
    power = pd.read_csv(tmp_path / "report" / "power.csv")
    assert not power["section"].eq("win rates").any()
    seats = pd.read_csv(tmp_path / "report" / "skill_seats.csv")
    assert seats["n_games"].tolist() == [60] * 4 and set(seats["kind"]) == {"player model"}


def test_a_rate_constant_in_every_block_has_no_interval() -> None:
    """A win-rate row that no block varies and that equals its fair share is marked a
    constant: no interval, no effective count."""
    from marrakech_sim.report.sections.winrates import _finish_win_rates

    tab = pd.DataFrame(
        {
            "strategy": ["a", "b"],
            "n_games": [100, 100],
            "n": [400, 200],
            "n_blocks": [100, 100],
            "total": [100.0, 130.0],
            "estimate": [0.25, 0.65],
            "var": [0.0, 0.001],
            "lo": [0.2, 0.6],
            "hi": [0.3, 0.7],
            "fair_share": [0.25, 0.5],
            "n_eff": [400.0, 227.0],
            "design_effect": [1.0, 0.9],
        }
    )
    got = _finish_win_rates(["strategy"], tab)
    assert got["constant"].tolist() == [True, False]
    assert np.isnan(got.loc[0, "lo"]) and got.loc[1, "lo"] == 0.6


def test_at_a_glance_gives_the_mixed_games_means_on_their_row_only(
    skill_run: tuple[Path, Path],
) -> None:
    """The first screen's table has a row per player model (the mix, each level in
    self-play) for its seat gap, but its game means (length, bankruptcies, margin, the
    lead, choices) are of the mixed games: on the mix's row, equal to variant_summary
    (which reads the mixed games alone), and on no self-play row."""
    _, folder = skill_run
    md = (folder / "report.md").read_text(encoding="utf-8")
    lines = md[md.index("**At a glance") :].splitlines()[2:]
    table = itertools.takewhile(lambda x: x.startswith("|"), lines)
    rows = [[c.strip() for c in x.strip("|").split("|")] for x in table if "---" not in x][1:]
    models = [r[1] for r in rows]
    assert sorted(models) == sorted(
        ["mix: greedy, greedy-area, random"] + [f"{s} players in every seat" for s in LEVELS]
    )
    means = pd.read_csv(folder / "variant_summary.csv").set_index("metric")
    m = means.loc["turns"]
    for row in rows:
        if row[1].startswith("mix: "):
            assert row[3] == f"{m['mean']:.1f} [{m['lo']:.1f}, {m['hi']:.1f}]"
        else:
            assert row[3:] == ["-"] * 5, row


def test_a_variant_played_on_common_seeds_is_paired_per_level(tmp_path: Path) -> None:
    """With common seeds (here a sweep) a level's variant and base share their dice block
    by block: skill_variants' seat difference is statsmodels' OLS of the seat's win on a
    variant dummy, cluster-robust on the seed (its small-sample factor (N - 1) / (N - K)
    taken out: the report's is G / (G - 1) alone), with a t interval on G - 1 degrees of
    freedom, every variant block paired; the same games taken as independent samples
    would give a wider interval."""
    run = play_run(
        tmp_path / "run",
        {
            "seed": 9,
            "games_per_lineup": 400,
            "rulesets": {"two": {"players": 2}},
            "strategies": {"random": {}},
            "schedule": {"kind": "self_play"},
            "sweep": {"starting_dirhams": [3, 30]},
        },
    )
    build_report([run], tmp_path / "report", rating_games=200, moves_games=20)
    got = pd.read_csv(tmp_path / "report" / "skill_variants.csv")
    games = runfolder.read_table(run, "games")
    seats = runfolder.read_table(run, "seats")
    assert len(got) == 2
    for r in got.itertuples():
        rows = seats.loc[seats["seat"] == r.seat].merge(games, on="game_id")
        rows = rows.loc[rows["ruleset"].isin([r.ruleset, r.baseline])]
        x = sm.add_constant((rows["ruleset"] == r.ruleset).astype(float).to_numpy())
        y = rows["win_share"].to_numpy(dtype=float)
        fit = sm.OLS(y, x).fit(cov_type="cluster", cov_kwds={"groups": rows["seed"].to_numpy()})
        n, k = len(y), 2
        se = float(fit.bse[1]) / np.sqrt((n - 1) / (n - k))
        clusters = rows["seed"].nunique()
        assert r.difference_pp == pytest.approx(100 * fit.params[1], abs=1e-6)
        assert r.se_pp == pytest.approx(100 * se, rel=1e-5)
        assert r.df == clusters - 1
        half = 100 * se * sps.t.ppf(0.975, clusters - 1)
        assert (r.lo_pp, r.hi_pp) == pytest.approx((r.difference_pp - half, r.difference_pp + half))
        # every variant block shares its seed with a base block
        assert r.paired == rows.loc[rows["ruleset"] == r.ruleset, "block"].nunique() == clusters
        # each rule set's blocks alone (the ratio estimator's CR1 variance), added
        var = 0.0
        for _, side in rows.groupby("ruleset"):
            block = side.groupby("seed")["win_share"].agg(["sum", "count"])
            mean, total = side["win_share"].mean(), len(side)
            g = len(block)
            psi = (block["sum"] - mean * block["count"]) / total
            var += g / (g - 1) * float((psi**2).sum())
        assert se < np.sqrt(var)


def test_an_undecided_trend_names_the_games_for_power() -> None:
    """A trend's standard error shrinks as every level's games grow alike: an undecided
    line names the games (over all its levels) for 80% power, not just 'more games'."""
    names = ["random", "placement-only", "greedy"]
    elo = [570.0, 1540.0, 1910.0]
    table = _family(_seats([4.0, 3.6, 3.2], [0.6] * 3, names), _strength(names, elo))
    line = table.loc[table["question"] == "skill trend"].iloc[0]
    assert line["verdict"] == "undecided" and line["n_games"] == 3 * 4000
    assert line["games_needed"] > line["n_games"]
    assert f"{round(line['games_needed'] - line['n_games']):,} more games" in line["sentence"]


def test_a_mix_of_one_rule_set_points_to_the_per_level_comparisons(tmp_path: Path) -> None:
    """Self-play under a base and a variant, and mixed games under the base alone (the
    skill study with its decides run): the variant section has nothing to compare among
    the mixed games and says where the rule sets are compared (per player model)."""
    rulesets = {"standard": {}, "late": {"base": "standard", "orient_at_end": True}}
    alone = play_run(
        tmp_path / "alone",
        {
            "seed": 5,
            "games_per_lineup": 120,
            "rulesets": rulesets,
            "strategies": {"random": {}, "greedy": {}},
            "schedule": {"kind": "self_play"},
        },
    )
    mixed = play_run(
        tmp_path / "mixed",
        {
            "seed": 6,
            "games_per_lineup": 120,
            "rulesets": {"standard": {}},
            "strategies": {"random": {}, "greedy": {}},
            "schedule": {"kind": "lineups", "lineups": [["greedy", "random", "random", "random"]]},
        },
    )
    build_report([alone, mixed], tmp_path / "report", rating_games=500, moves_games=50)
    text = (tmp_path / "report" / "report.md").read_text()
    variants = text[text.index(". Variant comparison") :]
    variants = variants[: variants.index("\n## ")]
    assert "only one rule set per player count: nothing to compare here" in variants
    assert "compared per player model" in variants
    assert len(pd.read_csv(tmp_path / "report" / "skill_variants.csv"))


def test_the_first_screen_shows_the_seat_effects_per_skill_level(
    skill_run: tuple[Path, Path],
) -> None:
    """A study with skill levels opens on its own question: the seat effects per level
    (again in their section), not the mixed games' seat gaps; the caption says its bars
    are narrower than the family's intervals the sentences give."""
    _, folder = skill_run
    md = (folder / "report.md").read_text(encoding="utf-8")
    summary = md[md.index("## Summary") : md.index("## Every finding")]
    assert re.findall(r"\]\(([a-z_0-9]+)\.png\)", summary) == ["skill_2_two"]
    assert "each seat's own 95% interval; the sentences above give the family's, wider" in summary
    assert md.count("](skill_2_two.png)") == 2
