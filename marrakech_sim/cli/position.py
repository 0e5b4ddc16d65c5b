"""`marrakech position ...` and `marrakech perft`: look at positions and count game trees."""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from marrakech_sim.cli.common import library_errors, rule_options, rules_from_cli
from marrakech_sim.rules import GameState, Rules, perft, perft_divide
from marrakech_sim.rules.perft import MAX_DEPTH
from marrakech_sim.rules.render import render


def _state(notation: str | None, rules: Rules | None) -> GameState:
    if notation is None:
        return GameState.start(rules or Rules())
    return GameState.from_notation(notation, rules)


@click.group()
def position() -> None:
    """Inspect positions written in the notation of docs/rules.md section 9."""


@position.command("show")
@click.argument("notation", required=False)
@rule_options
@click.option(
    "--colour/--no-colour", default=None, help="ANSI colours (default: when writing to a terminal)."
)
@library_errors
def position_show(
    notation: str | None, colour: bool | None, rules_file: str | None, **rule_options: Any
) -> None:
    """Draw a position (default: the start position) with Assam, seats and turn."""
    state = _state(notation, rules_from_cli(rules_file, **rule_options))
    use_colour = sys.stdout.isatty() if colour is None else colour
    click.echo(render(state, colour=use_colour), color=use_colour)
    click.echo(state.to_notation())


@position.command("moves")
@click.argument("notation", required=False)
@rule_options
@library_errors
def position_moves(notation: str | None, rules_file: str | None, **rule_options: Any) -> None:
    """List the legal actions of the position's current phase."""
    state = _state(notation, rules_from_cli(rules_file, **rule_options))
    chances = dict(state.chance_outcomes())
    click.echo(f"seat {state.seat}, phase {state.phase}: {len(state.legal_actions())} actions")
    for action in state.legal_actions():
        odds = f"  p={chances[action]:.4f}" if action in chances else ""
        click.echo(f"  {action!r}{odds}")


@click.command("perft")
@click.argument("notation", required=False)
@click.option(
    "--depth", "-d", type=click.IntRange(0, MAX_DEPTH), required=True, help="Phases to count."
)
@click.option("--divide", is_flag=True, help="Also print the count below each action.")
@rule_options
@library_errors
def perft_command(
    notation: str | None, depth: int, divide: bool, rules_file: str | None, **rule_options: Any
) -> None:
    """Count the leaves of the game tree DEPTH phases below a position (docs/rules.md 10)."""
    state = _state(notation, rules_from_cli(rules_file, **rule_options))
    perft(state, min(depth, 1))  # loads (or compiles) the kernel: not counted in the speed
    started = time.perf_counter()
    if divide and depth >= 1:
        total = 0
        for action, count in perft_divide(state, depth):
            click.echo(f"{action!r}: {count}")
            total += count
    else:
        total = perft(state, depth)
    elapsed = time.perf_counter() - started
    click.echo(f"perft({depth}) = {total}")
    click.echo(f"{elapsed:.3f} s, {total / max(elapsed, 1e-9):,.0f} leaves/s", err=True)


COMMANDS = (position, perft_command)
