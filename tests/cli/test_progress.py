"""The run's progress: a rich bar on a terminal, plain periodic lines elsewhere."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from marrakech_sim.cli.run import _clock, _print_summary, _Progress
from marrakech_sim.report.compute import compute_tables
from marrakech_sim.report.load import connect, open_runs
from marrakech_sim.run.config import study_from_dict
from marrakech_sim.run.runner import run_study


def test_plain_lines_when_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    """Off a terminal: one line per period and one at the end, with every figure, no \\r;
    none at the first report, whose games/s would count the start (compiling kernels)."""
    progress = _Progress(every=3600.0, terminal=False)
    progress(1_000, 10_000, 2.0, 0)  # the first report: no games/s measured yet
    progress(2_000, 10_000, 3.0, 1)
    progress(3_000, 10_000, 4.0, 1)  # within the period: no line
    progress(10_000, 10_000, 11.0, 2)
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 2 and "\r" not in err
    assert lines[0].startswith("progress: 2,000 / 10,000 games (20.0%)")
    assert "elapsed 0:00:03" in lines[0] and "1 faults" in lines[0] and "left 0:00:08" in lines[0]
    # the rate counts from the first report: 9,000 games in 9 s
    assert "1,000 games/s" in lines[1] and "2 faults" in lines[1] and "left 0:00:00" in lines[1]


def test_a_run_in_one_report_has_its_line(capsys: pytest.CaptureFixture[str]) -> None:
    """A run whose first report is its last still prints its line."""
    _Progress(terminal=False)(500, 500, 2.0, 0)
    assert capsys.readouterr().err.startswith("progress: 500 / 500 games (100.0%)")


def test_bar_on_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    """On a terminal: a rich progress bar with games, games/s, elapsed, left and faults."""
    progress = _Progress(terminal=True)
    progress(500, 1_000, 1.0, 0)
    progress(1_000, 1_000, 2.0, 3)
    progress.close()
    err = capsys.readouterr().err
    assert "1,000/1,000" in err and "games/s" in err and "3 faults" in err and "left" in err


def test_clock() -> None:
    """Seconds print as H:MM:SS; an unknown time as '?'."""
    assert _clock(3_725.4) == "1:02:05" and _clock(float("inf")) == "?"


def _study(stopping: dict[str, Any] | None = None) -> dict[str, Any]:
    """Self-play of random under 2 and 3 players (one player model per rule set)."""
    data: dict[str, Any] = {
        "name": "live",
        "seed": 9,
        "games_per_lineup": 600,
        "chunk_games": 100,
        "rotation": "all",
        "rulesets": {"two": {"players": 2}, "three": {"players": 3}},
        "strategies": {"random": {}, "greedy": {}},
        "schedule": {"kind": "self_play", "strategies": ["random"]},
    }
    if stopping:
        data["stopping"] = stopping
    return data


def _mixed(stopping: dict[str, Any] | None = None) -> dict[str, Any]:
    """greedy against random under two 2-player rule sets."""
    return {
        **_study(stopping),
        "rulesets": {"two": {"players": 2}, "end": {"players": 2, "orient_at_end": True}},
        "schedule": {"kind": "lineups", "lineups": [["greedy", "random"]]},
    }


def play_run(out: Path, config: dict[str, Any], workers: int, progress: _Progress) -> Path:
    run_study(study_from_dict(config), out, workers=workers, progress=progress)
    return out


def _report_seat_shares(run: Path, self_play: bool) -> pd.DataFrame:
    """The report's seat shares of a run: the skill section's per self-play model, else
    the seat section's (mixed line-ups), as (ruleset, players, seat, n_games, n_blocks,
    share, lo, hi)."""
    runs = open_runs([run])
    con = connect(runs)
    tables = compute_tables(con, runs).tables
    con.close()
    if not self_play:
        return tables.seat_shares
    tab = tables.skill_seats.copy()
    fair = 1.0 / tab["players"]
    tab["lo"] = fair + tab["effect_lo_pp"] / 100
    tab["hi"] = fair + tab["effect_hi_pp"] / 100
    return tab


@pytest.mark.parametrize("self_play", [True, False], ids=["self-play", "mixed line-ups"])
def test_live_table_equals_the_reports_seat_shares(tmp_path: Path, self_play: bool) -> None:
    """The live table, added up from the chunks' block totals while the run plays, gives
    each seat's share and interval exactly as the report computes them from the run
    (self-play: its player-model section; one mixed line-up per rule set: its seat table)."""
    progress = _Progress(every=0.0, terminal=False)
    config = _study() if self_play else _mixed()
    out = play_run(tmp_path / "run", config, workers=0, progress=progress)
    assert progress.totals is not None
    live = {(r.ruleset, r.players, r.seat): r for r in progress.totals.rows()}
    shares = _report_seat_shares(out, self_play)
    assert len(shares) == len(live) == (5 if self_play else 4)
    for row in shares.itertuples():
        mine = live[(row.ruleset, row.players, row.seat)]
        model = f"random x{row.players}" if self_play else "greedy + random"
        assert mine.model == model
        assert (mine.games, mine.blocks) == (row.n_games, row.n_blocks)
        assert mine.share == pytest.approx(row.share, rel=1e-12)
        assert mine.lo == pytest.approx(row.lo, rel=1e-9)
        assert mine.hi == pytest.approx(row.hi, rel=1e-9)


SPRT = {
    "rule": "sprt",
    "quantity": "strategy_win_share",
    "strategy": "greedy",
    "ruleset": "two",
    "p0": 0.5,
    "p1": 0.6,
    "min_games": 2000,  # more than the games: greedy, winning every game, would stop it early
}


def test_live_lines_off_a_terminal_name_each_group_and_the_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Off a terminal, each progress line is followed by a line per rule set and player
    model with every seat's share and interval, and the SPRT's LLR with its bounds."""
    progress = _Progress(every=0.0, terminal=False)
    play_run(tmp_path / "run", _mixed(SPRT), workers=0, progress=progress)
    err = capsys.readouterr().err.splitlines()
    live = [line for line in err if line.startswith("live: ")]
    assert any(line.startswith("live: two / greedy + random (") for line in live)
    last = next(line for line in reversed(live) if line.startswith("live: end / greedy + random"))
    assert all(f"player {s} " in last for s in (1, 2)) and "[" in last
    assert not any("seat " in line for line in live)  # players counted from 1, as the report
    rule = [line for line in live if "SPRT on strategy_win_share: LLR " in line]
    assert rule and "(bounds -2.94, +2.94)" in rule[-1]
    assert err.index(live[0]) > 0 and err[err.index(live[0]) - 1].startswith("progress: ")


