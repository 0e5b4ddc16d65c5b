"""`marrakech export`, `import`, `replay` and `play`: seeing games one at a time."""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path
from typing import Any

import click

from marrakech_sim.cli.common import library_errors, rule_options, rules_from_cli
from marrakech_sim.errors import ConfigError, MarrakechError
from marrakech_sim.files import write_atomic
from marrakech_sim.play.strategy import StrategySpec
from marrakech_sim.record import (
    Record,
    RecordError,
    format_records,
    notable_games,
    read_record_file,
    records_from_run,
    replay,
)
from marrakech_sim.rules import Rules
from marrakech_sim.run.config import check_name


@click.command("export")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False))
@click.option(
    "--game",
    "games",
    type=click.IntRange(0, 2**63 - 1),
    multiple=True,
    help="A game id (repeatable).",
)
@click.option(
    "--where",
    help='SQL condition over the games table, e.g. "turns > 60 AND tie_broken" (DuckDB).',
)
@click.option("--notable", is_flag=True, help="The notable games (comeback, largest payment, ...).")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="File to write (default: stdout)."
)
@library_errors
def export_command(
    run_dir: str, games: tuple[int, ...], where: str | None, notable: bool, output: str | None
) -> None:
    """Write game records (docs/game-record.md) of a run's games: all, or those chosen."""
    from marrakech_sim.runfolder import every_move, read_manifest

    if where and notable:
        raise click.UsageError("--where and --notable choose games in two ways: give one")
    ids: list[int] | None = list(games) or None
    if notable:
        found = notable_games(run_dir)
        if not found:
            keep = read_manifest(run_dir).config.get("keep_moves", 1)
            why = f"it kept no game's moves (keep_moves = {keep})" if keep != 1 else "none ended"
            raise RecordError(f"run {run_dir!r} has no notable game to export: {why}")
        ids = sorted({n.game_id for n in found} | set(ids or []))
        for n in found:
            click.echo(f"{n.kind}: game {n.game_id}, turn {n.turn}: {n.detail}", err=True)
    started = time.perf_counter()
    records = list(records_from_run(run_dir, ids, where))
    text = format_records(records)
    if output:
        write_atomic(output, text)
    else:
        click.echo(text, nl=False)
    elapsed = time.perf_counter() - started
    where_to = f" to {output}" if output else ""
    click.echo(f"wrote {len(records)} records{where_to} ({elapsed:.2f} s)", err=True)
    if not games and not notable and not every_move(read_manifest(run_dir)):
        click.echo("(only games whose moves the run kept have records: keep_moves)", err=True)


@click.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@library_errors
def import_command(file: str) -> None:
    """Read game records and replay each to its Final position, checking every action."""
    records = read_record_file(file)
    for record in records:
        done = replay(record)
        click.echo(
            f"game {record.game} ({record.event}): {len(done.turns)} turns replayed, "
            f"Final and Result {record.result!r} agree"
        )
    click.echo(f"{len(records)} records, all replayed")


def _load(source: str, game: str | None, index: int | None) -> Record:
    """The record to show: from a run folder (GAME is its id) or a record file."""
    path = Path(source)
    if path.is_dir():
        if game is None:
            raise click.UsageError("with a run folder, give the GAME_ID to replay")
        if not (game.isascii() and game.isdigit() and len(game) <= 19 and int(game) < 2**63):
            shown = (
                repr(game) if len(game) <= 40 else f"{game[:40]!r}... ({len(game):,} characters)"
            )
            raise click.BadParameter(
                f"{shown} is not a game id (a whole number from 0 to {2**63 - 1})",
                param_hint="GAME_ID",
            )
        return next(records_from_run(path, [int(game)]))
    records = read_record_file(path)
    if not records:
        raise RecordError(f"{source!r} holds no game record")
    if game is not None:
        chosen = [r for r in records if r.game == game]
        if not chosen:
            have = ", ".join(r.game for r in records[:10])
            raise RecordError(f"{source!r} has no record with Game {game!r}; it has: {have}")
        return chosen[0]
    if index is not None:
        if not 1 <= index <= len(records):
            raise click.BadParameter(
                f"{source!r} holds {len(records)} records", param_hint="--index"
            )
        return records[index - 1]
    return records[0]


def _read_key() -> str:
    if sys.stdin.isatty():
        return click.getchar()
    line = sys.stdin.readline()
    if not line:
        return ""
    return line.strip() or "n"


