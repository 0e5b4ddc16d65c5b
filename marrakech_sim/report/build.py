"""build_report: run folders in, the report's files out (see the package docstring)."""

from __future__ import annotations

import datetime as _dt
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa

from marrakech_sim import runfolder, stats
from marrakech_sim.errors import RunFolderError
from marrakech_sim.files import staged_folder
from marrakech_sim.report.compute import compute_tables
from marrakech_sim.report.load import RunInfo, connect, open_runs
from marrakech_sim.report.render import write_csv, write_html, write_markdown
from marrakech_sim.report.sections.base import Chart, Context, Figures, Part, Section
from marrakech_sim.report.sections.data import DataSection
from marrakech_sim.report.sections.distributions import DistributionSection
from marrakech_sim.report.sections.notable import NotableSection
from marrakech_sim.report.sections.power import PowerSection
from marrakech_sim.report.sections.ratings import RatingSection
from marrakech_sim.report.sections.response import ResponseSection
from marrakech_sim.report.sections.seats import SeatSection
from marrakech_sim.report.sections.skill import DecidesSection, SkillSection
from marrakech_sim.report.sections.summary import SummarySection
from marrakech_sim.report.sections.variants import VariantSection
from marrakech_sim.report.sections.winrates import WinRateSection
from marrakech_sim.report.sizes import MOVES_GAMES, RATING_GAMES
from marrakech_sim.report.tables import ReportTables

#: the report's sections in the order it shows them. Each computes what it adds after the
#: shared pass in this order too: the power section's plan reads the seat shares, the
#: summary's findings the tables of the pass (none of them reads the plan or the findings)
SECTIONS: tuple[Section, ...] = (
    SummarySection(),
    WinRateSection(),
    SeatSection(),
    RatingSection(),
    VariantSection(),
    DistributionSection(),
    PowerSection(),
    ResponseSection(),
    SkillSection(),
    DecidesSection(),
    NotableSection(),
    DataSection(),
)


@dataclass(frozen=True, slots=True)
class ReportResult:
    """Where the report went and the facts a caller may print."""

    html: Path
    markdown: Path
    folder: Path
    csv: list[Path] = field(default_factory=list)
    charts: list[Path] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)


def _check_games(con: duckdb.DuckDBPyConnection, runs: list[RunInfo]) -> None:
    """RunFolderError when no game of the runs ended normally: nothing to report on."""
    rows = con.execute(
        "SELECT count(*), count(*) FILTER (WHERE end_reason <> 'error'), "
        "any_value(error) FILTER (WHERE end_reason = 'error') FROM games"
    ).fetchall()
    total, normal, error = rows[0] if rows else (0, 0, None)
    if not normal:
        names = ", ".join(repr(str(r.path)) for r in runs)
        raise RunFolderError(
            f"every one of the {total:,} games of {names} ended in an error "
            f"(for example: {error}); there is nothing to report on"
        )


