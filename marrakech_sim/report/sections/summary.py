"""The report's first screen: the headline, its chart, the at-a-glance table, a glossary;
then every finding.

The findings themselves (one corrected family of tests, their verdicts and sentences) are
`report.findings`; this section computes them once every other table is in and words them.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from marrakech_sim.report import findings
from marrakech_sim.report.fmt import count, pp
from marrakech_sim.report.load import RunInfo
from marrakech_sim.report.sections.base import BaseSection, Context, Part, Table, finding_groups
from marrakech_sim.report.tables import ReportTables, or_empty
from marrakech_sim.run.config import ReportOptions


class SummarySection(BaseSection):
    """The sections "Summary" and "Every finding" (unnumbered, first)."""

    name = "summary"
    headings = ("Summary", "Every finding")

    def compute(self, ctx: Context) -> None:
        ctx.rt.tables.findings = findings.find(ctx.rt)

    def parts(self, ctx: Context, chart_titles: dict[str, str]) -> list[Part]:
        rt = ctx.rt
        table = rt.tables.findings
        summary = Part(self.headings[0], numbered=False, fold=False)
        every = Part(self.headings[1], numbered=False)
        if table is not None and len(table):
            summary.paragraphs.append(findings.headline_paragraph(table))
            summary.paragraphs.append(findings.player_model(rt))
            summary.charts += headline_charts(chart_titles)
            glance = at_a_glance(rt)
            if glance:
                summary.tables.append(glance)
            every.paragraphs.append(findings.family_note(table))
            model = findings.common_model(table)
            if model is not None:
                every.paragraphs.append(f"Every finding below holds among {model}.")
            every.groups += finding_groups(table, findings.summary_lines(table))
        else:
            summary.paragraphs.append(findings.player_model(rt))
        summary.paragraphs += [text for text in map(stopped_early, ctx.runs) if text]
        summary.closing.append(glossary(rt.facts.report_options))
        return [summary, *([every] if every.groups else [])]


#: the first screen's charts, of the first of these kinds that was drawn (each again in
#: its own section): a sweep's response curves, the seat effects per skill level, the
#: seats' gaps in the mixed games, the seat effects per self-play player model
HEADLINE_KINDS = ("response_", "skill_", "seat_advantage", "models_")
HEADLINE_MOST = 3  # charts of that kind on the first screen, at most (all in their section)


def headline_charts(chart_titles: dict[str, str]) -> list[tuple[str, str]]:
    """(name, caption) of the first screen's charts (`HEADLINE_KINDS`); none when no such
    chart was drawn. Where the bars are each seat's own 95% interval (all but a response
    curve, whose band is simultaneous), the caption says the sentences' family intervals
    are wider."""
    kind = next((k for k in HEADLINE_KINDS if any(n.startswith(k) for n in chart_titles)), None)
    if kind is None:
        return []
    names = [n for n in chart_titles if n.startswith(kind)]
    note = " (bars: each seat's own 95% interval; the sentences above give the family's, wider)"
    if kind == "response_":  # in the order of their section: by number
        names.sort(key=lambda n: int(n.rpartition("_")[2]))
        note = ""
    return [(n, chart_titles[n] + note) for n in names[:HEADLINE_MOST]]


def stopped_early(run: RunInfo) -> str:
    """What a run's stopping rule decided, and what that means for its estimates; '' for
    a run without one, or one that played to its end."""
    state = run.manifest.stopping
    if not isinstance(state, Mapping) or not state.get("stopped"):
        return ""
    said = str(state.get("summary") or "its stopping rule decided")
    return (
        f"Run {run.run_id} stopped early, by its stopping rule: {said}. A test stopped on "
        "its data overstates the effect a little; this report's estimates and intervals "
        "from that run are not corrected for the sequential stop."
    )


def glossary(options: ReportOptions) -> str:
    """The words the report uses, with the study's own margins (its [report] table)."""

    def amount(metric: str, unit: str) -> str:
        value = options.margin(metric)
        return f"{value:g} {unit}" + ("" if value == 1 else "s")

    return (
        "Words used here. pp (percentage points): a difference of two percentages (26.7% "
        "against 25.0% is +1.7 pp). An interval [lo, hi]: the range the true value lies in "
        "with the stated confidence, given these games (games that share dice counted as "
        "one block). Elo: strength; 100 Elo more wins about 64% of two-player games, 200 "
        "about 76% (in a 3- or 4-player rating, the chance of finishing ahead of the other "
        "in the same game). The margin: the size of an effect that matters to the design, "
        f"set by the study: {options.matters_pp:g} pp for a share, "
        f"{amount('margin', 'point')} of winning margin, {amount('turns', 'turn')} of game "
        f"length, {options.margin('elo'):g} Elo. Player 1 sits in the first seat (seat 0 in the "
        "CSV tables). The verdicts: it matters (the interval lies beyond the margin), real "
        "but small (it excludes 0 but stays within the margin), negligible (it lies within "
        "the margin: an equivalence test), undecided (neither; where the interval excludes "
        "0 the effect is real and only its size is undecided; the sentence says how many "
        "more games would give the power to decide it, where its data can tell)."
    )


