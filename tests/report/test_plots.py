"""Charts: each plot function draws onto the Axes it is given and renders to PNG."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from synthetic_games import make_run, make_turn_scores

from marrakech_sim import palette, plots, stats

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def data() -> dict[str, pd.DataFrame]:
    games, seats = make_run(
        {"a": 0.2, "b": 0.0, "c": -0.2},
        80,
        players=3,
        seat_effects=[0.2, 0, 0],
        tie_rate=0.05,
        seed=7,
    )
    metrics = stats.game_metrics(games, seats)
    alt = metrics.assign(ruleset="other", margin=metrics["margin"] + 1)
    both = pd.concat([metrics, alt.assign(block=alt["block"] + 10_000)], ignore_index=True)
    hist = both.groupby(["ruleset", "margin"]).size().rename("n_games").reset_index()
    return {
        "win_rates": stats.win_rates(games, seats),
        "head_to_head": stats.head_to_head(games, seats),
        "seats": stats.seat_win_shares(games, seats),
        "ratings": stats.fit_ratings(games, seats).ratings,
        "forest": stats.compare_variants(both, "standard", ["margin", "turns"]),
        "hist": hist.rename(columns={"margin": "value"}),
        "sot": stats.score_over_turns(make_turn_scores(games, seats), games),
    }


def _draw(name: str, data: dict[str, pd.DataFrame], ax: Axes) -> Axes:
    if name == "win_rates":
        return plots.plot_win_rates(data["win_rates"], ax, "t")
    if name == "head_to_head":
        return plots.plot_head_to_head(data["head_to_head"], ax, "t")
    if name == "seats":
        return plots.plot_seat_effects(data["seats"], ax, "t")
    if name == "ratings":
        return plots.plot_ratings(data["ratings"], ax, "t")
    if name == "forest":
        return plots.plot_forest(data["forest"].loc[data["forest"]["metric"] == "margin"], ax, "t")
    if name == "hist":
        return plots.plot_distribution(data["hist"], ax, "margin", "t")
    return plots.plot_score_over_turns(data["sot"], ax, "t")


@pytest.mark.parametrize(
    "name", ["win_rates", "head_to_head", "seats", "ratings", "forest", "hist", "sot"]
)
def test_plot_returns_axes_and_renders(name: str, data: dict[str, pd.DataFrame], tmp_path) -> None:
    """The function draws on the given Axes, returns it, sets the title, and saves as PNG."""
    fig = plots.new_figure()
    ax = fig.add_subplot()
    assert _draw(name, data, ax) is ax
    assert ax.get_title() == "t"
    assert ax.has_data() or ax.images
    png = plots.to_png(fig)
    assert png[:8] == PNG and len(png) > 5_000
    (tmp_path / f"{name}.png").write_bytes(png)


def test_png_is_deterministic(data: dict[str, pd.DataFrame]) -> None:
    """The same chart gives the same PNG bytes (reports can be compared by digest)."""
    pngs = []
    for _ in range(2):
        fig = plots.new_figure()
        plots.plot_seat_effects(data["seats"], fig.add_subplot(), "t")
        pngs.append(plots.to_png(fig))
    assert pngs[0] == pngs[1]


@pytest.mark.parametrize("name", ["hist", "sot"])
def test_a_legend_placed_slowly_is_not_a_warning(
    name: str, data: dict[str, pd.DataFrame], monkeypatch: pytest.MonkeyPatch
) -> None:
    """matplotlib warns when placing a legend at its default place takes over a second of
    its clock, so a report on a loaded machine warned (and failed, warnings being errors
    here): with the clock made to jump 2 s a reading, rendering raises no warning, and
    the legend is where the default puts it."""
    import matplotlib.legend

    class SlowClock:
        now = 0.0

        def perf_counter(self) -> float:
            self.now += 2.0
            return self.now

    fig = plots.new_figure()
    ax = _draw(name, data, fig.add_subplot())
    expected = plots.to_png(fig)
    monkeypatch.setattr(matplotlib.legend, "time", SlowClock())
    fig = plots.new_figure()
    ax = _draw(name, data, fig.add_subplot())
    assert ax.get_legend() is not None
    assert plots.to_png(fig) == expected  # (warnings are errors in this suite)


def test_series_differ_without_colour(data: dict[str, pd.DataFrame]) -> None:
    """Series of one chart differ by marker and line style, so they survive grey-scale print."""
    fig = plots.new_figure()
    ax = plots.plot_score_over_turns(data["sot"], fig.add_subplot())
    lines = [ln for ln in ax.get_lines() if ln.get_label().startswith("player")]
    assert len({(ln.get_marker(), ln.get_linestyle()) for ln in lines}) == len(lines) == 3


def test_no_pyplot_imported() -> None:
    """The plots module never imports pyplot (no global figure state)."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(plots))
    names = [
        a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.Import | ast.ImportFrom)
        for a in n.names
    ]
    mods = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert "matplotlib.pyplot" not in names + mods and "pyplot" not in names


