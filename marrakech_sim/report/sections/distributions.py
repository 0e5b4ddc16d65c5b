"""The report's section "Distributions": winning margins, game lengths, score over turns.

Its tables (``distributions``, ``histograms``, ``score_over_turns``) are summed during the
shared pass by `sections.variants` (the same per-game metrics); this module draws and
words them.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from marrakech_sim import palette, plots
from marrakech_sim.report import findings
from marrakech_sim.report.fmt import count, num
from marrakech_sim.report.sections import base
from marrakech_sim.report.sections.base import BaseSection, Context, Figures, Part, panels, rows
from marrakech_sim.report.tables import ReportTables


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


class DistributionSection(BaseSection):
    """The section "Distributions"."""

    name = "distributions"

    def figures(self, rt: ReportTables) -> Figures:
        t = rt.tables
        charts: Figures = {}

        def add(name: str, title: str, fig: Any) -> None:
            charts[name] = (title, fig)

        ruleset_colour = palette.ruleset_colours(t["rulesets"]["ruleset"].astype(str))
        players_of = base.players_of(t)
        hist, dist = t["histograms"], t["distributions"]
        order = sorted(hist["ruleset"].unique(), key=lambda r: (-players_of.get(r, 0), r))
        margins = hist.loc[hist["metric"] == "margin"]
        if not margins.empty:
            missing = (
                dist.loc[dist["metric"] == "margin"].set_index("ruleset")["n_missing"]
                if "n_missing" in dist
                else pd.Series(dtype=float)
            )
            fig, axes = panels(len(order), 2, 5.0, 3.3)
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
            fig.suptitle(
                "Winning margins; hatched: games whose runner-up went bankrupt (no margin)"
            )
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
            fig, axes = panels(len(groups), 2, 5.5, 3.8)
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

    def parts(self, ctx: Context, chart_titles: dict[str, str]) -> list[Part]:
        rt = ctx.rt
        t = rt.tables
        ch = list(chart_titles)
        s = Part("Distributions")
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
            (n, chart_titles[n])
            for n in ("dist_margin", "dist_turns", "score_over_turns")
            if n in ch
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
        return [s]
