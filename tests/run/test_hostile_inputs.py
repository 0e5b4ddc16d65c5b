"""Hostile inputs and damaged run folders (issue 10, faults 4, 5, 6, 8, 9, 11, 13).

Every case ends in a one-line error naming the bad value, or in correct behaviour: never a
traceback, a hang, or lost data. Runs are real (small) runs; damage is done to real files.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import EXAMPLES

from marrakech_sim import runfolder
from marrakech_sim.cli import main
from marrakech_sim.errors import ConfigError, NotationError, RunFolderError
from marrakech_sim.report import build_report
from marrakech_sim.rules import GameState, perft
from marrakech_sim.run import config as study_config
from marrakech_sim.run.config import load_study, study_from_dict
from marrakech_sim.run.plan import Plan
from marrakech_sim.run.runner import resume_run, run_study
from marrakech_sim.run.summary import summarize_run

MARRAKECH = Path(sys.executable).parent / "marrakech"


def study_data(**changes: Any) -> dict[str, Any]:
    """A small study: 2 players, compiled random and greedy, 16-game chunks."""
    data: dict[str, Any] = {
        "name": "hostile",
        "seed": 5,
        "games_per_lineup": 40,
        "chunk_games": 16,
        "rulesets": {"two": {"players": 2}},
        "strategies": {"random": {}, "greedy": {}},
        "schedule": {"kind": "round_robin", "repeat": True},
    }
    data.update(changes)
    return data


def tables(run_dir: Path) -> list[pd.DataFrame]:
    return [runfolder.read_table(run_dir, name) for name in runfolder.TABLES]


def no_traceback(result: Any) -> str:
    """The CLI result's output, after checking it failed with a one-line error."""
    assert result.exit_code != 0
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), result.exception
    text = result.output
    assert "Traceback" not in text
    return str(text)


