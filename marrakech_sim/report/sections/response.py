"""Report section: response curves of a sweep, each seat's effect against the swept value.

A run played with a ``[sweep]`` (run.sweep) keeps its points in its manifest: which rule
set is which value of which base. For each curve - one base rule set, one player model
(a strategy in every seat, or the study's mix of line-ups) and, in a two-option grid, one
value of the second option - this section computes from the games:

* each seat's win share at every value, its effect (share minus the fair share, pp) with
  block-clustered intervals (the seat advantage section's estimator);
* the fitted curve of each seat's share and its band (``stats.response.fit_response``: a
  binomial GLM, quadratic in the value, cluster-robust on the seeds the values share);
* per value: game length, bankruptcy rate, winning margin and decisiveness (the turn
  from which the winner leads for good, from the moves of a sample of whole blocks);
* one sentence: where the seats are fairest, whether some value in the range makes every
  seat fair within ``[report] matters_pp``, and what that value costs.

The die_faces option has named lists for values, without an order: its points get no
curve, and the sentence speaks of the points.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from marrakech_sim import plots, stats
from marrakech_sim.report.fmt import count, interval, pct, pp, signed
from marrakech_sim.report.load import RunInfo, has_moves
from marrakech_sim.report.sections.base import BaseSection, Context, Figures, Part
from marrakech_sim.report.sections.samples import sample_frames
from marrakech_sim.report.sections.variants import turn_scores_sql
from marrakech_sim.report.tables import ReportTables, or_empty
from marrakech_sim.stats import estimators
from marrakech_sim.stats.intervals import add_mean_interval, add_rate_interval
from marrakech_sim.stats.response import fit_seat_curves

#: games per point (whole blocks) whose moves give the decisiveness
DECIDED_GAMES_PER_POINT = 2000
MIX = "(mix)"  # the level of games whose seats hold different strategies
METRICS = ("turns", "bankrupt", "margin", "decided_turn")
UNITS = {"turns": "turns", "bankrupt": "fraction", "margin": "points", "decided_turn": "turns"}
METRIC_WORDS = {
    "turns": ("game length", "turns"),
    "bankrupt": ("games with a bankruptcy", "%"),
    "margin": ("winning margin", "points"),
    "decided_turn": ("decided at turn", "turn"),
}


@dataclass(frozen=True, slots=True)
class _Point:
    ruleset: str  # the label the report gives it
    base: str
    keys: tuple[str, ...]
    values: tuple[Any, ...]
    title: str


def sweep_points(runs: list[RunInfo]) -> pd.DataFrame:
    """The swept rule sets of the runs: ruleset (label), base, x_key, x, series_key,
    series, title. x is the first ordered option (not die_faces) when there is one."""
    rows = []
    for run in runs:
        config = run.manifest.config
        sweep = config.get("sweep") if isinstance(config, dict) else None
        if not isinstance(sweep, dict) or not isinstance(sweep.get("points"), dict):
            continue
        for name, entry in sweep["points"].items():
            values = entry.get("values", {}) if isinstance(entry, dict) else {}
            if not isinstance(values, dict) or not values:
                continue
            keys = list(values)
            ordered = [k for k in keys if k != "die_faces"]
            x_key = ordered[0] if ordered else keys[0]
            rest = [k for k in keys if k != x_key]
            rows.append(
                {
                    "ruleset": run.ruleset_labels.get(name, name),
                    "base": str(entry.get("base", "")),
                    "x_key": x_key,
                    "x_value": values[x_key],
                    "series_key": rest[0] if rest else "",
                    "series": f"{rest[0]}={values[rest[0]]}" if rest else "",
                    "title": str(entry.get("title", name)),
                }
            )
    out = pd.DataFrame(
        rows, columns=["ruleset", "base", "x_key", "x_value", "series_key", "series", "title"]
    )
    out = out.drop_duplicates("ruleset").reset_index(drop=True)
    # an ordered option's values are numbers; die_faces' names take their order of listing
    out["ordered"] = out["x_key"] != "die_faces"
    out["x"] = np.nan
    for key, part in out.groupby("x_key", sort=False):
        if key == "die_faces":
            names = list(dict.fromkeys(part["x_value"].astype(str)))
            out.loc[part.index, "x"] = [float(names.index(str(v))) for v in part["x_value"]]
        else:
            out.loc[part.index, "x"] = part["x_value"].astype("float64")
    return out


def response_tables(
    con: duckdb.DuckDBPyConnection, out: ReportTables, runs: list[RunInfo], level: float
) -> None:
    """The section's tables (none when no run is a sweep): response_points (each seat at
    each value), response_curves (each seat's fitted curve) and response_metrics (the
    per-game metrics at each value)."""
    points = sweep_points(runs)
    if points.empty:
        return
    con.register("response_names", points[["ruleset"]])
    con.execute(
        """CREATE OR REPLACE TEMP TABLE response_games AS
           WITH per_game AS (
               SELECT g.game_id, any_value(g.run) AS run, any_value(g.seed) AS seed,
                      any_value(g.block) AS block, any_value(g.match_id) AS match_id,
                      any_value(g.ruleset) AS ruleset, any_value(g.players) AS players,
                      any_value(g.turns)::DOUBLE AS turns,
                      CASE WHEN min(s.strategy) = max(s.strategy) THEN min(s.strategy)
                           ELSE '(mix)' END AS level,
                      bool_or(s.score IS NULL)::DOUBLE AS bankrupt,
                      list_sort(list(s.score::DOUBLE) FILTER (WHERE s.score IS NOT NULL),
                                'DESC') AS top
               FROM games g JOIN seats s USING (game_id)
               WHERE g.end_reason <> 'error'
                 AND g.ruleset IN (SELECT ruleset FROM response_names)
               GROUP BY g.game_id)
           SELECT * EXCLUDE (top), top[1] - top[2] AS margin FROM per_game"""
    )
    con.unregister("response_names")
    # a cell is one (rule set, level): the per-block rows carry its number, and the names
    # join them as categories (a sweep of millions of games has millions of block rows)
    cells = con.execute(
        """SELECT (dense_rank() OVER (ORDER BY ruleset, level) - 1)::INTEGER AS cell,
                  ruleset, level, players
           FROM (SELECT DISTINCT ruleset, level, players FROM response_games)"""
    ).df()
    if cells.empty:
        return
    con.register("response_cells", cells[["cell", "ruleset", "level"]])
    seat_blocks = con.execute(
        """SELECT c.cell, r.run, r.seed, r.block, s.seat,
                  sum(s.win_share::DOUBLE) AS y, count(*)::DOUBLE AS n
           FROM response_games r JOIN response_cells c USING (ruleset, level)
                JOIN seats s USING (game_id)
           GROUP BY c.cell, r.run, r.seed, r.block, s.seat"""
    ).df()
    game_blocks = con.execute(
        """SELECT c.cell, r.block, count(*)::DOUBLE AS games,
                  sum(r.turns) AS turns, sum(r.bankrupt) AS bankrupt,
                  sum(r.margin) AS margin, count(r.margin)::DOUBLE AS margin_n
           FROM response_games r JOIN response_cells c USING (ruleset, level)
           GROUP BY c.cell, r.block"""
    ).df()
    con.unregister("response_cells")
    info = cells.merge(points.assign(x_value=points["x_value"].astype(str)), on="ruleset")
    for col in ("ruleset", "level", "base", "x_key", "x_value", "series_key", "series", "title"):
        info[col] = info[col].astype("category")
    seat_blocks = seat_blocks.merge(info, on="cell")
    game_blocks = game_blocks.merge(info[["cell", "ruleset", "level"]], on="cell")
    out.tables.response_points = _seat_points(seat_blocks, level)
    out.tables.response_curves, out.tables.response_fits = _curves(seat_blocks, level)
    decided = _decided_blocks(con) if has_moves(con) else pd.DataFrame()
    out.tables.response_metrics = _metrics(game_blocks, decided, points, level)


def _seat_points(blocks: pd.DataFrame, level: float) -> pd.DataFrame:
    """Each seat's win share and effect at each value, block-clustered (as section 3)."""
    keys = ["base", "level", "series", "ruleset", "x_key", "x", "x_value", "players", "seat"]
    rows = []
    for key, part in blocks.groupby(keys, sort=True, dropna=False, observed=True):
        sums = estimators.ratio_sums(part["y"], part["n"])
        ratio = estimators.ratio_from_sums(*(sums[c] for c in estimators.SUMS))
        rows.append({**dict(zip(keys, key, strict=True)), **{k: v[0] for k, v in ratio.items()}})
    tab = add_rate_interval(pd.DataFrame(rows), level)
    # the joint intervals: Bonferroni over the curve's seats and values, so that claims
    # read from the points ("fair at X", "fairest at X") hold together at `level`
    joint = []
    for _, part in tab.groupby(["base", "level", "series", "players"], sort=False, observed=True):
        claims = part["seat"].nunique() * part["x"].nunique()
        joint.append(add_rate_interval(part, 1.0 - (1.0 - level) / claims)[["lo", "hi"]])
    tab[["joint_lo", "joint_hi"]] = pd.concat(joint).reindex(tab.index).to_numpy()
    fair = 1.0 / tab["players"]
    tab["n_games"] = tab["n"].astype("int64")
    tab["share"] = tab["estimate"]
    for col, src in (
        ("effect_pp", "share"),
        ("effect_lo_pp", "lo"),
        ("effect_hi_pp", "hi"),
        ("joint_lo_pp", "joint_lo"),
        ("joint_hi_pp", "joint_hi"),
    ):
        tab[col] = 100.0 * (tab[src] - fair)
    cols = [*keys, "n_games", "n_blocks", "share", "effect_pp", "effect_lo_pp", "effect_hi_pp"]
    cols += ["joint_lo_pp", "joint_hi_pp"]
    return tab[cols].sort_values(["base", "level", "series", "x", "seat"]).reset_index(drop=True)


