"""The browser game's data without a browser: choices checked, undo, previews, saving."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import ROOT

from marrakech_sim.cli import main
from marrakech_sim.errors import MarrakechError
from marrakech_sim.human import study_rules
from marrakech_sim.play.strategy import StrategySpec
from marrakech_sim.record import parse_records, replay
from marrakech_sim.rules import FACINGS, GameState, Rules
from marrakech_sim.run.verify import verify_run
from marrakech_sim.web.session import Refused, WebGame, region, walks

RULES = Rules(players=2, rugs_per_colour=3)
RANDOM = [StrategySpec.of("random")]


def _game(tmp_path: Path, rules: Rules = RULES, seat: int = 0, seed: int = 7) -> WebGame:
    return WebGame(
        rules,
        RANDOM * (rules.players - 1),
        run_seed=seed,
        out_dir=tmp_path / "run",
        seat=seat,
        hint=StrategySpec.of("greedy"),
    )


def _any_move(view: dict[str, Any], pick: random.Random) -> dict[str, Any]:
    if view["phase"] == "orient":
        return {"rotation": pick.choice((-1, 0, 1))}
    return {"placement": pick.choice(view["placements"])}


def _play_out(game: WebGame, seed: int = 1) -> dict[str, Any]:
    pick = random.Random(seed)
    view = game.view()
    while view["phase"] != "over":
        view = game.choose(_any_move(view, pick))
    return view


def test_a_whole_game_is_saved_as_a_record_and_a_run_that_verify_accepts(
    tmp_path: Path,
) -> None:
    """Played to the end one choice at a time, the game is saved as game.txt, which
    `import` replays, and as a one-game run folder that verify accepts."""
    game = _game(tmp_path, seat=1)
    view = _play_out(game)
    assert view["result"] == game.record.result  # type: ignore[union-attr]
    record = parse_records((tmp_path / "run" / "game.txt").read_text())[0]
    assert record.seats == ("random", "you")
    assert replay(record).final.is_over
    report = verify_run(tmp_path / "run")
    assert report.ok, (report.problems, report.examples)
    out = CliRunner().invoke(main, ["import", str(tmp_path / "run" / "game.txt")])
    assert out.exit_code == 0 and "1 records, all replayed" in out.output, out.output


@pytest.mark.parametrize(
    ("phase_move", "words"),
    [
        ({"placement": [[2, 3], [1, 3]]}, "a rotation is asked for now"),
        ({"rotation": 2}, "rotation 2: allowed are -1"),
        ({"rotation": True}, "rotation True"),
        ({"turn": 1}, "expected {'rotation'"),
        ([1, 2], "expected {'rotation'"),
        (None, "expected {'rotation'"),
    ],
)
def test_a_bad_rotation_request_is_refused_and_changes_nothing(
    tmp_path: Path, phase_move: Any, words: str
) -> None:
    """At a rotation: anything but -1, 0 or 1 is refused with what is allowed; the game
    stays where it was."""
    game = _game(tmp_path)
    before = game.view()
    with pytest.raises(Refused, match=words):
        game.choose(phase_move)
    after = game.view()
    assert after["position"] == before["position"] and after["decisions"] == 0


def test_a_bad_placement_is_refused_with_the_legal_ones(tmp_path: Path) -> None:
    """At a placement: a rotation, malformed squares or squares that are not a legal
    placement are refused, naming what is allowed; nothing changes."""
    game = _game(tmp_path)
    view = game.choose({"rotation": 0})
    assert view["phase"] == "place"
    x, y, _ = view["assam"]
    for move, words in [
        ({"rotation": 0}, "a placement is asked for now"),
        ({"placement": [[x, y], [x + 1, y]]}, "is not a legal placement now; legal: "),
        ({"placement": [[0, 0], [6, 6]]}, "is not a legal placement now"),
        ({"placement": "3,4-3,5"}, "expected \\[\\[x1, y1\\], \\[x2, y2\\]\\]"),
    ]:
        with pytest.raises(Refused, match=words):
            game.choose(move)
        assert game.view()["position"] == view["position"] and game.decisions == [0]
    legal = view["placements"][0]
    assert game.choose({"placement": legal[::-1]})["decisions"] == 2  # either order


def test_undo_gives_back_the_position_before_the_choice(tmp_path: Path) -> None:
    """Undo replays without the last choice: the same position and options as before it;
    with nothing to undo it is refused."""
    game = _game(tmp_path)
    with pytest.raises(Refused, match="nothing to undo yet"):
        game.undo()
    first = game.view()
    game.choose({"rotation": 1})
    placing = game.view()
    game.choose({"placement": placing["placements"][0]})
    back = game.undo()
    assert back["position"] == placing["position"] and back["placements"] == placing["placements"]
    back = game.undo()
    assert back["position"] == first["position"] and back["steps"] == []


def test_after_the_end_every_move_is_refused(tmp_path: Path) -> None:
    """A finished, saved game refuses moves, undo and hints."""
    game = _game(tmp_path)
    _play_out(game)
    for call in (lambda: game.choose({"rotation": 0}), game.undo, game.hint):
        with pytest.raises(Refused, match="the game is over"):
            call()


def test_the_hint_is_a_legal_move(tmp_path: Path) -> None:
    """The hint strategy's advice is given in words and as a move the game accepts."""
    game = _game(tmp_path)
    advice = game.hint()
    assert advice["hint"].startswith("hint (greedy): ")
    view = game.choose(advice["move"])
    advice = game.hint()
    assert advice["move"]["placement"] in view["placements"]


