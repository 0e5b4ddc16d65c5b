"""The section "Variant comparison": each rule set against its base (and the sums the
distributions section draws)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from marrakech_sim import plots, stats
from marrakech_sim.report import findings
from marrakech_sim.report.fmt import count, interval, num, p_is, pct, pp, pval
from marrakech_sim.report.load import has_moves, replay_sample, replays, rule_differences
from marrakech_sim.report.pergame import PerGame
from marrakech_sim.report.sections import base
from marrakech_sim.report.sections.base import BaseSection, Context, Figures, Part
from marrakech_sim.report.sections.columns import BLOCKS, GAMES, METRIC, RULESET
from marrakech_sim.report.sections.distributions import (
    DISTRIBUTION_METRICS,
    Distribution,
    distribution_tables,
    score_over_turns,
)
from marrakech_sim.report.sections.samples import make_sample, sample_frames
from marrakech_sim.report.tables import (
    GAME_METRICS,
    TURN_METRICS,
    ReportTables,
    Tables,
    add_sums,
    check_block_layout,
    or_empty,
    sums_frame,
)
from marrakech_sim.stats import estimators
from marrakech_sim.stats.intervals import add_mean_interval
from marrakech_sim.stats.variants import comparison_metrics, seat_metric


def turn_scores_sql(con: duckdb.DuckDBPyConnection, sample: str) -> str:
    """Per (game, turn, seat) score = dirhams + visible squares after the turn (NULL once
    out), of the games in table `sample` (a run that stores only the replay columns has
    those games replayed first: `load.replay_sample`)."""
    replay_sample(con, sample)
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


BLOCK_TABLE = "variant_blocks"  # (block, cell, total, n): kept for pairing


@dataclass
class MetricTotals:
    """Per (rule set, metric): sums of the block totals where the metric has a value.

    These sums are all the variant statistics use (``stats.variant_summary`` and
    ``stats.compare_variants`` reduce per-game metrics to the same block totals). When
    some run is played with common seeds, pairing its blocks by seed needs the blocks
    themselves: they go into the DuckDB table ``BLOCK_TABLE`` on ``con`` (which spills to
    disk), not into this process's memory, and :func:`compare_rulesets` pairs them there.
    """

    players: dict[str, int] = field(default_factory=dict)
    # (ruleset, metric) -> sums of block totals (estimators.SUMS)
    sums: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    con: duckdb.DuckDBPyConnection | None = None  # set: keep the blocks for pairing
    table: str = BLOCK_TABLE  # the DuckDB table of the kept blocks
    # (ruleset, metric) -> its number in BLOCK_TABLE's ``cell`` column
    cell_of: dict[tuple[str, str], int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.con is not None:
            self.con.execute(
                f"CREATE OR REPLACE TEMP TABLE {self.table} "
                "(block BIGINT, cell INTEGER, total DOUBLE, n DOUBLE)"
            )

    def add_blocks(
        self, ruleset: str, metric: str, block: np.ndarray, total: np.ndarray, n: np.ndarray
    ) -> None:
        """Add the block totals of some blocks not added before.

        The sums are taken about the first blocks' mean (``estimators.ratio_sums``'s
        shift): a game's length is large against its spread.
        """
        got = self.sums.get((ruleset, metric))
        shift = float(got["shift"]) if got else float(total.sum() / n.sum())
        sums = {name: v[0] for name, v in estimators.ratio_sums(total, n, shift=shift).items()}
        add_sums(self.sums, (ruleset, metric), {**sums, "shift": shift})
        if self.con is not None:
            cell = self.cell_of.setdefault((ruleset, metric), len(self.cell_of))
            blocks = pa.table(
                {
                    "block": pa.array(block, pa.int64()),
                    "cell": pa.array(np.full(len(block), cell, "int32")),
                    "total": pa.array(total, pa.float64()),
                    "n": pa.array(n, pa.float64()),
                }
            )
            self.con.register("new_blocks", blocks)
            self.con.execute(f"INSERT INTO {self.table} SELECT * FROM new_blocks")
            self.con.unregister("new_blocks")


class VariantTotals:
    """The variant and distribution sections' sums, added slice by slice."""

    def __init__(self, rulesets: list[str], con: duckdb.DuckDBPyConnection | None = None) -> None:
        """``con``: keep every block's totals there, for pairing (:class:`MetricTotals`)."""
        self.rulesets = rulesets
        self.metrics = MetricTotals(con=con)
        self.distributions = {m: Distribution() for m in DISTRIBUTION_METRICS}

    def add(self, pg: PerGame) -> None:
        """Add one slice of whole blocks."""
        if not len(pg):
            return
        check_block_layout(pg)
        add_game_metric_totals(pg, self.metrics)
        for metric, dist in self.distributions.items():
            dist.add(pg, metric)


