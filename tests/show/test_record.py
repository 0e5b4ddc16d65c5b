"""Game records: export from a run, import and replay, API vs Parquet, malformed records."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from marrakech_sim import runfolder
from marrakech_sim.cli import main
from marrakech_sim.play.game import play_game
from marrakech_sim.play.strategy import StrategySpec
from marrakech_sim.record import (
    RecordError,
    format_records,
    notable_games,
    parse_records,
    read_records,
    record_from_actions,
    record_from_game,
    record_from_rows,
    records_from_run,
    replay,
)
from marrakech_sim.rules import Rules

# one rule set per option of RULES.md section 8 (and the player counts)
EVERY_OPTION = """
name = "every-option"
seed = 5
games_per_lineup = 1
rotation = "none"

[rulesets.standard]
[rulesets.three]
players = 3
[rulesets.two]
players = 2
[rulesets.two_one_colour]
players = 2
colours_per_player = 1
[rulesets.few_rugs]
rugs_per_colour = 4
[rulesets.poor]
starting_dirhams = 2
[rulesets.seat_purses]
seat_dirhams = [1, 30, 3, 60]
[rulesets.die]
die_faces = [1, 5]
[rulesets.facing]
initial_facing = "E"
[rulesets.orient_at_end]
orient_at_end = true
[rulesets.own_cover]
own_rugs_fully_coverable = true
[rulesets.tie_visible]
tie_break = "visible"
[rulesets.play_to_end]
players = 3
starting_dirhams = 3
end_when_one_left = false
[rulesets.board9]
board_size = 9
[rulesets.board5]
board_size = 5
rugs_per_colour = 5

[strategies.random]
[strategies.greedy]

[schedule]
kind = "self_play"
"""
OPTION_KEYS = {
    "players",
    "rugs_per_colour",
    "colours_per_player",
    "starting_dirhams",
    "seat_dirhams",
    "die_faces",
    "initial_facing",
    "orient_at_end",
    "own_rugs_fully_coverable",
    "tie_break",
    "end_when_one_left",
    "board_size",
}


def _run(*args: str, input: str | None = None) -> object:
    result = CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)
    return result


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small run with a rule set for every rule option, random and greedy self-play."""
    base = tmp_path_factory.mktemp("records")
    config = base / "every.toml"
    config.write_text(EVERY_OPTION)
    out = base / "run"
    result = _run("run", str(config), "--out", str(out), "--workers", "0", "--no-summary")
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def exported(run_dir: Path) -> str:
    """Every game of the run as records."""
    return format_records(records_from_run(run_dir))


def test_export_then_import_replays_every_rule_option(run_dir: Path, tmp_path: Path) -> None:
    """`export` writes a record of every game, and `import` replays each to its Final."""
    out = tmp_path / "all.txt"
    result = _run("export", str(run_dir), "-o", str(out))
    assert result.exit_code == 0, result.output
    records = parse_records(out.read_text())
    assert len(records) == runfolder.read_manifest(run_dir).games_planned
    used = set()
    for record in records:
        used |= set(json.loads(dict(record.tags())["Rules"]))
    assert used == OPTION_KEYS
    result = _run("import", str(out))
    assert result.exit_code == 0, result.output
    assert f"{len(records)} records, all replayed" in result.output
    finals = [r.final for r in records]
    assert [d.final.to_notation() for d in read_records(out.read_text())] == finals
    assert all(f.split()[-1].endswith("x") for f in finals)  # every game finished


def test_api_and_parquet_records_are_identical(run_dir: Path, exported: str) -> None:
    """A game replayed through play_game from its seed gives the same record text as the
    same game read from the run's Parquet tables."""
    manifest = runfolder.read_manifest(run_dir)
    config = manifest.config
    games = runfolder.read_table(run_dir, "games").set_index("game_id")
    seats = runfolder.read_table(run_dir, "seats")
    texts = exported.split("\n\n[")
    assert len(texts) == len(games)
    for record in parse_records(exported):
        gid = int(record.game)
        row = games.loc[gid]
        rules = Rules.from_dict(config["rulesets"][row.ruleset])
        names = list(seats[seats.game_id == gid].sort_values("seat").strategy)
        players = [
            StrategySpec.of(
                config["strategies"][n]["ref"], config["strategies"][n]["params"]
            ).build()
            for n in names
        ]
        game = play_game(rules, players, int(row.seed), names=names)
        api = record_from_game(
            game,
            rules,
            names,
            event=config["name"],
            game_id=gid,
            date=manifest.created[:10],
            seed=int(row.seed),
        )
        assert api.to_text() == record.to_text()


def test_records_from_move_rows_equal_the_checked_replays(run_dir: Path) -> None:
    """A run's records, whose Final and Result come from the one replay loop over move rows,
    equal those the checked action-by-action replay makes of the same turns (every option)."""
    records = list(records_from_run(run_dir))
    assert len(records) == runfolder.read_manifest(run_dir).games_planned
    for record in records:
        tags = {"event": record.event, "game": record.game, "date": record.date}
        checked = record_from_actions(
            record.rules, record.seats, record.turns, seed=record.seed, **tags
        )
        assert checked == record


