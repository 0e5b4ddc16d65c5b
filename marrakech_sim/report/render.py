"""Assemble the report: finding titles, charts, and the HTML / Markdown / CSV files.

The HTML is one self-contained file (charts as base64 PNG ``data:`` URIs, inline CSS, no
script, no external reference) rendered by jinja2 with autoescaping, so strategy and
rule set names from a user's config are shown as text, never as markup. The Markdown
has the same tables and links the PNG files written beside it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import numpy as np
import pandas as pd

from marrakech_sim import palette, plots
from marrakech_sim.report import findings
from marrakech_sim.report.fmt import count, interval, num, p_is, pct, pct2, pp, pp2, pval
from marrakech_sim.report.tables import ReportTables


@dataclass
class Section:
    """One numbered section: paragraphs, charts (name, title) and tables."""

    title: str
    paragraphs: list[str] = field(default_factory=list)
    items: list[str] = field(default_factory=list)
    charts: list[tuple[str, str]] = field(default_factory=list)
    tables: list[tuple[str, list[str], list[list[str]]]] = field(default_factory=list)


# ---------------------------------------------------------------- formatting


Column = tuple[str, Callable[[Any], str]]


def rows(table: pd.DataFrame, columns: Sequence[Column]) -> tuple[list[str], list[list[str]]]:
    """Header and formatted rows; each column is (header, function of the row)."""
    return [h for h, _ in columns], [[fn(r) for _, fn in columns] for r in table.itertuples()]


# ---------------------------------------------------------------- findings (chart titles)


def _covers_zero(lo: float, hi: float) -> bool:
    return lo <= 0.0 <= hi


def win_rate_finding(wr: pd.DataFrame) -> str:
    """Title for the win-rate chart: the strategy furthest above its fair share, in the
    rule set where it is (each rule set is judged against its own 1/players)."""
    above = wr["rate"] - wr["fair_share"]
    best = wr.loc[above.idxmax()]
    if wr["strategy"].nunique() == 1:
        return f"{best.strategy} wins {pct(best.rate)} of its games (n={count(best.n_games)})"
    clear = not (best.lo <= best.fair_share <= best.hi)
    verb = "wins most often" if clear else "wins most often, but within chance of a fair share"
    where = f" under {findings.title(best.ruleset)}" if wr["ruleset"].nunique() > 1 else ""
    return (
        f"{best.strategy} {verb}{where}: {pct(best.rate)} vs fair {pct(best.fair_share)} "
        f"(n={count(best.n_games)})"
    )


def h2h_finding(h2h: pd.DataFrame, players_of: dict[str, int]) -> str:
    """Title for the head-to-head heatmaps (one per rule set)."""
    top = h2h.sort_values(["rate", "ruleset"], ascending=[False, True]).iloc[0]
    return (
        f"Most one-sided pairing: {top.strategy} ahead of {top.opponent} "
        f"in {pct(top.rate)} of {count(top.n_games)} games "
        f"({findings.title(top.ruleset)}, {players_of.get(top.ruleset, '?')} players)"
    )


def seat_finding(shares: pd.DataFrame) -> str:
    """Title for the seat-advantage chart: the largest effect, or that none is clear."""
    tab = shares.assign(_abs=shares["effect_pp"].abs()).sort_values("_abs", ascending=False)
    clear = tab.loc[~((tab["effect_lo_pp"] <= 0) & (tab["effect_hi_pp"] >= 0))]
    if clear.empty:
        return "No seat's win share differs clearly from a fair share"
    r = clear.iloc[0]
    more = "more" if r.effect_pp > 0 else "less"
    return (
        f"Player {int(r.seat) + 1} wins {abs(r.effect_pp):.1f} pp {more} than a fair share "
        f"({findings.title(r.ruleset)}, {r.players} players, n={count(r.n_games)})"
    )


def rating_finding(ratings: pd.DataFrame, ruleset: str = "", players: int = 0) -> str:
    """Title for one group's ratings panel."""
    tab = ratings.sort_values("elo", ascending=False)
    top = tab.iloc[0]
    where = f"{findings.title(ruleset)}, {players} players: " if ruleset else ""
    if len(tab) < 2:
        return f"{where}{top.strategy} {top.elo:.0f} Elo"
    second = tab.iloc[1]
    return (
        f"{where}{top.strategy} {top.elo - second.elo:.0f} Elo above {second.strategy} "
        f"(P(stronger) = {top.p_above_next:.2f})"
    )


def forest_finding(metric: str, part: pd.DataFrame) -> str:
    """Title for one metric's forest plot, the difference in its unit (pp for shares)."""
    sig = part.loc[part["reject_holm"]]
    name = metric_name(metric)
    if sig.empty:
        return f"{name}: no rule set differs clearly from its baseline"
    r = sig.iloc[int(np.argmax(np.abs(sig["diff"].to_numpy())))]
    diff = float(r["diff"])
    word = "higher" if diff > 0 else "lower"
    amount = (
        f"{abs(100 * diff):.1f} pp"
        if _is_share(metric)
        else f"{abs(diff):.2f} {UNITS.get(metric, '')}".strip()
    )
    return (
        f"{name}: {findings.title(r['ruleset'])} {word} than {findings.title(r['baseline'])} "
        f"by {amount}"
    )


def _seat_of(metric: str) -> int | None:
    """The seat of a per-seat win-share metric (seat_2_share: 2), else None."""
    found = re.fullmatch(r"seat_(\d+)_share", metric)
    return int(found.group(1)) if found else None


def metric_name(metric: str) -> str:
    """A variant metric as a chart names it: a seat's share by its player, counted from 1."""
    seat = _seat_of(metric)
    if seat is not None:
        return f"{plots.player_label(seat)}'s win share"
    words = findings.metric_words(metric)[0]
    return words[0].upper() + words[1:] if words != metric else metric


