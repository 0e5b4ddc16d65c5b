"""The report's skill sections in words and charts: balance per skill level, what decides games.

Reads the tables of `report.sections.skill`; every sentence is generated from a row and
says which players (the skill level in every seat), rule set and player count it holds for.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from marrakech_sim import plots
from marrakech_sim.report.findings import (
    decides_sentence,
    fmt_metric,
    metric_trend_sentence,
    metric_words,
    span_metric,
    trend_sentence,
    variant_trend_sentence,
)
from marrakech_sim.report.fmt import count, interval, pp, pval
from marrakech_sim.report.render import Section
from marrakech_sim.report.tables import ReportTables


def skill_sections(rt: ReportTables) -> tuple[list[Section], dict[str, tuple[str, bytes, str]]]:
    """The two sections and their charts (name -> title, PNG, SVG); none without levels."""
    t = rt.tables
    seats = t.get("skill_seats", pd.DataFrame())
    sections: list[Section] = []
    charts: dict[str, tuple[str, bytes, str]] = {}
    levels = sorted(set(seats["level"])) if len(seats) else []
    if len(levels) >= 2:
        order = seats.drop_duplicates("level").sort_values("level_index")["level"].tolist()
        s = Section("Balance per skill level")
        s.paragraphs.append(
            "A skill level is one strategy in every seat: "
            + ", ".join(order)
            + " (weakest first, as the study lists them). Each level's seat effects come from "
            "its own games; no figure here pools levels. A seat's change with skill is the "
            "slope of a weighted line through the levels' effects; it grows, shrinks or "
            "reverses (the weakest and strongest levels' intervals on opposite sides of 0) "
            "only where that slope differs from 0 at the 5% level, and it varies where one "
            "step between neighbouring levels goes up and another down, each beyond its "
            "interval (a line would misdescribe it)."
        )
        s.paragraphs += [trend_sentence(r) for r in t["skill_trends"].itertuples()]
        groups = list(seats.groupby(["players", "ruleset"], sort=True))
        for (players, ruleset), part in groups:
            name = f"skill_{players}_{ruleset}"
            title = f"Seat effects against skill: {ruleset}, {players} players"
            fig = plots.new_figure(7.0, 4.0)
            plots.plot_skill_effects(part, fig.subplots(), title)
            charts[name] = (title, plots.to_png(fig), plots.to_svg(fig))
            s.charts.append((name, title))
        header = ["players", "rule set", "level", "seat", "effect", "95% interval", "games"]
        body = [
            [
                str(r.players),
                str(r.ruleset),
                str(r.level),
                str(r.seat),
                pp(r.effect_pp),
                interval(r.effect_lo_pp, r.effect_hi_pp),
                count(r.n_games),
            ]
            for r in seats.itertuples()
        ]
        s.tables.append(("Win share minus the fair share per seat and skill level", header, body))
        variants = t.get("skill_variants", pd.DataFrame())
        if len(variants):
            s.paragraphs.append(
                "Each variant against its base at each level (seat effect under the variant "
                "minus under the base, in pp; the two rule sets' games taken as independent "
                "samples, so with common seeds the interval is conservative), and how that "
                "difference changes with skill (the same weighted trend as above)."
            )
            s.paragraphs += [
                variant_trend_sentence(r)
                for r in t.get("skill_variant_trends", pd.DataFrame()).itertuples()
            ]
            keys = ["players", "ruleset", "baseline"]
            for (players, ruleset, base), part in variants.groupby(keys, sort=True):
                name = f"skill_variant_{players}_{ruleset}"
                title = f"{ruleset} minus {base} against skill, {players} players"
                effects = part.rename(
                    columns={
                        "difference_pp": "effect_pp",
                        "lo_pp": "effect_lo_pp",
                        "hi_pp": "effect_hi_pp",
                    }
                )
                fig = plots.new_figure(7.0, 4.0)
                plots.plot_skill_effects(
                    effects, fig.subplots(), title, ylabel=f"{ruleset} minus {base}, pp"
                )
                charts[name] = (title, plots.to_png(fig), plots.to_svg(fig))
                s.charts.append((name, title))
            s.tables.append(
                (
                    "Variant minus base, per skill level and seat",
                    [
                        "players",
                        "variant",
                        "base",
                        "level",
                        "seat",
                        "difference",
                        "95% interval",
                        "p",
                    ],
                    [
                        [
                            str(r.players),
                            str(r.ruleset),
                            str(r.baseline),
                            str(r.level),
                            str(r.seat),
                            pp(r.difference_pp),
                            interval(r.lo_pp, r.hi_pp),
                            pval(r.p),
                        ]
                        for r in variants.itertuples()
                    ],
                )
            )
        metrics = t.get("skill_metric_variants", pd.DataFrame())
        if len(metrics):
            s.paragraphs.append(
                "The per-game metrics of the variant comparison, level by level (variant mean "
                "minus base mean; shares in pp), and how each difference changes with skill."
            )
            s.paragraphs += [
                metric_trend_sentence(r)
                for r in t.get("skill_metric_variant_trends", pd.DataFrame()).itertuples()
            ]
            s.tables.append(
                (
                    "Variant minus base, per skill level and per-game metric",
                    [
                        "players",
                        "variant",
                        "base",
                        "level",
                        "metric",
                        "difference",
                        "95% interval",
                        "p",
                    ],
                    [_metric_row(r) for r in metrics.itertuples()],
                )
            )
        sections.append(s)
    decides = t.get("decides", pd.DataFrame())
    if len(decides) and len(levels) >= 1:
        s = Section("What decides games")
        s.paragraphs.append(
            "Restricted-play measures: how much a stronger player wins, which decision "
            "(turning Assam or placing rugs) matters more, and how often the same dice "
            "give another winner when only the seats change."
        )
        s.paragraphs += [decides_sentence(r) for r in decides.itertuples()]
        title = "What decides games (95% intervals)"
        fig = plots.new_figure(8.0, 0.55 * len(decides) + 1.4)
        plots.plot_decides(decides, fig.subplots(), title)
        charts["decides"] = (title, plots.to_png(fig), plots.to_svg(fig))
        s.charts.append(("decides", title))
        sections.append(s)
    return sections, charts


def _metric_row(r: Any) -> list[str]:
    """A row of the per-level metric table: shares in pp, other metrics in their unit."""
    _, unit = metric_words(str(r.metric))
    diff = float(r.difference_value)
    lo, hi = float(r.lo_value), float(r.hi_value)
    value = pp(100 * diff) if unit == "pp" else fmt_metric(diff, unit, lo, hi)
    band = span_metric(lo, hi, unit)
    row = [r.players, r.ruleset, r.baseline, r.level, r.metric]
    return [*map(str, row), value, band, pval(r.p)]
