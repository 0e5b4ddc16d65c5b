"""Study configs: what a tournament plays, read from TOML and validated before anything runs.

A study names its rule sets, its strategies, a schedule of line-ups, the games per
line-up, the run seed and, optionally, a stopping rule::

    name = "seat-advantage"
    seed = 2024
    games_per_lineup = 24000    # rounded up to whole blocks
    rotation = "all"            # every seating of a line-up shares one chance stream

    [rulesets.standard]         # RULES.md defaults
    [rulesets.three]
    base = "standard"           # start from another rule set, change one option
    players = 3                 # unset derived options (rugs_per_colour) are re-derived

    [strategies.random]         # the display name; ref defaults to it
    ref = "random"

    [schedule]
    kind = "self_play"          # round_robin | gauntlet | lineups | self_play

    common_seeds = true         # optional: the rule sets play the same block seeds
    worker_memory_mb = 2048     # optional: the memory a worker process may grow by while
                                # it plays (a strategy past it is a fault); default: the
                                # machine's memory shared among the workers, at least 1 GB

    skill_levels = ["random", "greedy"]   # optional: self-play strategies, weakest first

    [sweep]                     # optional: one rule set per value (run.sweep)
    starting_dirhams = [20, 30, 40]

    [report]                    # optional: what matters to the designer
    matters_pp = 1.0            # a win share this far from fair (pp) matters
    margins = { turns = 1.0 }   # the same for per-game metrics in their own unit

    [stopping]                  # optional
    rule = "interval_width"
    quantity = "seat_win_share"
    seat = 0
    width = 0.01

Every error names the key (``marrakech_sim.strategies.greedy.params.depth``) and what is allowed.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from marrakech_sim.errors import ConfigError, StrategyNotFound
from marrakech_sim.files import read_text
from marrakech_sim.play.strategy import StrategySpec, load_strategy_class
from marrakech_sim.rules.options import Rules
from marrakech_sim.run.sweep import Sweep, sweep_from_dict

SCHEDULE_KINDS = ("round_robin", "gauntlet", "lineups", "self_play")
ROTATIONS = ("all", "latin", "none")
OPPONENTS = ("copies", "combinations")
STOPPING_RULES = ("interval_width", "sprt")
QUANTITIES = ("seat_win_share", "strategy_win_share")
DEFAULT_CHUNK_GAMES = 4096
#: seconds a Python-loop strategy may think per decision in a study before its game ends
#: as a fault (the built-ins take milliseconds at most)
DEFAULT_DECISION_SECONDS = 10.0
MIN_WORKER_MEMORY_MB, MAX_WORKER_MEMORY_MB = 64, 1 << 24  # 64 MB to 16 TB
MAX_DECISION_SECONDS = 86_400.0
#: the schedule keys each kind takes besides `kind` and `rulesets`
SCHEDULE_KEYS_OF = {
    "round_robin": ("strategies", "repeat"),
    "self_play": ("strategies",),
    "gauntlet": ("focus", "field", "opponents", "repeat"),
    "lineups": ("lineups",),
}
MAX_SEED = 2**63 - 1
#: most games of one block (one seed under every seating): rotation = "all" has k! seatings
#: (7 players: 5,040; 9 players: 362,880), and a block is never split across chunks
MAX_BLOCK_GAMES = 5040
#: most games per chunk asked for; a chunk holds whole blocks, so it never exceeds
#: MAX_CHUNK_GAMES + MAX_BLOCK_GAMES - 1 games (about 1 GB of records at the most)
MAX_CHUNK_GAMES = 65536
#: most games a study may plan (the plan holds a few numbers per block in memory, and
#: report.load keeps game ids below 2**40)
MAX_GAMES = 10**9

_TOP_KEYS = (
    "name",
    "description",
    "seed",
    "games_per_lineup",
    "rotation",
    "chunk_games",
    "common_seeds",
    "decision_seconds",
    "worker_memory_mb",
    "keep_moves",
    "move_columns",
    "rulesets",
    "strategies",
    "schedule",
    "stopping",
    "skill_levels",
    "report",
    "sweep",
)
#: the moves tables a study may write (`move_columns`), with what each holds
MoveColumns = Literal["all", "replay"]
MOVE_COLUMN_CHOICES: dict[MoveColumns, str] = {
    "all": "every column of the moves table (the default)",
    "replay": "only the columns a replay needs, the outcomes rebuilt by replaying when read "
    "(format version 2, a smaller table written faster)",
}
_REPORT_KEYS = ("matters_pp", "margins")
#: the per-game metrics whose practical margin a study may set (`[report] margins`), in
#: their own units, and the default of each; shares (win shares, the bankruptcy rate, ...)
#: take `matters_pp`
MARGINS = {"turns": 1.0, "margin": 1.0, "lead_changes": 0.5, "decided_turn": 1.0, "elo": 20.0}
DEFAULT_MATTERS_PP = 1.0
_STRATEGY_KEYS = ("ref", "params")
_SCHEDULE_KEYS = (
    "kind",
    "rulesets",
    "strategies",
    "focus",
    "field",
    "opponents",
    "repeat",
    "lineups",
)
_STOPPING_KEYS = (
    "rule",
    "quantity",
    "seat",
    "strategy",
    "ruleset",
    "level",
    "width",
    "min_games",
    "p0",
    "p1",
    "alpha",
    "beta",
)


@dataclasses.dataclass(frozen=True, slots=True)
class Schedule:
    """Which line-ups a study plays (see `lineups_of`)."""

    kind: str
    rulesets: tuple[str, ...]  # the rule sets every line-up is played under
    strategies: tuple[str, ...] = ()  # round_robin / self_play: the strategies taking part
    focus: tuple[str, ...] = ()  # gauntlet: the strategies under test
    field: tuple[str, ...] = ()  # gauntlet: their opponents
    opponents: str = "copies"  # gauntlet: k-1 copies of each field strategy, or combinations
    repeat: bool = False  # round_robin / gauntlet combinations: allow a strategy twice
    lineups: tuple[tuple[str, ...], ...] = ()  # lineups: explicit, seat order as given

    def to_dict(self) -> dict[str, Any]:
        """The keys of this kind, resolved (a config that reads back to the same schedule)."""
        data: dict[str, Any] = {"kind": self.kind, "rulesets": list(self.rulesets)}
        for key in SCHEDULE_KEYS_OF[self.kind]:
            value = getattr(self, key)
            if key == "lineups":
                value = [list(x) for x in value]
            elif isinstance(value, tuple):
                value = list(value)
            data[key] = value
        return data


@dataclasses.dataclass(frozen=True, slots=True)
class StoppingRule:
    """Stop a run early, checked at block boundaries (the end of each chunk, in order).

    interval_width: stop when the `level` interval of the quantity is narrower than
    `width`. sprt: Wald's sequential test of H0 share = p0 against H1 share = p1 with
    error rates alpha and beta. Neither stops before `min_games` games.
    """

    rule: str
    quantity: str
    seat: int | None = None
    strategy: str | None = None
    ruleset: str | None = None
    level: float = 0.95
    width: float | None = None
    min_games: int = 0
    p0: float | None = None
    p1: float | None = None
    alpha: float = 0.05
    beta: float = 0.05

    def to_dict(self) -> dict[str, Any]:
        """The keys of this rule, resolved (a config that reads back to the same rule)."""
        skip = ("p0", "p1", "alpha", "beta") if self.rule == "interval_width" else ("width",)
        data = dataclasses.asdict(self)
        return {k: v for k, v in data.items() if v is not None and k not in skip}


@dataclasses.dataclass(frozen=True, slots=True)
class ReportOptions:
    """What matters to the designer (`[report]`): the margins of the report's verdicts."""

    matters_pp: float = DEFAULT_MATTERS_PP
    margins: tuple[tuple[str, float], ...] = tuple(MARGINS.items())

    def margin(self, metric: str) -> float:
        """The margin of a per-game metric in its unit (MARGINS), or matters_pp for shares."""
        return dict(self.margins).get(metric, self.matters_pp)

    def to_dict(self) -> dict[str, Any]:
        return {"matters_pp": self.matters_pp, "margins": dict(self.margins)}


