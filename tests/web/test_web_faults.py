"""`play --web` with plug-in opponents that fail, through the real HTTP server.

Each opponent plays in a process of its own (`run.isolated`): whatever it does (raise,
KeyboardInterrupt or SystemExit included, os._exit, a segfault, sleep past its time,
answer garbage), the game ends as its fault, the turns played are saved as a record that
replays, the page's view says why, and the same server goes on to serve a new game.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from marrakech_sim.play.strategy import StrategySpec
from marrakech_sim.record import parse_records, replay
from marrakech_sim.rules import Rules
from marrakech_sim.web.server import Games, serve, start_in_thread, url_of
from marrakech_sim.web.session import WebGame

BAD = Path(__file__).resolve().parents[1] / "strategies_examples" / "bad.py"
RULES = Rules(players=2, rugs_per_colour=3)
BUDGETS = [None, 3.0]  # the opponent's time per decision: a sleeper is stopped in 4 s


def _call(url: str, route: str, data: Any = None) -> tuple[int, dict[str, Any]]:
    body = None if data is None else json.dumps(data).encode()
    method = "GET" if route in ("api/state", "api/hint") else "POST"
    request = urllib.request.Request(url + route, data=body, method=method)
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


def _move(view: dict[str, Any]) -> dict[str, Any]:
    if view["phase"] == "orient":
        return {"rotation": 0}
    return {"placement": view["placements"][0]}


@pytest.fixture
def serving(tmp_path: Path) -> Iterator[Any]:
    """serve(opponent, hint=...) -> (games, url): a 2-player game against `opponent` on
    a free port, served from a thread; stopped at the end."""
    servers = []

    def start(opponent: str, hint: str = "greedy") -> tuple[Games, str]:
        game = WebGame(
            RULES,
            [StrategySpec.of(opponent)],
            run_seed=5,
            out_dir=tmp_path / "run",
            hint=StrategySpec.of(hint),
            budgets=BUDGETS,
        )
        games = Games(game)
        server = serve(games, port=0)
        start_in_thread(server)
        servers.append(server)
        return games, url_of(server)

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("Raises", "raised RuntimeError('boom in choose_placement')"),
        ("InterruptsItself", "raised KeyboardInterrupt()"),
        ("Exits", "raised SystemExit(3)"),
        ("HardExits", "its process ended (exit code 1)"),
        ("Segfaults", "its process ended (killed by SIGSEGV)"),
        ("KillsItself", "its process ended (killed by SIGKILL)"),
        ("Sleeps", "gave no answer within 4 s"),
        ("Garbage", "chose ['not', {'a': 'placement'}], not one of the legal options"),
        ("NoneRotation", "chose None, not one of the legal options"),
    ],
)
def test_an_opponent_fault_ends_only_its_game_and_the_server_serves_a_new_one(
    serving: Any, name: str, why: str
) -> None:
    """Played by HTTP requests until the opponent fails: the answer is the view of a game
    over, saying why; unfinished.txt holds the turns played and replays; moves are then
    refused; a new game is served on the same server, in a folder of its own."""
    games, url = serving(f"{BAD}:{name}")
    status, view = _call(url, "api/state")
    moves = 0
    while status == 200 and view["phase"] != "over" and moves < 10:
        status, view = _call(url, "api/choose", _move(view))
        moves += 1
    assert status == 200, view
    assert view["phase"] == "over" and why in view["fault"], view.get("fault")
    assert view["prompt"].startswith("Game over: it ended in a fault.")
    first = games.current
    saved = first.out_dir / "unfinished.txt"
    assert view["saved"] == {"run": None, "record": str(saved)}
    record = parse_records(saved.read_text())[0]
    assert record.seats == ("you", f"{BAD}:{name}") and record.result == "*"
    played = replay(record)  # the turns played are legal moves of this game
    assert played.final.to_notation() == view["position"]
    assert len(record.turns) >= 1  # the person's first turn at least
    status, refused = _call(url, "api/choose", {"rotation": 0})
    assert status == 400 and "the game is over" in refused["error"]
    status, refused = _call(url, "api/undo")
    assert status == 400 and "nothing to undo" in refused["error"]
    status, again = _call(url, "api/new")
    assert status == 200, again
    assert games.current is not first and len(games.played) == 2
    assert games.current.out_dir == Path(f"{first.out_dir}-2")
    status, state = _call(url, "api/state")
    assert status == 200 and state["names"] == view["names"]
    assert state["phase"] == "over" or state["decisions"] == 0
    assert not _forks(), "an opponent's process outlived its request"


def _forks() -> list[int]:
    """This process's children forked from it (the opponents' processes), not others'."""
    me = Path("/proc/self/cmdline").read_bytes()
    found = []
    for proc in Path("/proc").iterdir():
        try:
            parent = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if parent == os.getpid() and (proc / "cmdline").read_bytes() == me:
                found.append(int(proc.name))
        except (OSError, IndexError, ValueError):
            continue
    return found