@click.command("replay")
@click.argument("source", type=click.Path(exists=True))
@click.argument("game", required=False, metavar="[GAME_ID]")
@click.option("--index", type=int, help="In a file of several records: the N-th (from 1).")
@click.option("--turn", type=click.IntRange(0), help="The position after N turns (0: the start).")
@click.option("--svg", type=click.Path(dir_okay=False), help="Draw the board at --turn as SVG.")
@click.option("--png", type=click.Path(dir_okay=False), help="Draw the board at --turn as PNG.")
@click.option("--gif", type=click.Path(dir_okay=False), help="Animate the whole game as a GIF.")
@click.option("--html", type=click.Path(dir_okay=False), help="A page that steps through the game.")
@click.option(
    "--record", "record_out", type=click.Path(dir_okay=False), help="Write the game record."
)
@click.option(
    "--colour/--no-colour", default=None, help="ANSI colours (default: when writing to a terminal)."
)
@library_errors
def replay_command(
    source: str,
    game: str | None,
    index: int | None,
    turn: int | None,
    svg: str | None,
    png: str | None,
    gif: str | None,
    html: str | None,
    record_out: str | None,
    colour: bool | None,
) -> None:
    """Step through a game: SOURCE is a run folder with GAME_ID, or a record file.

    Without options: the board in the terminal, forwards and backwards by key (arrows,
    n/p, g/G, q). --turn N prints one position; --svg/--png/--gif/--html write pictures
    and pages instead.
    """
    from marrakech_sim.show import terminal

    record = _load(source, game, index)
    done = replay(record)
    last = len(done.positions) - 1
    if turn is not None and turn > last:
        raise click.BadParameter(f"the game has turns 0 to {last}", param_hint="--turn")
    at = last if turn is None else turn
    wrote = False
    for flag, path in (("--svg", svg), ("--png", png), ("--gif", gif), ("--html", html)):
        if path and Path(path).suffix.lower() != f".{flag[2:]}":
            raise click.BadParameter(f"{path!r}: its name must end in .{flag[2:]}", param_hint=flag)
    if record_out:
        write_atomic(record_out, record.to_text())
        click.echo(f"wrote {record_out}", err=True)
        wrote = True
    if svg or png or gif:
        from marrakech_sim.show.animate import write_gif, write_picture

        for path in (svg, png):
            if path:
                write_picture(done, at, path)
                click.echo(f"wrote {path} (after turn {at})", err=True)
        if gif:
            write_gif(done, gif)
            click.echo(f"wrote {gif} ({last + 1} frames)", err=True)
        wrote = True
    if html:
        from marrakech_sim.show.page import write_page

        write_page(done, html, start=turn or 0)
        click.echo(f"wrote {html}", err=True)
        wrote = True
    use_colour = sys.stdout.isatty() if colour is None else colour
    if turn is not None and not wrote:
        click.echo(terminal.replay_frame(done, turn, use_colour), color=use_colour)
        return
    if wrote:
        return
    interactive = sys.stdout.isatty()

    def show(text: str) -> None:
        if interactive:
            click.clear()
        click.echo(text, color=use_colour)

    terminal.step_through(done, _read_key, show, colour=use_colour)