@pytest.fixture(scope="module")
def run_a(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hostile") / "a"
    result = run_study(study_from_dict(study_data()), out, workers=0)
    assert result.status == "complete" and runfolder.read_manifest(out).chunks > 4
    return out


def damaged_copy(run_a: Path, tmp_path: Path, name: str = "d") -> Path:
    out = tmp_path / name
    shutil.copytree(run_a, out)
    return out


# ---------------------------------------------------------------- 8. names are names


@pytest.mark.parametrize("name", ["/abs/path", "../../x", "a/b", "..", ".hidden", "a\\b", ""])
def test_study_name_that_is_a_path_is_refused(name: str) -> None:
    """A study name with a separator or '..' is a ConfigError, never a folder outside runs/."""
    with pytest.raises(ConfigError, match="name"):
        study_from_dict(study_data(name=name))


def test_study_command_refuses_a_path_name(tmp_path: Path) -> None:
    """`marrakech study` with name = '../../x' fails with one line and writes nothing."""
    config = tmp_path / "c.toml"
    config.write_text('name = "../../x"\n[strategies.random]\n')
    result = CliRunner().invoke(main, ["study", str(config)])
    assert "a study name is letters" in no_traceback(result)
    assert not (tmp_path.parent / "x").exists()


# ---------------------------------------------------------------- 6. planning sizes


def many_players(players: int, rotation: str) -> dict[str, Any]:
    names = [f"s{i}" for i in range(players)]
    return study_data(
        rulesets={"big": {"players": players}},
        strategies={n: {"ref": "random"} for n in names},
        schedule={"kind": "lineups", "lineups": [names]},
        games_per_lineup=1,
        rotation=rotation,
    )


@pytest.mark.parametrize("players", [8, 9, 12, 13])
def test_block_of_too_many_seatings_is_refused_at_once(players: int) -> None:
    """rotation 'all' with 8+ distinct players is refused before any seating is listed."""
    started = time.perf_counter()
    with pytest.raises(ConfigError, match="latin") as caught:
        study_from_dict(many_players(players, "all"))
    assert time.perf_counter() - started < 5
    assert f"{study_config.MAX_BLOCK_GAMES:,}" in str(caught.value)


def test_latin_plans_many_players() -> None:
    """The suggested rotation 'latin' plans 13 players in k seatings per block."""
    plan = Plan(study_from_dict(many_players(13, "latin")))
    assert plan.games_planned == 13


@pytest.mark.parametrize("players", [12, 13])
def test_one_strategy_in_many_seats_plans_its_distinct_seatings_only(players: int) -> None:
    """12 copies of random and one greedy: the block has `players` seatings, listed without
    going through the players! orders of the seats (13! = 6.2e9 took minutes before)."""
    data = study_data(
        rulesets={"many": {"players": players}},
        schedule={"kind": "lineups", "lineups": [["greedy"] + ["random"] * (players - 1)]},
        games_per_lineup=players,
        rotation="all",
    )
    plan = Plan(study_from_dict(data))
    assert plan.games_planned == players
    assert len(plan.matches[0].seatings) == players


@pytest.mark.parametrize("lineup", ["aab", "abab", "abcab", "aaaa", "abcdef"])
def test_distinct_seatings_keep_the_order_of_the_permutations(lineup: str) -> None:
    """The seatings (and so every block's games) are those listed before, in that order."""
    import itertools

    from marrakech_sim.run.plan import distinct_permutations

    expected = list(dict.fromkeys(itertools.permutations(tuple(lineup))))
    assert list(distinct_permutations(tuple(lineup))) == expected


def test_chunks_are_bounded() -> None:
    """No chunk holds more than MAX_CHUNK_GAMES + MAX_BLOCK_GAMES - 1 games."""
    data = many_players(7, "all")  # 5,040 seatings: the largest block allowed
    data.update(games_per_lineup=3 * 5040, chunk_games=study_config.MAX_CHUNK_GAMES)
    plan = Plan(study_from_dict(data))
    sizes = plan.chunk_first_game[1:] - plan.chunk_first_game[:-1]
    assert sizes.max() <= study_config.MAX_CHUNK_GAMES + study_config.MAX_BLOCK_GAMES - 1
    with pytest.raises(ConfigError, match="chunk_games"):
        study_from_dict(study_data(chunk_games=study_config.MAX_CHUNK_GAMES + 1))


# ---------------------------------------------------------------- 11. one-line errors


@pytest.mark.parametrize("games", [2**63 - 1, 10**15, 1e15, float("nan"), True])
def test_absurd_games_per_lineup_is_a_config_error(games: Any) -> None:
    """games_per_lineup far too large, or not an integer, is a ConfigError, not a MemoryError."""
    with pytest.raises(ConfigError, match="games_per_lineup"):
        study_from_dict(study_data(games_per_lineup=games))


@pytest.mark.parametrize("games", [str(2**63 - 1), "1000000000000000", "1e15"])
def test_absurd_games_option_is_one_line(tmp_path: Path, games: str) -> None:
    """`marrakech run --games` too large or not an integer fails with one line."""
    config = tmp_path / "c.toml"
    config.write_text("[strategies.random]\n")
    result = CliRunner().invoke(main, ["run", str(config), "--games", games, "--out", "x"])
    no_traceback(result)
    assert not Path("x").exists()


def test_config_that_is_not_utf8_is_a_config_error(tmp_path: Path) -> None:
    """A config file with bytes that are not UTF-8 is a ConfigError naming the file."""
    config = tmp_path / "latin1.toml"
    config.write_bytes('description = "caf\xe9"\n[strategies.random]\n'.encode("latin-1"))
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_study(config)
    assert "not UTF-8" in no_traceback(CliRunner().invoke(main, ["run", str(config)]))


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"area": "big"}, "not a finite number"),
        ({"area": float("nan")}, "plain data"),
        ({"area": float("inf")}, "plain data"),
        ({"area": True}, "not a finite number"),
    ],
)
def test_strategy_parameter_of_the_wrong_kind_is_refused(params: Any, expected: str) -> None:
    """A parameter whose value is not of its default's kind (or is NaN) is a ConfigError."""
    with pytest.raises(ConfigError, match=expected):
        study_from_dict(study_data(strategies={"greedy": {"params": params}, "random": {}}))