@dataclasses.dataclass(frozen=True, slots=True)
class Study:
    """A validated, fully resolved study config."""

    name: str
    seed: int
    games_per_lineup: int
    rulesets: tuple[tuple[str, Rules], ...]
    strategies: tuple[StrategySpec, ...]  # each with its unique display name
    schedule: Schedule
    rotation: str = "all"
    chunk_games: int = DEFAULT_CHUNK_GAMES
    stopping: StoppingRule | None = None
    decision_seconds: float = DEFAULT_DECISION_SECONDS
    description: str = ""
    # the rule sets play the same block seeds (common random numbers; run.plan)
    common_seeds: bool = False
    # the self-play strategies that are skill levels, weakest first (the report's trends)
    skill_levels: tuple[str, ...] = ()
    report: ReportOptions | None = None
    # the memory a worker may grow by while it plays (None: a share of the machine's)
    worker_memory_mb: int | None = None
    # the share of each match's blocks whose moves are kept, its first rounds (run.plan)
    keep_moves: float = 1.0
    # which columns the moves table has (MOVE_COLUMN_CHOICES): every one, or only those a
    # replay needs, a run of runfolder.REPLAY_FORMAT_VERSION
    move_columns: MoveColumns = "all"
    # the rule option the rule sets sweep (run.sweep); its rule sets are in `rulesets`
    sweep: Sweep | None = None

    @property
    def replay_only(self) -> bool:
        """Whether the moves table holds only the columns a replay needs."""
        return self.move_columns == "replay"

    @property
    def ruleset_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.rulesets)

    @property
    def strategy_names(self) -> tuple[str, ...]:
        return tuple(spec.label for spec in self.strategies)

    def rules(self, name: str) -> Rules:
        return dict(self.rulesets)[name]

    def strategy(self, name: str) -> StrategySpec:
        for spec in self.strategies:
            if spec.label == name:
                return spec
        raise KeyError(name)

    def replace(
        self,
        *,
        games_per_lineup: int | None = None,
        seed: int | None = None,
        decision_seconds: float | None = None,
    ) -> Study:
        """The study with the command line's --games / --seed / --decision-seconds
        applied (validated)."""
        changes: dict[str, Any] = {}
        if decision_seconds is not None:
            changes["decision_seconds"] = _seconds("decision_seconds", decision_seconds)
        if games_per_lineup is not None:
            changes["games_per_lineup"] = _int("games_per_lineup", games_per_lineup, 1, MAX_GAMES)
        if seed is not None:
            changes["seed"] = _seed("seed", seed)
        study = dataclasses.replace(self, **changes)
        check_size(study)
        return study

    def to_dict(self) -> dict[str, Any]:
        """The resolved config: every rule option, every parameter (for run.json)."""
        return {
            "name": self.name,
            "description": self.description,
            "seed": self.seed,
            "games_per_lineup": self.games_per_lineup,
            "rotation": self.rotation,
            "chunk_games": self.chunk_games,
            "decision_seconds": self.decision_seconds,
            "rulesets": {name: rules.to_dict() for name, rules in self.rulesets},
            "strategies": {
                spec.label: {"ref": spec.ref, "params": _resolved_params(spec)}
                for spec in self.strategies
            },
            "schedule": self.schedule.to_dict(),
            "stopping": self.stopping.to_dict() if self.stopping else None,
            # only when set: the resolved config of a study without it is unchanged
            **({"common_seeds": True} if self.common_seeds else {}),
            **(
                {"worker_memory_mb": self.worker_memory_mb}
                if self.worker_memory_mb is not None
                else {}
            ),
            **({"skill_levels": list(self.skill_levels)} if self.skill_levels else {}),
            **({"report": self.report.to_dict()} if self.report else {}),
            **({"keep_moves": self.keep_moves} if self.keep_moves != 1 else {}),
            **({"move_columns": self.move_columns} if self.move_columns != "all" else {}),
            **({"sweep": self.sweep.to_dict()} if self.sweep else {}),
        }


