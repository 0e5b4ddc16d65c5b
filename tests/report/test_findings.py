"""The report's findings: one corrected family, verdicts of practical size, each fact once."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import play_run
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from marrakech_sim import runfolder
from marrakech_sim.report import build_report, findings
from marrakech_sim.report.tables import ReportTables
from marrakech_sim.run.config import ReportOptions
from marrakech_sim.stats import verdicts


def _seat_rows(ruleset: str, players: int, shares: list[float], n_eff: float, n: int):
    fair = 1.0 / players
    return [
        {
            "players": players,
            "ruleset": ruleset,
            "seat": s,
            "n_games": n,
            "n_blocks": n // 4,
            "n_eff": n_eff,
            "share": share,
            "effect_pp": 100 * (share - fair),
        }
        for s, share in enumerate(shares)
    ]


def _tables() -> ReportTables:
    rt = ReportTables()
    rt.tables.seat_shares = pd.DataFrame(
        # 4 players: player 1 +5.6 pp on 200,000 effective games (tight), player 2 +0.1
        _seat_rows("standard", 4, [0.306, 0.251, 0.24, 0.203], 200_000, 200_000)
        + _seat_rows("two", 2, [0.501, 0.499], 200_000, 200_000)
        + _seat_rows("three", 3, [0.35, 0.33, 0.32], 900, 900)
    )
    rt.tables.variant_comparison = pd.DataFrame(
        {
            "metric": ["seat_0_share", "turns"],
            "baseline": ["standard", "standard"],
            "ruleset": ["variant", "variant"],
            "diff": [0.004, -0.05],
            "se": [0.002, 0.004],
            "n_games": [24_000, 24_000],
            "n_games_baseline": [24_000, 24_000],
        }
    )
    rt.tables.rulesets = pd.DataFrame(
        {"ruleset": ["standard", "variant", "two", "three"], "players": [4, 4, 2, 3]}
    )
    rt.tables.win_rates = pd.DataFrame({"strategy": ["greedy", "greedy-block"]})
    return rt


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return findings.find(_tables())


def _one(table: pd.DataFrame, question: str, ruleset: str, subject: str) -> pd.Series:
    rows = table.loc[
        (table["question"] == question)
        & (table["ruleset"] == ruleset)
        & (table["subject"] == subject)
    ]
    assert len(rows) == 1, rows
    return rows.iloc[0]


def test_the_family_counts_each_fact_once(table: pd.DataFrame) -> None:
    """Every seat is a test, except player 2 of a 2-player game (minus player 1's share);
    the family's size is the number of its findings, at one Bonferroni level."""
    seats = table.loc[table["question"] == "seat"]
    assert len(seats.loc[seats["ruleset"] == "two"]) == 1
    assert len(seats.loc[seats["ruleset"] == "standard"]) == 4
    m = len(table)
    assert (table["family_size"] == m).all()
    assert table["level"].iloc[0] == pytest.approx(1 - 0.05 / m)


def test_the_printed_interval_is_the_one_the_verdict_uses(table: pd.DataFrame) -> None:
    """A share's interval is Wilson's at the family's level (statsmodels), its quantile
    Student's t on the blocks' degrees of freedom (225 blocks: 224), and the sentence
    prints exactly that interval."""
    row = _one(table, "seat", "three", "player 1")
    crit = sps.t.ppf(1 - (1 - row["level"]) / 2, 900 // 4 - 1)
    alpha = 2 * sps.norm.sf(crit)  # the normal tail beyond the t quantile
    lo, hi = proportion_confint(0.35 * 900, 900, alpha=alpha, method="wilson")
    fair = 100 / 3
    assert row["lo"] == pytest.approx(100 * lo - fair)
    assert row["hi"] == pytest.approx(100 * hi - fair)
    assert f"[{row['lo']:+.1f}, {row['hi']:+.1f}]" in row["sentence"]
    # and an interval at 95% would have been narrower: the verdict is not the 95% one
    lo95, _ = proportion_confint(0.35 * 900, 900, alpha=0.05, method="wilson")
    assert 100 * lo95 - fair > row["lo"]


def test_a_tight_large_effect_matters(table: pd.DataFrame) -> None:
    """Player 1 at +5.6 pp with a tight interval matters; the headline says so in plain
    words, players counted from 1."""
    row = _one(table, "seat", "standard", "player 1")
    assert row["verdict"] == "matters" and row["lo"] > 1.0
    assert "It matters" in row["sentence"]
    heads = findings.headlines(table)
    assert heads[0].startswith("Player 1 wins 30.6% of 4-player games under standard")


def test_an_effect_inside_the_margin_is_negligible_or_real_but_small(table: pd.DataFrame) -> None:
    """+0.1 pp on 200,000 games: its interval lies within 1 pp and contains 0 (negligible);
    player 4's -4.7 pp matters; a difference of game length within 1 turn is negligible
    or real but small, never 'shown'."""
    assert _one(table, "seat", "two", "player 1")["verdict"] == "negligible"
    assert _one(table, "seat", "standard", "player 4")["verdict"] == "matters"
    turns = table.loc[table["question"] == "variant: turns"].iloc[0]
    assert turns["verdict"] == "real but small"  # -0.05 turns, clearly not 0, within 1 turn


def test_undecided_names_prospective_games_beyond_those_played(table: pd.DataFrame) -> None:
    """An undecided seat of 900 games gets the games for 80% power at the family's level
    (its interval spans 0: to show a zero effect negligible, z + z_0.9 standard errors
    inside 1 pp): more than those played, from the variance alone (not the effect)."""
    row = _one(table, "seat", "three", "player 1")
    assert row["verdict"] == "undecided" and row["lo"] <= 0 <= row["hi"]
    z = sps.norm.ppf(1 - 0.05 / (2 * row["family_size"]))
    se = 100 * math.sqrt(0.35 * 0.65 / 900)
    expected = 900 * (se * (z + sps.norm.ppf(0.9)) / 1.0) ** 2
    assert row["games_needed"] == pytest.approx(expected)
    assert row["games_needed"] > row["n_games"]
    assert f"{round(expected - 900):,} more games" in row["sentence"]


def test_the_margin_comes_from_the_study() -> None:
    """A study that says 5 pp matters judges the same +5.6 pp effect against 5 pp."""
    rt = _tables()
    rt.facts.report_options = ReportOptions(matters_pp=5.0)
    row = _one(findings.find(rt), "seat", "standard", "player 2")
    assert row["margin"] == 5.0 and row["verdict"] == "negligible"


def test_an_effect_beyond_0_gets_the_games_to_detect_the_margin() -> None:
    """Interval beyond 0 but across the margin: the games for 80% power to detect an
    effect of the margin (z + z_0.8 standard errors), not the equivalence count."""
    rt = _tables()
    rt.tables.seat_shares = rt.tables.seat_shares.assign(n_eff=20_000, n_blocks=5_000)
    rt.tables.seat_shares.loc[0, "share"] = 0.261  # +1.1 pp: beyond 0, across 1 pp
    rt.tables.seat_shares.loc[0, "effect_pp"] = 1.1
    row = _one(findings.find(rt), "seat", "standard", "player 1")
    assert row["verdict"] == "undecided" and row["lo"] > 0
    z = sps.norm.ppf(1 - 0.05 / (2 * row["family_size"]))
    se = 100 * math.sqrt(0.261 * 0.739 / 20_000)
    expected = row["n_games"] * (se * (z + sps.norm.ppf(0.8)) / 1.0) ** 2
    assert row["games_needed"] == pytest.approx(expected)
    assert "would give 80% power to show an effect of ±1 pp" in row["sentence"]
    # the effect is real: the sentence says so, and that its size is what is undecided
    assert (
        "Real, but undecided in size: the interval excludes 0 and crosses ±1 pp;"
        in (row["sentence"])
    )
    spans = _one(findings.find(_tables()), "seat", "three", "player 1")
    assert spans["lo"] <= 0 <= spans["hi"] and "Undecided: about" in spans["sentence"]


@pytest.mark.parametrize(
    ("lo", "hi", "expected"),
    [
        (1.2, 3.0, "matters"),
        (-3.0, -1.01, "matters"),
        (0.2, 0.9, "real but small"),
        (-0.9, 0.9, "negligible"),
        (-0.5, 1.5, "undecided"),
        (0.5, 1.5, "undecided"),
        (math.nan, 1.0, "undecided"),
        (0.0, 0.0, "undecided"),  # no width: games without spread bound nothing
        (2.0, 2.0, "undecided"),
    ],
)
def test_verdicts_from_the_interval_and_margin(lo: float, hi: float, expected: str) -> None:
    """Each of the four verdicts from where the interval lies against 0 and +-1; an
    interval of no width decides nothing."""
    assert verdicts.verdict(lo, hi, 1.0) == expected


def test_the_family_holds_its_error_rate_by_simulation() -> None:
    """With 20 true null effects, 'matters' or 'real but small' (an interval excluding 0)
    is said for any of them in at most about 5% of simulated studies (Bonferroni)."""
    rng = np.random.default_rng(7)
    m, studies, se = 20, 4000, 0.4
    z = verdicts.family_z(m)
    estimates = rng.normal(0.0, se, size=(studies, m))
    any_false = np.any(np.abs(estimates) > z * se, axis=1).mean()
    assert any_false <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / studies)
    # while one 95% interval per test would err in most studies
    assert np.any(np.abs(estimates) > 1.96 * se, axis=1).mean() > 0.5


def test_missing_tables_give_no_findings() -> None:
    """A report with none of the tables has an empty findings table with its columns."""
    empty = findings.find(ReportTables())
    assert empty.empty and list(empty.columns) == list(findings.COLUMNS)


@pytest.mark.parametrize(
    ("x", "lo", "hi", "said"),
    [
        (2.914, 2.72, 3.11, "+2.91 points [+2.72, +3.11]"),  # half-width 0.2: 2 decimals
        (-0.0452, -0.0502, -0.0398, "-0.045 turns [-0.050, -0.040]"),  # 0.005: 3
        (0.0042, -0.0009, 0.0093, "+0.004 turns [-0.001, +0.009]"),  # not '+0.00 [-0.00, +0.01]'
        (0.00012, -0.00031, 0.00055, "+0.0001 turns [-0.0003, +0.0006]"),  # 4 at most
        (1.0, 1.0, 1.0, "+1.00 points [+1.00, +1.00]"),  # no width: 2
    ],
)
def test_a_metric_prints_to_the_precision_of_its_interval(
    x: float, lo: float, hi: float, said: str
) -> None:
    """A metric in its own unit shows as many decimals as its interval's half-width needs
    (one significant digit), from 2 to 4; pp stay at one decimal."""
    unit = said.split()[1]
    assert f"{findings.fmt_metric(x, unit, lo, hi)} {findings.span_metric(lo, hi, unit)}" == said
    assert findings.fmt_metric(0.0123, "pp", 0.0, 0.03) == "+1.2 pp"


def test_the_headline_paragraph_names_a_common_player_model_once(table: pd.DataFrame) -> None:
    """All headlines among one model: it is said once, in front; every headline's claim
    is otherwise the same words."""
    heads = findings.headlines(table)
    text = findings.headline_paragraph(table)
    models = table.loc[table["headline"].isin(heads), "model"].unique()
    assert len(models) == 1 and len(heads) > 1  # the synthetic study: one mix
    assert text.startswith(f"Among {models[0]}: ")
    assert text.count(str(models[0])) == 1
    assert heads[0].replace(f" among {models[0]}", "") in text


def test_headlines_of_two_models_keep_their_own_scope() -> None:
    rows = pd.DataFrame(
        {
            "question": ["seat", "seat"],
            "model": ["greedy players in every seat", "random players in every seat"],
            "headline": [
                "Player 1 wins 60% among greedy players in every seat: it matters.",
                "Player 2 wins 40% among random players in every seat: it matters.",
            ],
            "estimate": [10.0, -10.0],
            "margin": [1.0, 1.0],
            "verdict": ["matters", "matters"],
            "players": [2, 2],
        }
    )
    assert findings.headline_paragraph(rows) == " ".join(rows["headline"])


def test_the_family_note_counts_each_verdict_in_words() -> None:
    """Each verdict's count with its verb: '2 matter', '1 is negligible', '0 are ...'."""
    table = pd.DataFrame(
        {
            "verdict": ["matters", "matters", "negligible", "undecided", "undecided"],
            "lo": [1.5, -3.0, -0.5, -2.0, -2.0],
            "hi": [2.5, -1.5, 0.5, 2.0, 2.0],
            "family_size": 5,
            "level": 0.99,
        }
    )
    note = findings.family_note(table)
    assert "5 tests, corrected together" in note
    assert ": 2 matter, 0 are real but small, 1 is negligible, 2 are undecided." in note
    one = findings.family_note(table.iloc[[0]].assign(family_size=1))
    assert ": 1 matters, 0 are real but small, 0 are negligible, 0 are undecided." in one


@pytest.mark.parametrize(("blocks", "verdict"), [(1000, "matters"), (3, "undecided")])
def test_few_blocks_widen_the_interval(blocks: int, verdict: str) -> None:
    """The audit's case: 72 games in 3 blocks whose totals hardly vary give a design
    effect far below 1; with the normal quantile a -9.7 pp edge 'matters', with Student's
    t on 2 degrees of freedom the interval spans 0. One block has no interval at all."""
    rt = ReportTables()
    rows = _seat_rows("four", 4, [0.347, 0.25, 0.25, 0.153], 671, 72)
    rt.tables.seat_shares = pd.DataFrame([{**r, "n_blocks": blocks} for r in rows])
    rt.tables.rulesets = pd.DataFrame({"ruleset": ["four"], "players": [4]})
    assert _one(findings.find(rt), "seat", "four", "player 4")["verdict"] == verdict
    rt.tables.seat_shares = rt.tables.seat_shares.assign(n_blocks=1)
    row = _one(findings.find(rt), "seat", "four", "player 4")
    assert row["verdict"] == "undecided" and "(no interval)" in row["sentence"]


def test_a_strategy_that_always_wins_has_a_rating_without_interval(tmp_path: Path) -> None:
    """The audit's case: greedy beats random in all 24 games, so the Plackett-Luce
    likelihood has no maximum (the gap runs to infinity). The ridge refit gives point
    ratings only: no interval in ratings.csv, and the order finding is undecided with no
    interval, not '+1391 Elo [+1256, +1525]: it matters'."""
    run = play_run(
        tmp_path / "run",
        {
            "seed": 3,
            "games_per_lineup": 24,
            "rulesets": {"two": {"players": 2}},
            "strategies": {"random": {}, "greedy": {}},
            "schedule": {"kind": "round_robin"},
        },
    )
    seats = runfolder.read_table(run, "seats")
    assert set(seats.loc[seats["win_share"] > 0, "strategy"]) == {"greedy"}  # every game
    build_report([run], tmp_path / "report", rating_games=2_000, moves_games=20)
    ratings = pd.read_csv(tmp_path / "report" / "ratings.csv")
    assert ratings[["se", "elo_lo", "elo_hi", "gap_se_elo"]].isna().all().all()
    found = pd.read_csv(tmp_path / "report" / "findings.csv")
    order = found.loc[found["question"] == "strategy order"].iloc[0]
    assert order["verdict"] == "undecided" and "(no interval)" in order["sentence"]


def test_an_end_that_would_round_onto_the_margin_gets_a_second_decimal() -> None:
    """An interval judged against +-1 pp whose end is 1.016 prints as +1.02, not +1.0 (a
    reader would take [+0.5, +1.0] for an interval inside the margin); elsewhere one
    decimal."""
    assert findings.pp_interval(0.51, 1.016, 1.0) == "[+0.51, +1.02]"
    assert findings.pp_interval(-1.04, -0.2, 1.0) == "[-1.04, -0.20]"
    assert findings.pp_interval(0.51, 1.2, 1.0) == "[+0.5, +1.2]"
    assert findings.pp_interval(0.5, 1.0, 1.0) == "[+0.5, +1.0]"  # exactly the margin
    assert findings.pp_interval(-2.81, -0.9981, 1.0) == "[-2.810, -0.998]"


def test_an_end_that_would_round_onto_zero_gets_more_decimals() -> None:
    """An interval whose verdict says it excludes 0 never prints an end of 0.0 (pp) or
    0.00 (a metric in its unit); an end that is 0 prints as 0."""
    assert findings.pp_interval(0.04, 0.6, 1.0) == "[+0.04, +0.60]"
    assert findings.pp_interval(-4.6, -0.003, 1.0) == "[-4.600, -0.003]"
    assert findings.pp_interval(0.0, 0.6, 1.0) == "[0.0, +0.6]"
    assert findings.span_metric(-0.84, -0.004, "points", 1.0) == "[-0.840, -0.004]"
    assert findings.span_metric(0.0004, 0.006, "pp", 1.0) == "[+0.04, +0.60]"
    assert findings.span_metric(-0.84, -0.21, "points") == "[-0.84, -0.21]"


def test_the_first_screen_answers_the_questions_in_order() -> None:
    """The headlines follow the designer's questions, not the sizes alone: the two largest
    seat effects that matter (one per group), then the variant difference on a seat's
    share or a primary metric before a larger secondary one, then the strategy order."""
    rows = [
        # question, ruleset, players, estimate, verdict, headline
        ("seat", "standard", 4, -2.0, "matters", "seat standard p4"),
        ("seat", "standard", 4, 1.5, "matters", "seat standard p1"),  # same group: left out
        ("seat", "orient", 4, -4.0, "matters", "seat orient p4"),
        ("seat", "three", 3, 1.2, "matters", "seat three p1"),  # a third group: left out
        ("variant: winner_dirhams_share", "orient", 4, 9.0, "matters", "dirhams share"),
        ("variant: margin", "orient", 4, 3.0, "matters", "margin"),
        ("strategy order", "standard", 4, 31.0, "matters", "order"),
    ]
    table = pd.DataFrame(
        rows, columns=["question", "ruleset", "players", "estimate", "verdict", "headline"]
    ).assign(model="the mix", margin=[1.0] * 6 + [20.0])
    assert findings.headlines(table) == ["seat orient p4", "seat standard p4", "margin", "order"]
    # with only the secondary metric and no seat effect that matters: it leads, and each
    # player count's largest seat effect follows
    quiet = table.assign(verdict=["undecided"] * 4 + ["matters", "undecided", "undecided"])
    assert findings.headlines(quiet) == ["dirhams share", "seat orient p4", "seat three p1"]


def test_a_rule_set_named_for_its_players_is_not_given_them_twice() -> None:
    """'three_players' reads 'three players', not 'three players, 3 players'; another
    name gets its count."""
    assert findings.group_title("three_players", 3) == "three players"
    assert findings.group_title("orient_at_end", 4) == "orient at end, 4 players"


def test_every_finding_names_a_common_player_model_once(table: pd.DataFrame) -> None:
    """Findings that all hold among one player model are listed without it (the list says
    it once in front); the sentences kept in findings.csv stay whole."""
    model = findings.common_model(table)
    assert model is not None
    lines = findings.summary_lines(table)
    assert len(lines) == len(table)
    assert all(f"among {model}" not in line for line in lines)
    assert all(f"among {model}" in s for s in table["sentence"])
    mixed = pd.concat([table, table.iloc[[0]].assign(model="random players in every seat")])
    assert findings.common_model(mixed) is None
    assert findings.summary_lines(mixed) == [str(s) for s in mixed["sentence"]]


def test_every_finding_is_listed_once_under_its_verdict(table: pd.DataFrame) -> None:
    """The list of every finding is grouped by verdict, what matters first, the undecided
    ones whose interval excludes 0 apart ('real, size undecided'), each group in the
    summary's order; together the groups are the summary's lines."""
    lines = findings.summary_lines(table)
    labels = [findings.verdict_label(r.verdict, r.lo, r.hi) for r in table.itertuples()]
    groups = findings.verdict_groups(table, lines)
    assert [g for g, _ in groups] == [g for g in findings.GROUPS if g in labels]
    assert len(groups) >= 3
    assert sorted(x for _, g in groups for x in g) == sorted(lines)
    for label, group in groups:
        assert group == [x for x, v in zip(lines, labels, strict=True) if v == label]
    real = table.assign(verdict="undecided", lo=0.2, hi=3.0).iloc[:2]
    plain = table.assign(verdict="undecided", lo=-0.2, hi=3.0).iloc[:1]
    mixed = pd.concat([plain, real], ignore_index=True)
    said = findings.verdict_groups(mixed, ["a", "b", "c"])
    assert said == [("real, size undecided", ["b", "c"]), ("undecided", ["a"])]
    assert "3 are undecided (2 of them real, their size undecided" in findings.family_note(mixed)


def test_a_margin_of_one_unit_is_singular(table: pd.DataFrame) -> None:
    """'beyond ±1 turn', '±2 turns', never '±1 turns' (nor '±1 points')."""
    row = table.loc[table["unit"] == "turns"].iloc[0].to_dict()
    one = findings.Finding(**{**row, "margin": 1.0, "verdict": "matters"})
    two = findings.Finding(**{**row, "margin": 2.0, "verdict": "matters"})
    assert findings.tail(one) == "It matters: the interval lies beyond ±1 turn."
    assert findings.tail(two) == "It matters: the interval lies beyond ±2 turns."


def test_every_headline_carries_its_interval_and_verdict(table: pd.DataFrame) -> None:
    """The first screen's plain sentences give each estimate with the interval its verdict
    is read off, as the full sentences do, and the verdict."""
    heads = table["headline"].dropna()
    assert len(heads)
    for head, r in zip(heads, table.loc[heads.index].itertuples(), strict=True):
        assert re.search(r"\[[-+]?[\d.]+, [-+]?[\d.]+\]", head), head
        assert head.rstrip(".").endswith(findings.VERDICT_WORDS[r.verdict]), head


def test_a_run_stopped_by_its_rule_says_so_in_the_summary(tmp_path: Path) -> None:
    """A run that its SPRT stopped early (greedy wins nearly every game against random):
    the summary gives the rule's decision as the run recorded it, and says that the
    estimates are not corrected for the sequential stop; the appendix counts its games
    against those planned, with thousands separators."""
    run = play_run(
        tmp_path / "run",
        {
            "seed": 3,
            "games_per_lineup": 20_000,
            "chunk_games": 256,
            "rulesets": {"two": {"players": 2}},
            "strategies": {"random": {}, "greedy": {}},
            "schedule": {"kind": "lineups", "lineups": [["greedy", "random"]]},
            "stopping": {
                "rule": "sprt",
                "quantity": "strategy_win_share",
                "strategy": "greedy",
                "ruleset": "two",
                "p0": 0.5,
                "p1": 0.6,
            },
        },
    )
    stopping = runfolder.read_manifest(run).stopping
    assert stopping is not None and stopping["stopped"]
    build_report([run], tmp_path / "report", rating_games=500, moves_games=50)
    text = (tmp_path / "report" / "report.md").read_text()
    summary = text[text.index("## Summary") : text.index("## Every finding")]
    assert f"stopped early, by its stopping rule: {stopping['summary']}" in summary
    assert "not corrected for the sequential stop" in summary
    assert f"{stopping['games_in_run']:,} / 20,000" in text


def test_an_undecided_verdict_whose_interval_excludes_0_is_labelled_real() -> None:
    """In a table the verdict 'undecided' of an interval that excludes 0 reads 'real, size
    undecided', as its sentence says; one that spans 0 stays 'undecided'."""
    assert findings.verdict_label("undecided", 0.5, 1.02) == "real, size undecided"
    assert findings.verdict_label("undecided", -2.8, -0.999) == "real, size undecided"
    assert findings.verdict_label("undecided", -0.5, 1.2) == "undecided"
    assert findings.verdict_label("matters", 1.5, 2.0) == "matters"


def test_no_interval_or_no_spread_is_never_called_real() -> None:
    """An interval that is missing (one block) or has no width decides nothing: its sentence
    and its table label do not call the effect real."""
    base = findings.Finding(
        "seat",
        "two",
        2,
        "the mix",
        "player 1",
        "",
        "",
        "undecided",
        2.0,
        float("nan"),
        float("nan"),
        "pp",
        1.0,
        100,
        float("nan"),
        1,
        0.95,
    )
    for lo, hi in ((float("nan"), float("nan")), (2.0, 2.0)):
        f = replace(base, lo=lo, hi=hi)
        assert not findings.tail(f).startswith("Real"), findings.tail(f)
        assert findings.verdict_label(f.verdict, lo, hi) == "undecided"
    real = replace(base, lo=0.5, hi=3.0, games_needed=500.0)
    assert findings.tail(real).startswith("Real, but undecided in size")