def test_nan_parameter_in_toml_is_one_line(tmp_path: Path) -> None:
    """`area = nan` in a config file fails with one line naming the parameter."""
    config = tmp_path / "c.toml"
    config.write_text("[strategies.greedy]\nparams = {area = nan}\n")
    assert "'area'" in no_traceback(CliRunner().invoke(main, ["run", str(config)]))


def test_strategy_constructor_that_raises_is_named() -> None:
    """A constructor's own exception becomes a ConfigError naming the strategy and the error."""
    ref = f"{EXAMPLES / 'inputs.py'}:ConstructorRaises"
    with pytest.raises(ConfigError, match="constructor raised RuntimeError: no licence"):
        study_from_dict(study_data(strategies={"bad": {"ref": ref}, "random": {}}))


@pytest.mark.parametrize(
    ("players", "board"),
    [("r:99999999999999999999:12", "......."), ("r:30:12", "r99999999999999999999......")],
)
def test_huge_numbers_in_notation_are_notation_errors(players: str, board: str) -> None:
    """Dirhams or a rug number too large for the game is a NotationError, not OverflowError."""
    rows = "/".join([board] + ["......."] * 6)
    text = f"{rows} 33N {players},b:30:12,y:30:12,p:30:12 0o"
    with pytest.raises(NotationError):
        GameState.from_notation(text)
    result = CliRunner().invoke(main, ["position", "show", text])
    assert "Error:" in no_traceback(result)


def test_huge_perft_depth_is_refused() -> None:
    """A perft depth beyond any game is refused by the library and by the command line."""
    with pytest.raises(ConfigError, match="depth"):
        perft(GameState.start(), 10**30)
    result = CliRunner().invoke(main, ["perft", "-d", "99999999999999999999999"])
    assert "--depth" in no_traceback(result)


def test_one_game_summary_prints_no_nan(tmp_path: Path) -> None:
    """The summary of a one-game run says there is no interval instead of printing nan%."""
    config = tmp_path / "one.toml"
    config.write_text(
        'games_per_lineup = 1\nrotation = "none"\n[rulesets.two]\nplayers = 2\n'
        "[strategies.random]\n[schedule]\nkind = 'self_play'\n"
    )
    result = CliRunner().invoke(
        main, ["run", str(config), "--out", str(tmp_path / "run"), "--workers", "0"]
    )
    assert result.exit_code == 0, result.output
    assert "nan" not in result.output and "no interval" in result.output


def test_failed_start_that_left_a_log_does_not_block_a_retry(tmp_path: Path) -> None:
    """A folder holding only run.log (and the lock file) of a failed start can be run into."""
    out = tmp_path / "run"
    out.mkdir()
    (out / runfolder.LOG_FILE).write_text("an earlier failed start\n")
    (out / runfolder.LOCK_FILE).write_text("")
    config = tmp_path / "c.toml"
    config.write_text(
        "games_per_lineup = 2\n[rulesets.two]\nplayers = 2\n[strategies.random]\n"
        "[schedule]\nkind = 'self_play'\n"
    )
    args = ["run", str(config), "--out", str(out), "--workers", "0", "--no-summary"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert runfolder.read_manifest(out).status == "complete"


# ---------------------------------------------------------------- 11. full or read-only disk


def test_full_disk_is_one_line_and_the_run_resumes(run_a: Path, tmp_path: Path) -> None:
    """Writes that fail (a file size limit: EFBIG, as a full disk's ENOSPC) end in one line,
    leave no temporary file, and the run resumes to the same tables once space is back."""
    out = tmp_path / "full"
    config = tmp_path / "c.toml"
    config.write_text(json_to_toml(study_data()))

    def limit() -> None:  # a real write failure: parts above 3 KB cannot be written
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (3000, 3000))

    cmd = [str(MARRAKECH), "run", str(config), "--out", str(out), "--workers", "0"]
    done = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=limit, timeout=600)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "cannot write the run folder" in done.stderr and "File too large" in done.stderr
    assert not [p for p in out.rglob("*.tmp")]
    resume_run(out, workers=0)
    for x, y in zip(tables(run_a), tables(out), strict=True):
        pd.testing.assert_frame_equal(x, y)


