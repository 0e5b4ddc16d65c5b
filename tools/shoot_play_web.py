"""Regenerate docs/img/play-web-*.png: the screenshots of `marrakech play --web` in docs/play.md.

    .venv/bin/python tools/shoot_play_web.py [--out docs/img]

A 2-player game against random (seed 5) is played by the session up to a rotation where
a walk costs, served on a free local port and opened in headless Chromium (Debian's, as
the browser tests use): pointing at that rotation (play-web-orient.png), the placement
after it with the pointer on a square (play-web-place.png), and a frame of the game
moving on after a choice, Assam's walk with the region to pay before it is paid
(play-web-moves.png), held 2.5 s on the page. Look at the pictures before committing them.
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from marrakech_sim.play.strategy import StrategySpec
from marrakech_sim.rules import Rules
from marrakech_sim.show.scene import MARGIN, SQUARE
from marrakech_sim.web.server import serve, start_in_thread, url_of
from marrakech_sim.web.session import WebGame

ROOT = Path(__file__).resolve().parent.parent
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]


def _move(view: dict[str, Any], pick: random.Random) -> dict[str, Any]:
    if view["phase"] == "orient":
        return {"rotation": pick.choice((-1, 0, 1))}
    return {"placement": pick.choice(view["placements"])}


def _paying(view: dict[str, Any]) -> str | None:
    """A rotation whose walk costs somewhere, or None."""
    walks = view.get("walks", {})
    return next((r for r, w in walks.items() if any(s["due"] for s in w["stops"])), None)


def _square(page: Any, x: int, y: int) -> tuple[float, float]:
    box = page.locator("#board svg").bounding_box()
    return box["x"] + MARGIN + (x + 0.5) * SQUARE, box["y"] + MARGIN + (y + 0.5) * SQUARE


def _costly(game: WebGame, pick: random.Random) -> dict[str, Any]:
    """The first choice from here on whose frames pay for a region (the game is left
    just before it)."""
    while True:
        view = game.view()
        moves = (
            [{"rotation": r} for r in (-1, 0, 1)]
            if view["phase"] == "orient"
            else [{"placement": p} for p in view["placements"]]
        )
        for move in moves:
            frames = game.choose(move)["steps"]
            game.undo()
            if any(f["overlay"].get("region") for f in frames):
                return move
        game.choose(pick.choice(moves))


def shoot(out: Path) -> list[Path]:
    """Write the three screenshots into `out`; their paths."""
    folder = Path(tempfile.mkdtemp(prefix="shoot-play-web-"))
    game = WebGame(
        Rules(players=2),
        [StrategySpec.of("random")],
        run_seed=5,
        out_dir=folder / "run",
        hint=StrategySpec.of("greedy"),
    )
    pick = random.Random(8)
    view = game.view()
    while not (len(game.decisions) >= 16 and view["phase"] == "orient" and _paying(view)):
        view = game.choose(_move(view, pick))
    rotation = _paying(view)
    button = {"-1": "#rot-left", "0": "#rot-straight", "1": "#rot-right"}[str(rotation)]
    server = serve(game, port=0)
    start_in_thread(server)
    url = url_of(server)
    shots = [out / f"play-web-{name}.png" for name in ("orient", "place", "moves")]
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=ARGS)
            page = browser.new_page(viewport={"width": 1250, "height": 820})
            page.goto(f"{url}?delay=0")
            page.wait_for_function("document.body.dataset.busy === '0'")
            page.hover(button)
            page.screenshot(path=str(shots[0]))
            page.click(button)
            page.wait_for_function("document.body.dataset.busy === '0'")
            placements = game.asked.options or ()
            square = placements[0][0]
            page.mouse.move(*_square(page, *square))
            page.screenshot(path=str(shots[1]))
            # a choice after which the game moves on through a payment: found by the
            # session (each try taken back), then clicked on a page that holds each frame
            move = _costly(game, pick)
            page.goto(f"{url}?delay=2500")  # time to take the picture of the frame
            page.wait_for_function("document.body.dataset.busy === '0'")
            if "rotation" in move:
                page.click({-1: "#rot-left", 0: "#rot-straight", 1: "#rot-right"}[move["rotation"]])
            else:
                for square in move["placement"]:
                    page.mouse.click(*_square(page, *square))
            page.wait_for_function(
                "document.getElementById('caption').textContent.includes('for a region of')",
                timeout=120_000,
            )
            page.screenshot(path=str(shots[2]))
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
        shutil.rmtree(folder, ignore_errors=True)
    return shots


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    for path in shoot(parser.parse_args().out):
        print(f"wrote {path}")
