"""`marrakech run`, `marrakech verify`, `marrakech bench`: play, check and time studies."""

from __future__ import annotations

import contextlib
import json
import logging
import math
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from marrakech_sim.cli.common import (
    library_errors,
    quiet_after_stop,
    rule_options,
    rules_from_cli,
)
from marrakech_sim.run.config import MOVE_COLUMN_CHOICES, MoveColumns

if TYPE_CHECKING:
    from marrakech_sim.live import LiveRow, LiveTotals
    from marrakech_sim.run.chunk import ChunkResult
    from marrakech_sim.run.plan import Plan

START_METHODS = ["fork", "spawn", "forkserver"]
BACKENDS = ["processes", "dask"]
T = TypeVar("T")


def backend_options(func: Any) -> Any:
    """--backend, --scheduler and --parts, shared by `run` and `study`."""
    options = [
        click.option(
            "--backend",
            type=click.Choice(BACKENDS),
            default="processes",
            show_default=True,
            help="Where the chunks run: worker processes here, or Dask tasks "
            "(pip install 'marrakech_sim[dask]'; docs/cluster.md).",
        ),
        click.option(
            "--scheduler",
            metavar="tcp://HOST:PORT",
            help="With --backend dask: a running Dask scheduler (default: a LocalCluster "
            "of --workers processes on 127.0.0.1).",
        ),
        click.option(
            "--parts",
            type=click.Choice(["client", "workers"]),
            help="With --backend dask: who writes the part files [default: client]; "
            "'workers' needs the run folder on a file system every worker shares.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _backend(backend: str, scheduler: str | None, parts: str | None, workers: int | None) -> Any:
    """The DaskBackend the options ask for, or None for worker processes."""
    if backend != "dask":
        if scheduler is not None or parts is not None:
            raise click.UsageError("--scheduler and --parts need --backend dask")
        return None
    if scheduler is not None and workers is not None:
        raise click.UsageError(
            "--workers sizes the LocalCluster; a cluster at --scheduler has its own workers"
        )
    from marrakech_sim.run.dask_backend import DaskBackend

    return DaskBackend(scheduler=scheduler, parts=parts or "client")


class _Progress:
    """The runner's progress callback: a rich progress bar on a terminal, else log lines.

    On a terminal (stderr is a TTY) a bar with games done, games/s, elapsed time, time
    left and faults so far, redrawn in place, and under it the live table: each seat's
    running win share with its block-aware interval per rule set and player model, and
    the stopping rule's state (`marrakech_sim.live`, from the block totals of each
    finished chunk). Elsewhere (a log file, CI) the same as plain lines every ``every``
    seconds and at the end, so logs stay readable.
    """

    def __init__(self, every: float = 10.0, terminal: bool | None = None) -> None:
        self.terminal = sys.stderr.isatty() if terminal is None else terminal
        self.every = every
        self.last = -math.inf
        self.base: tuple[int, float] | None = None  # (games, seconds) at the first report
        self.bar: Any = None
        self.task: Any = None
        self.live: Any = None  # the rich Live holding the bar and the table
        self.totals: LiveTotals | None = None
        self.stopping: dict[str, Any] | None = None
        self.line_due = False  # a plain progress line was printed: its table follows
        self.unprinted: tuple[int, int, float, int] | None = None  # a report not yet a line

    def rate(self, done: int, seconds: float) -> float:
        """Games per second this session (a resumed run's earlier games not counted)."""
        if self.base is None or seconds <= self.base[1]:
            return done / seconds if seconds > 0 else 0.0
        return (done - self.base[0]) / (seconds - self.base[1])

    def compiling(self, words: str) -> None:
        """The runner's hook before it compiles the game kernels into an empty cache."""
        click.echo(f"{words} ...", err=True)

    def __call__(self, done: int, planned: int, seconds: float, faults: int = 0) -> None:
        rate = self.rate(done, seconds)
        if self.base is None:
            # the first report: no games/s yet (it would count the workers' start)
            self.base = (done, seconds)
        if not self.terminal:
            self.unprinted = (done, planned, seconds, faults)  # close() prints it if held back
        if done < planned and seconds - self.base[1] < 1.0:
            return  # games/s not measured over a second yet
        if self.terminal:
            self._draw(done, planned, rate, faults)
            return
        now = time.monotonic()
        if now - self.last < self.every and done < planned:
            return
        self.last = now
        self.line_due = True
        self._line(done, planned, seconds, faults)

    def _line(self, done: int, planned: int, seconds: float, faults: int) -> None:
        """The plain progress line of one report."""
        self.unprinted = None
        rate = self.rate(done, seconds)
        left = (planned - done) / rate if rate > 0 else math.inf
        click.echo(
            f"progress: {done:,} / {planned:,} games ({done / max(planned, 1):.1%}), "
            f"{rate:,.0f} games/s, elapsed {_clock(seconds)}, left {_clock(left)}, "
            f"{faults:,} faults",
            err=True,
        )

    def chunk_done(self, result: ChunkResult, plan: Plan, stopping: dict[str, Any] | None) -> None:
        """The runner's hook after each finished chunk: add its block totals to the table."""
        from marrakech_sim.live import LiveTotals

        if self.totals is None or self.totals.plan is not plan:  # a new run: a new table
            self.totals = LiveTotals(plan)
        self.totals.add(result)
        self.stopping = stopping
        if self.terminal:
            # rich redraws the bar and the table four times a second, the new totals too:
            # no redraw per chunk (each costs the run's process about 10 ms)
            return
        if self.line_due:
            self.line_due = False
            for line in live_lines(self.totals.rows(), self.stopping):
                click.echo(line, err=True)

    def __rich__(self) -> Any:
        """The live table under the bar (rich asks for it at every refresh)."""
        return live_table(self.totals.rows() if self.totals else [], self.stopping)

    def _draw(self, done: int, planned: int, rate: float, faults: int) -> None:
        from rich.console import Console, Group
        from rich.live import Live
        from rich.progress import (
            BarColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        if self.bar is None:
            console = Console(stderr=True)
            self.bar = Progress(
                TextColumn("games"),
                BarColumn(),
                TaskProgressColumn(),
                TextColumn("{task.completed:,.0f}/{task.total:,.0f}"),
                TextColumn("{task.fields[rate]:,.0f} games/s"),
                TimeElapsedColumn(),
                TextColumn("left"),
                TimeRemainingColumn(),
                TextColumn("{task.fields[faults]:,} faults"),
                console=console,
            )
            self.task = self.bar.add_task("games", total=planned, rate=0.0, faults=0)
            self.live = Live(Group(self.bar, self), console=console, refresh_per_second=4)
            self.live.start()
        self.bar.update(self.task, completed=done, total=planned, rate=rate, faults=faults)

    def close(self) -> None:
        """Stop the bar and the table (leaving their last state on screen); off a terminal,
        print the last report's line when the period held it back (a run that ended
        before its plan: its stopping rule decided, or it was stopped)."""
        if self.unprinted is not None:
            self._line(*self.unprinted)
            if self.totals is not None:
                for line in live_lines(self.totals.rows(), self.stopping):
                    click.echo(line, err=True)
        if self.live is not None:
            self.live.refresh()
            self.live.stop()
            self.live = None
            self.bar = None


def live_lines(rows: list[LiveRow], stopping: dict[str, Any] | None) -> list[str]:
    """The live table as plain lines: one per rule set and player model, then the rule."""
    from marrakech_sim.live import stopping_text

    lines = []
    groups: dict[tuple[str, str], list[LiveRow]] = {}
    for row in rows:
        groups.setdefault((row.ruleset, row.model), []).append(row)
    for (ruleset, model), seats in groups.items():
        shares = "  ".join(
            f"player {r.seat + 1} {_share(r.share).strip()} {_interval(r.lo, r.hi).strip()}"
            for r in seats
        )
        lines.append(f"live: {ruleset} / {model} ({seats[0].games:,} games): {shares}")
    text = stopping_text(stopping)
    if text:
        lines.append(f"live: {text}")
    return lines


def live_table(rows: list[LiveRow], stopping: dict[str, Any] | None) -> Any:
    """The live table as a rich renderable: a row per rule set and player model."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from marrakech_sim.live import stopping_text

    table = Table(box=None, pad_edge=False, header_style="bold")
    seats = max((r.players for r in rows), default=0)
    table.add_column("rule set")
    table.add_column("player model")
    table.add_column("games", justify="right")
    for seat in range(seats):
        table.add_column(f"player {seat + 1}", justify="right")
    groups: dict[tuple[str, str], list[LiveRow]] = {}
    for row in rows:
        groups.setdefault((row.ruleset, row.model), []).append(row)
    for (ruleset, model), group in groups.items():
        cells = [_compact(r) for r in group]
        cells += [""] * (seats - len(cells))
        table.add_row(ruleset, model, f"{group[0].games:,}", *cells)
    table.caption = "win share per player (player 1 moves first), [95% block-aware interval]"
    text = stopping_text(stopping)
    return Group(table, Text(text)) if text else table


def _compact(row: LiveRow) -> str:
    """A seat's share and interval in percent, one decimal: `28.2 [26.8, 29.6]`."""
    if not math.isfinite(row.lo):
        return f"{row.share:.1%}"
    return f"{row.share:.1%} [{row.lo * 100:.1f}, {row.hi * 100:.1f}]"


def _clock(seconds: float) -> str:
    """H:MM:SS, or '?' when unknown."""
    if not math.isfinite(seconds):
        return "?"
    s = round(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


@contextlib.contextmanager
def _progress() -> Iterator[_Progress]:
    bar = _Progress()
    try:
        yield bar
    finally:
        bar.close()


def _play(run_dir: Path, play: Callable[[_Progress], T], level: int, hint: str = "") -> T:
    """Call `play` with a progress line, the run's log in `run_dir` and on stderr at `level`;
    an interrupted run exits 130 with its message (and `hint`)."""
    from marrakech_sim.errors import RunInterrupted
    from marrakech_sim.run.pool import run_logging

    click.echo(f"run folder: {run_dir}", err=True)
    try:
        with run_logging(run_dir, console_level=level), _progress() as progress:
            result = play(progress)
    except RunInterrupted as exc:
        quiet_after_stop()
        click.echo("", err=True)
        click.echo(f"{exc}{hint}", err=True)
        sys.exit(130)
    except KeyboardInterrupt:  # outside the runner's games: planning, checking, the report
        from marrakech_sim import runfolder

        quiet_after_stop()
        click.echo("", err=True)
        if (run_dir / runfolder.MANIFEST).exists():
            click.echo(
                f"run stopped; resume it with `marrakech run --resume {run_dir}`{hint}", err=True
            )
        else:
            click.echo("run stopped before its first game: run the same command again", err=True)
        sys.exit(130)
    click.echo("", err=True)
    return result


def _print_summary(run_dir: Path) -> None:
    from marrakech_sim.run.summary import summarize_run

    summary = summarize_run(run_dir)
    click.echo(f"{summary.games:,} games, {summary.errors:,} ended in a strategy fault")
    if summary.seats.empty:
        return
    if len(summary.strategies):
        click.echo(
            "\nwin share per strategy in games between different strategies "
            "(95% block-aware interval; fair = 1/players):"
        )
    else:  # self-play only: each strategy wins its fair share by construction
        click.echo("\nwin share per strategy: none (every game is self-play)")
    for row in summary.strategies.itertuples():
        click.echo(
            f"  {row.ruleset:<16} {row.strategy:<20} {_share(row.rate)}  "
            f"{_interval(row.lo, row.hi)}  fair {row.fair_share:6.2%}  "
            f"({row.n_seat_games:,} seat-games)"
        )
    click.echo("\nwin share per seat (player 1 moves first):")
    for row in summary.seats.itertuples():
        seat = f"player {int(row.seat) + 1} of {int(row.players)}"  # seats are 0-based in Parquet
        click.echo(
            f"  {row.ruleset:<16} {seat:<14} {_share(row.share)}  "
            f"{_interval(row.lo, row.hi)}  fair {row.fair_share:6.2%}  ({row.n_games:,} games)"
        )


def _share(x: float) -> str:
    return f"{x:7.2%}" if math.isfinite(x) else f"{'n/a':>7}"


def _interval(lo: float, hi: float) -> str:
    """The interval, or why there is none (one block says nothing of the spread)."""
    if math.isfinite(lo) and math.isfinite(hi):
        return f"[{lo:6.2%}, {hi:6.2%}]"
    return f"{'(one block: no interval)':<18}"


@click.command("run")
@click.argument("config", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    help="The run folder, new or empty (default: runs/NAME-YYYYMMDD-HHMMSS-XXXXXX, the run's "
    "id: the config's name, the UTC time and a random suffix).",
)
@click.option(
    "--workers", type=click.IntRange(0), help="Worker processes (default: CPUs; 0: in-process)."
)
@click.option("--games", type=click.IntRange(1), help="Games per line-up (rounded up to blocks).")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), help="The run's root seed.")
@click.option(
    "--decision-seconds",
    type=click.FloatRange(0, 86_400, min_open=True),
    help="Seconds a Python-loop strategy may take per decision before its game ends as a "
    "fault (the config's decision_seconds; default 10).",
)
@click.option(
    "--resume",
    "resume_dir",
    type=click.Path(exists=True, file_okay=False),
    help="Finish an interrupted run in this folder.",
)
@click.option("--start-method", type=click.Choice(START_METHODS), help="Worker start method.")
@click.option(
    "--writer",
    default="encoder",
    show_default=True,
    help="Parquet writer of the parts: 'encoder' (the project's, fast) or 'pyarrow' (same tables).",
)
@backend_options
@click.option("-v", "--verbose", is_flag=True, help="Show per-chunk log records on stderr.")
@click.option("--no-summary", is_flag=True, help="Do not print the win-share summary.")
@library_errors
def run_command(
    config: str | None,
    out: str | None,
    workers: int | None,
    games: int | None,
    seed: int | None,
    decision_seconds: float | None,
    resume_dir: str | None,
    start_method: str | None,
    writer: str,
    backend: str,
    scheduler: str | None,
    parts: str | None,
    verbose: bool,
    no_summary: bool,
) -> None:
    """Play the study in CONFIG (TOML) into a run folder, or --resume one."""
    from marrakech_sim.run.config import load_study
    from marrakech_sim.run.runner import new_run_id, run_study

    if (config is None) == (resume_dir is None):
        raise click.UsageError("give a CONFIG file or --resume RUN_DIR (one of them)")
    if resume_dir is not None and (out or games or seed is not None or decision_seconds):
        raise click.UsageError(
            "--out, --games, --seed and --decision-seconds do not apply to --resume"
        )
    dask = _backend(backend, scheduler, parts, workers)
    study = None
    if resume_dir is not None:
        run_dir = Path(resume_dir)
    else:
        assert config is not None
        study = load_study(config).replace(
            games_per_lineup=games, seed=seed, decision_seconds=decision_seconds
        )
        run_dir = Path(out) if out else Path("runs") / new_run_id(study)
    result = _play(
        run_dir,
        lambda progress: run_study(
            study,
            run_dir,
            resume=resume_dir is not None,
            workers=workers,
            start_method=start_method,
            progress=progress,
            writer=writer,
            backend=dask,
        ),
        logging.INFO if verbose else logging.WARNING,
    )
    if result.replayed:
        click.echo(f"replayed {len(result.replayed)} damaged chunk(s):")
        for chunk, why in sorted(result.replayed.items()):
            click.echo(f"  chunk {chunk}: {why}")
    rate = result.games_this_session / result.seconds if result.seconds > 0 else 0.0
    click.echo(
        f"{result.status}: {result.games_played:,} of {result.games_planned:,} planned games "
        f"({result.games_this_session:,} now, {rate:,.0f} games/s) in {run_dir}"
    )
    if result.stopping is not None:
        click.echo(f"stopping rule: {result.stopping['summary']}")
    if not no_summary and result.games_played:
        _print_summary(run_dir)


@click.command("verify")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False))
@library_errors
def verify_command(run_dir: str) -> None:
    """Replay every game of RUN_DIR from its moves and check every recorded column."""
    from marrakech_sim.run.verify import verify_run

    report = verify_run(run_dir)
    for problem in report.problems:
        click.echo(f"problem: {problem}", err=True)
    for example in report.examples:
        click.echo(f"mismatch: {example}", err=True)
    click.echo(report.summary())
    if not report.ok:
        sys.exit(1)