CURVE_KEYS = ["base", "level", "series", "players"]


def _curves(blocks: pd.DataFrame, level: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each curve's seats fitted together (stats.response.fit_seat_curves; ordered options
    only): the fitted shares with the pointwise and the simultaneous band, and one row per
    curve with its lack-of-fit test and the fairest value's interval."""
    parts, fits = [], []
    ordered = blocks.loc[blocks["ordered"]]
    for key, part in ordered.groupby(CURVE_KEYS, sort=True, observed=True):
        players = int(key[3])
        data = pd.DataFrame(
            {
                "seat": part["seat"].to_numpy(),
                "x": part["x"].to_numpy(),
                # a cluster: the games of every value played from one seed of one run
                "cluster": part.groupby(["run", "seed"], sort=False).ngroup().to_numpy(),
                "y": part["y"].to_numpy(),
                "n": part["n"].to_numpy(),
            }
        )
        fair = 1.0 / players
        fit = fit_seat_curves(data, fair, level)
        c = fit.curves
        head = dict(zip(CURVE_KEYS, (*key[:3], players), strict=True))
        parts.append(
            pd.DataFrame(head, index=c.index).assign(
                seat=c["seat"].astype("int64"),
                x=c["x"],
                share=c["share"],
                effect_pp=100.0 * (c["share"] - fair),
                effect_lo_pp=100.0 * (c["lo"] - fair),
                effect_hi_pp=100.0 * (c["hi"] - fair),
                band_lo_pp=100.0 * (c["band_lo"] - fair),
                band_hi_pp=100.0 * (c["band_hi"] - fair),
            )
        )
        worst = fit.seats.loc[fit.seats["lack_p"].notna()]
        fits.append(
            head
            | {
                "values": int(data["x"].nunique()),
                "fitted": fit.fitted,
                "lack_df": int(fit.seats["lack_df"].iloc[0]) if len(fit.seats) else 0,
                "lack_chi2": float(worst["lack_chi2"].max()) if len(worst) else np.nan,
                "lack_p": fit.lack_p,
                "band_crit": fit.crit,
                "fairest_x": fit.fairest,
                "fairest_lo": fit.fairest_lo,
                "fairest_hi": fit.fairest_hi,
            }
        )
    columns = [*CURVE_KEYS, "seat", "x", "share", "effect_pp", "effect_lo_pp", "effect_hi_pp"]
    columns += ["band_lo_pp", "band_hi_pp"]
    curves = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)
    fit_columns = [*CURVE_KEYS, "values", "fitted", "lack_df", "lack_chi2", "lack_p"]
    fit_columns += ["band_crit", "fairest_x", "fairest_lo", "fairest_hi"]
    return curves[columns], pd.DataFrame(fits, columns=fit_columns)


