"""Pictures of games: the board as PNG/SVG, the terminal board, the GIF, the HTML page."""

from __future__ import annotations

import io
import itertools
import os
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from conftest import GOLDEN
from PIL import Image

from marrakech_sim.play.game import play_game
from marrakech_sim.play.strategy import StrategySpec
from marrakech_sim.record import TurnInfo, record_from_game, replay
from marrakech_sim.rules import GameState, Rules
from marrakech_sim.show.animate import png_bytes, write_gif
from marrakech_sim.show.page import write_page
from marrakech_sim.show.palette import COLOURS
from marrakech_sim.show.scene import board_scene, edge_arcs, to_svg
from marrakech_sim.show.terminal import board_text, step_through
from marrakech_sim.show.words import Legend

BOARD = GOLDEN / "board.png"
FIXED = (
    "..r3..../.b1r3p3p3y3y3/y1y1...b2p1/.p2p2y2y2b2p1/.....r2./.....r2./....... "
    "40S r:32:9,b:30:9,y:26:9,p:32:9 0o"
)
TOLERANCE = 2.0  # mean absolute difference per channel (0-255): font hinting, not drawing


def fixed_scene():  # type: ignore[no-untyped-def]
    """The scene of the fixed position, with a turn described in the panel."""
    state = GameState.from_notation(FIXED)
    info = TurnInfo(12, 3, "p", 1, 3, (4, 0, "S"), 2, 0, False, ((4, 1), (3, 1)), None)
    names = ("greedy", "random", "expectimax", "you")
    legend = Legend(names=names, info=info, turn=12, turns=48, title="a fixed position")
    return board_scene(state, legend)


