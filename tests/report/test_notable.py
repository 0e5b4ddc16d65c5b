"""The report's notable games: a picture, a record that replays, and the command for each."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import play_run

from marrakech_sim.record import parse_records, replay
from marrakech_sim.report import build_report


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("notable")
    run = play_run(
        base / "run",
        {
            "seed": 5,
            "games_per_lineup": 48,
            "rulesets": {"two": {"players": 2}, "four": {}},
            "strategies": {"random": {}, "greedy": {}},
            "schedule": {"kind": "round_robin", "repeat": True},
        },
    )
    build_report([run], base / "report", rating_games=2_000, moves_games=500)
    return run, base / "report"


def test_each_notable_game_has_a_record_that_replays_and_a_picture(
    report: tuple[Path, Path],
) -> None:
    """Every notable record in notable/ replays to its Final, and its board picture is a PNG."""
    _, out = report
    records = sorted((out / "notable").glob("*.txt"))
    kinds = {p.stem.split("-")[1] for p in records}
    assert {"longest", "shortest", "largest_payment"} <= kinds
    for path in records:
        (record,) = parse_records(path.read_text(encoding="utf-8"))
        done = replay(record)  # raises unless it reaches the record's Final and Result
        assert done.turns
        picture = out / f"notable-{path.stem}.png"
        assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_report_names_the_command_that_replays_each_game(report: tuple[Path, Path]) -> None:
    """report.md and report.html have the notable section with each game's replay command."""
    run, out = report
    md = (out / "report.md").read_text(encoding="utf-8")
    html = (out / "report.html").read_text(encoding="utf-8")
    assert re.search(r"^## \d+\. Notable games$", md, re.M)
    for path in sorted((out / "notable").glob("*.txt")):
        game = path.stem.rsplit("game", 1)[1]
        assert f"marrakech replay {run} {game} --turn" in md
        assert f"game {game}, after turn" in html  # the picture's caption


def test_a_game_that_does_not_read_is_named_and_the_others_shown(
    report: tuple[Path, Path], tmp_path: Path
) -> None:
    """The notable games are read together; when one of them cannot be (its moves are gone
    from a damaged copy of the run), the report says which, and shows every other one."""
    import shutil

    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from marrakech_sim.record import notable_games
    from marrakech_sim.report.sections.notable import notable_of_runs

    run, _ = report
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    games = notable_games(copy)
    longest = next(g.game_id for g in games if g.kind == "longest")
    for part in (copy / "moves").glob("part-*.parquet"):
        table = pq.read_table(part)
        pq.write_table(table.filter(pc.not_equal(table["game_id"], longest)), part)
    found, problems = notable_of_runs([copy], tmp_path / "out")
    assert len(problems) == 1 and f"Game {longest} of {copy} (longest game) does not" in problems[0]
    shown = {n.name.split("-")[2] for n in found}
    assert shown == {g.kind for g in games if g.game_id != longest}
    assert all(n.png[:8] == b"\x89PNG\r\n\x1a\n" for n in found)


def test_notable_details_name_players_from_1_as_the_report_does(
    report: tuple[Path, Path],
) -> None:
    """The notable games' details name players counted from 1 (the payer and the payee
    of the largest payment, checked against the moves table), never 0-based seats."""
    from marrakech_sim import runfolder
    from marrakech_sim.record import notable_games

    run, _ = report
    games = {g.kind: g for g in notable_games(run)}
    moves = runfolder.read_table(run, "moves")
    pay = games["largest_payment"]
    row = moves.loc[(moves["game_id"] == pay.game_id) & (moves["turn"] == pay.turn - 1)].iloc[0]
    assert pay.detail == (
        f"player {int(row['seat']) + 1} paid {int(row['payment'])} dirhams to "
        f"player {int(row['paid_to']) + 1}"
    )
    assert all("seat" not in g.detail for g in games.values())