def test_move_rows_the_rules_refuse_get_the_checked_replays_error() -> None:
    """Move rows with a placement the rules refuse, or rows after the game's end, give the
    RecordError of the checked replay, which names the turn and the action."""
    from marrakech_sim.play import turns as loop
    from marrakech_sim.strategies.basic import RandomStrategy

    rules = Rules(players=2)
    game = play_game(rules, [RandomStrategy(), RandomStrategy()], 3)
    rows = game.moves.copy()
    assert len(record_from_rows(rules, ["a", "b"], rows).turns) == len(rows)
    rows[2, [loop.M_X1, loop.M_Y1, loop.M_X2, loop.M_Y2]] = (0, 0, 0, 1)  # far from Assam
    with pytest.raises(RecordError, match="turn 3, action 4: illegal action"):
        record_from_rows(rules, ["a", "b"], rows)
    extra = np.concatenate([game.moves, game.moves[-1:]])
    with pytest.raises(RecordError, match=r"already over|in the over phase"):
        record_from_rows(rules, ["a", "b"], extra)


def _mangle(text: str, old: str, new: str, count: int = 1) -> str:
    assert old in text
    return text.replace(old, new, count)


@pytest.fixture(scope="module")
def one(run_dir: Path) -> str:
    """The record of game 0 (4 players, standard rules)."""
    return next(records_from_run(run_dir, [0])).to_text()


def _line_of(text: str, start: str) -> int:
    return next(i + 1 for i, line in enumerate(text.splitlines()) if line.startswith(start))


@pytest.mark.parametrize(
    ("what", "fault"),
    [
        ("bad token", lambda t: re.sub(r"^3\. (\S+)", r"3. Q", t, flags=re.M)),
        (
            "illegal action",
            lambda t: re.sub(r"^2\. (\S+) (\d+) (\S+)", r"2. \1 \2 0,0-0,1", t, flags=re.M),
        ),
        ("roll not on the die", lambda t: re.sub(r"^4\. (\S+) (\d+)", r"4. \1 6", t, flags=re.M)),
        ("turn split", lambda t: re.sub(r"^5\. (\S+) (\d+) (\S+)", r"5. \1 \2", t, flags=re.M)),
    ],
)
def test_malformed_actions_name_line_and_token(one: str, what: str, fault: object) -> None:
    """A bad token, an illegal action or a turn not on one line is a RecordError naming
    the line and the token."""
    text = fault(one)  # type: ignore[operator]
    turn = {"bad token": 3, "illegal action": 2, "roll not on the die": 4, "turn split": 5}[what]
    line = _line_of(text, f"{turn}. ")
    with pytest.raises(RecordError, match=rf"^line {line}, token \"") as info:
        read_records(text)
    message = str(info.value)
    if what == "bad token":
        assert 'token "Q"' in message and "not an action" in message
    elif what == "illegal action":
        assert 'token "0,0-0,1"' in message and "illegal" in message
    elif what == "roll not on the die":
        assert 'token "6"' in message
    else:
        assert "unfinished" in message


def test_wrong_final_and_result_are_errors(one: str) -> None:
    """A Final that the actions do not reach, or a Result that disagrees, is an error."""
    final = re.search(r'\[Final "(.*)"\]', one).group(1)  # type: ignore[union-attr]
    moved = final.replace(" r:", " r:", 1).rsplit(" ", 1)[0] + " 1x"
    line = _line_of(one, "[Final ")
    with pytest.raises(RecordError, match=rf"^line {line}, token .* the Final tag says"):
        read_records(one.replace(final, moved))
    result = re.search(r'\[Result "(.*)"\]', one).group(1)  # type: ignore[union-attr]
    line = _line_of(one, "[Result ")
    with pytest.raises(RecordError, match=rf'^line {line}, token "\*": .* does not agree with'):
        read_records(one.replace(f'[Result "{result}"]', '[Result "*"]'))
    with pytest.raises(RecordError, match="line 1: the required tag Final is missing"):
        read_records(re.sub(r"\[Final .*\]\n", "", one))
    with pytest.raises(RecordError, match=r'line 4, token "\{"'):
        read_records(one.replace('[Rules "{}"]', '[Rules "{"]'))


def test_comments_escapes_and_several_records_read_back(one: str) -> None:
    """Comments in braces are ignored, escaped quotes round-trip, and two records in one
    file (blank-line separated) both replay."""
    text = one.replace("\n1. ", "\n1. {the first turn,\nspanning lines} ", 1)
    text = text.replace("\n2. ", "\n\n2. ", 0)
    escaped = text.replace('[Event "every-option"]', '[Event "say \\"hi\\" \\\\ there"]')
    records = parse_records(escaped + "\n" + one)
    assert len(records) == 2
    assert records[0].event == 'say "hi" \\ there'
    assert replay(records[0]).final.to_notation() == records[1].final
    assert '[Event "say \\"hi\\" \\\\ there"]' in records[0].to_text()