def _decided_blocks(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Per (rule set, level, block): the sum and count of decided_turn over a sample of
    whole blocks, about DECIDED_GAMES_PER_POINT games per rule set and level."""
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE response_sample AS
            WITH sizes AS (SELECT ruleset, level, count(*) / count(DISTINCT block) AS per_block
                           FROM response_games GROUP BY ruleset, level),
                 ranked AS (SELECT r.*, dense_rank() OVER (PARTITION BY r.ruleset, r.level
                                                          ORDER BY r.block) AS i,
                                   s.per_block
                            FROM response_games r JOIN sizes s USING (ruleset, level))
            SELECT g.game_id, g.block, g.match_id, g.ruleset, g.players, g.turns, g.end_reason,
                   g.tie_broken, g.error, k.level
            FROM games g JOIN ranked k USING (game_id)
            WHERE k.i * k.per_block <= {DECIDED_GAMES_PER_POINT} OR k.i = 1"""
    )
    turn_scores = con.execute(turn_scores_sql(con, "response_sample")).df()
    games, seats = sample_frames(con, "response_sample")
    if games.empty or turn_scores.empty:
        return pd.DataFrame()
    lead = stats.lead_metrics(turn_scores, games, seats)
    levels = con.execute("SELECT game_id, level FROM response_sample").df()
    frame = games.merge(levels, on="game_id").set_index("game_id")
    frame["decided_turn"] = lead["decided_turn"].reindex(frame.index)
    frame = frame.loc[frame["decided_turn"].notna()]
    return (
        frame.groupby(["ruleset", "level", "block"])["decided_turn"]
        .agg(decided_turn="sum", decided_turn_n="count")
        .reset_index()
    )