def json_to_toml(data: dict[str, Any]) -> str:
    """The small study as TOML (the tables are one level deep)."""
    lines, tables_ = [], []
    for key, value in data.items():
        if isinstance(value, dict):
            tables_.append((key, value))
        else:
            lines.append(f"{key} = {json.dumps(value)}")
    for key, table in tables_:
        if all(isinstance(v, dict) for v in table.values()) and table:
            for sub, inner in table.items():
                lines.append(f"[{key}.{sub}]")
                lines += [f"{k} = {json.dumps(v)}" for k, v in inner.items()]
        else:
            lines.append(f"[{key}]")
            lines += [f"{k} = {json.dumps(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


def test_read_only_file_system_is_one_line(tmp_path: Path) -> None:
    """A run into a read-only file system fails with one line naming it, leaving nothing."""
    mount = tmp_path / "ro"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(mount)], capture_output=True
    )
    if made.returncode != 0:
        pytest.skip("mounting a read-only tmpfs needs privileges this machine does not give")
    try:
        with pytest.raises(RunFolderError, match="read-only file system"):
            run_study(study_from_dict(study_data()), mount / "run", workers=0)
    finally:
        subprocess.run(["umount", str(mount)], check=True)


# ---------------------------------------------------------------- 9. one writer


def test_second_writer_is_refused_naming_the_holder(run_a: Path, tmp_path: Path) -> None:
    """While one process holds a run folder, a resume or a new run into it names its pid."""
    out = damaged_copy(run_a, tmp_path)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom marrakech_sim import runfolder\n"
            f"with runfolder.locked({str(out)!r}):\n    print('held', flush=True)\n"
            "    time.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(RunFolderError, match=f"process {holder.pid}"):
            resume_run(out, workers=0)
        with pytest.raises(RunFolderError, match=f"process {holder.pid}"):
            run_study(study_from_dict(study_data()), out, workers=0)
        result = CliRunner().invoke(main, ["run", "--resume", str(out), "--workers", "0"])
        assert "in use by another writer" in no_traceback(result)
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    assert resume_run(out, workers=0).status == "complete"  # the lock went with its holder


# ---------------------------------------------------------------- 4. resume checks the parts


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:100])


def test_resume_replays_damaged_chunks_and_names_them(run_a: Path, tmp_path: Path) -> None:
    """Resume replays a truncated, a garbage and a missing part's chunks, naming each."""
    out = damaged_copy(run_a, tmp_path)
    truncate(out / "games" / runfolder.part_name(1))
    (out / "seats" / runfolder.part_name(2)).write_bytes(b"garbage")
    (out / "moves" / runfolder.part_name(3)).unlink()
    result = resume_run(out, workers=0)
    assert result.status == "complete"
    assert sorted(result.replayed) == [1, 2, 3]
    assert "not a readable Parquet file" in result.replayed[1]
    assert "no moves/" in result.replayed[3]
    for x, y in zip(tables(run_a), tables(out), strict=True):
        pd.testing.assert_frame_equal(x, y)


def test_resume_replays_parts_that_disagree(run_a: Path, tmp_path: Path) -> None:
    """A games part with rows cut, and a copied part of an unplanned chunk, are replayed."""
    import pyarrow.parquet as pq

    out = damaged_copy(run_a, tmp_path)
    part = out / "games" / runfolder.part_name(0)
    pq.write_table(pq.read_table(part).slice(0, 3), part)
    for table in runfolder.TABLES:
        shutil.copy(out / table / runfolder.part_name(1), out / table / runfolder.part_name(99))
    result = resume_run(out, workers=0)
    assert sorted(result.replayed) == [0, 99]
    assert "the plan has 0..15" in result.replayed[0] and "plan" in result.replayed[99]
    for x, y in zip(tables(run_a), tables(out), strict=True):
        pd.testing.assert_frame_equal(x, y)


def test_resume_cli_says_which_chunks_it_replayed(run_a: Path, tmp_path: Path) -> None:
    """`marrakech run --resume` prints the damaged chunks it played again."""
    out = damaged_copy(run_a, tmp_path)
    truncate(out / "seats" / runfolder.part_name(2))
    result = CliRunner().invoke(main, ["run", "--resume", str(out), "--workers", "0"])
    assert result.exit_code == 0, result.output
    assert "replayed 1 damaged chunk(s)" in result.output and "chunk 2:" in result.output


