"""Choices per turn (report.sections.choices) against a second computation on real games.

The second computation counts placements by brute force from docs/rules.md section 6 (every
pair of adjacent squares on the board, checked against the three conditions) in the
positions a plain replay reaches, and takes the interval from statsmodels (a weighted mean
with heteroskedasticity-robust HC1 errors is the ratio estimator with each game a cluster).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from conftest import play_run

from marrakech_sim.record import Roll, Rotation, records_from_run, replay
from marrakech_sim.report import build_report, findings
from marrakech_sim.report.compute import compute_tables
from marrakech_sim.report.load import connect, open_runs
from marrakech_sim.report.sections.choices import choices_table, sample_games
from marrakech_sim.rules import GameState

MIXED = ["random", "greedy", "greedy", "random"]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """4 players under two rule sets, a mixed line-up and a self-play one; one game a block."""
    return play_run(
        tmp_path_factory.mktemp("choices") / "run",
        {
            "seed": 11,
            "games_per_lineup": 40,
            "rotation": "none",
            "rulesets": {"standard": {}, "orient_at_end": {"orient_at_end": True}},
            "strategies": {"random": {}, "greedy": {}},
            "schedule": {"kind": "lineups", "lineups": [MIXED, ["greedy"] * 4]},
        },
    )


def brute_placements(state: GameState) -> int:
    """Legal placements by docs/rules.md section 6: two orthogonally adjacent squares on the
    board, one of them next to Assam, neither under him, not both halves of one visible rug."""
    n = state.rules.board_size
    ax, ay, _ = state.assam
    near = {(ax + 1, ay), (ax - 1, ay), (ax, ay + 1), (ax, ay - 1)}
    found = set()
    for x in range(n):
        for y in range(n):
            for dx, dy in ((1, 0), (0, 1)):
                a, b = (x, y), (x + dx, y + dy)
                if b[0] >= n or b[1] >= n or (ax, ay) in (a, b) or not ({a, b} & near):
                    continue
                top_a, top_b = state.square(*a), state.square(*b)
                if top_a is not None and top_a == top_b:  # the same rug, both halves visible
                    continue
                found.add(frozenset((a, b)))
    return len(found)


def second_count(record) -> tuple[int, int]:
    """(choices, turns with a placement) of one game: 3 rotations x brute-force placements."""
    done = replay(record)
    choices = turns = 0
    for position, actions in zip(done.positions, record.turns, strict=False):
        state = position
        placements = 0
        for action in actions:
            if state.phase == "place":
                placements = brute_placements(state)
            state = state.apply(action.value if isinstance(action, Rotation | Roll) else action)
            if placements and state.is_over and record.rules.orient_at_end:
                break  # the game ends with the placement: no rotation follows it
        else:
            placements *= 3 if placements else 0  # left, ahead, right
        choices += placements
        turns += bool(placements)
    return choices, turns


def test_choices_agree_with_a_brute_force_count_and_statsmodels(run_dir: Path) -> None:
    runs = open_runs([run_dir])
    con = connect(runs)
    compute_tables(con, runs, rating_games=1_000, moves_games=1_000)  # self_play_matches
    sample = sample_games(con)
    table = choices_table(con, runs).set_index("ruleset")
    games = con.execute("SELECT game_id, block, match_id, ruleset FROM games").df()
    lineups = con.execute(
        "SELECT game_id, string_agg(strategy, '|' ORDER BY seat) AS lineup FROM seats "
        "GROUP BY game_id"
    ).df()
    con.close()
    # the sample: one game of each block of the mixed line-up, every block (40 < 200)
    picked = games.merge(lineups, on="game_id").set_index("game_id").loc[sample["game_id"]]
    assert (picked["lineup"] == "|".join(MIXED)).all()  # no self-play game
    assert picked["block"].is_unique
    assert sample.groupby("ruleset").size().to_dict() == {"orient_at_end": 40, "standard": 40}
    for ruleset, part in sample.groupby("ruleset"):
        counts = np.array(
            [second_count(r) for r in records_from_run(run_dir, part["game_id"].tolist())],
            dtype="float64",
        )
        s, t = counts[:, 0], counts[:, 1]
        fit = sm.WLS(s / t, np.ones(len(t)), weights=t).fit(cov_type="HC1")
        row = table.loc[ruleset]
        assert row["n_games"] == len(t) and row["n_turns"] == t.sum()
        assert row["n_not_replayed"] == 0
        assert row["estimate"] == pytest.approx(s.sum() / t.sum(), rel=1e-12)
        assert row["estimate"] == pytest.approx(fit.params[0], rel=1e-12)
        assert row["se"] == pytest.approx(fit.bse[0], rel=1e-9)
        assert row["lo"] == pytest.approx(fit.conf_int()[0][0], rel=1e-9)
        if ruleset == "standard":
            assert row["rotations"] == 3.0
        else:  # no rotation after the game's last placement
            assert 2.5 < row["rotations"] < 3.0
        assert 2 <= row["placements"] <= 12  # docs/rules.md section 6


def test_choices_in_the_at_a_glance_table(run_dir: Path, tmp_path: Path) -> None:
    """The first screen shows each rule set's choices per turn as choices.csv has it."""
    result = build_report([run_dir], tmp_path / "out", rating_games=1_000, moves_games=1_000)
    choices = pd.read_csv(result.folder / "choices.csv").set_index("ruleset")
    text = result.markdown.read_text()
    for ruleset in ("standard", "orient_at_end"):
        r, title = choices.loc[ruleset], findings.title(ruleset)
        cell = f"{r.estimate:.1f} [{r.lo:.1f}, {r.hi:.1f}], n={int(r.n_games)}"
        row = next(line for line in text.splitlines() if line.startswith(f"| {title}, 4"))
        assert row.rstrip(" |").endswith(cell), row