def _metrics(
    game_blocks: pd.DataFrame, decided: pd.DataFrame, points: pd.DataFrame, level: float
) -> pd.DataFrame:
    """Per value: mean length, bankruptcy rate, mean margin, mean decided turn, each with
    its block-clustered interval."""
    rows = []
    sources: list[tuple[str, pd.DataFrame, str, str]] = [
        ("turns", game_blocks, "turns", "games"),
        ("bankrupt", game_blocks, "bankrupt", "games"),
        ("margin", game_blocks, "margin", "margin_n"),
    ]
    if not decided.empty:
        sources.append(("decided_turn", decided, "decided_turn", "decided_turn_n"))
    for metric, table, ycol, ncol in sources:
        for (ruleset, lv), part in table.groupby(["ruleset", "level"], sort=True, observed=True):
            part = part.loc[part[ncol] > 0]
            if part.empty:
                continue
            sums = estimators.ratio_sums(part[ycol], part[ncol])
            ratio = estimators.ratio_from_sums(*(sums[c] for c in estimators.SUMS))
            rows.append(
                {"ruleset": ruleset, "level": lv, "metric": metric}
                | {k: v[0] for k, v in ratio.items()}
            )
    if not rows:
        return pd.DataFrame()
    tab = pd.DataFrame(rows)
    rate = tab["metric"] == "bankrupt"
    parts = [add_rate_interval(tab.loc[rate], level), add_mean_interval(tab.loc[~rate], level)]
    tab = pd.concat([p for p in parts if len(p)], ignore_index=True)
    where = points[["ruleset", "base", "series", "x", "x_value"]]
    tab = tab.merge(where.assign(x_value=where["x_value"].astype(str)), on="ruleset")
    tab = tab.rename(columns={"estimate": "mean", "n": "n_games"})
    tab["unit"] = tab["metric"].map(UNITS)
    cols = ["base", "level", "series", "ruleset", "x", "x_value", "metric", "unit"]
    cols += ["n_games", "n_blocks", "mean", "lo", "hi"]
    return tab[cols].sort_values(["base", "level", "series", "metric", "x"]).reset_index(drop=True)


# ---------------------------------------------------------------- verdicts


#: a curve whose lack-of-fit test (Bonferroni over its seats) rejects at this level is
#: not read: the verdict reads the points
LACK_OF_FIT_ALPHA = 0.05


