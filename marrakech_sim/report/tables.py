"""The report's tables, computed from the per-game arrays and the run folders' views.

Scale. A run of 10 million games has 40 million seat rows and half a billion move rows;
neither goes into pandas. The games and seats are read once into numpy arrays
(``report.pergame``: one entry per game, seats side by side, sorted by block) and every
statistic that rests on them is reduced to *block totals* (one value per group and
block, by ``bincount`` over chunks of whole blocks), which is all the block-aware
estimators of ``marrakech_sim.stats`` use: the cluster-robust ratio variance
(:func:`_ratio_columns`, :func:`cluster_ratio_sql` in DuckDB, are
``stats._core.cluster_ratio_table`` over block totals), the Wilson interval at the
effective number of games (``stats.intervals.add_rate_interval``), the equal-share and
trend tests (``stats.equal_share_tests`` on the block-by-seat matrix), the clustered
difference of means behind ``stats.compare_variants``. The tests check each table
against the stats function on the same games. Blocks whose games differ in rule set,
match or line-up (not written by this program's runner) take slower general paths (SQL
over the ``bseats`` view, or per seat pair).

Two parts work on a sample of whole blocks instead (every block of a match is equally
likely; the sample keeps each match's share), read through DuckDB: the Plackett-Luce fit
(``stats.fit_ratings`` needs one row per seat) and everything read from the moves table
(score over turns, lead changes, comebacks). Their tables carry the number of games
they rest on like every other table, and the report says when that is a sample.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from marrakech_sim import stats
from marrakech_sim.report import MOVES_GAMES, RATING_GAMES
from marrakech_sim.report.load import RUN_SHIFT, RunInfo, digest, has_moves, rule_differences
from marrakech_sim.report.pergame import CHUNK, Games, PerGame, build_per_game, load_games
from marrakech_sim.stats.intervals import (
    DEFAULT_LEVEL,
    add_mean_interval,
    add_rate_interval,
    z_value,
)
from marrakech_sim.stats.seats import SEAT_TEST_COLUMNS, finish_seat_shares
from marrakech_sim.stats.variants import two_sided_p
from marrakech_sim.stats.winrates import HEAD_TO_HEAD_COLUMNS, WIN_RATE_COLUMNS

GAME_METRICS = (
    "seat_advantage",
    "turns",
    "margin",
    "bankrupt",
    "tie_broken",
    "winner_dirhams_share",
)
TURN_METRICS = ("lead_changes", "comeback")
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


@dataclass
class ReportTables:
    """Every table of the report (name -> DataFrame) and a few facts about the data."""

    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)
    rating_fit: stats.RatingFit | None = None


def _q(text: str) -> str:
    """A SQL string literal."""
    return "'" + str(text).replace("'", "''") + "'"


def cluster_ratio_sql(
    con: duckdb.DuckDBPyConnection, source: str, keys: Sequence[str], grouped: bool = False
) -> pd.DataFrame:
    """``stats._core.cluster_ratio_table`` computed in DuckDB.

    Args:
        source: SQL giving the ``keys``, ``block``, ``y`` and ``m`` columns (rows at any level
            at or below the block).
        grouped: the source has one row per (keys, block) already: skip that GROUP BY.

    Returns:
        keys, total (sum y), n (sum m), n_blocks, estimate (total / n), var (block-clustered
        CR1 variance of the ratio; NaN with one block).
    """
    k = ", ".join(keys)
    # sum_b (y_b - p m_b)^2 = Syy - 2 p Sym + p^2 Smm: one pass over the block totals
    # (counts and sums of shares: no catastrophic cancellation at these sizes).
    first = (
        f"SELECT {k}, block, y::DOUBLE AS y, m::DOUBLE AS m FROM ({source})"
        if grouped
        else f"SELECT {k}, block, SUM(y)::DOUBLE AS y, SUM(m)::DOUBLE AS m "
        f"FROM ({source}) GROUP BY {k}, block"
    )
    sql = f"""
        WITH b AS ({first}),
             g AS (SELECT {k}, SUM(y) AS total, SUM(m) AS n, COUNT(*) AS n_blocks,
                          SUM(y * y) AS syy, SUM(y * m) AS sym, SUM(m * m) AS smm
                   FROM b GROUP BY {k})
        SELECT {k}, total, n, n_blocks, total / n AS estimate,
               CASE WHEN n_blocks > 1 THEN n_blocks / (n_blocks - 1.0)
                 * greatest(syy - 2 * (total / n) * sym + (total / n) ^ 2 * smm, 0) / (n * n)
               END AS var
        FROM g ORDER BY {k}
    """
    out = con.execute(sql).df()
    out.columns = [*keys, "total", "n", "n_blocks", "estimate", "var"]
    out["n_blocks"] = out["n_blocks"].astype("int64")
    out["var"] = out["var"].astype("float64")
    return out


# ---------------------------------------------------------------- 1. the data


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
    keys, inverse = _small_unique(run * width + local)
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


# ---------------------------------------------------------------- 2. win rates


def _rate_table(tab: pd.DataFrame, level: float) -> pd.DataFrame:
    return add_rate_interval(tab, level)


def _ratio_columns(
    y: np.ndarray,
    m: np.ndarray,
    syy: np.ndarray,
    sym: np.ndarray,
    smm: np.ndarray,
    n_blocks: np.ndarray,
) -> dict[str, np.ndarray]:
    """total, n, n_blocks, estimate, var as :func:`cluster_ratio_sql` gives them."""
    with np.errstate(divide="ignore", invalid="ignore"):
        p = y / m
        nb = n_blocks.astype("float64")
        var = np.where(
            n_blocks > 1,
            nb / (nb - 1.0) * np.maximum(syy - 2 * p * sym + p**2 * smm, 0) / (m * m),
            np.nan,
        )
    return {"total": y, "n": m, "n_blocks": n_blocks.astype("int64"), "estimate": p, "var": var}


def _small_unique(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, return_inverse=True)`` for non-negative keys of a small range."""
    if not len(key) or int(key.max()) > 4 * len(key) + (1 << 16):
        return np.unique(key, return_inverse=True)
    seen = np.bincount(key) > 0
    keys = np.flatnonzero(seen)
    index = np.cumsum(seen) - 1
    return keys, index[key]


def _block_chunks(pg: PerGame) -> list[slice]:
    """Slices of about ``CHUNK`` games that start and end at block boundaries."""
    n, size = len(pg), CHUNK
    if not n:
        return []
    cuts = np.searchsorted(pg.block_index, pg.block_index[np.arange(size, n, size)])
    edges = np.unique(np.r_[0, cuts, n])
    return [slice(int(a), int(b)) for a, b in itertools.pairwise(edges)]


