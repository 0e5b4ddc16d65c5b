"""`marrakech play --web` in a real browser: headless Chromium (Debian's) driven by Playwright.

The game is served from this process on a free port; the page is clicked as a person
would click it. `.ci/run` installs chromium when it is missing; without it (or without
the playwright package) these tests are skipped with the reason. Screenshots are kept in
`.tmp/play-*.png` for the developer to look at.
"""

from __future__ import annotations

import itertools
import random
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import ROOT

from marrakech_sim.cli import main
from marrakech_sim.play.strategy import StrategySpec
from marrakech_sim.rules import Rules
from marrakech_sim.show.scene import MARGIN, SQUARE
from marrakech_sim.web.server import serve, start_in_thread, url_of
from marrakech_sim.web.session import WebGame

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SHOTS = ROOT / ".tmp"

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on PATH (.ci/run installs it)"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the module's pages."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[WebGame, str]]:
    """A 2-player game against `random`, served on a free local port: (game, url)."""
    game = WebGame(
        Rules(players=2),
        [StrategySpec.of("random")],
        run_seed=5,
        out_dir=tmp_path / "run",
        hint=StrategySpec.of("greedy"),
    )
    server = serve(game, port=0)
    start_in_thread(server)
    yield game, url_of(server)
    server.shutdown()
    server.server_close()


def _open(browser: Any, url: str, delay: int = 0) -> tuple[Any, list[str], list[str]]:
    page = browser.new_page(viewport={"width": 1250, "height": 820})
    errors: list[str] = []
    requests: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    # a refused move is answered 400, which the browser notes as a failed load
    page.on(
        "console",
        lambda m: (
            errors.append(m.text) if m.type == "error" and "status of 400" not in m.text else None
        ),
    )
    page.on("request", lambda r: requests.append(r.url))
    page.goto(f"{url}?delay={delay}", wait_until="load")
    _settle(page)
    return page, errors, requests


def _settle(page: Any) -> None:
    page.wait_for_function("document.body.dataset.busy === '0'")


def _click_square(page: Any, x: float, y: float) -> None:
    box = page.locator("#board svg").bounding_box()
    page.mouse.click(box["x"] + MARGIN + (x + 0.5) * SQUARE, box["y"] + MARGIN + (y + 0.5) * SQUARE)


def _hover_square(page: Any, x: float, y: float) -> None:
    box = page.locator("#board svg").bounding_box()
    page.mouse.move(box["x"] + MARGIN + (x + 0.5) * SQUARE, box["y"] + MARGIN + (y + 0.5) * SQUARE)


def _marks(page: Any) -> dict[str, str]:
    return dict(page.evaluate("() => Object.assign({}, document.body.dataset)"))


def test_a_whole_game_by_clicks_is_saved_and_replays(
    browser: Any, served: tuple[WebGame, str]
) -> None:
    """A whole game against random, played by clicking rotation buttons and squares,
    ends with its record saved, and `marrakech import` replays that record; after the
    end every click is refused and changes nothing."""
    game, url = served
    page, errors, requests = _open(browser, url)
    pick = random.Random(3)
    clicks = 0
    while _marks(page)["phase"] != "over":
        assert _marks(page)["position"] == game.asked.state.to_notation()
        if game.phase == "orient":
            page.click(f"#rot-{pick.choice(('left', 'straight', 'right'))}")
        else:
            first, second = pick.choice(game.asked.options)  # type: ignore[arg-type]
            _click_square(page, *first)
            _click_square(page, *second)
        clicks += 1
        _settle(page)
    assert clicks == len(game.decisions) >= 40
    assert game.record is not None
    saved = Path(game.out_dir) / "game.txt"
    assert str(saved) in page.inner_text("#result") and game.record.result in page.inner_text(
        "#result"
    )
    out = CliRunner().invoke(main, ["import", str(saved)])
    assert out.exit_code == 0 and "1 records, all replayed" in out.output, out.output
    record = saved.read_text()
    for number, (click, words) in enumerate(
        [
            (lambda: _click_square(page, 3, 3), "the game is over: no more moves"),
            (lambda: page.click("#rot-left"), "the game is over: no more moves"),
            (lambda: page.click("#undo"), "the game is over and saved: nothing to undo"),
            (lambda: page.click("#hint"), "the game is over: no hints"),
        ],
        start=1,
    ):
        click()
        _settle(page)
        assert words in page.inner_text("#message") and _marks(page)["refusals"] == str(number)
        assert _marks(page)["phase"] == "over" and saved.read_text() == record
    assert errors == []
    assert all(r.startswith(url) for r in requests), requests  # nothing from the network
    page.close()


