"""The CSV tables of a real report: documented in docs/report-tables.md, units, precision."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
from conftest import ROOT, play_run

from marrakech_sim.report import build_report

DOC = ROOT / "docs" / "report-tables.md"
CONDITIONAL = "Written only when"


def documented() -> dict[str, tuple[set[str], bool]]:
    """Table name -> (its documented columns, whether it is written only in some reports)."""
    tables: dict[str, tuple[set[str], bool]] = {}
    name = None
    for line in DOC.read_text().splitlines():
        heading = re.fullmatch(r"## (\w+)\.csv", line)
        if heading:
            name = heading.group(1)
            tables[name] = (set(), False)
        elif name and line.startswith(CONDITIONAL):
            tables[name] = (tables[name][0], True)
        elif name and line.startswith("| ") and not line.startswith("| column |"):
            tables[name][0].add(line.split("|")[1].strip())
    return tables


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of two real runs: 4 players under two rule sets (a round robin and two
    skill levels in self-play) and 2 players."""
    base = tmp_path_factory.mktemp("tables")
    names = ["random", "greedy", "greedy-area", "greedy-block"]
    four = play_run(
        base / "four",
        {
            "seed": 3,
            "games_per_lineup": 48,
            "rulesets": {"standard": {}, "orient_at_end": {"orient_at_end": True}},
            "strategies": {s: {} for s in names},
            "schedule": {
                "kind": "lineups",
                "lineups": [names, ["random"] * 4, ["greedy"] * 4],
            },
        },
    )
    two = play_run(
        base / "two",
        {
            "seed": 4,
            "games_per_lineup": 40,
            "rulesets": {"two": {"players": 2}},
            "strategies": {s: {} for s in names[:2]},
            "schedule": {"kind": "round_robin"},
        },
    )
    build_report([four, two], base / "report", rating_games=2_000, moves_games=200)
    return base / "report"


def _read(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


@pytest.fixture(scope="module")
def self_play_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of a run of self-play alone (a sweep of greedy in every seat): no game
    between different strategies, so most tables have no row."""
    base = tmp_path_factory.mktemp("self_play")
    run = play_run(
        base / "sweep",
        {
            "seed": 3,
            "games_per_lineup": 24,
            "rulesets": {"four": {}, "two": {"players": 2}},
            "strategies": {"greedy": {}},
            "schedule": {"kind": "self_play"},
            "sweep": {"starting_dirhams": [20, 30]},
        },
    )
    build_report([run], base / "report", rating_games=2_000, moves_games=200)
    return base / "report"


@pytest.fixture(scope="module")
def mix_report(report: Path) -> Path:
    """The report of the 2-player round robin alone: no self-play, so no skill table has a
    row."""
    build_report([report.parent / "two"], report.parent / "mix", rating_games=2_000)
    return report.parent / "mix"


@pytest.mark.parametrize("which", ["report", "self_play_report", "mix_report"])
def test_every_csv_column_is_documented(which: str, request: pytest.FixtureRequest) -> None:
    """Every CSV the report writes has exactly the columns docs/report-tables.md lists for
    it, with rows or without (a header naming them all), and every table listed there is
    written (unless it says when it is written)."""
    report: Path = request.getfixturevalue(which)
    tables = documented()
    written = {p.stem: set(_read(p)[0]) for p in report.glob("*.csv")}
    assert set(written) <= set(tables), sorted(set(written) - set(tables))
    for name, columns in written.items():
        assert columns == tables[name][0], (
            name,
            sorted(columns - tables[name][0]),
            sorted(tables[name][0] - columns),
        )
    missing = {n for n, (_, conditional) in tables.items() if n not in written and not conditional}
    assert not missing, sorted(missing)


def test_a_report_of_self_play_alone_says_its_sections_on_the_mix_have_nothing_to_show(
    self_play_report: Path, report: Path
) -> None:
    """Win rates, seat advantage, ratings, variants, distributions and power read the games
    between different strategies: in runs of self-play alone the first says why it has
    nothing to show and the others point to it, with no empty table."""
    from marrakech_sim.report.build import NO_MIX, NO_MIX_AGAIN

    text = (self_play_report / "report.md").read_text()
    sections = dict(re.findall(r"^## (?:\d+\. )?(.+?)\n\n(.*?)(?=^## |\Z)", text, re.M | re.S))
    mix = ["Win rates", "Seat advantage", "Ratings", "Variant comparison", "Distributions"]
    assert [sections[name].strip() for name in [*mix, "Power"]] == [NO_MIX] + [NO_MIX_AGAIN] * 5
    assert "Response curves" in sections and "Balance per player model" in sections
    assert NO_MIX not in (report / "report.md").read_text()
    # greedy plays the same games with 20 dirhams as with 30 (the sweep's dice are common):
    # each such difference has no spread, and no verdict but undecided
    with (self_play_report / "findings.csv").open(newline="") as f:
        found = list(csv.DictReader(f))
    flat = [f for f in found if f["lo"] == f["hi"]]
    assert flat and all(f["verdict"] == "undecided" for f in flat)
    for f in flat:  # a difference of exactly 0 is said to be the same games' end
        same = float(f["estimate"]) == 0
        said = "the two played the same games to the same end" if same else "show no spread"
        assert said in f["sentence"], f["sentence"]
    assert any(float(f["estimate"]) == 0 for f in flat)


def test_mixed_units_have_a_unit_column(report: Path) -> None:
    """A table whose rows hold metrics of different units says each row's unit."""
    header, rows = _read(report / "variant_comparison.csv")
    unit = {r[header.index("metric")]: r[header.index("unit")] for r in rows}
    assert unit["seat_0_share"] == unit["bankrupt"] == "fraction"
    assert (unit["turns"], unit["margin"]) == ("turns", "points")
    header, rows = _read(report / "distributions.csv")
    assert {(r[header.index("metric")], r[header.index("unit")]) for r in rows} == {
        ("margin", "points"),
        ("turns", "turns"),
    }


def test_floats_have_at_most_seven_significant_digits(report: Path) -> None:
    """No CSV float carries binary noise: at most 7 significant digits, counts as integers."""
    digits = re.compile(r"^-?(\d+)(?:\.(\d+))?(?:e[-+]\d+)?$")
    seen = 0
    for path in report.glob("*.csv"):
        _, rows = _read(path)
        for row in rows:
            for cell in row:
                m = digits.match(cell)
                if m is None:
                    continue
                significant = (m.group(1) + (m.group(2) or "")).lstrip("0")
                assert len(significant) <= 7, (path.name, cell)
                seen += m.group(2) is not None
    assert seen > 100  # the tables do hold fractional values


def test_an_undecided_per_turn_finding_says_its_games_are_the_per_turn_sample(
    report: Path,
) -> None:
    """Lead changes, comebacks and the decisive turn come from the moves of a sample of
    games: 'more games' there means a larger sample (--moves-games), not a longer run."""
    with (report / "findings.csv").open(newline="") as f:
        found = list(csv.DictReader(f))
    turn = [f for f in found if f["question"].split(": ")[-1] in ("lead_changes", "comeback")]
    undecided = [f for f in turn if f["verdict"] == "undecided"]
    assert undecided
    assert all("`marrakech report --moves-games N` reads more" in f["sentence"] for f in undecided)
    others = [f for f in found if f["question"] == "variant: margin"]
    assert others and not any("--moves-games" in f["sentence"] for f in others)
