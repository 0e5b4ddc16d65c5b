"""The report's Response curves section, on a real played sweep.

Each table is checked against a second computation from the run's own tables: the seat
effects against ``stats.seat_win_shares`` on each value's games, the per-value measures
against plain means over the games, the decided turn against ``stats.lead_metrics``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from conftest import play_run
from test_report_tables import documented

from marrakech_sim import runfolder, stats
from marrakech_sim.report import build_report
from marrakech_sim.report.build import SECTIONS
from marrakech_sim.report.sections.response import curve_verdicts
from marrakech_sim.report.tables import ReportTables

PURSES = [1, 4, 30]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Random and greedy self-play, 4 and 2 players, the starting purse swept (poor purses:
    bankruptcies)."""
    base = tmp_path_factory.mktemp("response")
    run = play_run(
        base / "run",
        {
            "seed": 5,
            "games_per_lineup": 300,
            "rulesets": {"four": {}, "two": {"players": 2}},
            "strategies": {"random": {}, "greedy": {}},
            "schedule": {"kind": "self_play"},
            "sweep": {"starting_dirhams": PURSES},
            "report": {"matters_pp": 2.0},
        },
    )
    build_report([run], base / "report", rating_games=2_000, moves_games=200)
    return run, base / "report"


def _games(run: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    games = runfolder.read_table(run, "games")
    seats = runfolder.read_table(run, "seats")
    level = seats.groupby("game_id")["strategy"].first().rename("level")
    return games.merge(level, on="game_id"), seats


def test_seat_effects_are_those_of_each_values_games(sweep: tuple[Path, Path]) -> None:
    """response_points holds each seat's effect and interval at each value and level,
    as stats.seat_win_shares gives them on that value's games alone."""
    run, report = sweep
    points = pd.read_csv(report / "response_points.csv")
    games, seats = _games(run)
    assert len(points) == 2 * 3 * (4 + 2)  # levels x values x seats
    for (ruleset, level), part in games.groupby(["ruleset", "level"]):
        expected = stats.seat_win_shares(part, seats.loc[seats["game_id"].isin(part["game_id"])])
        got = points.loc[(points["ruleset"] == ruleset) & (points["level"] == level)]
        got = got.sort_values("seat")
        for col in ("effect_pp", "effect_lo_pp", "effect_hi_pp"):
            np.testing.assert_allclose(got[col], expected[col], rtol=1e-5, atol=1e-6)
        assert got["n_games"].tolist() == expected["n_games"].tolist()


def test_per_value_measures_are_plain_means_of_the_games(sweep: tuple[Path, Path]) -> None:
    """Game length, the bankruptcy rate, the margin and the decided turn at each value are
    the means over its games (stats.game_metrics, stats.lead_metrics); the poor purses
    have bankruptcies."""
    run, report = sweep
    metrics = pd.read_csv(report / "response_metrics.csv")
    games, seats = _games(run)
    per_game = stats.game_metrics(games, seats).merge(games[["game_id", "level"]])
    means = per_game.groupby(["ruleset", "level"])[["turns", "bankrupt", "margin"]].mean()
    for metric in ("turns", "bankrupt", "margin"):
        got = metrics.loc[metrics["metric"] == metric].set_index(["ruleset", "level"])["mean"]
        # a value where no game has two scores (2 players, one bankrupt) has no margin
        expected = means[metric].dropna().sort_index()
        np.testing.assert_allclose(got.sort_index(), expected, rtol=1e-5)
    bankrupt = metrics.loc[metrics["metric"] == "bankrupt"]
    assert bankrupt.loc[bankrupt["x"] == 1, "mean"].min() > 0.1
    # decided turn: every game of this small run is in the sample (2,000 games per value)
    moves = runfolder.read_table(run, "moves")
    p = games["players"].to_numpy()
    turn_scores = []
    for width in np.unique(p):
        mine = moves.loc[moves["game_id"].isin(games.loc[p == width, "game_id"])]
        for seat in range(int(width)):
            turn_scores.append(
                pd.DataFrame(
                    {
                        "game_id": mine["game_id"],
                        "turn": mine["turn"],
                        "seat": seat,
                        "score": [
                            d[seat] + v[seat]
                            for d, v in zip(
                                mine["dirhams_after"], mine["visible_after"], strict=True
                            )
                        ],
                    }
                )
            )
    ts = pd.concat(turn_scores, ignore_index=True)
    elim = seats.set_index(["game_id", "seat"])["eliminated_turn"]
    out_at = elim.reindex(pd.MultiIndex.from_frame(ts[["game_id", "seat"]])).to_numpy()
    ts.loc[(~np.isnan(out_at)) & (ts["turn"].to_numpy() >= out_at), "score"] = np.nan
    lead = stats.lead_metrics(ts, games, seats)
    decided = games.set_index("game_id").join(lead["decided_turn"])
    expected = decided.groupby(["ruleset", "level"])["decided_turn"].mean().sort_index()
    got = metrics.loc[metrics["metric"] == "decided_turn"].set_index(["ruleset", "level"])
    np.testing.assert_allclose(got["mean"].sort_index(), expected, rtol=1e-5)


def test_a_margin_over_different_sets_of_games_is_compared_on_the_same_games(
    sweep: tuple[Path, Path],
) -> None:
    """A 2-player game with a bankruptcy has no margin, so a poor purse has a margin in
    fewer games: skill_metric_variants says in what share of each rule set's games the
    metric has a value (counted here from the games), and since the sweep's values share
    their dice the margin's difference is taken on the seeds where every game has one
    under both purses (recomputed here from the games with pandas), which the finding
    says; a metric every game has is compared as it is."""
    run, report = sweep
    games, seats = _games(run)
    per_game = stats.game_metrics(games, seats).merge(games[["game_id", "level", "seed"]])
    shares = per_game.groupby(["ruleset", "level"])["margin"].apply(lambda m: m.notna().mean())
    comp = pd.read_csv(report / "skill_metric_variants.csv")
    margin = comp.loc[comp["metric"] == "margin"]
    assert len(margin)
    for r in margin.itertuples():
        assert r.defined_share == pytest.approx(shares[r.ruleset, r.level])
        assert r.defined_share_baseline == pytest.approx(shares[r.baseline, r.level])
    assert not comp.loc[comp["metric"] == "turns", "common_only"].any()
    assert (comp.loc[comp["metric"] == "turns", ["defined_share"]] == 1.0).all().all()
    per_seed = per_game.groupby(["ruleset", "level", "seed"]).agg(
        games=("margin", "size"), with_margin=("margin", "count"), total=("margin", "sum")
    )
    uneven = margin.loc[margin["common_only"]]
    assert len(uneven), "the poor 2-player purses should have bankruptcies"
    for r in uneven.itertuples():
        a, b = per_seed.loc[(r.ruleset, r.level)], per_seed.loc[(r.baseline, r.level)]
        both = a.add_suffix("_a").join(b.add_suffix("_b"), how="inner")
        both = both.loc[
            (both["with_margin_a"] == both["games_a"]) & (both["with_margin_b"] == both["games_b"])
        ]
        want = both["total_a"].sum() / both["games_a"].sum()
        want -= both["total_b"].sum() / both["games_b"].sum()
        assert r.difference_value == pytest.approx(want, rel=1e-6)  # the CSV keeps 7 digits
        assert (r.n_games, r.n_games_baseline) == (both["games_a"].sum(), both["games_b"].sum())
        # its standard error: statsmodels' OLS of the margin on a variant dummy over those
        # seeds' games, cluster-robust on the seed (its factor (N - 1) / (N - K) taken out)
        if len(both) < 2:  # one seed has no spread to measure
            assert np.isnan(r.se_value)
            continue
        keep = per_game.loc[
            per_game["ruleset"].isin([r.ruleset, r.baseline])
            & (per_game["level"] == r.level)
            & per_game["seed"].isin(both.index)
        ]
        x = sm.add_constant((keep["ruleset"] == r.ruleset).astype(float).to_numpy())
        y = keep["margin"].to_numpy(dtype=float)
        fit = sm.OLS(y, x).fit(cov_type="cluster", cov_kwds={"groups": keep["seed"].to_numpy()})
        se = float(fit.bse[1]) / np.sqrt((len(y) - 1) / (len(y) - 2))
        assert r.se_value == pytest.approx(se, rel=1e-5, abs=1e-6)
        assert r.df == len(both) - 1
    found = pd.read_csv(report / "findings.csv")
    notes = found.loc[found["sentence"].str.contains("the difference is taken on the seeds")]
    assert len(notes) >= len(uneven.loc[uneven["ruleset"] != uneven["baseline"]]) > 0
    assert notes["sentence"].str.contains("the winning margin has a value in").all()
    assert not found["sentence"].str.contains("compares different sets of games").any()
    lengths = found.loc[found["sentence"].str.contains("the game length is")]
    assert len(lengths) and not lengths["sentence"].str.contains("Note:").any()


def test_one_sentence_and_one_chart_per_curve(sweep: tuple[Path, Path]) -> None:
    """Each (rule set, level) curve has its verdict sentence (fairest value, fair within the
    study's margin or not, the cost there) in the report, and its chart as a PNG."""
    _, report = sweep
    verdicts = pd.read_csv(report / "response_verdicts.csv")
    assert len(verdicts) == 4  # two bases x two levels
    assert set(verdicts["matters_pp"]) == {2.0}
    text = (report / "report.md").read_text()
    headings = [re.sub(r"^\d+\\?\. ", "", h) for h in re.findall(r"^## (.+)$", text, re.M)]
    owner = {h: i for i, section in enumerate(SECTIONS) for h in section.headings}
    assert "Response curves" in headings
    assert [owner[h] for h in headings] == sorted(owner[h] for h in headings)
    for sentence in verdicts["sentence"]:
        assert "the seats are fairest at starting dirhams" in sentence
        assert "±2 pp" in sentence and "games with a bankruptcy" in sentence
        assert sentence in text
    for i in range(1, 5):
        assert (report / f"response_{i}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    curves = pd.read_csv(report / "response_curves.csv")
    assert curves.groupby(["base", "level", "seat"]).size().min() > 50
    assert curves["effect_lo_pp"].le(curves["effect_pp"]).all()


def test_the_tables_are_documented(sweep: tuple[Path, Path]) -> None:
    """Each response table has exactly the columns docs/report-tables.md lists for it."""
    _, report = sweep
    tables = documented()
    for name in (
        "response_points",
        "response_curves",
        "response_fits",
        "response_metrics",
        "response_verdicts",
    ):
        header = (report / f"{name}.csv").read_text().splitlines()[0].split(",")
        assert set(header) == tables[name][0], name
        assert tables[name][1]  # written only for a sweep


def _point(seat: int, v: float, effect: float, half: float, joint: float) -> dict[str, object]:
    """One row of response_points: a seat of a 2-player sweep of the starting purse at v,
    its effect with a pointwise half-width `half` and a joint half-width `joint`."""
    return {
        "base": "two",
        "level": "greedy",
        "series": "",
        "ruleset": f"two_starting_dirhams_{v:.0f}",
        "x_key": "starting_dirhams",
        "x": v,
        "x_value": int(v),
        "players": 2,
        "seat": seat,
        "n_games": 100,
        "n_blocks": 100,
        "share": 0.5 + effect / 100,
        "effect_pp": effect,
        "effect_lo_pp": effect - half,
        "effect_hi_pp": effect + half,
        "joint_lo_pp": effect - joint,
        "joint_hi_pp": effect + joint,
    }


def test_fairness_verdict_follows_the_intervals() -> None:
    """Every seat's band inside +-margin at some value: the sentence says fair there; the
    estimates inside but a band across the margin: the data cannot yet show it; some seat
    wholly beyond the margin at every value: no value makes the seats fair; estimates
    beyond but intervals reaching inside: neither shown."""

    def tables(half_width: float, offset: float = 0.0) -> ReportTables:
        x = np.array([10.0, 20.0, 30.0])
        rows = []
        for seat, sign in ((0, 1.0), (1, -1.0)):
            for v in x:
                effect = sign * (abs(v - 20.0) / 10.0 + offset)  # fairest at 20
                # the verdict reads the joint intervals (Bonferroni, wider)
                rows.append(_point(seat, v, effect, half_width / 2, half_width))
        rt = ReportTables()
        rt.tables.response_points = pd.DataFrame(rows)
        return rt

    sure = curve_verdicts(tables(0.5), 1.0).iloc[0]
    assert sure["fairest_x"] == 20.0 and sure["all_fair_at_best"]
    assert "there every seat is fair within ±1 pp" in sure["sentence"]
    unsure = curve_verdicts(tables(3.0), 1.0).iloc[0]
    assert not unsure["all_fair_at_best"]
    assert "the data cannot yet show every seat fair" in unsure["sentence"]
    unfair = curve_verdicts(tables(0.5, offset=2.0), 1.0).iloc[0]
    assert unfair["unfair_everywhere"]
    assert "no value in the range makes every seat fair within ±1 pp" in unfair["sentence"]
    beyond = curve_verdicts(tables(1.5, offset=2.0), 1.0).iloc[0]
    assert (
        "no value in the range is shown fair within ±1 pp, nor shown unfair" in (beyond["sentence"])
    )
    assert curve_verdicts(ReportTables(), 1.0).empty  # no sweep: no section


def _fitted_tables(lack_p: float, gap: bool = False) -> ReportTables:
    """Two seats of a 2-player sweep over 10..50: points, a fitted curve whose
    simultaneous band lies inside +-1 pp from 20 to 40 (with a gap at 30 when ``gap``),
    and the curve's fit row with the given lack-of-fit p."""
    xs = np.linspace(10.0, 50.0, 41)
    width = np.where(np.abs(xs - 30.0) <= 10.0, 0.5, 3.0)
    if gap:
        width = np.where(np.isclose(xs, 30.0), 3.0, width)
    points, curves = [], []
    for seat, sign in ((0, 1.0), (1, -1.0)):
        for v in (10.0, 20.0, 30.0, 40.0, 50.0):
            points.append(_point(seat, v, sign * 0.2, 4.0, 6.0))
        effect = sign * 0.01 * (xs - 30.0)
        curves.append(
            pd.DataFrame(
                {
                    "base": "two",
                    "level": "greedy",
                    "series": "",
                    "players": 2,
                    "seat": seat,
                    "x": xs,
                    "share": 0.5 + effect / 100,
                    "effect_pp": effect,
                    "effect_lo_pp": effect - width / 2,
                    "effect_hi_pp": effect + width / 2,
                    "band_lo_pp": effect - width,
                    "band_hi_pp": effect + width,
                }
            )
        )
    rt = ReportTables()
    rt.tables.response_points = pd.DataFrame(points)
    rt.tables.response_curves = pd.concat(curves, ignore_index=True)
    rt.tables.response_fits = pd.DataFrame(
        [
            {
                "base": "two",
                "level": "greedy",
                "series": "",
                "players": 2,
                "values": 5,
                "fitted": True,
                "lack_df": 2,
                "lack_chi2": 1.0,
                "lack_p": lack_p,
                "band_crit": 2.6,
                "fairest_x": 30.0,
                "fairest_lo": 24.0,
                "fairest_hi": 37.0,
            }
        ]
    )
    return rt


def test_a_fitting_curve_is_read_through_its_simultaneous_band() -> None:
    """The quadratic fits (lack of fit p 0.4): the sentence reads the curve's simultaneous
    band (fair from 20 to 40, not the pointwise band's wider stretch), gives the fairest
    value's interval and the lack-of-fit p; with a value inside the stretch where a band
    leaves the margin, it says the fair values have gaps."""
    r = curve_verdicts(_fitted_tables(0.4), 1.0).iloc[0]
    assert r["fitted"] and r["fair_whole"]
    assert (r["fair_from"], r["fair_to"]) == (20.0, 40.0)
    assert "the lack-of-fit test does not reject the quadratic: p = 0.4" in r["sentence"]
    assert "value swept" not in r["sentence"]  # 30 is inside the range
    assert "fairest at starting dirhams 30 (95% interval 24 to 37)" in r["sentence"]
    assert "from starting dirhams 20 to starting dirhams 40" in r["sentence"]
    assert "simultaneous band inside ±1 pp" in r["sentence"]
    gap = curve_verdicts(_fitted_tables(0.4, gap=True), 1.0).iloc[0]
    assert not gap["fair_whole"] and not gap["all_fair_at_best"]
    assert (
        "at some values between starting dirhams 20 and starting dirhams 40, not all"
        in (gap["sentence"])
    )


def test_a_curve_that_does_not_fit_sends_the_verdict_to_the_points() -> None:
    """Lack of fit p 0.001: the sentence says the quadratic does not fit, reads the points'
    joint intervals (which reach beyond +-1 pp: no value shown fair), and names the
    fairest among the swept values, with no interval of its own."""
    r = curve_verdicts(_fitted_tables(0.001), 1.0).iloc[0]
    assert not r["fitted"] and np.isnan(r["fairest_lo"])
    assert "the quadratic does not fit the points (lack of fit p = 0.001)" in r["sentence"]
    # every value's points are the same: the sentence names them all
    assert (
        "fairest among the swept values at starting dirhams 10 by the estimates, but the "
        "joint intervals do not tell it from 20, 30, 40, 50" in (r["sentence"])
    )
    assert r["fairest_tied"] == "10 20 30 40 50"
    assert "(the lowest value swept: values below it were not played)" in r["sentence"]
    assert (r["largest_lo_pp"], r["largest_hi_pp"]) == (-5.8, 6.2)
    assert np.isnan(r["fair_from"])
    assert "the data cannot yet show every seat fair" in r["sentence"]


def test_the_fairest_point_is_named_alone_only_where_the_others_are_shown_less_fair() -> None:
    """Read from the points: a value whose joint intervals overlap the fairest one's is
    not told apart from it (its effects could be as small), however its estimates
    compare; a value where some seat's whole interval lies further from 0 than every
    interval at the fairest reaches is shown less fair and left out."""
    points = []
    for seat, sign in ((0, 1.0), (1, -1.0)):
        points.append(_point(seat, 10.0, sign * 8.0, 0.5, 1.0))  # [7, 9]: further than 2
        points.append(_point(seat, 20.0, sign * 0.5, 0.5, 1.0))  # the fairest: reaches 1.5
        points.append(_point(seat, 30.0, sign * 1.4, 0.5, 1.0))  # [0.4, 2.4]: overlaps
    rt = ReportTables()
    rt.tables.response_points = pd.DataFrame(points)
    r = curve_verdicts(rt, 1.0).iloc[0]
    assert r["fairest_x"] == 20.0 and r["fairest_tied"] == "20 30"
    assert "do not tell it from 30 (none of those is shown less fair)" in r["sentence"]


def test_two_values_are_joined_by_a_line_and_the_sentence_says_line() -> None:
    """With two values the curve is a line through the points (nothing to test for lack
    of fit): the sentence calls the reading between them the line's, not a quadratic's."""
    rt = _fitted_tables(float("nan"))
    pts = rt.tables.response_points
    rt.tables.response_points = pts.loc[pts["x"].isin([10.0, 50.0])]
    r = curve_verdicts(rt, 1.0).iloc[0]
    assert "with 2 values the curve passes through the points" in r["sentence"]
    assert "it is the line's reading" in r["sentence"] and "quadratic" not in r["sentence"]


def test_a_value_between_whole_numbers_is_named_as_it_is() -> None:
    """A fitted curve's fairest value between two whole purses is named with its decimal
    (30.7), not rounded to a purse whose effect the sentence does not give."""
    rt = _fitted_tables(0.4)
    rt.tables.response_fits["fairest_x"] = 30.7
    curves = rt.tables.response_curves
    rt.tables.response_curves = pd.concat(
        [curves, curves.loc[curves["x"] == 30.0].assign(x=30.7)], ignore_index=True
    )
    r = curve_verdicts(rt, 1.0).iloc[0]
    assert "fairest at starting dirhams 30.7 (95% interval 24 to 37)" in r["sentence"]


def test_the_summary_of_self_play_names_its_strategies_and_the_studys_margins(
    sweep: tuple[Path, Path],
) -> None:
    """A study of self-play alone names the strategies its findings hold for (not a
    placeholder), and the glossary states the study's own margins, in plain words (no
    Markdown emphasis, which the report prints as text)."""
    _, report = sweep
    text = (report / "report.md").read_text()
    assert "the scripted strategies this study played (greedy, random)" in text
    words = next(line for line in text.splitlines() if line.startswith("Words used here"))
    assert "*" not in words and "\\*" not in words
    assert "2 pp for a share, 1 point of winning margin, 1 turn of game length, 20 Elo" in words
    # the first screen: the first response curves, then the seat gaps alone (no mixed games)
    summary = text[text.index("## Summary") : text.index("## Every finding")]
    shown = re.findall(r"\]\((response_\d+)\.png\)", summary)
    assert shown == ["response_1", "response_2", "response_3"]  # HEADLINE_MOST of 4
    glance = summary[summary.index("**At a glance (seat gap: the family's interval)**") :]
    assert glance.splitlines()[2] == "| rule set | players' model | largest seat gap |"


def test_no_finding_says_lower_by_a_negative_number(sweep: tuple[Path, Path]) -> None:
    """A finding's direction word and its signed value agree and never stack into 'lower
    by -2.1': the word states the direction, the value follows a colon; an estimate shown
    as 0 has no direction ('about the same', 'changes')."""
    _, report = sweep
    found = pd.read_csv(report / "findings.csv")
    text = " ".join(found["sentence"]) + " " + " ".join(found["headline"].dropna())
    assert not re.search(r"(by|of) -\d", text), re.findall(r".{40}(?:by|of) -\d.{20}", text)
    variant = found.loc[found["question"] == "variant"]
    for sentence in variant["sentence"]:
        value = re.search(r" is (higher|lower|about the same): ([+-]?[\d.]+)", sentence)
        assert value, sentence
        word, number = value.group(1), float(value.group(2))
        if word == "about the same":
            assert number == 0
        else:
            assert (number > 0) == (word == "higher") and number != 0
