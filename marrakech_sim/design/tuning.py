"""`marrakech tune`: the seat compensation of each rule set at each skill level, confirmed.

A tune config is a study config without a schedule, plus a ``[tune]`` table::

    name = "tune-seats"
    seed = 20261204
    [rulesets.four]              # each rule set is tuned on its own
    [rulesets.two]
    players = 2
    [strategies.greedy]          # each strategy is a skill level, played in every seat
    [tune]
    levels = ["greedy"]          # optional: the strategies to tune at (default: all)
    margin_pp = 1.0              # a seat is fair within +-margin_pp (the verdict)
    search_games = 20000         # and the other TunePlan keys (design.tune.TunePlan)

For every (level, rule set) the search (`design.tune.search_purses`) plays self-play games
of the level through the runner (`run.runner.run_study`, common seeds across the purse
vectors of a step), then a confirmatory run on fresh seeds plays the tuned purses of every
level, and the untuned ones, at this level: the diagonal is the confirmation, the rest
says whether one level's fix over- or under-corrects another.

Every step's effects are kept in the output folder (``steps/LEVEL/RULESET/SEED.json``) as
soon as it is played, with the games' seeds (``SEED.seeds.npy``); the confirmation's games
are kept too, as a run folder (``confirm/LEVEL/RULESET/SEED.run``); a stopped tune run again
reuses them and resumes a step's run folder it finds unfinished, so it ends with the same
result as an uninterrupted one.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from marrakech_sim import runfolder
from marrakech_sim.design.tune import (
    CONFIRM,
    Evaluate,
    Search,
    SeatEffects,
    SeatVerdict,
    TunePlan,
    confirm_purses,
    effects_from_blocks,
    search_purses,
    seed_for,
)
from marrakech_sim.errors import ConfigError, RunFolderError
from marrakech_sim.files import read_toml, write_atomic, writing
from marrakech_sim.rules.options import Rules
from marrakech_sim.run.config import Study, study_from_dict
from marrakech_sim.run.runner import resume_run, run_study
from marrakech_sim.runfolder.load import load_run
from marrakech_sim.stats.seats import seat_block_totals

TOP_KEYS = (
    "name",
    "description",
    "seed",
    "chunk_games",
    "decision_seconds",
    "worker_memory_mb",
    "rulesets",
    "strategies",
    "tune",
)
PLAN_KEYS = tuple(f.name for f in dataclasses.fields(TunePlan))
TUNE_KEYS = ("levels", "margin_pp", *PLAN_KEYS)
DEFAULT_MARGIN_PP = 1.0
CONFIG_FILE = "tune-config.json"
MARGIN_FILE = "confirm/margin.json"  # the verdicts' margin, fixed as the confirmation starts

#: messages for the command line while a tune runs
Say = Callable[[str], None]


@dataclasses.dataclass(frozen=True, slots=True)
class TuneConfig:
    """A validated tune config."""

    study: Study  # its rule sets, strategies, seed and run options
    levels: tuple[str, ...]
    margin_pp: float
    plan: TunePlan
    raw: dict[str, Any]
    margin_key: str = "tune.margin_pp"  # where the margin came from (--margin: the option)

    @property
    def name(self) -> str:
        return self.study.name

    def with_options(self, level: str | None = None, margin_pp: float | None = None) -> TuneConfig:
        """The config restricted to one level (--level) and with another margin (--margin)."""
        levels = self.levels
        if level is not None:
            if level not in self.levels:
                raise ConfigError(
                    f"--level {level!r}: allowed are the config's levels: {', '.join(self.levels)}"
                )
            levels = (level,)
        if margin_pp is None:
            return dataclasses.replace(self, levels=levels)
        margin = _margin("--margin", margin_pp)
        return dataclasses.replace(self, levels=levels, margin_pp=margin, margin_key="--margin")


def load_tune_config(path: str | Path) -> TuneConfig:
    """Read and validate a tune config file (TOML)."""
    data = read_toml(path, "tune config", ConfigError)
    return tune_config_from_dict(data, default_name=Path(path).stem)


def tune_config_from_dict(data: dict[str, Any], default_name: str = "tune") -> TuneConfig:
    """Validate a tune config (as parsed TOML); every error names its key."""
    unknown = sorted(set(data) - set(TOP_KEYS))
    if unknown:
        raise ConfigError(
            f"unknown key {unknown[0]!r} in a tune config; allowed are: {', '.join(TOP_KEYS)}"
        )
    raw_tune = data.get("tune", {})
    if not isinstance(raw_tune, dict):
        raise ConfigError(f"tune = {raw_tune!r}: expected a table [tune]")
    unknown = sorted(set(raw_tune) - set(TUNE_KEYS))
    if unknown:
        raise ConfigError(f"unknown key tune.{unknown[0]}; allowed are: {', '.join(TUNE_KEYS)}")
    study_data = {k: v for k, v in data.items() if k != "tune"}
    study_data["schedule"] = {"kind": "self_play"}
    study = study_from_dict(study_data, default_name=default_name)
    for name, rules in study.rulesets:
        if rules.seat_dirhams is not None:
            raise ConfigError(
                f"rulesets.{name}.seat_dirhams = {list(rules.seat_dirhams)!r}: a tuned rule "
                "set gives every seat its starting_dirhams; remove seat_dirhams"
            )
    levels = raw_tune.get("levels", list(study.strategy_names))
    if (
        not isinstance(levels, list)
        or not levels
        or any(v not in study.strategy_names for v in levels)
        or len(set(levels)) != len(levels)
    ):
        raise ConfigError(
            f"tune.levels = {levels!r}: allowed is a list of distinct strategy names of the "
            f"config: {', '.join(study.strategy_names)}"
        )
    margin = _margin("tune.margin_pp", raw_tune.get("margin_pp", DEFAULT_MARGIN_PP))
    plan = TunePlan(**{k: raw_tune[k] for k in PLAN_KEYS if k in raw_tune})
    return TuneConfig(study, tuple(levels), margin, plan, data)


def _margin(key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 50:
        raise ConfigError(f"{key} = {value!r}: allowed is a number of pp above 0, at most 50")
    return float(value)


@dataclasses.dataclass(frozen=True, slots=True)
class Replay:
    """One rule (tuned at `tuned_at`, or None: untuned) played at a level on its fresh seeds."""

    tuned_at: str | None
    effects: SeatEffects
    verdicts: tuple[SeatVerdict, ...]

    @property
    def all_fair(self) -> bool:
        return all(v.fair for v in self.verdicts)


@dataclasses.dataclass(frozen=True, slots=True)
class Tuned:
    """The tune of one rule set at one level: its search, and the confirmatory replays."""

    level: str
    ruleset: str
    search: Search
    confirm_seed: int
    replays: tuple[Replay, ...]  # the level's own tuned rule first, then others, untuned last
    search_seeds: int  # distinct game seeds the search played
    confirm_seeds: int  # distinct game seeds of the confirmatory run
    disjoint: bool  # no confirmatory game seed was played by any search of the tune
    confirm_run: str | None  # the confirmation's run folder, in the tune's (None: not kept)

    @property
    def confirmed(self) -> Replay:
        return self.replays[0]


@dataclasses.dataclass(frozen=True, slots=True)
class TuneResult:
    """Every (level, rule set) tune of a config, where its files are, the games played."""

    config: TuneConfig
    out_dir: Path
    tuned: tuple[Tuned, ...]
    games: int


def run_tune(
    config: TuneConfig,
    out_dir: str | Path,
    *,
    workers: int | None = None,
    say: Say | None = None,
) -> TuneResult:
    """Tune every rule set at every level of `config` into `out_dir` (resumes a stopped one)."""
    out = Path(out_dir)
    tell = say or (lambda _message: None)
    _claim(out, config)
    _check_margin(out, config)
    searches: dict[tuple[str, str], Search] = {}
    games = 0
    for level in config.levels:
        for ruleset, rules in config.study.rulesets:
            tell(f"searching {ruleset} at level {level}")
            folder = out / "steps" / level / ruleset
            evaluate = _evaluator(config, folder, level, rules, workers, tell)
            search = search_purses(
                evaluate, _base(rules), config.plan, _pair_seed(config, level, ruleset)
            )
            searches[(level, ruleset)] = search
            games += search.games
            tell(f"  {ruleset} at {level}: purses {list(search.purses)} ({search.games:,} games)")
    search_seeds = _seeds_of(out / "steps")
    _fix_margin(out, config)
    tuned = []
    for level in config.levels:
        for ruleset, rules in config.study.rulesets:
            tell(f"confirming {ruleset} at level {level} on fresh seeds")
            rules_of = [(lv, searches[(lv, ruleset)].purses) for lv in config.levels]
            rules_of.sort(key=lambda item: item[0] != level)  # the level's own first
            purses = list(dict.fromkeys([p for _, p in rules_of] + [_base(rules)]))
            pair = _pair_seed(config, level, ruleset)
            folder = out / "confirm" / level / ruleset
            evaluate = _evaluator(config, folder, level, rules, workers, tell, keep_games=True)
            played = confirm_purses(evaluate, purses, pair, config.plan, config.margin_pp)
            games += len(purses) * config.plan.confirm_games
            by_purses = dict(zip(purses, played, strict=True))
            replays = [_replay(lv, *by_purses[p]) for lv, p in rules_of]
            replays.append(_replay(None, *by_purses[_base(rules)]))
            confirm = _seeds_of(folder)
            games_dir = folder / f"{seed_for(pair, CONFIRM, 0)}.run"
            tuned.append(
                Tuned(
                    level,
                    ruleset,
                    searches[(level, ruleset)],
                    seed_for(pair, CONFIRM, 0),
                    tuple(replays),
                    len(search_seeds),
                    len(confirm),
                    not np.intersect1d(confirm, search_seeds).size,
                    games_dir.relative_to(out).as_posix() if games_dir.is_dir() else None,
                )
            )
    return TuneResult(config, out, tuple(tuned), games)


def _replay(level: str | None, effects: SeatEffects, verdicts: list[SeatVerdict]) -> Replay:
    return Replay(level, effects, tuple(verdicts))


def _base(rules: Rules) -> tuple[int, ...]:
    return (rules.starting_dirhams,) * rules.players


def _pair_seed(config: TuneConfig, level: str, ruleset: str) -> int:
    """The seed of one (level, rule set) tune: from the config's seed and the two names."""
    words = [config.study.seed, zlib.crc32(level.encode()), zlib.crc32(ruleset.encode())]
    return int(np.random.SeedSequence(words).generate_state(1, np.uint64)[0] >> np.uint64(1))