def _pixels(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"), dtype=np.int16)


def test_board_picture_matches_the_stored_image() -> None:
    """The PNG of a fixed position equals tests/golden/board.png within TOLERANCE
    (tools/regen_board_golden.py rewrites it)."""
    made, stored = _pixels(png_bytes(fixed_scene())), _pixels(BOARD.read_bytes())
    assert made.shape == stored.shape
    assert float(np.abs(made - stored).mean()) < TOLERANCE


def test_svg_marks_each_rug_half_and_assam() -> None:
    """The SVG has one element per visible rug half (its square, token and palette colour)
    and Assam with his facing, matching the engine's position."""
    state = GameState.from_notation(FIXED)
    root = ET.fromstring(to_svg(board_scene(state)).split("?>", 1)[1])
    halves = {
        e.get("data-square"): (e.get("data-token"), e.get("fill"))
        for e in root.iter()
        if e.get("data-square")
    }
    expected = {
        f"{x},{y}": (f"{h[0]}{h[1]}", COLOURS[h[0]])
        for y in range(7)
        for x in range(7)
        if (h := state.square(x, y))
    }
    assert halves == expected
    assert [e.get("data-assam") for e in root.iter() if e.get("data-assam")] == ["4,0,S"]


def test_rug_colours_stay_apart_with_colour_blindness() -> None:
    """The four standard rug colours differ in lightness (CIE L* at least 15 apart) and stay
    apart under simulated protanopia, deuteranopia and tritanopia (CIEDE2000 at least 15)."""
    from coloraide import Color

    rugs = [Color(COLOURS[letter]) for letter in "rbyp"]
    for a, b in itertools.combinations(rugs, 2):
        assert abs(a.convert("lab-d65")["lightness"] - b.convert("lab-d65")["lightness"]) >= 15
        for kind in ("protan", "deutan", "tritan"):
            seen_a, seen_b = a.clone().filter(kind), b.clone().filter(kind)
            assert seen_a.delta_e(seen_b, method="2000") >= 15, (a, b, kind)


@pytest.mark.parametrize(("size", "arcs"), [(5, 10), (7, 14), (9, 18)])
def test_edge_arcs_follow_the_mosaic(size: int, arcs: int) -> None:
    """Each edge has (n - 1) / 2 U-arcs, and two corners a three-quarter arc."""
    found = edge_arcs(size)
    assert len(found) == arcs
    assert sum(1 for a in found if a.a1 - a.a0 == 270) == 2


def test_terminal_board_shows_seams_between_rugs() -> None:
    """Two halves of one rug are joined; two different rugs side by side show a seam."""
    state = GameState.from_notation(FIXED)
    lines = board_text(state, colour=False)
    row1 = next(line for line in lines if line.startswith(" 1 "))
    assert " p3   p3 │ y3   y3 " in row1  # p3 joined, seam, y3 joined
    assert "│ b1 │ r3 │" in row1  # r3's other half is above: seams left and right
    coloured = "".join(board_text(state, colour=True))
    assert "\x1b[48;2;204;51;17" in coloured  # r in the palette's red (#CC3311)


def _tiny_game() -> tuple[Rules, object]:
    rules = Rules(players=2, rugs_per_colour=2)
    players = [StrategySpec.of("random").build(), StrategySpec.of("greedy").build()]
    game = play_game(rules, players, 7, names=["random", "greedy"])
    return rules, replay(record_from_game(game, rules, ["random", "greedy"], event="tiny"))


def test_gif_has_a_frame_per_position(tmp_path: Path) -> None:
    """The GIF has one frame per position of the game and holds the last one longer."""
    _, done = _tiny_game()
    path = write_gif(done, tmp_path / "game.gif")  # type: ignore[arg-type]
    with Image.open(path) as gif:
        # Pillow merges the repeated last frame into one longer frame
        assert gif.n_frames == len(done.positions)  # type: ignore[attr-defined]
        first = gif.info["duration"]
        gif.seek(gif.n_frames - 1)
        assert gif.info["duration"] > first


def test_step_through_moves_by_key() -> None:
    """Keys move forwards and backwards and stop at both ends; q quits."""
    _, done = _tiny_game()
    keys = iter(["p", "n", "\x1b[C", "\x1b[D", "G", "n", "q"])
    shown: list[str] = []
    last = step_through(done, lambda: next(keys), shown.append, colour=False)  # type: ignore[arg-type]
    turns = [int(s.split("after turn ")[1].split()[0]) for s in shown]
    end = len(done.positions) - 1  # type: ignore[attr-defined]
    assert turns == [0, 0, 1, 2, 1, end, end] and last == end


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def test_page_steps_through_the_game_in_chromium(tmp_path: Path) -> None:
    """Headless Chromium loads the page; arrow keys, buttons and the slider show the
    board of the engine's position at that turn."""
    browser = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        browser = None
    if browser is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs chromium and playwright (.ci/run installs them)")
        pytest.skip("needs Debian's chromium and the playwright package")
    _, done = _tiny_game()
    page_file = write_page(done, tmp_path / "game.html")  # type: ignore[arg-type]
    text = page_file.read_text()
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in text and "<script src" not in text

    def board(page) -> tuple[dict[str, str], str]:  # type: ignore[no-untyped-def]
        halves = page.eval_on_selector_all(
            "#board [data-square]", "els => els.map(e => [e.dataset.square, e.dataset.token])"
        )
        assam = page.eval_on_selector("#board [data-assam]", "e => e.dataset.assam")
        return dict(halves), assam

    def engine(turn: int) -> tuple[dict[str, str], str]:
        state = done.positions[turn]  # type: ignore[attr-defined]
        n = state.rules.board_size
        halves = {
            f"{x},{y}": f"{h[0]}{h[1]}"
            for y in range(n)
            for x in range(n)
            if (h := state.square(x, y))
        }
        x, y, f = state.assam
        return halves, f"{x},{y},{f}"

    with sync_playwright() as p:
        chrome = p.chromium.launch(executable_path=browser, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = chrome.new_page()
            page.goto(page_file.as_uri())
            assert board(page) == engine(0)
            for _ in range(3):
                page.keyboard.press("ArrowRight")
            assert page.evaluate("document.body.dataset.turn") == "3"
            assert board(page) == engine(3)
            page.keyboard.press("ArrowLeft")
            assert board(page) == engine(2)
            page.click("#next")
            page.click("#next")
            assert board(page) == engine(4)
            last = len(done.positions) - 1  # type: ignore[attr-defined]
            page.fill("#turn", str(last))
            page.dispatch_event("#turn", "input")
            assert board(page) == engine(last)
            page.keyboard.press("End")
            page.keyboard.press("ArrowRight")  # stays on the last turn
            assert page.evaluate("document.body.dataset.turn") == str(last)
            current = page.eval_on_selector("#moves li.current", "e => e.dataset.turn")
            assert current == str(last)
        finally:
            chrome.close()