def test_svg_is_deterministic_and_inline_ready(data: dict[str, pd.DataFrame]) -> None:
    """The same chart gives the same SVG text, starting at <svg>, with no date and no comments."""
    svgs = []
    for _ in range(2):
        fig = plots.new_figure()
        plots.plot_seat_effects(data["seats"], fig.add_subplot(), "t")
        svgs.append(plots.to_svg(fig))
    assert svgs[0] == svgs[1]
    assert svgs[0].startswith("<svg") and svgs[0].rstrip().endswith("</svg>")
    assert "<dc:date>" not in svgs[0] and "<!--" not in svgs[0]


def test_seat_colours_are_the_palette_in_every_chart(data: dict[str, pd.DataFrame]) -> None:
    """Seat s is drawn in palette.seat_colour(s) in the seat chart and the score chart alike,
    labelled 'player s + 1'."""
    from matplotlib.colors import to_hex

    fig = plots.new_figure()
    ax = plots.plot_score_over_turns(data["sot"], fig.add_subplot())
    _, labels = ax.get_legend_handles_labels()
    assert labels == ["player 1", "player 2", "player 3"]
    for line in ax.get_lines():
        if line.get_label().startswith("player"):
            seat = int(line.get_label().split()[1]) - 1
            assert to_hex(line.get_color()).upper() == palette.seat_colour(seat).upper()
    fig = plots.new_figure()
    ax = plots.plot_seat_effects(data["seats"], fig.add_subplot())
    handles, labels = ax.get_legend_handles_labels()
    assert labels == ["player 1", "player 2", "player 3"]
    for handle, label in zip(handles, labels, strict=True):
        seat = int(label.split()[1]) - 1
        assert to_hex(handle.get_color()).upper() == palette.seat_colour(seat).upper()


def test_palette_is_distinct_and_stable() -> None:
    """Each palette has distinct colours; names get the same colour whatever their order."""
    for colours in (palette.SEAT_COLOURS, palette.STRATEGY_COLOURS, palette.RULESET_COLOURS):
        assert len(set(colours)) == len(colours)
    a = palette.strategy_colours(["greedy", "random", "mcts"])
    b = palette.strategy_colours(["mcts", "greedy", "random", "greedy"])
    assert a == b and len(set(a.values())) == 3
    assert palette.seat_colour(0) == palette.SEAT_COLOURS[0] != palette.seat_colour(1)


def test_long_titles_are_wrapped() -> None:
    """A title longer than its axes is wrapped onto several lines instead of clipped."""
    fig = plots.new_figure(4, 3)
    ax = fig.add_subplot()
    plots.set_title(ax, "a finding that is much too long to fit on one line above a small chart")
    assert ax.get_title().count("\n") >= 1
    assert all(len(line) < 50 for line in ax.get_title().splitlines())