def test_live_table_on_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a terminal the bar is followed by the live table: a row per rule set and player
    model with each seat's share and interval, and the SPRT's LLR with its bounds."""
    monkeypatch.setenv("COLUMNS", "140")  # a terminal's width (captured output has 80)
    progress = _Progress(terminal=True)
    play_run(tmp_path / "run", _study(), workers=0, progress=progress)
    progress.close()
    err = capsys.readouterr().err
    assert "games/s" in err and "player 3" in err and "block-aware interval" in err
    assert "seat 0" not in err and "player 1 moves first" in err
    assert "random x2" in err and "random x3" in err
    assert re.search(r"\d+\.\d% \[\d+\.\d, \d+\.\d\]", err)
    progress = _Progress(terminal=True)
    play_run(tmp_path / "sprt", _mixed(SPRT), workers=0, progress=progress)
    progress.close()
    err = capsys.readouterr().err
    assert "greedy + random" in err and "SPRT on strategy_win_share: LLR " in err
    assert "(bounds -2.94, +2.94)" in err


def test_live_table_grows_chunk_by_chunk(tmp_path: Path) -> None:
    """The table is updated as each chunk finishes (from its block totals): after every
    chunk it counts exactly the games played so far."""
    counts: list[int] = []

    class Watching(_Progress):
        def chunk_done(self, result: Any, plan: Any, stopping: Any) -> None:
            super().chunk_done(result, plan, stopping)
            assert self.totals is not None
            counts.append(sum(r.games for r in self.totals.rows() if r.seat == 0))

    play_run(tmp_path / "run", _study(), workers=0, progress=Watching(terminal=False))
    assert counts == [100 * (i + 1) for i in range(12)]  # 2 rule sets x 600 games, chunks of 100


def test_live_table_equals_the_report_when_games_fault(tmp_path: Path) -> None:
    """Games that end in a fault count in neither the live table nor the report: with a
    strategy that faults one game in four, the live shares, intervals and game counts
    are still the report's."""
    flaky = Path(__file__).resolve().parents[1] / "strategies_examples" / "bad.py"
    config = {
        **_mixed(),
        "strategies": {
            "greedy": {},
            "flaky": {"ref": f"{flaky}:RaisesSometimes", "params": {"one_in": 4}},
        },
        "schedule": {"kind": "lineups", "lineups": [["greedy", "flaky"]]},
    }
    faults: list[int] = []

    class Counting(_Progress):
        def __call__(self, done: int, planned: int, seconds: float, faults_: int = 0) -> None:
            faults.append(faults_)
            super().__call__(done, planned, seconds, faults_)

    progress = Counting(every=3600.0, terminal=False)
    out = play_run(tmp_path / "run", config, workers=0, progress=progress)
    assert progress.totals is not None
    live = {(r.ruleset, r.seat): r for r in progress.totals.rows()}
    shares = _report_seat_shares(out, self_play=False)
    planned = 2 * 600  # two rule sets of 600 games
    assert 0 < faults[-1] < planned / 2
    assert sum(r.games for r in live.values()) / 2 == planned - faults[-1]
    assert len(shares) == len(live) == 4
    for row in shares.itertuples():
        mine = live[(row.ruleset, row.seat)]
        assert mine.model == "flaky + greedy"
        assert (mine.games, mine.blocks) == (row.n_games, row.n_blocks)
        assert mine.share == pytest.approx(row.share, rel=1e-12)
        assert mine.lo == pytest.approx(row.lo, rel=1e-9)
        assert mine.hi == pytest.approx(row.hi, rel=1e-9)