def test_a_new_game_is_refused_while_one_is_played(serving: Any) -> None:
    games, url = serving("random")
    status, refused = _call(url, "api/new")
    assert status == 400 and "finish this game first" in refused["error"]
    assert len(games.played) == 1


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("HardExits", "its process ended (exit code 1)"),
        ("Segfaults", "its process ended (killed by SIGSEGV)"),
        ("InterruptsItself", "KeyboardInterrupt()"),
        ("Sleeps", "its process gave no answer within 4 s"),
    ],
)
def test_a_failing_hint_strategy_gives_no_hint_and_the_game_goes_on(
    serving: Any, name: str, why: str
) -> None:
    """The hint strategy plays in a process of its own too: its fault is refused as no
    hint, and the person's game goes on to the end."""
    games, url = serving("random", hint=f"{BAD}:{name}")
    status, view = _call(url, "api/state")
    status, view = _call(url, "api/choose", {"rotation": 0})
    assert view["phase"] == "place"
    status, answer = _call(url, "api/hint")
    assert status == 400, answer
    assert answer["error"].startswith(f"no hint: the hint strategy ({BAD}:{name}) raised ")
    assert why in answer["error"] and answer["error"].endswith("(your game goes on)")
    while view["phase"] != "over":
        status, view = _call(url, "api/choose", _move(view))
        assert status == 200, view
    assert view["fault"] is None and view["result"] != "*"
    assert parse_records((games.current.out_dir / "game.txt").read_text())


def test_the_play_web_command_survives_an_opponent_that_exits(tmp_path: Path) -> None:
    """The real command (its server in the main thread, as a person runs it): an opponent
    calling os._exit ends the game, the server answers a new game, and on Ctrl-C the
    command names the fault and where its turns are."""
    import re
    import signal
    import subprocess
    import sys

    out = tmp_path / "run"
    command = [sys.executable, "-c", "from marrakech_sim.cli import main; main()", "play"]
    command += ["--web", "--vs", f"{BAD}:HardExits", "--port", "0", "--seed", "4"]
    server = subprocess.Popen(
        [*command, "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        # Ctrl-C as in a terminal (a background job of a shell starts with it ignored)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert found, line
        url = found.group(0)
        status, view = _call(url, "api/state")
        while status == 200 and view["phase"] != "over":
            status, view = _call(url, "api/choose", _move(view))
        assert status == 200 and "its process ended (exit code 1)" in view["fault"], view
        assert parse_records((out / "unfinished.txt").read_text())
        status, again = _call(url, "api/new")
        assert status == 200 and again["phase"] == "orient", again
        server.send_signal(signal.SIGINT)
        said = server.communicate(timeout=60)[0]
    finally:
        server.kill()
    assert "Traceback" not in said, said
    assert f"{out}: " in said and "its process ended (exit code 1)" in said