def _claim(out: Path, config: TuneConfig) -> None:
    """Write the config into `out`, or check that the tune already there has the same one
    (the levels may differ, and the margin until the confirmation begins: _check_margin)."""
    mine = {k: v for k, v in config.raw.items() if k != "tune"}
    mine["tune"] = {k: v for k, v in config.raw.get("tune", {}).items() if k in PLAN_KEYS}
    path = out / CONFIG_FILE
    if path.exists():
        there, here = json.loads(path.read_text()), json.loads(json.dumps(mine, sort_keys=True))
        if there != here:
            raise RunFolderError(
                f"{str(out)!r} holds a tune of a different config ({_difference(there, here)}); "
                "give another --out or remove it"
            )
        return
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(mine, sort_keys=True, indent=1))


def _difference(there: dict[str, Any], here: dict[str, Any], prefix: str = "") -> str:
    """The first key whose value differs between two configs: 'KEY: A there, B here'."""
    for key in sorted(set(there) | set(here)):
        a, b = there.get(key), here.get(key)
        if isinstance(a, dict) and isinstance(b, dict) and a != b:
            return _difference(a, b, f"{prefix}{key}.")
        if a != b:
            return f"{prefix}{key}: {_unset(a)} there, {_unset(b)} here"
    return "the same keys"


