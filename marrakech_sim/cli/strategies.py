"""`marrakech strategies` and `marrakech check-strategy`: list and check strategies."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from marrakech_sim.cli.common import library_errors
from marrakech_sim.errors import ConfigError
from marrakech_sim.play.strategy import describe, registered


def parse_params(pairs: tuple[str, ...]) -> dict[str, Any]:
    """key=value pairs; values are read as JSON (numbers, true/false, "text"), else text."""
    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"parameter {pair!r}: expected key=value")
        try:
            params[key] = json.loads(text)
        except json.JSONDecodeError:
            params[key] = text
    return params


@click.command("strategies")
@library_errors
def strategies_command() -> None:
    """List the registered strategies with their descriptions and parameters."""
    for name in sorted(registered()):
        info = describe(name)
        compiled = "  [compiled]" if info["compiled"] else ""
        click.echo(f"{name}{compiled}: {info['summary']}")
        for key, value in info["parameters"].items():
            click.echo(f"    {key} = {value!r}")


@click.command("check-strategy")
@click.argument("ref")
@click.option(
    "--games",
    type=click.IntRange(1),
    default=2,
    show_default=True,
    help="Games per variant and seat.",
)
@click.option(
    "--param",
    "params",
    multiple=True,
    metavar="KEY=VALUE",
    help="A strategy parameter (repeatable); values are read as JSON.",
)
@click.option("--seed", type=int, default=1, show_default=True, help="First game seed.")
@click.option(
    "--time-budget",
    type=float,
    default=5.0,
    show_default=True,
    help="Seconds per decision before it counts as a fault.",
)
@library_errors
def check_strategy_command(
    ref: str, games: int, params: tuple[str, ...], seed: int, time_budget: float
) -> None:
    """Play REF against the built-ins in every seat and variant and report problems.

    REF is a registered name, package.module:Class or path/to/file.py:Class. Exits
    with status 1 when a problem was found.
    """
    from marrakech_sim.play.conformance import check_strategy

    report = check_strategy(
        ref, parse_params(params), games=games, seed=seed, time_budget=time_budget
    )
    for line in report.lines():
        click.echo(line)
    if not report.ok:
        sys.exit(1)


COMMANDS = (strategies_command, check_strategy_command)