def test_walk_previews_are_where_assam_stops_and_what_is_paid(tmp_path: Path) -> None:
    """For each rotation and die face, the preview's stop is the rules' landing square and
    its amount due is what the payer's dirhams drop by when that face is rolled."""
    game = _game(tmp_path)
    pick = random.Random(4)
    checked = paying = 0
    view = game.view()
    while view["phase"] != "over" and checked < 60:
        if view["phase"] == "orient":
            state = game.asked.state
            for rotation, walk in view["walks"].items():
                turned = state.apply(int(rotation))
                for stop in walk["stops"]:
                    after = turned.apply(stop["roll"])
                    x, y, facing = after.assam
                    assert [x, y] == stop["square"] and facing in FACINGS
                    payer = view["walker"]
                    assert turned.dirhams[payer] - after.dirhams[payer] == min(
                        stop["due"], turned.dirhams[payer]
                    )
                    assert len(stop["region"]) == stop["due"]
                    paying += stop["due"] > 0
                    checked += 1
        view = game.choose(_any_move(view, pick))
    assert checked >= 60 and paying > 0


def test_region_is_the_connected_squares_of_one_colour() -> None:
    """The region paid for is 4-connected and per colour: diagonals and other colours
    are not part of it (RULES.md section 5)."""
    state = GameState.from_notation(
        "r1r1.b1.../b2b2.b1.../..r2..../...r3.../......./......./....... 33N "
        "ry:30:9+12,bp:30:10+12 0d",
        Rules(players=2),
    )
    assert region(state, 0, 0) == [(0, 0), (1, 0)]
    assert region(state, 0, 1) == [(0, 1), (1, 1)]
    assert region(state, 3, 0) == [(3, 0), (3, 1)]
    assert region(state, 2, 2) == [(2, 2)]  # r2 (2,2) and r3 (3,3) touch only diagonally
    assert region(state, 5, 5) == []


def test_steps_show_each_action_and_the_region_before_it_is_paid(tmp_path: Path) -> None:
    """The frames since the last choice name every action of the other seats, and a
    payment's region comes in the frame before the one with the payment made."""
    game = _game(tmp_path, Rules(players=3, rugs_per_colour=4), seat=2, seed=11)
    view = game.view()
    assert any("player 1 (random)" in s["caption"] for s in view["steps"])
    pick = random.Random(2)
    seen_payment = False
    while view["phase"] != "over":
        frames = view["steps"]
        for i, frame in enumerate(frames):
            if frame["overlay"].get("region"):
                assert " for a region of " in frame["caption"]
                assert " paid " in frames[i + 1]["caption"]
                seen_payment = True
        view = game.choose(_any_move(view, pick))
    assert seen_payment