def read_rules_table(path: str | Path) -> dict[str, Any]:
    """The rule options of a TOML file (top-level keys, or a [rules] table), checked by
    `Rules.from_dict` and returned as they are written."""
    try:
        data = tomllib.loads(read_text(path, "rules file", ConfigError))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"cannot read rules file {str(path)!r}: {exc}") from exc
    table = data.get("rules", data)
    Rules.from_dict(table)  # validates
    return dict(table)


def load_study(path: str | Path) -> Study:
    """Read and validate a study config file (TOML)."""
    text = read_text(path, "study config", ConfigError)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"study config {str(path)!r} is not valid TOML: {exc}") from exc
    return study_from_dict(_refs_from(Path(path).parent, data), default_name=Path(path).stem)


def _refs_from(folder: Path, data: dict[str, Any]) -> dict[str, Any]:
    """The config with each relative 'file.py:Class' reference resolved from ``folder``.

    A strategy file named in a config is found beside the config, wherever the command
    is run from; the resolved (absolute) path is what the run's manifest records.
    """
    tables = data.get("strategies")
    if not isinstance(tables, dict):
        return data
    resolved = {}
    for name, table in tables.items():
        ref = table.get("ref") if isinstance(table, dict) else None
        where, colon, cls = ref.rpartition(":") if isinstance(ref, str) else ("", "", "")
        if colon and where.endswith(".py") and not Path(where).is_absolute():
            table = {**table, "ref": f"{(folder / where).resolve()}:{cls}"}
        resolved[name] = table
    return {**data, "strategies": resolved}


