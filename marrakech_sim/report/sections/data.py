"""Report section 1, the data: runs, rule sets and how they differ, seeds, faults, digests."""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np
import pandas as pd

from marrakech_sim import stats
from marrakech_sim.report.load import RUN_SHIFT, RunInfo, digest, rule_differences
from marrakech_sim.report.pergame import Games
from marrakech_sim.report.tables import ReportTables, small_unique


def seats_of_games(runs: list[RunInfo], games_sql: str, columns: str) -> str:
    """SQL: ``game_id`` (run-unique) and ``columns`` of the seats of the games ``games_sql`` lists.

    Each run's seats are read through its own view, whose ``game_id`` is as stored, so the
    join's filter reaches the Parquet scan and only row groups holding those games are read.
    """
    parts = []
    for run in runs:
        off = run.index * RUN_SHIFT
        parts.append(
            f"""SELECT s.game_id + {off} AS game_id, {columns} FROM seats_{run.index} s
                SEMI JOIN (SELECT game_id - {off} AS game_id FROM ({games_sql})
                           WHERE game_id >= {off} AND game_id < {off + RUN_SHIFT})
                USING (game_id)"""
        )
    return " UNION ALL ".join(parts)


def _group_ids(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)`` for run-unique ids (run index above bit 40).

    Ids are numbered 0.. within a run, so (run, id) packs into a small range and a
    bincount replaces the sort.
    """
    if not len(values):
        return values, np.zeros(0, "int64")
    run, local = values >> 40, values & (RUN_SHIFT - 1)
    width = int(local.max()) + 1
    if values.min() < 0 or width * (int(run.max()) + 1) > 4 * len(values) + (1 << 20):
        return np.unique(values, return_inverse=True)
    keys, inverse = small_unique(run * width + local)
    return (keys // width) * RUN_SHIFT + keys % width, inverse


def _pair_rows(group: np.ndarray, block_start: np.ndarray, block_index: np.ndarray) -> np.ndarray:
    """One game (row) for each distinct (block, group) pair; games sorted by block.

    ``np.bincount(group[rows])`` then counts the distinct blocks of each group.
    """
    starts = np.flatnonzero(block_start)
    if block_start[np.flatnonzero(group[1:] != group[:-1]) + 1].all():
        return starts  # one group per block: the block's first game stands for it
    _, first = np.unique(block_index * (int(group.max()) + 1) + group, return_index=True)
    return np.asarray(first)


def data_tables(
    con: duckdb.DuckDBPyConnection, runs: list[RunInfo], out: ReportTables, games: Games
) -> None:
    """Runs, rule sets, line-ups and faults; counts from the games' arrays."""
    total = len(games)
    block_start = np.r_[True, games.block[1:] != games.block[:-1]] if total else np.zeros(0, bool)
    block_index = np.cumsum(block_start) - 1
    n_runs = max(len(runs), int(games.run.max()) + 1 if total else 0)
    run = games.run.astype("int64")
    error = games.is_error.astype("float64")
    matches, match_of = _group_ids(games.match_id)
    run_blocks = np.bincount(run[_pair_rows(run, block_start, block_index)], minlength=n_runs)
    run_matches = np.bincount((matches >> 40).astype("int64"), minlength=n_runs)
    per_run = {
        "games": np.bincount(run, minlength=n_runs),
        "error_games": np.bincount(run, minlength=n_runs, weights=error),
        "blocks": run_blocks,
        "lineups": run_matches,
        "turns": np.bincount(run, minlength=n_runs, weights=np.nan_to_num(games.turns)),
    }
    rows = []
    for info in runs:
        m = info.manifest
        got = {k: int(v[info.index]) for k, v in per_run.items()}
        rows.append(
            {
                "run": info.index,
                "run_id": info.run_id,
                "folder": str(info.path),
                "created": m.get("created", ""),
                "program_version": m.get("program_version", ""),
                "seed": m.get("seed", ""),
                "games_planned": m.get("games_planned", ""),
                "games": got["games"],
                "error_games": got["error_games"],
                "blocks": got["blocks"],
                "lineups": got["lineups"],
                "moves_rows": got["turns"],
                "parts": " / ".join(str(len(info.parts[t])) for t in ("games", "seats", "moves")),
                **{
                    f"sha256_{t}": digest(info.parts[t], info.path) if info.parts[t] else ""
                    for t in ("games", "seats", "moves")
                },
            }
        )
    out.tables["runs"] = pd.DataFrame(rows)

    n_rs = len(games.rulesets)
    rc = games.ruleset.astype("int64")
    first_of_rs = np.full(n_rs, total)
    np.minimum.at(first_of_rs, rc, np.arange(total))
    rs_runs = np.bincount(rc * n_runs + run, minlength=n_rs * n_runs).reshape(n_rs, n_runs)
    rs_pairs = _pair_rows(rc, block_start, block_index)
    per_rs = pd.DataFrame(
        {
            "ruleset": games.rulesets,
            "players": games.players[first_of_rs].astype("int32"),
            "n_games": np.bincount(rc, minlength=n_rs).astype("int64"),
            "error_games": np.bincount(rc, minlength=n_rs, weights=error).astype("int64"),
            "n_blocks": np.bincount(rc[rs_pairs], minlength=n_rs).astype("int64"),
            "runs": [", ".join(str(r) for r in np.flatnonzero(row)) for row in rs_runs],
        }
    )
    options: dict[str, dict[str, Any]] = {}
    for info in runs:
        for name, opts in info.rulesets.items():
            options.setdefault(info.ruleset_labels.get(name, name), opts)
    per_rs.insert(
        5,
        "differences",
        [
            ", ".join(f"{k} = {v}" for k, v in rule_differences(options.get(r, {})).items())
            or "(standard rules)"
            if r in options
            else "(not in the manifest)"
            for r in per_rs["ruleset"]
        ],
    )
    out.tables["rulesets"] = per_rs[
        ["ruleset", "players", "n_games", "error_games", "n_blocks", "runs", "differences"]
    ]
    out.facts["ruleset_options"] = options

    # Matches: counts from the arrays, the line-up from the seats of each match's first game.
    n_m = len(matches)
    first = np.full(n_m, np.iinfo("int64").max)
    np.minimum.at(first, match_of, games.game_id)
    first_row = np.full(n_m, total)
    np.minimum.at(first_row, match_of, np.arange(total))
    match_pairs = _pair_rows(match_of, block_start, block_index)
    match_frame = pd.DataFrame(
        {
            "match_id": matches,
            "first_game": first,
            "ruleset": [games.rulesets[c] for c in rc[first_row]],
            "players": games.players[first_row].astype("int32"),
            "n_games_all": np.bincount(match_of, minlength=n_m).astype("int64"),
            "n_games": np.bincount(match_of, games.balance, n_m).astype("int64"),
            "n_blocks": np.bincount(match_of[match_pairs], minlength=n_m).astype("int64"),
        }
    )
    con.register("match_frame", match_frame)
    con.execute(
        "CREATE OR REPLACE TEMP TABLE first_seats AS "
        + seats_of_games(runs, "SELECT first_game AS game_id FROM match_frame", "s.strategy")
    )
    con.execute(
        """CREATE OR REPLACE TEMP TABLE match_info AS
           SELECT f.*, string_agg(s.strategy, '|' ORDER BY s.strategy) AS lineup
           FROM match_frame f JOIN first_seats s ON s.game_id = f.first_game
           GROUP BY ALL"""
    )
    con.unregister("match_frame")
    con.execute(
        """CREATE OR REPLACE TEMP TABLE match_strategy AS
           SELECT f.match_id, s.strategy, count(*) AS mult
           FROM match_info f JOIN first_seats s ON s.game_id = f.first_game GROUP BY ALL"""
    )
    con.execute("DROP TABLE first_seats")
    # (match, block) pairs, for the samples of whole blocks (make_sample)
    pairs = pd.DataFrame(
        {"match_id": matches[match_of[match_pairs]], "block": games.block[match_pairs]}
    )
    con.register("match_block_arrow", pairs)
    con.execute("CREATE OR REPLACE TEMP TABLE match_blocks AS SELECT * FROM match_block_arrow")
    con.unregister("match_block_arrow")
    out.tables["lineups"] = con.execute(
        """SELECT ruleset, players, lineup, count(*) AS matches, sum(n_games_all) AS n_games_all,
                  sum(n_games) AS n_games, sum(n_blocks) AS n_blocks
           FROM match_info GROUP BY ALL ORDER BY ruleset, lineup"""
    ).df()

    # Faults: few games; parse them with stats.fault_counts, count games per strategy here.
    err_games = con.execute(
        "SELECT game_id, end_reason, error FROM games WHERE end_reason = 'error'"
    ).df()
    err_seats = con.execute(
        seats_of_games(
            runs,
            "SELECT game_id FROM games WHERE end_reason = 'error'",
            "CAST(s.seat AS INTEGER) AS seat, s.strategy",
        )
    ).df()
    faults = stats.fault_counts(err_games, err_seats)[["strategy", "n_errors"]]
    n_games = con.execute(
        """SELECT ms.strategy, sum(mi.n_games_all) AS n_games
           FROM match_strategy ms JOIN match_info mi USING (match_id) GROUP BY ms.strategy"""
    ).df()
    tab = n_games.merge(faults, on="strategy", how="outer").fillna(0)
    tab["n_games"] = tab["n_games"].astype("int64")
    tab["n_errors"] = tab["n_errors"].astype("int64")
    n = tab["n_games"].to_numpy(dtype="float64")
    tab["error_rate"] = np.where(n > 0, tab["n_errors"] / np.maximum(n, 1), np.nan)
    tab["lo"], tab["hi"] = stats.wilson_interval(tab["n_errors"].to_numpy(dtype="float64"), n)
    out.tables["faults"] = tab.sort_values("strategy", ignore_index=True)
    kinds = con.execute(
        """SELECT coalesce(regexp_extract(error, '\\):\\s*([A-Za-z_][A-Za-z0-9_.]*)', 1), '')
                  AS kind, count(*) AS n_games
           FROM games WHERE end_reason = 'error' GROUP BY kind ORDER BY n_games DESC"""
    ).df()
    out.tables["fault_kinds"] = kinds
    out.facts.update(
        n_games=total,
        n_balance_games=int(games.balance.sum()),
        n_blocks=int(block_start.sum()),
    )
