"""The report's tables, computed from the run folders' DuckDB views.

Scale. A run of 10 million games has 40 million seat rows and half a billion move rows;
neither goes into pandas. Every statistic that rests on games and seats is reduced in
DuckDB to *block totals* (one row per group and block), which is all the block-aware
estimators of ``marrakech_sim.stats`` use: the cluster-robust ratio variance
(:func:`cluster_ratio_sql` is ``stats._core.cluster_ratio_table`` over block totals), the
Wilson interval at the effective number of games (``stats.intervals.add_rate_interval``),
the equal-share and trend tests (``stats.equal_share_tests`` on the block-by-seat
matrix), the clustered difference of means behind ``stats.compare_variants``. The tests
check each table against the stats function on the same games.

Two parts work on a sample of whole blocks instead (every block of a match is equally
likely; the sample keeps each match's share): the Plackett-Luce fit
(``stats.fit_ratings`` needs one row per seat) and everything read from the moves table
(score over turns, lead changes, comebacks). Their tables carry the number of games
they rest on like every other table, and the report says when that is a sample.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np
import pandas as pd
from scipy import stats as sps

from marrakech_sim import stats
from marrakech_sim.report.load import RUN_SHIFT, RunInfo, digest, has_moves, rule_differences
from marrakech_sim.stats.intervals import (
    DEFAULT_LEVEL,
    add_mean_interval,
    add_rate_interval,
    z_value,
)
from marrakech_sim.stats.seats import finish_seat_shares
from marrakech_sim.stats.winrates import WIN_RATE_COLUMNS

RATING_GAMES = 300_000  # games in the Plackett-Luce sample (fit ~5 s, ~1 GB)
PGAME_CHUNK = 1_000_000  # games whose seats are reduced per game in one aggregate
MOVES_GAMES = 10_000  # games whose moves are read for per-turn metrics (~0.5 M score rows)
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


def data_tables(con: duckdb.DuckDBPyConnection, runs: list[RunInfo], out: ReportTables) -> None:
    """Runs, rule sets, line-ups and faults."""
    per_run = (
        con.execute(
            """SELECT run, count(*) AS games, count(*) FILTER (end_reason = 'error') AS error_games,
                  count(DISTINCT block) AS blocks, count(DISTINCT match_id) AS lineups,
                  sum(turns) AS turns
           FROM games GROUP BY run ORDER BY run"""
        )
        .df()
        .set_index("run")
    )
    rows = []
    for run in runs:
        m = run.manifest
        got = per_run.loc[run.index] if run.index in per_run.index else None
        rows.append(
            {
                "run": run.index,
                "run_id": run.run_id,
                "folder": str(run.path),
                "created": m.get("created", ""),
                "program_version": m.get("program_version", ""),
                "seed": m.get("seed", ""),
                "games_planned": m.get("games_planned", ""),
                "games": int(got["games"]) if got is not None else 0,
                "error_games": int(got["error_games"]) if got is not None else 0,
                "blocks": int(got["blocks"]) if got is not None else 0,
                "lineups": int(got["lineups"]) if got is not None else 0,
                "moves_rows": int(got["turns"]) if got is not None else 0,
                "parts": " / ".join(str(len(run.parts[t])) for t in ("games", "seats", "moves")),
                **{
                    f"sha256_{t}": digest(run.parts[t], run.path) if run.parts[t] else ""
                    for t in ("games", "seats", "moves")
                },
            }
        )
    out.tables["runs"] = pd.DataFrame(rows)

    per_rs = con.execute(
        """SELECT ruleset, any_value(players) AS players, count(*) AS n_games,
                  count(*) FILTER (end_reason = 'error') AS error_games,
                  count(DISTINCT block) AS n_blocks, list(DISTINCT run ORDER BY run) AS runs
           FROM games GROUP BY ruleset ORDER BY ruleset"""
    ).df()
    options: dict[str, dict[str, Any]] = {}
    for run in runs:
        for name, opts in run.rulesets.items():
            options.setdefault(run.ruleset_labels.get(name, name), opts)
    per_rs["differences"] = [
        ", ".join(f"{k} = {v}" for k, v in rule_differences(options.get(r, {})).items())
        or "(standard rules)"
        if r in options
        else "(not in the manifest)"
        for r in per_rs["ruleset"]
    ]
    per_rs["runs"] = [", ".join(str(x) for x in r) for r in per_rs["runs"]]
    out.tables["rulesets"] = per_rs
    out.facts["ruleset_options"] = options

    con.execute(
        """CREATE OR REPLACE TEMP TABLE match_info AS
           WITH f AS (SELECT match_id, min(game_id) AS first_game, any_value(ruleset) AS ruleset,
                             any_value(players) AS players, count(*) AS n_games_all,
                             count(*) FILTER (end_reason <> 'error') AS n_games,
                             count(DISTINCT block) AS n_blocks
                      FROM games GROUP BY match_id)
           SELECT f.*, string_agg(s.strategy, '|' ORDER BY s.strategy) AS lineup
           FROM f JOIN seats s ON s.game_id = f.first_game
           GROUP BY ALL"""
    )
    con.execute(
        """CREATE OR REPLACE TEMP TABLE match_strategy AS
           SELECT f.match_id, s.strategy, count(*) AS mult
           FROM match_info f JOIN seats s ON s.game_id = f.first_game GROUP BY ALL"""
    )
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
        """SELECT s.game_id, s.seat, s.strategy FROM seats s
           JOIN (SELECT game_id FROM games WHERE end_reason = 'error') USING (game_id)"""
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
    totals = con.execute(
        """SELECT count(*), count(*) FILTER (end_reason <> 'error'), count(DISTINCT block)
           FROM games"""
    ).fetchone()
    assert totals is not None
    out.facts.update(
        n_games=int(totals[0]), n_balance_games=int(totals[1]), n_blocks=int(totals[2])
    )


# ---------------------------------------------------------------- 2. win rates


def _rate_table(tab: pd.DataFrame, level: float) -> pd.DataFrame:
    return add_rate_interval(tab, level)


def per_game_table(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Temp table ``pgame``: one row per balance game, made once; returns the strategy names.

    Columns: game_id, block, ruleset, players, match_id, the per-game metrics of
    ``GAME_METRICS``; packed 8 bits per seat, strategy code + 1 (``s``; 0 = no such seat)
    and rank (``r``); one bit per seat for a win (``wbits``) and the winners' share (``wv``).
    Packing keeps the pivot of the seats to a few aggregates over one GROUP BY.
    """
    exists = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'pgame' AND temporary"
    ).fetchone()
    if exists and exists[0]:
        return [
            str(r[0])
            for r in con.execute("SELECT name FROM pgame_strategies ORDER BY code").fetchall()
        ]
    # Every strategy seated in the runs (one that only played error games codes no seat).
    names = [
        str(r[0]) for r in con.execute("SELECT DISTINCT strategy FROM seats ORDER BY 1").fetchall()
    ]
    if len(names) > 254:
        raise ValueError(f"{len(names)} strategies in one report; at most 254 are supported")
    con.execute("CREATE OR REPLACE TEMP TABLE pgame_strategies (code INTEGER, name VARCHAR)")
    if names:
        con.executemany("INSERT INTO pgame_strategies VALUES (?, ?)", list(enumerate(names)))
    codes = (
        "CASE strategy "
        + " ".join(f"WHEN {_q(n)} THEN {i + 1}" for i, n in enumerate(names))
        + " END"
        if names
        else "0"
    )
    # Seats are reduced per game straight from Parquet, a range of game ids at a time (the
    # scan skips other row groups; the aggregate's state stays small), then joined to games.
    seat_aggregates = f"""
        SELECT game_id,
           max(win_share) FILTER (WHERE seat = 0) AS w0,
           CASE WHEN count(score) >= 2 THEN
             list_extract(max(score, 2), 1) - list_extract(max(score, 2), 2) END AS margin,
           bool_or(score IS NULL)::DOUBLE AS bankrupt,
           avg(dirhams / score) FILTER (WHERE win_share > 0) AS winner_dirhams_share,
           sum(({codes})::BIGINT << (8 * seat))::BIGINT AS s,
           sum(coalesce(rank, 0)::BIGINT << (8 * seat))::BIGINT AS r,
           sum((win_share > 0)::BIGINT << seat)::BIGINT AS wbits,
           max(win_share)::DOUBLE AS wv"""
    select = """
        SELECT g.game_id, g.block, g.ruleset, CAST(g.players AS TINYINT) AS players,
               sg.w0 - 1.0 / g.players AS seat_advantage, g.turns::DOUBLE AS turns,
               sg.margin, sg.bankrupt, g.tie_broken::DOUBLE AS tie_broken,
               sg.winner_dirhams_share, sg.s, sg.r, g.match_id, sg.wbits, sg.wv,
               CAST(len(g.winners) AS TINYINT) AS n_winners"""
    ranges = con.execute(
        f"""SELECT run, min(game_id) - run * {RUN_SHIFT}, max(game_id) - run * {RUN_SHIFT}
            FROM games GROUP BY run ORDER BY run"""
    ).fetchall()
    chunks = [
        (int(run), start)
        for run, lo, hi in ranges
        for start in range(int(lo), int(hi) + 1, PGAME_CHUNK)
    ] or [(0, 0)]  # no games: an empty table
    for i, (run, start) in enumerate(chunks):
        verb = "CREATE OR REPLACE TEMP TABLE pgame AS" if i == 0 else "INSERT INTO pgame"
        con.execute(
            f"""{verb} {select}
                FROM ({seat_aggregates} FROM seats_{run}
                      WHERE game_id BETWEEN {start} AND {start + PGAME_CHUNK - 1}
                      GROUP BY game_id) sg
                JOIN games g ON g.game_id = sg.game_id + {run * RUN_SHIFT}
                WHERE g.end_reason <> 'error'"""
        )
    return names


