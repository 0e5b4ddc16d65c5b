"""A real tune: games played through the runner, fresh confirmatory seeds, resume after kill -9."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import numpy as np
import pytest

from marrakech_sim.design.tune_report import RESULT_FILE, TOML_FILE, write_tune_report
from marrakech_sim.design.tuning import TuneResult, load_tune_config, run_tune
from marrakech_sim.run.config import study_from_dict

MARRAKECH = Path(sys.executable).parent / "marrakech"
CONFIG = """
name = "tiny"
seed = 4
chunk_games = 512
[rulesets.two]
players = 2
[strategies.greedy]
[strategies.random]
[tune]
newton_steps = 1
refine_steps = 1
step_dirhams = 3
search_games = 1024
refine_games = 1024
confirm_games = 1024
"""


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> TuneResult:
    """The tiny tune (2 players, greedy and random), played once in this process."""
    folder = tmp_path_factory.mktemp("tune")
    (folder / "tiny.toml").write_text(CONFIG)
    result = run_tune(load_tune_config(folder / "tiny.toml"), folder / "out", workers=0)
    write_tune_report(result)
    return result


def test_the_confirmation_plays_seeds_no_search_step_played(tiny: TuneResult) -> None:
    """The game seeds of every confirmatory run (read from its games) are disjoint from
    every game seed of every search step of the tune; a step's purse vectors share theirs."""
    out = tiny.out_dir
    search = [np.load(p) for p in (out / "steps").rglob("*.seeds.npy")]
    confirm = [np.load(p) for p in (out / "confirm").rglob("*.seeds.npy")]
    assert len(search) == 2 * 2 and len(confirm) == 2  # 2 levels x (newton + refine); 2 levels
    for seeds in search:
        assert len(seeds) == 1024  # one seed per block, shared by the step's rule sets
    played = np.concatenate(search)
    for seeds in confirm:
        assert len(seeds) == 1024
        assert not np.intersect1d(seeds, played).size
    assert all(t.disjoint for t in tiny.tuned)


def test_the_report_and_the_toml_of_a_real_tune(tiny: TuneResult) -> None:
    """tuned.toml holds one rule set per (rule set, level) that a study config accepts,
    with its tuned purses; tune.md lists each search's path and the replay table."""
    toml = tomllib.loads((tiny.out_dir / TOML_FILE).read_text(encoding="utf-8"))
    names = {f"two_{lv}_tuned" for lv in ("greedy", "random")}
    assert set(toml["rulesets"]) == names
    study = study_from_dict(
        {**toml, "strategies": {"greedy": {}}, "schedule": {"kind": "self_play"}}
    )
    for item in tiny.tuned:
        rules = study.rules(f"two_{item.level}_tuned")
        assert rules.seat_dirhams == item.search.purses
        assert item.search.purses[0] == 30
    text = (tiny.out_dir / "tune.md").read_text(encoding="utf-8")
    assert "Each level's tuned rule played at the other levels" in text
    assert text.count("Search path") == 2
    for item in tiny.tuned:
        assert len(item.replays) == 3  # its own rule, the other level's, untuned
        for step in item.search.steps:
            for point in step.points:
                assert f"| {list(point.purses)} |" in text


def test_a_tune_is_the_same_for_any_number_of_workers(tiny: TuneResult, tmp_path: Path) -> None:
    """The same config played with 2 worker processes gives the same steps and result."""
    again = run_tune(tiny.config, tmp_path / "out", workers=2)
    assert again.tuned == tiny.tuned


