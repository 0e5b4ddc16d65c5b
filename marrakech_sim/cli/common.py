"""What the command modules share: library errors as click errors, the rule options."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

import click

from marrakech_sim.errors import MarrakechError
from marrakech_sim.rules import Rules
from marrakech_sim.rules.options import FACINGS, TIE_BREAKS
from marrakech_sim.run.config import read_rules_table


def library_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn MarrakechError into a click error (exit code 2 for usage, 1 otherwise)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except MarrakechError as exc:
            raise click.ClickException(str(exc)) from exc

    return wrapper


def quiet_after_stop() -> None:
    """Ctrl-C stopped the command, which now ends: the objects the signal's exception left
    half made in a library (llvmlite's, stopped while numba loaded a kernel) complain as
    they are collected ("Exception ignored in ...", a traceback) after the stop's message.
    Their complaints are not the user's business: dropped."""
    sys.unraisablehook = lambda report: None


def rule_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The docs/rules.md section 8 options, and --rules FILE.toml as their base."""
    options = [
        click.option(
            "--rules",
            "rules_file",
            type=click.Path(exists=True, dir_okay=False),
            help="TOML file of rule options (keys of docs/rules.md section 8).",
        ),
        click.option("--players", type=int, help="Number of players (default 4)."),
        click.option("--rugs-per-colour", type=int, help="Rugs of each colour."),
        click.option("--colours-per-player", type=int, help="Colours each player owns."),
        click.option("--starting-dirhams", type=int, help="Dirhams each player starts with."),
        click.option(
            "--seat-dirhams",
            help="Each seat's starting dirhams in seat order, comma-separated (replaces "
            "--starting-dirhams), e.g. 30,31,32,33.",
        ),
        click.option("--die-faces", help="Die faces, comma-separated (default 1,2,2,3,3,4)."),
        click.option(
            "--initial-facing",
            type=click.Choice(list(FACINGS)),
            help="Assam's facing at the start.",
        ),
        click.option(
            "--orient-at-end/--orient-at-start",
            default=None,
            help="The official variant: orient Assam at the end of the turn.",
        ),
        click.option(
            "--own-rugs-coverable/--own-rugs-protected",
            default=None,
            help="Whether a player may fully cover their own rug.",
        ),
        click.option("--tie-break", type=click.Choice(list(TIE_BREAKS)), help="Tie-break."),
        click.option(
            "--end-when-one-left/--play-to-the-end",
            default=None,
            help="Whether the game ends when one player is left.",
        ),
        click.option("--board-size", type=int, help="Odd board size from 5 (default 7)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def rules_from_cli(
    rules_file: str | None, base: dict[str, Any] | None = None, **given: Any
) -> Rules | None:
    """Rules from a TOML file (or `base`, rule options as `Rules.to_dict` gives them) and
    command-line options; None when nothing was given."""
    from marrakech_sim.human import study_ruleset_names

    data: dict[str, Any] = dict(base or {})
    if rules_file:
        if study_ruleset_names(rules_file) is not None:
            raise click.UsageError(
                f"{rules_file!r} holds rule sets ([rulesets.NAME] tables), not rule options: "
                "--rules takes a file of rule options here (docs/rules.md section 8); "
                "`marrakech play --rules FILE --ruleset NAME` plays one of its rule sets"
            )
        data.update(read_rules_table(rules_file))
    if given.get("starting_dirhams") is not None and given.get("seat_dirhams") is None:
        data.pop("seat_dirhams", None)  # the flag's one purse for every seat replaces them
    for key, value in given.items():
        if value is None:
            continue
        if key in ("die_faces", "seat_dirhams"):
            try:
                value = [int(v) for v in str(value).split(",")]
            except ValueError as exc:
                raise click.BadParameter(
                    f"{value!r}: expected comma-separated integers",
                    param_hint="--" + key.replace("_", "-"),
                ) from exc
        data[key] = value
    return Rules.from_dict(data) if data else None
