"""Rule options (RULES.md section 8): one frozen value per rule set."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import Any

from marrakech_sim.errors import ConfigError

# RULES.md section 1: colour letters in seat order; seat s owns letters s, s+P, s+2P, ...
COLOUR_LETTERS = "rbypgocwkmntv"
FACINGS = "NESW"
DIE_FACES = (1, 2, 2, 3, 3, 4)
TIE_BREAKS = ("dirhams", "visible")
MAX_BOARD_SIZE = 99  # coordinates are int8 in the records and two digits at most
MAX_DIE_FACE = 127  # rolls are int8 in the records
MAX_DIRHAMS = 30000  # a starting purse; all purses together stay far below int32


def _default_rugs(players: int, colours: int) -> int:
    """RULES.md section 8: 12 (4p), 15 (3p), 12 (2p two colours), 15 (2p one colour), 12 (5p+)."""
    if colours == 1 and players in (2, 3):
        return 15
    return 12


@dataclasses.dataclass(frozen=True, slots=True)
class Rules:
    """A complete rule set. Unset derived options take the RULES.md defaults."""

    players: int = 4
    # None at construction means "the RULES.md default for these players"; __post_init__
    # resolves it, so after construction both are always ints
    rugs_per_colour: int = None  # type: ignore[assignment]
    colours_per_player: int = None  # type: ignore[assignment]
    starting_dirhams: int = 30
    # RULES.md section 8: one starting purse per seat (a seat compensation, as Go's komi);
    # None: every seat starts with starting_dirhams
    seat_dirhams: tuple[int, ...] | None = None
    die_faces: tuple[int, ...] = DIE_FACES
    initial_facing: str = "N"
    orient_at_end: bool = False
    own_rugs_fully_coverable: bool = False
    tie_break: str = "dirhams"
    end_when_one_left: bool = True
    board_size: int = 7

    def __post_init__(self) -> None:
        _check_int("players", self.players, minimum=2)
        if self.colours_per_player is None:
            object.__setattr__(self, "colours_per_player", 2 if self.players == 2 else 1)
        _check_int("colours_per_player", self.colours_per_player, minimum=1)
        if self.players * self.colours_per_player > len(COLOUR_LETTERS):
            raise ConfigError(
                f"players * colours_per_player = {self.players} * {self.colours_per_player} "
                f"needs more than the {len(COLOUR_LETTERS)} colour letters {COLOUR_LETTERS!r}"
            )
        if self.rugs_per_colour is None:
            default = _default_rugs(self.players, self.colours_per_player)
            object.__setattr__(self, "rugs_per_colour", default)
        _check_int("rugs_per_colour", self.rugs_per_colour, minimum=1, maximum=999)
        _check_int("starting_dirhams", self.starting_dirhams, minimum=0, maximum=MAX_DIRHAMS)
        if self.seat_dirhams is not None:
            object.__setattr__(self, "seat_dirhams", _seat_dirhams(self.seat_dirhams, self.players))
        faces = self.die_faces
        if isinstance(faces, (str, bytes)) or not isinstance(faces, (list, tuple)):
            raise ConfigError(
                f"die_faces = {faces!r}: expected a non-empty list of positive integers"
            )
        faces = tuple(faces)
        if not faces or any(
            isinstance(f, bool) or not isinstance(f, int) or not 1 <= f <= MAX_DIE_FACE
            for f in faces
        ):
            raise ConfigError(
                f"die_faces = {list(faces)!r}: expected a non-empty list of integers "
                f"from 1 to {MAX_DIE_FACE}"
            )
        object.__setattr__(self, "die_faces", faces)
        if self.initial_facing not in tuple(FACINGS):
            raise ConfigError(
                f"initial_facing = {self.initial_facing!r}: allowed are 'N', 'E', 'S', 'W'"
            )
        for key in ("orient_at_end", "own_rugs_fully_coverable", "end_when_one_left"):
            value = getattr(self, key)
            if not isinstance(value, bool):
                raise ConfigError(f"{key} = {value!r}: expected true or false")
        if self.tie_break not in TIE_BREAKS:
            raise ConfigError(f"tie_break = {self.tie_break!r}: allowed are 'dirhams', 'visible'")
        _check_int("board_size", self.board_size, minimum=5, maximum=MAX_BOARD_SIZE)
        if self.board_size % 2 == 0:
            raise ConfigError(
                f"board_size = {self.board_size}: must be odd (Assam starts on the centre "
                f"square), from 5 to {MAX_BOARD_SIZE}"
            )

    @property
    def colours(self) -> int:
        """Number of colours in the game (players * colours_per_player)."""
        return self.players * self.colours_per_player

    def seat_letters(self, seat: int) -> str:
        """The colour letters seat `seat` owns (RULES.md section 1)."""
        return COLOUR_LETTERS[seat : self.colours : self.players]

    @property
    def purses(self) -> tuple[int, ...]:
        """Each seat's starting dirhams, in seat order (`seat_dirhams`, else
        `starting_dirhams` for every seat; RULES.md section 8)."""
        if self.seat_dirhams is not None:
            return self.seat_dirhams
        return (self.starting_dirhams,) * self.players

    @property
    def distinct_faces(self) -> tuple[int, ...]:
        """The distinct die values, ascending (the roll branches of perft)."""
        return _distinct(self.die_faces)

    def to_dict(self) -> dict[str, Any]:
        """Every option with its resolved value, as plain TOML/JSON-friendly data."""
        data = dataclasses.asdict(self)
        data["die_faces"] = list(self.die_faces)
        # only when set: the options (and so run configs, records and their digests) of a
        # rule set without it are what they were before the option existed
        if self.seat_dirhams is None:
            del data["seat_dirhams"]
        else:
            data["seat_dirhams"] = list(self.seat_dirhams)
        return data

    def differences(self, other: Rules | None = None) -> dict[str, Any]:
        """The options whose values differ from `other` (default: the standard rules)."""
        base, mine = (other or Rules()).to_dict(), self.to_dict()
        keys = [f.name for f in dataclasses.fields(self)]  # seat_dirhams may be in one only
        return {
            k: mine.get(k) for k in keys if (k in base or k in mine) and base.get(k) != mine.get(k)
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Rules:
        """Build from a mapping of option keys; unknown keys are a ConfigError."""
        allowed = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(data) - set(allowed))
        if unknown:
            raise ConfigError(
                f"unknown rule option {unknown[0]!r}; allowed are: {', '.join(allowed)}"
            )
        return cls(**dict(data))


def _seat_dirhams(value: Any, players: int) -> tuple[int, ...]:
    """`seat_dirhams` as a tuple: one integer purse from 0 per seat (RULES.md section 8)."""
    allowed = (
        f"allowed is a list of {players} integers from 0 to {MAX_DIRHAMS}, one starting "
        f"purse per seat in seat order (players = {players})"
    )
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise ConfigError(f"seat_dirhams = {value!r}: {allowed}")
    purses = tuple(value)
    if len(purses) != players or any(
        isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_DIRHAMS for v in purses
    ):
        raise ConfigError(f"seat_dirhams = {list(purses)!r}: {allowed}")
    return purses


@functools.lru_cache(maxsize=64)
def _distinct(faces: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sorted(set(faces)))


def _check_int(key: str, value: Any, minimum: int, maximum: int | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{key} = {value!r}: expected an integer")
    if value < minimum or (maximum is not None and value > maximum):
        upper = f" to {maximum}" if maximum is not None else " or more"
        raise ConfigError(f"{key} = {value}: allowed are integers from {minimum}{upper}")
