"""The run's progress: a rich bar on a terminal, plain periodic lines elsewhere."""

from __future__ import annotations

import pytest

from marrakech_sim.cli.run import _clock, _Progress


def test_plain_lines_when_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    """Off a terminal: one line per period and one at the end, with every figure, no \\r."""
    progress = _Progress(every=3600.0, terminal=False)
    progress(1_000, 10_000, 2.0, 0)
    progress(2_000, 10_000, 3.0, 1)  # within the period: no line
    progress(10_000, 10_000, 11.0, 2)
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 2 and "\r" not in err
    assert lines[0].startswith("progress: 1,000 / 10,000 games (10.0%)")
    assert "elapsed 0:00:02" in lines[0] and "0 faults" in lines[0] and "left" in lines[0]
    # the rate counts from the first report: 9,000 games in 9 s
    assert "1,000 games/s" in lines[1] and "2 faults" in lines[1] and "left 0:00:00" in lines[1]


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