def _titled(fig: Figure) -> Axes:
    """A chart whose long tick labels narrow the axes once the layout runs."""
    ax = fig.add_subplot()
    ax.barh(["a label as long as a line-up of four strategies", "b"], [1, 2])
    plots.set_title(ax, "standard, 2 players (24,000 games per line-up; each pairing once: " * 2)
    fig.suptitle("Win rate per strategy and line-up; dotted: the fair share 1/players " * 2)
    return ax


def test_a_chart_rendered_once_is_the_chart_the_layout_draws() -> None:
    """`render` lays a chart out once and keeps that layout for the PNG and the SVG: its
    PNG is byte for byte the one drawn with the layout engine running again, its axes
    where the engine puts them, and the SVG holds the same titles."""
    fig, again = plots.new_figure(6, 3), plots.new_figure(6, 3)
    _titled(fig)
    _titled(again)
    png, svg = plots.render(fig)
    again.set_dpi(plots.PNG_DPI)
    plots.fit_titles(again)
    assert again.get_layout_engine() is not None and fig.get_layout_engine() is not None
    assert plots.to_png(again, fit=False) == png
    for ax, other in zip(fig.axes, again.axes, strict=True):
        assert ax.get_position().bounds == pytest.approx(other.get_position().bounds)
        assert ax.get_title() == other.get_title()
    assert svg == plots.to_svg(fig, fit=False) and svg.startswith("<svg")


@pytest.mark.parametrize("render", [plots.to_svg, plots.to_png, plots.render])
def test_titles_fit_the_axes_the_layout_leaves(render: Any) -> None:
    """Long tick labels narrow the axes once the layout runs: the titles are re-wrapped to
    the space left, so neither the axes' title nor the figure's passes the figure's edge."""
    fig = plots.new_figure(6, 3)
    ax = _titled(fig)
    render(fig)
    assert ax.get_title().count("\n") >= 2
    edge = fig.bbox
    for text in (ax.title, *fig.texts):
        box = text.get_window_extent()
        assert edge.x0 - 0.5 <= box.x0 and box.x1 <= edge.x1 + 0.5, text.get_text()
    assert ax.title.get_window_extent().width <= ax.get_window_extent().width + 0.5


def test_distribution_shows_the_games_without_a_value(data: dict[str, pd.DataFrame]) -> None:
    """The extra bar (e.g. a bankrupt runner-up) is drawn apart and the shares add to 100%."""
    hist = data["hist"].loc[data["hist"]["ruleset"] == "standard"]
    fig = plots.new_figure()
    ax = plots.plot_distribution(
        hist, fig.add_subplot(), "margin", "t", extra={"standard": ("runner-up\nbankrupt", 50)}
    )
    heights = [p.get_height() for p in ax.patches]
    assert abs(sum(heights) - 100.0) < 1e-6
    assert "runner-up\nbankrupt" in [t.get_text() for t in ax.get_xticklabels()]


def _marker_room(ax: Axes, x: float, y: float, marker_pt: float) -> float:
    """Pixels between a marker's edge at data (x, y) and the nearest side of the axes."""
    fig = ax.get_figure(root=True)
    assert fig is not None
    fig.canvas.draw()
    px, _ = ax.transData.transform((x, y))
    box = ax.get_window_extent()
    radius = marker_pt / 2 * fig.dpi / 72
    return min(px - box.x0, box.x1 - px) - radius


def test_estimates_at_0_and_100_percent_are_drawn_whole() -> None:
    """A win rate of 0% or 100% sits inside the axes with room for its whole marker, not cut
    in half by the frame; the restricted-play bars' axis has the same room at 100%."""
    table = pd.DataFrame(
        {
            "strategy": ["greedy", "random"],
            "rate": [1.0, 0.0],
            "lo": [0.998, 0.0],
            "hi": [1.0, 0.002],
            "fair_share": [0.5, 0.5],
            "n_games": [2000, 2000],
        }
    )
    fig = plots.new_figure()
    ax = plots.plot_win_rates(table, fig.add_subplot(), "t")
    size = ax.get_lines()[0].get_markersize()
    assert _marker_room(ax, 100.0, 0, size) > 0 and _marker_room(ax, 0.0, 1, size) > 0
    decides = pd.DataFrame(
        {
            "what": ["greedy's win rate"],
            "ruleset": ["standard"],
            "players": [2],
            "rate": [1.0],
            "lo": [0.99],
            "hi": [1.0],
            "fair_share": [0.5],
            "n": [100],
        }
    )
    fig = plots.new_figure()
    ax = plots.plot_decides(decides, fig.add_subplot(), "t")
    assert ax.get_xlim()[1] > 100.0


