"""The balance report: run folders in, ``report.html`` + ``report.md`` + PNG + CSV out.

    build_report([Path("runs/default")], Path("reports/default"))

Modules::

    build    build_report and plan_study: the whole report; SECTIONS, the sections in order
    load     open run folders (LOG_FORMAT.md) as DuckDB views, column-wise; digests
    pergame  the games and their seats in numpy arrays, a slice of whole blocks at a time
    compute  the shared pass over the games: every section's sums, then its tables
    tables   what the sections share: ReportTables (Tables, one field per CSV; Facts),
             sums of block totals, block helpers
    findings the summary's family of tests: one sentence per question, read from the tables
    render   the HTML (inline SVG) / Markdown / CSV writers
    sections one module per section (sections.base: the Section protocol): its totals,
             tables, words and charts (marrakech_sim.plots)

Sections, in order: the summary (headline, at-a-glance table, every finding), win rates,
seat advantage, ratings (per player count and rule set), variant comparison,
distributions, power, balance per skill level or player model, what decides games,
notable games, and the data as an appendix.

Every table is also written as ``<name>.csv`` (the findings as ``findings.csv``); each
column, its unit and meaning are in ``docs/report-tables.md``.

The modules load pandas, scipy, DuckDB and matplotlib (about 2 s), so the package
imports them only when one of its functions is used: a command line that does not
report starts without them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from marrakech_sim.report.sizes import MOVES_GAMES, RATING_GAMES

if TYPE_CHECKING:  # what __getattr__ gives, as a type checker should see it
    from marrakech_sim.report.build import ReportResult, build_report, plan_study

__all__ = ["MOVES_GAMES", "RATING_GAMES", "ReportResult", "build_report", "plan_study"]


def __getattr__(name: str) -> Any:
    if name in ("ReportResult", "build_report", "plan_study"):
        from marrakech_sim.report import build

        return getattr(build, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
