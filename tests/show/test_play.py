"""`marrakech play`: a person's game driven by scripted input, undo, hints, saving."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from marrakech_sim.cli import main
from marrakech_sim.human import QuitGame, game_seed, parse_choice, play_person, write_run
from marrakech_sim.play.strategy import StrategySpec
from marrakech_sim.record import parse_records, read_records, records_from_run
from marrakech_sim.rules import Rules
from marrakech_sim.run.verify import verify_run

PLACEMENTS = (((3, 2), (3, 1)), ((2, 3), (1, 3)), ((4, 3), (4, 4)))


@pytest.mark.parametrize(
    ("text", "options", "expected"),
    [
        ("L", None, -1),
        ("s", None, 0),
        ("3", None, 1),
        ("right", None, 1),
        ("2", PLACEMENTS, ((2, 3), (1, 3))),
        ("1,3 2,3", PLACEMENTS, ((2, 3), (1, 3))),
        ("4,3-4,4", PLACEMENTS, ((4, 3), (4, 4))),
        ("ab", PLACEMENTS, ((3, 2), (3, 1))),  # the board's letters: A 3,1  B 3,2  C 1,3 ...
        ("D-C", PLACEMENTS, ((2, 3), (1, 3))),
        ("e f", PLACEMENTS, ((4, 3), (4, 4))),
        ("u", PLACEMENTS, "undo"),
        ("h", None, "hint"),
        ("q", None, "quit"),
    ],
)
def test_parse_choice_reads_numbers_squares_and_commands(
    text: str, options: tuple | None, expected: object
) -> None:
    """A choice is a number from the list, L/S/R, two squares in either order, or a command."""
    assert parse_choice(text, options) == expected


@pytest.mark.parametrize(
    ("text", "options"),
    [
        ("4", None),
        ("9", PLACEMENTS),
        ("0,0 0,1", PLACEMENTS),
        ("ac", PLACEMENTS),
        ("xy", PLACEMENTS),
    ],
)
def test_parse_choice_rejects_what_is_not_offered(text: str, options: tuple | None) -> None:
    """A number out of range or a placement that is not legal is a ValueError saying what is."""
    with pytest.raises(ValueError, match=r"choose|not a legal placement"):
        parse_choice(text, options)


RULES = Rules(players=2, rugs_per_colour=3)
OPPONENT = [StrategySpec.of("greedy")]


def _play(lines: list[str], seat: int = 0) -> tuple[object, list[str]]:
    feed = iter(lines)
    shown: list[str] = []
    game = play_person(
        RULES,
        OPPONENT,
        read=lambda prompt: next(feed, "1"),
        show=shown.append,
        seat=seat,
        seed=game_seed(3),
        hint=StrategySpec.of("greedy"),
    )
    return game, shown


def test_undo_takes_back_the_last_choice() -> None:
    """Undo replays the game without the person's last choice: the same game as never
    having made it."""
    undone, shown = _play(["3", "2", "u", "1", "h", "oops"])
    straight, _ = _play(["3", "1"])
    assert undone.record.to_text() == straight.record.to_text()  # type: ignore[attr-defined]
    assert any(s.startswith("hint: ") for s in shown)
    assert any("'oops'" in s for s in shown)
    assert any("undone" in s for s in shown)


def test_person_game_is_a_record_and_a_run_that_verify_accepts(tmp_path: Path) -> None:
    """The finished game replays from its record, and its one-game run folder passes
    verify and exports the same record."""
    game, _ = _play(["2", "1", "3"] * 30, seat=1)
    assert read_records(game.record.to_text())  # type: ignore[attr-defined]
    run = write_run(game, 3, OPPONENT, tmp_path / "run")  # type: ignore[arg-type]
    report = verify_run(run)
    assert report.ok, (report.problems, report.examples)
    exported = next(records_from_run(run)).to_text()
    body = lambda text: text.split("\n\n", 1)[1]  # noqa: E731  (the tags differ: Event, Game)
    assert body(exported) == body(game.record.to_text())  # type: ignore[attr-defined]


def test_quitting_keeps_the_turns_played() -> None:
    """q stops the game; the error carries the turns played so far as a record."""
    with pytest.raises(QuitGame) as info:
        _play(["1", "2", "q"])
    assert info.value.record is not None and len(info.value.record.turns) >= 2


def test_play_command_scripted_to_the_end(tmp_path: Path) -> None:
    """`marrakech play` driven by stdin plays to the end and saves a record and a run."""
    out = tmp_path / "game"
    lines = "h\n" + "\n".join(["2", "1"] * 40) + "\n"
    result = CliRunner().invoke(
        main,
        [
            "play",
            "--vs",
            "random",
            "--rugs-per-colour",
            "2",
            "--seed",
            "11",
            "--out",
            str(out),
            "--no-colour",
        ],
        input=lines,
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "Final position" in result.output and "hint: " in result.output
    assert re.search(r"Result \d", result.output)
    record = parse_records((out / "game.txt").read_text())[0]
    assert record.seats == ("you", "random")
    # the turns since the person's last one, in words: never the turn about to start
    told = re.findall(r"^\d+\. player \d \(\w+\): (.*)$", result.output, re.M)
    assert told and all(told), [line for line in told if not line]
    assert read_records((out / "game.txt").read_text())
    result = CliRunner().invoke(main, ["verify", str(out)])
    assert result.exit_code == 0, result.output


def test_two_player_prompt_names_the_rug_drawn() -> None:
    """With 2 players (two colours each) the board shown before each choice says which
    colour was drawn for this turn (RULES.md section 1: the rug is drawn first)."""
    _, shown = _play(["2", "1"] * 30)
    headings = [s for s in shown if s.startswith("You are player 1 (you).")]
    assert headings and all(re.search(r"Your rug this turn: [ry]\.", h) for h in headings)


BAD = Path(__file__).resolve().parents[1] / "strategies_examples" / "bad.py"


def test_ctrl_c_at_a_prompt_quits_keeping_the_turns_played() -> None:
    """Ctrl-C (KeyboardInterrupt from the prompt) is a quit: the turns played are kept."""
    feed = iter(["1", "2", "1"])

    def read(prompt: str) -> str:
        line = next(feed, None)
        if line is None:
            raise KeyboardInterrupt
        return line

    with pytest.raises(QuitGame) as info:
        play_person(RULES, OPPONENT, read=read, show=lambda text: None, seed=game_seed(3))
    assert info.value.record is not None and len(info.value.record.turns) >= 2


def test_a_failing_hint_strategy_does_not_end_the_game() -> None:
    feed = iter(["h", "1", "h", "2"])
    shown: list[str] = []
    with pytest.raises(QuitGame):
        play_person(
            RULES,
            OPPONENT,
            read=lambda prompt: next(feed, "q"),
            show=shown.append,
            seed=game_seed(3),
            hint=StrategySpec.of(f"{BAD}:Raises"),
        )
    assert sum("the hint strategy raised" in s for s in shown) >= 1


@pytest.mark.parametrize("name", ["<script>", "a | b", "", "\x1b[31m", "a/b"])
def test_a_bad_name_is_refused_before_the_game(tmp_path: Path, name: str) -> None:
    result = CliRunner().invoke(
        main,
        ["play", "--vs", "random", "--seed", "1", "--name", name, "--out", str(tmp_path / "g")],
    )
    assert result.exit_code == 2 and "--name" in result.output, result.output
    assert "Your rotation" not in result.output and not (tmp_path / "g").exists()


def test_a_finished_game_is_saved_under_any_accepted_name(tmp_path: Path) -> None:
    out = tmp_path / "game"
    lines = "\n".join(["2", "1"] * 40) + "\n"
    args = ["play", "--vs", "random", "--rugs-per-colour", "2", "--seed", "11", "--no-colour"]
    result = CliRunner().invoke(main, [*args, "--name", "Zoë.k-1", "--out", str(out)], input=lines)
    assert result.exit_code == 0, result.output
    assert parse_records((out / "game.txt").read_text())[0].seats[0] == "Zoë.k-1"


def test_a_game_whose_run_folder_cannot_be_written_keeps_its_record(tmp_path: Path) -> None:
    """save_game into a folder that is not empty: the run is refused, the record is kept."""
    from marrakech_sim.errors import MarrakechError
    from marrakech_sim.human import save_game

    game, _ = _play(["2", "1", "3"] * 30)
    out = tmp_path / "taken"
    out.mkdir()
    (out / "other.txt").write_text("someone else's")
    with pytest.raises(MarrakechError, match="the game's record is in"):
        save_game(game, 3, OPPONENT, out)  # type: ignore[arg-type]
    saved = tmp_path / "taken-game.txt"
    assert read_records(saved.read_text())[0].record.to_text() == game.record.to_text()  # type: ignore[attr-defined]


def test_an_opponent_that_sleeps_is_stopped_and_the_turns_are_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An opponent past its time per decision ends the game as a fault, not a hang; the
    person's turns so far come back as a record."""
    from marrakech_sim.run import config

    monkeypatch.setattr(config, "DEFAULT_DECISION_SECONDS", 0.2)
    feed = iter(["1", "2"] * 40)
    with pytest.raises(QuitGame, match="exceeded its time budget") as info:
        play_person(
            RULES,
            [StrategySpec.of(f"{BAD}:Sleeps")],
            read=lambda prompt: next(feed, "q"),
            show=lambda text: None,
            seed=game_seed(3),
        )
    assert info.value.record is not None and len(info.value.record.turns) >= 1


