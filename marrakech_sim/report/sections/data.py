"""The appendix, the data: runs, rule sets and how they differ, seeds, faults, digests."""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from marrakech_sim import stats
from marrakech_sim.report.fmt import count, pct
from marrakech_sim.report.load import RUN_SHIFT, RunInfo, digest, rule_differences
from marrakech_sim.report.pergame import Games, Slice
from marrakech_sim.report.sections.base import BaseSection, Context, Part
from marrakech_sim.report.sections.columns import (
    BLOCKS,
    GAMES,
    LINEUP,
    PLAYERS,
    RULESET,
    STRATEGY,
    with_interval,
)
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


def _first_rows(key: np.ndarray) -> np.ndarray:
    """Per distinct ``key`` (ascending), its first row: the games are sorted by block, then
    game id (``pergame.load_games``), so the row of its least (block, game id)."""
    return np.asarray(np.unique(key, return_index=True)[1])


class DataTotals:
    """Counts per run, rule set and match, added slice by slice (every game, errors too).

    A match's and a rule set's first game (least block, then game id) give its rule set
    and player count, as the first row of the games sorted by block did.
    """

    MATCH_SUMS = ("n_games_all", "n_games", "n_blocks")
    MATCH_FIRST = ("first_game", "first_block", "first_id", "ruleset", "players")

    def __init__(self, runs: list[RunInfo], rulesets: list[str]) -> None:
        self.runs, self.rulesets = runs, rulesets
        n_runs, n_rs = len(runs), len(rulesets)
        self.per_run = {
            c: np.zeros(n_runs, "int64") for c in ("games", "error_games", "blocks", "turns")
        }
        self.per_rs = {c: np.zeros(n_rs, "int64") for c in ("n_games", "error_games", "n_blocks")}
        self.rs_runs = np.zeros((n_rs, n_runs), "int64")
        self.rs_first = np.full((n_rs, 2), np.iinfo("int64").max)  # (block, game id) of the first
        self.rs_players = np.zeros(n_rs, "int32")
        self.match_id = np.zeros(0, "int64")
        self.match: dict[str, np.ndarray] = {
            c: np.zeros(0, "int64") for c in (*self.MATCH_SUMS, *self.MATCH_FIRST)
        }
        self.n_games = self.n_balance = self.n_blocks = 0

    def add(self, games: Games) -> None:
        """Add one slice of whole blocks."""
        total = len(games)
        if not total:
            return
        block_start = np.r_[True, games.block[1:] != games.block[:-1]]
        block_index = np.cumsum(block_start) - 1
        n_runs = len(self.runs)
        run = games.run.astype("int64")
        error = games.is_error.astype("float64")
        self.per_run["games"] += np.bincount(run, minlength=n_runs)
        self.per_run["error_games"] += np.bincount(run, error, n_runs).astype("int64")
        pairs = _pair_rows(run, block_start, block_index)
        self.per_run["blocks"] += np.bincount(run[pairs], minlength=n_runs)
        turns = np.bincount(run, minlength=n_runs, weights=np.nan_to_num(games.turns))
        self.per_run["turns"] += turns.astype("int64")
        n_rs = len(self.rulesets)
        rc = games.ruleset.astype("int64")
        self.per_rs["n_games"] += np.bincount(rc, minlength=n_rs)
        self.per_rs["error_games"] += np.bincount(rc, error, n_rs).astype("int64")
        rs_pairs = _pair_rows(rc, block_start, block_index)
        self.per_rs["n_blocks"] += np.bincount(rc[rs_pairs], minlength=n_rs)
        self.rs_runs += np.bincount(rc * n_runs + run, minlength=n_rs * n_runs).reshape(
            n_rs, n_runs
        )
        for row in _first_rows(rc).tolist():
            r = int(rc[row])
            here = (int(games.block[row]), int(games.game_id[row]))
            if here < (int(self.rs_first[r, 0]), int(self.rs_first[r, 1])):
                self.rs_first[r] = here
                self.rs_players[r] = games.players[row]
        # matches: this slice's, merged into the running ones
        matches, match_of = _group_ids(games.match_id)
        n_m = len(matches)
        first = np.full(n_m, np.iinfo("int64").max)
        np.minimum.at(first, match_of, games.game_id)
        first_row = _first_rows(match_of)
        match_pairs = _pair_rows(match_of, block_start, block_index)
        mine = {
            "n_games_all": np.bincount(match_of, minlength=n_m),
            "n_games": np.bincount(match_of, games.balance, n_m).astype("int64"),
            "n_blocks": np.bincount(match_of[match_pairs], minlength=n_m),
            "first_game": first,
            "first_block": games.block[first_row],
            "first_id": games.game_id[first_row],
            "ruleset": rc[first_row],
            "players": games.players[first_row].astype("int64"),
        }
        self._merge_matches(matches, mine)
        self.n_games += total
        self.n_balance += int(games.balance.sum())
        self.n_blocks += int(block_start.sum())

    def _merge_matches(self, ids: np.ndarray, mine: dict[str, np.ndarray]) -> None:
        both = {c: np.r_[self.match[c], mine[c]] for c in self.match}
        key = np.r_[self.match_id, ids]
        order = np.lexsort((both["first_id"], both["first_block"], key))
        key = key[order]
        start = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        self.match_id = key[start]
        for c in self.MATCH_SUMS:
            self.match[c] = np.add.reduceat(both[c][order], start)
        self.match["first_game"] = np.minimum.reduceat(both["first_game"][order], start)
        for c in ("first_block", "first_id", "ruleset", "players"):
            self.match[c] = both[c][order][start]  # the first game's: least (block, id) first

    def match_blocks(self, slices: list[Slice], max_games: int) -> pd.DataFrame:
        """The (match, block) pairs a sample of ``max_games`` games can use, with each
        match's number of blocks ``nb``.

        A sample (``samples.make_sample``) keeps each match's first ceil(frac nb) blocks,
        frac = max_games / games. Reading the slices again in block order, a match's first
        blocks are the first seen, so only those are kept, not every block.
        """
        frac = 1.0 if self.n_games <= max_games else max_games / self.n_games
        wanted = np.ceil(frac * self.match["n_blocks"]).astype("int64") + 1
        seen = np.zeros(len(self.match_id), "int64")
        out_match, out_block = [], []
        for part in slices:  # a run's slices come in increasing block order (plan_slices)
            off = part.run.index * RUN_SHIFT
            tabs = [pq.read_table(p, columns=["match_id", "block"]) for p in part.games]
            mid = np.concatenate([_int64(t.column("match_id")) for t in tabs]) + off
            block = np.concatenate([_int64(t.column("block")) for t in tabs]) + off
            del tabs
            if not len(mid):
                continue
            order = np.lexsort((block, mid))  # by match, then block
            mid, block = mid[order], block[order]
            first = np.flatnonzero(np.r_[True, (mid[1:] != mid[:-1]) | (block[1:] != block[:-1])])
            pair = np.stack([mid[first], block[first]], axis=1)
            m = np.searchsorted(self.match_id, pair[:, 0])
            start = np.flatnonzero(np.r_[True, m[1:] != m[:-1]])
            rank = np.arange(len(m)) - np.repeat(start, np.diff(np.r_[start, len(m)]))
            keep = seen[m] + rank < wanted[m]
            seen += np.bincount(m, minlength=len(seen))
            out_match.append(pair[keep, 0])
            out_block.append(pair[keep, 1])
        match = np.concatenate(out_match) if out_match else np.zeros(0, "int64")
        block = np.concatenate(out_block) if out_block else np.zeros(0, "int64")
        nb = self.match["n_blocks"][np.searchsorted(self.match_id, match)]
        return pd.DataFrame({"match_id": match, "block": block, "nb": nb})