@click.command("play")
@click.option(
    "--vs",
    default="greedy,random,random",
    show_default=True,
    help="The opponents' strategies in seat order, comma-separated (their count sets the "
    "players unless --players is given).",
)
@click.option("--seat", type=click.IntRange(0), default=0, show_default=True, help="Your seat.")
@click.option(
    "--seed", type=click.IntRange(0), help="The run's root seed (default: from the clock)."
)
@click.option("--name", default="you", show_default=True, help="Your name in the record.")
@click.option(
    "--hint", "hint_ref", default="greedy", show_default=True, help="The strategy that gives hints."
)
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    help="The one-game run folder to write (default: runs/play-SEED); game.txt holds the record.",
)
@rule_options
@click.option(
    "--ruleset",
    help="With --rules CONFIG.toml (a study config): play its rule set of this name.",
)
@click.option(
    "--colour/--no-colour", default=None, help="ANSI colours (default: when writing to a terminal)."
)
@click.option("--web", is_flag=True, help="Play in the browser: serve the game on 127.0.0.1.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="With --web: the port (0: any free one).",
)
@library_errors
def play_command(
    vs: str,
    seat: int,
    seed: int | None,
    name: str,
    hint_ref: str,
    out: str | None,
    colour: bool | None,
    web: bool,
    port: int,
    ruleset: str | None,
    rules_file: str | None,
    **rule_opts: Any,
) -> None:
    """Play a game against strategies, in the terminal or (--web) in the browser; saved
    as a record and a one-game run folder.

    In the terminal, at each choice: a number from the list, L/S/R for a rotation, or two
    squares for a placement (the letters marked on the board, AB, or 3,4 3,5); u undoes
    your last choice, h asks the hint strategy, q quits. With --web: open the address it
    prints.
    """
    from marrakech_sim.human import (
        QuitGame,
        game_seed,
        play_person,
        save_game,
        study_rules,
        study_ruleset_names,
    )

    try:  # the name labels the person's seat in the run folder saved at the end
        check_name("--name", name)
    except ConfigError as exc:
        raise click.BadParameter(
            f"{name!r}: a name is letters, digits, '_', '-' and '.' (it names your seat "
            "in the saved record and run folder)",
            param_hint="--name",
        ) from exc
    refs = [r.strip() for r in vs.split(",") if r.strip()]
    if ruleset is not None:
        if rules_file is None:
            raise click.UsageError("--ruleset NAME needs --rules CONFIG.toml (a study config)")
        base = study_rules(rules_file, ruleset).to_dict()
        rules = rules_from_cli(None, base, **rule_opts) or Rules()
    else:
        names = study_ruleset_names(rules_file) if rules_file else None
        if names is not None:
            raise click.UsageError(
                f"{rules_file!r} holds rule sets ([rulesets.NAME]): choose one with "
                f"--ruleset NAME (allowed are {', '.join(names)})"
            )
        if rule_opts.get("players") is None:
            rule_opts["players"] = len(refs) + 1
        rules = rules_from_cli(rules_file, **rule_opts) or Rules()
    if len(refs) == 1 and rules.players > 2:
        refs = refs * (rules.players - 1)
    opponents = [StrategySpec.of(ref) for ref in refs]
    for spec in opponents:
        spec.load_class()  # an unknown name fails here, before the game
    run_seed = seed if seed is not None else int(time.time())
    run_dir = Path(out) if out else Path("runs") / f"play-{run_seed}"
    if run_dir.exists() and not run_dir.is_dir():
        raise click.UsageError(f"{str(run_dir)!r} is a file: --out names a folder to write")
    if run_dir.exists() and any(run_dir.iterdir()):
        raise click.UsageError(f"{str(run_dir)!r} is not empty: choose --out or another --seed")
    _check_writable(run_dir)
    if web:
        _play_web(rules, opponents, seat, run_seed, run_dir, name, hint_ref, port)
        return
    use_colour = sys.stdout.isatty() if colour is None else colour

    def read(prompt: str) -> str:
        if sys.stdin.isatty():
            try:
                return str(click.prompt(prompt, prompt_suffix="> "))
            except click.Abort:  # Ctrl-C or Ctrl-D: quit, keeping the turns played
                raise EOFError from None
        line = sys.stdin.readline()
        if not line:
            raise EOFError
        click.echo(f"{prompt}> {line.rstrip()}")
        return line

    try:
        game = play_person(
            rules,
            opponents,
            read=read,
            show=lambda text: click.echo(text, color=use_colour),
            seat=seat,
            seed=game_seed(run_seed),
            name=name,
            hint=StrategySpec.of(hint_ref) if hint_ref else None,
            colour=use_colour,
        )
    except QuitGame as exc:
        if exc.record is not None:
            target = run_dir / "unfinished.txt"
            try:
                run_dir.mkdir(parents=True, exist_ok=True)
                write_atomic(target, exc.record.to_text())
            except (OSError, MarrakechError) as failed:  # the turns go to the terminal
                click.echo(exc.record.to_text())
                with contextlib.suppress(OSError):
                    run_dir.rmdir()  # made here and empty: nothing half-written stays
                why = failed.strerror if isinstance(failed, OSError) else str(failed)
                raise click.ClickException(
                    f"{exc}; {why}: the turns so far are the record above"
                ) from None
            click.echo(f"{exc}; the turns so far are in {target}")
        return
    try:
        record = save_game(game, run_seed, opponents, run_dir)
    except MarrakechError:
        click.echo(game.record.to_text())  # whatever was saved or not, never lost
        raise
    click.echo(f"Result {record.result}; record {run_dir / 'game.txt'}, run folder {run_dir}")
    click.echo(
        f"replay it: marrakech replay {run_dir / 'game.txt'}   check it: marrakech verify {run_dir}"
    )


def _check_writable(run_dir: Path) -> None:
    """Refuse, before the game, a run folder that cannot be written (a read-only file
    system, no permission): the game would be played and then not saved."""
    import os

    folder = run_dir.absolute()
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise click.BadParameter(
            f"{str(run_dir)!r}: {str(folder)!r} cannot be written (a read-only file system "
            "or no permission): choose a folder the game can be saved in",
            param_hint="--out",
        )


def _play_web(
    rules: Rules,
    opponents: list[StrategySpec],
    seat: int,
    run_seed: int,
    run_dir: Path,
    name: str,
    hint_ref: str,
    port: int,
) -> None:
    from marrakech_sim.web.server import Games, serve, serve_until_ctrl_c, url_of
    from marrakech_sim.web.session import WebGame

    hint = StrategySpec.of(hint_ref) if hint_ref else None
    first = WebGame(
        rules,
        opponents,
        run_seed=run_seed,
        out_dir=run_dir,
        seat=seat,
        name=name,
        hint=hint,
        compiling=lambda words: click.echo(f"{words} ...", err=True),
    )
    games = Games(first)
    try:
        server = serve(games, port=port)
    except OSError as exc:
        raise click.ClickException(f"port {port}: {exc.strerror}; choose another --port") from exc
    click.echo(f"Playing on {url_of(server)}  (Ctrl-C stops; the game is saved in {run_dir})")
    try:
        serve_until_ctrl_c(server)
    except KeyboardInterrupt:
        game = games.current
        click.echo("stopped" + ("" if game.record else ": the game was not finished"))
    finally:
        server.server_close()
    for game in games.played:
        if game.fault is not None:
            click.echo(f"{game.out_dir}: {game.fault}; the turns played are in {game.saved}")


COMMANDS = (export_command, import_command, replay_command, play_command)