def test_a_failing_hint_strategy_gives_the_page_no_hint_and_the_game_goes_on() -> None:
    """The browser's game (play_to_choice): a hint strategy that raises gives no hint."""
    from marrakech_sim.human import play_to_choice

    asked = play_to_choice(
        RULES, OPPONENT, [], seed=game_seed(3), hint=StrategySpec.of(f"{BAD}:Raises")
    )
    assert isinstance(asked.hint, int)  # a rotation: Raises rotates like any strategy
    placed = play_to_choice(
        RULES, OPPONENT, [0], seed=game_seed(3), hint=StrategySpec.of(f"{BAD}:Raises")
    )
    assert placed.options and placed.hint is None  # its placement raised: no hint


def test_warm_up_plays_the_built_in_opponents_once_per_kernel_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before a game, the built-in opponents' kernels are loaded untimed once per kernel
    cache folder, saying so first (a cold cache's compilation of the expert's kernels
    took minutes and faulted its timed on_game_start); a plug-in is not played there."""
    from marrakech_sim.human import warm_up

    cache = tmp_path / "cache"
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache))  # the markers' folder
    said: list[str] = []
    sleeps = StrategySpec.of(f"{BAD}:Sleeps")  # played here, it would sleep past the test
    warm_up(Rules(players=3), [StrategySpec.of("expert"), sleeps], said.append)
    assert len(said) == 1 and "compiling the kernels of expert, greedy" in said[0]
    assert "once per installation" in said[0]
    markers = sorted(p.name.rsplit("-", 1)[0] for p in cache.iterdir())  # less the copy's
    assert markers == [
        "compiled-play-marrakech_sim.strategies.expert.ExpertStrategy",
        "compiled-play-marrakech_sim.strategies.greedy.GreedyStrategy",
    ]
    warm_up(Rules(players=3), [StrategySpec.of("expert"), sleeps], said.append)
    warm_up(Rules(players=2), [StrategySpec.of("greedy")], said.append)
    assert len(said) == 1  # nothing more to compile: no game, no word


_ROW = re.compile(r"^ ?(\d+) │")


def test_the_legal_placements_are_marked_on_the_board_by_letter() -> None:
    """At a placement the board shows a letter on every square a legal placement covers
    and on no other; the list names each placement by its two letters, and typing the
    letters places that rug (the same game as typing its number)."""
    shown: list[str] = []

    def by_letters(prompt: str) -> str:
        if not prompt.startswith("placement"):
            return "2"
        listed = next(s for s in reversed(shown) if s.startswith("Your placement: "))
        return re.search(r"1\) ([A-Z]{2}) ", listed).group(1).lower()  # type: ignore[union-attr]

    game = play_person(RULES, OPPONENT, read=by_letters, show=shown.append, seed=game_seed(3))
    feed = iter(["2", "1"] * 60)
    by_number = play_person(
        RULES, OPPONENT, read=lambda p: next(feed), show=lambda t: None, seed=game_seed(3)
    )
    assert game.record.to_text() == by_number.record.to_text()
    boards = [s for s in shown if "to move (place)" in s]
    lists = [s for s in shown if s.startswith("Your placement: ")]
    assert len(boards) == len(lists) >= 6
    for board, listed in zip(boards, lists, strict=True):
        letters = {}
        for a, b, x1, y1, x2, y2 in re.findall(r"\) ([A-Z])([A-Z]) (\d),(\d)-(\d),(\d)", listed):
            letters[int(x1), int(y1)] = a
            letters[int(x2), int(y2)] = b
        rows = [line for line in board.splitlines() if _ROW.match(line)]
        assert len(rows) == RULES.board_size
        for y, line in enumerate(rows):
            for x in range(RULES.board_size):
                cell = line[4 + 5 * x : 8 + 5 * x]  # 4 characters a square, 1 between
                found = re.search(r"[A-Z]", cell)
                assert (found.group(0) if found else None) == letters.get((x, y)), (x, y, cell)


def test_play_a_study_configs_rule_set_by_name(tmp_path: Path) -> None:
    """`play --rules CONFIG --ruleset NAME` plays that rule set as the study resolves it
    (its base included; a rule flag changes one option) and saves it in the record;
    CONFIG without --ruleset is refused with the rule set names."""
    from marrakech_sim.human import study_rules

    root = Path(__file__).resolve().parents[2]
    config = tmp_path / "study.toml"
    config.write_text(
        (root / "configs" / "default.toml").read_text()
        + '\n[rulesets.quick]\nbase = "two_players"\nrugs_per_colour = 2\norient_at_end = true\n'
    )
    out = tmp_path / "game"
    args = ["play", "--rules", str(config), "--vs", "random", "--seed", "4", "--no-colour"]
    result = CliRunner().invoke(
        main, [*args, "--ruleset", "quick", "--out", str(out)], input="1\n" * 80
    )
    assert result.exit_code == 0, result.output
    record = parse_records((out / "game.txt").read_text())[0]
    assert record.rules == study_rules(config, "quick")
    assert record.rules == Rules(players=2, rugs_per_colour=2, orient_at_end=True)
    result = CliRunner().invoke(  # a flag changes the rule set's option
        main,
        [*args, "--ruleset", "quick", "--die-faces", "1,2,3", "--out", str(tmp_path / "g2")],
        input="1\n" * 80,
    )
    assert result.exit_code == 0, result.output
    record = parse_records((tmp_path / "g2" / "game.txt").read_text())[0]
    assert record.rules == Rules(
        players=2, rugs_per_colour=2, orient_at_end=True, die_faces=[1, 2, 3]
    )
    refused = CliRunner().invoke(main, args)
    assert refused.exit_code == 2
    assert "holds rule sets ([rulesets.NAME]): choose one with --ruleset NAME" in refused.output
    assert "quick" in refused.output and "two_players" in refused.output


def test_play_a_rule_set_of_a_file_of_rule_sets_alone(tmp_path: Path) -> None:
    """The tuned.toml `marrakech tune` writes holds rule sets without a study around them:
    `play --rules FILE --ruleset NAME` plays one (seat purses included, --starting-dirhams
    replacing them); a command that takes rule options says what FILE is."""
    tuned = tmp_path / "tuned.toml"
    tuned.write_text("[rulesets.two_tuned]\nplayers = 2\nseat_dirhams = [30, 32]\n")
    args = ["play", "--rules", str(tuned), "--ruleset", "two_tuned", "--vs", "random"]
    for flags, want in (
        ([], Rules(players=2, seat_dirhams=[30, 32])),
        (["--starting-dirhams", "20"], Rules(players=2, starting_dirhams=20)),
    ):
        out = tmp_path / f"game{len(flags)}"
        result = CliRunner().invoke(
            main, [*args, *flags, "--seed", "4", "--out", str(out)], input="1\n" * 80
        )
        assert result.exit_code == 0, result.output
        assert parse_records((out / "game.txt").read_text())[0].rules == want
    broken = tmp_path / "broken.toml"
    broken.write_text("[rulesets.two_tuned\n")
    bad = CliRunner().invoke(main, [*args[:2], str(broken), *args[3:]])
    assert bad.exit_code == 1 and "is not valid TOML" in bad.output, bad.output
    refused = CliRunner().invoke(main, ["perft", "--rules", str(tuned), "-d", "1"])
    assert refused.exit_code == 2
    assert f"{str(tuned)!r} holds rule sets ([rulesets.NAME] tables), not rule options" in (
        refused.output
    )