def curve_verdicts(rt: ReportTables, matters_pp: float) -> pd.DataFrame:
    """One row per curve: where the seats are fairest, whether some value makes every
    seat fair within +-matters_pp, and the game at the swept value nearest to it.

    The claims of a curve hold together: read from the fitted curves, through the
    simultaneous band (every seat and value at once), and only where the quadratic passes
    its lack-of-fit test; otherwise read from the points, through their joint intervals
    (Bonferroni over the curve's seats and values)."""
    t = rt.tables
    pts = or_empty(t.response_points)
    if pts.empty:
        return pd.DataFrame()
    curves = or_empty(t.response_curves)
    fits = or_empty(t.response_fits)
    metrics = or_empty(t.response_metrics)
    rows = []
    for (base, lv, series), part in pts.groupby(["base", "level", "series"], sort=True):
        fit = _curve(fits, base, lv, series)
        curve = _curve(curves, base, lv, series)
        defined = len(fit) == 1 and bool(fit["fitted"].iloc[0])
        lack_p = float(fit["lack_p"].iloc[0]) if len(fit) == 1 else np.nan
        fitted = defined and not lack_p < LACK_OF_FIT_ALPHA
        if fitted:
            source = curve.rename(columns={"band_lo_pp": "lo", "band_hi_pp": "hi"})
        else:  # named dice, a fit that failed or a curve that does not fit: the points
            source = part.rename(columns={"joint_lo_pp": "lo", "joint_hi_pp": "hi"})
        largest = source.assign(abs_pp=source["effect_pp"].abs()).groupby("x")["abs_pp"].max()
        x_best = float(fit["fairest_x"].iloc[0]) if fitted else float(largest.idxmin())
        tied = _not_told_apart(source, float(largest.idxmin()))
        at_best = source.loc[np.isclose(source["x"], x_best)]
        lo, hi = source["lo"], source["hi"]
        inside = source.assign(ok=(lo >= -matters_pp) & (hi <= matters_pp)).groupby("x")["ok"].all()
        # some seat's whole interval beyond the margin, at every value of the range
        outside = source.assign(out=(lo > matters_pp) | (hi < -matters_pp)).groupby("x")["out"]
        fair_xs = inside.index[inside.to_numpy()].to_numpy(dtype="float64")
        seat_worst = at_best.loc[at_best["effect_pp"].abs().idxmax()]
        nearest = part.iloc[int(np.argmin(np.abs(part["x"].to_numpy() - x_best)))]
        rows.append(
            {
                "base": base,
                "level": lv,
                "series": series,
                "players": int(part["players"].iloc[0]),
                "x_key": str(part["x_key"].iloc[0]),
                "values": int(part["x"].nunique()),
                "fitted": fitted,
                "lack_p": lack_p,
                "fairest_x": x_best,
                "fairest_tied": "" if fitted else " ".join(f"{v:g}" for v in tied),
                "fairest_lo": float(fit["fairest_lo"].iloc[0]) if fitted else np.nan,
                "fairest_hi": float(fit["fairest_hi"].iloc[0]) if fitted else np.nan,
                "largest_effect_pp": float(largest.min()),
                "largest_seat": int(seat_worst["seat"]),
                "largest_lo_pp": float(seat_worst["lo"]),
                "largest_hi_pp": float(seat_worst["hi"]),
                "fair_from": float(fair_xs.min()) if len(fair_xs) else np.nan,
                "fair_to": float(fair_xs.max()) if len(fair_xs) else np.nan,
                "fair_whole": _contiguous(inside),
                "all_fair_at_best": bool(inside.get(x_best, False)),
                "unfair_everywhere": bool(outside.any().all()),
                "nearest_ruleset": str(nearest["ruleset"]),
                "nearest_x_value": nearest["x_value"],
                "matters_pp": matters_pp,
                "sentence": "",
            }
        )
    verdicts = pd.DataFrame(rows)
    verdicts["sentence"] = [_sentence(r, metrics, pts) for r in verdicts.itertuples(index=False)]
    return verdicts


def _not_told_apart(source: pd.DataFrame, best: float) -> list[float]:
    """The swept values (best first, then in order) that the joint intervals do not show
    less fair than `best`: those where no seat's interval lies wholly further from 0 than
    every seat's interval at `best` reaches (their largest effect could be as small as
    best's could be large). Values that play the very same games (a purse nobody runs out
    of) are among them."""
    lo, hi = source["lo"].to_numpy(), source["hi"].to_numpy()
    least = np.where((lo <= 0) & (hi >= 0), 0.0, np.minimum(np.abs(lo), np.abs(hi)))
    most = np.maximum(np.abs(lo), np.abs(hi))
    frame = source.assign(least=least, most=most).groupby("x")
    reach = float(frame["most"].max().loc[best])
    floor = frame["least"].max()
    others = [float(x) for x in floor.index if x != best and floor.loc[x] <= reach]
    return [best, *others]


def _contiguous(inside: pd.Series) -> bool:
    """Whether the values where every seat is fair form one stretch of the range (no
    value between the first and the last fair one is left out)."""
    where = np.flatnonzero(inside.to_numpy())
    return bool(len(where)) and bool(where[-1] - where[0] + 1 == len(where))