def distribution_finding(summary: pd.DataFrame, metric: str) -> str:
    """Title for a distribution chart: medians and the middle 90% per rule set."""
    part = summary.loc[summary["metric"] == metric]
    meds = "; ".join(
        f"{findings.title(r.ruleset)} {r.q50:g} ({r.q5:g}-{r.q95:g})" for r in part.itertuples()
    )
    noun = {"margin": "Winning margin", "turns": "Game length"}.get(metric, metric)
    return f"{noun}, median (5%-95%): {meds}"


def score_finding(part: pd.DataFrame, ruleset: str, players: int) -> str:
    """Title for one score-over-turns panel: who leads at the last turn drawn, and how surely.

    The mean score is not the win share (a seat can score more on average and win less
    often), so the title reports the scores and whether their intervals separate.
    """
    last_turn = int(part["turn"].max())
    last = part.loc[part["turn"] == last_turn].sort_values("mean", ascending=False)
    top, rest = last.iloc[0], last.iloc[1:]
    clear = bool(len(rest)) and bool((top["lo"] > rest["hi"]).all())
    lead = (
        f"{plots.player_label(top.seat)} ahead"
        if clear
        else f"no player clearly ahead ({plots.player_label(top.seat)} highest, intervals overlap)"
    )
    return (
        f"{findings.title(ruleset)}, {players} players, after turn {last_turn}: mean scores "
        f"{last['mean'].min():.1f}-{top['mean']:.1f}; {lead}"
    )


def _is_share(metric: str) -> bool:
    """Whether a variant metric is a share (shown in % and pp): `findings.metric_words`."""
    return findings.metric_words(metric)[1] == "pp"


UNITS = {
    "turns": "turns",
    "margin": "points",
    "lead_changes": "lead changes",
    "decided_turn": "turns",
}


def _panels(n: int, cols: int, width: float, height: float) -> tuple[Any, list[Any]]:
    """A figure of n panels in ``cols`` columns; unused axes are switched off."""
    cols = max(min(cols, n), 1)
    nrows = math.ceil(n / cols)
    fig = plots.new_figure(width * cols, height * nrows)
    axes = list(fig.subplots(nrows, cols, squeeze=False).ravel())
    for ax in axes[n:]:
        ax.set_axis_off()
    return fig, axes[:n]


def _metric(metric: str, x: float) -> str:
    """A per-game metric's mean: shares in percent, a share's excess over the fair share
    (seat_advantage) in percentage points, others as numbers."""
    if metric == "seat_advantage":
        return pp(100 * x, 2)
    return pct(x, 2) if _is_share(metric) else num(x, 4)


def _diff(metric: str, x: float) -> str:
    """A difference of a metric: shares in percentage points, others in their unit."""
    if _is_share(metric):
        return pp(100 * x, 2)
    return f"{x:+.3g} {UNITS.get(metric, '')}".strip()


def _lineup_label(lineup: str, strategy: str) -> str:
    others = [s for s in str(lineup).split("|")]
    others.remove(strategy) if strategy in others else None
    return f"{strategy} vs {', '.join(others)}" if others else strategy


def make_charts(rt: ReportTables) -> dict[str, tuple[str, bytes, str]]:
    """Every chart: name -> (title, PNG bytes, inline SVG text)."""
    return {
        name: (title, plots.to_png(fig), plots.to_svg(fig))
        for name, (title, fig) in chart_figures(rt).items()
    }


def _one_side(part: pd.DataFrame) -> pd.DataFrame:
    """One row per 2-player line-up: the side that won more (the other won the rest)."""
    return part.sort_values("rate", ascending=False, kind="stable").drop_duplicates("lineup")


