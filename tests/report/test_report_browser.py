"""report.html in a real browser: headless Chromium (Debian's package) driven by Playwright.

`.ci/run` installs chromium when it is missing; without it (or without the playwright
package) these tests are skipped with the reason. The screenshot is kept in
`.tmp/report-screenshot.png` for the developer to look at.
"""

from __future__ import annotations

import shutil

import pytest
from conftest import ROOT
from report_runs import write_run
from test_report import RULESETS, _tables

from marrakech_sim.report import build_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
WIDTH = 1280
SCREENSHOT = ROOT / ".tmp" / "report-screenshot.png"

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on PATH (.ci/run installs it)"
)


@pytest.fixture(scope="module")
def page_report(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The report of the synthetic run, opened at 1280 px; yields (page, requests, html)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    games, seats, turn_scores = _tables()
    run = write_run(tmp_path_factory.mktemp("run") / "r1", games, seats, turn_scores, RULESETS)
    built = build_report([run], tmp_path_factory.mktemp("rep") / "out")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_page(viewport={"width": WIDTH, "height": 900})
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        messages: list[str] = []
        page.on("console", lambda m: messages.append(m.text))
        page.goto(built.html.as_uri(), wait_until="load")
        yield page, requests, built, messages
        browser.close()


def test_every_chart_renders(page_report) -> None:
    """Every inline SVG and image has a size and drawn content; one SVG per chart."""
    page, _, built, _ = page_report
    svgs = page.evaluate(
        """() => [...document.querySelectorAll('svg')].map(s => {
               const r = s.getBoundingClientRect();
               return [r.width, r.height, s.querySelectorAll('path, use').length];
           })"""
    )
    assert len(svgs) == len(built.charts) >= 8
    assert all(w > 200 and h > 100 and drawn > 10 for w, h, drawn in svgs), svgs
    images = page.evaluate(
        "() => [...document.images].map(i => [i.complete, i.naturalWidth, i.naturalHeight])"
    )
    assert all(ok and w > 0 and h > 0 for ok, w, h in images), images


def test_nothing_overflows_the_page_width(page_report) -> None:
    """At 1280 px nothing is wider than the page: no horizontal scroll, no element past it."""
    page, _, _, _ = page_report
    scroll, client = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert scroll <= client <= WIDTH
    wide = page.evaluate(
        f"""() => [...document.querySelectorAll('body *')]
               .filter(e => !e.closest('.scroll') && !e.closest('svg'))
               .filter(e => e.getBoundingClientRect().right > {WIDTH} + 0.5)
               .map(e => e.tagName + ' ' + (e.textContent || '').slice(0, 40))"""
    )
    assert wide == []


def test_no_network_request(page_report) -> None:
    """The page loads nothing but itself: no network request, no script, no console output."""
    page, requests, built, messages = page_report
    assert requests == [built.html.as_uri()]
    assert page.evaluate("() => document.scripts.length") == 0
    assert messages == []


def test_screenshot_saved(page_report) -> None:
    """A full-page screenshot is written for the developer to look at, summary first."""
    page, _, _, _ = page_report
    SCREENSHOT.parent.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    assert SCREENSHOT.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    first = page.evaluate("() => document.querySelector('section h2').textContent")
    assert first == "Summary"