def _int64(column: pa.ChunkedArray) -> np.ndarray:
    return np.asarray(column.fill_null(0).to_numpy(), dtype="int64")


def data_tables(
    con: duckdb.DuckDBPyConnection,
    out: ReportTables,
    totals: DataTotals,
    slices: list[Slice],
    sample_games: int,
) -> None:
    """Runs, rule sets, line-ups and faults; counts from the slices' sums.

    ``sample_games``: the most games a sample of whole blocks will take (``match_blocks``
    keeps the (match, block) pairs such a sample can use).
    """
    runs, rulesets = totals.runs, totals.rulesets
    per_run = dict(totals.per_run)
    per_run["lineups"] = np.bincount((totals.match_id >> 40).astype("int64"), minlength=len(runs))
    rows = []
    for info in runs:
        m = info.manifest
        got = {k: int(v[info.index]) for k, v in per_run.items()}
        rows.append(
            {
                "run": info.index,
                "run_id": info.run_id,
                "folder": str(info.path),
                "created": m.created,
                "program_version": m.program_version or "",
                "seed": m.seed,
                "games_planned": m.games_planned,
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
    out.tables.runs = pd.DataFrame(rows)

    per_rs = pd.DataFrame(
        {
            "ruleset": rulesets,
            "players": totals.rs_players.astype("int32"),
            "n_games": totals.per_rs["n_games"],
            "error_games": totals.per_rs["error_games"],
            "n_blocks": totals.per_rs["n_blocks"],
            "runs": [", ".join(str(r) for r in np.flatnonzero(row)) for row in totals.rs_runs],
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
    out.tables.rulesets = per_rs[
        ["ruleset", "players", "n_games", "error_games", "n_blocks", "runs", "differences"]
    ]
    out.facts.ruleset_options = options

    # Matches: counts from the sums, the line-up from the seats of each match's first game.
    match = totals.match
    match_frame = pd.DataFrame(
        {
            "match_id": totals.match_id,
            "first_game": match["first_game"],
            "ruleset": [rulesets[c] for c in match["ruleset"]],
            "players": match["players"].astype("int32"),
            "n_games_all": match["n_games_all"].astype("int64"),
            "n_games": match["n_games"].astype("int64"),
            "n_blocks": match["n_blocks"].astype("int64"),
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
    # (match, block) pairs for the samples of whole blocks (make_sample): those the largest
    # sample can take, with each match's number of blocks
    pairs = totals.match_blocks(slices, sample_games)
    con.register("match_block_arrow", pairs)
    con.execute("CREATE OR REPLACE TEMP TABLE match_blocks AS SELECT * FROM match_block_arrow")
    con.unregister("match_block_arrow")
    del pairs
    out.tables.lineups = con.execute(
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
    out.tables.faults = tab.sort_values("strategy", ignore_index=True)
    kinds = con.execute(
        """SELECT coalesce(regexp_extract(error, '\\):\\s*([A-Za-z_][A-Za-z0-9_.]*)', 1), '')
                  AS kind, count(*) AS n_games
           FROM games WHERE end_reason = 'error' GROUP BY kind ORDER BY n_games DESC"""
    ).df()
    out.tables.fault_kinds = kinds
    out.facts.n_games = totals.n_games
    out.facts.n_balance_games = totals.n_balance
    out.facts.n_blocks = totals.n_blocks


# ---------------------------------------------------------------- words and charts


class DataSection(BaseSection):
    """The section "Appendix: the data (runs, digests, rule sets, line-ups, faults)"."""

    name = "data"
    headings = ("Appendix: the data (runs, digests, rule sets, line-ups, faults)",)

    def parts(self, ctx: Context, chart_titles: dict[str, str]) -> list[Part]:
        t, f = ctx.rt.tables, ctx.rt.facts
        s = Part(self.headings[0], numbered=False)
        runs = t.runs
        s.paragraphs.append(
            f"{count(f.n_games)} games in {count(f.n_blocks)} blocks from {len(runs)} "
            "run(s); "
            f"{count(f.n_games - f.n_balance_games)} ended in an error and are left out "
            "of every "
            "balance statistic. Blocks are games that share dice and differ only in seating; "
            "every "
            f"interval below is computed from block totals."
        )
        s.add_table(
            "Runs",
            runs,
            [
                ("run", lambda r: str(r.run_id)),
                ("created", lambda r: str(r.created)),
                ("program version", lambda r: str(r.program_version)),
                ("seed", lambda r: str(r.seed)),
                (
                    "games played / planned",
                    lambda r: f"{count(r.games)} / {count(r.games_planned)}",
                ),
                ("error games", lambda r: count(r.error_games)),
                ("blocks", lambda r: count(r.blocks)),
                ("line-ups", lambda r: count(r.lineups)),
                ("parts games/seats/moves", lambda r: r.parts),
            ],
        )
        s.add_table(
            "Digests (sha256 over each table's part files)",
            runs,
            [
                ("run", lambda r: str(r.run_id)),
                ("games", lambda r: r.sha256_games[:16]),
                ("seats", lambda r: r.sha256_seats[:16]),
                ("moves", lambda r: (r.sha256_moves or "-")[:16]),
            ],
        )
        s.add_table(
            "Rule sets (options that differ from the standard rules)",
            t.rulesets,
            [
                RULESET,
                PLAYERS,
                ("differences", lambda r: str(r.differences)),
                GAMES,
                ("error games", lambda r: count(r.error_games)),
                BLOCKS,
            ],
        )
        s.add_table(
            "Line-ups",
            t.lineups,
            [
                RULESET,
                LINEUP,
                ("games", lambda r: count(r.n_games_all)),
                BLOCKS,
            ],
        )
        s.add_table(
            "Faults per strategy (games ended by the strategy's error)",
            t.faults,
            [
                STRATEGY,
                GAMES,
                ("faults", lambda r: count(r.n_errors)),
                with_interval("rate", "error_rate", lambda x: pct(x, 3)),
            ],
        )
        if not t.fault_kinds.empty:
            s.add_table(
                "Faults by kind",
                t.fault_kinds,
                [
                    ("kind", lambda r: str(r.kind) or "(unknown)"),
                    GAMES,
                ],
            )
        return [s]