def chart_figures(rt: ReportTables) -> dict[str, tuple[str, Any]]:
    """Every chart as a matplotlib figure: name -> (title, Figure)."""
    t = rt.tables
    charts: dict[str, tuple[str, Any]] = {}
    names = set(t["win_rates"]["strategy"].astype(str)) if "win_rates" in t else set()
    strategy_colour = palette.strategy_colours(names)
    ruleset_colour = palette.ruleset_colours(t["rulesets"]["ruleset"].astype(str))

    def add(name: str, title: str, fig: Any) -> None:
        charts[name] = (title, fig)

    players_of = dict(zip(t["rulesets"]["ruleset"], t["rulesets"]["players"], strict=True))
    lwr = t.get("lineup_win_rates", pd.DataFrame())
    if not lwr.empty:
        groups = [
            (ruleset, _one_side(part) if players_of.get(ruleset) == 2 else part)
            for ruleset, part in sorted(
                lwr.groupby("ruleset"), key=lambda g: (-players_of.get(g[0], 0), g[0])
            )
        ]
        sizes = [len(part) for _, part in groups]
        fig = plots.new_figure(8.5, 0.8 * len(groups) + 0.24 * sum(sizes) + 0.6)
        grid = fig.subplots(len(groups), 1, squeeze=False, height_ratios=[n + 3 for n in sizes])
        for ax, (ruleset, part) in zip(grid[:, 0], groups, strict=True):
            part = part.assign(
                label=[_lineup_label(r.lineup, r.strategy) for r in part.itertuples()],
                # a constant (a strategy in every seat) is drawn as a point with no bar
                lo=part["lo"].fillna(part["rate"]),
                hi=part["hi"].fillna(part["rate"]),
            ).sort_values(["lineup", "rate"], ascending=[True, False])
            games = part["n_games"]
            n_text = (
                f"{count(games.iloc[0])} games per line-up"
                if games.nunique() == 1
                else f"{count(games.min())}-{count(games.max())} games per line-up"
            )
            if players_of.get(ruleset) == 2:
                n_text += "; each pairing once: the other side won the rest"
            plots.plot_win_rates(
                part,
                ax,
                f"{findings.title(ruleset)}, {players_of.get(ruleset, '?')} players ({n_text})",
                colours=strategy_colour,
                counts=False,
            )
        title = win_rate_finding(t["win_rates"])
        fig.suptitle("Win rate per strategy and line-up; dotted: the fair share 1/players")
        add("win_rates", title, fig)
    h2h = t["head_to_head"]
    if not h2h.empty:  # one matrix per rule set: nothing pools rule sets or player counts
        title = h2h_finding(h2h, players_of)
        groups = sorted(h2h.groupby("ruleset"), key=lambda g: (-players_of.get(g[0], 0), g[0]))
        n = h2h["strategy"].nunique()
        columns = min(2, len(groups))
        rows_ = -(-len(groups) // columns)
        fig = plots.new_figure(
            columns * max(5.5, 1.4 * n + 2.5), rows_ * max(4, 1.1 * n + 1.5) + 0.4
        )
        grid = fig.subplots(rows_, columns, squeeze=False)
        for ax, (ruleset, part) in zip(grid.flat, groups, strict=False):
            plots.plot_head_to_head(
                part, ax, f"{findings.title(ruleset)}, {players_of.get(ruleset, '?')} players"
            )
        for ax in grid.flat[len(groups) :]:
            ax.set_visible(False)
        fig.suptitle(title)
        add("head_to_head", title, fig)
    if not t["seat_shares"].empty:
        title = seat_finding(t["seat_shares"])
        n = t["seat_shares"].groupby(["players", "ruleset"]).ngroups
        fig = plots.new_figure(max(7, 2.0 * n), 4.2)
        plots.plot_seat_effects(t["seat_shares"], fig.add_subplot(), title)
        add("seat_advantage", title, fig)
    ratings = t.get("ratings", pd.DataFrame())
    if not ratings.empty:
        groups = list(ratings.groupby(["players", "ruleset"], sort=True))[::-1]
        per = ratings.groupby(["players", "ruleset"]).size().max()
        fig, axes = _panels(len(groups), 2, 5.2, 1.1 + 0.4 * per)
        for ax, ((players, ruleset), part) in zip(axes, groups, strict=True):
            plots.plot_ratings(
                part, ax, rating_finding(part, str(ruleset), int(players)), strategy_colour
            )
        plots.share_x(axes)
        add("ratings", "Ratings per player count and rule set (separate fits)", fig)
    comp = t.get("variant_comparison", pd.DataFrame())
    if not comp.empty:
        metrics = list(dict.fromkeys(comp["metric"]))
        per = max(comp.groupby("metric").size().max(), 1)
        fig, axes = _panels(len(metrics), 1, 8.0, 1.2 + 0.4 * per)
        for ax, metric in zip(axes, metrics, strict=True):
            part = comp.loc[comp["metric"] == metric]
            share = _is_share(metric)
            labels = [
                f"{findings.title(r.ruleset)} vs {findings.title(r.baseline)}\n"
                f"n={count(r.n_games)}/{count(r.n_games_baseline)}, "
                f"Holm p{p_is(r.p_holm)}"
                for r in part.itertuples()
            ]
            plots.plot_forest(
                part,
                ax,
                forest_finding(metric, part),
                scale=100.0 if share else 1.0,
                unit="pp" if share else UNITS.get(metric, ""),
                labels=labels,
                colours=ruleset_colour,
            )
        # the seats' win shares compare: one x range
        plots.share_x([ax for ax, m in zip(axes, metrics, strict=True) if _seat_of(m) is not None])
        fig.suptitle("Each rule set against its baseline; filled: significant after Holm")
        sig = int(comp["reject_holm"].sum())
        add("variants", f"{sig} of {len(comp)} differences significant after Holm", fig)
    hist, dist = t["histograms"], t["distributions"]
    players_of = dict(zip(t["rulesets"]["ruleset"], t["rulesets"]["players"], strict=True))
    order = sorted(hist["ruleset"].unique(), key=lambda r: (-players_of.get(r, 0), r))
    margins = hist.loc[hist["metric"] == "margin"]
    if not margins.empty:
        missing = (
            dist.loc[dist["metric"] == "margin"].set_index("ruleset")["n_missing"]
            if "n_missing" in dist
            else pd.Series(dtype=float)
        )
        fig, axes = _panels(len(order), 2, 5.0, 3.3)
        # one x range for every panel: from the least margin to the largest 99% point
        parts = [margins.loc[margins["ruleset"] == ruleset] for ruleset in order]
        span = (
            float(margins["value"].min()),
            max(plots.clip_top(part, 0.99) for part in parts if len(part)),
        )
        bankrupt = bool((missing > 0).any())
        for ax, ruleset, part in zip(axes, order, parts, strict=True):
            row = dist.loc[(dist["metric"] == "margin") & (dist["ruleset"] == ruleset)]
            n_out = float(missing.get(ruleset, 0.0))
            med = f"median {row['q50'].iloc[0]:g} points" if len(row) else ""
            plots.plot_distribution(
                part,
                ax,
                "winner's score minus runner-up's, points",
                f"{findings.title(ruleset)}, {players_of.get(ruleset, '?')} players: {med}",
                extra={ruleset: ("runner-up\nbankrupt", n_out)} if bankrupt else None,
                colours=ruleset_colour,
                span=span,
            )
        title = distribution_finding(dist, "margin")
        fig.suptitle("Winning margins; hatched: games whose runner-up went bankrupt (no margin)")
        add("dist_margin", title, fig)
    turns = hist.loc[hist["metric"] == "turns"]
    if not turns.empty:
        title = distribution_finding(dist, "turns")
        fig = plots.new_figure(8, 4.0)
        plots.plot_distribution(
            turns, fig.add_subplot(), "turns played", title, log=True, colours=ruleset_colour
        )
        add("dist_turns", title, fig)
    if "score_over_turns" in t:
        sot = t["score_over_turns"]
        groups = list(sot.groupby(["ruleset", "players"], sort=True))
        fig, axes = _panels(len(groups), 2, 5.5, 3.8)
        for ax, ((ruleset, players), part) in zip(axes, groups, strict=True):
            # turns most games reach: later turns are a subset of long games, not the field
            fewest = part.groupby("turn")["n_games"].transform("min")
            reached = part.loc[fewest >= 0.9 * part["n_games"].max()]
            plots.plot_score_over_turns(
                reached, ax, score_finding(reached, ruleset, int(players)), band=("lo", "hi")
            )
        n = rt.facts.get("moves_games", 0)
        fig.suptitle(
            f"Mean score after each turn with its 95% interval, over the turns 90% of games "
            f"reach (n={count(n)} games)"
        )
        add("score_over_turns", "Score over turns per seat", fig)
    return charts


# ---------------------------------------------------------------- sections


def build_sections(rt: ReportTables, chart_titles: dict[str, str]) -> list[Section]:
    """The seven sections of the report with their paragraphs, charts and tables."""
    t, f = rt.tables, rt.facts
    ch = [n for n in chart_titles]
    secs: list[Section] = []

    # 1. The data
    s = Section("1. The data")
    runs = t["runs"]
    s.paragraphs.append(
        f"{count(f['n_games'])} games in {count(f['n_blocks'])} blocks from {len(runs)} run(s); "
        f"{count(f['n_games'] - f['n_balance_games'])} ended in an error and are left out of every "
        f"balance statistic. Blocks are games that share dice and differ only in seating; every "
        f"interval below is computed from block totals."
    )
    s.tables.append(
        (
            "Runs",
            *rows(
                runs,
                [
                    ("run", lambda r: str(r.run_id)),
                    ("created", lambda r: str(r.created)),
                    ("program version", lambda r: str(r.program_version)),
                    ("seed", lambda r: str(r.seed)),
                    ("games played / planned", lambda r: f"{count(r.games)} / {r.games_planned}"),
                    ("error games", lambda r: count(r.error_games)),
                    ("blocks", lambda r: count(r.blocks)),
                    ("line-ups", lambda r: count(r.lineups)),
                    ("parts games/seats/moves", lambda r: r.parts),
                ],
            ),
        )
    )
    s.tables.append(
        (
            "Digests (sha256 over each table's part files)",
            *rows(
                runs,
                [
                    ("run", lambda r: str(r.run_id)),
                    ("games", lambda r: r.sha256_games[:16]),
                    ("seats", lambda r: r.sha256_seats[:16]),
                    ("moves", lambda r: (r.sha256_moves or "-")[:16]),
                ],
            ),
        )
    )
    s.tables.append(
        (
            "Rule sets (options that differ from the standard rules)",
            *rows(
                t["rulesets"],
                [
                    ("rule set", lambda r: str(r.ruleset)),
                    ("players", lambda r: str(r.players)),
                    ("differences", lambda r: str(r.differences)),
                    ("games", lambda r: count(r.n_games)),
                    ("error games", lambda r: count(r.error_games)),
                    ("blocks", lambda r: count(r.n_blocks)),
                ],
            ),
        )
    )
    s.tables.append(
        (
            "Line-ups",
            *rows(
                t["lineups"],
                [
                    ("rule set", lambda r: str(r.ruleset)),
                    ("line-up", lambda r: str(r.lineup).replace("|", ", ")),
                    ("games", lambda r: count(r.n_games_all)),
                    ("blocks", lambda r: count(r.n_blocks)),
                ],
            ),
        )
    )
    s.tables.append(
        (
            "Faults per strategy (games ended by the strategy's error)",
            *rows(
                t["faults"],
                [
                    ("strategy", lambda r: str(r.strategy)),
                    ("games", lambda r: count(r.n_games)),
                    ("faults", lambda r: count(r.n_errors)),
                    (
                        "rate [95%]",
                        lambda r: (
                            f"{pct(r.error_rate, 3)} {interval(r.lo, r.hi, lambda x: pct(x, 3))}"
                        ),
                    ),
                ],
            ),
        )
    )
    if not t["fault_kinds"].empty:
        s.tables.append(
            (
                "Faults by kind",
                *rows(
                    t["fault_kinds"],
                    [
                        ("kind", lambda r: str(r.kind) or "(unknown)"),
                        ("games", lambda r: count(r.n_games)),
                    ],
                ),
            )
        )
    secs.append(s)

    # 2. Win rates
    players_of = dict(zip(t["rulesets"]["ruleset"], t["rulesets"]["players"], strict=True))
    s = Section("2. Win rates")
    s.paragraphs.append(
        "Share of games won (a shared win counts 1/k to each winner; win counts are rounded to "
        "whole games) with 95% Wilson intervals at the effective number of games. A strategy's "
        "fair share is 1/players: each rule set (and so each player count) is apart, in the "
        "table as in the chart."
    )
    s.charts += [(n, chart_titles[n]) for n in ("win_rates", "head_to_head") if n in ch]
    s.tables.append(
        (
            "Per strategy",
            *rows(
                t["win_rates"],
                [
                    ("rule set", lambda r: str(r.ruleset)),
                    ("players", lambda r: str(players_of.get(r.ruleset, "?"))),
                    ("strategy", lambda r: str(r.strategy)),
                    ("games", lambda r: count(r.n_games)),
                    ("blocks", lambda r: count(r.n_blocks)),
                    ("wins", lambda r: count(r.wins)),
                    ("rate [95%]", _rate),
                    ("fair share", lambda r: pct(r.fair_share)),
                ],
            ),
        )
    )
    s.tables.append(
        (
            "Per line-up",
            *rows(
                t["lineup_win_rates"],
                [
                    ("rule set", lambda r: str(r.ruleset)),
                    ("line-up", lambda r: str(r.lineup).replace("|", ", ")),
                    ("strategy", lambda r: str(r.strategy)),
                    ("games", lambda r: count(r.n_games)),
                    ("rate [95%]", _rate),
                ],
            ),
        )
    )
    s.tables.append(
        (
            "Head to head (row strategy finished ahead of the opponent)",
            *rows(
                t["head_to_head"],
                [
                    ("rule set", lambda r: str(r.ruleset)),
                    ("strategy", lambda r: str(r.strategy)),
                    ("opponent", lambda r: str(r.opponent)),
                    ("games", lambda r: count(r.n_games)),
                    ("tied pairs", lambda r: count(r.tied_pairs)),
                    ("ahead [95%]", lambda r: f"{pct(r.rate)} {interval(r.lo, r.hi, pct)}"),
                ],
            ),
        )
    )
    secs.append(s)

    # 3. Seat advantage
    s = Section("3. Seat advantage")
    s.paragraphs.append(
        "Win share per seat against the fair share 1/players, per player count and rule set. "
        "Intervals and tests use block totals (cluster-robust), so the dice a block's games share "
        "are accounted for. The equal-share test is a block-level Wald test with an F reference "
        "(the Pearson chi-square, which treats games as independent, is shown beside it); the "
        "trend is the slope of win share over seat order. Shared wins and tie-break wins are "
        "counted separately." + _pooled_levels(t)
    )
    s.charts += [(n, chart_titles[n]) for n in ("seat_advantage",) if n in ch]
    s.tables.append(
        (
            "Win share per seat",
            *rows(
                t["seat_shares"],
                [
                    ("rule set", lambda r: str(r.ruleset)),
                    ("players", lambda r: str(r.players)),
                    ("seat", lambda r: str(r.seat)),
                    ("games", lambda r: count(r.n_games)),
                    ("blocks", lambda r: count(r.n_blocks)),
                    ("share [95%]", lambda r: f"{pct(r.share)} {interval(r.lo, r.hi, pct)}"),
                    (
                        "effect [95%]",
                        lambda r: (
                            f"{pp(r.effect_pp)} {interval(r.effect_lo_pp, r.effect_hi_pp, pp)}"
                        ),
                    ),
                    (
                        "outright / shared / tie-break wins",
                        lambda r: " / ".join(
                            count(x) for x in (r.outright_wins, r.shared_wins, r.tie_broken_wins)
                        ),
                    ),
                ],
            ),
        )
    )
    s.tables.append(
        (
            "Tests of equal shares and of a trend over seats",
            *rows(
                t["seat_tests"],
                [
                    ("rule set", lambda r: str(r.ruleset)),
                    ("players", lambda r: str(r.players)),
                    ("games", lambda r: count(r.n_games)),
                    ("blocks", lambda r: count(r.n_blocks)),
                    (
                        "F test on blocks: F (df1, df2), p",
                        lambda r: (
                            f"{num(r.f_block)} ({r.df_block}, {count(r.f_df2)}), "
                            f"p={pval(r.p_block)}"
                        ),
                    ),
                    ("Pearson chi2, p", lambda r: f"{num(r.chi2_pearson)}, p={pval(r.p_pearson)}"),
                    (
                        "trend per seat [95%], p",
                        lambda r: (
                            f"{pp(r.trend_pp, 2)} {interval(r.trend_lo_pp, r.trend_hi_pp, pp2)}, "
                            f"p={pval(r.trend_p)}"
                        ),
                    ),
                ],
            ),
        )
    )
    s.tables.append(
        (
            "Shared wins and tie-break decisions",
            *rows(
                t["ties"],
                [
                    ("rule set", lambda r: str(r.ruleset)),
                    ("players", lambda r: str(r.players)),
                    ("games", lambda r: count(r.n_games)),
                    (
                        "shared wins [95%]",
                        lambda r: (
                            f"{count(r.shared_wins)} = {pct(r.shared_rate, 2)} "
                            f"{interval(r.shared_lo, r.shared_hi, pct2)}"
                        ),
                    ),
                    (
                        "decided by tie-break [95%]",
                        lambda r: (
                            f"{count(r.tie_broken)} = {pct(r.tie_broken_rate, 2)} "
                            f"{interval(r.tie_broken_lo, r.tie_broken_hi, pct2)}"
                        ),
                    ),
                ],
            ),
        )
    )
    secs.append(s)

    # 4. Ratings
    s = Section("4. Ratings")
    if "ratings" in t:
        sample = (
            f"a sample of {count(f['rating_games'])} games (whole blocks, every match in "
            f"proportion) of the {count(f['n_games'])}"
            if f.get("rating_sampled")
            else f"all {count(f['n_games'])} games"
        )
        if f.get("rating_left_out"):
            sample += (
                f", less the {count(f['rating_left_out'])} games of strategies that no fit "
                "can compare (see the note)"
            )
        s.paragraphs.append(
            "Plackett-Luce fits of the finishing orders, one per player count and rule set "
            "(strengths need not carry over from one to another), each with its own seat term "
            "(maximum likelihood, block-clustered standard errors), on " + sample + ". Elo = "
            "1500 + 400/ln(10) x rating, 1500 being the mean of the strategies in that fit; "
            "P(stronger than next) is the probability, from the fit's covariance, that a strategy "
            "is stronger than the one listed below it."
        )
        if "rating_pooling" in t:
            r = t["rating_pooling"].iloc[0]
            verdict = (
                "rejects pooling, so no pooled ranking is given"
                if bool(r.rejected)
                else "does not reject pooling; the pooled ranking is shown below"
            )
            s.paragraphs.append(
                f"One fit pooled over the {r.groups} groups against separate fits: likelihood "
                f"ratio {r.lr:,.1f} on {r.df} df, p{p_is(r.p_value)} "
                f"({count(r.n_games)} games). The test {verdict}. (Games in a block share dice, "
                "so the test is approximate.)"
            )
        if f.get("rating_note"):
            s.paragraphs.append("Note: " + f["rating_note"] + ".")
        s.charts += [(n, chart_titles[n]) for n in ("ratings",) if n in ch]
        rating_columns: list[Column] = [
            ("rule set", lambda r: str(r.ruleset)),
            ("players", lambda r: str(r.players)),
            ("#", lambda r: str(r.order)),
            ("strategy", lambda r: str(r.strategy)),
            ("games", lambda r: count(r.n_games)),
            ("blocks", lambda r: count(r.n_blocks)),
            ("rating [95%]", lambda r: f"{r.rating:+.3f} [{r.lo:+.3f}, {r.hi:+.3f}]"),
            ("Elo [95%]", lambda r: f"{r.elo:.0f} [{r.elo_lo:.0f}, {r.elo_hi:.0f}]"),
            ("P(stronger than next)", lambda r: num(r.p_above_next, 3)),
        ]
        s.tables.append(
            ("Ratings per player count and rule set", *rows(t["ratings"], rating_columns))
        )
        if "ratings_pooled" in t:
            s.tables.append(
                (
                    "Pooled ratings (pooling not rejected)",
                    *rows(t["ratings_pooled"], rating_columns[2:]),
                )
            )
        s.tables.append(
            (
                "Seat effects per rule set (log-strength over seat 0)",
                *rows(
                    t["seat_effects"],
                    [
                        ("rule set", lambda r: str(getattr(r, "ruleset", ""))),
                        ("players", lambda r: str(r.players)),
                        ("seat", lambda r: str(r.seat)),
                        ("games", lambda r: count(r.n_games)),
                        ("effect [95%]", lambda r: f"{r.effect:+.3f} [{r.lo:+.3f}, {r.hi:+.3f}]"),
                        ("Elo", lambda r: f"{r.elo_effect:+.0f}"),
                        ("win chance, equal strategies", lambda r: pct(r.win_prob_equal)),
                    ],
                ),
            )
        )
    else:
        s.paragraphs.append("No ratings: " + f.get("rating_note", "nothing to rate") + ".")
    secs.append(s)

    # 5. Variant comparison
    s = Section("5. Variant comparison")
    comp = t.get("variant_comparison", pd.DataFrame())
    moves = (
        " Lead changes, comebacks and the turn decided come from the moves of "
        f"{count(f.get('moves_games', 0))} games"
        + (" (a sample of whole blocks)." if f.get("moves_sampled") else ".")
        if f.get("moves_games")
        else " No moves table: no lead changes, comebacks or turn decided."
    )
    s.paragraphs.append(
        "Per rule set, the mean of each per-game metric (seat_advantage: seat 0's win share minus "
        "1/players; margin: winner's score minus runner-up's; bankrupt: any seat went out; "
        "comeback: a winner was behind after half the turns; decided_turn: the turn from which "
        "the winner leads for good; winner_dirhams_share: dirhams' share of the winning score) "
        "and each rule set's difference from the baseline with the same "
        "player count (the one closest to the standard rules), with block-clustered 95% intervals "
        "and p-values Holm-corrected within each declared family: primary (each seat's win "
        "share, margin, bankruptcy rate, length), secondary (tie-breaks, the winner's dirhams "
        "share, lead changes, comebacks, turn decided), with t intervals on clusters - 1 "
        "degrees of freedom." + moves + _pooled_levels(t)
    )
    if comp.empty:
        s.paragraphs.append("Only one rule set per player count: nothing to compare.")
    else:
        s.charts += [(n, chart_titles[n]) for n in ("variants",) if n in ch]
        s.tables.append(
            (
                "Differences from the baseline",
                *rows(
                    comp,
                    [
                        ("family", lambda r: str(getattr(r, "family", ""))),
                        ("metric", lambda r: str(r.metric)),
                        ("rule set", lambda r: str(r.ruleset)),
                        ("baseline", lambda r: str(r.baseline)),
                        ("games", lambda r: f"{count(r.n_games)} / {count(r.n_games_baseline)}"),
                        (
                            "means",
                            lambda r: (
                                f"{_metric(r.metric, r.mean)} vs "
                                f"{_metric(r.metric, r.baseline_mean)}"
                            ),
                        ),
                        (
                            "difference [95%]",
                            lambda r: (
                                f"{_diff(r.metric, r.diff)} "
                                f"{interval(r.lo, r.hi, lambda x: _diff(r.metric, x))}"
                            ),
                        ),
                        ("p (Holm)", lambda r: f"{pval(r.p_value)} ({pval(r.p_holm)})"),
                    ],
                ),
            )
        )
    s.tables.append(
        (
            "Means per rule set",
            *rows(
                t["variant_summary"],
                [
                    ("rule set", lambda r: str(r.ruleset)),
                    ("metric", lambda r: str(r.metric)),
                    ("games", lambda r: count(r.n_games)),
                    ("blocks", lambda r: count(r.n_blocks)),
                    (
                        "mean [95%]",
                        lambda r: (
                            f"{_metric(r.metric, r.mean)} "
                            f"{interval(r.lo, r.hi, lambda x: _metric(r.metric, x))}"
                        ),
                    ),
                ],
            ),
        )
    )
    secs.append(s)

    # 6. Distributions
    s = Section("6. Distributions")
    s.paragraphs.append(
        "Final score margins (the winner's score minus the runner-up's; 0 for a shared win), "
        "game lengths, and each seat's score (dirhams + visible squares) after every turn. A "
        "game whose runner-up went bankrupt (with 2 players the game ends at the first "
        "bankruptcy) has no runner-up score and so no points margin: the margin chart shows "
        "those games as a bar of their own at the right, and the summaries below count the "
        "games with a points margin ('games') and those without ('no margin'). Game lengths "
        "are drawn on a log scale: nearly every game lasts until the rugs run out, and the "
        "log scale shows the shorter games bankruptcy ends."
    )
    s.charts += [
        (n, chart_titles[n]) for n in ("dist_margin", "dist_turns", "score_over_turns") if n in ch
    ]
    s.tables.append(
        (
            "Summaries",
            *rows(
                t["distributions"],
                [
                    ("rule set", lambda r: str(r.ruleset)),
                    ("metric", lambda r: str(r.metric)),
                    ("games", lambda r: count(r.n)),
                    ("no margin", lambda r: count(getattr(r, "n_missing", 0))),
                    ("mean", lambda r: num(r.mean, 4)),
                    ("sd", lambda r: num(r.sd, 3)),
                    (
                        "min / 5% / 25% / median / 75% / 95% / max",
                        lambda r: " / ".join(
                            f"{getattr(r, c):g}"
                            for c in ("min", "q5", "q25", "q50", "q75", "q95", "max")
                        ),
                    ),
                ],
            ),
        )
    )
    secs.append(s)

    # 7. Power
    s = Section("7. Power")
    s.paragraphs.append(
        "Each headline claim with its 95% interval, and what its data can detect: the "
        "smallest effect found with 80% power at this size (two-sided, 5% level), and the "
        "games needed for 80% power at the stated effect (1 pp for a share, 0.5 pp per seat "
        "for a trend, in the claim's own unit otherwise). `marrakech plan` sizes a study "
        "before it is run."
    )
    power = t["power"]
    if not power.empty:
        short = int((~power["detectable"].astype(bool)).sum())
        s.paragraphs.append(
            f"{short} of {len(power)} claims have data too few to detect their stated effect "
            "with 80% power."
        )
        s.tables.append(
            (
                "Claims",
                *rows(
                    power,
                    [
                        ("section", lambda r: str(r.section)),
                        ("claim", lambda r: str(r.claim)),
                        (
                            "estimate [95%]",
                            lambda r: (
                                f"{num(r.estimate, 3)} {interval(r.lo, r.hi, num)} {r.unit}".strip()
                            ),
                        ),
                        ("games", lambda r: count(r.n_games)),
                        (
                            "detectable with 80% power",
                            lambda r: f"{num(r.mde, 3)} {r.unit}".strip(),
                        ),
                        ("stated effect", lambda r: f"{num(r.target_effect, 3)} {r.unit}".strip()),
                        ("games for 80% power at it", lambda r: count(r.n_for_power)),
                    ],
                ),
            )
        )
    if "plan" in t:
        s.tables.append(
            (
                "Games needed to detect a 1 pp seat-0 advantage (alpha 0.05, power 0.8)",
                *rows(
                    t["plan"],
                    [
                        ("players", lambda r: str(r.players)),
                        ("design effect assumed", lambda r: num(r.design_effect, 3)),
                        ("observed", lambda r: num(r.design_effect_observed, 3)),
                        ("independent games", lambda r: count(r.n_games_independent)),
                        ("games", lambda r: count(r.n_games)),
                    ],
                ),
            )
        )
    secs.append(s)
    return _findings_first(rt, secs)


def _rate(r: Any) -> str:
    """A win rate with its interval, or a constant as a constant."""
    if getattr(r, "constant", False):
        return f"{pct(r.rate)} (a constant: it holds every seat, so its seats share every win)"
    return f"{pct(r.rate)} {interval(r.lo, r.hi, pct)}"


def _findings_first(rt: ReportTables, secs: list[Section]) -> list[Section]:
    """Summary first (the headline, the compact table, every finding, the glossary), the
    analysis sections renumbered, the data (provenance) as appendix."""
    table = rt.tables.get("findings")
    summary = Section("Summary")
    every = Section("Every finding")
    if table is not None and len(table):
        summary.paragraphs.append(findings.headline_paragraph(table))
        summary.paragraphs.append(findings.player_model(rt))
        glance = _at_a_glance(rt)
        if glance:
            summary.tables.append(glance)
        every.paragraphs.append(findings.family_note(table))
        every.items += findings.summary_lines(table)
    else:
        summary.paragraphs.append(findings.player_model(rt))
    summary.paragraphs.append(GLOSSARY)
    data, rest = secs[0], secs[1:]
    for i, sec in enumerate(rest, start=1):
        sec.title = f"{i}. " + sec.title.split(". ", 1)[-1]
    data.title = "Appendix: the data (runs, digests, rule sets, line-ups, faults)"
    return [summary, *([every] if every.items else []), *rest, data]


GLOSSARY = (
    "Words used here: *pp* (percentage points) is a difference of two percentages (26.7% "
    "against 25.0% is +1.7 pp); an *interval* [lo, hi] is the range the true value lies in "
    "with the stated confidence, given these games (games that share dice counted as one "
    "block); *Elo* measures strength: 100 Elo more wins about 64% of two-player games, 200 "
    "about 76%; a *margin* is the size the study says matters (its [report] table); "
    "*player 1* sits in the first seat (seat 0 in the tables). Verdicts: *it matters* "
    "(the interval lies beyond the margin), *real but small* (it excludes 0 but stays "
    "within the margin), *negligible* (it lies within the margin: an equivalence test), "
    "*undecided* (neither; the sentence says how many more games would decide it)."
)


def _at_a_glance(rt: ReportTables) -> tuple[str, list[str], list[list[str]]] | None:
    """The compact table: per rule set and player count of the study's mixed games, the
    largest seat gap (the family's interval), the mean game length, the bankruptcy rate,
    the winning margin and the turn from which the winner leads for good (95% intervals;
    the last from the moves' sample)."""
    t = rt.tables
    table = t.get("findings", pd.DataFrame())
    means = t.get("variant_summary", pd.DataFrame())
    seats = table.loc[table["question"] == "seat"] if len(table) else table
    if seats.empty:
        return None
    rows = []
    keys = ["players", "ruleset", "model"]
    for (players, ruleset, model), part in seats.groupby(keys, sort=False):
        top = part.loc[part["estimate"].abs().idxmax()]
        gap = (
            f"{str(top.subject).capitalize()} {pp(top.estimate)} "
            f"{interval(top.lo, top.hi)} ({top.verdict})"
        )

        def metric(name: str, unit: str, scale: float = 1.0, ruleset: str = ruleset) -> str:
            hit = means.loc[(means["ruleset"] == ruleset) & (means["metric"] == name)]
            if hit.empty:
                return "n/a"
            r = hit.iloc[0]
            mean, lo, hi = (scale * float(r[c]) for c in ("mean", "lo", "hi"))
            return f"{mean:.1f}{unit} [{lo:.1f}, {hi:.1f}]"

        model_words = str(model).replace("the study's mix of ", "mix: ")
        rows.append(
            [
                f"{findings.title(ruleset)}, {players} players",
                model_words,
                gap,
                metric("turns", ""),
                metric("bankrupt", "%", 100.0),
                metric("margin", ""),
                metric("decided_turn", ""),
            ]
        )
    header = [
        "rule set",
        "players' model",
        "largest seat gap",
        "turns",
        "bankruptcies",
        "winning margin (points)",
        "winner leads for good from turn",
    ]
    return ("At a glance (seat gap: the family's interval; the rest 95%)", header, rows)


# ---------------------------------------------------------------- output files

HTML_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }}</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 75em; margin: 2em auto;
       padding: 0 1em; color: #111; line-height: 1.4; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #999; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