def _x_words(key: str, x: Any, pts: pd.DataFrame) -> str:
    """A value of a swept option in words ('player 4's purse 32'; named dice by name)."""
    if key == "die_faces":
        if isinstance(x, str):
            return f"die {x}"
        names = pts.loc[(pts["x_key"] == key) & (pts["x"] == x), "x_value"]
        return f"die {next(iter(names), x)!s}"
    # a value of the fitted curve's grid need not be a whole number: one decimal then, so
    # that the sentence names the value it measured, not a neighbour
    value = f"{x:.0f}" if float(x).is_integer() else f"{x:.1f}"
    if key.startswith("seat_dirhams."):
        return f"player {int(key.split('.', 1)[1]) + 1}'s purse {value}"
    return f"{key.replace('_', ' ')} {value}"


def _series_words(series: str, pts: pd.DataFrame) -> str:
    """', rugs per colour 12' for the series 'rugs_per_colour=12' of a grid; '' for none."""
    if not series:
        return ""
    key, _, value = str(series).partition("=")
    return ", " + _x_words(key, value if key == "die_faces" else float(value), pts)


def _sentence(r: Any, metrics: pd.DataFrame, info: pd.DataFrame) -> str:
    key = r.x_key
    who = "the study's mix of line-ups" if r.level == MIX else f"{r.level} in every seat"
    series = _series_words(r.series, info)
    head = f"{r.base} ({r.players} players), {who}{series}: "
    m = f"{r.matters_pp:g} pp"
    where = _x_words(key, r.fairest_x, info)
    label = plots.player_label(r.largest_seat)
    seats = r.players
    xs = _curve(info, r.base, r.level, r.series)["x"]
    if r.fitted:
        how = (
            "by the fitted curves (the lack-of-fit test does not reject the quadratic: "
            f"p = {r.lack_p:.2g})"
            if not np.isnan(r.lack_p)
            else f"by the fitted curves (with {r.values} values the curve passes through the "
            f"points; between them it is the {'line' if r.values == 2 else 'quadratic'}'s "
            "reading)"
        )
        whole = r.fairest_lo <= xs.min() and r.fairest_hi >= xs.max()
        located = (
            " (the data do not locate it: its 95% interval spans the whole range)"
            if whole
            else f" (95% interval {r.fairest_lo:.0f} to {r.fairest_hi:.0f})"
        )
        inside = "every seat's simultaneous band inside"
        band = "band"
        among = ""
    else:
        how = (
            f"the quadratic does not fit the points (lack of fit p = {r.lack_p:.2g}), so "
            "by the measured points"
            if not np.isnan(r.lack_p)
            else "by the measured points"
        )
        tied = [float(v) for v in str(r.fairest_tied).split()]
        located = ""
        among = " among the swept values"
        if len(tied) > 1:
            where = _x_words(key, tied[0], info)
            others = ", ".join(_x_words(key, v, info).rsplit(" ", 1)[-1] for v in tied[1:])
            where += (
                f" by the estimates, but the joint intervals do not tell it from {others} "
                "(none of those is shown less fair)"
            )
        inside = (
            f"every seat's joint interval inside (Bonferroni over {seats} seats and "
            f"{r.values} values)"
        )
        band = "joint interval"
    low, high = np.isclose(r.fairest_x, xs.min()), np.isclose(r.fairest_x, xs.max())
    if low or high:  # the fairest value may lie beyond the range
        edge = (
            f"the {'lowest' if low else 'highest'} value swept: values "
            f"{'below' if low else 'above'} it were not played"
        )
        located = f"{located[:-1]}; {edge})" if located else f" ({edge})"
    body = (
        f"{how}, the seats are fairest{among} at {where}{located}, where the largest "
        f"seat effect is {label}'s {pp(_signed_largest(r))} ({band} "
        f"{interval(r.largest_lo_pp, r.largest_hi_pp)})"
    )
    span = ""
    if not np.isnan(r.fair_from):
        span = (
            f"from {_x_words(key, r.fair_from, info)} to {_x_words(key, r.fair_to, info)}"
            if r.fair_whole
            else f"at some values between {_x_words(key, r.fair_from, info)} and "
            f"{_x_words(key, r.fair_to, info)}, not all"
        )
    if r.all_fair_at_best:
        also = f", as it is {span}" if r.fair_from < r.fair_to else ""
        verdict = f"there every seat is fair within ±{m}{also} ({inside} ±{m})"
    elif span:
        verdict = f"every seat is fair within ±{m} {span} ({inside} ±{m})"
    elif r.unfair_everywhere:
        verdict = (
            f"no value in the range makes every seat fair within ±{m} (at every value some "
            f"seat's whole {band} lies beyond ±{m})"
        )
    elif r.largest_effect_pp <= r.matters_pp:
        verdict = (
            f"the estimates are within ±{m} there, but the {band}s reach beyond it: the "
            "data cannot yet show every seat fair"
        )
    else:
        verdict = (
            f"at every value some seat's estimate lies beyond ±{m}, though its {band} "
            f"reaches inside: no value in the range is shown fair within ±{m}, nor shown "
            "unfair"
        )
    cost = _cost(r, metrics)
    return head + body + "; " + verdict + (f". {cost}" if cost else ".")


