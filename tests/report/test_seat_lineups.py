"""seat_lineups: whether a seat's effect differs between the line-ups a group pools, and
the seat finding that says so (the audit's case: 2-player seat 1 pooled over line-ups
with and without random)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from conftest import play_run
from scipy import stats as sps

from marrakech_sim import runfolder
from marrakech_sim.report import build_report


@pytest.fixture(scope="module")
def run_and_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("lineups")
    run = play_run(
        base / "run",
        {
            "seed": 12,
            "games_per_lineup": 8000,  # enough to show greedy's edge over greedy-block
            "rulesets": {"two": {"players": 2}},
            "strategies": {"random": {}, "greedy": {}, "greedy-block": {}},
            "schedule": {"kind": "round_robin"},
        },
    )
    build_report([run], base / "report", rating_games=2_000, moves_games=20)
    return run, base / "report"


def test_the_lineups_f_test_is_scipys_one_way_anova_of_the_blocks_shares(
    run_and_report: tuple[Path, Path],
) -> None:
    """Blocks of one size (2 games, the seats swapped): seat 1's share per block, grouped
    by line-up (the strategies of a game, whatever their seats), in scipy's f_oneway."""
    run, report = run_and_report
    got = pd.read_csv(report / "seat_lineups.csv")
    games = runfolder.read_table(run, "games")
    seats = runfolder.read_table(run, "seats")
    lineup = seats.groupby("game_id")["strategy"].agg(lambda s: "|".join(sorted(s)))
    first = seats.loc[seats["seat"] == 0, ["game_id", "win_share"]].merge(
        games[["game_id", "block"]], on="game_id"
    )
    first["lineup"] = lineup.reindex(first["game_id"]).to_numpy()
    first["win_share"] = first["win_share"].astype("float64")  # stored as float32
    block = first.groupby(["lineup", "block"])["win_share"].mean().reset_index()
    groups = {name: part["win_share"].to_numpy() for name, part in block.groupby("lineup")}
    f, p = sps.f_oneway(*groups.values())
    row = got.loc[got["seat"] == 0].iloc[0]
    assert (row["lineups"], row["df1"], row["df2"]) == (3, 2, len(block) - 3)
    assert row["f"] == pytest.approx(f, rel=1e-6)
    assert row["p"] == pytest.approx(p, rel=1e-6, abs=1e-300)
    effects = {name: g.mean() - 0.5 for name, g in groups.items()}
    lowest = min(effects.values())  # (two random line-ups tie at 0)
    assert row["lowest_pp"] == pytest.approx(100 * lowest, abs=1e-9)
    assert effects[row["lowest_lineup"]] == lowest
    assert row["highest_pp"] == pytest.approx(100 * max(effects.values()))


def test_a_seat_finding_says_when_its_lineups_differ(run_and_report: tuple[Path, Path]) -> None:
    """Random hardly ever wins, so seat 1's edge is near 0 in its line-ups and not
    between greedy and greedy-block: the pooled finding says the line-ups differ, with
    the lowest and highest (seat_lineups' p below 0.05 over its rows)."""
    _, report = run_and_report
    spread = pd.read_csv(report / "seat_lineups.csv")
    found = pd.read_csv(report / "findings.csv")
    seat = found.loc[found["question"] == "seat"].iloc[0]
    row = spread.loc[spread["seat"] == 0].iloc[0]
    assert row["p"] < 0.05 / len(spread)
    assert "The effect differs between the 3 line-ups pooled here" in seat["sentence"]
    for end in ("lowest", "highest"):
        assert row[f"{end}_lineup"].replace("|", ", ") in seat["sentence"]