def study_from_dict(data: Mapping[str, Any], default_name: str = "study") -> Study:
    """Validate a study config (as parsed TOML, or a manifest's resolved config)."""
    _known("", data, _TOP_KEYS)
    name = data.get("name", default_name)
    check_study_name(name)
    description = data.get("description", "")
    if not isinstance(description, str):
        raise ConfigError(f"description = {description!r}: expected a string")
    seed = _seed("seed", data.get("seed", 0))
    games = _int("games_per_lineup", data.get("games_per_lineup", 1000), 1, MAX_GAMES)
    rotation = data.get("rotation", "all")
    _choice("rotation", rotation, ROTATIONS)
    chunk = _int("chunk_games", data.get("chunk_games", DEFAULT_CHUNK_GAMES), 1, MAX_CHUNK_GAMES)
    decision = _seconds("decision_seconds", data.get("decision_seconds", DEFAULT_DECISION_SECONDS))
    rulesets = rulesets_from_table(data.get("rulesets", {"standard": {}}))
    schedule_raw = data.get("schedule", {})
    sweep = None
    if "sweep" in data:
        sweep, rulesets = sweep_from_dict(data["sweep"], rulesets)
        schedule_raw = _swept_schedule(schedule_raw, sweep)
    strategies = _strategies(data.get("strategies"))
    schedule = _schedule(schedule_raw, rulesets, strategies)
    stopping = _stopping(data.get("stopping"), rulesets, strategies)
    common_seeds = data.get("common_seeds", sweep is not None)
    if not isinstance(common_seeds, bool):
        raise ConfigError(f"common_seeds = {common_seeds!r}: expected true or false")
    if sweep is not None and not common_seeds:
        raise ConfigError(
            "common_seeds = false: a sweep plays every value on the same block seeds (common "
            "random numbers); leave common_seeds out or set it to true"
        )
    skill_levels = _skill_levels(data.get("skill_levels"), strategies)
    report = _report(data.get("report"))
    memory = data.get("worker_memory_mb")
    if memory is not None:
        memory = _int("worker_memory_mb", memory, MIN_WORKER_MEMORY_MB, MAX_WORKER_MEMORY_MB)
    keep_moves = _share("keep_moves", data.get("keep_moves", 1.0))
    move_columns = data.get("move_columns", "all")
    if move_columns not in MOVE_COLUMN_CHOICES:
        allowed = "; ".join(f"{k!r}: {v}" for k, v in MOVE_COLUMN_CHOICES.items())
        raise ConfigError(f"move_columns = {move_columns!r}: expected one of {allowed}")
    study = Study(
        name=name,
        seed=seed,
        games_per_lineup=games,
        rulesets=tuple(rulesets.items()),
        strategies=tuple(strategies.values()),
        schedule=schedule,
        rotation=rotation,
        chunk_games=chunk,
        stopping=stopping,
        decision_seconds=decision,
        description=description,
        common_seeds=common_seeds,
        skill_levels=skill_levels,
        report=report,
        worker_memory_mb=memory,
        keep_moves=keep_moves,
        move_columns=move_columns,
        sweep=sweep,
    )
    # a line-up that does not fit a rule set's player count is named here, and a study
    # too big to plan before anything is enumerated
    check_size(study)
    return study


