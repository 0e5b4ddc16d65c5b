"""Charts for the report: each function draws one table onto an ``Axes`` and returns it.

matplotlib's object API only (``Figure()``, never pyplot: no global state, safe in
workers and tests). Charts must read in black-and-white print, so series differ by
marker, line style and hatch, never by colour alone; intervals are drawn as error bars
or grey bands. Titles are passed in by the caller and should state the finding.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINESTYLES = ("-", "--", ":", "-.")
GREYS = ("0.0", "0.35", "0.55", "0.2", "0.45", "0.65")


def style(i: int) -> dict[str, Any]:
    """Marker, line style and grey of the i-th series (distinct in black and white)."""
    return {
        "marker": MARKERS[i % len(MARKERS)],
        "linestyle": LINESTYLES[i % len(LINESTYLES)],
        "color": GREYS[i % len(GREYS)],
    }


def new_figure(width: float = 7.0, height: float = 4.0) -> Figure:
    """A pyplot-free figure with a constrained layout."""
    return Figure(figsize=(width, height), layout="constrained")


def to_png(fig: Figure, dpi: int = 110) -> bytes:
    """The figure as PNG bytes (byte-identical run to run)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    return buf.getvalue()


def _nonneg(parts: list[np.ndarray]) -> np.ndarray:
    """Error-bar lengths (2, n); rounding can put an estimate a hair outside its interval."""
    return np.maximum(np.vstack(parts), 0.0)


def _count(n: float) -> str:
    return f"{round(float(n)):,}"


def plot_win_rates(table: pd.DataFrame, ax: Axes, title: str | None = None) -> Axes:
    """Win rate per strategy with its interval; the fair share as an open marker.

    ``table``: strategy, rate, lo, hi, fair_share, n_games (``stats.win_rates``).
    """
    tab = table.sort_values("rate").reset_index(drop=True)
    y = np.arange(len(tab))
    rate = 100 * tab["rate"].to_numpy(dtype=float)
    err = _nonneg(
        [rate - 100 * tab["lo"].to_numpy(dtype=float), 100 * tab["hi"].to_numpy(dtype=float) - rate]
    )
    ax.errorbar(
        rate, y, xerr=err, fmt="o", color="black", capsize=3, label="win rate, 95% interval"
    )
    ax.plot(
        100 * tab["fair_share"].to_numpy(dtype=float),
        y,
        "|",
        color="0.4",
        markersize=14,
        markeredgewidth=2,
        label="fair share",
    )
    ax.set_yticks(
        y, [f"{s} (n={_count(n)})" for s, n in zip(tab["strategy"], tab["n_games"], strict=True)]
    )
    ax.set_xlabel("games won, %")
    ax.grid(axis="x", color="0.85")
    ax.legend(loc="lower right", fontsize="small")
    if title:
        ax.set_title(title)
    return ax


def plot_head_to_head(table: pd.DataFrame, ax: Axes, title: str | None = None) -> Axes:
    """Matrix of how often the row strategy finished ahead of the column one, with counts.

    ``table``: strategy, opponent, rate, n_games (``stats.head_to_head``). Grey scale
    from white (0%) to black (100%), with the percentage and the games in every cell.
    """
    names = sorted(set(table["strategy"]) | set(table["opponent"]))
    idx = {n: i for i, n in enumerate(names)}
    grid = np.full((len(names), len(names)), np.nan)
    counts = np.zeros_like(grid)
    for r in table.itertuples():
        grid[idx[r.strategy], idx[r.opponent]] = r.rate
        counts[idx[r.strategy], idx[r.opponent]] = r.n_games
    ax.imshow(np.ma.masked_invalid(grid), cmap="Greys", vmin=0.0, vmax=1.0)
    small = "x-small" if len(names) > 6 else "small"
    for i in range(len(names)):
        for j in range(len(names)):
            if np.isnan(grid[i, j]):
                ax.text(j, i, "-", ha="center", va="center", color="0.5")
                continue
            ink = "white" if grid[i, j] > 0.7 else "black"
            ax.text(
                j,
                i,
                f"{100 * grid[i, j]:.1f}%\nn={_count(counts[i, j])}",
                ha="center",
                va="center",
                color=ink,
                fontsize=small,
            )
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set_yticks(range(len(names)), names)
    ax.set_xlabel("opponent")
    ax.set_ylabel("strategy (finished ahead in % of games)")
    if title:
        ax.set_title(title)
    return ax


def plot_seat_effects(table: pd.DataFrame, ax: Axes, title: str | None = None) -> Axes:
    """Win share minus the fair share per seat, one series per (players, ruleset).

    ``table``: players, ruleset, seat, effect_pp, effect_lo_pp, effect_hi_pp
    (``stats.seat_win_shares``).
    """
    groups = list(table.groupby(["players", "ruleset"], sort=True))
    width = 0.6 / max(len(groups), 1)
    for i, ((players, ruleset), part) in enumerate(groups):
        x = part["seat"].to_numpy(dtype=float) + (i - (len(groups) - 1) / 2) * width
        eff = part["effect_pp"].to_numpy(dtype=float)
        err = _nonneg(
            [
                eff - part["effect_lo_pp"].to_numpy(dtype=float),
                part["effect_hi_pp"].to_numpy(dtype=float) - eff,
            ]
        )
        st = style(i)
        ax.errorbar(x, eff, yerr=err, capsize=3, label=f"{ruleset}, {players} players", **st)
    ax.axhline(0.0, color="black", linewidth=0.8)
    seats = sorted(int(s) for s in table["seat"].unique())
    ax.set_xticks(seats, [f"seat {s}" for s in seats])
    ax.set_ylabel("win share minus fair share, pp")
    ax.grid(axis="y", color="0.85")
    ax.legend(fontsize="small")
    if title:
        ax.set_title(title)
    return ax


