"""Report sections 5 and 6: each rule set against its base, and the distributions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from marrakech_sim import stats
from marrakech_sim.report.load import has_moves, rule_differences
from marrakech_sim.report.pergame import PerGame
from marrakech_sim.report.sections.samples import make_sample, sample_frames
from marrakech_sim.report.tables import (
    GAME_METRICS,
    QUANTILES,
    TURN_METRICS,
    ReportTables,
    check_block_layout,
    ratio_frame,
)
from marrakech_sim.stats import estimators
from marrakech_sim.stats.intervals import add_mean_interval
from marrakech_sim.stats.variants import comparison_metrics, seat_metric


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
    k = ", ".join(keys)
    # the reduction: sums of the block totals per group (estimators.SUMS); the estimate is
    # estimators.ratio_from_sums
    sums = con.execute(
        f"""WITH b AS (SELECT {k}, block, sum(score)::DOUBLE AS y, count(*)::DOUBLE AS m
                      FROM ({src}) GROUP BY ALL)
            SELECT {k}, sum(y) AS total, sum(m) AS n, sum(y * y) AS syy, sum(y * m) AS sym,
                   sum(m * m) AS smm, count(*) AS n_blocks
            FROM b GROUP BY ALL ORDER BY {k}"""
    ).df()
    cols = estimators.ratio_from_sums(*(sums[c].to_numpy() for c in estimators.SUMS))
    tab = add_mean_interval(pd.DataFrame({**{c: sums[c] for c in keys}, **cols}), level)
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
    check_block_layout(pg)
    rc = pg.ruleset.astype("int64")
    group = pg.block_index  # a block holds one rule set (check_block_layout)
    first = np.flatnonzero(np.r_[True, np.diff(group) != 0])
    n_groups = len(first)
    group_rc, group_block, group_players = rc[first], pg.block[first], pg.players[first]
    for r, name in enumerate(pg.rulesets):
        in_r = np.flatnonzero(group_rc == r)
        if len(in_r):
            out.players[name] = int(group_players[in_r[0]])
    size = np.bincount(group, minlength=n_groups).astype("float64")
    seat_shares = {
        seat_metric(i): np.where(pg.players > i, pg.win[i] * pg.win_value, np.nan)
        for i in range(pg.win.shape[0])
    }
    for metric in (*GAME_METRICS, *seat_shares):
        x = seat_shares[metric] if metric in seat_shares else getattr(pg, metric)
        ok = ~np.isnan(x)
        if ok.all():
            total, count = np.bincount(group, x, n_groups), size
        else:
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
    group = (pg.ruleset.astype("int64") * 256 + pg.players)[ok]
    if len(value) and np.all(value == np.round(value)) and np.ptp(value) < 1 << 20:
        low = int(value.min())
        span = int(value.max()) - low + 1
        counts = np.bincount(group * span + (value.astype("int64") - low))
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
    paired_runs: list[int] | None = None,
) -> None:
    """Per-game metrics -> per-rule-set means, comparisons with Holm, distributions.

    ``paired_runs``: the indices of the runs played with ``common_seeds`` (their variants
    are compared block pair by block pair).
    """
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
        games, seats = sample_frames(con, "moves_sample")
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
        ratio_frame({"ruleset": [rs], "metric": [metric]}, total, n)
        for (rs, metric), (_, total, n) in sorted(totals.cells.items())
        if metric in stats.VARIANT_METRICS
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
    out.tables["variant_comparison"] = compare_rulesets(
        totals, out, level, cluster_keys(con, paired_runs or [])
    )


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


def cluster_keys(
    con: duckdb.DuckDBPyConnection, paired_runs: list[int]
) -> tuple[np.ndarray, np.ndarray] | None:
    """(blocks ascending, cluster key) for the runs played with ``common_seeds``.

    The games of a block share one seed (run.plan); in a ``common_seeds`` run the blocks
    of every rule set with one seed share their dice, so the seed is their cluster. The
    blocks of other runs are their own cluster (key: the block). None: no such run.
    """
    if not paired_runs:
        return None
    runs = ", ".join(str(int(r)) for r in paired_runs)
    got = con.execute(
        f"""SELECT block, any_value(CASE WHEN run IN ({runs}) THEN seed
                                         ELSE block::UBIGINT END) AS key
            FROM games GROUP BY block ORDER BY block"""
    ).fetchnumpy()
    return np.asarray(got["block"], "int64"), np.asarray(got["key"], "uint64")


def compare_rulesets(
    totals: MetricTotals,
    out: ReportTables,
    level: float,
    keys: tuple[np.ndarray, np.ndarray] | None = None,
) -> pd.DataFrame:
    """``stats.compare_variants`` from block totals: each rule set against its baseline.

    Blocks are clustered by ``keys`` (:func:`cluster_keys`; None: each block alone), so the
    blocks of a rule set and its baseline that share a seed (``common_seeds``) pair.
    """
    base_of = baselines(out.tables["rulesets"], out.facts.get("ruleset_options", {}))
    out.facts["baselines"] = base_of
    metrics = comparison_metrics(sorted({m for _, m in totals.cells}, key=_metric_order))
    records = []
    for other, base in sorted(base_of.items()):
        if other == base:
            continue
        for metric, family in metrics:
            if (base, metric) not in totals.cells or (other, metric) not in totals.cells:
                continue
            sides = []
            for block, total, n in (totals.cells[(base, metric)], totals.cells[(other, metric)]):
                key = block if keys is None else keys[1][np.searchsorted(keys[0], block)]
                sides.append((key, total, n))
            res = estimators.clustered_difference(sides[0], sides[1], level)
            records.append(
                {
                    "family": family,
                    "metric": metric,
                    "baseline": base,
                    "ruleset": other,
                    **res,
                    "n_games_baseline": int(sides[0][2].sum()),
                    "n_games": int(sides[1][2].sum()),
                    "n_blocks_baseline": len(sides[0][0]),
                    "n_blocks": len(sides[1][0]),
                }
            )
    return stats.variants.comparison_table(records, level)


def _metric_order(metric: str) -> tuple[int, str]:
    return (0, metric) if metric.startswith("seat_") else (1, metric)
