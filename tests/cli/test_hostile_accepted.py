"""Hostile inputs of issue 29 that are allowed: each must do its job, cleanly.

The companion of test_hostile_rerun.py (inputs refused in one line): here the command
succeeds, or reports a strategy's fault as its result, with no traceback and nothing of
the input's control characters reaching the terminal; where the disk is full, a person's
game is printed rather than lost.
"""

from __future__ import annotations

import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from marrakech_sim.cli import main
from marrakech_sim.record import parse_records, replay
from marrakech_sim.run.config import study_from_dict
from marrakech_sim.run.runner import run_study

BAD = Path(__file__).resolve().parents[1] / "strategies_examples" / "bad.py"
STUDY = {
    "seed": 3,
    "games_per_lineup": 10,
    "chunk_games": 10,
    "rulesets": {"two": {"players": 2}},
    "strategies": {"random": {}, "greedy": {}},
    "schedule": {"kind": "round_robin"},
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with runs: 'run' (plain), 'nomoves' (keep_moves 0), 'zero' (every player
    starts with 0 dirhams: every runner-up goes bankrupt), and game.txt (a record)."""
    folder = tmp_path_factory.mktemp("accepted")
    run_study(study_from_dict(STUDY), folder / "run", workers=0)
    run_study(study_from_dict({**STUDY, "keep_moves": 0.0}), folder / "nomoves", workers=0)
    zero = {**STUDY, "rulesets": {"two": {"players": 2, "starting_dirhams": 0}}}
    run_study(study_from_dict(zero), folder / "zero", workers=0)
    out = CliRunner().invoke(
        main, ["export", str(folder / "run"), "--game", "0", "-o", str(folder / "game.txt")]
    )
    assert out.exit_code == 0, out.output
    return folder


def _clean(output: str) -> None:
    assert "Traceback" not in output and "\x1b" not in output and "\x07" not in output


def test_a_record_starting_with_a_byte_order_mark_imports(runs: Path, tmp_path: Path) -> None:
    """A UTF-8 byte-order mark (as some editors save) is not an invisible bad token."""
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbf" + (runs / "game.txt").read_bytes())
    out = CliRunner().invoke(main, ["import", str(path)])
    assert out.exit_code == 0 and "1 records, all replayed" in out.output, out.output
    _clean(out.output)


@pytest.mark.parametrize("command", ["import", "replay"])
def test_control_sequences_in_a_tag_do_not_reach_the_terminal(
    runs: Path, tmp_path: Path, command: str
) -> None:
    """An Event tag holding a screen clear and a window-title sequence: shown without
    them by import and replay."""
    text = (runs / "game.txt").read_text()
    path = tmp_path / "ansi.txt"
    path.write_text(text.replace('[Event "', '[Event "\x1b[2J\x1b]0;pwned\x07', 1))
    argv = ["import", str(path)] if command == "import" else ["replay", str(path), "--turn", "3"]
    out = CliRunner().invoke(main, argv)
    assert out.exit_code == 0, out.output
    _clean(out.output)


def test_check_strategy_reports_a_keyboard_interrupt_as_the_strategy_fault() -> None:
    """A strategy raising KeyboardInterrupt itself fails the check, naming it (exit 1),
    rather than stopping the command with a traceback."""
    out = CliRunner().invoke(main, ["check-strategy", f"{BAD}:InterruptsItself"])
    assert out.exit_code == 1, out.output
    assert "FAILED" in out.output and "raised KeyboardInterrupt()" in out.output
    _clean(out.output)


def test_export_of_a_run_without_kept_moves_writes_no_empty_records(
    runs: Path, tmp_path: Path
) -> None:
    """All games of a run that kept no moves: no record (they came out as empty records,
    Result '*' at the starting position), and the command says why."""
    target = tmp_path / "all.txt"
    out = CliRunner().invoke(main, ["export", str(runs / "nomoves"), "-o", str(target)])
    assert out.exit_code == 0, out.output
    assert "wrote 0 records" in out.output and "keep_moves" in out.output
    assert parse_records(target.read_text()) == []


def test_a_report_where_every_runner_up_went_bankrupt(runs: Path, tmp_path: Path) -> None:
    """Players starting with 0 dirhams (every runner-up bankrupt, no margin at all),
    reported alone and beside a plain run: a report, not an UnboundLocalError."""
    for argv in ([runs / "zero"], [runs / "run", runs / "zero"]):
        out_dir = tmp_path / f"report{len(argv)}"
        out = CliRunner().invoke(main, ["report", *map(str, argv), "--out", str(out_dir)])
        assert out.exit_code == 0, out.output
        assert (out_dir / "report.html").is_file()
    assert (out_dir / "dist_margin.png").is_file()  # the zero run's panel: its bankrupt bar


def _file_size_limit() -> None:  # (in the child, before exec)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))


def test_play_prints_the_turns_when_they_cannot_be_saved(tmp_path: Path) -> None:
    """Files limited to 0 bytes (a full disk as far as the game is concerned): after two
    turns and a quit, the record of the turns is printed, then one error line, exit 1;
    no empty folder is left."""
    out_dir = tmp_path / "game"
    argv = ["play", "--vs", "random", "--seed", "2", "--out", str(out_dir), "--no-colour"]
    command = [sys.executable, "-c", "from marrakech_sim.cli import main; main()", *argv]
    # the same turns once without the limit: every kernel they use compiled and cached
    # (else the limited game compiles one in a decision and cannot write the cache: a
    # fault, not the turns' record)
    subprocess.run(
        command, input="1\n2\nq\n", capture_output=True, text=True, timeout=900, check=True
    )
    shutil.rmtree(out_dir)
    done = subprocess.run(
        command,
        input="1\n2\nq\n",
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=_file_size_limit,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    _clean(done.stdout + done.stderr)
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error")]
    assert len(errors) == 1 and "the turns so far are the record above" in errors[0], errors
    record = parse_records(done.stdout[done.stdout.index('[Event "play"]') :])[0]
    assert len(record.turns) == 2 and replay(record).final.to_notation() == record.final
    assert not out_dir.exists()