def test_every_click_that_is_not_a_legal_move_is_refused(
    browser: Any, served: tuple[WebGame, str]
) -> None:
    """Clicks that are no legal move (the board while a rotation is asked, squares no
    legal placement covers, a non-matching second square, a rotation while a placement
    is asked, undo with nothing to undo) each show a message and change nothing."""
    game, url = served
    page, errors, _ = _open(browser, url)
    refusals = 0

    def refused(click: Any, words: str) -> None:
        nonlocal refusals
        before = (_marks(page)["position"], _marks(page)["decisions"], list(game.decisions))
        click()
        _settle(page)
        refusals += 1
        marks = _marks(page)
        assert marks["refusals"] == str(refusals)
        assert words in page.inner_text("#message")
        assert (marks["position"], marks["decisions"], list(game.decisions)) == before

    refused(lambda: page.click("#undo"), "nothing to undo yet")
    for x, y in ((0, 0), (3, 3), (6, 2)):
        refused(lambda x=x, y=y: _click_square(page, x, y), "choose a rotation first")
    page.click("#rot-straight")
    _settle(page)
    assert _marks(page)["phase"] == "place"
    options = game.asked.options
    assert options
    legal = {q for p in options for q in p}
    n = game.rules.board_size
    for x in range(n):
        for y in range(n):
            if (x, y) not in legal:
                refused(lambda x=x, y=y: _click_square(page, x, y), "no legal placement covers")
    refused(lambda: _click_square(page, n + 2, 1), "not a square of the board")
    refused(lambda: page.click("#rot-left"), "a placement is asked for now")
    first = options[0][0]
    partners = {p[1] if p[0] == first else p[0] for p in options if first in p}
    stranger = next(q for q in sorted(legal) if q != first and q not in partners)
    _click_square(page, *first)
    refused(lambda: _click_square(page, *stranger), "is not a legal placement")
    _click_square(page, *first)  # let it go
    assert "let go" in page.inner_text("#message")
    a, b = options[-1]
    _click_square(page, *a)
    _click_square(page, *b)
    _settle(page)
    assert _marks(page)["decisions"] == "2" and game.decisions[-1] == (a, b)
    assert errors == []
    page.close()


def test_walks_placements_hints_and_undo_on_the_page(
    browser: Any, served: tuple[WebGame, str]
) -> None:
    """Mid-game, pointing at a rotation draws Assam's walk with a stop per die face and
    the regions a stop would pay for; pointing at a square outlines each legal placement
    through it; a hint and undo work by click."""
    game, url = served
    pick = random.Random(8)
    view = game.view()
    paying = None
    while paying is None or len(game.decisions) < 16:
        move = game.hint()["move"]
        if game.phase == "orient":
            move = {"rotation": pick.choice((-1, 0, 1))}
        view = game.choose(move)
        if view["phase"] == "orient" and len(game.decisions) >= 16:
            paying = next(
                (r for r, w in view["walks"].items() if any(s["due"] for s in w["stops"])), None
            )
    page, errors, _ = _open(browser, url, delay=50)
    SHOTS.mkdir(exist_ok=True)
    assert page.locator("#events li").count() == 0  # reopened mid-game: nothing replayed
    assert "your rug this turn is" in page.inner_text("#prompt")
    # one numbering on the whole page, the board's: players from 1, never "seat 0"
    assert page.inner_text("#prompt").startswith("You are player 1,")
    assert "player 1: you" in page.inner_text("#board") and "player 2: random" in page.inner_text(
        "#board"
    )
    assert not re.search(r"\bseat \d", page.inner_text("body"))
    button = {"-1": "#rot-left", "0": "#rot-straight", "1": "#rot-right"}[paying]
    page.hover(button)
    stops = view["walks"][paying]["stops"]
    assert page.locator("#overlay polyline.walk").count() == 1
    assert page.locator("#overlay circle.stop").count() == len(stops)
    regions = sum(len(s["region"]) for s in stops)
    assert page.locator("#overlay rect.pays").count() == regions > 0
    page.screenshot(path=str(SHOTS / "play-orient.png"))
    page.click("#hint")
    _settle(page)
    assert "hint (greedy): " in page.inner_text("#message")
    page.click(button)
    _settle(page)
    assert page.locator("#events li").count() >= 2  # the walk, and the roll
    options = game.asked.options
    assert options
    square = options[0][0]
    through = [p for p in options if square in p]
    _hover_square(page, *square)
    assert page.locator("#overlay rect.preview").count() == len(through)
    page.screenshot(path=str(SHOTS / "play-place.png"))
    decisions = len(game.decisions)
    page.click("#undo")
    _settle(page)
    assert _marks(page)["phase"] == "orient" and len(game.decisions) == decisions - 1
    assert errors == []
    page.close()


