"""`marrakech report` and `marrakech plan`: the balance report, and sizing a study."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from marrakech_sim.cli.common import library_errors
from marrakech_sim.report.sizes import MOVES_GAMES, RATING_GAMES

F = TypeVar("F", bound=Callable[..., Any])


def _most_games(flag: str, default: int, which: str) -> Callable[[F], F]:
    """A bound on the games (whole blocks) some part of the report reads."""
    return click.option(
        flag,
        type=click.IntRange(min=1),
        default=default,
        show_default=True,
        help=f"Most games (whole blocks) {which}.",
    )


@click.command()
@click.argument(
    "run_dirs",
    nargs=-1,
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Report folder (default: reports/<first run folder's name>).",
)
@_most_games("--rating-games", RATING_GAMES, "the rating fit uses")
@_most_games("--moves-games", MOVES_GAMES, "whose moves are read for per-turn metrics")
@click.option("--title", default=None, help="Report title.")
@library_errors
def report(
    run_dirs: tuple[Path, ...],
    out: Path | None,
    rating_games: int,
    moves_games: int,
    title: str | None,
) -> None:
    """Write report.html, report.md, charts and CSV tables for one or more RUN_DIRS."""
    from marrakech_sim.report import build_report

    out = out or Path("reports") / run_dirs[0].resolve().name
    result = build_report(
        list(run_dirs), out, rating_games=rating_games, moves_games=moves_games, title=title
    )
    f = result.facts
    click.echo(
        f"{f['n_games']:,} games from {len(run_dirs)} run(s); "
        f"{f['n_games'] - f['n_balance_games']:,} error games left out"
    )
    click.echo(f"{len(result.csv)} tables, {len(result.charts)} charts in {result.folder}")
    click.echo(str(result.html))


@click.command()
@click.option(
    "--seats",
    "players",
    type=click.IntRange(min=2),
    default=4,
    show_default=True,
    help="Players (seats) per game.",
)
@click.option(
    "--effect",
    type=float,
    default=0.01,
    show_default=True,
    help="Seat advantage to detect, as a share (0.01 = 1 percentage point).",
)
@click.option(
    "--alpha", type=float, default=0.05, show_default=True, help="Two-sided significance level."
)
@click.option(
    "--power", type=float, default=0.8, show_default=True, help="Chance to detect the effect."
)
@click.option(
    "--design-effect",
    type=float,
    default=1.0,
    show_default=True,
    help="Variance factor of the block design: 1 treats every game as independent; take it "
    "from a pilot of the same kind of line-ups (report: design_effect of seat 0), never from "
    "line-ups against `random`, whose seat rotation makes it small.",
)
@click.option(
    "--block-size",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Games per block; the answer is rounded up to whole blocks.",
)
@library_errors
def plan(
    players: int, effect: float, alpha: float, power: float, design_effect: float, block_size: int
) -> None:
    """Print the games needed to detect a seat advantage, and a difference between two variants."""
    from marrakech_sim.report import plan_study

    seat, variant = plan_study(players, effect, alpha, power, design_effect, block_size)
    s, v = seat.iloc[0], variant.iloc[0]
    click.echo(
        f"{players} players, effect {100 * effect:g} pp, alpha {alpha:g}, power {power:g}, "
        f"{block_size} game(s) per block"
    )
    assumed = (
        "1 (assumed: every game as informative as an independent one; evenly matched "
        "players in a block design are near it)"
        if design_effect == 1.0
        else f"{design_effect:g} (given: the games needed scale with it)"
    )
    click.echo(
        f"design effect {assumed}; one borrowed from line-ups against `random` undersizes "
        "a study of evenly matched players (about 2.5x in the default study)"
    )
    click.echo(
        f"seat advantage: player 1 winning {100 * (s['fair_share'] + effect):.4g}% instead of "
        f"{100 * s['fair_share']:.4g}% needs {int(s['n_games']):,} games "
        f"({int(s['n_blocks']):,} blocks)"
    )
    click.echo(
        f"variant difference: player 1's share differing by {100 * effect:g} pp between two "
        f"variants needs {int(v['n_games_per_variant']):,} games per variant "
        f"({int(v['n_games_total']):,} in all)"
    )


COMMANDS = (report, plan)