# ---------------------------------------------------------------- 5. the report's input


def edit_manifest(run: Path, **changes: Any) -> None:
    manifest = json.loads((run / "run.json").read_text())
    manifest.update(changes)
    (run / "run.json").write_text(json.dumps(manifest))


DAMAGE = {
    "truncated part": lambda d: truncate(d / "games" / runfolder.part_name(1)),
    "garbage part": lambda d: (d / "seats" / runfolder.part_name(2)).write_bytes(b"garbage"),
    "empty part": lambda d: (d / "moves" / runfolder.part_name(2)).write_bytes(b""),
    "one table's part deleted": lambda d: (d / "seats" / runfolder.part_name(3)).unlink(),
    "moves deleted": lambda d: shutil.rmtree(d / "moves"),
    "part copied twice": lambda d: [
        shutil.copy(d / t / runfolder.part_name(1), d / t / runfolder.part_name(50))
        for t in runfolder.TABLES
    ],
    "status running": lambda d: edit_manifest(d, status="running"),
    "games_played edited": lambda d: edit_manifest(d, games_played=5),
    "games_played not a number": lambda d: edit_manifest(d, games_played="many"),
    "run.json not UTF-8": lambda d: (d / "run.json").write_bytes(b"\xff\xfe{"),
    "run.json a list": lambda d: (d / "run.json").write_text("[1]"),
    "damage inside a part": lambda d: flip_bytes(d / "seats" / runfolder.part_name(2)),
    "a seats part as a games part": lambda d: shutil.copy(
        d / "seats" / runfolder.part_name(1), d / "games" / runfolder.part_name(1)
    ),
}


def flip_bytes(path: Path) -> None:
    data = bytearray(path.read_bytes())
    for i in range(200, 400):
        data[i] ^= 0x55
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_report_refuses_damaged_runs_in_one_line(run_a: Path, tmp_path: Path, damage: str) -> None:
    """Each kind of damage is a RunFolderError and a one-line CLI error, never a report."""
    out = damaged_copy(run_a, tmp_path)
    DAMAGE[damage](out)
    with pytest.raises(RunFolderError):
        build_report([out], tmp_path / "report")
    result = CliRunner().invoke(main, ["report", str(out), "--out", str(tmp_path / "r2")])
    assert no_traceback(result).strip().startswith("Error:")
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "report" / "report.html").exists()


def test_report_refuses_the_same_run_twice(run_a: Path, tmp_path: Path) -> None:
    """`report A A`, or A with a copy of A, is refused: each game would count twice."""
    copy = damaged_copy(run_a, tmp_path, "copy")
    for runs in ([run_a, run_a], [run_a, copy]):
        with pytest.raises(RunFolderError, match="same run"):
            build_report(runs, tmp_path / "report")


def test_report_refuses_one_name_for_two_strategies(run_a: Path, tmp_path: Path) -> None:
    """`report A D` where D's 'greedy' has other parameters names both definitions."""
    strategies = {"random": {}, "greedy": {"params": {"area": 2.0}}}
    other = tmp_path / "d"
    run_study(study_from_dict(study_data(strategies=strategies)), other, workers=0)
    with pytest.raises(RunFolderError, match=r"strategy 'greedy' means two.*area.*2\.0"):
        build_report([run_a, other], tmp_path / "report")


def test_report_of_an_all_error_run_is_one_line(tmp_path: Path) -> None:
    """A run whose every game ended in a fault has nothing to report: one line says so."""
    data = study_data(
        strategies={"raises": {"ref": f"{EXAMPLES / 'bad.py'}:Raises"}},
        schedule={"kind": "self_play"},
        games_per_lineup=4,
    )
    run_study(study_from_dict(data), tmp_path / "run", workers=0)
    result = CliRunner().invoke(main, ["report", str(tmp_path / "run"), "--out", str(tmp_path)])
    assert "ended in an error" in no_traceback(result)