th { background: #eee; }
.scroll { max-width: 100%; overflow-x: auto; }
figure { margin: 1em 0; max-width: 100%; }
figure svg { display: block; max-width: 100%; height: auto; }
figcaption { font-style: italic; }
caption { text-align: left; font-weight: bold; padding: 0.3em 0; }
.meta { color: #444; }
.findings li { margin: 0.4em 0; }
</style></head><body>
<h1>{{ title }}</h1>
<p class="meta">{{ subtitle }}</p>
<nav><ul>{% for s in sections %}
<li><a href="#s{{ loop.index }}">{{ s.title }}</a></li>{% endfor %}</ul></nav>
{% for s in sections %}
<section id="s{{ loop.index }}"><h2>{{ s.title }}</h2>
{% for p in s.paragraphs %}<p>{{ p }}</p>{% endfor %}
{% if s.items %}<ul class="findings">{% for item in s.items %}
<li>{{ item }}</li>{% endfor %}</ul>{% endif %}
{% for name, caption in s.charts %}<figure role="img" aria-label="{{ caption }}">
{{ images[name] | safe }}
<figcaption>{{ caption }}</figcaption></figure>{% endfor %}
{% for caption, header, body in s.tables %}<div class="scroll"><table>
<caption>{{ caption }}</caption>
<thead><tr>{% for h in header %}<th>{{ h }}</th>{% endfor %}</tr></thead>
<tbody>{% for row in body %}
<tr>{% for cell in row %}<td>{{ cell }}</td>{% endfor %}</tr>{% endfor %}</tbody></table></div>
{% endfor %}</section>
{% endfor %}
</body></html>
"""


# what Markdown would read as markup in the report's text, each escaped with a backslash
# (never an HTML entity): a tag or an entity, emphasis, a link's `](`, strikethrough, a cell
# break; `#` and `>` only where they would start a heading or a quote. Backticks pass: the
# report writes them around commands, and a code span is text, not markup.
_MD_MARKUP = re.compile(
    r"\\|<(?=[A-Za-z/!?])|&(?=#?\w+;)|\*|(?<!\w)_|_(?!\w)|\](?=[(\[:])|~|\||^[#>]"
)


def md_escape(text: str) -> str:
    """Text as Markdown that reads as itself: no markup, no HTML, no cell breaks.

    Only what Markdown would take for markup is escaped, with a backslash, so the file
    reads cleanly as plain text too ('p < 0.05', 'orient_at_end' and '[+0.1, +1.7]' stay
    as they are).
    """
    one_line = " ".join(str(text).splitlines())
    return _MD_MARKUP.sub(lambda m: "\\" + m.group(0), one_line)


def write_html(
    path: Path,
    title: str,
    subtitle: str,
    sections: list[Section],
    charts: dict[str, tuple[str, bytes, str]],
) -> None:
    """Write the self-contained HTML report; charts are inline SVG (crisp at any zoom).

    The SVG is matplotlib's, with text drawn as paths, so no name from a config reaches it
    as markup; everything else is autoescaped.
    """
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    images = {name: svg for name, (_, _, svg) in charts.items()}
    html = env.from_string(HTML_TEMPLATE).render(
        title=title, subtitle=subtitle, sections=sections, images=images
    )
    path.write_text(html, encoding="utf-8")


def write_markdown(path: Path, title: str, subtitle: str, sections: list[Section]) -> None:
    """Write the Markdown report; charts are the PNG files beside it."""
    lines = [f"# {md_escape(title)}", "", md_escape(subtitle), ""]
    for s in sections:
        lines += [f"## {md_escape(s.title)}", ""]
        for p in s.paragraphs:
            lines += [md_escape(p), ""]
        if s.items:
            lines += [f"- {md_escape(item)}" for item in s.items] + [""]
        for name, caption in s.charts:
            lines += [f"![{md_escape(caption)}]({name}.png)", "", f"*{md_escape(caption)}*", ""]
        for caption, header, body in s.tables:
            lines += [f"**{md_escape(caption)}**", ""]
            lines.append("| " + " | ".join(md_escape(h) for h in header) + " |")
            lines.append("|" + "---|" * len(header))
            lines += ["| " + " | ".join(md_escape(c) for c in row) + " |" for row in body]
            lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")


def csv_unit(metric: str) -> str:
    """The unit of a metric's values in the CSV tables (docs/report-tables.md): a share or
    a rate is a fraction from 0 to 1 (x 100 for %, a difference of them x 100 for pp)."""
    return "fraction" if _is_share(metric) else UNITS.get(metric, "")


CSV_DIGITS = 7  # significant digits of a float in the CSV tables: below every interval


def write_csv(table: pd.DataFrame, path: Path) -> None:
    """Write one table as CSV: floats to `CSV_DIGITS` significant digits (far finer than
    any interval here, without a tail of noise like 107759.33333334327), whole-number
    floats (counts) as integers, and beside a ``metric`` column the ``unit`` of its
    values."""
    out = table.copy()
    if "metric" in out and "unit" not in out:
        out.insert(out.columns.get_loc("metric") + 1, "unit", out["metric"].map(csv_unit))
    for name in out.columns:
        col = out[name]
        if col.dtype.kind == "f" and not np.isinf(col).any():
            known = col.dropna()
            if len(known) and (known == known.round()).all() and known.abs().max() < 2**53:
                out[name] = col.astype("Int64")
    out.to_csv(path, index=False, float_format=f"%.{CSV_DIGITS}g")


def _pooled_levels(t: dict[str, pd.DataFrame]) -> str:
    """A study with self-play games: say that this section leaves them out."""
    if t.get("skill_seats", pd.DataFrame()).empty:
        return ""
    return (
        " The self-play games (one strategy in every seat) are not in this section: each "
        "such strategy is a player model of its own, reported per model in the section on "
        "balance per skill level or player model."
    )