def _share(key: str, value: Any) -> float:
    """A number from 0 to 1 (a share), else ConfigError naming the key."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ConfigError(
            f"{key} = {value!r}: expected a number from 0 to 1 (the share of the blocks "
            "whose moves are kept: 1 all, 0 none)"
        )
    return float(value)


def check_study_name(name: Any) -> str:
    """`name` if it can name a folder under runs/ and reports/, else ConfigError.

    A name is a name, not a path: no separators, no '..', nothing hidden.
    """
    if not isinstance(name, str) or not name:
        raise ConfigError(f"name = {name!r}: expected a non-empty string")
    if (
        name in (".", "..")
        or name.startswith(".")
        or not all(c.isalnum() or c in "_-." for c in name)
    ):
        raise ConfigError(
            f"name = {name!r}: a study name is letters, digits, '_', '-' and '.', not "
            "starting with '.' (it names the folders runs/NAME and reports/NAME)"
        )
    return name


def block_games(lineup: tuple[str, ...], rotation: str) -> int:
    """Games in one block of `lineup`: its distinct seatings, counted without listing them."""
    if rotation == "none":
        return 1
    if rotation == "latin":  # the distinct cyclic rotations: k / (the line-up's period)
        k = len(lineup)
        return next(p for p in range(1, k + 1) if k % p == 0 and lineup[p:] + lineup[:p] == lineup)
    count = math.factorial(len(lineup))  # permutations of a multiset
    for name in set(lineup):
        count //= math.factorial(lineup.count(name))
    return count


def check_size(study: Study) -> int:
    """The games the study plans; ConfigError for a block or a study too big to play."""
    total = 0
    for ruleset, lineups in lineups_of(study).items():
        for lineup in lineups:
            size = block_games(lineup, study.rotation)
            if size > MAX_BLOCK_GAMES:
                raise ConfigError(
                    f"rotation = {study.rotation!r}: line-up {list(lineup)!r} of rule set "
                    f"{ruleset!r} has {size:,} seatings in a block; the most allowed is "
                    f"{MAX_BLOCK_GAMES:,}; use rotation = 'latin' ({len(lineup)} seatings)"
                )
            total += -(-study.games_per_lineup // size) * size
            if total > MAX_GAMES:
                raise ConfigError(
                    f"games_per_lineup = {study.games_per_lineup:,}: the study would plan more "
                    f"than {MAX_GAMES:,} games, the most allowed; lower games_per_lineup"
                )
    return total


# ---------------------------------------------------------------- sections


def lineups_of(study: Study) -> dict[str, list[tuple[str, ...]]]:
    """Line-ups per rule set (strategy names in seat order); ConfigError when one cannot fit."""
    out: dict[str, list[tuple[str, ...]]] = {}
    s = study.schedule
    for name in s.rulesets:
        k = study.rules(name).players
        if s.kind == "self_play":
            lineups = [(x,) * k for x in s.strategies]
        elif s.kind == "round_robin":
            pick = itertools.combinations_with_replacement if s.repeat else itertools.combinations
            lineups = list(pick(s.strategies, k))
            if not lineups:
                raise ConfigError(
                    f"schedule.strategies: {len(s.strategies)} strategies cannot fill the "
                    f"{k} seats of rule set {name!r} without repeats; add strategies, "
                    "set schedule.repeat = true, or use fewer players"
                )
        elif s.kind == "gauntlet":
            if s.opponents == "copies":
                lineups = [(f, *(x,) * (k - 1)) for f in s.focus for x in s.field]
            else:
                pick = (
                    itertools.combinations_with_replacement if s.repeat else itertools.combinations
                )
                others = list(pick(s.field, k - 1))
                if not others:
                    raise ConfigError(
                        f"schedule.field: {len(s.field)} strategies cannot fill the {k - 1} "
                        f"other seats of rule set {name!r} without repeats; set "
                        "schedule.repeat = true or schedule.opponents = 'copies'"
                    )
                lineups = [(f, *o) for f in s.focus for o in others]
        else:
            lineups = list(s.lineups)
            for i, lineup in enumerate(lineups):
                if len(lineup) != k:
                    raise ConfigError(
                        f"schedule.lineups[{i}] = {list(lineup)!r} has {len(lineup)} seats; "
                        f"rule set {name!r} has players = {k}"
                    )
        out[name] = lineups
    return out


# what the tables [rulesets.NAME] and [strategies.NAME] hold, as errors say it
_RULESETS_HOLD = "of rule options (an empty table is the standard rules)"
_STRATEGIES_HOLD = (
    "with ref = 'registered name', 'module:Class' or 'path/file.py:Class' and optional params"
)


def _named_tables(key: str, raw: Any, tables: str, table: str) -> Mapping[str, Any]:
    """`raw` as the tables [key.NAME]: at least one, each a table; ConfigError otherwise,
    saying what the tables hold (`tables`) or what one holds (`table`)."""
    if not isinstance(raw, Mapping) or not raw:
        raise ConfigError(f"{key} = {raw!r}: expected tables [{key}.NAME] {tables}")
    for name, value in raw.items():
        if not isinstance(value, Mapping):
            raise ConfigError(f"{key}.{name} = {value!r}: expected a table {table}")
    return raw


def rulesets_from_table(raw: Any) -> dict[str, Rules]:
    """The rule sets of a config's `rulesets` table (a study config's, or the tuned.toml
    `marrakech tune` writes), each from the default rules or from its `base`, resolved
    after merging."""
    raw = _named_tables("rulesets", raw, _RULESETS_HOLD, "of rule options")

    def merged(name: str, seen: tuple[str, ...]) -> dict[str, Any]:
        table = dict(raw[name])
        base = table.pop("base", None)
        if base is None:
            return table
        if base not in raw:
            raise ConfigError(
                f"rulesets.{name}.base = {base!r}: allowed are the rule set names "
                f"{', '.join(n for n in raw if n != name)}"
            )
        if base in seen:
            raise ConfigError(
                f"rulesets.{name}.base = {base!r}: the bases form a cycle "
                f"({' -> '.join((*seen, base))})"
            )
        # unresolved options merge; Rules re-derives what neither set (rugs_per_colour)
        return {**merged(base, (*seen, base)), **table}

    out = {}
    for name in raw:
        check_name("rulesets", name)
        try:
            out[name] = Rules.from_dict(merged(name, (name,)))
        except ConfigError as exc:
            raise ConfigError(f"rulesets.{name}: {exc}") from exc
    return out


def _swept_schedule(raw: Any, sweep: Sweep) -> Any:
    """The schedule with each swept rule set in `schedule.rulesets` replaced by its points."""
    if not isinstance(raw, Mapping) or not isinstance(raw.get("rulesets"), list):
        return raw
    names: list[Any] = []
    for name in raw["rulesets"]:
        points = sweep.points_of(name) if name in sweep.bases else ()
        names.extend([p.ruleset for p in points] if points else [name])
    return {**raw, "rulesets": names}


def _strategies(raw: Any) -> dict[str, StrategySpec]:
    """Strategies by display name; each reference must load and accept its parameters."""
    raw = _named_tables("strategies", raw, _STRATEGIES_HOLD, "(ref, params)")
    out = {}
    for name, table in raw.items():
        check_name("strategies", name)
        _known(f"strategies.{name}", table, _STRATEGY_KEYS)
        ref = table.get("ref", name)
        if not isinstance(ref, str) or not ref:
            raise ConfigError(f"strategies.{name}.ref = {ref!r}: expected a non-empty string")
        params = table.get("params", {})
        if not isinstance(params, Mapping):
            raise ConfigError(f"strategies.{name}.params = {params!r}: expected a table")
        try:
            spec = StrategySpec.of(ref, params, name)
            cls = load_strategy_class(ref)
            allowed = getattr(cls, "PARAMETERS", None)
            if allowed is not None:
                unknown = sorted(set(params) - set(allowed))
                if unknown:
                    raise ConfigError(
                        f"strategies.{name}.params.{unknown[0]}: unknown parameter of "
                        f"{cls.__name__}; allowed: {', '.join(allowed) or 'none'}"
                    )
            spec.build()  # parameters the constructor rejects fail here, not in a worker
        except StrategyNotFound as exc:
            raise ConfigError(f"strategies.{name}.ref: {exc}") from exc
        except ConfigError as exc:
            msg = str(exc)
            where = "" if msg.startswith("strategies.") else f"strategies.{name}: "
            raise ConfigError(where + msg) from exc
        out[name] = spec
    return out


def _schedule(raw: Any, rulesets: Mapping[str, Rules], strategies: Mapping[str, Any]) -> Schedule:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"schedule = {raw!r}: expected a table with kind = ...")
    _known("schedule", raw, _SCHEDULE_KEYS)
    kind = raw.get("kind", "round_robin")
    _choice("schedule.kind", kind, SCHEDULE_KINDS)
    names = tuple(strategies)
    used_rulesets = _names("schedule.rulesets", raw.get("rulesets", list(rulesets)), rulesets)
    opponents = raw.get("opponents", "copies")
    _choice("schedule.opponents", opponents, OPPONENTS)
    repeat = raw.get("repeat", False)
    if not isinstance(repeat, bool):
        raise ConfigError(f"schedule.repeat = {repeat!r}: expected true or false")
    only = SCHEDULE_KEYS_OF[kind]
    for key in ("strategies", "focus", "field", "opponents", "repeat", "lineups"):
        if key in raw and key not in only:
            raise ConfigError(
                f"schedule.{key} does not apply to kind = {kind!r}; its keys are: "
                f"rulesets, {', '.join(only)}"
            )
    schedule = Schedule(kind=kind, rulesets=used_rulesets, opponents=opponents, repeat=repeat)
    if kind in ("round_robin", "self_play"):
        chosen = _names("schedule.strategies", raw.get("strategies", list(names)), strategies)
        return dataclasses.replace(schedule, strategies=chosen)
    if kind == "gauntlet":
        if "focus" not in raw:
            raise ConfigError(
                f"schedule.focus is required for a gauntlet; allowed: {', '.join(names)}"
            )
        focus = _names("schedule.focus", raw["focus"], strategies)
        default_field = [n for n in names if n not in focus]
        field = _names("schedule.field", raw.get("field", default_field), strategies)
        return dataclasses.replace(schedule, focus=focus, field=field)
    lineups = raw.get("lineups")
    if not isinstance(lineups, list) or not lineups:
        raise ConfigError(
            f"schedule.lineups = {lineups!r}: expected a list of line-ups, each a list of "
            f"strategy names in seat order (allowed names: {', '.join(names)})"
        )
    checked = tuple(
        _names(f"schedule.lineups[{i}]", lineup, strategies, unique=False)
        for i, lineup in enumerate(lineups)
    )
    return dataclasses.replace(schedule, lineups=checked)


def _skill_levels(raw: Any, strategies: Mapping[str, Any]) -> tuple[str, ...]:
    """`skill_levels`: two or more distinct strategy names, weakest first."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or len(raw) < 2:
        raise ConfigError(
            f"skill_levels = {raw!r}: expected a list of two or more strategy names, weakest "
            f"first (allowed names: {', '.join(strategies)})"
        )
    return _names("skill_levels", raw, strategies)