def add_game_metric_totals(pg: PerGame, out: MetricTotals) -> None:
    """Add the block totals of every metric of ``GAME_METRICS`` per rule set of ``pg``."""
    rc = pg.ruleset.astype("int64")
    group = pg.block_index  # a block holds one rule set (check_block_layout)
    first = np.flatnonzero(np.r_[True, np.diff(group) != 0])
    n_groups = len(first)
    group_rc, group_block, group_players = rc[first], pg.block[first], pg.players[first]
    for r, name in enumerate(pg.rulesets):
        in_r = np.flatnonzero(group_rc == r)
        if len(in_r):
            out.players.setdefault(name, int(group_players[in_r[0]]))
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
                out.add_blocks(name, metric, group_block[sel], total[sel], count[sel])


def variant_tables(
    con: duckdb.DuckDBPyConnection,
    out: ReportTables,
    moves_games: int,
    level: float,
    sums: VariantTotals,
    paired_runs: list[int] | None = None,
    moves_kept_share: bool = False,
) -> None:
    """Per-game metrics -> per-rule-set means, comparisons with Holm, distributions.

    ``paired_runs``: the indices of the runs played with ``common_seeds`` (their variants
    are compared block pair by block pair). ``moves_kept_share``: some run kept the moves
    of a share of its blocks only (``keep_moves``); the per-turn sample then takes the
    games whose moves were kept.
    """
    totals = sums.metrics

    distribution_tables(out, sums.distributions, sums.rulesets)

    # Per-turn metrics from a sample's moves.
    out.facts.moves_games = 0
    if has_moves(con):
        n = make_sample(con, "moves_sample", moves_games, out.facts.n_games)
        if moves_kept_share:  # the games with moves: the kept only, a small share
            con.execute(
                "DELETE FROM moves_sample WHERE turns > 0 AND game_id NOT IN "
                "(SELECT game_id FROM moved_games)"
            )
            got = con.execute("SELECT count(*) FROM moves_sample").fetchone()
            n = int(got[0]) if got else 0
        games, seats = sample_frames(con, "moves_sample")
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE turn_scores AS {turn_scores_sql(con, 'moves_sample')}"
        )
        turn_scores = con.execute("SELECT * FROM turn_scores").df()
        if len(turn_scores):
            out.facts.moves_games = n
            out.facts.moves_sampled = n < out.facts.n_games
            out.facts.moves_replayed = replays(con)
            out.tables.score_over_turns = score_over_turns(con, level)
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
            block_sums = long.groupby(["ruleset", "metric", "block"], as_index=False).agg(
                players=("players", "first"), total=("value", "sum"), n=("value", "size")
            )
            for (ruleset, metric), part in block_sums.groupby(["ruleset", "metric"], sort=True):
                part = part.sort_values("block")
                totals.players.setdefault(str(ruleset), int(part["players"].iloc[0]))
                totals.add_blocks(
                    str(ruleset),
                    str(metric),
                    part["block"].to_numpy(dtype="int64"),
                    part["total"].to_numpy(dtype="float64"),
                    part["n"].to_numpy(dtype="float64"),
                )

    rows = [
        sums_frame({"ruleset": [rs], "metric": [metric]}, got)
        for (rs, metric), got in sorted(totals.sums.items())
        if metric in stats.VARIANT_METRICS
    ]
    columns = ["ruleset", "metric", "total", "n", "n_blocks", "estimate", "var"]
    summary = add_mean_interval(
        pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=columns), level
    )
    players = pd.DataFrame(
        {"ruleset": list(totals.players), "players": list(totals.players.values())}
    ).astype({"ruleset": object, "players": "int64"})  # typed when empty (no mixed games)
    summary = summary.astype({"ruleset": object})
    summary = summary.merge(players, on="ruleset").rename(
        columns={"n": "n_games", "estimate": "mean"}
    )
    summary["n_games"] = summary["n_games"].astype("int64")
    order = {m: i for i, m in enumerate(stats.VARIANT_METRICS)}
    summary = summary.sort_values(
        ["ruleset", "metric"], key=lambda c: c.map(order) if c.name == "metric" else c
    )
    out.tables.variant_summary = summary[
        ["ruleset", "metric", "players", "n_games", "n_blocks", "mean", "se", "lo", "hi"]
    ].reset_index(drop=True)
    out.tables.variant_comparison = compare_rulesets(
        totals, out, level, keyed_blocks(con, paired_runs or [])
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


def keyed_blocks(
    con: duckdb.DuckDBPyConnection, paired_runs: list[int], blocks: str = BLOCK_TABLE
) -> str | None:
    """A table (``keyed_<blocks>``) of the kept blocks of the table ``blocks`` (a
    :class:`MetricTotals`' ``table``) with their cluster key; None: no pairing.

    The games of a block share one seed (run.plan); in a ``common_seeds`` run the blocks
    of every rule set with one seed share their dice, so the seed is their cluster. The
    blocks of other runs are their own cluster (key: the block).
    """
    if not paired_runs:
        return None
    runs = ", ".join(str(int(r)) for r in paired_runs)
    name = f"keyed_{blocks}"
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE {name} AS
            WITH k AS (SELECT block, any_value(CASE WHEN run IN ({runs}) THEN seed
                                                    ELSE block::UBIGINT END) AS key
                       FROM games GROUP BY block)
            SELECT k.key, b.cell, b.total, b.n FROM {blocks} b JOIN k USING (block)"""
    )
    return name


def _paired_squares(
    con: duckdb.DuckDBPyConnection,
    table: str,
    cells: tuple[int, int],
    sums: tuple[dict[str, Any], dict[str, Any]],
) -> tuple[float, int, int]:
    """For ``estimators.clustered_difference_from_clusters``: sum of psi_c^2 over the
    clusters of the blocks of ``cells`` (base, alt: their numbers in ``table``), the
    clusters, and the alt blocks in a cluster the base has too."""
    mean = [estimators.mean_from_sums(s) for s in sums]
    row = con.execute(
        f"""WITH c AS (
                SELECT key,
                       sum(total - ? * n) FILTER (WHERE cell = ?) AS a,
                       sum(total - ? * n) FILTER (WHERE cell = ?) AS b,
                       count(*) FILTER (WHERE cell = ?) AS a_blocks
                FROM {table} WHERE cell IN (?, ?) GROUP BY key)
            SELECT sum(power(coalesce(a, 0) / ? - coalesce(b, 0) / ?, 2)), count(*),
                   coalesce(sum(a_blocks) FILTER (WHERE b IS NOT NULL), 0)
            FROM c""",
        [
            mean[1],
            cells[1],
            mean[0],
            cells[0],
            cells[1],
            *cells,
            *(float(s["n"]) for s in sums[::-1]),
        ],
    ).fetchall()[0]  # an aggregate returns one row (fetched to the end: the result closes)
    return float(row[0] or 0.0), int(row[1]), int(row[2])


def _common_games(
    con: duckdb.DuckDBPyConnection, table: str, cells: tuple[int, int], games: tuple[int, int]
) -> tuple[dict[str, Any], dict[str, Any], float, int] | None:
    """Where a metric has a value in different games of two paired cells (the margin of a
    2-player game that one purse ends in a bankruptcy): the sums of block totals of both
    (base, alt) over the clusters in which every game has a value under both, the sum of
    psi_c^2 over them (``estimators.clustered_difference_from_clusters``) and their
    number; None where every cluster both cells played has a value in as many games under
    each (the metric is then compared on the same games as it is).

    ``games``: the cells of the two rule sets' game lengths, which every game has."""
    sides = {"b": (cells[0], games[0]), "a": (cells[1], games[1])}
    cols = ", ".join(
        f"sum(total) FILTER (WHERE cell = {int(m)}) AS y{s}, "
        f"sum(n) FILTER (WHERE cell = {int(m)}) AS n{s}, "
        f"sum(n) FILTER (WHERE cell = {int(g)}) AS g{s}"
        for s, (m, g) in sides.items()
    )
    wanted = ", ".join(str(int(c)) for c in (*cells, *games))
    per_key = f"SELECT key, {cols} FROM {table} WHERE cell IN ({wanted}) GROUP BY key"
    uneven = con.execute(
        f"SELECT count(*) FROM ({per_key}) WHERE gb IS NOT NULL AND ga IS NOT NULL "
        "AND coalesce(nb, 0) <> coalesce(na, 0)"
    ).fetchall()[0][0]
    if not uneven:
        return None
    common = f"SELECT * FROM ({per_key}) WHERE nb = gb AND na = ga"
    row = con.execute(
        f"""SELECT sum(yb), sum(nb), sum(yb * yb), sum(yb * nb), sum(nb * nb),
                   sum(ya), sum(na), sum(ya * ya), sum(ya * na), sum(na * na), count(*)
            FROM ({common})"""
    ).fetchall()[0]
    keys = int(row[10])
    sums = [
        dict(zip(estimators.SUMS, [float(v or 0.0) for v in row[i : i + 5]] + [keys], strict=True))
        for i in (0, 5)
    ]
    restricted = f"(SELECT * FROM {table} WHERE key IN (SELECT key FROM ({common})))"
    squares, _, _ = _paired_squares(con, restricted, cells, (sums[0], sums[1]))
    return sums[0], sums[1], squares, keys


def difference(
    totals: MetricTotals,
    keyed: str | None,
    base: tuple[str, str],
    alt: tuple[str, str],
    level: float,
) -> dict[str, float]:
    """The mean of cell ``alt`` minus that of ``base`` (each a (ruleset, metric) key of
    ``totals``), ``estimators.clustered_difference``'s columns: blocks clustered by the
    keys of the table ``keyed`` (:func:`keyed_blocks`; None: each block alone), so blocks
    of the two cells that share a seed (``common_seeds``) pair.

    Paired, a metric that has a value in different games under the two rule sets (the
    margin, where one of them ends more games in a bankruptcy) is compared on the seeds
    where every game has one under both (`_common_games`): the change the rule makes to
    the same games, not a change of which games have a value. The result then says so
    (``common_only``) and gives those games (``common_games``, ``common_games_baseline``).
    """
    pair = (totals.sums[base], totals.sums[alt])
    if keyed is None or totals.con is None:  # every block its own cluster
        return estimators.clustered_difference_from_sums(pair[0], pair[1], level)
    cells = (totals.cell_of[base], totals.cell_of[alt])
    lengths = [totals.cell_of.get((side[0], "turns")) for side in (base, alt)]
    # every game of both has a value (a seat's share, the game length): nothing to restrict
    every = all(
        (side[0], "turns") in totals.sums
        and totals.sums[side]["n"] == totals.sums[(side[0], "turns")]["n"]
        for side in (base, alt)
    )
    if not every and lengths[0] is not None and lengths[1] is not None:
        common = _common_games(totals.con, keyed, cells, (lengths[0], lengths[1]))
        if common is not None:
            b, a, squares, keys = common
            res = estimators.clustered_difference_from_clusters(b, a, squares, keys, keys, level)
            return res | {
                "common_only": True,
                "common_games_baseline": b["n"],
                "common_games": a["n"],
            }
    squares, clusters, paired = _paired_squares(totals.con, keyed, cells, pair)
    return estimators.clustered_difference_from_clusters(
        pair[0], pair[1], squares, clusters, paired, level
    )


def compare_rulesets(
    totals: MetricTotals,
    out: ReportTables,
    level: float,
    keyed: str | None = None,
) -> pd.DataFrame:
    """``stats.compare_variants`` from block totals: each rule set against its baseline.

    Blocks are clustered by the keys of the table ``keyed`` (:func:`keyed_blocks`; None:
    each block alone), so the blocks of a rule set and its baseline that share a seed
    (``common_seeds``) pair.
    """
    base_of = baselines(out.tables.rulesets, out.facts.ruleset_options)
    out.facts.baselines = base_of
    metrics = comparison_metrics(sorted({m for _, m in totals.sums}, key=_metric_order))
    records = []
    for other, baseline in sorted(base_of.items()):
        if other == baseline:
            continue
        for metric, family in metrics:
            if (baseline, metric) not in totals.sums or (other, metric) not in totals.sums:
                continue
            pair = (totals.sums[(baseline, metric)], totals.sums[(other, metric)])
            res = difference(totals, keyed, (baseline, metric), (other, metric), level)
            records.append(
                {
                    "family": family,
                    "metric": metric,
                    "baseline": baseline,
                    "ruleset": other,
                    **res,
                    "common_only": bool(res.get("common_only", False)),
                    "n_games_baseline": int(res.get("common_games_baseline", pair[0]["n"])),
                    "n_games": int(res.get("common_games", pair[1]["n"])),
                    "n_blocks_baseline": int(pair[0]["n_blocks"]),
                    "n_blocks": int(pair[1]["n_blocks"]),
                    "defined_share_baseline": _defined_share(totals, baseline, metric),
                    "defined_share": _defined_share(totals, other, metric),
                }
            )
    return stats.variants.comparison_table(records, level)


def _defined_share(totals: MetricTotals, ruleset: str, metric: str) -> float:
    """The share of the rule set's games in which `metric` has a value (every game has a
    length; the margin needs two seats that finish); NaN for the per-turn metrics, read
    from a sample of the games."""
    games = totals.sums.get((ruleset, "turns"))
    if metric in TURN_METRICS or games is None or not games["n"]:  # a sample's: not a share
        return float("nan")
    return float(totals.sums[(ruleset, metric)]["n"]) / float(games["n"])


def _metric_order(metric: str) -> tuple[int, str]:
    return (0, metric) if metric.startswith("seat_") else (1, metric)


# ---------------------------------------------------------------- words and charts


def forest_finding(metric: str, part: pd.DataFrame) -> str:
    """Title for one metric's forest plot, the difference in its unit (pp for shares)."""
    sig = part.loc[part["reject_holm"]]
    name = metric_name(metric)
    if sig.empty:
        return f"{name}: no rule set differs clearly from its baseline"
    r = sig.iloc[int(np.argmax(np.abs(sig["diff"].to_numpy())))]
    diff = float(r["diff"])
    word = "higher" if diff > 0 else "lower"
    amount = (
        f"{abs(100 * diff):.1f} pp"
        if is_share(metric)
        else f"{abs(diff):.2f} {UNITS.get(metric, '')}".strip()
    )
    return (
        f"{name}: {findings.title(r['ruleset'])} {word} than {findings.title(r['baseline'])} "
        f"by {amount}"
    )


def _seat_of(metric: str) -> int | None:
    """The seat of a per-seat win-share metric (seat_2_share: 2), else None."""
    found = re.fullmatch(r"seat_(\d+)_share", metric)
    return int(found.group(1)) if found else None


def metric_name(metric: str) -> str:
    """A variant metric as a chart names it: a seat's share by its player, counted from 1."""
    seat = _seat_of(metric)
    if seat is not None:
        return f"{plots.player_label(seat)}'s win share"
    words = findings.metric_words(metric)[0]
    return words[0].upper() + words[1:] if words != metric else metric


def is_share(metric: str) -> bool:
    """Whether a variant metric is a share (shown in % and pp): `findings.metric_words`."""
    return findings.metric_words(metric)[1] == "pp"


UNITS = {
    "turns": "turns",
    "margin": "points",
    "lead_changes": "lead changes",
    "decided_turn": "turns",
}


def _verdict_of(t: Tables) -> Callable[[Any], str]:
    """A comparison row's verdict in the report's family of findings (read against the
    margin, corrected with every other finding), beside this table's Holm test of 0."""
    found = or_empty(t.findings)
    verdicts: dict[tuple[str, str, str], str] = {}
    if len(found):
        for r in found.loc[found["question"].str.startswith("variant: ")].itertuples():
            verdicts[(str(r.question), str(r.ruleset), str(r.model))] = str(r.verdict)

    def verdict(r: Any) -> str:
        key = (f"variant: {r.metric}", str(r.ruleset), findings.mixed_model(t, str(r.ruleset)))
        return verdicts.get(key, "-")

    return verdict


def _metric(metric: str, x: float) -> str:
    """A per-game metric's mean: shares in percent, a share's excess over the fair share
    (seat_advantage) in percentage points, others as numbers."""
    if metric == "seat_advantage":
        return pp(100 * x, 2)
    return pct(x, 2) if is_share(metric) else num(x, 4)


def _diff(metric: str, x: float) -> str:
    """A difference of a metric: shares in percentage points, others in their unit."""
    if is_share(metric):
        return pp(100 * x, 2)
    return f"{x:+.3g} {UNITS.get(metric, '')}".strip()


class VariantSection(BaseSection):
    """The section "Variant comparison"."""

    name = "variants"
    headings = ("Variant comparison",)
    mix_only = True

    def draw(self, t: Tables, charts: Figures) -> None:
        ruleset_colour = base.ruleset_colours(t)
        comp = t.variant_comparison
        if not comp.empty:
            metrics = list(dict.fromkeys(comp["metric"]))
            per = max(comp.groupby("metric").size().max(), 1)
            fig, axes = base.panels(len(metrics), 1, 8.0, 1.2 + 0.4 * per)
            for ax, metric in zip(axes, metrics, strict=True):
                part = comp.loc[comp["metric"] == metric]
                share = is_share(metric)
                labels = [
                    f"{findings.title(r.ruleset)} vs {findings.title(r.baseline)}\n"
                    f"n={count(r.n_games)}/{count(r.n_games_baseline)}, "
                    f"Holm p{p_is(r.p_holm)}"
                    for r in part.itertuples()
                ]
                plots.plot_forest(
                    part,
                    ax,
                    forest_finding(metric, part),
                    scale=100.0 if share else 1.0,
                    unit="pp" if share else UNITS.get(metric, ""),
                    labels=labels,
                    colours=ruleset_colour,
                )
            # the seats' win shares compare: one x range
            plots.share_x(
                [ax for ax, m in zip(axes, metrics, strict=True) if _seat_of(m) is not None]
            )
            fig.suptitle(
                "Each rule set against its baseline; filled: significant at 5% after Holm "
                "within its family"
            )
            sig = int(comp["reject_holm"].sum())
            charts["variants"] = (
                f"{sig} of {len(comp)} differences significant at 5% after Holm within their "
                "family (the summary's verdicts use its own correction)",
                fig,
            )

    def parts(self, ctx: Context, chart_titles: dict[str, str]) -> list[Part]:
        t, f = ctx.rt.tables, ctx.rt.facts
        s = Part(self.headings[0])
        comp = t.variant_comparison
        moves = (
            " Lead changes, comebacks and the turn decided come from the moves of "
            f"{count(f.moves_games)} games"
            + (" (a sample of whole blocks)" if f.moves_sampled else "")
            + (
                ", their scores after each turn replayed from the actions (a run that stores "
                "only the moves' replay columns)."
                if f.moves_replayed
                else "."
            )
            if f.moves_games
            else " No moves table: no lead changes, comebacks or turn decided."
        )
        s.paragraphs.append(
            "Per rule set, the mean of each per-game metric (seat_advantage: player 1's win "
            "share minus "
            "1/players; margin: winner's score minus runner-up's; bankrupt: any seat went out; "
            "comeback: a winner was behind after half the turns; decided_turn: the turn from which "
            "the winner leads for good; winner_dirhams_share: dirhams' share of the winning score) "
            "and each rule set's difference from the baseline with the same "
            "player count (the one closest to the standard rules), with block-clustered 95% "
            "intervals "
            "and p-values Holm-corrected within each declared family: primary (each seat's win "
            "share, margin, bankruptcy rate, length), secondary (tie-breaks, the winner's dirhams "
            "share, lead changes, comebacks, turn decided), with t intervals on clusters - 1 "
            "degrees of freedom." + moves + base.pooled_levels(t)
        )
        if comp.empty:
            elsewhere = (
                " The rule sets are compared per player model (a strategy in every seat) "
                "in the section on balance per skill level or player model."
                if len(or_empty(t.skill_variants))
                else ""
            )
            s.paragraphs.append(
                "Among the games between different strategies, only one rule set per player "
                "count: nothing to compare here." + elsewhere
            )
        else:
            s.charts += base.charted(chart_titles, "variants")
            s.add_table(
                "Differences from the baseline",
                comp,
                [
                    ("family", lambda r: str(getattr(r, "family", ""))),
                    METRIC,
                    RULESET,
                    ("baseline", lambda r: str(r.baseline)),
                    (
                        "games",
                        lambda r: f"{count(r.n_games)} / {count(r.n_games_baseline)}",
                    ),
                    (
                        "means",
                        lambda r: (
                            f"{_metric(r.metric, r.mean)} vs {_metric(r.metric, r.baseline_mean)}"
                        ),
                    ),
                    (
                        "difference [95%]",
                        lambda r: (
                            f"{_diff(r.metric, r.diff)} "
                            f"{interval(r.lo, r.hi, lambda x: _diff(r.metric, x))}"
                        ),
                    ),
                    ("p (Holm)", lambda r: f"{pval(r.p_value)} ({pval(r.p_holm)})"),
                    ("verdict (Every finding)", _verdict_of(t)),
                ],
            )
        s.add_table(
            "Means per rule set",
            t.variant_summary,
            [
                RULESET,
                METRIC,
                GAMES,
                BLOCKS,
                (
                    "mean [95%]",
                    lambda r: (
                        f"{_metric(r.metric, r.mean)} "
                        f"{interval(r.lo, r.hi, lambda x: _metric(r.metric, x))}"
                    ),
                ),
            ],
        )
        return [s]