@dataclass(frozen=True, slots=True)
class LineupSlots:
    """Each block's line-up as numbered slots: the block's distinct strategies in code order.

    Every game of a block seats the same line-up (only the seating changes), so a seat's
    strategy is one of its block's few slots and per-(block, slot) totals are bincounts.

    Attributes:
        seats: the seats considered (the most players of any game).
        slot: (seats, games) the seat's slot, ``seats`` where the game has no such seat.
        code: (blocks, seats + 1) the strategy code in each slot of a block, -1 when
            unused (the last column: no seat).
        repeats: some game seats one strategy more than once.
    """

    seats: int
    slot: np.ndarray
    code: np.ndarray
    repeats: bool


def lineup_slots(pg: PerGame) -> LineupSlots | None:
    """The slot layout; None when a block spans two rule sets or matches, or line-ups."""
    block = pg.block
    if not len(block) or not pg.names:
        return None
    rc, mid = pg.ruleset, pg.match_id
    same = block[1:] == block[:-1]
    if np.any(same & ((rc[1:] != rc[:-1]) | (mid[1:] != mid[:-1]))):
        return None
    k = int(pg.players.max())
    slot = np.empty((k, len(pg)), "int8")
    code = np.full((pg.n_blocks, k + 1), -1, "int16")
    repeats = False
    for part in _block_chunks(pg):
        s = [pg.strategy[i, part] for i in range(k)]
        m = len(s[0])
        # A seat's slot: how many distinct strategies of its game have a smaller code.
        first = []  # the seat is the first with its strategy (and has one)
        for j in range(k):
            f = s[j] >= 0
            for h in range(j):
                equal = s[h] == s[j]
                f &= ~equal
                repeats = repeats or bool(np.any(equal & (s[j] >= 0)))
            first.append(f)
        local = pg.block_index[part] - pg.block_index[part.start]
        flat = np.full(m * (k + 1), -1, "int16")  # (game, slot) -> strategy
        for i in range(k):
            count = np.zeros(m, "int8")
            for j in range(k):
                count += first[j] & (s[j] < s[i])
            slot[i, part] = np.where(s[i] >= 0, count, k)
            flat[np.arange(m) * (k + 1) + slot[i, part]] = s[i]
        by_slot = flat.reshape(m, k + 1)
        starts = np.flatnonzero(np.r_[True, local[1:] != local[:-1]])
        mine = code[pg.block_index[part.start] : pg.block_index[part.start] + len(starts)]
        mine[:, :k] = by_slot[starts, :k]
        if not np.array_equal(by_slot[:, :k], mine[local, :k]):
            return None  # games of a block seat different line-ups
    return LineupSlots(k, slot, code, repeats)