def test_the_sample_goes_through_the_seatings(tmp_path: Path) -> None:
    """One game of each block, the i-th block of a match giving its i-th seating (mod the
    block's size): not always the first seating of every block."""
    run = play_run(
        tmp_path / "latin",
        {
            "seed": 12,
            "games_per_lineup": 40,
            "rotation": "latin",
            "rulesets": {"standard": {}},
            "strategies": {"random": {}, "greedy": {}},
            "schedule": {"kind": "lineups", "lineups": [MIXED]},
        },
    )
    runs = open_runs([run])
    con = connect(runs)
    sample = sample_games(con)
    games = con.execute("SELECT game_id, block FROM games ORDER BY game_id").df()
    con.close()
    blocks = games.groupby("block")["game_id"].apply(list)
    assert len(blocks) == 10 and all(len(b) == 4 for b in blocks)
    assert sample["game_id"].tolist() == [b[i % 4] for i, b in enumerate(blocks)]


def test_a_run_that_keeps_a_share_of_its_moves_replays_only_kept_games(tmp_path: Path) -> None:
    """keep_moves < 1: the sample takes games whose moves were written, none fails to replay."""
    run = play_run(
        tmp_path / "kept",
        {
            "seed": 13,
            "games_per_lineup": 40,
            "rotation": "none",
            "keep_moves": 0.5,
            "rulesets": {"standard": {}},
            "strategies": {"random": {}, "greedy": {}},
            "schedule": {"kind": "lineups", "lineups": [MIXED]},
        },
    )
    result = build_report([run], tmp_path / "out", rating_games=1_000, moves_games=1_000)
    choices = pd.read_csv(result.folder / "choices.csv").set_index("ruleset")
    runs = open_runs([run])
    con = connect(runs)
    kept = con.execute("SELECT count(DISTINCT game_id) FROM moves").fetchone()
    con.close()
    assert kept is not None and 0 < kept[0] < 40
    assert choices.loc["standard", "n_games"] == kept[0]
    assert choices.loc["standard", "n_not_replayed"] == 0