def _unset(value: Any) -> str:
    return "unset" if value is None else repr(value)


def _fixed_margin(out: Path) -> float | None:
    """The margin the confirmation of the tune in `out` was judged at, if it has begun (or
    tune.json's, of a folder from before the margin was kept)."""
    for path in (out / MARGIN_FILE, out / "tune.json"):
        if path.exists():
            return float(json.loads(path.read_text())["margin_pp"])
    return None


def _check_margin(out: Path, config: TuneConfig) -> None:
    """Refuse another margin than the one the folder's confirmation was judged at: an
    equivalence test keeps its error rate only with the margin fixed before the data."""
    fixed = _fixed_margin(out)
    if fixed is not None and fixed != config.margin_pp:
        raise RunFolderError(
            f"{config.margin_key} = {config.margin_pp:g}: the tune in {str(out)!r} has confirmed "
            f"at margin {fixed:g} pp, and an equivalence verdict needs its margin fixed before "
            f"its games are seen; run it at {fixed:g}, or tune at {config.margin_pp:g} into a "
            "new --out folder with another seed (the same seed plays the same games again)"
        )


def _fix_margin(out: Path, config: TuneConfig) -> None:
    """Keep the margin in `out` before the first confirmatory game is played."""
    path = out / MARGIN_FILE
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps({"margin_pp": config.margin_pp}))


