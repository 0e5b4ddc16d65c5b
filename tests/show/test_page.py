"""The replay page's move list: every action of every turn, turn numbers as in the pictures."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest

from marrakech_sim.play.game import play_game
from marrakech_sim.play.strategy import StrategySpec
from marrakech_sim.record import Replay, record_from_game, replay
from marrakech_sim.rules import Rules
from marrakech_sim.show.page import page_html


def _game(rules: Rules, seed: int) -> Replay:
    players = [StrategySpec.of("random").build() for _ in range(rules.players)]
    names = [f"random{i}" for i in range(rules.players)]
    game = play_game(rules, players, seed, names=names)
    return replay(record_from_game(game, rules, names, event="page"))


def _moves(html: str) -> list[tuple[int, str]]:
    items = re.findall(r'<li data-turn="(\d+)">(.*?)</li>', html)
    return [(int(turn), unescape(re.sub(r"<[^>]+>", "", text))) for turn, text in items]


def _frames(html: str) -> list[str]:
    data = re.search(r'<script id="frames" type="application/json">(.*?)</script>', html, re.S)
    assert data is not None
    return [unescape(f) for f in json.loads(data.group(1).replace("<\\/", "</"))]


@pytest.mark.parametrize(
    "rules",
    [Rules(), Rules(players=2), Rules(players=3, orient_at_end=True)],
    ids=["4 players", "2 players", "orient at end"],
)
def test_each_turn_lists_every_action_in_order(rules: Rules) -> None:
    """A turn's line names its rotation, roll, payment and placement in the order played,
    also when it has a payment (the placement after it is not dropped)."""
    done = _game(rules, 12)
    moves = _moves(page_html(done))
    assert len(moves) == len(done.turns)
    paid = 0
    for (number, text), info in zip(moves, done.turns, strict=True):
        words = [f"rolls {info.roll} "]
        if info.payment:
            words.append(f"pays {info.payment} to player {info.paid_to + 1}")
            paid += 1
        if info.placement is not None:
            (x1, y1), (x2, y2) = info.placement
            words.append(f"places {info.colour} on {x1},{y1}-{x2},{y2}")
        if info.end_rotation is not None:
            words.append("for the next player")
        where = [text.find(w) for w in words]
        assert -1 not in where and where == sorted(where), (text, words)
        assert text.startswith(f"{number}. player {info.seat + 1} ")
    assert paid > 0  # the case the page used to cut short was played


def test_turn_numbers_agree_between_the_list_and_the_pictures() -> None:
    """Picture t says "after turn t" and describes turn t, the list's line t is that turn:
    both count from 1, the start is picture 0."""
    done = _game(Rules(players=2), 3)
    html = page_html(done)
    frames = _frames(html)
    moves = _moves(html)
    assert len(frames) == len(moves) + 1 and "start of the game" in frames[0]
    total = len(done.turns)
    for t in range(1, len(frames)):
        number, text = moves[t - 1]
        seat = done.turns[t - 1].seat
        # both say "player 1" for seat 0 (show/words.py)
        assert number == t and text.startswith(f"{t}. player {seat + 1} ")
        assert f"after turn {t} of {total}" in frames[t]
        assert f"turn {t}: player {seat + 1} " in frames[t]