def test_a_killed_tune_resumes_from_its_last_finished_step(
    tiny: TuneResult, tmp_path: Path
) -> None:
    """`marrakech tune` killed with SIGKILL after its first step, then run again, finishes
    with the result of an uninterrupted tune, without replaying the finished step."""
    (tmp_path / "tiny.toml").write_text(CONFIG)
    out = tmp_path / "out"
    cmd = [str(MARRAKECH), "tune", str(tmp_path / "tiny.toml"), "--out", str(out)]
    proc = subprocess.Popen(
        [*cmd, "--workers", "1"],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 300
    while not list((out / "steps").glob("*/*/*.json")):  # a step's effects are kept
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    first = next((out / "steps").glob("*/*/*.json"))
    stamp = first.stat().st_mtime_ns
    assert not (out / RESULT_FILE).exists()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert first.stat().st_mtime_ns == stamp  # kept, not played again
    resumed = json.loads((out / RESULT_FILE).read_text())
    original = json.loads((tiny.out_dir / RESULT_FILE).read_text())
    assert resumed["tuned"] == original["tuned"]
    assert "[rulesets.two_greedy_tuned]" in done.stdout


def test_ctrl_c_stops_a_tune_with_one_line_saying_how_to_resume(tmp_path: Path) -> None:
    """SIGINT while a step plays ends `marrakech tune` with exit code 130, no traceback, and
    a line saying that the same command resumes it."""
    from terminal import start_in_terminal

    (tmp_path / "tiny.toml").write_text(CONFIG)
    out = tmp_path / "out"
    # SIGINT at its default in the tune: a test process started as a shell's background
    # job has it ignored, the tune inherited that, and played to the end (exit 0)
    proc = start_in_terminal(
        [str(MARRAKECH), "tune", str(tmp_path / "tiny.toml"), "--out", str(out)]
    )
    deadline = time.monotonic() + 300
    while not list((out / "steps").glob("*/*/*.run/run.json")):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, raw = proc.communicate(timeout=120)
    err = raw.decode()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert "tune stopped; the same command resumes it from its last finished step" in err


def test_ctrl_c_as_the_tune_writes_its_report_says_how_to_resume(
    tiny: TuneResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C after the last step, while the report is written, ends `marrakech tune` as
    one in a step does (it ended with click's 'Aborted!', exit code 1)."""
    from click.testing import CliRunner

    from marrakech_sim.cli.tune import tune_command
    from marrakech_sim.design import tune_report, tuning

    def stopped(result: TuneResult) -> Path:
        raise KeyboardInterrupt

    monkeypatch.setattr(tuning, "run_tune", lambda *args, **kwargs: tiny)
    monkeypatch.setattr(tune_report, "write_tune_report", stopped)
    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)  # the command sets it
    (tmp_path / "tiny.toml").write_text(CONFIG)
    args = [str(tmp_path / "tiny.toml"), "--out", str(tmp_path / "out"), "--workers", "0"]
    result = CliRunner().invoke(tune_command, args)
    assert result.exit_code == 130, result.output
    assert "tune stopped; the same command resumes it from its last finished step" in (
        result.output
    )


def test_a_real_tunes_verdicts_are_their_printed_intervals_inside_the_margin(
    tiny: TuneResult,
) -> None:
    """Every seat of every confirmatory replay is fair exactly when the interval it carries
    lies inside +-margin, and tune.md labels that interval with its level (95% for 2 seats:
    1 - 2 alpha / 2)."""
    margin = tiny.config.margin_pp
    for item in tiny.tuned:
        for replay in item.replays:
            for v in replay.verdicts:
                assert v.fair == (-margin < v.lo_pp and v.hi_pp < margin)
    text = (tiny.out_dir / "tune.md").read_text(encoding="utf-8")
    assert text.count("| 95% interval (the verdict's) |") == len(tiny.tuned)
    assert "correction over 2 is conservative" in text


def test_a_confirmed_tune_refuses_another_margin(tiny: TuneResult, tmp_path: Path) -> None:
    """Run again on a folder whose confirmation was seen, `marrakech tune --margin 1.6` (or
    a config whose tune.margin_pp changed) is a one-line error naming both margins and
    what to do, before any game; the report is left as it was. Another alpha is refused
    as another config, naming the key."""
    from click.testing import CliRunner

    from marrakech_sim.cli import main
    from marrakech_sim.errors import RunFolderError

    out = tmp_path / "out"
    shutil.copytree(tiny.out_dir, out)
    report = (out / "tune.md").read_text(encoding="utf-8")
    (tmp_path / "tiny.toml").write_text(CONFIG)
    args = ["tune", str(tmp_path / "tiny.toml"), "--out", str(out), "--workers", "0"]
    done = CliRunner().invoke(main, [*args, "--margin", "1.6"])
    assert done.exit_code == 1
    assert (
        f"--margin = 1.6: the tune in {str(out)!r} has confirmed at margin 1 pp, and an "
        "equivalence verdict needs its margin fixed before its games are seen; run it at 1, "
        "or tune at 1.6 into a new --out folder with another seed"
    ) in done.output
    assert (out / "tune.md").read_text(encoding="utf-8") == report
    wider = load_tune_config(tmp_path / "tiny.toml")
    wider = dataclasses.replace(wider, margin_pp=1.6)
    with pytest.raises(
        RunFolderError, match=r"^tune\.margin_pp = 1\.6: the tune in .* at margin 1 pp"
    ):
        run_tune(wider, out, workers=0)
    (tmp_path / "alpha.toml").write_text(CONFIG + "alpha = 0.1\n")
    with pytest.raises(
        RunFolderError, match=r"different config \(tune\.alpha: unset there, 0\.1 here\)"
    ):
        run_tune(load_tune_config(tmp_path / "alpha.toml"), out, workers=0)
    assert run_tune(tiny.config, out, workers=0).tuned == tiny.tuned  # the same margin: kept


def test_the_kept_confirmation_games_reproduce_its_effects(tiny: TuneResult) -> None:
    """Each confirmation's run folder is kept in the tune's folder, named in tune.md, and
    its games give back every replay's per-seat effects: win share minus 1/2 per rule set
    (its purses read from the run's config), with the block-clustered standard error of a
    statsmodels OLS clustered on the games' seeds; no step of the search keeps its run."""
    import pandas as pd
    import statsmodels.api as sm

    text = (tiny.out_dir / "tune.md").read_text(encoding="utf-8")
    assert not list((tiny.out_dir / "steps").rglob("*.run"))
    for item in tiny.tuned:
        assert item.confirm_run == f"confirm/{item.level}/two/{item.confirm_seed}.run"
        assert f"The confirmation's games are kept in `{item.confirm_run}`" in text
        run = tiny.out_dir / item.confirm_run
        config = json.loads((run / "run.json").read_text())["config"]
        purses = {name: tuple(r["seat_dirhams"]) for name, r in config["rulesets"].items()}
        games = pd.concat(pd.read_parquet(p) for p in sorted((run / "games").glob("*.parquet")))
        seats = pd.concat(pd.read_parquet(p) for p in sorted((run / "seats").glob("*.parquet")))
        games = games[games["end_reason"] != "error"]
        rows = seats.merge(games[["game_id", "ruleset", "seed"]], on="game_id")
        assert {r.effects.purses for r in item.replays} == set(purses.values())
        for replay in item.replays:
            [name] = [n for n, p in purses.items() if p == replay.effects.purses]
            mine = rows[rows["ruleset"] == name]
            assert mine["game_id"].nunique() == replay.effects.n_games == 1024
            for seat in (0, 1):
                part = mine[mine["seat"] == seat]
                y = part["win_share"].to_numpy(dtype=float)
                groups = pd.factorize(part["seed"])[0]
                fit = sm.OLS(y, np.ones_like(y)).fit(
                    cov_type="cluster", cov_kwds={"groups": groups}
                )
                assert replay.effects.effect_pp[seat] == pytest.approx(
                    100 * (fit.params[0] - 0.5), abs=1e-9
                )
                assert replay.effects.se_pp[seat] == pytest.approx(100 * fit.bse[0], rel=1e-6)


def test_each_rule_set_to_paste_says_what_its_confirmation_showed(tiny: TuneResult) -> None:
    """tuned.toml names above each tuned rule set whether its confirmation showed every
    seat fair (a rule set that was not is marked NOT, with its largest seat effect), and
    for which level it was tuned; the file still reads as TOML."""
    import tomllib

    from marrakech_sim.design.tune_report import tuned_name, tuned_toml

    text = tuned_toml(tiny)
    lines = text.splitlines()
    assert set(tomllib.loads(text)["rulesets"]) == {tuned_name(item) for item in tiny.tuned}
    for item in tiny.tuned:
        comment = lines[lines.index(f"[rulesets.{tuned_name(item)}]") - 1]
        assert comment.startswith("# ") and f"tuned for {item.level} players only" in comment
        if item.confirmed.all_fair:
            assert "confirmed fair within ±" in comment and "NOT" not in comment
        else:
            worst = f"{item.confirmed.effects.worst_pp:.2f} pp"
            assert "NOT shown fair within ±" in comment and worst in comment


def test_the_report_opens_with_what_the_tune_found(tiny: TuneResult) -> None:
    """tune.md opens with its answer: the rule sets confirmed fair, those not shown fair
    (with their largest seat effect), each as its confirmation decided."""
    from marrakech_sim.design.tune_report import tune_markdown

    text = tune_markdown(tiny)
    short = text[text.index("## In short") : text.index("## Compensation per level")]
    confirmed = short.splitlines()[2]
    assert confirmed.startswith("- Confirmed fair within ±")
    for item in tiny.tuned:
        name = f"{item.ruleset} at {item.level} {list(item.search.purses)}"
        if item.confirmed.all_fair:
            assert name in confirmed
        else:
            assert name not in confirmed
            assert f"{name} (largest seat effect {item.confirmed.effects.worst_pp:.2f} pp)" in short
    # one level's purses that leave another level's play less fair than none are named
    for item in tiny.tuned:
        untuned = item.replays[-1].effects.worst_pp
        for other in item.replays:
            if other.tuned_at in (None, item.level):
                continue
            line = (
                f"- {item.ruleset}: the purses tuned for {other.tuned_at} players leave "
                f"{item.level} play less fair than no compensation"
            )
            assert (line in short) == (other.effects.worst_pp > untuned)
