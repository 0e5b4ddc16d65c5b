"""The `marrakech` command line: a thin layer over library functions.

Each command parses its arguments, calls one library function and prints a summary;
library errors (MarrakechError) become click errors with the library's message.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

import click

from marrakech_sim.errors import MarrakechError
from marrakech_sim.rules import GameState, Rules, perft, perft_divide
from marrakech_sim.rules.options import FACINGS, TIE_BREAKS, read_rules_table
from marrakech_sim.rules.render import render


def _library_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn MarrakechError into a click error (exit code 2 for usage, 1 otherwise)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except MarrakechError as exc:
            raise click.ClickException(str(exc)) from exc

    return wrapper


def _rule_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The RULES.md section 8 options, and --rules FILE.toml as their base."""
    options = [
        click.option("--rules", "rules_file", type=click.Path(exists=True, dir_okay=False),
                     help="TOML file of rule options (keys of RULES.md section 8)."),
        click.option("--players", type=int, help="Number of players (default 4)."),
        click.option("--rugs-per-colour", type=int, help="Rugs of each colour."),
        click.option("--colours-per-player", type=int, help="Colours each player owns."),
        click.option("--starting-dirhams", type=int, help="Dirhams each player starts with."),
        click.option("--die-faces", help="Die faces, comma-separated (default 1,2,2,3,3,4)."),
        click.option("--initial-facing", type=click.Choice(list(FACINGS)),
                     help="Assam's facing at the start."),
        click.option("--orient-at-end/--orient-at-start", default=None,
                     help="The official variant: orient Assam at the end of the turn."),
        click.option("--own-rugs-coverable/--own-rugs-protected", default=None,
                     help="Whether a player may fully cover their own rug."),
        click.option("--tie-break", type=click.Choice(list(TIE_BREAKS)), help="Tie-break."),
        click.option("--end-when-one-left/--play-to-the-end", default=None,
                     help="Whether the game ends when one player is left."),
        click.option("--board-size", type=int, help="Odd board size from 5 (default 7)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def rules_from_cli(rules_file: str | None, **given: Any) -> Rules | None:
    """Rules from a TOML file and command-line options; None when nothing was given."""
    data: dict[str, Any] = {}
    if rules_file:
        data.update(read_rules_table(rules_file))
    for key, value in given.items():
        if value is None:
            continue
        if key == "die_faces":
            try:
                value = [int(v) for v in str(value).split(",")]
            except ValueError as exc:
                raise click.BadParameter(
                    f"{value!r}: expected comma-separated integers", param_hint="--die-faces"
                ) from exc
        data[key] = value
    return Rules.from_dict(data) if data else None


def _state(notation: str | None, rules: Rules | None) -> GameState:
    if notation is None:
        return GameState.start(rules or Rules())
    return GameState.from_notation(notation, rules)


@click.group()
@click.version_option(package_name="marrakech_sim")
def main() -> None:
    """marrakech: run Marrakech balance studies and report on them."""


@main.group()
def position() -> None:
    """Inspect positions written in RULES.md section 9 notation."""


@position.command("show")
@click.argument("notation", required=False)
@_rule_options
@click.option("--colour/--no-colour", default=None,
              help="ANSI colours (default: when writing to a terminal).")
@_library_errors
def position_show(notation: str | None, colour: bool | None, rules_file: str | None,
                  **rule_options: Any) -> None:
    """Draw a position (default: the start position) with Assam, seats and turn."""
    state = _state(notation, rules_from_cli(rules_file, **rule_options))
    use_colour = sys.stdout.isatty() if colour is None else colour
    click.echo(render(state, colour=use_colour))
    click.echo(state.to_notation())


@position.command("moves")
@click.argument("notation", required=False)
@_rule_options
@_library_errors
def position_moves(notation: str | None, rules_file: str | None, **rule_options: Any) -> None:
    """List the legal actions of the position's current phase."""
    state = _state(notation, rules_from_cli(rules_file, **rule_options))
    chances = dict(state.chance_outcomes())
    click.echo(f"seat {state.seat}, phase {state.phase}: {len(state.legal_actions())} actions")
    for action in state.legal_actions():
        odds = f"  p={chances[action]:.4f}" if action in chances else ""
        click.echo(f"  {action!r}{odds}")


@main.command("perft")
@click.argument("notation", required=False)
@click.option("--depth", "-d", type=click.IntRange(0), required=True, help="Phases to count.")
@click.option("--divide", is_flag=True, help="Also print the count below each action.")
@_rule_options
@_library_errors
def perft_command(notation: str | None, depth: int, divide: bool, rules_file: str | None,
                  **rule_options: Any) -> None:
    """Count the leaves of the game tree DEPTH phases below a position (RULES.md 10)."""
    import time

    state = _state(notation, rules_from_cli(rules_file, **rule_options))
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
