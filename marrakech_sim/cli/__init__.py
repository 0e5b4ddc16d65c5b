"""The `marrakech` command line: a thin layer over library functions.

Each command parses its arguments, calls one library function and prints a summary;
library errors (MarrakechError) become click errors with the library's message. This
package is the only place that imports click; one module per area of commands.
"""

from __future__ import annotations

import click

from marrakech_sim.cli import games, position, report, run, strategies, tune


@click.group()
@click.version_option(package_name="marrakech_sim")
def main() -> None:
    """marrakech: run Marrakech balance studies and report on them."""


for _module in (games, position, report, run, strategies, tune):
    for _command in _module.COMMANDS:
        main.add_command(_command)