def _evaluator(
    config: TuneConfig,
    folder: Path,
    level: str,
    rules: Rules,
    workers: int | None,
    tell: Say,
    keep_games: bool = False,
) -> Evaluate:
    """evaluate(purses, seed, games) playing self-play games of `level` through the runner.

    One study per call, one rule set p0, p1, ... per purse vector, common seeds; its effects
    are kept in folder/SEED.json (and the games' seeds in SEED.seeds.npy) and reused when
    asked again; the run folder folder/SEED.run is removed once they are written, unless
    `keep_games` (the confirmation's, kept to be audited from its games).
    """

    def evaluate(purses: Sequence[tuple[int, ...]], seed: int, games: int) -> list[SeatEffects]:
        kept = folder / f"{seed}.json"
        if kept.exists():
            data = json.loads(kept.read_text())
            effects = [SeatEffects.from_dict(d) for d in data["effects"]]
            if [list(e.purses) for e in effects] == [list(p) for p in purses] and data[
                "games"
            ] == games:
                tell(f"  {len(purses)} purse vector(s) x {games:,} games: kept from before")
                return effects
        tell(f"  {len(purses)} purse vector(s) x {games:,} games: {_few(purses)}")
        study = _step_study(config, level, rules, purses, seed, games)
        run_dir = folder / f"{seed}.run"
        if (run_dir / runfolder.MANIFEST).exists():
            if runfolder.read_manifest(run_dir).status not in runfolder.FINISHED:
                resume_run(run_dir, workers=workers)
        else:
            shutil.rmtree(run_dir, ignore_errors=True)
            run_study(study, run_dir, workers=workers)
        run = load_run(run_dir)
        totals = seat_block_totals(run.games, run.seats)
        effects = []
        for i, p in enumerate(purses):
            y, n = totals[(rules.players, f"p{i}")]
            effects.append(effects_from_blocks(tuple(p), y, n))
        seeds = np.unique(run.games["seed"].to_numpy(dtype=np.uint64))
        folder.mkdir(parents=True, exist_ok=True)
        with writing(folder / f"{seed}.seeds.npy") as tmp:
            np.save(tmp, seeds)
        write_atomic(
            kept, json.dumps({"games": games, "effects": [e.to_dict() for e in effects]}, indent=1)
        )
        if not keep_games:
            shutil.rmtree(run_dir)
        return effects

    return evaluate


def _step_study(
    config: TuneConfig,
    level: str,
    rules: Rules,
    purses: Sequence[tuple[int, ...]],
    seed: int,
    games: int,
) -> Study:
    """The study of one step: `level` in every seat, one rule set p0, p1, ... per purse
    vector, all on the block seeds of `seed` (common seeds)."""
    spec = config.study.to_dict()["strategies"][level]
    options = rules.to_dict()
    data = {
        "name": f"{config.name}-{level}-{seed}",
        "seed": seed,
        "games_per_lineup": games,
        "chunk_games": config.study.chunk_games,
        "decision_seconds": config.study.decision_seconds,
        "common_seeds": True,
        "keep_moves": 0.0,  # a step reads games and seats only
        "rulesets": {f"p{i}": {**options, "seat_dirhams": list(p)} for i, p in enumerate(purses)},
        "strategies": {level: spec},
        "schedule": {"kind": "self_play"},
    }
    if config.study.worker_memory_mb is not None:
        data["worker_memory_mb"] = config.study.worker_memory_mb
    return study_from_dict(data)


def _few(purses: Sequence[tuple[int, ...]]) -> str:
    shown = " ".join(str(list(p)) for p in purses[:4])
    return shown + (f" and {len(purses) - 4} more" if len(purses) > 4 else "")


def _seeds_of(folder: Path) -> np.ndarray:
    """Every game seed kept under `folder` (its steps' SEED.seeds.npy files)."""
    found = [np.load(p) for p in sorted(folder.rglob("*.seeds.npy")) if not p.name.startswith(".")]
    return np.unique(np.concatenate(found)) if found else np.zeros(0, np.uint64)
