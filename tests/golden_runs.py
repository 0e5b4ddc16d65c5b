"""Digests of small runs and games the code must keep reproducing (tests/golden/runs.json).

`study_digests` plays a small run of configs/default.toml and a small study of the other
built-in strategies (the expert family in the compiled loop, the search players in the
Python loop) and digests every Parquet part file byte for byte, with the manifest's
deterministic keys; `game_digests` plays every built-in through the Python game loop on
a few seeds. tools/regen_run_goldens.py writes the file; tests/run/test_golden_runs.py
compares against it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from conftest import GOLDEN, ROOT

GOLDEN_RUNS = GOLDEN / "runs.json"

#: games per line-up of the default study's small run: two blocks of 4 players' 24 seatings
DEFAULT_GAMES = 48
#: the other built-ins, 2 players, every pair once; the search players with a shallow search
OTHERS: dict[str, Any] = {
    "name": "others",
    "seed": 7,
    "games_per_lineup": 2,
    "rotation": "all",
    "rulesets": {"two_players": {"players": 2}},
    "strategies": {
        "expert": {},
        "expert-2": {"ref": "expert", "params": {"budget": 2}},
        "rotation-only": {"params": {"budget": 1}},
        "placement-only": {},
        "expectimax": {"params": {"depth": 1}},
        "mcts": {"params": {"rollouts": 8}},
        "greedy": {},
        "random": {},
    },
    "schedule": {"kind": "round_robin"},
}
#: the manifest's keys that depend only on the config and the code's behaviour
MANIFEST_KEYS = (
    "seed",
    "config",
    "games_planned",
    "blocks",
    "chunks",
    "matches",
    "seed_derivation",
    "moves_columns",
    "status",
    "games_played",
    "chunks_played",
    "stopping",
)
#: seeds of each built-in's Python-loop games (against greedy, both seatings)
GAME_SEEDS = (1, 2, 3)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def folder_digests(run_dir: Path) -> dict[str, str]:
    """Each Parquet file's sha256 by its path in the run folder, and the manifest's."""
    found = {
        str(path.relative_to(run_dir)): sha256(path.read_bytes())
        for path in sorted(run_dir.rglob("*.parquet"))
    }
    manifest = json.loads((run_dir / "run.json").read_text())
    kept = {key: manifest[key] for key in MANIFEST_KEYS}
    found["run.json (deterministic keys)"] = sha256(json.dumps(kept, sort_keys=True).encode())
    return found


def study_digests(out: Path, workers: int = 0) -> dict[str, dict[str, str]]:
    """The digests of the two small runs, played into new folders under `out`."""
    from marrakech_sim.run.config import load_study, study_from_dict
    from marrakech_sim.run.runner import run_study

    default = load_study(ROOT / "configs" / "default.toml").replace(games_per_lineup=DEFAULT_GAMES)
    studies = {"default": default, "others": study_from_dict(OTHERS)}
    digests = {}
    for name, study in studies.items():
        run_study(study, out / name, workers=workers)
        digests[name] = folder_digests(out / name)
    return digests


def game_digests() -> dict[str, str]:
    """Each registered strategy's Python-loop games against greedy: a digest of each record."""
    from marrakech_sim.play.game import play_game
    from marrakech_sim.play.strategy import StrategySpec, registered
    from marrakech_sim.rules.options import Rules

    rules = Rules(players=2)
    light = {"expectimax": {"depth": 1}, "mcts": {"rollouts": 8}}
    digests = {}
    for name in sorted(registered()):
        spec = StrategySpec.of(name, light.get(name))
        for seed in GAME_SEEDS:
            for seats in ((spec, StrategySpec.of("greedy")), (StrategySpec.of("greedy"), spec)):
                rec = play_game(rules, [x.build() for x in seats], seed)
                h = hashlib.sha256()
                for part in (rec.moves, rec.seats):
                    h.update(part.tobytes())
                h.update(repr((rec.turns, rec.end_reason, rec.winners, rec.tie_broken)).encode())
                first = seats[0] is spec
                digests[f"{name} {'first' if first else 'second'} seed {seed}"] = h.hexdigest()
    return digests
