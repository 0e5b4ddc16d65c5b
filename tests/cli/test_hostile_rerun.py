"""A re-run of the hostile cases of issue 29 through the command line, one of each kind.

Each case is a command a hostile user types; each must end in at most one error line
(no traceback) with exit code 1 or 2, and write no file it was refused. The run-level
cases (strategies that end, hang or eat memory on each backend, kill -9, signals, run
folder damage) are the tests of tests/run and tests/runfolder.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_hostile_accepted import STUDY  # the companion module's small study

from marrakech_sim.cli import main
from marrakech_sim.run.config import study_from_dict
from marrakech_sim.run.runner import run_study

BAD = Path(__file__).resolve().parents[1] / "strategies_examples" / "bad.py"
BIG = "9" * 5000


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a small run ('run') and its first game's record ('game.txt')."""
    folder = tmp_path_factory.mktemp("hostile")
    run_study(study_from_dict(STUDY), folder / "run", workers=0)
    # the same study keeping no moves: its games have no records
    run_study(study_from_dict({**STUDY, "keep_moves": 0.0}), folder / "nomoves", workers=0)
    result = CliRunner().invoke(
        main, ["export", str(folder / "run"), "--game", "0", "-o", str(folder / "game.txt")]
    )
    assert result.exit_code == 0, result.output
    return folder


def record_with(old: str, new: str) -> Callable[[Path], bytes]:
    def make(place: Path) -> bytes:
        text = (place / "game.txt").read_text()
        assert old in text
        return text.replace(old, new, 1).encode()

    return make


def rules_tag(place: Path) -> bytes:
    text = (place / "game.txt").read_text()
    return text.replace('[Rules "', '[Rules "' + "[" * 100_000, 1).encode()


# (case, argv with {run} {record} {dir} placeholders, what the record file holds or None)
CASES: list[tuple[str, list[str], Callable[[Path], bytes] | None]] = [
    ("import latin-1", ["import", "{record}"], lambda p: b'[Event "caf\xe9"]\n'),
    ("replay latin-1", ["replay", "{record}"], lambda p: b'[Event "caf\xe9"]\n'),
    ("import 5000-digit roll", ["import", "{record}"], record_with("\n1. ", f"\n1. {BIG} ")),
    ("import 5000-digit seed", ["import", "{record}"], record_with('[Seed "', f'[Seed "{BIG}')),
    ("import nested rules tag", ["import", "{record}"], rules_tag),
    ("import /dev/zero", ["import", "/dev/zero"], None),
    ("replay /dev/zero", ["replay", "/dev/zero"], None),
    ("export --where NULL", ["export", "{run}", "--where", "NULL", "-o", "{dir}/x.txt"], None),
    ("export --where string", ["export", "{run}", "--where", "'a'", "-o", "{dir}/x.txt"], None),
    ("export --where float", ["export", "{run}", "--where", "1.5", "-o", "{dir}/x.txt"], None),
    (
        "export --where COPY",
        ["export", "{run}", "--where", "1=1) TO '{dir}/pwn.csv' --", "-o", "{dir}/x.txt"],
        None,
    ),
    (
        "export --where read_text",
        ["export", "{run}", "--where", "read_text('/etc/passwd') IS NOT NULL", "-o", "{dir}/x"],
        None,
    ),
    ("export --game 2**70", ["export", "{run}", "--game", str(2**70), "-o", "{dir}/x.txt"], None),
    ("export -o missing folder", ["export", "{run}", "--game", "0", "-o", "{dir}/no/x.txt"], None),
    ("export -o /dev/full", ["export", "{run}", "--game", "0", "-o", "/dev/full"], None),
    ("replay --png x.svg", ["replay", "{run}", "0", "--png", "{dir}/x.svg"], None),
    ("replay --png missing folder", ["replay", "{run}", "0", "--png", "{dir}/no/x.png"], None),
    ("replay --svg /dev/full", ["replay", "{run}", "0", "--svg", "/dev/full"], None),
    ("replay game id of 5000 digits", ["replay", "{run}", BIG], None),
    ("report -o /proc/x", ["report", "{run}", "--out", "/proc/x"], None),
    ("run config /dev/zero", ["run", "/dev/zero", "--out", "{dir}/r"], None),
    ("run --out /proc/x", ["run", "{config}", "--out", "/proc/x"], None),
    ("plan effect 0", ["plan", "--effect", "0"], None),
    ("plan effect nan", ["plan", "--effect", "nan"], None),
    ("plan alpha 0", ["plan", "--alpha", "0"], None),
    ("plan alpha 2", ["plan", "--alpha", "2"], None),
    ("plan power 0", ["plan", "--power", "0"], None),
    ("plan design effect nan", ["plan", "--design-effect", "nan"], None),
    ("plan design effect -1", ["plan", "--design-effect", "-1"], None),
    ("plan design effect 0", ["plan", "--design-effect", "0"], None),
    ("plan tiny effect", ["plan", "--effect", "1e-12"], None),
    ("play --name <script>", ["play", "--vs", "random", "--name", "<script>"], None),
    ("play --name empty", ["play", "--vs", "random", "--name", ""], None),
    ("play --name ANSI", ["play", "--vs", "random", "--name", "\x1b[31mx"], None),
    ("play --name a | b", ["play", "--vs", "random", "--name", "a | b"], None),
    ("play --out unwritable", ["play", "--vs", "random", "--out", "/proc/self/x"], None),
    ("replay --gif into /proc", ["replay", "{run}", "0", "--gif", "/proc/x.gif"], None),
    ("replay --html missing folder", ["replay", "{run}", "0", "--html", "{dir}/no/x.html"], None),
    ("export --game without moves", ["export", "{nomoves}", "--game", "1"], None),
    ("export --notable without moves", ["export", "{nomoves}", "--notable"], None),
    ("replay game without moves", ["replay", "{nomoves}", "1"], None),
    ("study config /dev/zero", ["study", "/dev/zero", "--run-dir", "{dir}/r"], None),
    (
        "run --scheduler not a URL",
        ["run", "{config}", "--backend", "dask", "--scheduler", "x"],
        None,
    ),
]


@pytest.mark.parametrize(("case", "argv", "record"), CASES, ids=[c[0] for c in CASES])
def test_a_hostile_command_is_one_line_and_writes_nothing(
    place: Path,
    tmp_path: Path,
    case: str,
    argv: list[str],
    record: Callable[[Path], bytes] | None,
) -> None:
    config = tmp_path / "study.toml"
    config.write_text(
        '[rulesets.two]\nplayers = 2\n[strategies.random]\n[schedule]\nkind = "self_play"\n'
    )
    path = tmp_path / "record.txt"
    if record is not None:
        path.write_bytes(record(place))
    run, nomoves = tmp_path / "run", tmp_path / "nomoves"
    shutil.copytree(place / "run", run)
    shutil.copytree(place / "nomoves", nomoves)
    out = tmp_path / "out"
    out.mkdir()
    args = [
        a.format(run=run, nomoves=nomoves, record=path, dir=out, config=config) if "{" in a else a
        for a in argv
    ]
    result = CliRunner().invoke(main, args, input="q\n")
    assert result.exit_code in (1, 2), (case, result.exit_code, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    errors = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert len(errors) == 1 and "Traceback" not in result.output, result.output
    assert len(errors[0]) < 600
    assert not any(out.iterdir()), list(out.iterdir())  # nothing written, not even in part