def build_report(
    run_dirs: list[Path] | tuple[Path, ...],
    out: Path,
    rating_games: int = RATING_GAMES,
    moves_games: int = MOVES_GAMES,
    title: str | None = None,
    memory_limit: str = "1GB",  # DuckDB's share; the per-game arrays are numpy's
) -> ReportResult:
    """Read the run folders, compute every section, and write the report into ``out``.

    Args:
        rating_games: most games (whole blocks) the Plackett-Luce fit uses.
        moves_games: most games (whole blocks) whose moves are read for per-turn metrics.
        memory_limit: DuckDB's memory limit for the aggregations.
    """
    runs = open_runs([Path(p) for p in run_dirs])
    # DuckDB spills to a folder of its own, not into the working directory
    with tempfile.TemporaryDirectory(prefix="marrakech-report-") as spill:
        con = connect(runs, memory_limit=memory_limit, temp_directory=Path(spill))
        try:
            _check_games(con, runs)
            rt = compute_tables(con, runs, rating_games=rating_games, moves_games=moves_games)
        except (duckdb.Error, pa.ArrowException, OSError) as exc:
            # a part damaged inside: its footer was whole, so the check let it through
            names = ", ".join(repr(str(r.path)) for r in runs)
            raise RunFolderError(
                f"cannot read the tables of {names}: {runfolder.one_line(exc)}"
            ) from exc
        finally:
            con.close()
    out = Path(out)
    names = ", ".join(r.run_id for r in runs)
    title = title or f"Marrakech balance report: {names}"
    # written into a folder beside `out`, moved into it at the end: a report that fails
    # half way (a full disk) leaves no half report
    with staged_folder(out) as stage:
        ctx = Context(rt, runs, stage)
        for section in SECTIONS:
            section.compute(ctx)
        for name, table in rt.tables.items():
            write_csv(table, stage / f"{name}.csv")
        start = time.perf_counter()
        charts: dict[str, Chart] = {}
        for section in SECTIONS:
            charts.update(section.charts(ctx))
        rt.facts.seconds["charts"] = round(time.perf_counter() - start, 2)
        for name, (_, png, _) in charts.items():
            (stage / f"{name}.png").write_bytes(png)
        parts = report_parts(ctx, {name: t for name, (t, _, _) in charts.items()})
        created = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        subtitle = (
            f"{rt.facts.n_games:,} games from {len(runs)} run(s) ({names}); "
            f"report written {created}."
        )
        write_html(stage / "report.html", title, subtitle, parts, charts)
        write_markdown(stage / "report.md", title, subtitle, parts)
    csv_paths = [out / f"{name}.csv" for name in rt.tables.names()]
    chart_paths = [out / f"{name}.png" for name in charts]
    return ReportResult(
        out / "report.html", out / "report.md", out, csv_paths, chart_paths, rt.facts.as_dict()
    )


#: in place of the first section on the study's mix, in runs of self-play alone
NO_MIX = (
    "Every game of these runs seats one strategy in every seat (self-play), and this section "
    "is about games between different strategies: nothing to show. Each self-play player "
    "model's seats are in the section on balance per player model or skill level below, and "
    "a sweep's in its response curves."
)
NO_MIX_AGAIN = "Nothing to show: no game between different strategies (above)."


def report_parts(ctx: Context, chart_titles: dict[str, str]) -> list[Part]:
    """Every section's parts in `SECTIONS` order, the numbered ones numbered from 1; a
    section on the study's mix says it has nothing to show in runs of self-play alone."""
    facts = ctx.rt.facts
    no_mix = facts.n_mixed_games == 0 and facts.n_games > 0
    parts: list[Part] = []
    said = False
    for section in SECTIONS:
        if no_mix and section.mix_only:
            parts.append(Part(section.headings[0], [NO_MIX_AGAIN if said else NO_MIX]))
            said = True
        else:
            parts += section.parts(ctx, chart_titles)
    number = 0
    for part in parts:
        if part.numbered:
            number += 1
            part.title = f"{number}. {part.title}"
    return parts


def chart_figures(rt: ReportTables) -> Figures:
    """Every matplotlib chart of the report: name -> (title, Figure)."""
    return {name: fig for section in SECTIONS for name, fig in section.figures(rt).items()}


def plan_study(
    players: int,
    effect: float,
    alpha: float = 0.05,
    power: float = 0.8,
    design_effect: float = 1.0,
    block_size: int = 1,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Games needed for a seat-0 advantage of ``effect`` and for a variant difference of it
    (StatsInputError, naming the value, for an input outside its range)."""
    seat = stats.plan_seat_advantage(players, effect, alpha, power, design_effect, block_size)
    variant = stats.plan_variant_difference(
        players,
        effect,
        alpha=alpha,
        power=power,
        design_effect=design_effect,
        block_size=block_size,
    )
    return seat, variant