def plot_ratings(ratings: pd.DataFrame, ax: Axes, title: str | None = None) -> Axes:
    """Elo rating per strategy with its interval, strongest at the top.

    ``ratings``: strategy, elo, elo_lo, elo_hi, n_games (``stats.fit_ratings().ratings``).
    """
    tab = ratings.sort_values("elo").reset_index(drop=True)
    y = np.arange(len(tab))
    elo = tab["elo"].to_numpy(dtype=float)
    err = _nonneg(
        [elo - tab["elo_lo"].to_numpy(dtype=float), tab["elo_hi"].to_numpy(dtype=float) - elo]
    )
    ax.errorbar(elo, y, xerr=err, fmt="s", color="black", capsize=3)
    ax.set_yticks(
        y, [f"{s} (n={_count(n)})" for s, n in zip(tab["strategy"], tab["n_games"], strict=True)]
    )
    ax.set_xlabel("Elo (1500 = average strategy), 95% interval")
    ax.grid(axis="x", color="0.85")
    if title:
        ax.set_title(title)
    return ax


def plot_forest(comparison: pd.DataFrame, ax: Axes, title: str | None = None) -> Axes:
    """Forest plot of rule-set differences for one metric: diff with interval per row.

    ``comparison``: ruleset, baseline, diff, lo, hi, p_holm, reject_holm, n_games
    (``stats.compare_variants`` rows of one metric). Filled markers: significant after
    Holm; open: not.
    """
    tab = comparison.reset_index(drop=True)
    y = np.arange(len(tab))[::-1]
    for yi, r in zip(y, tab.itertuples(), strict=True):
        filled = bool(r.reject_holm)
        ax.errorbar(
            [r.diff],
            [yi],
            xerr=[[max(r.diff - r.lo, 0.0)], [max(r.hi - r.diff, 0.0)]],
            fmt="D",
            capsize=3,
            color="black",
            markerfacecolor="black" if filled else "white",
        )
    ax.axvline(0.0, color="0.3", linestyle="--", linewidth=0.8)
    ax.set_yticks(
        y,
        [
            f"{r.ruleset} vs {r.baseline}\nn={_count(r.n_games)}/{_count(r.n_games_baseline)}, "
            f"Holm p={r.p_holm:.2g}"
            for r in tab.itertuples()
        ],
        fontsize="small",
    )
    ax.set_ylim(-0.7, len(tab) - 0.3)
    ax.grid(axis="x", color="0.85")
    if title:
        ax.set_title(title, fontsize="medium")
    return ax


def plot_distribution(hist: pd.DataFrame, ax: Axes, xlabel: str, title: str | None = None) -> Axes:
    """Share of games per value, one step line per rule set.

    ``hist``: ruleset, value, n_games (exact counts per value).
    """
    for i, (ruleset, part) in enumerate(hist.groupby("ruleset", sort=True)):
        part = part.sort_values("value")
        total = part["n_games"].sum()
        st = style(i)
        ax.step(
            part["value"],
            100 * part["n_games"] / total,
            where="mid",
            linestyle=st["linestyle"],
            color=st["color"],
            label=f"{ruleset} (n={_count(total)})",
        )
        ax.plot(
            part["value"],
            100 * part["n_games"] / total,
            linestyle="none",
            marker=st["marker"],
            color=st["color"],
            markersize=3,
            markevery=max(len(part) // 12, 1),
        )
    ax.set_xlabel(xlabel)
    ax.set_ylabel("games, %")
    ax.grid(color="0.9")
    ax.legend(fontsize="small")
    if title:
        ax.set_title(title)
    return ax


def plot_score_over_turns(
    table: pd.DataFrame, ax: Axes, title: str | None = None, band: Sequence[str] = ("q2.5", "q97.5")
) -> Axes:
    """Mean score per seat after each turn, with a band (default: the middle 95% of games).

    ``table``: seat, turn, mean, and the ``band`` columns, for one (ruleset, players)
    (``stats.score_over_turns``).
    """
    for i, (seat, part) in enumerate(table.groupby("seat", sort=True)):
        part = part.sort_values("turn")
        st = style(i)
        turn = part["turn"].to_numpy()
        ax.fill_between(turn, part[band[0]], part[band[1]], color="0.5", alpha=0.1, linewidth=0)
        ax.plot(
            turn,
            part["mean"],
            linestyle=st["linestyle"],
            marker=st["marker"],
            color=st["color"],
            markevery=max(len(part) // 8, 1),
            label=f"seat {seat}",
        )
    ax.set_xlabel("turn")
    ax.set_ylabel("score (dirhams + visible squares)")
    ax.grid(color="0.9")
    ax.legend(fontsize="small")
    if title:
        ax.set_title(title)
    return ax