class _KeySums:
    """Sums over (block, key) cells per key: the block ratio table's inputs."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.sums = {c: np.zeros(size) for c in ("y", "m", "yy", "ym", "mm", "nb", "games", "fair")}

    def add(
        self, key: np.ndarray, y: np.ndarray, m: np.ndarray, games: np.ndarray, fair: np.ndarray
    ) -> None:
        for name, v in (
            ("y", y),
            ("m", m),
            ("yy", y * y),
            ("ym", y * m),
            ("mm", m * m),
            ("games", games),
            ("fair", fair),
        ):
            self.sums[name] += np.bincount(key, v, self.size)
        self.sums["nb"] += np.bincount(key, minlength=self.size)

    def fold(self, size: int) -> _KeySums:
        """The sums per ``key % size``: cells are additive across keys."""
        out = _KeySums(size)
        for name, v in self.sums.items():
            out.sums[name] = v.reshape(-1, size).sum(axis=0)
        return out

    def table(self) -> pd.DataFrame:
        t = self.sums
        keys = np.flatnonzero(t["nb"] > 0)
        cols = _ratio_columns(*(t[c][keys] for c in ("y", "m", "yy", "ym", "mm", "nb")))
        cols["n_games"] = np.round(t["games"][keys])
        cols["fair_share"] = t["fair"][keys] / t["m"][keys]
        return pd.DataFrame({"key": keys, **cols})


def head_to_head_totals(pg: PerGame, slots: LineupSlots | None) -> pd.DataFrame:
    """Head-to-head block ratio table (as :func:`cluster_ratio_sql`) plus pair counts.

    Every ordered seat pair of a game scores 1 / 0.5 / 0 by rank, weighted 1 / (mult_A *
    mult_B) for strategies seated several times; block totals per (strategy, opponent).
    """
    names = pg.names
    n_s = len(names)
    kk = n_s * n_s
    acc = {c: np.zeros(kk) for c in ("y", "m", "count", "tie", "syy", "sym", "smm", "nb")}

    def add(
        key: np.ndarray,
        y: np.ndarray,
        m: np.ndarray,
        count: np.ndarray,
        tie: np.ndarray,
        **sums: np.ndarray,
    ) -> None:
        """Accumulate per-(block, pair) cells, or per-pair sums (syy, sym, smm, nb given)."""
        if not sums:
            sums = {"syy": y * y, "sym": y * m, "smm": m * m, "nb": count > 0}
        for name, v in (("y", y), ("m", m), ("count", count), ("tie", tie), *sums.items()):
            acc[name] += np.bincount(key, v, kk)

    if slots is not None and not slots.repeats:
        _head_to_head_by_slot(pg, slots, add)
    elif len(pg) and n_s:
        _head_to_head_by_pair(pg, add)
    present = np.flatnonzero(acc["count"] > 0)
    tab = pd.DataFrame(
        {
            "strategy": [names[k // n_s] for k in present],
            "opponent": [names[k % n_s] for k in present],
            **_ratio_columns(
                acc["y"][present],
                acc["m"][present],
                acc["syy"][present],
                acc["sym"][present],
                acc["smm"][present],
                acc["nb"][present],
            ),
            "n_pairs": acc["count"][present].astype("int64"),
            "tied_pairs": acc["tie"][present].astype("int64"),
        }
    )
    return tab.sort_values(["strategy", "opponent"], ignore_index=True)


def _head_to_head_by_slot(pg: PerGame, slots: LineupSlots, add: Any) -> None:
    """Block totals per slot pair (no strategy twice in a game: every pair weighs 1).

    A block's games all seat its line-up, so a slot pair meets in every game of the block
    (``count`` times). Slots are in code order: for slots a < b the pair (code[a], code[b])
    has the smaller strategy first, and its mirror scores ``count - y`` in each block, so
    the mirror's sums follow from the pair's (all of them exact: halves and integers).
    """
    k, n_s = slots.seats, len(pg.names)
    kk = n_s * n_s
    sums = {c: np.zeros(kk) for c in ("y", "yy", "yc", "c", "cc", "nb", "tie")}
    for part in _block_chunks(pg):
        b0 = int(pg.block_index[part.start])
        local = pg.block_index[part] - b0
        n_bl = int(local[-1]) + 1
        m = len(local)
        rank = np.zeros(m * (k + 1), "int8")  # (slot, game) -> rank; slot k: no seat
        games = np.arange(m)
        for i in range(k):
            rank[slots.slot[i, part].astype("int64") * m + games] = pg.rank[i, part]
        by_slot = rank.reshape(k + 1, m)
        code = slots.code[b0 : b0 + n_bl].astype("int64")
        n_games = np.bincount(local, minlength=n_bl).astype("float64")
        keys, ys, ties, counts = [], [], [], []
        for a in range(k):
            for b in range(a + 1, k):
                both = np.flatnonzero((code[:, a] >= 0) & (code[:, b] >= 0))
                if not len(both):
                    continue
                # lower rank is better (RULES.md section 7: rank 1 = winner)
                ahead = np.bincount(local, by_slot[a] < by_slot[b], n_bl)[both]
                tie = np.bincount(local, by_slot[a] == by_slot[b], n_bl)[both]
                keys.append(code[both, a] * n_s + code[both, b])
                ys.append(ahead + 0.5 * tie)
                ties.append(tie)
                counts.append(n_games[both])
        if not keys:
            continue
        key, y, tie, c = (np.concatenate(v) for v in (keys, ys, ties, counts))
        for name, v in (("y", y), ("yy", y * y), ("yc", y * c), ("c", c), ("cc", c * c)):
            sums[name] += np.bincount(key, v, kk)
        sums["tie"] += np.bincount(key, tie, kk)
        sums["nb"] += np.bincount(key, minlength=kk)
    pair = np.flatnonzero(sums["nb"] > 0)
    mirror = (pair % n_s) * n_s + pair // n_s
    t = {name: v[pair] for name, v in sums.items()}
    for key, y, yy, yc in (
        (pair, t["y"], t["yy"], t["yc"]),
        (mirror, t["c"] - t["y"], t["cc"] - 2 * t["yc"] + t["yy"], t["cc"] - t["yc"]),
    ):
        add(key, y=y, m=t["c"], count=t["c"], tie=t["tie"], syy=yy, sym=yc, smm=t["cc"], nb=t["nb"])


def _head_to_head_by_pair(pg: PerGame, add: Any) -> None:
    """Block totals per (block, strategy, opponent) cell, any layout, in chunks of blocks."""
    n_s = len(pg.names)
    kk = n_s * n_s
    kmax = int(pg.players.max())
    bidx = pg.block_index
    per = max(1, 4_000_000 // kk)  # blocks per chunk
    starts = np.searchsorted(bidx, np.arange(0, pg.n_blocks, per))
    stops = np.r_[starts[1:], len(bidx)]
    for a, b in zip(starts, stops, strict=True):
        local = bidx[a:b] - bidx[a]
        nbl = int(local[-1]) + 1
        s = [pg.strategy[i, a:b].astype("int64") for i in range(kmax)]
        r = [pg.rank[i, a:b].astype("float64") for i in range(kmax)]
        mult = [
            sum(((s[j] == s[i]) & (s[i] >= 0)).astype("float64") for j in range(kmax))
            for i in range(kmax)
        ]
        parts: dict[str, list[np.ndarray]] = {"key": [], "y": [], "m": [], "tie": []}
        for i in range(kmax):
            for j in range(kmax):
                if i == j:
                    continue
                ok = (s[i] >= 0) & (s[j] >= 0) & (s[i] != s[j])
                w = 1.0 / (mult[i][ok] * mult[j][ok])
                ri, rj = r[i][ok], r[j][ok]
                parts["key"].append(local[ok] * kk + s[i][ok] * n_s + s[j][ok])
                # Lower rank is better (RULES.md section 7: rank 1 = winner).
                parts["y"].append(np.where(ri < rj, 1.0, np.where(ri == rj, 0.5, 0.0)) * w)
                parts["m"].append(w)
                parts["tie"].append((ri == rj).astype("float64"))
        key = np.concatenate(parts["key"])
        size = nbl * kk
        cell = {c: np.bincount(key, np.concatenate(parts[c]), size) for c in ("y", "m", "tie")}
        cell["count"] = np.bincount(key, minlength=size).astype("float64")
        used = np.flatnonzero(cell["count"] > 0)
        add(used % kk, *(cell[c][used] for c in ("y", "m", "count", "tie")))


def _win_rate_totals(
    con: duckdb.DuckDBPyConnection, pg: PerGame, slots: LineupSlots | None
) -> dict[str, pd.DataFrame] | None:
    """``win_rates`` and ``lineup_win_rates`` block ratio tables from the per-game arrays.

    Per (block, slot) totals are bincounts over the seats, block chunk by block chunk, then
    summed per strategy (and per rule set, line-up and strategy). Returns None without a
    slot layout (some block spans two rule sets, matches or line-ups: the SQL path).
    """
    if slots is None:
        return None
    names, rulesets = pg.names, pg.rulesets
    k, n_s = slots.seats, len(names)
    info = con.execute("SELECT match_id, lineup FROM match_info").fetchnumpy()
    order = np.argsort(info["match_id"])
    info_ids = np.asarray(info["match_id"])[order].astype("int64")
    lineup_codes, lineup_idx = np.unique(
        np.asarray(info["lineup"], dtype=object)[order].astype(str), return_inverse=True
    )
    n_l = len(lineup_codes)
    if len(rulesets) * n_l * n_s > 1 << 24:
        return None  # too many (rule set, line-up, strategy) cells for dense sums
    per_lineup = _KeySums(len(rulesets) * n_l * n_s)
    inv_players = 1.0 / pg.players
    for part in _block_chunks(pg):
        b0 = int(pg.block_index[part.start])
        local = pg.block_index[part] - b0
        n_bl = int(local[-1]) + 1
        size = n_bl * (k + 1)
        y = np.zeros(size)
        wv, inv = pg.win_value[part], inv_players[part]
        s = [pg.strategy[i, part] for i in range(k)]
        if slots.repeats:
            m, games, fair = np.zeros(size), np.zeros(size), np.zeros(size)
        for i in range(k):
            cell = local * (k + 1) + slots.slot[i, part]
            y += np.bincount(cell, wv * pg.win[i, part], size)
            if slots.repeats:  # games: each of a strategy's mult seats counts 1 / mult
                mult = sum((s[j] == s[i]).astype("float64") for j in range(k))
                m += np.bincount(cell, minlength=size)
                games += np.bincount(cell, 1.0 / mult, size)
                fair += np.bincount(cell, inv, size)
        if not slots.repeats:  # one seat per slot in every game of the block
            m = np.repeat(np.bincount(local, minlength=n_bl).astype("float64"), k + 1)
            fair = np.repeat(np.bincount(local, inv, n_bl), k + 1)
            games = m
        code = slots.code[b0 : b0 + n_bl].astype("int64")  # (blocks, slots)
        first_game = part.start + np.flatnonzero(np.r_[True, local[1:] != local[:-1]])
        lineup = lineup_idx[np.searchsorted(info_ids, pg.match_id[first_game])]
        group = pg.ruleset[first_game].astype("int64") * n_l + lineup
        used = np.flatnonzero(code.ravel() >= 0)
        key = (group[:, None] * n_s + code).ravel()[used]
        per_lineup.add(key, y[used], m[used], games[used], fair[used])
    win_rates = per_lineup.fold(n_s).table()
    win_rates.insert(0, "strategy", [names[x] for x in win_rates.pop("key")])
    lineups = per_lineup.table()
    key = lineups.pop("key").to_numpy()
    lineups.insert(0, "strategy", [names[x % n_s] for x in key])
    lineups.insert(0, "lineup", [str(lineup_codes[(x // n_s) % n_l]) for x in key])
    lineups.insert(0, "ruleset", [rulesets[x // n_s // n_l] for x in key])
    return {"win_rates": win_rates, "lineup_win_rates": lineups}


def _finish_win_rates(out: ReportTables, name: str, keys: list[str], tab: pd.DataFrame) -> None:
    tab = tab.rename(columns={"total": "wins", "n": "n_seat_games", "estimate": "rate"})
    tab["n_seat_games"] = tab["n_seat_games"].astype("int64")
    tab["n_games"] = tab["n_games"].astype("int64")
    out.tables[name] = tab[[*keys, *WIN_RATE_COLUMNS]].reset_index(drop=True)


def win_rate_tables(
    con: duckdb.DuckDBPyConnection, out: ReportTables, level: float, pg: PerGame
) -> None:
    """Win rate per strategy, per (ruleset, line-up, strategy), and head to head."""
    slots = lineup_slots(pg)
    fast = _win_rate_totals(con, pg, slots)
    for name, by in (("win_rates", []), ("lineup_win_rates", ["ruleset", "lineup"])):
        keys = [*by, "strategy"]
        if fast is not None:
            tab = _rate_table(fast[name], level).sort_values(keys, ignore_index=True)
            _finish_win_rates(out, name, keys, tab)
            continue
        # mult: seats the strategy has in its games, so sum(1 / mult) counts games.
        src = (
            "SELECT b.*, mi.lineup, ms.mult FROM bseats b JOIN match_info mi USING (match_id) "
            "JOIN match_strategy ms USING (match_id, strategy)"
        )
        tab = _rate_table(
            cluster_ratio_sql(
                con, f"SELECT {', '.join(keys)}, block, win_share AS y, 1 AS m FROM ({src})", keys
            ),
            level,
        )
        extra = con.execute(
            f"""SELECT {", ".join(keys)}, round(sum(1.0 / mult)) AS n_games,
                       avg(1.0 / players) AS fair_share
                FROM ({src}) GROUP BY ALL"""
        ).df()
        tab = tab.merge(extra, on=keys, how="left", validate="one_to_one")
        _finish_win_rates(out, name, keys, tab)

    # Head to head: each (A seat, B seat) pair of a game scores 1 / 0.5 / 0 by rank; a game's
    # score is the mean over its pairs, i.e. each pair weighs 1 / (mult_A * mult_B).
    keys = ["strategy", "opponent"]
    tab = _rate_table(head_to_head_totals(pg, slots), level)
    tab = tab.rename(columns={"total": "ahead", "n": "n_games", "estimate": "rate"})
    tab["n_games"] = np.round(tab["n_games"]).astype("int64")
    for c in ("n_pairs", "tied_pairs"):
        tab[c] = tab[c].astype("int64")
    out.tables["head_to_head"] = tab[[*keys, *HEAD_TO_HEAD_COLUMNS]].reset_index(drop=True)


# ---------------------------------------------------------------- 3. seat advantage


def _ratio_frame(keys: dict[str, list[Any]], y: np.ndarray, m: np.ndarray) -> pd.DataFrame:
    """:func:`cluster_ratio_sql`'s table for one key from its (blocks,) totals y and m."""
    cols = _ratio_columns(
        np.array([y.sum()]),
        np.array([m.sum()]),
        np.array([(y * y).sum()]),
        np.array([(y * m).sum()]),
        np.array([(m * m).sum()]),
        np.array([len(y)]),
    )
    return pd.DataFrame({**keys, **cols})