def _signed_largest(r: Any) -> float:
    mid = (r.largest_lo_pp + r.largest_hi_pp) / 2
    effect: float = r.largest_effect_pp
    return effect if mid >= 0 else -effect


def _cost(r: Any, metrics: pd.DataFrame) -> str:
    """The length and bankruptcies at the swept value nearest the fairest, and their range."""
    if metrics.empty:
        return ""
    mine = metrics.loc[
        (metrics["base"] == r.base)
        & (metrics["level"] == r.level)
        & (metrics["series"] == r.series)
    ]
    parts = []
    for metric in ("turns", "bankrupt"):
        rows = mine.loc[mine["metric"] == metric]
        at = rows.loc[rows["ruleset"] == r.nearest_ruleset]
        if at.empty:
            continue
        a = at.iloc[0]
        fmt: Callable[[float], str] = (
            (lambda v: pct(v, 2)) if metric == "bankrupt" else (lambda v: f"{v:.1f}")
        )
        lo, hi = rows["mean"].min(), rows["mean"].max()
        word = METRIC_WORDS[metric][0]
        parts.append(
            f"{word} {fmt(a['mean'])} {interval(a['lo'], a['hi'], fmt)} "
            f"(from {fmt(lo)} to {fmt(hi)} across the sweep)"
        )
    if not parts:
        return ""
    return f"At the swept value nearest to it ({r.nearest_x_value}): " + "; ".join(parts) + "."


# ---------------------------------------------------------------- section and charts


class ResponseSection(BaseSection):
    """The section "Response curves": none without a sweep."""

    name = "response"
    headings = ("Response curves",)

    def compute(self, ctx: Context) -> None:
        matters_pp = ctx.rt.facts.report_options.matters_pp
        verdicts = curve_verdicts(ctx.rt, matters_pp)
        if not verdicts.empty:
            ctx.rt.tables.response_verdicts = verdicts

    def figures(self, rt: ReportTables) -> Figures:
        return _figures(rt)

    def parts(self, ctx: Context, chart_titles: dict[str, str]) -> list[Part]:
        return _parts(ctx.rt, chart_titles)


def _curve(table: pd.DataFrame, base: Any, level: Any, series: Any) -> pd.DataFrame:
    """The rows of `table` of one curve (base, level, series)."""
    if table.empty:
        return table
    sel = (table["base"] == base) & (table["level"] == level) & (table["series"] == series)
    return table.loc[sel]


def _chart_title(r: Any, pts: pd.DataFrame) -> str:
    who = "mix of line-ups" if r.level == MIX else f"{r.level} in every seat"
    return (
        f"{r.base}, {r.players} players, {who}{_series_words(r.series, pts)}: "
        f"seat effects against {r.x_key.replace('_', ' ')}"
        + (" (no curve: the quadratic does not fit)" if r.lack_p < LACK_OF_FIT_ALPHA else "")
    )


