"""Plug-in opponents of `play` in processes of their own (run.isolated)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from marrakech_sim.cli import main
from marrakech_sim.human import QuitGame, game_seed, play_person
from marrakech_sim.play.game import play_game
from marrakech_sim.play.strategy import StrategySpec
from marrakech_sim.record import parse_records
from marrakech_sim.rules import Rules
from marrakech_sim.run.isolated import IsolatedStrategy, isolated

HERE = Path(__file__).resolve()
BAD = HERE.parents[1] / "strategies_examples" / "bad.py"
PYTHON_RANDOM = f"{HERE.parent / 'test_runner.py'}:PythonRandom"
RULES = Rules(players=2, rugs_per_colour=3)


def test_an_isolated_strategy_plays_the_same_games_as_in_this_process() -> None:
    """The child keeps the seat's view and random stream: same moves, same result."""
    rules = Rules(players=3)
    spec = StrategySpec.of(PYTHON_RANDOM)
    for seed in (1, 2, 3):
        here = play_game(rules, [spec.build(), spec.build(), spec.build()], seed)
        there = [isolated(spec), spec.build(), isolated(spec)]
        assert isinstance(there[0], IsolatedStrategy)
        away = play_game(rules, there, seed)
        assert (away.moves == here.moves).all() and away.winners == here.winners


def test_a_built_in_strategy_plays_in_this_process() -> None:
    assert not isinstance(isolated(StrategySpec.of("greedy")), IsolatedStrategy)


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("HardExits", "exit code 1"),
        ("Segfaults", "killed by SIGSEGV"),
        ("KillsItself", "killed by SIGKILL"),
    ],
)
def test_an_opponent_that_ends_its_process_ends_the_game_keeping_the_turns(
    name: str, words: str
) -> None:
    """os._exit, a segfault or a SIGKILL in an opponent: play goes on to say why, and the
    person's turns come back as a record (play ended silently with exit code 1 before)."""
    feed = iter(["1", "2"] * 40)
    with pytest.raises(QuitGame, match=f"its process ended \\({words}\\)") as info:
        play_person(
            RULES,
            [StrategySpec.of(f"{BAD}:{name}")],
            read=lambda prompt: next(feed, "q"),
            show=lambda text: None,
            seed=game_seed(3),
        )
    assert info.value.record is not None and len(info.value.record.turns) >= 1


def test_play_command_with_an_opponent_that_exits_saves_the_turns(tmp_path: Path) -> None:
    """`marrakech play --vs FILE:Class` whose opponent calls os._exit: the command says
    why the game ended and where the turns played are."""
    out = tmp_path / "game"
    result = CliRunner().invoke(
        main,
        ["play", "--vs", f"{BAD}:HardExits", "--seed", "4", "--out", str(out), "--no-colour"],
        input="\n".join(["1", "2"] * 40) + "\n",
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "its process ended (exit code 1)" in result.output
    saved = parse_records((out / "unfinished.txt").read_text())
    assert saved and len(saved[0].turns) >= 1


def test_a_sleeping_opponent_outside_the_main_thread_is_stopped() -> None:
    """Where no decision watchdog runs (another thread), the wait for the child's answer
    is bounded: the decision raises, and the child is killed."""
    import threading

    strategy = isolated(StrategySpec.of(f"{BAD}:Sleeps"), 0.2)
    box: dict[str, BaseException] = {}

    def play() -> None:
        try:
            play_game(RULES, [strategy, StrategySpec.of("random").build()], 7)
        except BaseException as exc:  # play_game makes a fault of it; nothing escapes
            box["error"] = exc

    started = time.monotonic()
    thread = threading.Thread(target=play)
    thread.start()
    thread.join(30)
    assert not thread.is_alive() and not box
    assert time.monotonic() - started < 10
    assert not strategy.process.is_alive()
    with pytest.raises(ProcessLookupError):
        os.kill(strategy.process.pid, 0)
