"""report.html in a real browser: headless Chromium (Debian's package) driven by Playwright.

`.ci/run` installs chromium when it is missing; without it (or without the playwright
package) these tests are skipped with the reason. The screenshot is kept in
`.tmp/report-screenshot.png` for the developer to look at.
"""

from __future__ import annotations

import shutil
from pathlib import Path

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
    # one per chart, and the Summary's headline chart a second time
    assert len(svgs) == len(built.charts) + 1 >= 9
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


# matplotlib draws each text (titles, labels, tick labels, legend entries) as one group
# `g#text_N` of glyph paths; the outermost such groups are the texts of a chart
_CHART_TEXTS = """() => [...document.querySelectorAll('svg')].map(svg => {
    const box = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll('g[id^="text_"]')]
        .filter(g => !g.parentElement.closest('g[id^="text_"]'))
        .map(g => g.getBoundingClientRect())
        .filter(r => r.width > 0)
        .map(r => [r.left - box.left, r.top - box.top, r.right - box.left, r.bottom - box.top]);
    return [box.width, box.height, texts];
})"""


def test_no_chart_text_is_clipped(page_report) -> None:
    """Every text of every chart, as the browser lays it out, lies inside its chart: no
    title, label or legend cut at the edge (a long title once lost its last word)."""
    page, _, _, _ = page_report
    charts = page.evaluate(_CHART_TEXTS)
    assert sum(len(texts) for _, _, texts in charts) > 100
    cut = [
        (i, [round(v, 1) for v in r])
        for i, (width, height, texts) in enumerate(charts)
        for r in texts
        if r[0] < -0.5 or r[1] < -0.5 or r[2] > width + 0.5 or r[3] > height + 0.5
    ]
    assert cut == []


def test_no_two_chart_texts_overlap(page_report) -> None:
    """No two texts of a chart overlap (tick labels, titles and legends stay apart)."""
    page, _, _, _ = page_report
    overlaps = []
    for i, (_, _, texts) in enumerate(page.evaluate(_CHART_TEXTS)):
        for a, ra in enumerate(texts):
            for rb in texts[a + 1 :]:
                w = min(ra[2], rb[2]) - max(ra[0], rb[0])
                h = min(ra[3], rb[3]) - max(ra[1], rb[1])
                if w > 1 and h > 1:
                    overlaps.append((i, ra, rb))
    assert overlaps == []


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


def test_the_first_screen_shows_the_headline_chart(page_report) -> None:
    """At 1280 x 900 the page opens on the headline and its chart (the seats' gaps from a
    fair share, again in section 2); the glossary comes after the at-a-glance table."""
    page, _, _, _ = page_report
    figure = page.locator("section#s1 figure").first
    assert "fair share" in figure.locator("figcaption").inner_text()
    box = figure.bounding_box()
    assert box is not None and box["y"] < 900 and box["height"] > 200
    order = page.evaluate(
        """() => [...document.querySelectorAll('section#s1 > *')].map(e =>
               e.tagName === 'P' && e.textContent.startsWith('Words used here') ? 'words'
               : e.tagName.toLowerCase())"""
    )
    assert order.index("figure") < order.index("div") < order.index("words")  # the table


def test_a_long_table_is_folded_and_opens_with_a_click(page_report) -> None:
    """A table of more than OPEN_ROWS rows is folded under its caption (with its row
    count), and a click on the caption shows it; a short table is shown as it is."""
    from marrakech_sim.report.render import OPEN_ROWS

    page, _, _, _ = page_report
    folded = page.locator("details:has(table)")
    assert folded.count() >= 1
    first = folded.first
    rows = first.locator("tbody tr")
    assert rows.count() > OPEN_ROWS
    assert not rows.first.is_visible()
    summary = first.locator("summary")
    assert f"({rows.count()} rows: show)" in summary.inner_text()
    summary.click()
    assert rows.first.is_visible()
    shown = page.locator("section > .scroll table")
    assert shown.count() >= 1
    assert all(shown.nth(i).locator("tbody tr").count() <= OPEN_ROWS for i in range(shown.count()))


def test_a_folded_group_of_findings_opens_with_a_click(page_report, tmp_path: Path) -> None:
    """Every finding is listed under its verdict: an open group is read as it is, a
    folded one (a long group of what need not be read first) opens with a click on its
    heading."""
    from marrakech_sim.report.render import write_html
    from marrakech_sim.report.sections.base import OPEN_ROWS, Part

    page, _, _, _ = page_report
    part = Part("Every finding", numbered=False)
    long = [f"undecided finding {i}" for i in range(OPEN_ROWS + 1)]
    part.groups += [("It matters: 1 finding", ["the finding that matters"], False)]
    part.groups += [(f"Undecided: {len(long)} findings", long, True)]
    path = tmp_path / "groups.html"
    write_html(path, "t", "s", [part], {})
    other = page.context.browser.new_page()
    other.goto(path.as_uri(), wait_until="load")
    assert other.get_by_text("the finding that matters").is_visible()
    assert not other.get_by_text("undecided finding 0", exact=True).is_visible()
    other.get_by_text(f"Undecided: {len(long)} findings").click()
    assert other.get_by_text("undecided finding 0", exact=True).is_visible()
    assert other.get_by_text(f"undecided finding {OPEN_ROWS}").is_visible()
    other.close()