def at_a_glance(rt: ReportTables) -> Table | None:
    """The compact table: per rule set, player count and player model, the largest seat
    gap (the family's interval); on the row of the rule set's mixed games, also their
    mean game length, bankruptcy rate, winning margin, the turn from which the winner
    leads for good (from the moves' sample) and the legal choices per turn (from replayed
    games), with 95% intervals. Those means are of the mixed games alone (the self-play
    games are player models of their own), so a self-play row shows none of them, and a
    study of self-play alone (a sweep) has only the first three columns."""
    t = rt.tables
    table = or_empty(t.findings)
    means = t.variant_summary
    seats = table.loc[table["question"] == "seat"] if len(table) else table
    if seats.empty:
        return None
    rows = []
    mixed = False  # a row of mixed games, with their means
    keys = ["players", "ruleset", "model"]
    for (players, ruleset, model), part in seats.groupby(keys, sort=False):
        top = part.loc[part["estimate"].abs().idxmax()]
        gap = (
            f"{str(top.subject).capitalize()} {pp(top.estimate)} "
            f"{findings.pp_interval(top.lo, top.hi, top.margin)} "
            f"({findings.verdict_label(top.verdict, top.lo, top.hi)})"
        )

        def metric(name: str, unit: str, scale: float = 1.0, ruleset: str = ruleset) -> str:
            hit = means.loc[(means["ruleset"] == ruleset) & (means["metric"] == name)]
            if hit.empty:
                return "n/a"
            r = hit.iloc[0]
            mean, lo, hi = (scale * float(r[c]) for c in ("mean", "lo", "hi"))
            return f"{mean:.1f}{unit} [{lo:.1f}, {hi:.1f}]"

        model_words = str(model).replace("the study's mix of ", "mix: ")
        if model == findings.mixed_model(t, ruleset):
            mixed = True
            means_of_mix = [
                metric("turns", ""),
                metric("bankrupt", "%", 100.0),
                metric("margin", ""),
                metric("decided_turn", ""),
                choices_per_turn(t.choices, ruleset),
            ]
        else:  # a self-play model: the means above are of the mixed games, not of these
            means_of_mix = ["-"] * 5
        rows.append([findings.group_title(ruleset, players), model_words, gap, *means_of_mix])
    header = [
        "rule set",
        "players' model",
        "largest seat gap",
        "turns",
        "bankruptcies",
        "winning margin (points)",
        "winner leads for good from turn",
        "choices per turn (replayed games)",
    ]
    if not mixed:  # self-play alone (a sweep): no means to show
        return ("At a glance (seat gap: the family's interval)", header[:3], [r[:3] for r in rows])
    title = "At a glance (seat gap: the family's interval; the rest 95%, of the mixed games)"
    return (title, header, rows)


def choices_per_turn(choices: pd.DataFrame, ruleset: str) -> str:
    """The at-a-glance cell of a rule set's mean legal choices per turn (`sections.choices`):
    the mean, its 95% interval and the games replayed."""
    hit = choices.loc[choices["ruleset"] == ruleset] if len(choices) else choices
    if hit.empty or not int(hit["n_games"].iloc[0]):
        return "n/a"
    r = hit.iloc[0]
    return f"{r.estimate:.1f} [{r.lo:.1f}, {r.hi:.1f}], n={count(int(r.n_games))}"