def _seat_block_totals(pg: PerGame) -> dict[str, Any] | None:
    """Per (players, rule set): block-by-seat win totals, games per block, tie counts.

    From the per-game arrays; None when a block spans two (players, rule set) groups.
    """
    rulesets = pg.rulesets
    if not rulesets or not len(pg):
        return None
    block = pg.block
    # (memory: 10 million games make every int64 temporary here 80 MB; few are kept)
    group = pg.ruleset.astype("int64") * 256 + pg.players
    if np.any((block[1:] == block[:-1]) & (group[1:] != group[:-1])):
        return None
    bidx = pg.block_index
    nb = pg.n_blocks
    kmax = int(pg.players.max())
    wv = pg.win_value
    nw = pg.n_winners  # int8
    broken = pg.tie_broken
    n_b = np.bincount(bidx, minlength=nb).astype("float64")
    block_group = group[np.searchsorted(bidx, np.arange(nb))]
    shares: list[pd.DataFrame] = []
    blocks: dict[tuple[int, str], tuple[np.ndarray, np.ndarray]] = {}
    ties: dict[str, list[pd.DataFrame]] = {}
    shared_b = np.bincount(bidx, (nw > 1).astype("float64"), nb)
    broken_b = np.bincount(bidx, broken, nb)
    y_b = np.empty((nb, kmax))
    # wins per (group, seat) by kind: 0 = outright, 1 = shared, 2 = decided by the tie-break
    groups, group_of = _small_unique(group)
    del group
    kind = np.minimum(nw, 2).astype("int8") - np.int8(1)  # 0: one winner, 1: several, -1: none
    kinds = np.zeros((len(groups), kmax, 3), "int64")
    broken_win = broken > 0
    for part in _block_chunks(pg):
        local = bidx[part] - bidx[part.start]
        n_bl = int(local[-1]) + 1
        for i in range(kmax):
            won = pg.win[i, part]
            y_b[bidx[part.start] : bidx[part.start] + n_bl, i] = np.bincount(
                local, wv[part] * won, n_bl
            )
            counted = won & (kind[part] >= 0)
            cell = (group_of[part] * 2 + kind[part])[counted]
            kinds[:, i, :2] += np.bincount(cell, minlength=2 * len(groups)).reshape(-1, 2)
            kinds[:, i, 2] += np.bincount(
                group_of[part][won & broken_win[part]], minlength=len(groups)
            )
    # groups in (players, rule set) order, the order of the SQL path's tables
    for g in sorted(np.unique(block_group).tolist(), key=lambda g: (g % 256, g // 256)):
        rs, k = rulesets[g // 256], int(g % 256)
        in_g = block_group == g
        nb_g = n_b[in_g]
        won_by = kinds[np.searchsorted(groups, g)]
        blocks[(k, rs)] = (y_b[in_g, :k], nb_g)
        for seat in range(k):
            row = _ratio_frame(
                {"players": [k], "ruleset": [rs], "seat": [seat]}, y_b[in_g, seat], nb_g
            )
            row["outright_wins"] = int(won_by[seat, 0])
            row["shared_wins"] = int(won_by[seat, 1])
            row["tie_broken_wins"] = int(won_by[seat, 2])
            shares.append(row)
        for col, y in (("shared", shared_b), ("broken", broken_b)):
            ties.setdefault(col, []).append(
                _ratio_frame({"players": [k], "ruleset": [rs]}, y[in_g], nb_g)
            )
    return {
        "shares": pd.concat(shares, ignore_index=True),
        "blocks": blocks,
        "ties": {c: pd.concat(t, ignore_index=True) for c, t in ties.items()},
    }


def seat_tables(
    con: duckdb.DuckDBPyConnection, out: ReportTables, level: float, pg: PerGame
) -> None:
    """Win share per seat, equal-share / trend tests, ties; per (players, ruleset)."""
    keys = ["players", "ruleset", "seat"]
    fast = _seat_block_totals(pg)
    if fast is not None:
        tab = add_rate_interval(fast["shares"], level)
    else:
        tab = add_rate_interval(
            cluster_ratio_sql(
                con,
                "SELECT players, ruleset, seat, block, win_share AS y, 1 AS m FROM bseats",
                keys,
            ),
            level,
        )
        counts = con.execute(
            """SELECT players, ruleset, seat,
                  count(*) FILTER (win_share > 0 AND n_winners = 1) AS outright_wins,
                  count(*) FILTER (win_share > 0 AND n_winners > 1) AS shared_wins,
                  count(*) FILTER (win_share > 0 AND tie_broken) AS tie_broken_wins
           FROM bseats GROUP BY ALL"""
        ).df()
        tab = tab.merge(counts, on=keys, how="left", validate="one_to_one")
    tab = tab.rename(columns={"total": "wins", "n": "n_games", "estimate": "share"})
    out.tables["seat_shares"] = finish_seat_shares(tab, keys)

    # Tests from the block-by-seat matrix of summed win shares, one group at a time
    # (numbers only: a few million blocks stay small).
    pairs, _ = _small_unique(pg.players.astype("int64") * 65536 + pg.ruleset)
    groups = sorted((int(p // 65536), pg.rulesets[p % 65536]) for p in pairs)
    records = []
    for players, ruleset in groups:
        if fast is not None and (int(players), str(ruleset)) in fast["blocks"]:
            totals, n_b = fast["blocks"][(int(players), str(ruleset))]
            res = stats.equal_share_tests(totals, n_b, level)
            records.append({"players": int(players), "ruleset": str(ruleset), **res})
            continue
        where = f"players = {int(players)} AND ruleset = {_q(ruleset)}"
        n_per_block = con.execute(
            f"""SELECT block, count(*)::DOUBLE AS n FROM games
                WHERE end_reason <> 'error' AND {where} GROUP BY block ORDER BY block"""
        ).fetchnumpy()
        cells = con.execute(
            f"SELECT block, seat, sum(win_share) AS y FROM bseats WHERE {where} GROUP BY ALL"
        ).fetchnumpy()
        totals = np.zeros((len(n_per_block["block"]), int(players)))
        row = np.searchsorted(n_per_block["block"], cells["block"])
        totals[row, cells["seat"].astype("int64")] = cells["y"]
        res = stats.equal_share_tests(totals, np.asarray(n_per_block["n"], dtype="float64"), level)
        records.append({"players": int(players), "ruleset": str(ruleset), **res})
    cols = ["players", "ruleset", *SEAT_TEST_COLUMNS]
    out.tables["seat_tests"] = pd.DataFrame.from_records(records, columns=cols)

    # Ties: shared wins and tie-break-decided games, per game.
    src = """SELECT players, ruleset, block, (len(winners) > 1)::DOUBLE AS shared,
                    tie_broken::DOUBLE AS broken FROM games WHERE end_reason <> 'error'"""
    ties = None
    for col, name in (("shared", "shared"), ("broken", "tie_broken")):
        t = add_rate_interval(
            fast["ties"][col]
            if fast is not None
            else cluster_ratio_sql(
                con,
                f"SELECT players, ruleset, block, {col} AS y, 1 AS m FROM ({src})",
                ["players", "ruleset"],
            ),
            level,
        )
        t = t.rename(
            columns={
                "total": "shared_wins" if name == "shared" else name,
                "estimate": f"{name}_rate",
                "lo": f"{name}_lo",
                "hi": f"{name}_hi",
                "n": "n_games",
            }
        )
        keep = [
            c
            for c in t.columns
            if c.startswith(name) or c in ("players", "ruleset", "n_games", "n_blocks")
        ]
        ties = (
            t[keep]
            if ties is None
            else ties.merge(
                t[[c for c in keep if c not in ("n_games", "n_blocks")]], on=["players", "ruleset"]
            )
        )
    assert ties is not None
    for c in ("n_games", "shared_wins", "tie_broken"):
        ties[c] = ties[c].astype("int64")
    out.tables["ties"] = ties[
        [
            "players",
            "ruleset",
            "n_games",
            "n_blocks",
            "shared_wins",
            "shared_rate",
            "shared_lo",
            "shared_hi",
            "tie_broken",
            "tie_broken_rate",
            "tie_broken_lo",
            "tie_broken_hi",
        ]
    ]


# ---------------------------------------------------------------- samples of whole blocks


def make_sample(con: duckdb.DuckDBPyConnection, name: str, max_games: int, total_games: int) -> int:
    """Temp table ``name`` of the games of whole blocks, about ``max_games`` games.

    Every match keeps the same fraction of its blocks (its first ones by block id), so the
    sample's mix of rule sets and line-ups is the run's (``total_games`` is the number of
    games, ``match_blocks`` the (match, block) pairs data_tables made). The table has the
    games' columns :func:`_sample_frames` reads (game_id, block, match_id, ruleset, players,
    turns, end_reason, tie_broken, error). Returns the games sampled.
    """
    frac = 1.0 if total_games <= max_games else max_games / total_games
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE {name} AS
            WITH b AS (SELECT match_id, block FROM match_blocks),
                 r AS (SELECT block, row_number() OVER (PARTITION BY match_id ORDER BY block) AS i,
                              count(*) OVER (PARTITION BY match_id) AS nb FROM b),
                 keep AS (SELECT block FROM r WHERE i <= ceil({frac} * nb))
            SELECT g.game_id, g.block, g.match_id, g.ruleset, g.players, g.turns, g.end_reason,
                   g.tie_broken, g.error
            FROM games g SEMI JOIN keep USING (block)"""
    )
    got = con.execute(f"SELECT count(*) FROM {name}").fetchone()
    assert got is not None
    return int(got[0])


def _sample_frames(
    con: duckdb.DuckDBPyConnection, sample: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    games = con.execute(
        f"""SELECT game_id, match_id, ruleset, players, turns, end_reason, tie_broken, error, block
            FROM {sample} ORDER BY game_id"""
    ).df()
    seats = con.execute(
        f"""SELECT game_id, seat, strategy, dirhams, score, rank, win_share, eliminated_turn
            FROM seats SEMI JOIN {sample} USING (game_id) ORDER BY game_id, seat"""
    ).df()
    return games, seats


# ---------------------------------------------------------------- 4. ratings


def rating_tables(
    con: duckdb.DuckDBPyConnection, out: ReportTables, max_games: int, level: float
) -> None:
    """Plackett-Luce ratings with a seat term on a whole-block sample (all games if small)."""
    n = make_sample(con, "rating_sample", max_games, out.facts["n_games"])
    out.facts["rating_games"] = n
    out.facts["rating_sampled"] = n < out.facts["n_games"]
    games, seats = _sample_frames(con, "rating_sample")
    if (games["end_reason"] != "error").sum() == 0 or seats["strategy"].nunique() < 2:
        out.facts["rating_note"] = "fewer than two strategies or no games: nothing to rate"
        return
    fit = stats.fit_ratings(games, seats, level=level)
    if not fit.converged:
        fit = stats.fit_ratings(games, seats, level=level, l2=1e-3)
        out.facts["rating_note"] = (
            "the plain fit did not converge; refitted with a small ridge (l2 = 0.001)"
        )
    out.rating_fit = fit
    out.tables["ratings"] = fit.ratings
    out.tables["seat_effects"] = fit.seat_effects


# ---------------------------------------------------------------- 5./6. variants, distributions


def turn_scores_sql(sample: str) -> str:
    """Per (game, turn, seat) score = dirhams + visible squares after the turn (NULL once out)."""
    return f"""
        WITH m AS (SELECT game_id, turn,
                          unnest(range(len(dirhams_after))) AS seat,
                          unnest(dirhams_after) AS d, unnest(visible_after) AS v
                   FROM moves SEMI JOIN {sample} USING (game_id))
        SELECT m.game_id, m.turn, m.seat::INTEGER AS seat,
               CASE WHEN s.eliminated_turn IS NOT NULL AND m.turn >= s.eliminated_turn
                    THEN NULL ELSE (m.d + m.v)::DOUBLE END AS score
        FROM m JOIN seats s ON s.game_id = m.game_id AND s.seat = m.seat
        ORDER BY m.game_id, m.turn, m.seat
    """


def score_over_turns(
    con: duckdb.DuckDBPyConnection, level: float, sample: str = "moves_sample"
) -> pd.DataFrame:
    """``stats.score_over_turns`` from the ``turn_scores`` temp table, aggregated in DuckDB.

    ``sample`` is the table :func:`make_sample` made for the turn scores' games.
    """
    src = f"""SELECT g.ruleset, g.players, t.seat, t.turn, g.block, t.score
             FROM turn_scores t JOIN {sample} g USING (game_id)
             WHERE g.end_reason <> 'error' AND t.score IS NOT NULL"""
    keys = ["ruleset", "players", "seat", "turn"]
    tab = add_mean_interval(
        cluster_ratio_sql(
            con, f"SELECT {', '.join(keys)}, block, score AS y, 1 AS m FROM ({src})", keys
        ),
        level,
    )
    spread = con.execute(
        f"""SELECT {", ".join(keys)}, stddev_samp(score) AS sd,
                   quantile_cont(score, 0.025) AS "q2.5", quantile_cont(score, 0.975) AS "q97.5"
            FROM ({src}) GROUP BY ALL"""
    ).df()
    tab = tab.merge(spread, on=keys, how="left", validate="one_to_one")
    tab = tab.rename(columns={"n": "n_games", "estimate": "mean"})
    tab["n_games"] = tab["n_games"].astype("int64")
    return tab[[*keys, "n_games", "n_blocks", "mean", "sd", "lo", "hi", "q2.5", "q97.5"]]


@dataclass
class MetricTotals:
    """Per (rule set, metric): the blocks where the metric has a value, with sums and counts.

    These block totals are all the variant statistics use (``stats.variant_summary`` and
    ``stats.compare_variants`` reduce per-game metrics to the same totals).
    """

    players: dict[str, int] = field(default_factory=dict)
    # (ruleset, metric) -> (block ids ascending, per-block sum, per-block count)
    cells: dict[tuple[str, str], tuple[np.ndarray, np.ndarray, np.ndarray]] = field(
        default_factory=dict
    )


def game_metric_totals(pg: PerGame) -> MetricTotals:
    """Block totals of every metric of ``GAME_METRICS`` per rule set, from the per-game arrays."""
    out = MetricTotals()
    if not len(pg):
        return out
    n_rs = len(pg.rulesets)
    key = pg.block_index * n_rs + pg.ruleset  # one group per (block, rule set)
    step = np.diff(key)
    if np.all(step >= 0):
        del key  # (memory: each int64 array is 80 MB at 10 million games)
        group = np.zeros(len(step) + 1, "int64")
        np.cumsum(step != 0, out=group[1:])
        first = np.flatnonzero(np.r_[True, step != 0])
    else:  # a block with games of two rule sets
        _, first, group = np.unique(key, return_index=True, return_inverse=True)
        del key
    del step
    n_groups = len(first)
    group_rc = pg.ruleset[first].astype("int64")
    group_block, group_players = pg.block[first], pg.players[first]
    for r, name in enumerate(pg.rulesets):
        in_r = np.flatnonzero(group_rc == r)
        if len(in_r):
            out.players[name] = int(group_players[in_r[0]])
    size = np.bincount(group, minlength=n_groups).astype("float64")
    # the blocks and counts of a metric defined in every game are the same for all such
    # metrics: one copy per rule set (at 4-game blocks they are 16 bytes a game each)
    every = {}
    for r in range(len(pg.rulesets)):
        sel = np.flatnonzero((group_rc == r) & (size > 0))
        every[r] = (sel, group_block[sel], size[sel])
    for metric in GAME_METRICS:
        x = getattr(pg, metric)
        ok = ~np.isnan(x)
        if ok.all():
            total = np.bincount(group, x, n_groups)
            for r, name in enumerate(pg.rulesets):
                sel, blocks, counts = every[r]
                if len(sel):
                    out.cells[(name, metric)] = (blocks, total[sel], counts)
            continue
        total = np.bincount(group, np.where(ok, x, 0.0), n_groups)
        count = np.bincount(group[ok], minlength=n_groups).astype("float64")
        for r, name in enumerate(pg.rulesets):
            sel = np.flatnonzero((group_rc == r) & (count > 0))
            if len(sel):
                out.cells[(name, metric)] = (group_block[sel], total[sel], count[sel])
    return out


def _histogram(pg: PerGame, metric: str) -> pd.DataFrame:
    """Games per (rule set, players, value) of ``metric``, ordered by rule set and value."""
    x = getattr(pg, metric)
    ok = ~np.isnan(x)
    value = x[ok]
    group = pg.ruleset[ok].astype("int64")  # (in place below: 80 MB per 10 M games each)
    group *= 256
    group += pg.players[ok]
    if len(value) and np.all(value == np.round(value)) and np.ptp(value) < 1 << 20:
        low = int(value.min())
        span = int(value.max()) - low + 1
        cell = group  # in place: this path needs group no more
        cell *= span
        np.add(cell, value, out=cell, casting="unsafe")  # whole values: exact
        cell -= low
        counts = np.bincount(cell)
        del cell, group
        cell = np.flatnonzero(counts)
        g, v, n = cell // span, (cell % span + low).astype("float64"), counts[cell]
    else:  # values that are not small integers: sort them
        order = np.lexsort((value, group))
        value, group = value[order], group[order]
        start = np.flatnonzero(np.r_[True, (np.diff(group) != 0) | (np.diff(value) != 0)])
        g, v = group[start], value[start]
        n = np.diff(np.r_[start, len(value)])
    order = np.lexsort((g % 256, v, g // 256))
    g, v, n = g[order], v[order], n[order]
    return pd.DataFrame(
        {
            "ruleset": [pg.rulesets[i] for i in g // 256],
            "players": (g % 256).astype("int8"),
            "metric": metric,
            "value": v,
            "n_games": n.astype("int64"),
        }
    )


def _summaries(pg: PerGame, metric: str) -> pd.DataFrame:
    """``stats.summarize`` of ``metric`` per rule set: counts, mean, sd, quantiles."""
    x = getattr(pg, metric)
    rows = []
    for r, name in enumerate(pg.rulesets):
        sel = np.flatnonzero(pg.ruleset == r)
        if not len(sel):
            continue  # a rule set with error games only
        v = x[sel]
        ok = ~np.isnan(v)
        blocks = pg.block_index[sel][ok]
        v = v[ok]
        n = len(v)
        row: dict[str, Any] = {
            "ruleset": name,
            "metric": metric,
            "n": n,
            "n_missing": len(sel) - n,
            "n_blocks": int(np.count_nonzero(np.diff(blocks)) + 1) if n else 0,
            "mean": float(v.mean()) if n else np.nan,
            "sd": float(v.std(ddof=1)) if n > 1 else np.nan,
            "min": float(v.min()) if n else np.nan,
        }
        qs = np.quantile(v, QUANTILES) if n else np.full(len(QUANTILES), np.nan)
        row.update({f"q{q * 100:g}": float(val) for q, val in zip(QUANTILES, qs, strict=True)})
        row["max"] = float(v.max()) if n else np.nan
        rows.append(row)
    return pd.DataFrame.from_records(rows)


def variant_tables(
    con: duckdb.DuckDBPyConnection,
    out: ReportTables,
    moves_games: int,
    level: float,
    pg: PerGame,
) -> None:
    """Per-game metrics -> per-rule-set means, comparisons with Holm, distributions."""
    totals = game_metric_totals(pg)

    # Distributions of margins and lengths (exact histograms; summaries like stats.summarize).
    out.tables["histograms"] = pd.concat(
        [_histogram(pg, m) for m in ("margin", "turns")], ignore_index=True
    )
    out.tables["distributions"] = pd.concat(
        [_summaries(pg, m) for m in ("margin", "turns")], ignore_index=True
    )

    # Per-turn metrics from a sample's moves.
    out.facts["moves_games"] = 0
    if has_moves(con):
        n = make_sample(con, "moves_sample", moves_games, out.facts["n_games"])
        games, seats = _sample_frames(con, "moves_sample")
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE turn_scores AS {turn_scores_sql('moves_sample')}"
        )
        turn_scores = con.execute("SELECT * FROM turn_scores").df()
        if len(turn_scores):
            out.facts["moves_games"] = n
            out.facts["moves_sampled"] = n < out.facts["n_games"]
            out.tables["score_over_turns"] = score_over_turns(con, level)
            lead = stats.lead_metrics(turn_scores, games, seats).reset_index()
            info = games[["game_id", "block", "ruleset", "players"]]
            lead = lead.merge(info, on="game_id", how="inner")
            long = lead.melt(
                id_vars=["game_id", "block", "ruleset", "players"],
                value_vars=list(TURN_METRICS),
                var_name="metric",
                value_name="value",
            )
            long = long.loc[long["value"].notna()]
            sums = long.groupby(["ruleset", "metric", "block"], as_index=False).agg(
                players=("players", "first"), total=("value", "sum"), n=("value", "size")
            )
            for (ruleset, metric), part in sums.groupby(["ruleset", "metric"], sort=True):
                part = part.sort_values("block")
                totals.players.setdefault(str(ruleset), int(part["players"].iloc[0]))
                totals.cells[(str(ruleset), str(metric))] = (
                    part["block"].to_numpy(dtype="int64"),
                    part["total"].to_numpy(dtype="float64"),
                    part["n"].to_numpy(dtype="float64"),
                )

    rows = [
        _ratio_frame({"ruleset": [rs], "metric": [metric]}, total, n)
        for (rs, metric), (_, total, n) in sorted(totals.cells.items())
    ]
    columns = ["ruleset", "metric", "total", "n", "n_blocks", "estimate", "var"]
    summary = add_mean_interval(
        pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=columns), level
    )
    players = pd.DataFrame(
        {"ruleset": list(totals.players), "players": list(totals.players.values())}
    )
    summary = summary.merge(players, on="ruleset").rename(
        columns={"n": "n_games", "estimate": "mean"}
    )
    summary["n_games"] = summary["n_games"].astype("int64")
    order = {m: i for i, m in enumerate(stats.VARIANT_METRICS)}
    summary = summary.sort_values(
        ["ruleset", "metric"], key=lambda c: c.map(order) if c.name == "metric" else c
    )
    out.tables["variant_summary"] = summary[
        ["ruleset", "metric", "players", "n_games", "n_blocks", "mean", "se", "lo", "hi"]
    ].reset_index(drop=True)
    out.tables["variant_comparison"] = compare_rulesets(totals, out, level)


def baselines(rulesets: pd.DataFrame, options: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Per rule set, its baseline: the rule set with the same player count closest to standard."""
    out = {}
    for _, group in rulesets.groupby("players", sort=True):
        names = sorted(group["ruleset"])

        def distance(name: str) -> tuple[int, str]:
            diffs = rule_differences(options.get(name, {}))
            diffs.pop("players", None)
            return (len(diffs), name)

        base = min(names, key=distance)
        out.update({n: base for n in names})
    return out


def _paired_sum_of_squares(
    base: tuple[np.ndarray, np.ndarray, np.ndarray],
    other: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> tuple[int, float]:
    """Blocks and sum over blocks of the squared influence on mean(other) - mean(base).

    A block's influence is (y_b - m_b * Y / M) / M, with the sign of its rule set; a block
    that has games of both rule sets (shared dice) adds its two influences before squaring.
    """
    psi = []
    for (block, total, n), sign in ((base, -1.0), (other, 1.0)):
        psi.append((block, sign * (total - n * total.sum() / n.sum()) / n.sum()))
    (b0, p0), (b1, p1) = psi
    at = np.minimum(np.searchsorted(b0, b1), max(len(b0) - 1, 0))
    both = (b0[at] == b1) if len(b0) else np.zeros(len(b1), bool)
    paired = p0.copy()
    paired[at[both]] += p1[both]
    alone = p1[~both]
    return len(b0) + len(alone), float(np.sum(paired * paired) + np.sum(alone * alone))


def compare_rulesets(totals: MetricTotals, out: ReportTables, level: float) -> pd.DataFrame:
    """``stats.compare_variants`` from block totals: each rule set against its baseline."""
    base_of = baselines(out.tables["rulesets"], out.facts.get("ruleset_options", {}))
    out.facts["baselines"] = base_of
    z = z_value(level)
    records = []
    for other, base in sorted(base_of.items()):
        if other == base:
            continue
        for metric in stats.VARIANT_METRICS:
            if (base, metric) not in totals.cells or (other, metric) not in totals.cells:
                continue
            b, a = totals.cells[(base, metric)], totals.cells[(other, metric)]
            # Each block's influence on the difference (blocks shared by the two rule sets pair).
            blocks, ss = _paired_sum_of_squares(b, a)
            n_b, n_a = float(b[2].sum()), float(a[2].sum())
            mean_b, mean_a = float(b[1].sum()) / n_b, float(a[1].sum()) / n_a
            se = math.sqrt(blocks / (blocks - 1) * ss) if blocks > 1 else float("nan")
            diff = mean_a - mean_b
            p = two_sided_p(diff, se)
            records.append(
                {
                    "metric": metric,
                    "baseline": base,
                    "ruleset": other,
                    "baseline_mean": mean_b,
                    "mean": mean_a,
                    "diff": diff,
                    "se": se,
                    "lo": diff - z * se,
                    "hi": diff + z * se,
                    "p_value": p,
                    "n_games_baseline": int(n_b),
                    "n_games": int(n_a),
                    "n_blocks_baseline": len(b[0]),
                    "n_blocks": len(a[0]),
                }
            )
    return stats.variants.comparison_table(records, level)


# ---------------------------------------------------------------- 7. power


def power_table(out: ReportTables) -> pd.DataFrame:
    """Each headline claim with its interval, flagged by ``stats.flag_underpowered``."""
    claims = []
    for r in out.tables["seat_shares"].itertuples():
        if r.seat == 0:
            claims.append(
                {
                    "section": "seat advantage",
                    "claim": f"seat 0 share minus 1/{r.players} ({r.ruleset}, {r.players} players)",
                    "unit": "pp",
                    "estimate": r.effect_pp,
                    "lo": r.effect_lo_pp,
                    "hi": r.effect_hi_pp,
                    "n_games": r.n_games,
                }
            )
    for r in out.tables["seat_tests"].itertuples():
        claims.append(
            {
                "section": "seat advantage",
                "claim": f"trend of win share per seat ({r.ruleset}, {r.players} players)",
                "unit": "pp per seat",
                "estimate": r.trend_pp,
                "lo": r.trend_lo_pp,
                "hi": r.trend_hi_pp,
                "n_games": r.n_games,
            }
        )
    for r in out.tables["win_rates"].itertuples():
        claims.append(
            {
                "section": "win rates",
                "claim": f"{r.strategy}: win rate minus fair share",
                "unit": "pp",
                "estimate": 100 * (r.rate - r.fair_share),
                "lo": 100 * (r.lo - r.fair_share),
                "hi": 100 * (r.hi - r.fair_share),
                "n_games": r.n_games,
            }
        )
    for r in out.tables.get("variant_comparison", pd.DataFrame()).itertuples():
        claims.append(
            {
                "section": "variants",
                "claim": f"{r.metric}: {r.ruleset} minus {r.baseline}",
                "unit": "",
                "estimate": r.diff,
                "lo": r.lo,
                "hi": r.hi,
                "n_games": r.n_games + r.n_games_baseline,
            }
        )
    table = pd.DataFrame.from_records(
        claims, columns=["section", "claim", "unit", "estimate", "lo", "hi", "n_games"]
    )
    if table.empty:
        return table
    return stats.flag_underpowered(table, "estimate", "lo", "hi", n="n_games")


def compute_tables(
    con: duckdb.DuckDBPyConnection,
    runs: list[RunInfo],
    rating_games: int = RATING_GAMES,
    moves_games: int = MOVES_GAMES,
    level: float = DEFAULT_LEVEL,
) -> ReportTables:
    """Every table of the report, section by section."""
    out = ReportTables()
    seconds: dict[str, float] = {}
    # games (every game) feed the data section and the per-game arrays, then go; the
    # per-game arrays are shared by the sections and freed before the ratings' fit
    held: dict[str, Any] = {}

    def per_game() -> PerGame:
        pg: PerGame = held["per_game"]
        return pg

    def build() -> None:
        held["per_game"] = build_per_game(held.pop("games"), runs)

    def ratings() -> None:
        held.clear()  # the fit's sample is read anew; the arrays are no longer needed
        rating_tables(con, out, rating_games, level)

    steps = (
        ("games", lambda: held.update(games=load_games(runs))),
        ("data", lambda: data_tables(con, runs, out, held["games"])),
        ("per_game", build),
        ("win_rates", lambda: win_rate_tables(con, out, level, per_game())),
        ("seats", lambda: seat_tables(con, out, level, per_game())),
        ("variants", lambda: variant_tables(con, out, moves_games, level, per_game())),
        ("ratings", ratings),
    )
    for name, step in steps:
        start = time.perf_counter()
        step()
        seconds[name] = round(time.perf_counter() - start, 2)
    out.tables["power"] = power_table(out)
    out.facts["seconds"] = seconds
    return out
