"""Sweeps: one rule option (or two, as a grid) over a list of values, one rule set per value.

A study config's ``[sweep]`` table names the values::

    [sweep]
    rulesets = ["four", "two"]              # optional: the rule sets to sweep (default: all)
    starting_dirhams = [10, 20, 30, 40, 50]
    # or one seat's purse, the others keeping theirs (seat counted from 0, as in the rules):
    #   seat_dirhams.2 = [30, 32, 34]
    # rugs_per_colour = [10, 12, 14]; board_size = [5, 7, 9]
    # die_faces = { standard = [1, 2, 2, 3, 3, 4], flat = [1, 2, 3, 4, 5, 6] }

Each swept rule set (its *base*) is replaced by one rule set per value, named
``BASE_KEY_VALUE`` (``four_starting_dirhams_20``, ``four_seat_dirhams.2_34``,
``four_die_faces_flat``; a grid joins both: ``four_starting_dirhams_20_rugs_per_colour_10``).
Every value plays the same block seeds (the study's ``common_seeds``, run.plan), so the
values meet the same dice and piles and their differences are paired.

The resolved form (``Sweep.to_dict``, what a run's manifest keeps beside the expanded rule
sets) lists the points too, and reads back to the same sweep without expanding again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from marrakech_sim.errors import ConfigError
from marrakech_sim.rules.options import Rules

#: the rule options a sweep may vary (seat_dirhams one seat at a time: ``seat_dirhams.SEAT``)
SWEEP_KEYS = ("starting_dirhams", "seat_dirhams", "rugs_per_colour", "die_faces", "board_size")
MAX_AXES = 2  # one option, or two as a grid
MAX_VALUES = 64  # per option
_ALLOWED = (
    "starting_dirhams, seat_dirhams.SEAT, rugs_per_colour, board_size (lists of integers), "
    "die_faces (a table of named lists), and rulesets (the rule sets to sweep)"
)


@dataclasses.dataclass(frozen=True, slots=True)
class SweepPoint:
    """One swept rule set: its name, its base, and the value of each swept option."""

    ruleset: str
    base: str
    # (key, value) per axis in axis order: ``("seat_dirhams.2", 34)``; die_faces: the name
    values: tuple[tuple[str, Any], ...]
    title: str

    def value(self, key: str) -> Any:
        """The value of swept option `key` at this point."""
        return dict(self.values)[key]


@dataclasses.dataclass(frozen=True, slots=True)
class Sweep:
    """A resolved sweep: its bases, its axes (key, values) and the rule sets it makes."""

    bases: tuple[str, ...]
    axes: tuple[tuple[str, tuple[Any, ...]], ...]
    points: tuple[SweepPoint, ...]
    # die_faces axis: the named lists (name -> faces)
    die_faces: tuple[tuple[str, tuple[int, ...]], ...] = ()

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(key for key, _ in self.axes)

    def points_of(self, base: str) -> tuple[SweepPoint, ...]:
        """The points of one base, in axis order (the first axis varying slowest)."""
        return tuple(p for p in self.points if p.base == base)

    def to_dict(self) -> dict[str, Any]:
        """The resolved sweep (TOML/JSON-friendly); ``sweep_from_dict`` reads it back."""
        axes: dict[str, Any] = {}
        for key, values in self.axes:
            if key == "die_faces":
                axes[key] = {name: list(faces) for name, faces in self.die_faces}
            elif key.startswith("seat_dirhams."):
                axes.setdefault("seat_dirhams", {})[key.split(".", 1)[1]] = list(values)
            else:
                axes[key] = list(values)
        return {
            "rulesets": list(self.bases),
            **axes,
            "axes": list(self.keys),  # their order (x first), should a tool sort the keys
            "points": {
                p.ruleset: {"base": p.base, "values": dict(p.values), "title": p.title}
                for p in self.points
            },
        }


def sweep_from_dict(raw: Any, rulesets: Mapping[str, Rules]) -> tuple[Sweep, dict[str, Rules]]:
    """The sweep of a ``[sweep]`` table over the config's rule sets, and the rule sets the
    study plays: the unswept ones, then each base's points in its place.

    A resolved table (with ``points``, from ``Sweep.to_dict``) is taken as it is: its
    points must be among `rulesets`, which are then played as given.
    """
    if not isinstance(raw, Mapping):
        raise ConfigError(f"sweep = {raw!r}: expected a table of rule options and their values")
    axes, die_faces = _axes(raw)
    bases = _bases(raw.get("rulesets"), rulesets, "points" in raw)
    if "axes" in raw:
        order = raw["axes"]
        if (
            "points" not in raw
            or not isinstance(order, list)
            or sorted(order) != sorted(key for key, _ in axes)
        ):
            raise ConfigError(
                f"sweep.axes = {order!r}: only a run's resolved config has it (with "
                "sweep.points), listing the swept options"
            )
        axes = tuple(sorted(axes, key=lambda axis: order.index(axis[0])))
    if "points" in raw:
        return _resolved(raw["points"], bases, axes, die_faces, rulesets), dict(rulesets)
    points: list[SweepPoint] = []
    played: dict[str, Rules] = {}
    for name, base in rulesets.items():
        if name not in bases:
            played[name] = base
            continue
        for combo in _grid(axes):
            values = tuple(zip((key for key, _ in axes), combo, strict=True))
            point = _point(name, values, base)
            if point.ruleset in rulesets or point.ruleset in played:
                raise ConfigError(
                    f"sweep: the rule set {point.ruleset!r} it makes is already a rule set "
                    "of the config; rename that rule set"
                )
            try:
                played[point.ruleset] = sweep_rules(base, dict(values), dict(die_faces))
            except ConfigError as exc:
                where = ", ".join(f"{k} = {v!r}" for k, v in values)
                said = str(exc) if str(exc).startswith("sweep") else f"sweep: {exc}"
                raise ConfigError(f"{said}, in rule set {name!r} with {where}") from exc
            points.append(point)
    return Sweep(bases, axes, tuple(points), die_faces), played


def sweep_rules(
    base: Rules, values: Mapping[str, Any], die_faces: Mapping[str, tuple[int, ...]] | None = None
) -> Rules:
    """`base` with swept options set: ``{"starting_dirhams": 20}``, ``{"seat_dirhams.2": 34}``
    (that seat's purse; the others keep `base`'s purses), ``{"seat_dirhams": [30, 32, 33,
    34]}`` (every seat's), ``{"die_faces": "flat"}`` (a name of `die_faces`) or a list of
    faces. Options are set in SWEEP_KEYS order, so a seat's
    purse applies to the purses that a swept starting_dirhams gives."""
    options = base.to_dict()  # resolved: players is never swept, so nothing re-derives
    seats: dict[int, int] = {}
    for key, value in values.items():
        if key.startswith("seat_dirhams."):
            seats[_seat_of(key, base.players)] = value
        elif key == "die_faces" and isinstance(value, str):
            if die_faces is None or value not in die_faces:
                raise ConfigError(f"sweep.die_faces: no list named {value!r}")
            options[key] = list(die_faces[value])
        elif key in SWEEP_KEYS:  # seat_dirhams: every seat's purse, a list
            if key == "starting_dirhams" and base.seat_dirhams is not None:
                raise ConfigError(
                    "sweep.starting_dirhams: the rule set sets seat_dirhams, which replaces "
                    "starting_dirhams; sweep seat_dirhams.SEAT instead"
                )
            options[key] = value
        else:
            raise ConfigError(f"sweep.{key}: not an option a sweep can vary; allowed: {_ALLOWED}")
    if seats:
        # the purses before this seat's change: seat_dirhams if set, else starting_dirhams
        purses = list(Rules.from_dict(options).purses)
        for seat, purse in seats.items():
            purses[seat] = purse
        options["seat_dirhams"] = purses
    return Rules.from_dict(options)


# ---------------------------------------------------------------- parsing


def _axes(
    raw: Mapping[str, Any],
) -> tuple[tuple[tuple[str, tuple[Any, ...]], ...], tuple[tuple[str, tuple[int, ...]], ...]]:
    """The swept options and their values, in the table's order; the named die lists."""
    axes: list[tuple[str, tuple[Any, ...]]] = []
    die_faces: tuple[tuple[str, tuple[int, ...]], ...] = ()
    for key, value in raw.items():
        if key in ("rulesets", "points", "axes"):
            continue
        if key == "seat_dirhams":
            if not isinstance(value, Mapping) or not value:
                raise ConfigError(
                    f"sweep.seat_dirhams = {value!r}: sweep one seat's purse as "
                    "seat_dirhams.SEAT = [values], e.g. seat_dirhams.2 = [30, 32, 34] (SEAT "
                    "counted from 0)"
                )
            for seat, values in value.items():
                if not str(seat).isdigit():
                    raise ConfigError(
                        f"sweep.seat_dirhams.{seat}: SEAT is a seat number counted from 0, "
                        "e.g. seat_dirhams.2 = [30, 32, 34]"
                    )
                axes.append(
                    (
                        f"seat_dirhams.{int(seat)}",
                        _int_values(f"sweep.seat_dirhams.{seat}", values, 0),
                    )
                )
        elif key == "die_faces":
            die_faces = _named_faces(value)
            axes.append((key, tuple(name for name, _ in die_faces)))
        elif key in ("starting_dirhams", "rugs_per_colour", "board_size"):
            minimum = {"starting_dirhams": 0, "rugs_per_colour": 1, "board_size": 5}[key]
            axes.append((key, _int_values(f"sweep.{key}", value, minimum)))
        else:
            raise ConfigError(f"unknown key 'sweep.{key}' in [sweep]; allowed: {_ALLOWED}")
    if not axes:
        raise ConfigError(f"sweep: no option to sweep; give one or two of {_ALLOWED}")
    if len(axes) > MAX_AXES:
        raise ConfigError(
            f"sweep: {len(axes)} options ({', '.join(k for k, _ in axes)}); a sweep varies one "
            f"option, or two as a grid"
        )
    return tuple(axes), die_faces


def _int_values(key: str, value: Any, minimum: int) -> tuple[int, ...]:
    allowed = f"allowed is a list of 2 to {MAX_VALUES} distinct integers from {minimum}"
    if not isinstance(value, list) or not 2 <= len(value) <= MAX_VALUES:
        raise ConfigError(f"{key} = {value!r}: {allowed}")
    if any(isinstance(v, bool) or not isinstance(v, int) or v < minimum for v in value):
        raise ConfigError(f"{key} = {value!r}: {allowed}")
    if len(set(value)) != len(value):
        raise ConfigError(f"{key} = {value!r}: a value appears twice; {allowed}")
    return tuple(value)


def _named_faces(value: Any) -> tuple[tuple[str, tuple[int, ...]], ...]:
    example = "e.g. die_faces = { standard = [1, 2, 2, 3, 3, 4], flat = [1, 2, 3, 4, 5, 6] }"
    if not isinstance(value, Mapping) or not 2 <= len(value) <= MAX_VALUES:
        raise ConfigError(
            f"sweep.die_faces = {value!r}: allowed is a table of 2 to {MAX_VALUES} named "
            f"lists of faces, {example}"
        )
    out = []
    for name, faces in value.items():
        if not name or not all(c.isalnum() or c in "_-" for c in name):
            raise ConfigError(
                f"sweep.die_faces.{name!r}: names are letters, digits, '_' and '-' ({example})"
            )
        try:
            out.append((name, Rules(die_faces=faces).die_faces))
        except ConfigError as exc:
            raise ConfigError(f"sweep.die_faces.{name}: {exc}") from exc
    return tuple(out)


def _bases(raw: Any, rulesets: Mapping[str, Rules], resolved: bool) -> tuple[str, ...]:
    if raw is None:
        if resolved:
            raise ConfigError("sweep.points needs sweep.rulesets (the swept rule sets)")
        return tuple(rulesets)
    if not isinstance(raw, list) or not raw or not all(isinstance(v, str) for v in raw):
        raise ConfigError(
            f"sweep.rulesets = {raw!r}: expected a non-empty list of names from "
            f"{', '.join(rulesets)}"
        )
    if len(set(raw)) != len(raw):
        raise ConfigError(f"sweep.rulesets = {raw!r}: a name appears twice")
    if not resolved:
        for name in raw:
            if name not in rulesets:
                raise ConfigError(
                    f"sweep.rulesets: unknown name {name!r}; allowed: {', '.join(rulesets)}"
                )
    return tuple(raw)


def _grid(axes: tuple[tuple[str, tuple[Any, ...]], ...]) -> list[tuple[Any, ...]]:
    combos: list[tuple[Any, ...]] = [()]
    for _, values in axes:
        combos = [(*c, v) for c in combos for v in values]
    return combos


def _seat_of(key: str, players: int) -> int:
    seat = int(key.split(".", 1)[1])
    if seat >= players:
        raise ConfigError(
            f"sweep.{key}: the rule set has seats 0 to {players - 1} ({players} players)"
        )
    return seat


def _words(key: str, value: Any) -> str:
    if key.startswith("seat_dirhams."):
        return f"player {int(key.split('.', 1)[1]) + 1} starts with {value} dirhams"
    if key == "die_faces":
        return f"die {value}"
    return f"{key.replace('_', ' ')} {value}"


def _point(base: str, values: tuple[tuple[str, Any], ...], rules: Rules) -> SweepPoint:
    name = "_".join([base, *(f"{key}_{value}" for key, value in values)])
    title = f"{base.replace('_', ' ')} ({rules.players} players), " + ", ".join(
        _words(key, value) for key, value in values
    )
    return SweepPoint(name, base, values, title)


def _resolved(
    raw: Any,
    bases: tuple[str, ...],
    axes: tuple[tuple[str, tuple[Any, ...]], ...],
    die_faces: tuple[tuple[str, tuple[int, ...]], ...],
    rulesets: Mapping[str, Rules],
) -> Sweep:
    """The sweep of a resolved table: its points checked against the rule sets."""
    if not isinstance(raw, Mapping) or not raw:
        raise ConfigError(f"sweep.points = {raw!r}: expected a table of rule set names")
    keys = [key for key, _ in axes]
    points = []
    for name, entry in raw.items():
        if name not in rulesets:
            raise ConfigError(
                f"sweep.points.{name}: not a rule set of the config; allowed: {', '.join(rulesets)}"
            )
        if not isinstance(entry, Mapping) or entry.get("base") not in bases:
            raise ConfigError(
                f"sweep.points.{name} = {entry!r}: expected base (one of "
                f"{', '.join(bases)}), values and title"
            )
        values = entry.get("values")
        if not isinstance(values, Mapping) or sorted(values) != sorted(keys):
            raise ConfigError(f"sweep.points.{name}.values = {values!r}: expected keys {keys}")
        for key, values_of_axis in axes:
            if values[key] not in values_of_axis:
                raise ConfigError(
                    f"sweep.points.{name}.values.{key} = {values[key]!r}: allowed are "
                    f"{list(values_of_axis)}"
                )
        points.append(
            SweepPoint(
                name,
                entry["base"],
                tuple((key, values[key]) for key in keys),  # in axis order, however stored
                str(entry.get("title", name)),
            )
        )
    return Sweep(bases, axes, tuple(points), die_faces)