def test_share_x_gives_panels_one_range() -> None:
    """Panels passed to share_x end with one x range that covers each one's own."""
    fig = plots.new_figure()
    a, b = fig.subplots(1, 2)
    a.plot([0, 1], [0, 1])
    b.plot([5, 30], [0, 1])
    plots.share_x([a, b])
    assert a.get_xlim() == b.get_xlim()
    assert a.get_xlim()[0] <= 0 and a.get_xlim()[1] >= 30


def test_distribution_span_fixes_the_x_range(data: dict[str, pd.DataFrame]) -> None:
    """Two histograms drawn with one span have one x range, whatever their own data's."""
    hist = data["hist"]
    span = (0.0, max(plots.clip_top(part, 0.99) for _, part in hist.groupby("ruleset")))
    lims = []
    for ruleset, part in hist.groupby("ruleset"):
        fig = plots.new_figure()
        extra = {str(ruleset): ("runner-up\nbankrupt", 3.0)}
        ax = plots.plot_distribution(part, fig.add_subplot(), "m", "t", extra=extra, span=span)
        lims.append(ax.get_xlim())
    assert lims[0] == lims[1]


@pytest.fixture(scope="module")
def figures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The report's charts as figures, for the synthetic run of tests/report/test_report.py
    (two 4-player rule sets and a 2-player one)."""
    from report_runs import write_run
    from test_report import RULESETS, _tables

    from marrakech_sim.report.build import chart_figures
    from marrakech_sim.report.compute import compute_tables
    from marrakech_sim.report.load import connect, open_runs

    games, seats, turn_scores = _tables()
    run = write_run(tmp_path_factory.mktemp("run") / "r1", games, seats, turn_scores, RULESETS)
    runs = open_runs([run])
    con = connect(runs)
    rt = compute_tables(con, runs)
    con.close()
    return {"tables": rt.tables, **{name: fig for name, (_, fig) in chart_figures(rt).items()}}


def _panels(fig: Any) -> list[Axes]:
    return [ax for ax in fig.axes if ax.axison]


def test_panels_that_compare_share_one_x_range(figures: dict[str, Any]) -> None:
    """The ratings panels, the margin histograms and the seats' win-share differences each
    have one x range across their panels."""
    for name in ("ratings", "dist_margin"):
        lims = {ax.get_xlim() for ax in _panels(figures[name])}
        assert len(_panels(figures[name])) > 1 and len(lims) == 1, name
    seat_panels = [ax for ax in _panels(figures["variants"]) if "win share" in ax.get_title()]
    assert len(seat_panels) == 4 and len({ax.get_xlim() for ax in seat_panels}) == 1


def test_each_two_player_pairing_is_drawn_once(figures: dict[str, Any]) -> None:
    """A 2-player line-up is one row (the side that won more), not two mirror-image rows."""
    lwr = figures["tables"].lineup_win_rates
    two = lwr.loc[lwr["ruleset"] == "two"]
    panel = next(ax for ax in _panels(figures["win_rates"]) if ax.get_title().startswith("two"))
    rows = [t.get_text() for t in panel.get_yticklabels()]
    assert len(rows) == two["lineup"].nunique() < len(two)
    best = two.sort_values("rate").drop_duplicates("lineup", keep="last")
    assert (best["rate"] >= 0.5).all()
    other = {r.lineup: r.lineup.replace(r.strategy, "", 1).strip("|") for r in best.itertuples()}
    assert sorted(rows) == sorted(f"{r.strategy} vs {other[r.lineup]}" for r in best.itertuples())


def test_charts_number_players_from_one(figures: dict[str, Any]) -> None:
    """Every legend and panel title of the report's charts says 'player N' from 1, never
    'seat N'."""
    texts = []
    for name, fig in figures.items():
        if name == "tables":
            continue
        for ax in fig.axes:
            texts.append(ax.get_title())
            legend = ax.get_legend()
            texts += [t.get_text() for t in legend.get_texts()] if legend else []
    joined = " ".join(texts)
    assert "player 1" in joined and "player 4" in joined
    assert not re.search(r"\bseat \d", joined, flags=re.IGNORECASE)


def _levels(names: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"level_index": range(len(names)), "level": names})


def _strengths(rows: list[tuple[str, float, str]]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "level": [r[0] for r in rows],
            "elo": [r[1] for r in rows],
            "elo_lo": [r[1] - 15 for r in rows],
            "elo_hi": [r[1] + 15 for r in rows],
            "status": [r[2] for r in rows],
        }
    )


def test_skill_levels_sit_at_their_measured_elo() -> None:
    """The skill chart's x is the level's Elo, not its index: levels 10 Elo apart sit close
    and share a tick, one 600 Elo further sits far; a level that never won sits left of
    every measured level, one that never lost right of them."""
    names = ["random", "greedy", "b1", "b2", "oracle"]
    strength = _strengths(
        [
            ("random", np.nan, "never won"),
            ("greedy", 1500.0, "measured"),
            ("b1", 2100.0, "measured"),
            ("b2", 2110.0, "measured"),
            ("oracle", np.nan, "never lost"),
        ]
    )
    where = plots.skill_positions(_levels(names), strength).set_index("level")
    assert where.loc["greedy", "x"] == 1500.0 and where.loc["b2", "x"] == 2110.0
    assert where.loc["random", "x"] < 1500.0 and where.loc["oracle", "x"] > 2110.0
    ticks, labels = plots._level_ticks(where.reset_index(), True, 0.07 * 600)
    assert len(ticks) == 4 and "b1, b2\n2100-2110 Elo" in labels
    assert "random\nnever won" in labels and "greedy\n1500 Elo" in labels


def test_skill_chart_without_two_measured_levels_keeps_the_declared_order() -> None:
    """With fewer than two finite strengths there is no Elo axis: the declared order."""
    strength = _strengths([("a", np.nan, "never won"), ("b", 1500.0, "measured")])
    where = plots.skill_positions(_levels(["a", "b"]), strength)
    assert where["x"].tolist() == [0.0, 1.0] and not where["elo_axis"].any()
    assert plots.skill_positions(_levels(["a", "b"]), None)["x"].tolist() == [0.0, 1.0]


@pytest.mark.parametrize(
    ("means", "spread", "least"),
    [
        ([47.6, 48.0, 48.0], 0.01, 4.8),  # a 1% change is not drawn over the whole panel
        ([6.0, 5.9, 6.1], 0.05, 0.6),
        ([0.251, 0.012, 0.0], 0.005, 0.25),  # a span wide enough is left as drawn
    ],
)
def test_a_measures_panel_spans_at_least_a_tenth_of_its_values(
    means: list[float], spread: float, least: float
) -> None:
    """A sweep's side panel does not magnify a change that is small beside the measure:
    its y axis spans at least plots.METRIC_MIN_SPAN of its largest value."""
    mean = np.array(means)
    table = pd.DataFrame(
        {"x": [10, 20, 30], "mean": mean, "lo": mean - spread, "hi": mean + spread}
    )
    ax = plots.new_figure().add_subplot()
    plots.plot_response_metric(table, ax, "game length (turns)")
    lo, hi = ax.get_ylim()
    assert hi - lo >= least - 1e-12
    assert lo <= (mean - spread).min() and hi >= (mean + spread).max()
    assert hi - lo < 2 * least  # widened no more than it needs
