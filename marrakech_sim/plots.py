"""Charts for the report: each function draws one table onto an ``Axes`` and returns it.

matplotlib's object API only (``Figure()``, never pyplot: no global state, safe in
workers and tests). Colours come from :mod:`marrakech_sim.palette` (colour-blind safe,
one colour per seat, per strategy and per rule set in every chart); series differ by
marker and line style too, so a chart still reads in black-and-white print. Every
estimate is drawn with its interval. Titles are passed in by the caller, state the
finding, and are wrapped to the width of their axes. Shares are drawn in percent and
differences of shares in percentage points (pp). Seats are labelled as a person counts
players: "player 1" is seat 0. Estimates at an axis' end (0% or 100%) are drawn whole: the
axis reaches a little beyond.
"""

from __future__ import annotations

import io
import re
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.text import Text

from marrakech_sim import palette

SVG_SALT = "marrakech_sim"  # fixed ids in SVG output: the same chart gives the same bytes


def style(i: int) -> dict[str, Any]:
    """Marker and line style of the i-th series (distinct in black and white)."""
    return {"marker": palette.marker(i), "linestyle": palette.linestyle(i)}


def new_figure(width: float = 7.0, height: float = 4.0) -> Figure:
    """A pyplot-free figure with a constrained layout."""
    return Figure(figsize=(width, height), layout="constrained")


#: a legend's place, where it hides the fewest points: matplotlib's default, given explicitly,
#: since with the default matplotlib warns when choosing the place took it over a second (a
#: clock: a loaded machine warned, and the warning ended a report under warnings as errors)
BEST: Final = "best"


#: the PNG files' resolution (dots per inch)
PNG_DPI: Final = 110


def render(fig: Figure) -> tuple[bytes, str]:
    """The figure as PNG bytes and as inline SVG text (`to_png`, `to_svg`), laid out once.

    Its titles are fitted at the PNG's resolution, and then the layout is kept as it is:
    each drawing would otherwise run the constrained layout again, a fifth of a chart's
    time. Positions are fractions of the figure, so the SVG (drawn at 72 dpi) has the
    PNG's layout.
    """
    fig.set_dpi(PNG_DPI)
    fit_titles(fig)
    fig.set_layout_engine("none")
    return to_png(fig, fit=False), to_svg(fig, fit=False)


