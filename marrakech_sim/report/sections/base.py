"""What a report section is: the `Section` protocol `report.build` walks, and its parts.

A section owns everything of one heading of the report: the tables it adds once the
shared pass over the games is done (`compute`), its charts (`figures`, or `charts` for
pictures that are not matplotlib figures), and its words and tables as one or more
`Part` (`parts`), which `report.render` writes as HTML and Markdown; a section whose
first part opens with fixed words declares them as its `intro` (`opening` makes that
part). The sums a section adds slice by slice during the shared pass (its ``...Totals``)
live in its module too and are driven by `report.compute`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from marrakech_sim import palette, plots
from marrakech_sim.report.findings import GROUPS, verdict_groups
from marrakech_sim.report.load import RunInfo
from marrakech_sim.report.tables import ReportTables, Tables

Chart = tuple[str, bytes, str]  # title, PNG bytes, inline SVG text
Figures = dict[str, tuple[str, Any]]  # chart name -> (title, matplotlib Figure)
Table = tuple[str, list[str], list[list[str]]]  # caption, header, rows of cells
Column = tuple[str, Callable[[Any], str]]  # header, the cell of a table row
ItemGroup = tuple[str, list[str], bool]  # heading, list items, folded in the HTML page


#: a table of more rows is folded in the HTML page (a click on its caption opens it), so
#: that the findings and charts are not pushed pages down (not the first screen's at-a-glance
#: table: `Part.fold`); every table is in its CSV too. So is a longer group of findings
#: that need not be read first (`ItemGroup`; every finding is in findings.csv)
OPEN_ROWS = 12


#: the groups of findings listed open, the first three of `findings.GROUPS` (matters, real
#: but size undecided, real but small); a longer group of the others (negligible,
#: undecided) is folded in the HTML page (a click on its heading opens it), so that what
#: matters is not pushed down
OPEN_GROUPS = GROUPS[:3]


def finding_groups(table: pd.DataFrame, lines: Sequence[str]) -> list[ItemGroup]:
    """The findings' `lines` (one per row of `table`) under their verdicts' headings ("It
    matters: 13 findings"), what matters first."""
    return [
        (
            f"{'It matters' if group == 'matters' else group.capitalize()}: {len(said):,} "
            f"finding{'' if len(said) == 1 else 's'}",
            said,
            group not in OPEN_GROUPS and len(said) > OPEN_ROWS,
        )
        for group, said in verdict_groups(table, lines)
    ]


@dataclass
class Part:
    """One heading of the report, in this order: paragraphs, list items, groups of list
    items under a heading of their own, charts (name, caption), tables, and closing
    paragraphs."""

    title: str
    paragraphs: list[str] = field(default_factory=list)
    items: list[str] = field(default_factory=list)
    groups: list[ItemGroup] = field(default_factory=list)
    charts: list[tuple[str, str]] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    numbered: bool = True  # numbered in the report (the summary and the appendix are not)
    closing: list[str] = field(default_factory=list)
    fold: bool = True  # a long table folded in the HTML page (not the first screen's)

    def add_table(self, caption: str, frame: pd.DataFrame, columns: Sequence[Column]) -> None:
        """Add a table of `frame`: one row of cells per row; each column is (header,
        function of the row)."""
        cells = [[fn(r) for _, fn in columns] for r in frame.itertuples()]
        self.tables.append((caption, [h for h, _ in columns], cells))


@dataclass
class Context:
    """What a section reads: the report's tables and facts, the runs, the report folder
    being written (None when only the tables and charts are asked for)."""

    rt: ReportTables
    runs: list[RunInfo] = field(default_factory=list)
    stage: Path | None = None
    state: dict[str, Any] = field(default_factory=dict)  # a section's own, by its name


class Section(Protocol):
    """One section of the report, in the order `report.build.SECTIONS` lists them."""

    @property
    def name(self) -> str:
        """The section's name (its module's)."""

    @property
    def headings(self) -> tuple[str, ...]:
        """The headings its parts may have, unnumbered."""

    @property
    def mix_only(self) -> bool:
        """Whether it reads only the games between different strategies (the study's mix,
        not its self-play): in runs without such games, `report.build.report_parts` says so
        in its place."""

    def compute(self, ctx: Context) -> None:
        """Add the tables this section computes after the shared pass (none by default)."""

    def figures(self, rt: ReportTables) -> Figures:
        """The section's matplotlib charts: name -> (title, Figure)."""

    def charts(self, ctx: Context) -> dict[str, Chart]:
        """Every chart of the section, rendered: name -> (title, PNG, SVG)."""

    def parts(self, ctx: Context, chart_titles: dict[str, str]) -> list[Part]:
        """The section's headings with their words and tables (none when it has nothing to
        say); ``chart_titles`` holds every chart's title by name."""


class BaseSection:
    """Defaults of the protocol: nothing computed, no charts; `charts` renders `figures`."""

    name = ""
    headings: tuple[str, ...] = ()
    mix_only = False
    intro = ""  # the words that open the section's first part (see `opening`)

    def compute(self, ctx: Context) -> None:
        return None

    def figures(self, rt: ReportTables) -> Figures:
        charts: Figures = {}
        self.draw(rt.tables, charts)
        return charts

    def draw(self, t: Tables, charts: Figures) -> None:
        """Add the section's matplotlib charts to `charts` (what `figures` returns)."""
        return None

    def charts(self, ctx: Context) -> dict[str, Chart]:
        return {
            name: (title, *plots.render(fig)) for name, (title, fig) in self.figures(ctx.rt).items()
        }

    def parts(self, ctx: Context, chart_titles: dict[str, str]) -> list[Part]:
        return []

    def opening(self, *more: str) -> Part:
        """The section's first part, its first paragraph the section's ``intro`` with
        ``more`` after it (what depends on the tables)."""
        return Part(self.headings[0], ["".join((self.intro, *more))])


def charted(titles: dict[str, str], *names: str) -> list[tuple[str, str]]:
    """(name, title) of each of ``names`` that was drawn."""
    return [(n, titles[n]) for n in names if n in titles]


def panels(n: int, cols: int, width: float, height: float) -> tuple[Any, list[Any]]:
    """A figure of n panels in ``cols`` columns; unused axes are switched off."""
    cols = max(min(cols, n), 1)
    nrows = math.ceil(n / cols)
    fig = plots.new_figure(width * cols, height * nrows)
    axes = list(fig.subplots(nrows, cols, squeeze=False).ravel())
    for ax in axes[n:]:
        ax.set_axis_off()
    return fig, axes[:n]


def strategy_colours(t: Tables) -> dict[str, str]:
    """The report's colour of each strategy of the win-rate table."""
    names = set(t.win_rates["strategy"].astype(str)) if "strategy" in t.win_rates else set()
    return palette.strategy_colours(names)


def ruleset_colours(t: Tables) -> dict[str, str]:
    """The report's colour of each rule set."""
    return palette.ruleset_colours(t.rulesets["ruleset"].astype(str))


def players_of(t: Tables) -> dict[str, int]:
    """Each rule set's player count."""
    return dict(zip(t.rulesets["ruleset"], t.rulesets["players"], strict=True))


def pooled_levels(t: Tables) -> str:
    """A study with self-play games: say that this section leaves them out."""
    if t.skill_seats.empty:
        return ""
    return (
        " The self-play games (one strategy in every seat) are not in this section: each "
        "such strategy is a player model of its own, reported per model in the section on "
        "balance per skill level or player model."
    )