def test_the_closing_summary_numbers_players_from_one_with_their_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run's last lines name seats as the report does: player 1 moves first, and the
    player count tells the 2- and 3-player rule sets' seats apart (Parquet's seat is 0-based)."""
    run = play_run(tmp_path / "run", {**_study(), "games_per_lineup": 200}, 0, _Progress())
    capsys.readouterr()
    _print_summary(run)
    out = capsys.readouterr().out
    seat_lines = out.split("win share per seat", 1)[1].splitlines()[1:]
    named = sorted(re.findall(r"player \d of \d", "\n".join(seat_lines)))
    assert named == [f"player {s} of {n}" for n, s in [(2, 1), (3, 1), (2, 2), (3, 2), (3, 3)]]
    assert "seat 0" not in out
    # self-play only: each strategy wins its fair share by construction, so none is printed
    assert "win share per strategy: none (every game is self-play)" in out
    assert not re.search(r"^  \S+ +random ", out, re.M)


def test_the_live_line_of_an_sprt_without_an_llr_says_why() -> None:
    """The stopping state before any block carried the quantity has no LLR (None, or NaN
    from a first block without variance): the live line says it is not yet defined."""
    from marrakech_sim.live import stopping_text

    state = {"rule": "sprt", "quantity": "seat_win_share", "games": 4096, "decision": None}
    assert stopping_text(state | {"llr": None}) == (
        "SPRT on seat_win_share: LLR not defined after 4,096 games (fewer than two blocks, "
        "or a share of 0 or 1 so far)"
    )
    assert "LLR not defined" in str(stopping_text(state | {"llr": float("nan")}))
    shown = stopping_text(
        state | {"llr": 1.5, "lower": -2.9, "upper": 2.9, "estimate": 0.26, "games": 8192}
    )
    assert shown == (
        "SPRT on seat_win_share: LLR +1.50 (bounds -2.90, +2.90), estimate 26.00% after 8,192 games"
    )


def test_a_run_its_rule_stopped_ends_with_its_line_off_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Off a terminal, a run that its stopping rule ends before its plan still prints its
    last state (games played, and the rule's decision), though the period held it back."""
    progress = _Progress(every=3600.0, terminal=False)
    play_run(tmp_path / "run", _mixed({**SPRT, "min_games": 200}), 0, progress)
    progress.close()  # as the command does when the run returns
    err = capsys.readouterr().err.splitlines()
    last = [line for line in err if line.startswith("progress: ")][-1]
    assert re.match(r"progress: [\d,]+ / 1,200 games \(\d+\.\d%\)", last), last
    assert not last.startswith("progress: 1,200 ")  # the rule stopped it early
    rule = err[-1]
    assert rule.startswith("live: SPRT on strategy_win_share: LLR ") and "stop: accept H1" in rule
