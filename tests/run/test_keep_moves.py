"""`keep_moves`: a study keeps the moves of a share of its blocks (each match's first
rounds), the games and seats of every game; verify replays what was kept, the report's
per-turn metrics say from how many games they come."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from conftest import play_run

from marrakech_sim.errors import ConfigError
from marrakech_sim.run.config import study_from_dict
from marrakech_sim.run.plan import Plan
from marrakech_sim.run.verify import verify_run

CONFIG = {
    "seed": 6,  # the run's shortest game is not in the sample kept at 0.25
    "games_per_lineup": 48,
    "chunk_games": 30,
    "rotation": "all",
    "rulesets": {"four": {}, "two": {"players": 2}},
    "strategies": {"random": {}, "greedy": {}},
    "schedule": {"kind": "round_robin", "repeat": True},
}


def _table(run: Path, name: str) -> pq.Table:
    return pq.read_table(run / name).sort_by("game_id")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[float, Path]:
    base = tmp_path_factory.mktemp("keep")
    return {
        share: play_run(base / f"keep-{share}", {**CONFIG, "keep_moves": share})
        for share in (1.0, 0.25, 0.0)
    }


def test_the_moves_of_each_matchs_first_rounds_are_kept(runs: dict[float, Path]) -> None:
    """With keep_moves = 0.25 the moves table holds exactly the games of each match's
    first ceil(0.25 x rounds) blocks, each with all its rows, as the full run has them."""
    full, part = runs[1.0], runs[0.25]
    games = _table(full, "games").to_pandas()
    rounds = games.groupby("match_id")["block"].rank(method="dense").astype(int) - 1
    per_match = games.groupby("match_id")["block"].transform("nunique")
    kept = rounds < (0.25 * per_match).map(math.ceil)
    assert 0 < kept.sum() < len(games)
    want = set(games.loc[kept, "game_id"])
    moves = _table(part, "moves")
    assert set(moves.column("game_id").to_pylist()) == want
    full_moves = _table(full, "moves").to_pandas()
    expect = full_moves[full_moves.game_id.isin(want)].reset_index(drop=True)
    got = moves.to_pandas().sort_values(["game_id", "turn"]).reset_index(drop=True)
    assert got.equals(expect.sort_values(["game_id", "turn"]).reset_index(drop=True))


@pytest.mark.parametrize("share", [0.25, 0.0])
def test_games_and_seats_are_always_kept(runs: dict[float, Path], share: float) -> None:
    for name in ("games", "seats"):
        assert _table(runs[share], name).equals(_table(runs[1.0], name)), name


def test_keep_moves_zero_writes_no_moves(runs: dict[float, Path]) -> None:
    assert pq.read_table(runs[0.0] / "moves").num_rows == 0
    assert json.loads((runs[0.0] / "run.json").read_text())["config"]["keep_moves"] == 0


@pytest.mark.parametrize("share", [0.25, 0.0])
def test_verify_replays_what_was_kept(runs: dict[float, Path], share: float) -> None:
    report = verify_run(runs[share])
    assert report.ok, (report.problems, report.examples)
    plan = Plan(study_from_dict({**CONFIG, "keep_moves": share}))
    blocks = np.arange(plan.blocks)
    kept = int(
        plan.block_moves_kept(blocks).repeat(plan.match_size[plan.block_matches(blocks)]).sum()
    )
    assert report.unkept == plan.games_planned - kept
    assert "whose moves the study does not keep" in report.summary()


def test_verify_finds_moves_of_a_game_that_should_have_none(
    runs: dict[float, Path], tmp_path: Path
) -> None:
    """A part whose moves were swapped for the full run's (more games than kept) fails."""
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(runs[0.25], copy)
    for part in sorted((runs[1.0] / "moves").glob("*.parquet")):
        shutil.copy(part, copy / "moves" / part.name)
    report = verify_run(copy)
    assert not report.ok
    assert any("not kept" in e for e in report.examples)