def to_png(fig: Figure, dpi: int = PNG_DPI, fit: bool = True) -> bytes:
    """The figure as PNG bytes (byte-identical run to run); fit: fit_titles first (False
    where they are fitted already; `render` gives a chart's PNG and SVG, laid out once)."""
    if fit:
        fit_titles(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    return buf.getvalue()


def to_svg(fig: Figure, fit: bool = True) -> str:
    """The figure as SVG text for inline use (byte-identical run to run); fit as in to_png.

    Deterministic: a fixed ``svg.hashsalt`` for element ids and no date in the metadata.
    The XML declaration and DOCTYPE are dropped so the ``<svg>`` element can sit in HTML;
    text is drawn as glyph paths, so the chart needs no font on the reader's machine.
    """
    from matplotlib import rc_context

    if fit:
        fit_titles(fig)
    buf = io.StringIO()
    with rc_context({"svg.hashsalt": SVG_SALT, "svg.fonttype": "path"}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    # matplotlib writes each text as a comment beside its glyph paths: drop the comments,
    # so no user-supplied name reaches the HTML as raw text
    return re.sub(r"<!--.*?-->", "", text[text.index("<svg") :], flags=re.DOTALL)


def set_title(ax: Axes, title: str | None, size: float = 10.0) -> None:
    """A title wrapped to the axes' width, so it is never clipped."""
    if not title:
        return
    fig = ax.get_figure(root=True)
    width_in = fig.get_figwidth() * ax.get_position().width if isinstance(fig, Figure) else 5.0
    chars = max(int(width_in * 72 / (size * 0.56)), 20)
    ax.set_title("\n".join(textwrap.wrap(str(title), chars)), fontsize=size)


def fit_titles(fig: Figure) -> None:
    """Re-wrap every axes title and the figure's title to the space they have once the
    layout is done, measured in the renderer: a title is never wider than its axes (nor
    the figure), so no title is clipped at the figure's edge."""
    _lay_out(fig)
    figure_width = fig.bbox.width
    fitted = False
    for ax in fig.axes:
        room = min(ax.get_window_extent().width, figure_width)
        fitted |= _fit(ax.title, room)
    for text in fig.texts:  # the figure's title (suptitle) among them
        fitted |= _fit(text, figure_width)
    if fitted:
        _lay_out(fig)


def _lay_out(fig: Figure) -> None:
    """Run the figure's layout (the axes' final positions) without drawing its artists: the
    drawing that follows (savefig) lays it out again, from the same inputs, the same way."""
    engine = fig.get_layout_engine()
    if engine is None:
        fig.draw_without_rendering()
    else:
        engine.execute(fig)


def _fit(text: Text, room: float) -> bool:
    """Wrap `text` to fit `room` display units; True when its lines changed."""
    words = " ".join(text.get_text().split())
    if not words or text.get_window_extent().width <= room:
        return False
    chars = len(words)
    while chars > 10:
        chars = int(chars * 0.9)
        text.set_text("\n".join(textwrap.wrap(words, chars)))
        if text.get_window_extent().width <= room:
            break
    return True


def _nonneg(parts: list[np.ndarray]) -> np.ndarray:
    """Error-bar lengths (2, n); rounding can put an estimate a hair outside its interval."""
    lengths: np.ndarray = np.maximum(np.vstack(parts), 0.0)
    return lengths


def _count(n: float) -> str:
    return f"{round(float(n)):,}"


def _errors(est: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return _nonneg([est - lo, hi - est])


def _col(table: pd.DataFrame, name: str, scale: float = 1.0) -> np.ndarray:
    values: np.ndarray = scale * table[name].to_numpy(dtype=float)
    return values


def _categories(ax: Axes, axis: str, n: int) -> None:
    """Room for n categories at 0 .. n - 1 along `axis` ("x" or "y")."""
    (ax.set_xlim if axis == "x" else ax.set_ylim)(-0.6, n - 0.4)


def player_label(seat: int) -> str:
    """'player 1' for seat 0: how a person counts the players."""
    return f"player {int(seat) + 1}"


def _seat_style(seat: int) -> dict[str, Any]:
    """A seat's colour and marker, the marker edged in ink so a light colour (the yellow
    rug's) still reads on white."""
    return {
        "color": palette.seat_colour(seat),
        "marker": palette.marker(seat),
        "markeredgecolor": palette.INK,
        "markeredgewidth": 0.6,
    }


def _seat_line(seat: int) -> list[Any]:
    """Path effects for a seat's line: a thin ink outline under a light colour."""
    from matplotlib import patheffects

    if not palette.is_light(palette.seat_colour(seat)):
        return []
    return [patheffects.withStroke(linewidth=2.6, foreground=palette.INK), patheffects.Normal()]


def _percent_axis(ax: Axes, right: float) -> None:
    """An x axis of percent from 0 to ``right`` that reaches 3% of its span beyond both
    ends, so a marker at 0% or 100% is drawn whole, not cut in half by the frame."""
    pad = 0.03 * right
    ax.set_xlim(-pad, right + pad)


def _rows_end(ax: Axes, xlabel: str, title: str | None, **label: Any) -> Axes:
    """The end of a chart of one horizontal interval or bar per row: the x axis' label
    (``label``: its text properties), a grid along x and the title."""
    ax.set_xlabel(xlabel, **label)
    ax.grid(axis="x", color=palette.GRID)
    set_title(ax, title)
    return ax


def share_x(axes: Sequence[Axes]) -> None:
    """One x range for panels that compare: the union of their ranges."""
    lims = [ax.get_xlim() for ax in axes]
    if lims:
        lo, hi = min(a for a, _ in lims), max(b for _, b in lims)
        for ax in axes:
            ax.set_xlim(lo, hi)


def plot_win_rates(
    table: pd.DataFrame,
    ax: Axes,
    title: str | None = None,
    colours: Mapping[str, str] | None = None,
    counts: bool = True,
) -> Axes:
    """Win rate per row with its interval, coloured by strategy; a fair-share line per value.

    ``table``: strategy, rate, lo, hi, fair_share, n_games, and optionally ``label`` (the
    row's name; default the strategy). Rows of one rule set share one fair share (1 /
    players); a dotted line marks each distinct fair share. ``counts``: print each
    row's games in its label (off when the title says them).
    """
    tab = table.reset_index(drop=True).iloc[::-1].reset_index(drop=True)
    colours = colours or palette.strategy_colours(tab["strategy"])
    y = np.arange(len(tab))
    rate, lo, hi = (_col(tab, c, 100) for c in ("rate", "lo", "hi"))
    err = _errors(rate, lo, hi)
    for i, r in enumerate(tab.itertuples()):
        ax.errorbar(
            rate[i],
            y[i],
            xerr=err[:, i : i + 1],
            fmt="o",
            color=colours.get(str(r.strategy), palette.INK),
            capsize=3,
        )
    for share in sorted(set(np.round(_col(tab, "fair_share", 100), 6))):
        ax.axvline(share, color=palette.FAIR, linestyle=":", linewidth=1.2)
        ax.annotate(
            f"fair {share:.1f}%",
            (share, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(2, -10),
            textcoords="offset points",
            fontsize="x-small",
            color=palette.FAIR,
        )
    labels = tab["label"] if "label" in tab else tab["strategy"]
    ax.set_yticks(
        y,
        [
            f"{s} (n={_count(n)})" if counts else str(s)
            for s, n in zip(labels, tab["n_games"], strict=True)
        ],
    )
    ax.tick_params(axis="y", labelsize="small")
    _categories(ax, "y", len(tab))
    _percent_axis(ax, min(100.0, max(float(np.nanmax(hi)) if len(hi) else 0.0, 45.0) + 5))
    return _rows_end(ax, "games won, % (95% interval)", title)


def plot_head_to_head(table: pd.DataFrame, ax: Axes, title: str | None = None) -> Axes:
    """Matrix of how often the row strategy finished ahead of the column one, with counts.

    ``table``: strategy, opponent, rate, n_games, and lo, hi when present. A
    colour-blind-safe diverging scale, white at 50%; every cell prints its percentage,
    its interval and its games.
    """
    names = sorted(set(table["strategy"]) | set(table["opponent"]))
    idx = {n: i for i, n in enumerate(names)}
    grid = np.full((len(names), len(names)), np.nan)
    text = np.full(grid.shape, "", dtype=object)
    for r in table.itertuples():
        i, j = idx[r.strategy], idx[r.opponent]
        grid[i, j] = r.rate
        band = (
            f"\n[{100 * r.lo:.1f}, {100 * r.hi:.1f}]"
            if hasattr(r, "lo") and hasattr(r, "hi")
            else ""
        )
        text[i, j] = f"{100 * r.rate:.1f}%{band}\nn={_count(r.n_games)}"
    # ColorBrewer PuOr: diverging and colour-blind safe, and unlike any seat's colour
    ax.imshow(np.ma.masked_invalid(grid), cmap=palette.DIVERGING, vmin=0.0, vmax=1.0)
    small = "xx-small" if len(names) > 5 else "x-small"
    for i in range(len(names)):
        for j in range(len(names)):
            if np.isnan(grid[i, j]):
                ax.text(j, i, "-", ha="center", va="center", color=palette.FAIR)
                continue
            ink = "white" if abs(grid[i, j] - 0.5) > 0.35 else palette.INK
            ax.text(j, i, text[i, j], ha="center", va="center", color=ink, fontsize=small)
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set_yticks(range(len(names)), names)
    ax.set_xlabel("opponent")
    ax.set_ylabel("strategy (ahead in % of games)")
    set_title(ax, title)
    return ax


#: the y axis of a chart of seat effects: its unit, and what its bars are
SEAT_EFFECT_LABEL = "win share minus fair share, pp\n(bars: 95% intervals)"


def plot_seat_effects(table: pd.DataFrame, ax: Axes, title: str | None = None) -> Axes:
    """Win share minus the fair share per seat (pp), one group per (rule set, players).

    ``table``: players, ruleset, seat, effect_pp, effect_lo_pp, effect_hi_pp. Seats take
    their palette colours; 0 pp is the fair share of every player count.
    """
    groups = list(table.groupby(["players", "ruleset"], sort=True))[::-1]
    max_seats = int(table["seat"].max()) + 1 if len(table) else 1
    width = 0.8 / max_seats
    labelled: set[int] = set()
    for g, ((_players, _ruleset), part) in enumerate(groups):
        for r in part.sort_values("seat").itertuples():
            seat = int(r.seat)
            x = g + (seat - (max_seats - 1) / 2) * width
            ax.errorbar(
                [x],
                [r.effect_pp],
                yerr=_nonneg(
                    [
                        np.array([r.effect_pp - r.effect_lo_pp]),
                        np.array([r.effect_hi_pp - r.effect_pp]),
                    ]
                ),
                fmt="none",
                ecolor=palette.seat_colour(seat),
                capsize=2,
            )
            ax.plot(
                [x],
                [r.effect_pp],
                linestyle="none",
                label=player_label(seat) if seat not in labelled else None,
                **_seat_style(seat),
            )
            labelled.add(seat)
    ax.axhline(0.0, color=palette.FAIR, linewidth=1.0, linestyle=":")
    ax.set_xticks(
        range(len(groups)),
        [f"{rs}\n{p} players\nn={_count(part['n_games'].max())}" for (p, rs), part in groups],
        fontsize="small",
    )
    _categories(ax, "x", len(groups))
    ax.set_ylabel(SEAT_EFFECT_LABEL)
    ax.grid(axis="y", color=palette.GRID)
    handles, labels = ax.get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda i: labels[i])
    ax.legend(
        [handles[i] for i in order],
        [labels[i] for i in order],
        loc=BEST,
        fontsize="small",
        ncols=4,
    )
    set_title(ax, title)
    return ax


def plot_ratings(
    ratings: pd.DataFrame,
    ax: Axes,
    title: str | None = None,
    colours: Mapping[str, str] | None = None,
) -> Axes:
    """Elo rating per strategy with its interval, strongest at the top.

    ``ratings``: strategy, elo, elo_lo, elo_hi, n_games (one fit: one player count and
    rule set).
    """
    tab = ratings.sort_values("elo").reset_index(drop=True)
    colours = colours or palette.strategy_colours(tab["strategy"])
    y = np.arange(len(tab))
    elo, lo, hi = (_col(tab, c) for c in ("elo", "elo_lo", "elo_hi"))
    err = _errors(elo, lo, hi)
    for i, s in enumerate(tab["strategy"]):
        ax.errorbar(
            elo[i], y[i], xerr=err[:, i : i + 1], fmt="s", color=colours.get(str(s)), capsize=3
        )
    ax.axvline(1500, color=palette.FAIR, linestyle=":", linewidth=1.0)
    ax.set_yticks(y, [str(s) for s in tab["strategy"]], fontsize="small")
    _categories(ax, "y", len(tab))
    return _rows_end(ax, "Elo (1500 = mean), 95% interval", title)


def plot_forest(
    comparison: pd.DataFrame,
    ax: Axes,
    title: str | None = None,
    scale: float = 1.0,
    unit: str = "",
    labels: Sequence[str] | None = None,
    colours: Mapping[str, str] | None = None,
) -> Axes:
    """Forest plot of rule-set differences for one metric: difference with its interval.

    ``comparison``: ruleset, baseline, diff, lo, hi, reject_holm, n_games,
    n_games_baseline (one metric's rows). ``scale`` and ``unit`` convert the difference
    (100 and "pp" for shares); ``labels`` name the rows (default: "ruleset vs baseline").
    Filled markers: significant after Holm; open: not. Marker colour: the rule set's.
    """
    tab = comparison.reset_index(drop=True)
    colours = colours or palette.ruleset_colours(tab["ruleset"])
    y = np.arange(len(tab))[::-1]
    for yi, r in zip(y, tab.itertuples(), strict=True):
        colour = colours.get(str(r.ruleset), palette.INK)
        d, lo, hi = scale * r.diff, scale * r.lo, scale * r.hi
        ax.errorbar(
            [d],
            [yi],
            xerr=[[max(d - lo, 0.0)], [max(hi - d, 0.0)]],
            fmt="D",
            capsize=3,
            color=colour,
            markerfacecolor=colour if bool(r.reject_holm) else "white",
        )
    ax.axvline(0.0, color=palette.FAIR, linestyle=":", linewidth=1.0)
    if labels is None:
        labels = [f"{r.ruleset} vs {r.baseline}" for r in tab.itertuples()]
    ax.set_yticks(y, list(labels), fontsize="small")
    ax.set_ylim(-0.7, len(tab) - 0.3)
    xlabel = f"difference{', ' + unit if unit else ''} (95% interval)"
    return _rows_end(ax, xlabel, title, fontsize="small")


def plot_distribution(
    hist: pd.DataFrame,
    ax: Axes,
    xlabel: str,
    title: str | None = None,
    log: bool = False,
    extra: Mapping[str, tuple[str, float]] | None = None,
    colours: Mapping[str, str] | None = None,
    clip: float = 1.0,
    span: tuple[float, float] | None = None,
) -> Axes:
    """Histogram of a per-game value, one bar series per rule set side by side.

    ``hist``: ruleset, value, n_games (exact counts per value). ``log``: a log count
    axis, so rare values (short games) stay visible beside a tall mode. ``extra``: per
    rule set a (label, games) bar drawn apart at the right, hatched and labelled with its
    share, for the games the value does not cover (e.g. a bankrupt runner-up: no points
    margin); shares are of all games, these included. ``clip``: the x axis ends where
    this share of the games is covered (the long tail's few games are left off the axis,
    not out of the shares). ``span``: the first and last values the axis shows, instead
    of the data's least and ``clip``'s (one x range across panels that compare).
    """
    # a rule set whose every game is in `extra` (every runner-up bankrupt) has no value
    # to draw but its bar apart
    names = sorted({*hist["ruleset"].unique(), *(extra or {})})
    colours = colours or palette.ruleset_colours(names)
    width = 0.8 / max(len(names), 1)
    totals = hist.groupby("value")["n_games"].sum().sort_index()
    values = totals.index.to_numpy(dtype=float) if len(totals) else np.array([0.0])
    first, top = span if span is not None else (float(values.min()), clip_top(hist, clip))
    right = top + max(2.0, 0.08 * (top - first))
    bar_width = max(2.0, 0.05 * (right - first)) / max(len(names), 1)
    for i, ruleset in enumerate(names):
        part = hist.loc[hist["ruleset"] == ruleset].sort_values("value")
        more = extra[ruleset][1] if extra and ruleset in extra else 0.0
        total = part["n_games"].sum() + more
        share = 100 * part["n_games"].to_numpy(dtype=float) / max(total, 1)
        offset = (i - (len(names) - 1) / 2) * width
        colour = colours[ruleset]
        label = f"{ruleset} (n={_count(total)})"
        if len(part):
            ax.bar(
                part["value"].to_numpy(dtype=float) + offset,
                share,
                width=width,
                color=colour,
                label=label,
            )
        if extra and ruleset in extra and total:
            x = right + 1 + i * bar_width
            ax.bar(
                [x],
                [100 * more / total],
                width=bar_width,
                color="white",
                edgecolor=colour,
                hatch="///",
                label=None if len(part) else label,
            )
            ax.annotate(
                f"{100 * more / total:.1f}%",
                (x, 100 * more / total),
                xytext=(0, 2),
                textcoords="offset points",
                ha="center",
                fontsize="x-small",
            )
    if extra:
        label = next(iter(extra.values()))[0]
        ax.axvline(right, color=palette.FAIR, linewidth=0.8)
        ax.set_xlim(first - 1, right)  # the value ticks, as for a panel without the bar
        ticks = [t for t in ax.get_xticks() if first - 1 <= t <= right - 1]
        ax.set_xticks(
            [*ticks, right + 1 + 0.5 * (len(names) - 1) * bar_width],
            [f"{t:g}" for t in ticks] + [label],
        )
        ax.set_xlim(first - 1, right + 2 + len(names) * bar_width)
    else:
        ax.set_xlim(first - 1, top + 1)
    if log:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("games, %" + (" (log scale)" if log else ""))
    ax.grid(axis="y", color=palette.GRID)
    ax.legend(loc=BEST, fontsize="small")
    set_title(ax, title)
    return ax


def clip_top(hist: pd.DataFrame, clip: float = 1.0) -> float:
    """The smallest value of ``hist`` (value, n_games) below which ``clip`` of its games lie."""
    totals = hist.groupby("value")["n_games"].sum().sort_index()
    if not len(totals):
        return 0.0
    values = totals.index.to_numpy(dtype=float)
    cover = np.cumsum(totals.to_numpy(dtype=float)) / max(float(totals.sum()), 1.0)
    return float(values[min(int(np.searchsorted(cover, clip)), len(values) - 1)])


def plot_score_over_turns(
    table: pd.DataFrame, ax: Axes, title: str | None = None, band: Sequence[str] = ("q2.5", "q97.5")
) -> Axes:
    """Mean score per seat after each turn, with a band (the middle 95% of games, or pass
    ``band=("lo", "hi")`` for the mean's interval).

    ``table``: seat, turn, mean, and the ``band`` columns, for one (ruleset, players).
    Seats take their palette colours.
    """
    for seat, part in table.groupby("seat", sort=True):
        part = part.sort_values("turn")
        colour = palette.seat_colour(int(seat))
        turn = part["turn"].to_numpy()
        ax.fill_between(turn, part[band[0]], part[band[1]], color=colour, alpha=0.25, linewidth=0)
        ax.plot(
            turn,
            part["mean"],
            linestyle=palette.linestyle(int(seat)),
            markevery=max(len(part) // 8, 1),
            label=player_label(int(seat)),
            path_effects=_seat_line(int(seat)),
            **_seat_style(int(seat)),
        )
    ax.set_xlabel("turn")
    ax.set_ylabel("score (dirhams + visible squares)")
    ax.grid(color=palette.GRID)
    ax.legend(loc=BEST, fontsize="small")
    set_title(ax, title)
    return ax


def skill_positions(levels: pd.DataFrame, strength: pd.DataFrame | None) -> pd.DataFrame:
    """Where each level sits on the skill chart's x axis: at its measured Elo.

    ``levels``: level_index, level (one row each); ``strength``: the report's
    skill_strength rows of the same (players, rule set) (level, elo, elo_lo, elo_hi,
    status). A level with no finite strength sits off the scale: 'never won' left of the
    weakest measured level, 'never lost' right of the strongest, 'not measured' at the
    right end. Without two measured levels the axis is the declared order (x = 0, 1, ...).
    Returns level_index, level, x, elo, elo_lo, elo_hi, status, in the declared order."""
    out = levels[["level_index", "level"]].sort_values("level_index").reset_index(drop=True)
    cols = ["elo", "elo_lo", "elo_hi", "status"]
    if strength is not None and len(strength):
        out = out.merge(strength[["level", *cols]], on="level", how="left")
    else:
        out = out.assign(elo=np.nan, elo_lo=np.nan, elo_hi=np.nan, status="not measured")
    out["status"] = out["status"].fillna("not measured")
    finite = out["status"].eq("measured") & np.isfinite(out["elo"].to_numpy(dtype=float))
    if finite.sum() < 2:
        return out.assign(x=np.arange(len(out), dtype=float), elo_axis=False)
    elo = out.loc[finite, "elo"].to_numpy(dtype=float)
    low, high = float(elo.min()), float(elo.max())
    gap = max(0.2 * (high - low), 50.0)
    x = out["elo"].to_numpy(dtype=float).copy()
    x[(out["status"] == "never won").to_numpy()] = low - gap
    x[(out["status"] == "never lost").to_numpy()] = high + gap
    x[(out["status"] == "not measured").to_numpy()] = high + 2 * gap
    return out.assign(x=x, elo_axis=True)


def _level_ticks(where: pd.DataFrame, elo_axis: bool, near: float) -> tuple[list[float], list[str]]:
    """The x ticks and labels of the levels: a measured level's name and Elo; levels
    closer than `near` on the axis share one tick ('a, b' over their Elo range), so
    their labels do not overlap."""
    groups: list[list[Any]] = []
    for r in where.sort_values("x").itertuples():
        close = groups and r.status == "measured" and groups[-1][-1].status == "measured"
        if elo_axis and close and r.x - groups[-1][-1].x < near:
            groups[-1].append(r)
        else:
            groups.append([r])
    ticks, labels = [], []
    for g in groups:
        names = ", ".join(str(r.level) for r in g)
        ticks.append(float(np.mean([r.x for r in g])))
        if not elo_axis:
            labels.append(names)
        elif g[0].status == "measured":
            elo = sorted({f"{r.elo:.0f}" for r in g}, key=float)
            labels.append(f"{names}\n{'-'.join([elo[0], elo[-1]][: len(elo)])} Elo")
        else:
            labels.append(f"{names}\n{g[0].status}")
    return ticks, labels


def plot_skill_effects(
    table: pd.DataFrame,
    ax: Axes,
    title: str | None = None,
    ylabel: str = SEAT_EFFECT_LABEL,
    strength: pd.DataFrame | None = None,
    ordered: bool = True,
) -> Axes:
    """Each seat's win share minus the fair share (pp) against the skill levels' measured
    strength, for one (players, rule set).

    ``table`` has level_index, level, seat, effect_pp, effect_lo_pp, effect_hi_pp;
    ``strength`` the levels' skill_strength rows (see `skill_positions`). The x axis is
    Elo: the levels sit at their measured strength, each with its Elo interval as a light
    band, so levels 10 Elo apart sit close and levels 600 apart far; a level with no finite
    strength sits beyond a dashed break, labelled. Without strengths (player models, or
    fewer than two measured levels) the levels sit in their declared order, evenly; with
    ``ordered=False`` (player models: no order) they are not joined by lines. Any
    per-seat effect in pp with its interval plots the same way (a variant's, with its own
    ``ylabel``)."""
    where = skill_positions(table.drop_duplicates("level_index"), strength)
    elo_axis = bool(where["elo_axis"].iloc[0]) if len(where) else False
    x_of = dict(zip(where["level_index"].astype(int), where["x"], strict=True))
    measured = where[where["status"].eq("measured") & np.isfinite(where["elo"].astype(float))]
    span = float(np.ptp(where["x"])) if len(where) > 1 else 1.0
    seats = sorted(int(s) for s in table["seat"].unique())
    width = (0.012 * span if elo_axis else 0.5) / max(len(seats), 1)
    if elo_axis:
        for r in measured.itertuples():
            ax.axvspan(r.elo_lo, r.elo_hi, color=palette.GRID, alpha=0.6, linewidth=0, zorder=0)
        # a dashed break halfway between the measured range and the levels off its scale
        lo, hi = float(measured["x"].min()), float(measured["x"].max())
        off = where.loc[~where.index.isin(measured.index), "x"]
        breaks = []
        if (off < lo).any():
            breaks.append((float(off[off < lo].max()) + lo) / 2)
        if (off > hi).any():
            breaks.append((float(off[off > hi].min()) + hi) / 2)
        for at in breaks:
            ax.axvline(at, color=palette.FAIR, linestyle="--", linewidth=0.8)
    for seat in seats:
        part = table[table["seat"] == seat].sort_values("level_index")
        x = (
            np.array([x_of[int(i)] for i in part["level_index"]])
            + (seat - (len(seats) - 1) / 2) * width
        )
        eff = part["effect_pp"].to_numpy(dtype=float)
        ax.errorbar(
            x,
            eff,
            yerr=_errors(
                eff,
                part["effect_lo_pp"].to_numpy(dtype=float),
                part["effect_hi_pp"].to_numpy(dtype=float),
            ),
            linestyle="-" if ordered else "none",
            capsize=2,
            label=player_label(seat),
            path_effects=_seat_line(seat),
            **_seat_style(seat),
        )
    ax.axhline(0.0, color=palette.FAIR, linewidth=1.0, linestyle=":")
    ticks, labels = _level_ticks(where, elo_axis, 0.07 * span)
    ax.set_xticks(ticks, labels, fontsize="small")
    if elo_axis:
        pad = 0.08 * span
        ax.set_xlim(float(where["x"].min()) - pad, float(where["x"].max()) + pad)
        ax.set_xlabel(
            "the level's strength: Elo in the games where the levels meet (band: 95% interval)"
            "\nevery seat plays the level"
        )
    else:
        ax.set_xlim(float(where["x"].min()) - 0.6, float(where["x"].max()) + 0.6)
        ax.set_xlabel(
            "level (every seat plays it), in the declared order"
            if ordered
            else "player model (every seat plays it)"
        )
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", color=palette.GRID)
    ax.legend(loc=BEST, fontsize="small", ncols=min(len(seats) + 1, 5))
    set_title(ax, title)
    return ax


def plot_decides(table: pd.DataFrame, ax: Axes, title: str | None = None) -> Axes:
    """The restricted-play measures as horizontal bars (%) with intervals; a dotted mark at
    each win rate's fair share. ``table``: what, ruleset, players, rate, lo, hi, fair_share."""
    rows = table.reset_index(drop=True)
    y = np.arange(len(rows))[::-1]
    rate = 100 * rows["rate"].to_numpy(dtype=float)
    err = _errors(
        rate, 100 * rows["lo"].to_numpy(dtype=float), 100 * rows["hi"].to_numpy(dtype=float)
    )
    ax.barh(y, rate, xerr=err, color=palette.INK, alpha=0.75, capsize=3, height=0.6)
    for yi, fair in zip(y, rows["fair_share"].to_numpy(dtype=float), strict=True):
        if np.isfinite(fair):  # the fair share of a win rate, across its bar
            ax.plot([100 * fair] * 2, [yi - 0.4, yi + 0.4], color="black", linestyle=":", zorder=3)
    ax.set_yticks(
        y,
        [
            textwrap.fill(str(r.what), 30)
            + f"\n({r.ruleset}, {r.players} players, n={_count(r.n)})"
            for r in rows.itertuples()
        ],
        fontsize="small",
    )
    _percent_axis(ax, 100.0)
    return _rows_end(ax, "% of games (win rate) or of blocks (seating changes the winner)", title)


def _value_ticks(ax: Axes, xs: np.ndarray, names: Mapping[float, str] | None) -> None:
    """The swept values as the x ticks (named lists by their names)."""
    values = np.unique(xs)
    labels = [names.get(float(v), str(v)) if names else f"{v:g}" for v in values]
    ax.set_xticks(values, labels, fontsize="small")


def plot_response(
    points: pd.DataFrame,
    curve: pd.DataFrame,
    ax: Axes,
    margin_pp: float,
    xlabel: str,
    names: Mapping[float, str] | None = None,
) -> Axes:
    """Each seat's effect (pp) against a swept value: points with intervals, the fitted
    curve and its band, and the +-margin of a fair seat shaded.

    ``points``: seat, x, effect_pp, effect_lo_pp, effect_hi_pp (one row per seat and
    value); ``curve``: the same columns on a fine grid of x (empty: no curve). ``names``:
    labels of the x values (named lists).
    """
    ax.axhspan(
        -margin_pp,
        margin_pp,
        color=palette.GRID,
        alpha=0.6,
        linewidth=0,
        label=f"fair within ±{margin_pp:g} pp",
    )
    ax.axhline(0.0, color=palette.FAIR, linewidth=1.0, linestyle=":")
    seats = sorted(int(s) for s in points["seat"].unique())
    span = float(np.ptp(points["x"])) if len(points) else 1.0
    dodge = 0.012 * (span or 1.0)
    for seat in seats:
        colour = palette.seat_colour(seat)
        line = curve.loc[curve["seat"] == seat].sort_values("x") if len(curve) else curve
        if len(line) and line["effect_pp"].notna().all():
            ax.fill_between(
                line["x"],
                line["effect_lo_pp"],
                line["effect_hi_pp"],
                color=colour,
                alpha=0.18,
                linewidth=0,
            )
            ax.plot(
                line["x"],
                line["effect_pp"],
                color=colour,
                linewidth=1.6,
                path_effects=_seat_line(seat),
            )
        part = points.loc[points["seat"] == seat].sort_values("x")
        x = part["x"].to_numpy(dtype="float64") + (seat - (len(seats) - 1) / 2) * dodge
        est = _col(part, "effect_pp")
        ax.errorbar(
            x,
            est,
            yerr=_errors(est, _col(part, "effect_lo_pp"), _col(part, "effect_hi_pp")),
            fmt="none",
            ecolor=colour,
            capsize=2,
        )
        ax.plot(x, est, linestyle="none", label=player_label(seat), **_seat_style(seat))
    _value_ticks(ax, points["x"].to_numpy(), names)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(SEAT_EFFECT_LABEL)
    ax.grid(axis="y", color=palette.GRID)
    ax.legend(loc=BEST, fontsize="small", ncols=min(len(seats) + 1, 5))
    return ax


def plot_response_metric(
    table: pd.DataFrame,
    ax: Axes,
    ylabel: str,
    scale: float = 1.0,
    names: Mapping[float, str] | None = None,
) -> Axes:
    """One per-game measure (mean and interval) against the swept value; ``table``: x,
    mean, lo, hi. Empty: the panel says that the measure is not available."""
    if table.empty:
        ax.text(
            0.5,
            0.5,
            "not measured\n(no moves recorded)",
            ha="center",
            va="center",
            transform=ax.transAxes,
            fontsize="small",
            color=palette.FAIR,
        )
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(ylabel, fontsize="small")
        return ax
    part = table.sort_values("x")
    est = _col(part, "mean", scale)
    ax.errorbar(
        part["x"],
        est,
        yerr=_errors(est, _col(part, "lo", scale), _col(part, "hi", scale)),
        color=palette.INK,
        marker="o",
        markersize=3,
        capsize=2,
        linewidth=1.0,
    )
    _value_ticks(ax, part["x"].to_numpy(), names)
    _at_least_span(ax, METRIC_MIN_SPAN)
    ax.tick_params(labelsize="small")
    ax.grid(axis="y", color=palette.GRID)
    ax.set_title(ylabel, fontsize="small")
    return ax


#: a measure's panel spans at least this share of its largest value: a game 0.4 turns
#: longer in 48 is drawn as the 1% it is, not from the panel's foot to its top
METRIC_MIN_SPAN = 0.1


def _at_least_span(ax: Axes, share: float) -> None:
    """Widen the y axis about its middle to `share` of its largest absolute value where
    the autoscaled one is narrower (so a measure that is never negative stays above 0)."""
    lo, hi = ax.get_ylim()
    need = share * max(abs(lo), abs(hi))
    if hi - lo < need:
        middle = (lo + hi) / 2
        ax.set_ylim(middle - need / 2, middle + need / 2)
