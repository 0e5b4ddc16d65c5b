"""The report's skill sections in words and charts: balance per skill level, what decides games.

Reads the tables of `report.sections.skill`; the sentences about skill are the findings'
own (`report.findings`: one corrected family), so a fact is said once and with the
interval its verdict used. Each table row says which players (the strategy in every
seat), rule set and player count it holds for.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from marrakech_sim import plots
from marrakech_sim.report.findings import (
    decides_sentence,
    fmt_metric,
    metric_words,
    span_metric,
)
from marrakech_sim.report.findings import title as ruleset_title
from marrakech_sim.report.fmt import count, interval, pp, pval
from marrakech_sim.report.render import Section
from marrakech_sim.report.tables import ReportTables


def _strength_words(r: Any) -> str:
    if r.status == "measured":
        under = "" if r.measured_under == r.ruleset else f", measured under {r.measured_under}"
        return f"{r.elo:.0f} Elo [{r.elo_lo:.0f}, {r.elo_hi:.0f}]{under}"
    if r.status == "never won":
        return "below every level it met: it never won a game against them (no finite Elo)"
    if r.status == "never lost":
        return "above every level it met: it never lost a game against them (no finite Elo)"
    return "not measured (no games against the other levels)"


def skill_sections(rt: ReportTables) -> tuple[list[Section], dict[str, tuple[str, bytes, str]]]:
    """The two sections and their charts (name -> title, PNG, SVG); none without levels."""
    t = rt.tables
    seats = t.get("skill_seats", pd.DataFrame())
    findings = t.get("findings", pd.DataFrame())
    sections: list[Section] = []
    charts: dict[str, tuple[str, bytes, str]] = {}
    leveled = seats.loc[seats["kind"] == "skill level"] if len(seats) else seats
    models = seats.loc[seats["kind"] == "player model"] if len(seats) else seats
    if len(seats):
        s = Section("Balance per skill level" if len(leveled) else "Balance per player model")
        order = leveled.drop_duplicates("level").sort_values("level_index")["level"].tolist()
        if order:
            s.paragraphs.append(
                "A skill level is one strategy in every seat, declared by the study "
                "(skill_levels, weakest first): "
                + ", ".join(order)
                + ". Each level's seat effects come from its own games; no figure here pools "
                "levels. A level's strength is its Elo in the games where the levels meet. A "
                "change with skill is a line on that strength, claimed only where three "
                "levels or more have a finite measured strength, three of them separated, and "
                "the line passes its lack-of-fit test; elsewhere the report states each step "
                "between neighbouring levels. The findings below are members of the summary's "
                "corrected family, with its intervals."
            )
        if len(models):
            s.paragraphs.append(
                "Player models (a strategy in every seat, not declared as a skill level): "
                + ", ".join(sorted(set(models["level"])))
                + ". They are shown side by side; no trend runs through them."
            )
        strength = t.get("skill_strength", pd.DataFrame())
        if len(strength):
            s.tables.append(
                (
                    "Each skill level's strength (Elo, 95% interval)",
                    ["players", "rule set", "level", "strength", "separated from the one below"],
                    [
                        [
                            str(r.players),
                            str(r.ruleset),
                            str(r.level),
                            _strength_words(r),
                            "yes" if r.separated else ("no" if r.level_index else ""),
                        ]
                        for r in strength.itertuples()
                    ],
                )
            )
        if len(findings):
            skill = findings.loc[findings["question"].isin(["skill trend", "skill step"])]
            s.items += [str(x) for x in skill["sentence"]]
        for (players, ruleset), part in seats.groupby(["players", "ruleset"], sort=True):
            # the levels on their measured strength; the player models apart, in no order
            levels = part.loc[part["kind"] == "skill level"]
            if len(levels):
                here = strength
                if len(strength):
                    mine = (strength["players"] == players) & (strength["ruleset"] == ruleset)
                    here = strength.loc[mine]
                title = f"Seat effects per skill level: {ruleset_title(ruleset)}, {players} players"
                fig = plots.new_figure(7.0, 4.2)
                plots.plot_skill_effects(levels, fig.subplots(), title, strength=here)
                charts[f"skill_{players}_{ruleset}"] = (title, plots.to_png(fig), plots.to_svg(fig))
                s.charts.append((f"skill_{players}_{ruleset}", title))
            models = part.loc[part["kind"] == "player model"]
            if len(models):
                title = (
                    f"Seat effects per player model: {ruleset_title(ruleset)}, {players} players"
                )
                fig = plots.new_figure(min(7.0, 3.5 + 1.2 * models["level"].nunique()), 4.2)
                plots.plot_skill_effects(models, fig.subplots(), title, ordered=False)
                charts[f"models_{players}_{ruleset}"] = (
                    title,
                    plots.to_png(fig),
                    plots.to_svg(fig),
                )
                s.charts.append((f"models_{players}_{ruleset}", title))
        header = ["players", "rule set", "level", "seat", "effect", "95% interval", "games"]
        body = [
            [
                str(r.players),
                str(r.ruleset),
                f"{r.level} ({r.kind})",
                f"player {int(r.seat) + 1}",
                pp(r.effect_pp),
                interval(r.effect_lo_pp, r.effect_hi_pp),
                count(r.n_games),
            ]
            for r in seats.itertuples()
        ]
        s.tables.append(("Win share minus the fair share per seat and level", header, body))
        variants = t.get("skill_variants", pd.DataFrame())
        if len(variants):
            s.paragraphs.append(
                "Each variant against its base at each level (seat effect under the variant "
                "minus under the base, in pp; the two rule sets' games taken as independent "
                "samples, so with common seeds the interval is conservative). The table's "
                "intervals are 95% each; the summary's findings on these differences use the "
                "family's wider intervals."
            )
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
                            f"player {int(r.seat) + 1}",
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
    if len(decides):
        s = Section("What decides games")
        s.paragraphs.append(
            "Restricted-play measures: how much the strongest level wins against weaker "
            "players, and which decision (turning Assam or placing rugs) matters more."
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
    value = fmt_metric(diff, unit, lo, hi)
    band = span_metric(lo, hi, unit)
    row = [r.players, r.ruleset, r.baseline, r.level, r.metric]
    return [*map(str, row), value, band, pval(r.p)]