def test_the_colour_drawn_is_told_before_choosing(tmp_path: Path) -> None:
    """With 2 players the rug drawn this turn is in the view at the rotation already."""
    game = _game(tmp_path)
    view = game.view()
    assert view["phase"] == "orient" and view["colour"] in ("r", "y")
    assert f"your rug this turn is {view['colour']}" in view["prompt"]


def test_variant_rotation_previews_the_next_walker(tmp_path: Path) -> None:
    """Under "orient at end" the rotation asked for after placing is previewed for the
    next player's walk."""
    game = _game(tmp_path, Rules(players=2, rugs_per_colour=3, orient_at_end=True))
    view = game.view()
    assert view["phase"] == "place"
    view = game.choose({"placement": view["placements"][0]})
    assert view["phase"] == "orient" and view["walker"] == 1
    assert "for player 2's walk" in view["prompt"]
    assert set(view["walks"]) == {"-1", "0", "1"}


def test_a_config_rule_set_by_name() -> None:
    """`study_rules` reads a study config's rule set (bases resolved); an unknown name is
    refused with the allowed ones."""
    config = ROOT / "configs" / "skill.toml"
    assert study_rules(config, "two_players") == Rules(players=2)
    assert study_rules(config, "orient_at_end") == Rules(orient_at_end=True)
    with pytest.raises(MarrakechError, match=r"'huge' is not in .*allowed are two_players, "):
        study_rules(config, "huge")


def test_play_web_refuses_a_rule_set_without_a_config() -> None:
    """`play --ruleset` without `--rules CONFIG` is a usage error; an unknown name lists
    the allowed ones."""
    out = CliRunner().invoke(main, ["play", "--web", "--ruleset", "standard"])
    assert out.exit_code == 2 and "--ruleset NAME needs --rules CONFIG.toml" in out.output
    config = str(ROOT / "configs" / "skill.toml")
    out = CliRunner().invoke(main, ["play", "--web", "--rules", config, "--ruleset", "nine"])
    assert out.exit_code == 1 and "'nine' is not in" in out.output


def test_walks_cover_every_rotation_and_face() -> None:
    """Each rotation's preview has one stop per distinct die face, on its walk's path."""
    state = GameState.start(Rules(players=2, die_faces=[1, 2, 5]))
    preview = walks(state.apply("r"), 0)
    assert set(preview) == {"-1", "0", "1"}
    for walk in preview.values():
        assert [s["roll"] for s in walk["stops"]] == [1, 2, 5]
        assert all(s["square"] in walk["path"] for s in walk["stops"])
        assert len(walk["path"]) == 6


def test_the_start_up_benchmark_reports_each_figure() -> None:
    """benchmarks/bench_play_web.py starts the real command and reports the seconds to the
    page and to the first view (a smoke test: no timing asserted)."""
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "bench_play_web.py"),
            "--vs",
            "random",
            "--players",
            "2",
            "--repeats",
            "1",
            "--no-warm-up",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    ).stdout
    result = json.loads(out)
    assert set(result) == {"address_printed_s", "page_s", "first_view_s", "target_first_view_s"}
    assert 0 < result["page_s"]["best"] <= result["first_view_s"]["best"]


def test_new_games_take_the_next_seed_and_folder_whatever_is_on_disk(tmp_path: Path) -> None:
    """Game k of a server plays run seed SEED + k - 1 into OUT-k (docs/play.md); a folder
    left with files by an earlier server moves the game to the next free folder, not to
    another seed."""
    from marrakech_sim.web.server import Games

    (tmp_path / "run-2").mkdir()
    (tmp_path / "run-2" / "game.txt").write_text("an earlier server's game\n")
    games = Games(_game(tmp_path, seed=40))
    for _ in range(3):
        _play_out(games.current)
        games.new()
    seeds = [game.run_seed for game in games.played]
    folders = [game.out_dir.name for game in games.played]
    assert seeds == [40, 41, 42, 43]
    assert folders == ["run", "run-3", "run-4", "run-5"]