def test_the_report_counts_the_games_its_turn_metrics_come_from(
    runs: dict[float, Path],
) -> None:
    """The per-turn sample takes the games whose moves were kept, and says how many."""
    from marrakech_sim.report.compute import compute_tables
    from marrakech_sim.report.load import connect, open_runs

    opened = open_runs([runs[0.25]])
    con = connect(opened)
    rt = compute_tables(con, opened, rating_games=10_000, moves_games=10_000)
    con.close()
    # the study's mix: the self-play line-ups are player models of their own
    plan = Plan(study_from_dict({**CONFIG, "keep_moves": 0.25}))
    mixed = [m.match_id for m in plan.matches if len(set(m.lineup)) > 1]
    games = _table(runs[0.25], "games").to_pandas()
    kept = set(pq.read_table(runs[0.25] / "moves").column("game_id").to_pylist())
    want = games[games.match_id.isin(mixed) & games.game_id.isin(kept)]
    assert 0 < len(want) < len(kept)
    assert rt.facts.moves_games == len(want)
    assert rt.tables.score_over_turns["n_games"].max() <= len(want)


def test_notable_games_are_chosen_among_the_games_whose_moves_were_kept(
    runs: dict[float, Path],
) -> None:
    """A record and a picture need a game's moves: with keep_moves = 0.25 the longest,
    shortest and tie-break games are those of the kept sample (a second computation over
    the games table), each has a record, and a run that kept no moves has none."""
    from marrakech_sim.record import notable_games, records_from_run

    run = runs[0.25]
    found = {g.kind: g for g in notable_games(run)}
    games = _table(run, "games").to_pandas()
    kept = games[games.game_id.isin(set(_table(run, "moves").column("game_id").to_pylist()))]
    assert len(kept) < len(games)
    assert (
        found["longest"].game_id
        == kept.sort_values(["turns", "game_id"], ascending=[False, True]).game_id.iloc[0]
    )
    assert found["shortest"].game_id == kept.sort_values(["turns", "game_id"]).game_id.iloc[0]
    ties = kept[kept.tie_broken]
    assert (
        found.get("tie_break") is None
        if ties.empty
        else found["tie_break"].game_id == ties.game_id.min()
    )
    # what the choice over every game would be: a game whose moves were not kept
    assert games.sort_values(["turns", "game_id"]).game_id.iloc[0] not in set(kept.game_id)
    ids = sorted({g.game_id for g in found.values()})
    assert [int(r.game) for r in records_from_run(run, ids)] == ids
    assert notable_games(runs[0.0]) == []


def test_the_reports_notable_games_say_they_come_from_the_kept_sample(
    runs: dict[float, Path], tmp_path: Path
) -> None:
    from marrakech_sim.record import notable_games
    from marrakech_sim.report.sections.notable import notable_of_runs

    shown, notes = notable_of_runs([runs[0.25]], tmp_path)
    assert [n.name.split("-")[-2] for n in shown] == [g.kind for g in notable_games(runs[0.25])]
    assert notes == [
        f"{runs[0.25]} kept the moves of a sample of its games (`keep_moves = 0.25`), and a "
        "game is shown from its moves: its notable games are those of the sample."
    ]
    assert notable_of_runs([runs[1.0]], tmp_path)[1] == []


@pytest.mark.parametrize("value", [1.5, -0.1, True, "all", None])
def test_a_bad_keep_moves_is_one_clear_error(value: object) -> None:
    with pytest.raises(ConfigError, match=r"keep_moves = .*expected a number from 0 to 1"):
        study_from_dict({**CONFIG, "keep_moves": value})


def test_resume_replays_a_lost_chunk_and_keeps_the_same_moves(
    runs: dict[float, Path], tmp_path: Path
) -> None:
    """A chunk whose games part is lost is played again on resume, with the same kept moves."""
    import shutil

    from click.testing import CliRunner

    from marrakech_sim.cli import main

    copy = tmp_path / "copy"
    shutil.copytree(runs[0.25], copy)
    (copy / "games" / "part-000001.parquet").unlink()
    result = CliRunner().invoke(main, ["run", "--resume", str(copy), "--workers", "0"])
    assert result.exit_code == 0, result.output
    for name in ("games", "seats", "moves"):
        assert _table(copy, name).equals(_table(runs[0.25], name)), name
    assert verify_run(copy).ok
