"""The two implementations the rule tests run against, behind one small namespace.

``engine`` is the real ``marrakech_sim``; ``reference`` is ``tests/reference.py``, the
independent plain-Python reading of RULES.md. Both expose ``Rules``, ``GameState``,
``perft``, ``NotationError``, ``IllegalActionError`` and ``ConfigError`` with the same
meaning.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import reference

BACKENDS = ("reference", "engine")


def engine_api() -> SimpleNamespace:
    """The real engine; skips the test only while the package does not exist at all."""
    try:
        import marrakech_sim
    except ModuleNotFoundError as exc:  # any other import failure is a real error
        if exc.name != "marrakech_sim":
            raise
        pytest.skip("marrakech_sim is not installed yet")
    from marrakech_sim.errors import ConfigError, IllegalActionError, NotationError

    return SimpleNamespace(
        name="engine",
        Rules=marrakech_sim.Rules,
        GameState=marrakech_sim.GameState,
        perft=marrakech_sim.perft,
        NotationError=NotationError,
        IllegalActionError=IllegalActionError,
        ConfigError=ConfigError,
    )


def reference_api() -> SimpleNamespace:
    """The plain-Python reference of tests/reference.py."""
    return SimpleNamespace(
        name="reference",
        Rules=reference.Rules,
        GameState=reference.GameState,
        perft=reference.perft,
        NotationError=reference.NotationError,
        IllegalActionError=reference.IllegalActionError,
        ConfigError=reference.ConfigError,
    )


def get_api(name: str) -> SimpleNamespace:
    return engine_api() if name == "engine" else reference_api()


# --- building and reading position strings (RULES.md §9) --------------------


def board(*rows: str) -> str:
    """A board field from rows written with spaces between squares, e.g. 'r1 r1 . . . . .'."""
    return "/".join("".join(row.split()) for row in rows)


def empty_board(n: int = 7) -> str:
    return "/".join(["." * n] * n)


EMPTY = empty_board(7)


def position(board_field: str, assam: str, players: str, to_move: str) -> str:
    return " ".join([board_field, assam, players, to_move])


def fields(notation: str) -> dict[str, str]:
    board_f, assam_f, players_f, move_f = notation.split(" ")
    return {"board": board_f, "assam": assam_f, "players": players_f, "to_move": move_f}


def dirhams(notation: str) -> list[int]:
    return [int(entry.split(":")[1]) for entry in fields(notation)["players"].split(",")]


def board_tokens(notation: str) -> dict[tuple[int, int], str]:
    """Square -> visible token, from a position string."""
    import re

    result = {}
    for y, row in enumerate(fields(notation)["board"].split("/")):
        for x, tok in enumerate(re.findall(r"\.|[a-z][0-9]+", row)):
            if tok != ".":
                result[(x, y)] = tok
    return result


def normalise_chance(outcomes) -> dict:
    return {action: float(p) for action, p in outcomes}