@click.command("bench")
@click.option(
    "--lineup",
    help="Strategies in seat order, comma-separated (default: 'random' in every seat).",
)
@rule_options
@click.option("--games", type=click.IntRange(1), default=100_000, show_default=True)
@click.option("--workers", type=click.IntRange(0), default=1, show_default=True)
@click.option(
    "--records/--no-records",
    default=None,
    help="Only with (or without) move records to Parquet (default: both).",
)
@click.option(
    "--move-columns",
    type=click.Choice(list(MOVE_COLUMN_CHOICES)),
    default="all",
    show_default=True,
    help="The moves table's columns with records: all, or only those a replay needs.",
)
@click.option("--chunk-games", type=click.IntRange(1), default=4096, show_default=True)
@click.option("--start-method", type=click.Choice(START_METHODS))
@click.option("--breakdown", "show_breakdown", is_flag=True, help="Also time each step.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@library_errors
def bench_command(
    lineup: str | None,
    games: int,
    workers: int,
    records: bool | None,
    move_columns: MoveColumns,  # (click.Choice of them)
    chunk_games: int,
    start_method: str | None,
    show_breakdown: bool,
    as_json: bool,
    rules_file: str | None,
    **rule_options: Any,
) -> None:
    """Games per second of the runner for one line-up and rule set."""
    from marrakech_sim.rules import Rules
    from marrakech_sim.run.bench import bench, breakdown

    rules = rules_from_cli(rules_file, **rule_options) or Rules()
    seats = lineup.split(",") if lineup else None
    if seats is not None and len(seats) != rules.players:
        raise click.BadParameter(
            f"{len(seats)} strategies for {rules.players} players", param_hint="--lineup"
        )
    modes = [True, False] if records is None else [records]
    results: list[dict[str, Any]] = [
        bench(
            rules,
            seats,
            games=games,
            workers=workers,
            records=mode,
            chunk_games=chunk_games,
            start_method=start_method,
            move_columns=move_columns,
        )
        for mode in modes
    ]
    extra = breakdown(rules, seats, chunk_games=chunk_games) if show_breakdown else None
    if as_json:
        payload: Any = results[0] if len(results) == 1 and extra is None else {"runs": results}
        if extra is not None:
            payload["breakdown"] = extra
        click.echo(json.dumps(payload, indent=2))
        return
    for r in results:
        click.echo(
            f"{r['games']:,} games, {r['workers']} worker(s), records "
            f"{'on (' + r['move_columns'] + ' columns)' if r['records'] else 'off'}: "
            f"{r['games_per_s']:,.0f} games/s "
            f"({r['games_per_s_per_worker']:,.0f} per worker) in {r['seconds']:.2f} s"
        )
    if extra is not None:
        click.echo(
            "per game: "
            + ", ".join(f"{k} {v}" for k, v in extra.items() if k.endswith("_per_game"))
        )


@click.command("study")
@click.argument("config", type=click.Path(exists=True, dir_okay=False))
@click.option("--run-dir", type=click.Path(file_okay=False), help="Run folder (default runs/NAME).")
@click.option(
    "--report-dir", type=click.Path(file_okay=False), help="Report folder (default reports/NAME)."
)
@click.option(
    "--workers", type=click.IntRange(0), help="Worker processes (default: CPUs; 0: in-process)."
)
@click.option(
    "--games",
    type=click.IntRange(1),
    help="Games per line-up, for a quick trial (rounded up to blocks; folders NAME-trial-...).",
)
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), help="The run's root seed.")
@backend_options
@library_errors
def study_command(
    config: str,
    run_dir: str | None,
    report_dir: str | None,
    workers: int | None,
    games: int | None,
    seed: int | None,
    backend: str,
    scheduler: str | None,
    parts: str | None,
) -> None:
    """Play the study in CONFIG and write its report: the main job, in one command.

    Running it again reuses a finished run folder of the same study, resumes an
    interrupted one, and rebuilds the report. With --games or --seed the study is a
    trial with its own folders (runs/NAME-trial-gGAMES-sSEED, and the same under
    reports/), so it never mixes with the full study's run.
    """
    from marrakech_sim.run.config import load_study
    from marrakech_sim.study import run_and_report, study_name

    dask = _backend(backend, scheduler, parts, workers)
    name = study_name(load_study(config), games, seed)
    runs = Path(run_dir) if run_dir else Path("runs") / name
    result = _play(
        runs,
        lambda progress: run_and_report(
            config,
            run_dir=runs,
            report_dir=report_dir,
            workers=workers,
            progress=progress,
            games=games,
            seed=seed,
            backend=dask,
        ),
        logging.WARNING,
        hint="\n(or run this same command again)",
    )
    if result.run is None:
        click.echo(f"reused the finished run in {result.run_dir}")
    else:
        r = result.run
        click.echo(
            f"{result.action} {result.run_dir}: {r.games_played:,} of {r.games_planned:,} games "
            f"in {r.seconds:.1f} s"
        )
    _print_summary(result.run_dir)
    click.echo(f"\nreport: {result.report.folder / 'report.html'}")


COMMANDS = (run_command, verify_command, bench_command, study_command)
