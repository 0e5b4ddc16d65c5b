"""build_report: run folders in, the report's files out (see the package docstring)."""

from __future__ import annotations

import datetime as _dt
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from marrakech_sim import runfolder, stats
from marrakech_sim.errors import RunFolderError
from marrakech_sim.files import staged_folder
from marrakech_sim.report import MOVES_GAMES, RATING_GAMES, findings
from marrakech_sim.report.compute import compute_tables
from marrakech_sim.report.load import RunInfo, connect, open_runs
from marrakech_sim.report.notable import notable_of_runs, notable_section
from marrakech_sim.report.render import (
    Section,
    build_sections,
    make_charts,
    write_csv,
    write_html,
    write_markdown,
)
from marrakech_sim.report.skill import skill_sections
from marrakech_sim.report.tables import ReportTables


@dataclass(frozen=True, slots=True)
class ReportResult:
    """Where the report went and the facts a caller may print."""

    html: Path
    markdown: Path
    folder: Path
    csv: list[Path] = field(default_factory=list)
    charts: list[Path] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)


def _plan_from_data(rt: ReportTables) -> pd.DataFrame:
    """Games needed for a 1 pp seat-0 advantage per player count, with this data's design.

    The design effect is this data's for seat 0, but never below 1: below 1 it comes from
    seat rotation cancelling the strength differences of unevenly matched players (line-ups
    against ``random``), which a study of evenly matched players does not have, so borrowing
    it would undersize that study (about 2.5 times in the default study). The observed one is
    kept in ``design_effect_observed``.
    """
    shares = rt.tables["seat_shares"]
    rows = []
    for players, part in shares.loc[shares["seat"] == 0].groupby("players"):
        observed = (
            float(np.nanmean(part["design_effect"])) if part["design_effect"].notna().any() else 1.0
        )
        size = max(round(float((part["n_games"] / part["n_blocks"]).median())), 1)
        row = stats.plan_seat_advantage(
            int(players), 0.01, design_effect=max(observed, 1.0), block_size=size
        )
        row["design_effect_observed"] = observed
        rows.append(row)
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


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
    rt.tables["plan"] = _plan_from_data(rt)
    rt.tables["findings"] = findings.find(rt)
    out = Path(out)
    names = ", ".join(r.run_id for r in runs)
    title = title or f"Marrakech balance report: {names}"
    # written into a folder beside `out`, moved into it at the end: a report that fails
    # half way (a full disk) leaves no half report
    with staged_folder(out) as stage:
        for name, table in rt.tables.items():
            write_csv(table, stage / f"{name}.csv")
        start = time.perf_counter()
        charts = make_charts(rt)
        rt.facts["seconds"]["charts"] = round(time.perf_counter() - start, 2)
        pngs = {name: png for name, (_, png, _) in charts.items()}
        sections = build_sections(rt, {name: t for name, (t, _, _) in charts.items()})
        notables, problems = notable_of_runs([r.path for r in runs], stage)
        for n in notables:
            charts[n.name] = (n.title, n.png, n.svg)
            pngs[n.name] = n.png
        more, skill_charts = skill_sections(rt)
        for name, chart in skill_charts.items():
            charts[name] = chart
            pngs[name] = chart[1]
        for name, png in pngs.items():
            (stage / f"{name}.png").write_bytes(png)
        sections = _before_appendix(sections, [*more, notable_section(notables, problems)])
        created = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        subtitle = (
            f"{rt.facts['n_games']:,} games from {len(runs)} run(s) ({names}); "
            f"report written {created}."
        )
        write_html(stage / "report.html", title, subtitle, sections, charts)
        write_markdown(stage / "report.md", title, subtitle, sections)
    csv_paths = [out / f"{name}.csv" for name in rt.tables]
    chart_paths = [out / f"{name}.png" for name in pngs]
    return ReportResult(
        out / "report.html", out / "report.md", out, csv_paths, chart_paths, dict(rt.facts)
    )


def _before_appendix(sections: list[Section], more: list[Section]) -> list[Section]:
    """`more` numbered after the analysis sections, before the appendix (the data)."""
    body, tail = sections, []
    if sections and sections[-1].title.startswith("Appendix"):
        body, tail = sections[:-1], sections[-1:]
    numbered = sum(s.title[:1].isdigit() for s in body)  # the summary's are not numbered
    for i, section in enumerate(more, start=numbered + 1):
        section.title = f"{i}. {section.title}"
    return [*body, *more, *tail]


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