def test_report_of_a_whole_run_still_works(run_a: Path, tmp_path: Path) -> None:
    """The checks pass a whole run: its report counts every game once."""
    result = build_report([run_a], tmp_path / "report")
    assert result.facts["n_games"] == runfolder.read_manifest(run_a).games_played


# ---------------------------------------------------------------- 13. the summary


def _between_strategies(games: pd.DataFrame, seats: pd.DataFrame) -> list[pd.DataFrame]:
    """The games (and their seats) whose seats hold more than one strategy."""
    mixed = seats.groupby("game_id")["strategy"].nunique().loc[lambda n: n > 1].index
    return [games.loc[games["game_id"].isin(mixed)], seats.loc[seats["game_id"].isin(mixed)]]


def test_summary_equals_the_stats_on_the_whole_tables(run_a: Path) -> None:
    """The DuckDB summary gives stats.win_rates (on the games between different
    strategies) and stats.seat_win_shares' figures (on every game)."""
    from marrakech_sim import stats

    games, seats, _ = tables(run_a)
    summary = summarize_run(run_a)
    expected = stats.win_rates(*_between_strategies(games, seats), by=("ruleset",))
    got = summary.strategies
    for a, b in (("rate", "rate"), ("lo", "lo"), ("hi", "hi"), ("n_seat_games", "n_seat_games")):
        assert got[a].to_numpy() == pytest.approx(expected[b].to_numpy(), rel=1e-9)
    shares = stats.seat_win_shares(games, seats)
    for column in ("share", "lo", "hi", "n_games", "fair_share"):
        assert summary.seats[column].to_numpy() == pytest.approx(
            shares[column].to_numpy(), rel=1e-9
        )
    assert summary.games == len(games)


def test_summary_leaves_self_play_out_of_the_strategies_shares(tmp_path: Path) -> None:
    """In a self-play game each strategy wins its fair share by construction: the
    per-strategy shares come from the games between different strategies only (they equal
    stats.win_rates on those), the per-seat shares from every game; a run of self-play
    only prints no strategy share."""
    from marrakech_sim import stats

    lineups = [["random", "random"], ["greedy", "random"], ["greedy", "greedy"]]
    data = study_data(
        strategies={"random": {}, "greedy": {}},
        schedule={"kind": "lineups", "lineups": lineups},
        rulesets={"two": {"players": 2}},
        games_per_lineup=200,
    )
    out = tmp_path / "run"
    run_study(study_from_dict(data), out, workers=0)
    games, seats, _ = tables(out)
    summary = summarize_run(out)
    mixed_games, mixed_seats = _between_strategies(games, seats)
    assert 0 < len(mixed_games) < len(games)
    expected = stats.win_rates(mixed_games, mixed_seats, by=("ruleset",))
    got = summary.strategies
    assert got["strategy"].tolist() == expected["strategy"].tolist()
    assert got["n_seat_games"].tolist() == [len(mixed_games)] * 2
    assert got["rate"].to_numpy() == pytest.approx(expected["rate"].to_numpy(), rel=1e-9)
    assert got["lo"].to_numpy() == pytest.approx(expected["lo"].to_numpy(), rel=1e-9)
    assert summary.seats["n_games"].tolist() == [len(games)] * 2
    # a manifest without its matches (an older run folder): the games' seats tell
    older = tmp_path / "older"
    shutil.copytree(out, older)
    manifest = json.loads((older / "run.json").read_text())
    del manifest["matches"]
    (older / "run.json").write_text(json.dumps(manifest))
    pd.testing.assert_frame_equal(summarize_run(older).strategies, got)

    alone = tmp_path / "alone"
    data["schedule"] = {"kind": "lineups", "lineups": [lineups[0], lineups[2]]}
    run_study(study_from_dict(data), alone, workers=0)
    assert summarize_run(alone).strategies.empty


def test_lock_file_holds_the_writer_pid(tmp_path: Path) -> None:
    """The lock file names the process holding it (what a refused writer reports)."""
    with runfolder.locked(tmp_path / "run") as path:
        assert path.read_text().strip() == str(os.getpid())