def _board(page: Any) -> dict[str, Any]:
    """What the board view shows: the position, the SVG's size, each rug half and Assam,
    each seat's dirhams, and the board's style rules."""
    return dict(
        page.evaluate(
            """() => {
          const svg = document.querySelector('#board svg');
          const all = (sel, f) => Array.from(svg.querySelectorAll(sel)).map(f).sort();
          const rules = Array.from(document.styleSheets[0].cssRules)
            .map(r => r.cssText).filter(t => t.startsWith('#board'));
          return {
            position: svg.dataset.position,
            size: [svg.getAttribute('width'), svg.getAttribute('height'),
                   svg.getAttribute('viewBox')],
            halves: all('[data-square]', e => e.dataset.square + '=' + e.dataset.token),
            assam: all('[data-assam]', e => e.dataset.assam),
            seats: all('[data-seat]', e => e.dataset.seat + ':' + e.dataset.dirhams),
            style: rules,
          };
        }"""
        )
    )


def test_the_play_page_and_the_replay_page_share_one_board_view(
    browser: Any, served: tuple[WebGame, str], tmp_path: Path
) -> None:
    """The finished game on the play page and the last position of `marrakech replay
    --html` of its saved record draw the same board: the same position, size, rug
    halves, Assam, seats' dirhams and board style."""
    game, url = served
    pick = random.Random(6)
    view = game.view()
    while view["phase"] != "over":
        move = (
            {"rotation": pick.choice((-1, 0, 1))}
            if view["phase"] == "orient"
            else {"placement": pick.choice(view["placements"])}
        )
        view = game.choose(move)
    page, errors, _ = _open(browser, url)
    played = _board(page)
    html = tmp_path / "replay.html"
    out = CliRunner().invoke(
        main, ["replay", str(Path(game.out_dir) / "game.txt"), "--html", str(html)]
    )
    assert out.exit_code == 0, out.output
    replayed_page = browser.new_page(viewport={"width": 1250, "height": 820})
    replayed_page.goto(html.as_uri(), wait_until="load")
    replayed_page.keyboard.press("End")
    replayed = _board(replayed_page)
    assert played["position"] == game.asked.state.to_notation()
    assert played == replayed
    assert len(played["halves"]) > 10 and played["style"] and None not in played["size"]
    assert len(played["assam"]) == 1 and len(played["seats"]) == game.rules.players
    assert errors == []
    page.close()
    replayed_page.close()


_WATCH = """() => {
  window.seen = [];
  const caption = document.getElementById('caption');
  new MutationObserver(() => {
    if (!caption.textContent) { return; }
    window.seen.push({caption: caption.textContent, t: performance.now(),
                      pays: document.querySelectorAll('#overlay rect.pays').length,
                      walk: document.querySelectorAll('#overlay polyline.walk').length,
                      drawn: document.getElementById('drawn').style.display});
  }).observe(caption, {childList: true, characterData: true, subtree: true});
  window.walked = [];  // the squares the walk's marker steps on, in order
  new MutationObserver((changes) => changes.forEach((c) => {
    if (c.target.classList.contains('walker')) { window.walked.push(c.target.dataset.square); }
  })).observe(document.getElementById('board'),
              {attributes: true, attributeFilter: ['data-square'], subtree: true});
}"""


