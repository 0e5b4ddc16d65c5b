"""The report's notable games: the game where a problem shows, with its board and record.

For each run: the largest comeback, the largest single payment, a bankruptcy, a game
decided by the tie-break, the longest and the shortest game (`record.notable_games`).
Each gets a picture of its board after the decisive turn, its game record in the report
folder (`notable/`), and the command that replays it in a terminal.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from marrakech_sim import runfolder
from marrakech_sim.errors import RecordError
from marrakech_sim.record import format_records, notable_games, records_from_run, replay
from marrakech_sim.report.sections.base import BaseSection, Chart, Context, Part
from marrakech_sim.show.animate import png_bytes, position_scene
from marrakech_sim.show.scene import to_svg

NOUNS = {
    "comeback": "Largest comeback",
    "largest_payment": "Largest single payment",
    "bankruptcy": "A bankruptcy",
    "tie_break": "Decided by the tie-break",
    "longest": "Longest game",
    "shortest": "Shortest game",
}


@dataclass(frozen=True, slots=True)
class Notable:
    """One notable game as the report shows it."""

    name: str  # the picture's name in the report folder, without .png
    title: str
    detail: str
    command: str  # replays the game at its decisive turn
    record: Path  # the game record, relative to the report folder
    png: bytes
    svg: str


def notable_of_runs(run_dirs: list[Path], out: Path) -> tuple[list[Notable], list[str]]:
    """The notable games of each run that has a moves table, their records in `out`/notable/,
    and sentences to show above them: a run that kept the moves of a sample of its games
    says so, and each game that does not replay (a damaged or hand-made run folder) too."""
    folder = out / "notable"
    found: list[Notable] = []
    problems: list[str] = []
    for run_dir in run_dirs:
        if not any((run_dir / "moves").glob("part-*.parquet")):
            continue  # a run without move records has no game to replay
        games = notable_games(run_dir)
        if not games:
            continue
        manifest = runfolder.read_manifest(run_dir)
        if not runfolder.every_move(manifest):
            problems.append(
                f"{run_dir} kept the moves of a sample of its games (`keep_moves = "
                f"{manifest.config.get('keep_moves')}`), and a game is shown from its moves: "
                "its notable games are those of the sample."
            )
        folder.mkdir(parents=True, exist_ok=True)
        try:  # one read of the run for all its notable games (each read scans its parts)
            records = {r.game: r for r in records_from_run(run_dir, [g.game_id for g in games])}
        except RecordError:
            records = {}  # each game is read alone below, which says which one does not read
        for g in games:
            try:
                record = records.get(str(g.game_id)) or next(records_from_run(run_dir, [g.game_id]))
                done = replay(record)
            except RecordError as exc:
                problems.append(
                    f"Game {g.game_id} of {run_dir} ({NOUNS.get(g.kind, g.kind).lower()}) does "
                    f"not replay, so it is not shown: {exc}. `marrakech verify {run_dir}` "
                    "checks the whole run."
                )
                continue
            stem = f"{run_dir.name}-{g.kind}-game{g.game_id}"
            path = folder / f"{stem}.txt"
            path.write_text(format_records([record]), encoding="utf-8")
            turn = min(g.turn, len(done.turns))
            title = f"{NOUNS.get(g.kind, g.kind)}: game {g.game_id}, after turn {turn}"
            scene = position_scene(done, turn, f"{NOUNS.get(g.kind, g.kind)}: game {g.game_id}")
            found.append(
                Notable(
                    name=f"notable-{stem}",
                    title=title,
                    detail=g.detail,
                    command=f"marrakech replay {run_dir} {g.game_id} --turn {turn}",
                    record=path.relative_to(out),
                    png=png_bytes(scene),
                    svg=to_svg(scene),
                )
            )
    return found, problems


def notable_section(notables: list[Notable], problems: list[str]) -> Part:
    """The report section that shows each notable game: why, its board, how to replay it."""
    section = Part(NotableSection.headings[0], paragraphs=list(problems))
    if not notables:
        section.paragraphs.append("No game to show: no run with move records and finished games.")
        return section
    section.paragraphs.append(
        "Single games worth looking at, each pictured after its decisive turn. Each record "
        "is in the report folder (`notable/`); `marrakech import FILE` replays it, and the "
        "command beside it steps through it in a terminal (`--html FILE` writes a page)."
    )
    for n in notables:
        section.charts.append((n.name, n.title))
    section.tables.append(
        (
            "Notable games",
            ["game", "why", "replay it", "record"],
            [[n.title, n.detail, f"`{n.command}`", str(n.record)] for n in notables],
        )
    )
    return section


class NotableSection(BaseSection):
    """The section "Notable games": found while the report folder is written (each game's
    record goes into it), always present."""

    name = "notable"
    headings = ("Notable games",)

    def compute(self, ctx: Context) -> None:
        found: tuple[list[Notable], list[str]] = ([], [])
        if ctx.stage is not None:
            found = notable_of_runs([r.path for r in ctx.runs], ctx.stage)
        ctx.state[self.name] = found

    def charts(self, ctx: Context) -> dict[str, Chart]:
        notables, _ = ctx.state.get(self.name, ([], []))
        return {n.name: (n.title, n.png, n.svg) for n in notables}

    def parts(self, ctx: Context, chart_titles: dict[str, str]) -> list[Part]:
        notables, problems = ctx.state.get(self.name, ([], []))
        return [notable_section(notables, problems)]
