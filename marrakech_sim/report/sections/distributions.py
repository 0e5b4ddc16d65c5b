"""The report's section "Distributions": winning margins, game lengths, score over turns.

Its tables: ``histograms`` and ``distributions`` from exact histograms of each game's margin
and length, added slice by slice (`Distribution`, driven by `sections.variants.VariantTotals`
in the shared pass), and ``score_over_turns`` from the moves' sample the variant section
reads for its per-turn metrics.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from marrakech_sim import plots
from marrakech_sim.report import findings
from marrakech_sim.report.fmt import count, num
from marrakech_sim.report.pergame import PerGame
from marrakech_sim.report.sections import base
from marrakech_sim.report.sections.base import BaseSection, Context, Figures, Part
from marrakech_sim.report.sections.columns import METRIC, RULESET
from marrakech_sim.report.tables import QUANTILES, ReportTables
from marrakech_sim.stats import estimators
from marrakech_sim.stats.intervals import add_mean_interval

DISTRIBUTION_METRICS = ("margin", "turns")


@dataclass
class Distribution:
    """Games per (rule set and players, value) of one metric, and per rule set the counts.

    Attributes:
        group, value, count: the histogram's cells (group: rule set code * 256 + players).
        games, blocks: per rule set code, its balance games and its blocks with a value.
    """

    group: np.ndarray = field(default_factory=lambda: np.zeros(0, "int64"))
    value: np.ndarray = field(default_factory=lambda: np.zeros(0))
    count: np.ndarray = field(default_factory=lambda: np.zeros(0, "int64"))
    games: dict[int, int] = field(default_factory=dict)
    blocks: dict[int, int] = field(default_factory=dict)

    def add(self, pg: PerGame, metric: str) -> None:
        """Add one slice of whole blocks."""
        x = getattr(pg, metric)
        ok = ~np.isnan(x)
        rc = pg.ruleset.astype("int64")
        group = np.r_[self.group, (rc * 256 + pg.players)[ok]]
        value = np.r_[self.value, x[ok]]
        count = np.r_[self.count, np.ones(int(ok.sum()), "int64")]
        order = np.lexsort((value, group))
        group, value, count = group[order], value[order], count[order]
        start = np.flatnonzero(np.r_[True, (np.diff(group) != 0) | (np.diff(value) != 0)])
        start = start[: len(group)]  # no cell at all when no game has a value
        self.group, self.value = group[start], value[start]
        self.count = np.add.reduceat(count, start) if len(start) else count
        for r in np.unique(rc).tolist():
            mine = rc == r
            self.games[r] = self.games.get(r, 0) + int(mine.sum())
            blocks = pg.block_index[mine & ok]
            seen = int(np.count_nonzero(np.diff(blocks)) + 1) if len(blocks) else 0
            self.blocks[r] = self.blocks.get(r, 0) + seen

    def histogram(self, rulesets: list[str], metric: str) -> pd.DataFrame:
        """Games per (rule set, players, value), ordered by rule set, value and players."""
        g, v, n = self.group, self.value, self.count
        order = np.lexsort((g % 256, v, g // 256))
        g, v, n = g[order], v[order], n[order]
        return pd.DataFrame(
            {
                "ruleset": [rulesets[i] for i in g // 256],
                "players": (g % 256).astype("int8"),
                "metric": metric,
                "value": v.astype("float64"),
                "n_games": n.astype("int64"),
            }
        )

    def summaries(self, rulesets: list[str], metric: str) -> pd.DataFrame:
        """``stats.summarize`` of the metric per rule set: counts, mean, sd, quantiles.

        From the histogram: exact, quantiles interpolated as ``np.quantile`` does.
        """
        rows = []
        for r, name in enumerate(rulesets):
            if r not in self.games:
                continue  # a rule set with error games only
            mine = self.group // 256 == r
            value, count = self.value[mine], self.count[mine]
            order = np.argsort(value, kind="stable")
            value, count = value[order], count[order]
            if len(value):  # the rule set's cells of every player count, merged
                start = np.flatnonzero(np.r_[True, np.diff(value) != 0])
                value, count = value[start], np.add.reduceat(count, start)
            n = int(count.sum())
            mean = float(count @ value) / n if n else np.nan
            row: dict[str, Any] = {
                "ruleset": name,
                "metric": metric,
                "n": n,
                "n_missing": self.games[r] - n,
                "n_blocks": self.blocks[r],
                "mean": mean,
                "sd": float(np.sqrt(count @ (value - mean) ** 2 / (n - 1))) if n > 1 else np.nan,
                "min": float(value[0]) if n else np.nan,
            }
            qs = histogram_quantiles(value, count, QUANTILES)
            row.update({f"q{q * 100:g}": float(val) for q, val in zip(QUANTILES, qs, strict=True)})
            row["max"] = float(value[-1]) if n else np.nan
            rows.append(row)
        quantiles = [f"q{q * 100:g}" for q in QUANTILES]
        columns = ["ruleset", "metric", "n", "n_missing", "n_blocks", "mean", "sd", "min"]
        return pd.DataFrame.from_records(rows, columns=[*columns, *quantiles, "max"])


def histogram_quantiles(
    value: np.ndarray, count: np.ndarray, quantiles: tuple[float, ...]
) -> np.ndarray:
    """``np.quantile`` (linear interpolation) of the values a histogram counts.

    ``value`` ascending; the i-th smallest of the n values is found by cumulative count.
    """
    n = int(count.sum())
    if not n:
        return np.full(len(quantiles), np.nan)
    q = np.asarray(quantiles, dtype="float64")
    virtual = q * (n - 1)
    below = np.floor(virtual).astype("int64")
    above = np.minimum(below + 1, n - 1)
    ends = np.cumsum(count)
    a = value[np.searchsorted(ends, below, side="right")]
    b = value[np.searchsorted(ends, above, side="right")]
    t = virtual - below
    diff = b - a
    # numpy's _lerp: from the nearer end, so the result stays monotone
    between: np.ndarray = np.where(t >= 0.5, b - diff * (1 - t), a + diff * t)
    return between


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


def distribution_tables(
    out: ReportTables, dists: dict[str, Distribution], rulesets: list[str]
) -> None:
    """Margins and lengths: exact histograms, and summaries like stats.summarize."""
    out.tables.histograms = pd.concat(
        [d.histogram(rulesets, m) for m, d in dists.items()], ignore_index=True
    )
    out.tables.distributions = pd.concat(
        [d.summaries(rulesets, m) for m, d in dists.items()], ignore_index=True
    )


# ---------------------------------------------------------------- words and charts


def distribution_finding(summary: pd.DataFrame, metric: str) -> str:
    """Title for a distribution chart: medians and the middle 90% per rule set."""
    part = summary.loc[summary["metric"] == metric]
    meds = "; ".join(
        f"{findings.title(r.ruleset)} {r.q50:g} ({r.q5:g}-{r.q95:g})" for r in part.itertuples()
    )
    noun = {"margin": "Winning margin", "turns": "Game length"}.get(metric, metric)
    return f"{noun}, median (5%-95%): {meds}"


def score_finding(part: pd.DataFrame, ruleset: str, players: int) -> str:
    """Title for one score-over-turns panel: who leads at the last turn drawn, and how surely.

    The mean score is not the win share (a seat can score more on average and win less
    often), so the title reports the scores and whether their intervals separate.
    """
    last_turn = int(part["turn"].max())
    last = part.loc[part["turn"] == last_turn].sort_values("mean", ascending=False)
    top, rest = last.iloc[0], last.iloc[1:]
    clear = bool(len(rest)) and bool((top["lo"] > rest["hi"]).all())
    lead = (
        f"{plots.player_label(top.seat)} ahead"
        if clear
        else f"no player clearly ahead ({plots.player_label(top.seat)} highest, intervals overlap)"
    )
    return (
        f"{findings.group_title(ruleset, players)}, after turn {last_turn}: mean scores "
        f"{last['mean'].min():.1f}-{top['mean']:.1f}; {lead}"
    )


class DistributionSection(BaseSection):
    """The section "Distributions"."""

    name = "distributions"
    headings = ("Distributions",)
    mix_only = True
    intro = (
        "Final score margins (the winner's score minus the runner-up's; 0 for a shared win), "
        "game lengths, and each seat's score (dirhams + visible squares) after every turn. A "
        "game whose runner-up went bankrupt (with 2 players the game ends at the first "
        "bankruptcy) has no runner-up score and so no points margin: the margin chart shows "
        "those games as a bar of their own at the right, and the summaries below count the "
        "games with a points margin ('games') and those without ('no margin'). Game lengths "
        "are drawn on a log scale: nearly every game lasts until the rugs run out, and the "
        "log scale shows the shorter games bankruptcy ends."
    )

    def figures(self, rt: ReportTables) -> Figures:
        t = rt.tables
        charts: Figures = {}

        ruleset_colour = base.ruleset_colours(t)
        players_of = base.players_of(t)
        hist, dist = t.histograms, t.distributions
        order = sorted(hist["ruleset"].unique(), key=lambda r: (-players_of.get(r, 0), r))
        margins = hist.loc[hist["metric"] == "margin"]
        if not margins.empty:
            missing = (
                dist.loc[dist["metric"] == "margin"].set_index("ruleset")["n_missing"]
                if "n_missing" in dist
                else pd.Series(dtype=float)
            )
            fig, axes = base.panels(len(order), 2, 5.0, 3.3)
            # one x range for every panel: from the least margin to the largest 99% point
            parts = [margins.loc[margins["ruleset"] == ruleset] for ruleset in order]
            span = (
                float(margins["value"].min()),
                max(plots.clip_top(part, 0.99) for part in parts if len(part)),
            )
            bankrupt = bool((missing > 0).any())
            for ax, ruleset, part in zip(axes, order, parts, strict=True):
                row = dist.loc[(dist["metric"] == "margin") & (dist["ruleset"] == ruleset)]
                n_out = float(missing.get(ruleset, 0.0))
                known = len(row) and pd.notna(row["q50"].iloc[0])  # none: all bankrupt
                med = f"median {row['q50'].iloc[0]:g} points" if known else "no margin"
                plots.plot_distribution(
                    part,
                    ax,
                    "winner's score minus runner-up's, points",
                    f"{findings.title(ruleset)}, {players_of.get(ruleset, '?')} players: {med}",
                    extra={ruleset: ("runner-up\nbankrupt", n_out)} if bankrupt else None,
                    colours=ruleset_colour,
                    span=span,
                )
            title = distribution_finding(dist, "margin")
            fig.suptitle(
                "Winning margins; hatched: games whose runner-up went bankrupt (no margin)"
            )
            charts["dist_margin"] = (title, fig)
        turns = hist.loc[hist["metric"] == "turns"]
        if not turns.empty:
            title = distribution_finding(dist, "turns")
            fig = plots.new_figure(8, 4.0)
            plots.plot_distribution(
                turns, fig.add_subplot(), "turns played", title, log=True, colours=ruleset_colour
            )
            charts["dist_turns"] = (title, fig)
        if t.score_over_turns is not None:
            sot = t.score_over_turns
            groups = list(sot.groupby(["ruleset", "players"], sort=True))
            fig, axes = base.panels(len(groups), 2, 5.5, 3.8)
            for ax, ((ruleset, players), part) in zip(axes, groups, strict=True):
                # turns most games reach: later turns are a subset of long games, not the field
                fewest = part.groupby("turn")["n_games"].transform("min")
                reached = part.loc[fewest >= 0.9 * part["n_games"].max()]
                plots.plot_score_over_turns(
                    reached, ax, score_finding(reached, ruleset, int(players)), band=("lo", "hi")
                )
            n = rt.facts.moves_games
            fig.suptitle(
                f"Mean score after each turn with its 95% interval, over the turns 90% of games "
                f"reach (n={count(n)} games)"
            )
            charts["score_over_turns"] = ("Score over turns per seat", fig)
        return charts

    def parts(self, ctx: Context, chart_titles: dict[str, str]) -> list[Part]:
        t = ctx.rt.tables
        s = self.opening()
        s.charts += base.charted(chart_titles, "dist_margin", "dist_turns", "score_over_turns")
        s.add_table(
            "Summaries",
            t.distributions,
            [
                RULESET,
                METRIC,
                ("games", lambda r: count(r.n)),
                ("no margin", lambda r: count(getattr(r, "n_missing", 0))),
                ("mean", lambda r: num(r.mean, 4)),
                ("sd", lambda r: num(r.sd, 3)),
                (
                    "min / 5% / 25% / median / 75% / 95% / max",
                    lambda r: " / ".join(
                        f"{getattr(r, c):g}"
                        for c in ("min", "q5", "q25", "q50", "q75", "q95", "max")
                    ),
                ),
            ],
        )
        return [s]
