"""Write LOG_FORMAT.md run folders from synthetic tables, for the report's tests and benchmark.

The tables come from ``tests/synthetic_games.py``; this module only adds what a run folder
has beyond them: the manifest, the Parquet schemas and types, and a ``moves`` table whose
``dirhams_after`` / ``visible_after`` lists carry the synthetic score paths (every other
move column is filled with plausible values; the report does not read them).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

GAMES_SCHEMA = pa.schema(
    [
        ("game_id", pa.int64()),
        ("match_id", pa.int64()),
        ("ruleset", pa.string()),
        ("seed", pa.uint64()),
        ("players", pa.int8()),
        ("turns", pa.int16()),
        ("end_reason", pa.string()),
        ("winners", pa.list_(pa.int8())),
        ("tie_broken", pa.bool_()),
        ("error", pa.string()),
        ("block", pa.int64()),
    ]
)
SEATS_SCHEMA = pa.schema(
    [
        ("game_id", pa.int64()),
        ("seat", pa.int8()),
        ("strategy", pa.string()),
        ("colours", pa.string()),
        ("dirhams", pa.int16()),
        ("visible", pa.int16()),
        ("score", pa.int16()),
        ("rank", pa.int8()),
        ("win_share", pa.float32()),
        ("eliminated_turn", pa.int16()),
        ("paid", pa.int16()),
        ("received", pa.int16()),
    ]
)
MOVES_SCHEMA = pa.schema(
    [
        ("game_id", pa.int64()),
        ("turn", pa.int16()),
        ("seat", pa.int8()),
        ("colour", pa.string()),
        ("rotation", pa.int8()),
        ("roll", pa.int8()),
        ("assam_x", pa.int8()),
        ("assam_y", pa.int8()),
        ("facing", pa.string()),
        ("payment", pa.int16()),
        ("paid_to", pa.int8()),
        ("bankrupt", pa.bool_()),
        ("x1", pa.int8()),
        ("y1", pa.int8()),
        ("x2", pa.int8()),
        ("y2", pa.int8()),
        ("end_rotation", pa.int8()),
        ("dirhams_after", pa.list_(pa.int16())),
        ("visible_after", pa.list_(pa.int16())),
    ]
)


def write_manifest(
    run_dir: Path,
    rulesets: Mapping[str, Mapping[str, Any]],
    strategies: Sequence[str],
    games_planned: int,
    seed: int = 1,
    run_id: str = "synthetic",
) -> None:
    """Write ``run.json`` with the fields LOG_FORMAT.md asks for."""
    manifest = {
        "format_version": 1,
        "run_id": run_id,
        "created": "2025-01-01T00:00:00Z",
        "program_version": "0.0.test",
        "seed": seed,
        "config": {
            "rulesets": {name: dict(opts) for name, opts in rulesets.items()},
            "strategies": [{"name": s, "ref": "random", "params": {}} for s in strategies],
            "schedule": {"kind": "round_robin", "rotate_seats": True},
            "games_per_lineup": 0,
        },
        "games_planned": games_planned,
    }
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "run.json").write_text(json.dumps(manifest, indent=2))


def _write(table: pa.Table, folder: Path, part: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".part-{part:05d}.parquet"
    pq.write_table(table, tmp, compression="zstd")
    tmp.replace(folder / f"part-{part:05d}.parquet")


def write_tables(
    run_dir: Path,
    games: pd.DataFrame,
    seats: pd.DataFrame,
    turn_scores: pd.DataFrame | None = None,
    part: int = 0,
) -> None:
    """Append one part of each table (games, seats, and moves when ``turn_scores`` given)."""
    g = games.copy()
    g["winners"] = [[int(x) for x in w] for w in g["winners"]]
    g["error"] = g["error"].where(g["end_reason"] == "error", None)
    g = g.astype(object).where(g.notna(), None)
    _write(
        pa.Table.from_pandas(g, schema=GAMES_SCHEMA, preserve_index=False), run_dir / "games", part
    )
    s = seats.astype(object).where(seats.notna(), None)
    _write(
        pa.Table.from_pandas(s, schema=SEATS_SCHEMA, preserve_index=False), run_dir / "seats", part
    )
    if turn_scores is not None:
        _write(moves_from_turn_scores(turn_scores), run_dir / "moves", part)


def moves_from_turn_scores(turn_scores: pd.DataFrame) -> pa.Table:
    """A moves table whose ``dirhams_after + visible_after`` equals the synthetic scores."""
    ts = turn_scores.sort_values(["game_id", "turn", "seat"])
    sizes = ts.groupby(["game_id", "turn"], sort=True).size()
    keys = sizes.index.to_frame(index=False)
    k = sizes.to_numpy(dtype="int64")  # seats of each game
    score = ts["score"].to_numpy(dtype="int64")
    visible = np.clip(score // 3, 0, None)
    dirhams = score - visible
    n = len(keys)
    turn = keys["turn"].to_numpy(dtype="int64")
    offsets = pa.array(np.r_[0, np.cumsum(k)].astype("int32"))
    zeros = np.zeros(n, dtype="int8")
    columns = {
        "game_id": pa.array(keys["game_id"].to_numpy(dtype="int64")),
        "turn": pa.array(turn.astype("int16")),
        "seat": pa.array((turn % k).astype("int8")),
        "colour": pa.array(np.array(list("rbyp"))[turn % k]),
        "rotation": pa.array(zeros),
        "roll": pa.array((1 + turn % 4).astype("int8")),
        "assam_x": pa.array(np.full(n, 3, dtype="int8")),
        "assam_y": pa.array(np.full(n, 3, dtype="int8")),
        "facing": pa.array(np.full(n, "N")),
        "payment": pa.array(np.zeros(n, dtype="int16")),
        "paid_to": pa.nulls(n, pa.int8()),
        "bankrupt": pa.array(np.zeros(n, dtype=bool)),
        "x1": pa.array(np.full(n, 3, dtype="int8")),
        "y1": pa.array(np.full(n, 2, dtype="int8")),
        "x2": pa.array(np.full(n, 3, dtype="int8")),
        "y2": pa.array(np.full(n, 1, dtype="int8")),
        "end_rotation": pa.nulls(n, pa.int8()),
        "dirhams_after": pa.ListArray.from_arrays(offsets, pa.array(dirhams.astype("int16"))),
        "visible_after": pa.ListArray.from_arrays(offsets, pa.array(visible.astype("int16"))),
    }
    return pa.table(columns, schema=MOVES_SCHEMA)


def write_run(
    run_dir: Path,
    games: pd.DataFrame,
    seats: pd.DataFrame,
    turn_scores: pd.DataFrame | None = None,
    rulesets: Mapping[str, Mapping[str, Any]] | None = None,
    parts: int = 2,
    seed: int = 1,
    run_id: str = "synthetic",
) -> Path:
    """Write a whole run folder (manifest + tables split into ``parts`` parts by game_id)."""
    if rulesets is None:
        rulesets = {
            str(r): {"players": int(p)}
            for r, p in games.groupby("ruleset")["players"].first().items()
        }
    write_manifest(run_dir, rulesets, sorted(seats["strategy"].unique()), len(games), seed, run_id)
    edges = np.linspace(0, int(games["game_id"].max()) + 1, parts + 1).astype("int64")
    for i in range(parts):
        lo, hi = edges[i], edges[i + 1]
        gsel = games.loc[(games["game_id"] >= lo) & (games["game_id"] < hi)]
        ssel = seats.loc[(seats["game_id"] >= lo) & (seats["game_id"] < hi)]
        tsel = (
            None
            if turn_scores is None
            else turn_scores.loc[(turn_scores["game_id"] >= lo) & (turn_scores["game_id"] < hi)]
        )
        write_tables(run_dir, gsel, ssel, tsel, part=i)
    return run_dir
