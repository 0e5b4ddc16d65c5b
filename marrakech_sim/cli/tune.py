"""`marrakech tune`: the seat compensation search and its confirmation (design.tuning)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from marrakech_sim.cli.common import library_errors, quiet_after_stop


@click.command("tune")
@click.argument("config", type=click.Path(exists=True, dir_okay=False))
@click.option("--level", help="Tune at this skill level only (a strategy of the config).")
@click.option(
    "--margin",
    type=float,
    help="A seat is fair within +-MARGIN pp (default: the config's tune.margin_pp, or 1); "
    "fixed in a folder once its confirmation has begun.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    help="The tune's folder (default tunes/NAME); a stopped tune there is resumed.",
)
@click.option(
    "--workers", type=click.IntRange(0), help="Worker processes (default: CPUs; 0: in-process)."
)
@library_errors
def tune_command(
    config: str, level: str | None, margin: float | None, out: str | None, workers: int | None
) -> None:
    """Find the starting purse per seat that evens the seats of each rule set of CONFIG, at
    each skill level, and confirm it on fresh seeds."""
    from marrakech_sim.design.tune_report import tuned_toml, verdict_sentence, write_tune_report
    from marrakech_sim.design.tuning import load_tune_config, run_tune
    from marrakech_sim.errors import RunInterrupted
    from marrakech_sim.run.pool import run_logging

    tune = load_tune_config(config).with_options(level=level, margin_pp=margin)
    folder = Path(out) if out else Path("tunes") / tune.name
    click.echo(f"tune folder: {folder}", err=True)
    try:
        with run_logging(folder, console_level=logging.WARNING):
            result = run_tune(tune, folder, workers=workers, say=lambda m: click.echo(m, err=True))
        # (stopped while it writes the report, the tune is done: run again, it writes it)
        report = write_tune_report(result)
    except (RunInterrupted, KeyboardInterrupt):
        # (the runner's message names the step's run folder; the tune resumes as a whole)
        quiet_after_stop()
        click.echo("", err=True)
        click.echo(
            "tune stopped; the same command resumes it from its last finished step", err=True
        )
        sys.exit(130)
    for item in result.tuned:
        click.echo(
            f"{item.ruleset} at {item.level}: purses {list(item.search.purses)}: "
            f"{verdict_sentence(item.confirmed, tune.margin_pp, item.search, tune.plan.level)}"
        )
    click.echo(f"{result.games:,} games; report: {report}")
    click.echo("")
    click.echo(tuned_toml(result), nl=False)


COMMANDS = (tune_command,)
