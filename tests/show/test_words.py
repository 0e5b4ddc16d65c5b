"""The words on the pictures of a game: players from 1, plurals, bankruptcy, tie-breaks."""

from __future__ import annotations

import dataclasses
import io

import numpy as np
import pytest
from PIL import Image
from test_show import FIXED

from marrakech_sim.play.game import play_game
from marrakech_sim.play.strategy import StrategySpec
from marrakech_sim.record import Replay, TurnInfo, record_from_game, replay
from marrakech_sim.rules import GameState, Rules
from marrakech_sim.show import words
from marrakech_sim.show.animate import png_bytes, position_scene
from marrakech_sim.show.scene import MARGIN, SQUARE, Text
from marrakech_sim.show.terminal import replay_frame


def _random_game(rules: Rules, seed: int) -> Replay:
    names = ["random"] * rules.players
    players = [StrategySpec.of("random").build() for _ in names]
    game = play_game(rules, players, seed, names=names)
    return replay(record_from_game(game, rules, names, event="words"))


def _panel_text(done: Replay, turn: int) -> list[str]:
    return [s.text for s in position_scene(done, turn).shapes if isinstance(s, Text)]


@pytest.mark.parametrize(
    ("n", "word", "text"),
    [(0, "rug", "0 rugs"), (1, "rug", "1 rug"), (2, "rug", "2 rugs"), (1, "dirham", "1 dirham")],
)
def test_counts_agree_with_their_noun(n: int, word: str, text: str) -> None:
    """One of a thing is singular, any other number plural."""
    assert words.count(n, word) == text


def test_players_are_numbered_from_one() -> None:
    """Seat 0 is 'player 1'; several players are listed with 'and'."""
    assert words.player(0) == "player 1"
    assert words.players([1]) == "player 2"
    assert words.players([0, 2, 3]) == "players 1, 3 and 4"


def test_a_bankruptcy_says_who_could_not_pay_whom() -> None:
    """A bankrupt turn names the player who could not pay, the rug's owner, and what was paid,
    never 'paid 0 to seat None'."""
    after = GameState.from_notation(FIXED)  # square 5,2 shows b2: seat 1's rug
    broke = TurnInfo(13, 0, "r", 0, 2, (5, 2, "S"), 0, None, True, None, None)
    assert words.turn_lines(broke, after)[2] == (
        "player 1 cannot pay player 2 and is out: has no dirhams left"
    )
    some = TurnInfo(13, 0, "r", 0, 2, (5, 2, "S"), 3, 1, True, None, None)
    assert words.turn_lines(some, after)[2] == (
        "player 1 cannot pay player 2 and is out: pays what is left, 3 dirhams"
    )


def test_a_real_bankruptcy_is_told_in_words() -> None:
    """The picture of a real game's bankrupt turn (2 players: it ends the game) says who went
    out and who won, with no 'None' and no seat numbers from 0."""
    done = _random_game(Rules(players=2), 8)
    turn = next(t.turn for t in done.turns if t.bankrupt)
    text = " ".join(_panel_text(done, turn))
    assert "player 2 cannot pay player 1 and is out: pays what is left, 1 dirham" in text
    assert "game over: player 1 won, the last one in the game" in text
    assert "None" not in text and "seat" not in text


def test_a_tie_break_win_says_on_what() -> None:
    """A game the tie-break decided says so: the tied score, who tied, and the dirhams."""
    done = _random_game(Rules(players=4, rugs_per_colour=3), 10)
    outcome = done.final.outcome()
    assert outcome is not None and outcome.tie_broken
    line = words.outcome_line(done.final)
    assert line == (
        "game over: player 3 won on the tie-break: tied on 36 points with player 4, "
        "more dirhams (32 to 30)"
    )
    assert line in " ".join(replay_frame(done, len(done.turns), colour=False).splitlines())


def test_panel_text_fits_the_picture() -> None:
    """A long title and long strategy names are wrapped: in the PNG nothing is drawn in the
    last columns or rows, so no text runs off the picture."""
    done = _random_game(Rules(players=4, rugs_per_colour=3), 10)
    names = ("a-strategy-with-a-very-long-display-name", "b" * 50, "greedy", "random")
    done = Replay(dataclasses.replace(done.record, seats=names), done.positions, done.turns)
    for turn in (5, len(done.turns)):
        scene = position_scene(done, turn, "Decided by the tie-break: game 123456 " * 3)
        pixels = np.asarray(Image.open(io.BytesIO(png_bytes(scene))).convert("L"))
        assert (pixels[:, -6:] == 255).all() and (pixels[-6:, MARGIN + 7 * SQUARE :] == 255).all()