def _report(raw: Any) -> ReportOptions | None:
    """`[report]`: matters_pp (pp, above 0 and at most 50) and margins per metric."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ConfigError(f"report = {raw!r}: expected a table with matters_pp = ...")
    _known("report", raw, _REPORT_KEYS)
    matters = raw.get("matters_pp", DEFAULT_MATTERS_PP)
    if isinstance(matters, bool) or not isinstance(matters, (int, float)) or not 0 < matters <= 50:
        raise ConfigError(
            f"report.matters_pp = {matters!r}: allowed are numbers of percentage points above "
            "0 and at most 50"
        )
    given = raw.get("margins", {})
    if not isinstance(given, Mapping):
        raise ConfigError(f"report.margins = {given!r}: expected a table such as {{ turns = 1.0 }}")
    _known("report.margins", given, tuple(MARGINS))
    margins = dict(MARGINS)
    for key, value in given.items():
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not (value > 0 and math.isfinite(value))
        ):
            raise ConfigError(
                f"report.margins.{key} = {value!r}: allowed are finite numbers above 0 "
                "(in the metric's unit)"
            )
        margins[key] = float(value)
    return ReportOptions(float(matters), tuple(margins.items()))


def _stopping(
    raw: Any, rulesets: Mapping[str, Rules], strategies: Mapping[str, Any]
) -> StoppingRule | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ConfigError(f"stopping = {raw!r}: expected a table with rule = ...")
    _known("stopping", raw, _STOPPING_KEYS)
    rule = str(raw.get("rule"))
    _choice("stopping.rule", raw.get("rule"), STOPPING_RULES)
    quantity = str(raw.get("quantity"))
    _choice("stopping.quantity", raw.get("quantity"), QUANTITIES)
    seat = raw.get("seat")
    strategy = raw.get("strategy")
    if quantity == "seat_win_share":
        max_players = max(r.players for r in rulesets.values())
        seat = _int("stopping.seat", seat if seat is not None else 0, 0, max_players - 1)
        if strategy is not None:
            raise ConfigError("stopping.strategy applies to quantity = 'strategy_win_share' only")
    else:
        if strategy not in strategies:
            raise ConfigError(
                f"stopping.strategy = {strategy!r}: allowed are {', '.join(strategies)}"
            )
        if seat is not None:
            raise ConfigError("stopping.seat applies to quantity = 'seat_win_share' only")
    ruleset = raw.get("ruleset")
    if ruleset is not None and ruleset not in rulesets:
        raise ConfigError(f"stopping.ruleset = {ruleset!r}: allowed are {', '.join(rulesets)}")
    level = _fraction("stopping.level", raw.get("level", 0.95))
    min_games = _int("stopping.min_games", raw.get("min_games", 0), 0, None)
    out = StoppingRule(
        rule=rule,
        quantity=quantity,
        seat=seat,
        strategy=strategy,
        ruleset=ruleset,
        level=level,
        min_games=min_games,
    )
    if rule == "interval_width":
        for key in ("p0", "p1", "alpha", "beta"):
            if key in raw:
                raise ConfigError(f"stopping.{key} applies to rule = 'sprt' only")
        if "width" not in raw:
            raise ConfigError("stopping.width is required for rule = 'interval_width' (0 to 1)")
        return dataclasses.replace(out, width=_fraction("stopping.width", raw["width"]))
    if "width" in raw:
        raise ConfigError("stopping.width applies to rule = 'interval_width' only")
    for key in ("p0", "p1"):
        if key not in raw:
            raise ConfigError(f"stopping.{key} is required for rule = 'sprt' (between 0 and 1)")
    p0, p1 = _fraction("stopping.p0", raw["p0"]), _fraction("stopping.p1", raw["p1"])
    if p0 == p1:
        raise ConfigError(f"stopping.p1 = {p1!r}: must differ from stopping.p0")
    alpha = _fraction("stopping.alpha", raw.get("alpha", 0.05))
    beta = _fraction("stopping.beta", raw.get("beta", 0.05))
    return dataclasses.replace(out, p0=p0, p1=p1, alpha=alpha, beta=beta)


# ---------------------------------------------------------------- checks


def _resolved_params(spec: StrategySpec) -> dict[str, Any]:
    """A strategy's parameters with its class defaults filled in."""
    try:
        defaults = dict(getattr(spec.load_class(), "PARAMETERS", {}))
    except StrategyNotFound:
        defaults = {}
    return {**defaults, **dict(spec.params)}