def _packed_games(con: duckdb.DuckDBPyConnection) -> dict[str, np.ndarray]:
    """block, packed strategy codes ``s`` and ranks ``r`` of every balance game, by block."""
    return con.execute("SELECT block, s, r FROM pgame ORDER BY block").fetchnumpy()


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


def head_to_head_totals(con: duckdb.DuckDBPyConnection, names: list[str]) -> pd.DataFrame:
    """Head-to-head block ratio table (as :func:`cluster_ratio_sql`) plus pair counts.

    One pass over the games (numpy, ordered by block): every ordered seat pair adds its
    score to a (block, strategy, opponent) cell; cells are summed in chunks of whole
    blocks, so memory stays at one chunk's blocks times the number of strategy pairs.
    """
    n_s = len(names)
    kk = n_s * n_s
    cols = ["y", "m", "count", "tie", "syy", "sym", "smm", "nb"]
    acc = {c: np.zeros(kk) for c in cols}
    data = _packed_games(con) if n_s else {"block": np.zeros(0, "int64")}
    block = np.asarray(data["block"])
    if len(block):
        kmax = int(con.execute("SELECT max(players) FROM pgame").fetchone()[0] or 0)
        sp = np.asarray(data["s"]).astype("int64")
        rp = np.asarray(data["r"]).astype("int64")
        bidx = np.concatenate([[0], np.cumsum(block[1:] != block[:-1])])
        n_blocks = int(bidx[-1]) + 1
        per = max(1, 4_000_000 // kk)  # blocks per chunk
        starts = np.searchsorted(bidx, np.arange(0, n_blocks, per))
        stops = np.r_[starts[1:], len(bidx)]
        for a, b in zip(starts, stops, strict=True):
            local = bidx[a:b] - bidx[a]
            nbl = int(local[-1]) + 1
            s = [((sp[a:b] >> (8 * i)) & 255) - 1 for i in range(kmax)]
            r = [((rp[a:b] >> (8 * i)) & 255).astype("float64") for i in range(kmax)]
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
            y, m = cell["y"].reshape(nbl, kk), cell["m"].reshape(nbl, kk)
            acc["y"] += y.sum(axis=0)
            acc["m"] += m.sum(axis=0)
            acc["count"] += cell["count"].reshape(nbl, kk).sum(axis=0)
            acc["tie"] += cell["tie"].reshape(nbl, kk).sum(axis=0)
            acc["syy"] += (y * y).sum(axis=0)
            acc["sym"] += (y * m).sum(axis=0)
            acc["smm"] += (m * m).sum(axis=0)
            acc["nb"] += (cell["count"].reshape(nbl, kk) > 0).sum(axis=0)
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


def _win_rate_totals(
    con: duckdb.DuckDBPyConnection, names: list[str]
) -> dict[str, pd.DataFrame] | None:
    """``win_rates`` and ``lineup_win_rates`` block ratio tables from ``pgame`` in numpy.

    Each block lies in one (rule set, match) and so has one line-up: a seat's strategy is
    one of the block's few distinct strategies ("slots"), and the (block, slot) totals are
    bincounts. Returns None when some block spans two rule sets or matches (the SQL path
    handles that).
    """
    rulesets = [str(r[0]) for r in con.execute("SELECT DISTINCT ruleset FROM pgame").fetchall()]
    rcase = " ".join(f"WHEN {_q(n)} THEN {i}" for i, n in enumerate(rulesets))
    d = con.execute(
        f"""SELECT block, s, wbits, wv, players::INTEGER AS players, match_id,
                   CASE ruleset {rcase} END AS rc
            FROM pgame ORDER BY block"""
    ).fetchnumpy()
    block = np.asarray(d["block"])
    if not len(block) or not names:
        return None
    rc, mid = np.asarray(d["rc"]).astype("int64"), np.asarray(d["match_id"]).astype("int64")
    same = block[1:] == block[:-1]
    if np.any(same & ((rc[1:] != rc[:-1]) | (mid[1:] != mid[:-1]))):
        return None
    kmax = int(np.max(d["players"]))
    sp, wbits = np.asarray(d["s"]).astype("int64"), np.asarray(d["wbits"]).astype("int64")
    wv = np.asarray(d["wv"], dtype="float64")
    inv_players = 1.0 / np.asarray(d["players"], dtype="float64")
    bidx = np.concatenate([[0], np.cumsum(~same)])
    nb = int(bidx[-1]) + 1
    s = [(((sp >> (8 * i)) & 255) - 1).astype("int16") for i in range(kmax)]
    del sp
    # slot of a seat: how many distinct strategies of its game have a smaller code.
    slot = []
    for i in range(kmax):
        k = np.zeros(len(block), "int8")
        for j in range(kmax):
            first = np.ones(len(block), bool)
            for h in range(j):
                first &= s[h] != s[j]
            k += first & (s[j] >= 0) & (s[j] < s[i])
        slot.append(k)
    code = np.full(nb * kmax, -1, "int64")
    y = np.zeros(nb * kmax)
    m = np.zeros(nb * kmax)
    games = np.zeros(nb * kmax)
    fair = np.zeros(nb * kmax)
    for i in range(kmax):
        ok = s[i] >= 0
        cell = bidx[ok] * kmax + slot[i][ok]
        code[cell] = s[i][ok]
        mult = sum(((s[j] == s[i]) & ok).astype("float64") for j in range(kmax))[ok]
        y += np.bincount(cell, np.where((wbits[ok] >> i) & 1 == 1, wv[ok], 0.0), nb * kmax)
        m += np.bincount(cell, minlength=nb * kmax)
        games += np.bincount(cell, 1.0 / mult, nb * kmax)
        fair += np.bincount(cell, inv_players[ok], nb * kmax)
    for i in range(kmax):  # every game of a block has the block's line-up
        ok = s[i] >= 0
        if np.any(code[bidx[ok] * kmax + slot[i][ok]] != s[i][ok]):
            return None
    used = np.flatnonzero(code >= 0)
    code, y, m, games, fair = code[used], y[used], m[used], games[used], fair[used]
    first_game = np.searchsorted(bidx, np.arange(nb))
    group_rc = rc[first_game][used // kmax]
    match_ids = mid[first_game][used // kmax]
    info = con.execute("SELECT match_id, lineup FROM match_info").fetchnumpy()
    order = np.argsort(info["match_id"])
    info_ids = np.asarray(info["match_id"])[order].astype("int64")
    lineup_names = np.asarray(info["lineup"], dtype=object)[order]
    lineup_of = np.searchsorted(info_ids, match_ids)

    def table(key: np.ndarray) -> pd.DataFrame:
        keys, inv = np.unique(key, return_inverse=True)

        def total(v: np.ndarray) -> np.ndarray:
            return np.bincount(inv, v, len(keys))

        cols = _ratio_columns(
            total(y),
            total(m),
            total(y * y),
            total(y * m),
            total(m * m),
            np.bincount(inv, minlength=len(keys)),
        )
        cols["n_games"] = np.round(total(games))
        cols["fair_share"] = total(fair) / total(m)
        return pd.DataFrame({"key": keys, **cols})

    n_s = len(names)
    overall = table(code)
    overall.insert(0, "strategy", [names[k] for k in overall.pop("key")])
    # (rule set, line-up, strategy): line-ups by name, so equal line-ups of two matches pool.
    lineup_codes, lineup_idx = np.unique(lineup_names.astype(str), return_inverse=True)
    lk = (group_rc * len(lineup_codes) + lineup_idx[lineup_of]) * n_s + code
    per_lineup = table(lk)
    k = per_lineup.pop("key").to_numpy()
    per_lineup.insert(0, "strategy", [names[x % n_s] for x in k])
    per_lineup.insert(0, "lineup", [str(lineup_codes[(x // n_s) % len(lineup_codes)]) for x in k])
    per_lineup.insert(0, "ruleset", [rulesets[x // n_s // len(lineup_codes)] for x in k])
    return {"win_rates": overall, "lineup_win_rates": per_lineup}


def _finish_win_rates(out: ReportTables, name: str, keys: list[str], tab: pd.DataFrame) -> None:
    tab = tab.rename(columns={"total": "wins", "n": "n_seat_games", "estimate": "rate"})
    tab["n_seat_games"] = tab["n_seat_games"].astype("int64")
    tab["n_games"] = tab["n_games"].astype("int64")
    out.tables[name] = tab[[*keys, *WIN_RATE_COLUMNS]].reset_index(drop=True)


def win_rate_tables(con: duckdb.DuckDBPyConnection, out: ReportTables, level: float) -> None:
    """Win rate per strategy, per (ruleset, line-up, strategy), and head to head."""
    names = per_game_table(con)
    fast = _win_rate_totals(con, names)
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
    tab = _rate_table(head_to_head_totals(con, names), level)
    tab = tab.rename(columns={"total": "ahead", "n": "n_games", "estimate": "rate"})
    tab["n_games"] = np.round(tab["n_games"]).astype("int64")
    for c in ("n_pairs", "tied_pairs"):
        tab[c] = tab[c].astype("int64")
    out.tables["head_to_head"] = tab[
        [
            *keys,
            "n_games",
            "n_blocks",
            "n_pairs",
            "tied_pairs",
            "ahead",
            "rate",
            "lo",
            "hi",
            "n_eff",
        ]
    ].reset_index(drop=True)


# ---------------------------------------------------------------- 3. seat advantage


def _ratio_frame(keys: dict[str, list], y: np.ndarray, m: np.ndarray) -> pd.DataFrame:
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


def _seat_block_totals(con: duckdb.DuckDBPyConnection) -> dict[str, Any] | None:
    """Per (players, rule set): block-by-seat win totals, games per block, tie counts.

    From ``pgame`` in numpy; None when a block spans two (players, rule set) groups.
    """
    rulesets = [str(r[0]) for r in con.execute("SELECT DISTINCT ruleset FROM pgame").fetchall()]
    if not rulesets:
        return None
    rcase = " ".join(f"WHEN {_q(n)} THEN {i}" for i, n in enumerate(rulesets))
    d = con.execute(
        f"""SELECT block, players::INTEGER AS players, CASE ruleset {rcase} END AS rc, wbits, wv,
                   n_winners::INTEGER AS nw, tie_broken
            FROM pgame ORDER BY block"""
    ).fetchnumpy()
    block = np.asarray(d["block"])
    players = np.asarray(d["players"]).astype("int64")
    group = np.asarray(d["rc"]).astype("int64") * 256 + players
    same = block[1:] == block[:-1]
    if np.any(same & (group[1:] != group[:-1])):
        return None
    bidx = np.concatenate([[0], np.cumsum(~same)])
    nb = int(bidx[-1]) + 1
    kmax = int(players.max())
    wbits = np.asarray(d["wbits"]).astype("int64")
    wv = np.asarray(d["wv"], dtype="float64")
    nw = np.asarray(d["nw"]).astype("int64")
    broken = np.asarray(d["tie_broken"], dtype="float64")
    n_b = np.bincount(bidx, minlength=nb).astype("float64")
    block_group = group[np.searchsorted(bidx, np.arange(nb))]
    shares, blocks, ties = [], {}, {}
    per_game_shared = (nw > 1).astype("float64")
    shared_b = np.bincount(bidx, per_game_shared, nb)
    broken_b = np.bincount(bidx, broken, nb)
    wins = [((wbits >> i) & 1) == 1 for i in range(kmax)]
    y_b = np.stack([np.bincount(bidx, np.where(wins[i], wv, 0.0), nb) for i in range(kmax)], axis=1)
    for g in np.unique(block_group):
        rs, k = rulesets[g // 256], int(g % 256)
        in_g = block_group == g
        games_g = group == g
        nb_g = n_b[in_g]
        blocks[(k, rs)] = (y_b[in_g, :k], nb_g)
        for seat in range(k):
            row = _ratio_frame(
                {"players": [k], "ruleset": [rs], "seat": [seat]}, y_b[in_g, seat], nb_g
            )
            won = wins[seat] & games_g
            row["outright_wins"] = int(np.sum(won & (nw == 1)))
            row["shared_wins"] = int(np.sum(won & (nw > 1)))
            row["tie_broken_wins"] = int(np.sum(won & (broken > 0)))
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


def seat_tables(con: duckdb.DuckDBPyConnection, out: ReportTables, level: float) -> None:
    """Win share per seat, equal-share / trend tests, ties; per (players, ruleset)."""
    keys = ["players", "ruleset", "seat"]
    per_game_table(con)
    fast = _seat_block_totals(con)
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
    groups = con.execute(
        "SELECT DISTINCT players, ruleset FROM games WHERE end_reason <> 'error' ORDER BY ALL"
    ).fetchall()
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
    cols = [
        "players",
        "ruleset",
        "n_games",
        "n_blocks",
        "chi2_block",
        "df_block",
        "p_block",
        "chi2_pearson",
        "p_pearson",
        "trend_pp",
        "trend_se_pp",
        "trend_lo_pp",
        "trend_hi_pp",
        "trend_p",
    ]
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


def make_sample(con: duckdb.DuckDBPyConnection, name: str, max_games: int) -> int:
    """Temp table ``name`` (game_id, block) of whole blocks, about ``max_games`` games.

    Every match keeps the same fraction of its blocks (its first ones by block id), so the
    sample's mix of rule sets and line-ups is the run's. Returns the games sampled.
    """
    total = con.execute("SELECT count(*) FROM games").fetchone()
    assert total is not None
    frac = 1.0 if total[0] <= max_games else max_games / total[0]
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE {name} AS
            WITH b AS (SELECT match_id, block FROM games GROUP BY ALL),
                 r AS (SELECT block, row_number() OVER (PARTITION BY match_id ORDER BY block) AS i,
                              count(*) OVER (PARTITION BY match_id) AS nb FROM b),
                 keep AS (SELECT block FROM r WHERE i <= ceil({frac} * nb))
            SELECT g.game_id, g.block FROM games g SEMI JOIN keep USING (block)"""
    )
    got = con.execute(f"SELECT count(*) FROM {name}").fetchone()
    assert got is not None
    return int(got[0])


def _sample_frames(
    con: duckdb.DuckDBPyConnection, sample: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    games = con.execute(
        f"""SELECT game_id, match_id, ruleset, players, turns, end_reason, tie_broken, error, block
            FROM games SEMI JOIN {sample} USING (game_id) ORDER BY game_id"""
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
    n = make_sample(con, "rating_sample", max_games)
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


def score_over_turns(con: duckdb.DuckDBPyConnection, level: float) -> pd.DataFrame:
    """``stats.score_over_turns`` from the ``turn_scores`` temp table, aggregated in DuckDB."""
    src = """SELECT g.ruleset, g.players, t.seat, t.turn, g.block, t.score
             FROM turn_scores t JOIN games g USING (game_id)
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


def variant_tables(
    con: duckdb.DuckDBPyConnection, out: ReportTables, moves_games: int, level: float
) -> None:
    """Per-game metrics -> per-rule-set means, comparisons with Holm, distributions."""
    per_game_table(con)
    con.execute("CREATE OR REPLACE TEMP VIEW gm AS SELECT * FROM pgame")
    # One pass over the games gives every metric's block totals; then one row per metric.
    sums = ", ".join(f"sum({m}) AS t_{m}, count({m}) AS n_{m}" for m in GAME_METRICS)
    con.execute(
        "CREATE OR REPLACE TEMP TABLE mbw AS SELECT ruleset, any_value(players) AS players, "
        f"block, {sums} FROM pgame GROUP BY ruleset, block"
    )
    parts = [
        f"SELECT ruleset, players, '{m}' AS metric, block, t_{m} AS total, n_{m} AS n "
        f"FROM mbw WHERE n_{m} > 0"
        for m in GAME_METRICS
    ]
    con.execute("CREATE OR REPLACE TEMP TABLE mb AS " + " UNION ALL ".join(parts))
    con.execute("DROP TABLE mbw")

    # Distributions of margins and lengths (exact histograms; summaries like stats.summarize).
    hist, summaries = [], []
    for metric in ("margin", "turns"):
        hist.append(
            con.execute(
                f"""SELECT ruleset, players, '{metric}' AS metric, {metric} AS value,
                           count(*) AS n_games
                FROM gm WHERE {metric} IS NOT NULL GROUP BY ALL ORDER BY ruleset, value"""
            ).df()
        )
        qs = ", ".join(f"quantile_cont({metric}, {q}) AS q{q * 100:g}" for q in QUANTILES)
        summaries.append(
            con.execute(
                f"""SELECT ruleset, '{metric}' AS metric, count({metric}) AS n,
                       count(*) - count({metric}) AS n_missing,
                       count(DISTINCT block) FILTER (WHERE {metric} IS NOT NULL) AS n_blocks,
                       avg({metric}) AS mean, stddev_samp({metric}) AS sd, min({metric}) AS min,
                       {qs}, max({metric}) AS max
                FROM gm GROUP BY ruleset ORDER BY ruleset"""
            ).df()
        )
    out.tables["histograms"] = pd.concat(hist, ignore_index=True)
    out.tables["distributions"] = pd.concat(summaries, ignore_index=True)

    # Per-turn metrics from a sample's moves.
    out.facts["moves_games"] = 0
    if has_moves(con):
        n = make_sample(con, "moves_sample", moves_games)
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
            sums = long.groupby(["ruleset", "players", "metric", "block"], as_index=False).agg(
                total=("value", "sum"), n=("value", "size")
            )
            con.register("lead_sums", sums)
            con.execute(
                "INSERT INTO mb SELECT ruleset, players, metric, block, total, n FROM lead_sums"
            )
            con.unregister("lead_sums")

    summary = add_mean_interval(
        cluster_ratio_sql(
            con,
            "SELECT ruleset, metric, block, total AS y, n AS m FROM mb",
            ["ruleset", "metric"],
            grouped=True,
        ),
        level,
    )
    players = con.execute(
        "SELECT ruleset, any_value(players) AS players FROM mb GROUP BY ruleset"
    ).df()
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
    out.tables["variant_comparison"] = compare_rulesets(con, out, level)
    con.execute("DROP VIEW gm")


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


def compare_rulesets(
    con: duckdb.DuckDBPyConnection, out: ReportTables, level: float
) -> pd.DataFrame:
    """``stats.compare_variants`` from block totals: each rule set against its baseline."""
    base_of = baselines(out.tables["rulesets"], out.facts.get("ruleset_options", {}))
    out.facts["baselines"] = base_of
    tot = con.execute(
        # mb has one row per (ruleset, metric, block): count(*) counts the blocks.
        "SELECT ruleset, metric, sum(total) AS t, sum(n) AS n, count(*) AS b FROM mb GROUP BY ALL"
    ).df()
    tot = tot.set_index(["ruleset", "metric"])
    z = z_value(level)
    records = []
    for other, base in sorted(base_of.items()):
        if other == base:
            continue
        # Each block's influence on the difference (blocks shared by the two rule sets pair).
        rows = (
            con.execute(
                f"""WITH tot AS (SELECT ruleset, metric, sum(total) AS t, sum(n) AS n FROM mb
                             WHERE ruleset IN ({_q(base)}, {_q(other)}) GROUP BY ALL),
                     r AS (SELECT mb.metric, mb.block,
                                  CASE WHEN mb.ruleset = {_q(other)} THEN 1 ELSE -1 END
                                  * (mb.total - mb.n * tot.t / tot.n) / tot.n AS psi
                           FROM mb JOIN tot USING (ruleset, metric)),
                     pb AS (SELECT metric, block, sum(psi) AS p FROM r GROUP BY ALL)
                SELECT metric, count(*) AS blocks, sum(p * p) AS ss FROM pb GROUP BY metric"""
            )
            .df()
            .set_index("metric")
        )
        for metric in stats.VARIANT_METRICS:
            if (
                (base, metric) not in tot.index
                or (other, metric) not in tot.index
                or metric not in rows.index
            ):
                continue
            b, a = tot.loc[(base, metric)], tot.loc[(other, metric)]
            mean_b, mean_a = b["t"] / b["n"], a["t"] / a["n"]
            blocks = int(rows.loc[metric, "blocks"])
            se = (
                math.sqrt(blocks / (blocks - 1) * rows.loc[metric, "ss"])
                if blocks > 1
                else float("nan")
            )
            diff = mean_a - mean_b
            if math.isnan(se):
                p = float("nan")
            elif se == 0:
                p = 1.0 if diff == 0 else 0.0
            else:
                p = float(2 * sps.norm.sf(abs(diff) / se))
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
                    "n_games_baseline": int(b["n"]),
                    "n_games": int(a["n"]),
                    "n_blocks_baseline": int(b["b"]),
                    "n_blocks": int(a["b"]),
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
    steps = (
        ("data", lambda: data_tables(con, runs, out)),
        ("win_rates", lambda: win_rate_tables(con, out, level)),
        ("seats", lambda: seat_tables(con, out, level)),
        ("ratings", lambda: rating_tables(con, out, rating_games, level)),
        ("variants", lambda: variant_tables(con, out, moves_games, level)),
    )
    for name, step in steps:
        start = time.perf_counter()
        step()
        seconds[name] = round(time.perf_counter() - start, 2)
    out.tables["power"] = power_table(out)
    out.facts["seconds"] = seconds
    return out
