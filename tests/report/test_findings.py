"""The report's summary sentences: generated from the tables' numbers, never saying more."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from marrakech_sim.report import findings
from marrakech_sim.report.tables import ReportTables


def _seat_rows(ruleset: str, players: int, effects: list[tuple[float, float, float]], n: int):
    return [
        {
            "players": players,
            "ruleset": ruleset,
            "seat": s,
            "n_games": n,
            "effect_pp": e,
            "effect_lo_pp": lo,
            "effect_hi_pp": hi,
        }
        for s, (e, lo, hi) in enumerate(effects)
    ]


def _tables() -> ReportTables:
    rt = ReportTables()
    rt.tables["seat_shares"] = pd.DataFrame(
        _seat_rows(
            "standard",
            4,
            [(1.7, 1.1, 2.3), (0.0, -0.5, 0.5), (0.2, -0.4, 0.8), (-1.9, -2.5, -1.3)],
            24_000,
        )
        + _seat_rows("two", 2, [(0.1, -0.3, 0.5), (-0.1, -0.5, 0.3)], 144_000)
        + _seat_rows("three", 3, [(0.6, -0.8, 2.0), (0.0, -1.4, 1.4), (-0.6, -2.0, 0.8)], 900)
    )
    rt.tables["seat_tests"] = pd.DataFrame(
        {"players": [4, 2, 3], "ruleset": ["standard", "two", "three"], "p_block": [0.0, 0.6, 0.4]}
    )
    rt.tables["variant_comparison"] = pd.DataFrame(
        {
            "metric": ["seat_advantage", "turns"],
            "baseline": ["standard", "standard"],
            "ruleset": ["variant", "variant"],
            "diff": [0.009, -0.05],
            "lo": [0.0, -0.06],
            "hi": [0.018, -0.04],
            "p_holm": [0.17, 5e-30],
            "reject_holm": [False, True],
            "n_games": [24_000, 24_000],
            "n_games_baseline": [24_000, 24_000],
        }
    )
    rt.tables["rulesets"] = pd.DataFrame(
        {"ruleset": ["standard", "variant", "two", "three"], "players": [4, 4, 2, 3]}
    )
    rt.tables["power"] = pd.DataFrame(
        {
            "section": ["seat advantage", "variants"],
            "claim": [
                "seat 0 share minus 1/3 (three, 3 players)",
                "seat_advantage: variant minus standard",
            ],
            "n_to_settle": [12_345.0, 44_869.0],
        }
    )
    rt.tables["ratings"] = pd.DataFrame(
        {
            "ruleset": ["two", "two"],
            "players": [2, 2],
            "strategy": ["greedy-block", "greedy"],
            "elo": [1948.0, 1917.0],
            "elo_lo": [1931.0, 1900.0],
            "elo_hi": [1964.0, 1933.0],
            "p_above_next": [0.999, math.nan],
            "n_games": [72_000, 72_000],
        }
    )
    rt.tables["lineup_win_rates"] = pd.DataFrame(
        {
            "ruleset": ["two"],
            "lineup": ["greedy|greedy-block"],
            "strategy": ["greedy-block"],
            "rate": [0.542],
            "lo": [0.536],
            "hi": [0.548],
            "n_games": [24_000],
        }
    )
    rt.tables["win_rates"] = pd.DataFrame({"strategy": ["greedy", "greedy-block"]})
    return rt


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return findings.find(_tables())


def _one(table: pd.DataFrame, question: str, ruleset: str) -> pd.Series:
    rows = table.loc[(table["question"] == question) & (table["ruleset"] == ruleset)]
    assert len(rows) == 1
    return rows.iloc[0]


def test_one_finding_per_question_and_group(table: pd.DataFrame) -> None:
    """Seat advantage per rule set and player count, one per variant metric, one order."""
    assert list(table["question"]).count("seat advantage") == 3
    assert {"variant: seat_advantage", "variant: turns", "strategy order"} <= set(table["question"])
    # most players first
    seats = table.loc[table["question"] == "seat advantage", "players"].tolist()
    assert seats == [4, 3, 2]


def test_verdicts_follow_the_tests(table: pd.DataFrame) -> None:
    """Shown when the test rejects; not shown when 1 pp is ruled out; else undecided."""
    assert _one(table, "seat advantage", "standard")["verdict"] == "shown"
    assert _one(table, "seat advantage", "two")["verdict"] == "not shown"
    undecided = _one(table, "seat advantage", "three")
    assert undecided["verdict"] == "undecided" and undecided["games_needed"] == 12_345
    assert "about 12,345 games" in undecided["sentence"]
    assert _one(table, "variant: seat_advantage", "variant")["verdict"] == "undecided"
    assert _one(table, "variant: turns", "variant")["verdict"] == "shown"


def test_sentences_carry_their_numbers(table: pd.DataFrame) -> None:
    """Each sentence names its group, effect in pp, interval, games and the player model."""
    s = _one(table, "seat advantage", "standard")["sentence"]
    for part in (
        "standard, 4 players",
        "1.7 pp more",
        "[+1.1, +2.3]",
        "24,000 games",
        "among these strategies",
        "p < 1e-300",
        "1.9 pp less",
    ):
        assert part in s, (part, s)
    v = _one(table, "variant: seat_advantage", "variant")["sentence"]
    assert "+0.9 pp [+0.0, +1.8]" in v and "Holm-corrected p = 0.17" in v
    assert "about 44,869 games" in v
    o = _one(table, "strategy order", "two")["sentence"]
    assert "greedy-block rates highest, 31 Elo above greedy" in o
    assert "54.2%" in o and "+4.2 pp" in o


def test_never_claims_more_than_a_group(table: pd.DataFrame) -> None:
    """No sentence generalises across groups ("every player count", "always")."""
    text = " ".join(table["sentence"]).lower()
    for word in ("every player count", "all player counts", "always", "in general"):
        assert word not in text
    assert "greedy, greedy-block" in findings.player_model(_tables())


def test_missing_tables_give_no_findings() -> None:
    """A report without comparisons or ratings simply has fewer findings."""
    rt = _tables()
    for name in ("variant_comparison", "ratings", "power"):
        rt.tables.pop(name)
    table = findings.find(rt)
    assert set(table["question"]) == {"seat advantage"}
    assert table["games_needed"].isna().all()


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