def _known(where: str, table: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    for key in table:
        if key not in allowed:
            at = f"{where}.{key}" if where else key
            place = f"in [{where}]" if where else "at the top level"
            raise ConfigError(f"unknown key {at!r} {place}; allowed: {', '.join(allowed)}")


def check_name(section: str, name: str) -> None:
    """ConfigError unless `name` can name a strategy, rule set or study (`section` says
    where it was given)."""
    if not isinstance(name, str) or not name or not all(c.isalnum() or c in "_-." for c in name):
        raise ConfigError(f"{section}.{name!r}: names are letters, digits, '_', '-' and '.'")


def _names(key: str, value: Any, known: Mapping[str, Any], unique: bool = True) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ConfigError(
            f"{key} = {value!r}: expected a non-empty list of names from {', '.join(known)}"
        )
    for v in value:
        if v not in known:
            raise ConfigError(f"{key}: unknown name {v!r}; allowed: {', '.join(known)}")
    if unique and len(set(value)) != len(value):
        raise ConfigError(f"{key} = {value!r}: a name appears twice")
    return tuple(value)


def _choice(key: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ConfigError(f"{key} = {value!r}: allowed are {', '.join(map(repr, allowed))}")


def _int(key: str, value: Any, minimum: int, maximum: int | None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{key} = {value!r}: expected an integer")
    if value < minimum or (maximum is not None and value > maximum):
        upper = f" to {maximum}" if maximum is not None else " or more"
        raise ConfigError(f"{key} = {value}: allowed are integers from {minimum}{upper}")
    return value


def _seed(key: str, value: Any) -> int:
    return _int(key, value, 0, MAX_SEED)


def _seconds(key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{key} = {value!r}: expected a number of seconds")
    if not (0 < value <= MAX_DECISION_SECONDS):  # nan fails this too
        raise ConfigError(
            f"{key} = {value!r}: allowed are seconds above 0, up to {MAX_DECISION_SECONDS:g}"
        )
    return float(value)


def _fraction(key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{key} = {value!r}: expected a number between 0 and 1")
    if not (0 < value < 1) or math.isnan(value):
        raise ConfigError(f"{key} = {value!r}: allowed are numbers strictly between 0 and 1")
    return float(value)
