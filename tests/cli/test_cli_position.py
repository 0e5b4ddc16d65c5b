"""The `marrakech position` and `marrakech perft` commands, through click's CliRunner."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from marrakech_sim.cli import main

START_2P = "......./......./......./......./......./......./....... 33N ry:30:12+12,bp:30:12+12 0d"


def _run(*args: str) -> click.testing.Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_position_show_draws_the_start_position() -> None:
    """`position show` with no notation draws the 4-player start and its notation."""
    result = _run("position", "show", "--no-colour")
    assert result.exit_code == 0
    assert "@^" in result.output  # Assam on the centre square facing north
    assert "To move: seat 0 orients Assam" in result.output
    assert result.output.strip().endswith("0o")


def test_position_show_colour_uses_ansi_codes() -> None:
    """--colour paints rug halves with ANSI background colours."""
    text = "r1r1...../......./......./......./......./......./....... 33N r:30:11,b:30:12 1o"
    result = _run("position", "show", text, "--colour")
    assert result.exit_code == 0
    assert "\x1b[41;97m" in result.output


def test_position_moves_lists_draw_odds() -> None:
    """`position moves` lists the draw phase's colours with their probabilities."""
    result = _run("position", "moves", START_2P)
    assert result.exit_code == 0
    assert "'r'  p=0.5000" in result.output and "'y'  p=0.5000" in result.output


def test_perft_prints_the_count() -> None:
    """`perft --depth 3` from the 4-player start prints 111 (hand-checked in RULES.md terms)."""
    result = _run("perft", "--depth", "3")
    assert result.exit_code == 0
    assert "perft(3) = 111" in result.output


def test_perft_divide_sums_to_the_total() -> None:
    """--divide prints one count per action and they add up to the total."""
    result = _run("perft", "--depth", "4", "--divide", "--players", "3", "--orient-at-end")
    lines = result.stdout.strip().splitlines()
    counts = [int(line.split(": ")[1]) for line in lines[:-1]]
    assert lines[-1] == f"perft(4) = {sum(counts)}"
    assert len(counts) == 4  # the variant starts with a roll: one branch per distinct face


def test_perft_rules_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """--rules FILE.toml reads rule options; command-line options override them."""
    path = tmp_path / "rules.toml"
    path.write_text("[rules]\nplayers = 2\ndie_faces = [1, 2]\n")
    result = _run("perft", "--depth", "1", "--rules", str(path))
    assert "perft(1) = 2" in result.output  # the 2-player start draws one of two colours


def test_perft_and_position_take_seat_dirhams() -> None:
    """--seat-dirhams gives each seat its purse: the start shows them, and perft counts from
    there (RULES.md section 8; the tree of a rich start is the standard one)."""
    result = _run("position", "show", "--no-colour", "--seat-dirhams", "30,31,32,33")
    assert result.exit_code == 0
    assert result.output.strip().endswith("r:30:12,b:31:12,y:32:12,p:33:12 0o")
    result = _run("perft", "--depth", "3", "--seat-dirhams", "30,31,32,33")
    assert "perft(3) = 111" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["perft", "-d", "2", "--seat-dirhams", "30,30"], "seat_dirhams = [30, 30]: allowed"),
        (["perft", "-d", "2", "--seat-dirhams", "30,x"], "expected comma-separated integers"),
        (["perft", "-d", "2", "--players", "1"], "players = 1"),
        (["perft", "-d", "2", "--board-size", "8"], "board_size = 8: must be odd"),
        (["perft", "-d", "2", "--die-faces", "1,x"], "expected comma-separated integers"),
        (
            [
                "position",
                "show",
                "......./ 33N r:30:12,b:30:12 0o",
                "--players",
                "2",
                "--colours-per-player",
                "1",
            ],
            "board field",
        ),
        (["position", "show", "......./ 33N r:30:12 0o"], "cannot infer rules"),
    ],
)
def test_bad_input_is_a_clear_error(args: list[str], message: str) -> None:
    """Bad rule options and bad notation exit non-zero with a message naming the value."""
    result = CliRunner().invoke(main, args)
    assert result.exit_code != 0
    assert message in result.output


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found = []
    for name, command in group.commands.items():
        found.append((prefix + name, command))
        if isinstance(command, click.Group):
            found.extend(_commands(command, prefix + name + " "))
    return found


@pytest.mark.parametrize(("name", "command"), _commands(main))
def test_every_command_has_help(name: str, command: click.Command) -> None:
    """Every CLI command documents itself (and --help works for it)."""
    assert command.help, f"`marrakech {name}` has no help text"
    result = CliRunner().invoke(main, [*name.split(), "--help"])
    assert result.exit_code == 0


def test_command_line_starts_without_the_report_libraries() -> None:
    """Loading the command line leaves pandas, scipy.stats, DuckDB and matplotlib unloaded
    (about 2 s): only the report commands import them."""
    heavy = "('pandas', 'scipy.stats', 'duckdb', 'matplotlib')"
    code = f"import sys, marrakech_sim.cli\nprint(','.join(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