def _figures(rt: ReportTables) -> Figures:
    """One chart per curve: the seat effects, and the four measures beside them."""
    t = rt.tables
    verdicts = or_empty(t.response_verdicts)
    if verdicts.empty:
        return {}
    pts = or_empty(t.response_points)
    curves = or_empty(t.response_curves)
    metrics = or_empty(t.response_metrics)
    matters_pp = float(verdicts["matters_pp"].iloc[0])
    out: Figures = {}
    for i, r in enumerate(verdicts.itertuples(index=False)):
        part = _curve(pts, r.base, r.level, r.series)
        mine = _curve(metrics, r.base, r.level, r.series)
        key = r.x_key
        names = (
            dict(zip(part["x"], part["x_value"].astype(str), strict=False))
            if key == "die_faces"
            else None
        )
        title = _chart_title(r, pts)
        fig = plots.new_figure(11.0, 4.4)
        grid = fig.add_gridspec(2, 4, width_ratios=[2.2, 2.2, 1.0, 1.0])
        ax = fig.add_subplot(grid[:, :2])
        # the simultaneous band, and no curve where the verdict reads the points
        curve = _curve(curves, r.base, r.level, r.series) if r.fitted else pd.DataFrame()
        if len(curve):
            curve = curve.drop(columns=["effect_lo_pp", "effect_hi_pp"]).rename(
                columns={"band_lo_pp": "effect_lo_pp", "band_hi_pp": "effect_hi_pp"}
            )
        plots.plot_response(part, curve, ax, matters_pp, key.replace("_", " "), names)
        for j, metric in enumerate(METRICS):
            mx = fig.add_subplot(grid[j // 2, 2 + j % 2])
            words, unit = METRIC_WORDS[metric]
            plots.plot_response_metric(
                mine.loc[mine["metric"] == metric] if len(mine) else mine,
                mx,
                f"{words} ({unit})",
                100.0 if metric == "bankrupt" else 1.0,
                names,
            )
        plots.set_title(ax, title)
        out[f"response_{i + 1}"] = (title, fig)
    return out


def _parts(rt: ReportTables, chart_titles: dict[str, str]) -> list[Part]:
    """The "Response curves" part: the method, one sentence per curve, charts, tables."""
    t = rt.tables
    verdicts = or_empty(t.response_verdicts)
    if verdicts.empty:
        return []
    pts = or_empty(t.response_points)
    metrics = or_empty(t.response_metrics)
    matters_pp = float(verdicts["matters_pp"].iloc[0])
    s = Part("Response curves")
    s.paragraphs.append(
        "The study sweeps a rule option: one rule set per value, every value played from the "
        "same block seeds, so the values meet the same dice and piles. Each seat's effect "
        "(its win share minus the fair share, pp, with its 95% interval clustered on blocks) "
        "is drawn against the value, with a fitted curve and its simultaneous 95% band (a "
        "binomial GLM, quadratic in the value, cluster-robust on the seeds the values share; "
        "the band holds for every seat and every value of the chart at once). Beside it: "
        "game length, the share of games with a bankruptcy, the winning margin (over the "
        "games where two seats finish: a 2-player game with a bankruptcy has none, so at a "
        "value with many bankruptcies it is the mean of fewer, other games) and the turn "
        "from which the winner leads for good."
    )
    s.paragraphs.append(
        "How to read a sentence: its claims hold together at 95%. A seat counts as fair within "
        f"±{matters_pp:g} pp (the study's [report] matters_pp) where its whole simultaneous band "
        "lies inside it. The curve is read only where the quadratic fits: a lack-of-fit test "
        "per seat (the per-value shares against the curve, Bonferroni over the seats) that "
        "rejects at 5% sends the sentence to the measured points and their joint intervals "
        "(Bonferroni over the seats and values), and the chart then draws no curve. The "
        "fairest value is chosen from the same data, so the largest effect estimated there "
        "tends to be small; its band, not its estimate, says how unfair that value may be, "
        "and the fairest value's own 95% interval says how well the data locate it."
    )
    s.items.extend(verdicts["sentence"].tolist())
    drawn = [n for n in chart_titles if n.startswith("response_")]
    s.charts.extend((n, chart_titles[n]) for n in sorted(drawn, key=lambda n: int(n.split("_")[1])))
    s.tables.append(
        (
            "Each seat's effect at each swept value (pp, 95% interval clustered on blocks)",
            ["rule set", "players", "value", "player", "games", "effect", "interval"],
            [
                [
                    str(p.ruleset),
                    str(p.players),
                    str(p.x_value),
                    plots.player_label(int(p.seat)),
                    count(p.n_games),
                    pp(p.effect_pp),
                    interval(p.effect_lo_pp, p.effect_hi_pp, signed),
                ]
                for p in pts.itertuples(index=False)
            ],
        )
    )
    if len(metrics):
        s.tables.append(
            (
                "Each swept value's games (mean, 95% interval clustered on blocks)",
                ["rule set", "level", "measure", "games", "mean", "interval"],
                [
                    [
                        str(m.ruleset),
                        str(m.level),
                        METRIC_WORDS[m.metric][0],
                        count(m.n_games),
                        pct(m.mean, 2) if m.metric == "bankrupt" else f"{m.mean:.2f}",
                        interval(
                            m.lo,
                            m.hi,
                            (lambda v: pct(v, 2))
                            if m.metric == "bankrupt"
                            else (lambda v: f"{v:.2f}"),
                        ),
                    ]
                    for m in metrics.itertuples(index=False)
                ],
            )
        )
    return [s]