def test_export_selects_games_by_id_where_and_notable(run_dir: Path) -> None:
    """--game, --where (SQL over the games table) and --notable choose the games."""
    result = _run("export", str(run_dir), "--game", "3", "--game", "5")
    assert re.findall(r'\[Game "(\d+)"\]', result.stdout) == ["3", "5"]
    result = _run("export", str(run_dir), "--where", "players = 2 AND turns > 0")
    players = [json.loads(r.tags()[3][1]).get("players", 4) for r in parse_records(result.stdout)]
    assert players and set(players) == {2}
    result = CliRunner().invoke(main, ["export", str(run_dir), "--where", "no_such_column > 1"])
    assert result.exit_code == 1 and "no_such_column" in result.output
    result = _run("export", str(run_dir), "--notable")
    assert "longest: game" in result.output and '[Game "' in result.output


def test_notable_games_point_at_real_turns(run_dir: Path) -> None:
    """notable_games names the longest and shortest game and a decisive turn in each game."""
    found = notable_games(run_dir)
    kinds = {n.kind: n for n in found}
    assert {"longest", "shortest", "largest_payment"} <= set(kinds)
    turns = runfolder.read_table(run_dir, "games").set_index("game_id").turns
    for n in found:
        assert 1 <= n.turn <= turns[n.game_id], n
    assert kinds["longest"].turn == turns.max()
    assert kinds["shortest"].turn == turns.min()


def test_notable_comeback_is_the_largest_deficit_a_sole_winner_made_up(run_dir: Path) -> None:
    """The comeback notable_games names equals one recomputed row by row in Python: the
    largest lead another seat held over a sole winner (dirhams + visible squares), the
    lowest game id among equals, its decisive turn the one after the last turn behind."""
    games = runfolder.read_table(run_dir, "games").set_index("game_id")
    moves = runfolder.read_table(run_dir, "moves")
    best: tuple[int, int] | None = None  # (deficit, -game id)
    last_behind: dict[int, int] = {}
    for row in moves.itertuples():
        g = games.loc[row.game_id]
        if g.end_reason == "error" or len(g.winners) != 1:
            continue
        score = [d + v for d, v in zip(row.dirhams_after, row.visible_after, strict=True)]
        w = int(g.winners[0])
        deficit = max(s for i, s in enumerate(score) if i != w) - score[w]
        if best is None or (deficit, -row.game_id) > best:
            best = (deficit, -row.game_id)
        if deficit > 0:
            last_behind[row.game_id] = max(last_behind.get(row.game_id, -1), row.turn)
    assert best is not None and best[0] > 0  # the run has a comeback to find
    found = {n.kind: n for n in notable_games(run_dir)}["comeback"]
    assert found.game_id == -best[1]
    assert found.detail == f"the winner was {best[0]} points behind and won"
    assert found.turn == last_behind[found.game_id] + 2  # counted from 1, after the last


def test_replay_prints_a_turn_and_steps_by_key(run_dir: Path) -> None:
    """`replay RUN GAME --turn N` prints that position; without it, keys step through."""
    result = _run("replay", str(run_dir), "0", "--turn", "5", "--no-colour")
    assert result.exit_code == 0, result.output
    assert "after turn 5 of" in result.output and "turn 5: player 1" in result.output
    result = _run("replay", str(run_dir), "0", "--no-colour", input="n\nn\np\nG\nq\n")
    shown = re.findall(r"after turn (\d+) of", result.output)
    last = str(len(next(records_from_run(run_dir, [0])).turns))
    assert shown == ["0", "1", "2", "1", last]


def test_records_of_games_a_strategy_faulted_import(tmp_path: Path) -> None:
    """A game that a strategy's fault ended stops inside its last turn; its record says so
    (Result "*", Final the position inside that turn) and imports and replays to it, while
    a finished game's record with an unfinished last turn is still refused."""
    from conftest import EXAMPLES, play_run

    run = play_run(
        tmp_path / "run",
        {
            "seed": 3,
            "games_per_lineup": 4,
            "rotation": "none",
            "rulesets": {"four": {}},
            "strategies": {"random": {}, "bad": {"ref": f"{EXAMPLES / 'bad.py'}:Raises"}},
            "schedule": {"kind": "lineups", "lineups": [["random", "random", "random", "bad"]]},
        },
    )
    records = list(records_from_run(run))
    assert len(records) == 4 and all(r.result == "*" for r in records)
    text = format_records(records)
    back = read_records(text)  # replays each and checks Final against the actions
    assert [r.final.to_notation() for r in back] == [r.final for r in records]
    randoms = [StrategySpec.of("random").build() for _ in range(4)]
    finished = record_from_game(play_game(Rules(), randoms, 4), Rules(), ["random"] * 4)
    cut = format_records([finished]).rstrip().rsplit(" ", 1)[0]  # the last placement dropped
    with pytest.raises(RecordError, match="unfinished"):
        read_records(cut)
