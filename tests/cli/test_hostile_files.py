"""Hostile files and paths handed to the commands that read records and write files
(issue 29): every case is one line naming the bad value with exit code 1 or 2, and a
failed write leaves no partial file behind.
"""

from __future__ import annotations

import re
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import play_run

from marrakech_sim.cli import main
from marrakech_sim.errors import RunFolderError
from marrakech_sim.record import games_where, read_record_file
from marrakech_sim.run.runner import resume_run

MARRAKECH = Path(sys.executable).parent / "marrakech"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("files") / "run"
    return play_run(
        out,
        {
            "name": "files",
            "seed": 5,
            "games_per_lineup": 8,
            "chunk_games": 8,
            "rulesets": {"two": {"players": 2}},
            "strategies": {"random": {}, "greedy": {}},
            "schedule": {"kind": "round_robin", "repeat": True},
        },
    )


@pytest.fixture(scope="module")
def record_text(run: Path) -> str:
    result = CliRunner().invoke(main, ["export", str(run), "--game", "0"])
    assert result.exit_code == 0, result.output
    return str(result.stdout)


def one_line_error(args: list[str], match: str) -> str:
    """The command's error, after checking it is one line (no traceback) saying `match`."""
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (1, 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    error = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert len(error) == 1 and match in error[0], result.output
    return error[0]


# ---------------------------------------------------------------- records that are not text


def edited(record_text: str, old: str, new: str) -> str:
    assert old in record_text
    return record_text.replace(old, new, 1)


BIG = "9" * 5000


@pytest.mark.parametrize(
    ("name", "make", "match"),
    [
        (
            "latin-1",
            lambda t: t.encode() + b'\n[Event "\xe9"]\n',
            "is not UTF-8 text: byte b'\\xe9'",
        ),
        ("huge roll", lambda t: edited(t, "\n1. ", f"\n1. {BIG} ").encode(), "not an action"),
        ("huge turn", lambda t: edited(t, "\n1. ", f"\n{BIG}. ").encode(), "turn number 1"),
        ("huge seed", lambda t: edited(t, '[Seed "', f'[Seed "{BIG}').encode(), "Seed is not"),
        (
            "seed >= 2**64",
            lambda t: re.sub(r'\[Seed "[0-9]+"\]', f'[Seed "{2**64}"]', t).encode(),
            "below 2**64",
        ),
        (
            "huge placement",
            lambda t: edited(t, "\n1. ", f"\n1. b L 3 {BIG},1-2,1 ").encode(),
            "not an action",
        ),
        (
            "nested rules",
            lambda t: edited(t, '[Rules "', '[Rules "' + "[" * 100_000).encode(),
            "Rules is not a JSON object",
        ),
        ("unicode digit", lambda t: edited(t, "\n1. ", "\n1. \u0663 ").encode(), "not an action"),
    ],
)
@pytest.mark.parametrize("command", ["import", "replay"])
def test_a_record_that_is_not_one_is_a_one_line_error(
    record_text: str, tmp_path: Path, command: str, name: str, make: Any, match: str
) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes(make(record_text))
    error = one_line_error(
        [command, str(path), *(["--turn", "0"] if command == "replay" else [])], match
    )
    assert len(error) < 400  # a 5,000-digit token is quoted cut short


def test_a_record_file_from_dev_zero_is_refused_by_size() -> None:
    """/dev/zero is read up to the size limit, not until memory runs out."""
    done = subprocess.run(
        [str(MARRAKECH), "import", "/dev/zero"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1
    assert "larger than 256 MiB" in done.stderr and "Traceback" not in done.stderr


def test_a_study_config_from_dev_zero_is_refused_by_size() -> None:
    done = subprocess.run(
        [str(MARRAKECH), "run", "/dev/zero"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode in (1, 2)
    assert "larger than 256 MiB" in done.stderr and "Traceback" not in done.stderr


def test_a_byte_order_mark_is_read_as_utf8(record_text: str, tmp_path: Path) -> None:
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbf" + record_text.encode())
    assert len(read_record_file(path)) == 1


def test_control_characters_in_tags_never_reach_the_terminal(
    record_text: str, tmp_path: Path
) -> None:
    path = tmp_path / "escape.txt"
    path.write_text(edited(record_text, '[Event "', '[Event "\x1b[2J\x1b]0;owned\x07\x9b'))
    for args in (["import", str(path)], ["replay", str(path), "--turn", "1"]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        assert not any(c in result.output for c in "\x1b\x07\x9b"), args


# ---------------------------------------------------------------- export --where


@pytest.mark.parametrize(
    ("where", "match"),
    [
        ("NULL", 'is "NULL", not true or false'),
        ("'abc'", "is VARCHAR, not true or false"),
        ("1.5", "is DECIMAL(2,1), not true or false"),
        ("turns", "is SMALLINT, not true or false"),
        ("turns > 'abc'", "Conversion Error"),
        ("nosuch > 1", 'column "nosuch" not found'),
        ("turns > 1; DROP TABLE games", "not SQL"),
        ("true; COPY (SELECT 1) TO 'x.csv'", "not SQL"),
        ("1=1) UNION SELECT 1 --", "comments (-- or /*) are not allowed"),
        ("game_id IN (SELECT 1 FROM read_text('/etc/passwd'))", "file system operations are"),
        ("game_id IN (SELECT 1 FROM read_parquet('x.parquet'))", "file system operations are"),
    ],
)
def test_where_is_one_condition_over_the_games_table(run: Path, where: str, match: str) -> None:
    one_line_error(["export", str(run), "--where", where], match)


def test_where_cannot_write_a_file(run: Path, tmp_path: Path) -> None:
    target = tmp_path / "pwn.csv"
    for where in (
        f"true; COPY (SELECT 1) TO '{target}'",
        f"game_id IN (SELECT 1 FROM (COPY (SELECT 1) TO '{target}'))",
    ):
        CliRunner().invoke(main, ["export", str(run), "--where", where])
    assert not target.exists()


def test_where_still_chooses_games(run: Path) -> None:
    from marrakech_sim import runfolder

    games = runfolder.read_table(run, "games")
    expected = sorted(games.loc[games["turns"] > 40, "game_id"])
    assert games_where(run, "turns > 40") == expected and expected


def test_export_game_beyond_int64_is_a_usage_error(run: Path) -> None:
    one_line_error(["export", str(run), "--game", str(2**70)], "is not in the range")


# ---------------------------------------------------------------- where the output goes


@pytest.mark.parametrize("flag", ["-o", "--record", "--svg", "--png", "--gif", "--html"])
def test_output_into_a_missing_folder_is_one_line(
    run: Path, record_text: str, tmp_path: Path, flag: str
) -> None:
    suffix = {"-o": "txt", "--record": "txt"}.get(flag, flag[2:])
    target = tmp_path / "missing" / f"x.{suffix}"
    if flag == "-o":
        args = ["export", str(run), "--game", "0", "-o", str(target)]
    else:
        source = tmp_path / "game.txt"
        source.write_text(record_text)
        args = ["replay", str(source), flag, str(target)]
    one_line_error(args, f"the folder '{target.parent}' does not exist")
    assert not target.parent.exists()


@pytest.mark.parametrize("flag", ["-o", "--record"])
def test_output_onto_a_full_disk_is_one_line(run: Path, record_text: str, flag: str) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    if flag == "-o":
        args = ["export", str(run), "--game", "0", "-o", "/dev/full"]
    else:
        args = ["replay", str(run), "0", "--record", "/dev/full"]
    one_line_error(args, "cannot write '/dev/full': No space left on device")


@pytest.mark.parametrize(
    ("flag", "name"),
    [("--png", "x.svg"), ("--svg", "x.png"), ("--gif", "x.png"), ("--html", "x.txt")],
)
def test_a_picture_flag_and_its_suffix_must_agree(
    record_text: str, tmp_path: Path, flag: str, name: str
) -> None:
    source = tmp_path / "game.txt"
    source.write_text(record_text)
    one_line_error(["replay", str(source), flag, str(tmp_path / name)], "its name must end in")
    assert not (tmp_path / name).exists()


def limit_file_size(most: int) -> Any:
    def limit() -> None:  # a real write failure (EFBIG, as a full disk's ENOSPC)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (most, most))

    return limit


def fails_past_file_size(args: list[str], most: int, timeout: float) -> str:
    """`marrakech ARGS` allowed no file over `most` bytes: it must fail with exit status 1
    and no traceback; its stderr."""
    done = subprocess.run(
        [str(MARRAKECH), *args],
        capture_output=True,
        text=True,
        preexec_fn=limit_file_size(most),
        timeout=timeout,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    return done.stderr


def test_a_gif_that_cannot_be_written_leaves_no_file(record_text: str, tmp_path: Path) -> None:
    source = tmp_path / "game.txt"
    source.write_text(record_text)
    target = tmp_path / "game.gif"
    err = fails_past_file_size(["replay", str(source), "--gif", str(target)], 20_000, 300)
    assert "File too large" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game.txt"]


def test_a_report_that_cannot_be_written_leaves_no_half_report(run: Path, tmp_path: Path) -> None:
    """The report is written beside its folder and moved in at the end: a write that fails
    half way leaves neither the folder nor the staging folder."""
    out = tmp_path / "report"
    err = fails_past_file_size(["report", str(run), "--out", str(out)], 30_000, 600)
    assert f"cannot write '{out}'" in err and "File too large" in err
    assert list(tmp_path.iterdir()) == []


def test_a_report_over_an_earlier_one_replaces_its_files(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    for _ in range(2):
        result = CliRunner().invoke(main, ["report", str(run), "--out", str(out)])
        assert result.exit_code == 0, result.output
    assert (out / "report.html").is_file() and (out / "notable").is_dir()
    assert [p.name for p in tmp_path.iterdir()] == ["report"]


@pytest.mark.parametrize("target", ["/proc/x", "/proc/x/y"])
def test_report_into_proc_is_one_line(run: Path, target: str) -> None:
    one_line_error(["report", str(run), "--out", target], f"cannot write '{target}'")


# ---------------------------------------------------------------- files that are not parts


@pytest.mark.parametrize("stray", ["games/stray.txt", "seats/part-0000000.parquet"])
def test_a_file_that_is_not_a_part_is_named_and_never_read(
    run: Path, tmp_path: Path, stray: str
) -> None:
    """A file that is not a part's, or a second name of a chunk's part (a copy under
    part-0000000 beside part-000000), is named by the report and by resume; neither reads it."""
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    table, name = stray.split("/")
    if name.endswith(".parquet"):
        shutil.copy(copy / table / "part-000000.parquet", copy / stray)
    else:
        (copy / stray).write_text("hello")
    one_line_error(["report", str(copy), "--out", str(tmp_path / "r")], f"'{stray}'")
    with pytest.raises(RunFolderError, match=f"'{stray}'"):
        resume_run(copy, workers=0)
    (copy / stray).unlink()
    assert resume_run(copy, workers=0).status == "complete"


def test_a_garbage_part_of_an_unplanned_chunk_is_removed_by_resume(
    run: Path, tmp_path: Path
) -> None:
    """seats/part-00003.parquet (five digits, garbage) is chunk 3's: the report refuses the
    run, resume removes it (under its own name) and the report then reads the run."""
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    (copy / "seats" / "part-00003.parquet").write_bytes(b"garbage")
    one_line_error(["report", str(copy), "--out", str(tmp_path / "r")], "chunk 3")
    result = resume_run(copy, workers=0)
    assert result.status == "complete" and 3 in result.replayed
    assert not (copy / "seats" / "part-00003.parquet").exists()
    result = CliRunner().invoke(main, ["report", str(copy), "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output


def test_a_run_whose_players_start_with_no_dirhams_is_reported(tmp_path: Path) -> None:
    """Every game ends in a bankruptcy (no dirham to pay with): some per-game metrics have
    no value in any game, and the report still writes."""
    run = play_run(
        tmp_path / "zero",
        {
            "name": "zero",
            "seed": 5,
            "games_per_lineup": 8,
            "chunk_games": 8,
            "rulesets": {"two": {"players": 2, "starting_dirhams": 0}},
            "strategies": {"random": {}, "greedy": {}},
            "schedule": {"kind": "round_robin", "repeat": True},
        },
    )
    result = CliRunner().invoke(main, ["report", str(run), "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    assert "Seat advantage" in (tmp_path / "r" / "report.md").read_text()


def test_export_notable_of_a_run_without_moves_is_one_line(run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    shutil.rmtree(copy / "moves")
    one_line_error(["export", str(copy), "--notable"], "has no moves parts")


def test_two_runs_in_folders_of_one_name_are_two_runs(run: Path, tmp_path: Path) -> None:
    """`report A/ref B/ref`: two different runs are reported together, each named apart;
    a copy of one run is still refused as the same run twice."""
    from marrakech_sim.report.load import open_runs

    for parent, seed in (("a", 5), ("b", 6)):
        play_run(
            tmp_path / parent / "ref",
            {
                "name": "ref",
                "seed": seed,
                "games_per_lineup": 8,
                "chunk_games": 8,
                "rulesets": {"two": {"players": 2}},
                "strategies": {"random": {}, "greedy": {}},
                "schedule": {"kind": "round_robin", "repeat": True},
            },
        )
    runs = open_runs([tmp_path / "a" / "ref", tmp_path / "b" / "ref"])
    assert [r.run_id for r in runs] == ["ref@a", "ref@b"]
    result = CliRunner().invoke(
        main,
        [
            "report",
            str(tmp_path / "a" / "ref"),
            str(tmp_path / "b" / "ref"),
            "--out",
            str(tmp_path / "r"),
        ],
    )
    assert result.exit_code == 0 and "48 games from 2 run(s)" in result.output, result.output
    shutil.copytree(tmp_path / "a" / "ref", tmp_path / "c" / "ref")
    one_line_error(
        ["report", str(tmp_path / "a" / "ref"), str(tmp_path / "c" / "ref")],
        "are the same run ('ref'): each game would count twice",  # its id, not a label
    )


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["run", "{config}", "--out", "/proc/x"], "cannot write the run folder '/proc/x'"),
        (["run", "{config}", "--out", "/dev/full"], "'/dev/full' is not a folder"),
        (["study", "{config}", "--run-dir", "/proc/x"], "cannot write the run folder '/proc/x'"),
        (
            ["study", "{config}", "--run-dir", "{tmp}/run", "--report-dir", "/dev/full"],
            "cannot write into '/dev/full'",
        ),
    ],
)
def test_a_run_or_study_folder_that_cannot_be_written_is_one_line(
    tmp_path: Path, args: list[str], match: str
) -> None:
    config = tmp_path / "small.toml"
    config.write_text(
        "seed = 5\ngames_per_lineup = 8\n[rulesets.two]\nplayers = 2\n[strategies.random]\n"
        '[schedule]\nkind = "self_play"\n'
    )
    filled = [a.format(config=config, tmp=tmp_path) for a in args]
    done = subprocess.run([str(MARRAKECH), *filled], capture_output=True, text=True, timeout=300)
    assert done.returncode in (1, 2) and "Traceback" not in done.stderr, done.stderr
    assert match in done.stderr.strip().splitlines()[-1]


def test_a_huge_game_id_for_replay_is_a_usage_error(run: Path) -> None:
    """`replay RUN 999...` (5,000 digits) is refused as not a game id, not a ValueError
    from int()'s digit limit."""
    one_line_error(["replay", str(run), BIG], "is not a game id")


@pytest.mark.parametrize(("flag", "suffix"), [("--record", "txt"), ("--svg", "svg")])
def test_replay_names_each_file_it_writes(
    record_text: str, tmp_path: Path, flag: str, suffix: str
) -> None:
    source = tmp_path / "game.txt"
    source.write_text(record_text)
    target = tmp_path / f"out.{suffix}"
    result = CliRunner().invoke(main, ["replay", str(source), flag, str(target)])
    assert result.exit_code == 0, result.output
    assert target.is_file() and f"wrote {target}" in result.output