def test_the_game_moves_on_in_timed_frames_with_the_region_before_it_is_paid(
    browser: Any, served: tuple[WebGame, str]
) -> None:
    """After a choice the page shows each action up to the next choice as a frame of its
    own, in order, at the page's pace: a roll's frame walks a marker along Assam's path;
    a roll that costs draws the region paid for before the frame of the payment; a click
    meanwhile is refused and changes nothing."""
    game, url = served
    pick = random.Random(11)
    while True:  # a choice whose frames pay for a region, found here and taken back
        view = game.view()
        move = (
            {"rotation": pick.choice((-1, 0, 1))}
            if view["phase"] == "orient"
            else {"placement": pick.choice(view["placements"])}
        )
        frames = game.choose(move)["steps"]
        if any(f["overlay"].get("region") for f in frames) and len(frames) >= 4:
            game.undo()
            break
    delay = 400
    page, errors, _ = _open(browser, url, delay=delay)
    decisions = _marks(page)["decisions"]
    page.evaluate(_WATCH)
    if "rotation" in move:
        page.click({-1: "#rot-left", 0: "#rot-straight", 1: "#rot-right"}[move["rotation"]])
    else:
        _click_square(page, *move["placement"][0])
        _click_square(page, *move["placement"][1])
    page.wait_for_function("window.seen.length >= 1")
    _click_square(page, 0, 0)  # while the frames play
    assert "wait: the other seats are still moving" in page.inner_text("#message")
    assert _marks(page)["refusals"] == "1"
    _settle(page)
    seen = page.evaluate("window.seen")
    assert [s["caption"] for s in seen] == [f["caption"] for f in frames]
    for i, (shown, frame) in enumerate(zip(seen, frames, strict=True)):
        region = frame["overlay"].get("region", [])
        assert shown["pays"] == len(region)
        if region:  # the walk and the region to pay, then the payment in the next frame
            assert shown["walk"] == 1 and " for a region of " in shown["caption"]
            assert " paid " in seen[i + 1]["caption"]
    walks = [f["overlay"]["path"][1:] for f in frames if f["overlay"].get("path")]
    assert walks and page.evaluate("window.walked") == [
        f"{x},{y}" for walk in walks for x, y in walk
    ]  # each roll's frame walks Assam's marker along his path, square by square
    assert {s["drawn"] for s in seen} == {"none"}  # no rug colour shown while others move
    assert page.locator("#drawn").is_visible() == (game.phase != "over")
    gaps = [b["t"] - a["t"] for a, b in itertools.pairwise(seen)]
    assert min(gaps) >= 0.9 * delay  # one frame at a time at the page's pace, not a jump
    assert int(_marks(page)["decisions"]) == int(decisions) + 1 == len(game.decisions)
    assert errors == []
    page.close()


def test_an_opponent_that_ends_its_process_ends_the_game_on_the_page(
    browser: Any, tmp_path: Path
) -> None:
    """An opponent calling os._exit (a plug-in, in a process of its own): the page says
    why the game ended and where the turns played are saved (a record `import` replays);
    the server goes on, and the new game button starts the next game on the same page."""
    bad = ROOT / "tests" / "strategies_examples" / "bad.py"
    game = WebGame(
        Rules(players=2),
        [StrategySpec.of(f"{bad}:HardExits")],
        run_seed=5,
        out_dir=tmp_path / "run",
        hint=StrategySpec.of("greedy"),
    )
    server = serve(game, port=0)
    start_in_thread(server)
    try:
        page, errors, _ = _open(browser, url_of(server))
        assert not page.is_visible("#new-game")
        page.click("#rot-straight")
        _settle(page)
        first, second = game.asked.options[0]  # type: ignore[index]
        _click_square(page, *first)
        _click_square(page, *second)
        _settle(page)
        marks = _marks(page)
        assert marks["phase"] == "over" and marks["fault"] == "1"
        prompt = page.inner_text("#prompt")
        assert "ended in a fault" in prompt and "its process ended (exit code 1)" in prompt
        saved = tmp_path / "run" / "unfinished.txt"
        assert str(saved) in page.inner_text("#result")
        out = CliRunner().invoke(main, ["import", str(saved)])
        assert out.exit_code == 0 and "1 records, all replayed" in out.output, out.output
        page.screenshot(path=str(SHOTS / "play-fault.png"))
        page.click("#undo")
        _settle(page)
        assert "nothing to undo" in page.inner_text("#message")
        assert page.is_visible("#new-game")
        page.click("#new-game")
        _settle(page)
        marks = _marks(page)
        assert marks["games"] == "2" and marks["phase"] == "orient" and marks["fault"] == "0"
        assert page.inner_text("#result") == "" and not page.is_visible("#new-game")
        page.click("#rot-left")
        _settle(page)
        assert _marks(page)["phase"] == "place" and _marks(page)["decisions"] == "1"
        assert errors == []
        page.close()
    finally:
        server.shutdown()
        server.server_close()
