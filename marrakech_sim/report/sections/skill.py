"""The sections on skill: balance per skill level or player model, and what decides games.

A *skill level* is a strategy playing itself (every seat plays it) that the study
declares as one (`skill_levels = [...]`, weakest first). A self-play strategy that is not
declared is a *player model*: its seat effects are shown beside the others, and no trend
runs through it. Each level's seat effects are estimated on its own blocks; nothing is
pooled across levels.

How an effect changes with skill is read on the levels' *measured strength*, not their
rank: each level's Elo from the report's ratings (the games in which levels meet). Where
three levels or more have a finite measured strength, three of them separated in
strength, a weighted line of the effect on Elo is fitted with its lack-of-fit test
(`stats.trends`), over every level and over the levels other than `random`; elsewhere the
steps between neighbouring levels are what the report can state. Which of them become
findings, at which level, is decided in `report.findings` (one corrected family).

What decides games (the restricted-play measures of game-balance research):
- how much skill decides: the strongest level's win rate against each weaker strategy it
  met in a two-strategy line-up;
- which decision matters more: `rotation-only` (good rotations, random placements) against
  `placement-only` (the reverse), when the study has that line-up.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from marrakech_sim import plots
from marrakech_sim.report.findings import (
    decides_sentence,
    fmt_metric,
    group_title,
    metric_words,
    span_metric,
)
from marrakech_sim.report.fmt import count, interval, pp, pval
from marrakech_sim.report.pergame import PerGame
from marrakech_sim.report.sections.base import (
    BaseSection,
    Context,
    Figures,
    Part,
    charted,
    finding_groups,
)
from marrakech_sim.report.sections.variants import MetricTotals, difference
from marrakech_sim.report.tables import ReportTables, add_sums, is_self_play, or_empty, sums_frame
from marrakech_sim.runfolder import Manifest
from marrakech_sim.stats import estimators, trends
from marrakech_sim.stats.intervals import add_rate_interval
from marrakech_sim.stats.winrates import LINEUP_SEP

SKILL_KEYS = ["players", "ruleset", "level_index", "level", "seat"]
# skill_seats' columns after its keys (docs/report-tables.md), with rows or without
SKILL_SEAT_COLUMNS = [
    "kind",
    "n_games",
    "n_blocks",
    "share",
    "effect_pp",
    "effect_lo_pp",
    "effect_hi_pp",
    "se_pp",
    "n_eff",
]
#: the per-game metrics of the variant comparison that are also compared level by level
LEVEL_METRICS = ("margin", "bankrupt", "turns", "tie_broken", "winner_dirhams_share")
RESTRICTED = ("rotation-only", "placement-only")


class SkillTotals:
    """The skill sections' sums, added slice by slice.

    Attributes:
        seats: (level code, rule set code, players, seat) -> sums of the block totals of
            the seat's win share in the level's self-play games (estimators.SUMS).
        metrics: (level code, rule set code, players, metric) -> sums of the block totals
            of a LEVEL_METRICS metric in the level's self-play games (games where it is
            defined), taken about the first slice's mean (``estimators.ratio_sums``).
        blocks: with a DuckDB connection (runs played with common seeds), the same cells'
            block totals, kept there (``BLOCK_TABLE``) so that a variant and its base pair
            block by block (`cell_key`, ``variants.difference``); else None.
    """

    def __init__(
        self, names: list[str], rulesets: list[str], con: duckdb.DuckDBPyConnection | None = None
    ) -> None:
        self.names, self.rulesets = names, rulesets
        self.seats: dict[tuple[int, int, int, int], dict[str, Any]] = {}
        self.metrics: dict[tuple[int, int, int, str], dict[str, Any]] = {}
        self.blocks = None if con is None else MetricTotals(con=con, table=BLOCK_TABLE)

    def add(self, pg: PerGame) -> None:
        """Add one slice of whole blocks."""
        if not len(pg):
            return
        alone = is_self_play(pg)
        for code in np.unique(pg.strategy[0][alone]).tolist():
            games = np.flatnonzero(alone & (pg.strategy[0] == code))
            for rs_code in np.unique(pg.ruleset[games]).tolist():
                for k in np.unique(pg.players[games][pg.ruleset[games] == rs_code]).tolist():
                    part = games[(pg.ruleset[games] == rs_code) & (pg.players[games] == k)]
                    # block totals of the part: blocks hold one match, so one level and rule set
                    blocks, local = np.unique(pg.block_index[part], return_inverse=True)
                    n_b = np.bincount(local, minlength=len(blocks)).astype("float64")
                    ids = np.empty(len(blocks), pg.block.dtype)
                    ids[local] = pg.block[part]  # each block's number in the runs' games
                    cell = cell_key(self.names[code], self.rulesets[rs_code])
                    for seat in range(int(k)):
                        won = pg.win_value[part] * pg.win[seat, part]
                        y_b = np.bincount(local, won, minlength=len(blocks))
                        sums = {c: v[0] for c, v in estimators.ratio_sums(y_b, n_b).items()}
                        add_sums(self.seats, (code, int(rs_code), int(k), seat), sums)
                        if self.blocks is not None:
                            self.blocks.add_blocks(cell, f"seat_{seat}", ids, y_b, n_b)
                    for metric in LEVEL_METRICS:
                        values = getattr(pg, metric)[part].astype("float64")
                        ok = np.isfinite(values)
                        m_b = np.bincount(local, ok.astype("float64"), minlength=len(blocks))
                        if not m_b.any():
                            continue
                        y_b = np.bincount(local, np.where(ok, values, 0.0), minlength=len(blocks))
                        key = (code, int(rs_code), int(k), metric)
                        before = self.metrics.get(key)
                        shift = float(before["shift"]) if before else float(y_b.sum() / m_b.sum())
                        block_sums = estimators.ratio_sums(y_b, m_b, shift=shift)
                        add_sums(
                            self.metrics,
                            key,
                            {c: v[0] for c, v in block_sums.items()} | {"shift": shift},
                        )
                        if self.blocks is not None:
                            kept = m_b > 0
                            self.blocks.add_blocks(cell, metric, ids[kept], y_b[kept], m_b[kept])


BLOCK_TABLE = "skill_blocks"  # (block, cell, total, n): the self-play blocks, for pairing


def cell_key(level: str, ruleset: str) -> str:
    """The ``ruleset`` part of a :class:`SkillTotals` ``blocks`` cell: a level under a
    rule set (a rule set has one player count)."""
    return f"{level}\t{ruleset}"


def study_levels(manifests: list[Manifest]) -> tuple[list[str], set[str]]:
    """The skill levels the runs' study configs declare (`skill_levels`, first run first),
    and the names of the strategies that are `random` (whose strength has no upper bound
    on the strength axis's left: it may never win against the others)."""
    levels: list[str] = []
    randoms: set[str] = set()
    for manifest in manifests:
        config = manifest.config
        levels += [str(n) for n in config.get("skill_levels", []) if str(n) not in levels]
        strategies = config.get("strategies", {})
        if isinstance(strategies, dict):
            randoms |= {
                str(n)
                for n, spec in strategies.items()
                if isinstance(spec, dict) and spec.get("ref", n) == "random"
            }
    return levels, randoms


def skill_tables(
    out: ReportTables,
    level: float,
    totals: SkillTotals,
    levels: list[str],
    randoms: AbstractSet[str] = frozenset(),
    keyed: str | None = None,
) -> None:
    """`skill_seats` (each self-play strategy's seat effects: a declared skill level, or a
    player model shown beside the others), `skill_strength` (each level's measured
    strength), `skill_steps` (each seat's change between neighbouring levels),
    `skill_trends` (lines on strength with their lack-of-fit tests), `skill_variants`
    and `skill_metric_variants` (each variant against its base, per level) and
    `decides`. Call after the ratings: a level's strength is its Elo.

    keyed: the table of `totals.blocks` keyed by their seeds (``variants.keyed_blocks``)
    when runs were played with common seeds: a variant and its base are then compared
    block pair by block pair (their blocks share dice)."""
    names = totals.names

    def paired(lvl: str, base: str, alt: str, which: str) -> dict[str, float] | None:
        if totals.blocks is None or keyed is None:
            return None
        cells = ((cell_key(lvl, base), which), (cell_key(lvl, alt), which))
        if not all(c in totals.blocks.sums for c in cells):
            return None
        return difference(totals.blocks, keyed, cells[0], cells[1], level)

    declared = [names.index(n) for n in levels if n in names]
    others = sorted({key[0] for key in totals.seats} - set(declared), key=lambda c: names[c])
    codes = declared + others
    index_of = {code: i for i, code in enumerate(codes)}

    def frames(cells: dict[tuple[int, int, int, Any], dict[str, Any]], last: str) -> list[Any]:
        """One sums_frame per (level, rule set, players, `last`) cell, levels in order."""
        return [
            sums_frame(
                {
                    "players": [k],
                    "ruleset": [totals.rulesets[rs_code]],
                    "level_index": [index_of[code]],
                    "level": [names[code]],
                    "kind": ["skill level" if code in declared else "player model"],
                    last: [value],
                },
                sums,
            )
            for (code, rs_code, k, value), sums in sorted(
                cells.items(), key=lambda item: (index_of[item[0][0]], *item[0][1:])
            )
        ]

    rows = frames(totals.seats, "seat")
    if rows:
        tab = add_rate_interval(pd.concat(rows, ignore_index=True), level)
        fair = 1.0 / tab["players"]
        tab["share"] = tab["estimate"]
        tab["effect_pp"] = 100 * (tab["estimate"] - fair)
        tab["effect_lo_pp"] = 100 * (tab["lo"] - fair)
        tab["effect_hi_pp"] = 100 * (tab["hi"] - fair)
        tab["se_pp"] = 100 * np.sqrt(tab["var"].to_numpy(dtype="float64"))
        tab["n_games"] = tab["n"].astype("int64")
        seats = tab[[*SKILL_KEYS, *SKILL_SEAT_COLUMNS]]
    else:
        seats = pd.DataFrame(columns=[*SKILL_KEYS, *SKILL_SEAT_COLUMNS])
    seats = seats.sort_values(SKILL_KEYS, ignore_index=True)
    out.tables.skill_seats = seats
    leveled = seats.loc[seats["kind"] == "skill level"] if len(seats) else seats
    strength = _strengths(out, leveled, randoms, level)
    out.tables.skill_strength = strength
    out.tables.skill_steps = _steps(leveled, level)
    out.tables.skill_trends = _lines(leveled, strength, randoms)
    base_of = out.facts.baselines
    out.tables.skill_variants = _differences(
        seats, base_of, level, "seat", "effect_pp", "se_pp", "_pp", paired
    ).sort_values(["players", "ruleset", "level_index", "seat"], ignore_index=True)
    metrics = frames(totals.metrics, "metric")
    means = pd.concat(metrics, ignore_index=True) if metrics else pd.DataFrame()
    if len(means):
        means = means.assign(se_value=np.sqrt(means["var"]), n_games=means["n"].astype("int64"))
    out.tables.skill_metric_variants = _differences(
        means, base_of, level, "metric", "estimate", "se_value", "_value", paired
    )
    out.tables.decides = _decides(out, totals, declared, level)


def _strengths(
    out: ReportTables, seats: pd.DataFrame, randoms: AbstractSet[str], level: float
) -> pd.DataFrame:
    """Per (players, rule set, level): the level's Elo from the report's ratings (the games
    where levels meet), under that rule set or else its base, with its interval; a level
    that never won (or never lost) a game against the others it met has no finite
    strength ('never won': the ratings' finite value there is the ridge's, not the data's).
    `separated` says whether its Elo interval clears the previous level's."""
    ratings = or_empty(out.tables.ratings)
    lineups = out.tables.lineup_win_rates
    base_of = out.facts.baselines
    cols = ["players", "ruleset", "level_index", "level", "elo", "elo_lo", "elo_hi"]
    cols += ["measured_under", "status", "separated"]
    rows: list[dict[str, Any]] = []
    if seats.empty:
        return pd.DataFrame(rows, columns=cols)
    for (players, ruleset), part in seats.groupby(["players", "ruleset"], sort=True):
        previous: dict[str, Any] | None = None
        for r in part.drop_duplicates("level").sort_values("level_index").itertuples():
            row = {"players": int(players), "ruleset": ruleset, "level_index": r.level_index}
            row |= {"level": r.level, "elo": np.nan, "elo_lo": np.nan, "elo_hi": np.nan}
            row |= {"measured_under": "", "status": "not measured", "separated": False}
            for under in (ruleset, base_of.get(ruleset, ruleset)):
                got = _rating(ratings, under, int(players), str(r.level))
                if got is None:
                    continue
                row |= got | {"measured_under": under, "status": "measured"}
                extreme = _never(lineups, under, int(players), str(r.level))
                if extreme:
                    row |= {"status": extreme, "elo": np.nan, "elo_lo": np.nan, "elo_hi": np.nan}
                break
            if previous is not None and row["status"] == previous["status"] == "measured":
                row["separated"] = bool(
                    row["elo_lo"] > previous["elo_hi"] or row["elo_hi"] < previous["elo_lo"]
                )
            rows.append(row)
            previous = row
    return pd.DataFrame(rows, columns=cols)


def _rating(
    ratings: pd.DataFrame, ruleset: str, players: int, name: str
) -> dict[str, float] | None:
    """A strategy's Elo and interval in the ratings of (rule set, players), if rated."""
    if ratings.empty or "ruleset" not in ratings.columns:
        return None
    hit = ratings.loc[
        (ratings["ruleset"].astype(str) == ruleset)
        & (ratings["players"] == players)
        & (ratings["strategy"].astype(str) == name)
    ]
    if len(hit) != 1:
        return None
    r = hit.iloc[0]
    return {"elo": float(r.elo), "elo_lo": float(r.elo_lo), "elo_hi": float(r.elo_hi)}


def _never(lineups: pd.DataFrame, ruleset: str, players: int, name: str) -> str:
    """'never won' / 'never lost' when every mixed line-up `name` played there (with
    `players` seats) it won none / all of its games; else ''."""
    if lineups.empty or "lineup" not in lineups.columns:
        return ""
    mine = lineups.loc[
        (lineups["ruleset"].astype(str) == ruleset) & (lineups["strategy"].astype(str) == name)
    ]
    mine = mine.loc[
        mine["lineup"]
        .astype(str)
        .map(lambda x: len(x.split(LINEUP_SEP)) == players and len(set(x.split(LINEUP_SEP))) > 1)
    ]
    if mine.empty:
        return ""
    if (mine["rate"] == 0).all():
        return "never won"
    if (mine["rate"] == 1).all():
        return "never lost"
    return ""


def _steps(seats: pd.DataFrame, level: float) -> pd.DataFrame:
    """Per (players, rule set, seat): each step between neighbouring levels (the stronger
    level's effect minus the weaker's; independent samples), with its normal interval.
    With 2 players seat 1's effect is minus seat 0's, so only seat 0 is stepped."""
    z = estimators.z_value(level)
    cols = ["players", "ruleset", "seat", "step", "from_level", "to_level"]
    cols += ["step_pp", "se_pp", "lo_pp", "hi_pp", "n_games_from", "n_games_to"]
    rows = []
    keys = ["players", "ruleset", "seat"]
    for (players, ruleset, seat), part in seats.groupby(keys, sort=True):
        if int(players) == 2 and int(seat) == 1:
            continue
        part = part.sort_values("level_index")
        for i, (a, b) in enumerate(itertools.pairwise(part.itertuples())):
            d, se = float(b.effect_pp - a.effect_pp), float(np.hypot(a.se_pp, b.se_pp))
            rows.append(
                {
                    "players": int(players),
                    "ruleset": ruleset,
                    "seat": int(seat),
                    "step": i,
                    "from_level": a.level,
                    "to_level": b.level,
                    "step_pp": d,
                    "se_pp": se,
                    "lo_pp": d - z * se,
                    "hi_pp": d + z * se,
                    "n_games_from": int(a.n_games),
                    "n_games_to": int(b.n_games),
                }
            )
    return pd.DataFrame(rows, columns=cols)


def _lines(seats: pd.DataFrame, strength: pd.DataFrame, randoms: AbstractSet[str]) -> pd.DataFrame:
    """Per (players, rule set, seat) and level set (every level, and the levels other than
    random): the line of the seat's effect on the levels' Elo (`stats.trends.line`) where
    three levels or more have a finite measured strength and at least three of them are
    separated in strength; and Cochran's Q over the same levels. Rows only where a line
    can be fitted: elsewhere the steps between levels are the findings."""
    cols = ["players", "ruleset", "seat", "level_set", "levels", "names", "distinct"]
    cols += ["slope_pp", "se_pp", "p", "lack_of_fit", "lack_of_fit_df", "lack_of_fit_p"]
    cols += ["q", "q_df", "q_p", "weakest_fit_pp", "strongest_fit_pp", "elo_from", "elo_to"]
    cols += ["change_pp", "change_se_pp", "n_games"]
    rows: list[dict[str, Any]] = []
    if seats.empty or strength.empty:
        return pd.DataFrame(rows, columns=cols)
    elo = strength.set_index(["players", "ruleset", "level"])
    for (players, ruleset, seat), part in seats.groupby(["players", "ruleset", "seat"]):
        if int(players) == 2 and int(seat) == 1:
            continue
        part = part.sort_values("level_index")
        sets = {"every level": part}
        if set(part["level"]) & set(randoms):
            sets["without random"] = part.loc[~part["level"].isin(randoms)]
        for name, chosen in sets.items():
            got = [elo.loc[(players, ruleset, lvl)] for lvl in chosen["level"]]
            if len(got) < 3 or any(g["status"] != "measured" for g in got):
                continue
            distinct = 1 + sum(bool(g["separated"]) for g in got[1:])
            if distinct < 3:
                continue
            x = np.array([float(g["elo"]) for g in got])
            values = chosen["effect_pp"].to_numpy(dtype="float64")
            ses = np.maximum(chosen["se_pp"].to_numpy(dtype="float64"), 1e-9)
            fit = trends.line(x, values, ses)
            het = trends.heterogeneity(values, ses)
            change, change_se = fit.change(float(x.min()), float(x.max()))
            rows.append(
                {
                    "players": int(players),
                    "ruleset": ruleset,
                    "seat": int(seat),
                    "level_set": name,
                    "levels": len(chosen),
                    "names": LINEUP_SEP.join(chosen["level"]),
                    "distinct": distinct,
                    "slope_pp": fit.slope,
                    "se_pp": fit.se,
                    "p": fit.p,
                    "lack_of_fit": fit.lack_of_fit,
                    "lack_of_fit_df": fit.df,
                    "lack_of_fit_p": fit.lack_of_fit_p,
                    "q": het.q,
                    "q_df": het.df,
                    "q_p": het.p,
                    "weakest_fit_pp": fit.at(float(x.min())),
                    "strongest_fit_pp": fit.at(float(x.max())),
                    "elo_from": float(x.min()),
                    "elo_to": float(x.max()),
                    "change_pp": change,
                    "change_se_pp": change_se,
                    "n_games": int(chosen["n_games"].sum()),
                }
            )
    return pd.DataFrame(rows, columns=cols)


def _differences(
    rows: pd.DataFrame,
    base_of: dict[str, str],
    level: float,
    last: str,
    value: str,
    se: str,
    unit: str,
    paired: Callable[[str, str, str, str], dict[str, float] | None] | None = None,
) -> pd.DataFrame:
    """Per level and `last` (seat or metric): a variant's `value` minus its base's, with an
    interval (columns difference, se, lo, hi, each ending in `unit`; paired: the variant's
    blocks that share a seed with one of the base's; df: the paired t interval's degrees
    of freedom, NaN for the normal one).

    `paired(level, base, variant, cell)` gives the difference with the two rule sets'
    blocks clustered by seed (``variants.difference``: a t interval, the blocks of a seed
    paired) where the runs were played with common seeds, else None; without it the two
    rule sets' blocks are independent samples and the interval is normal (with common
    seeds that would be conservative: their blocks are positively correlated).
    """
    z = estimators.z_value(level)
    out = []
    keys = ["players", "ruleset", "level", last]
    keyed = rows.set_index(keys) if len(rows) else rows
    scale = 100.0 if unit == "_pp" else 1.0  # a seat's share difference in pp
    for (k, rs, lvl, which), row in keyed.iterrows():
        base = base_of.get(rs)
        if base is None or base == rs or (k, base, lvl, which) not in keyed.index:
            continue
        other = keyed.loc[(k, base, lvl, which)]
        cell = f"seat_{which}" if last == "seat" else str(which)
        res = paired(str(lvl), base, str(rs), cell) if paired is not None else None
        games = (int(row["n_games"]), int(other["n_games"]))
        common = False
        if res is None:
            diff = float(row[value] - other[value])
            error = float(np.hypot(row[se], other[se]))
            lo, hi = diff - z * error, diff + z * error
            p, pairs, df = estimators.two_sided_p(diff, error), 0, float("nan")
        else:
            diff, error = scale * res["diff"], scale * res["se"]
            lo, hi = scale * res["lo"], scale * res["hi"]
            p, pairs, df = res["p_value"], int(res["paired"]), res["df"]
            if res.get("common_only"):  # over the games with a value under both
                common = True
                games = (int(res["common_games"]), int(res["common_games_baseline"]))
        out.append(
            {
                "players": int(k),
                "ruleset": rs,
                "baseline": base,
                "level_index": int(row["level_index"]),
                "level": lvl,
                last: which,
                "difference" + unit: diff,
                "se" + unit: error,
                "lo" + unit: lo,
                "hi" + unit: hi,
                "p": p,
                "n_games": games[0],
                "n_games_baseline": games[1],
                "paired": pairs,
                "df": df,
            }
        )
        if last == "metric":  # in what share of each side's games the metric has a value
            out[-1]["common_only"] = common
            for key, ruleset in (("defined_share", rs), ("defined_share_baseline", base)):
                lengths = (k, ruleset, lvl, "turns")
                out[-1][key] = (
                    float(keyed.loc[(k, ruleset, lvl, which), "n_games"])
                    / float(keyed.loc[lengths, "n_games"])
                    if lengths in keyed.index
                    else float("nan")
                )
    cols = ["players", "ruleset", "baseline", "level_index", "level", last]
    cols += [name + unit for name in ("difference", "se", "lo", "hi")]
    cols += ["p", "n_games", "n_games_baseline", "paired", "df"]
    if last == "metric":
        cols += ["defined_share", "defined_share_baseline", "common_only"]
    return pd.DataFrame(out, columns=cols).sort_values(
        ["players", "ruleset", last, "level_index"], ignore_index=True
    )


def _decides(
    out: ReportTables, totals: SkillTotals, codes: list[int], level: float
) -> pd.DataFrame:
    """The restricted-play measures: one row each, with its interval and count."""
    rows: list[dict[str, object]] = []
    lineups = out.tables.lineup_win_rates
    if codes and len(lineups):
        strongest = totals.names[codes[-1]]
        for r in lineups.itertuples():
            names = set(str(r.lineup).split(LINEUP_SEP))
            others = names - {strongest}
            if r.strategy == strongest and len(names) == 2 and len(others) == 1:
                rows.append(_measure("skill", f"{strongest} against {others.pop()}", r))
    if len(lineups):
        for r in lineups.itertuples():
            if (
                set(str(r.lineup).split(LINEUP_SEP)) == set(RESTRICTED)
                and r.strategy == RESTRICTED[0]
            ):
                rows.append(_measure("decision", f"{RESTRICTED[0]} against {RESTRICTED[1]}", r))
    cols = ["measure", "what", "ruleset", "players", "rate", "lo", "hi", "fair_share", "n"]
    return pd.DataFrame(rows, columns=cols)


def _measure(kind: str, what: str, r: Any) -> dict[str, object]:
    return {
        "measure": kind,
        "what": what,
        "ruleset": r.ruleset,
        "players": len(str(r.lineup).split(LINEUP_SEP)),
        "rate": r.rate,
        "lo": r.lo,
        "hi": r.hi,
        "fair_share": r.fair_share,
        "n": int(r.n_games),
    }


# ---------------------------------------------------------------- words and charts


def _chart_groups(seats: pd.DataFrame) -> list[tuple[int, str, pd.DataFrame, pd.DataFrame]]:
    """Per player count and rule set: its skill levels and its player models."""
    return [
        (
            int(players),
            str(ruleset),
            part.loc[part["kind"] == "skill level"],
            part.loc[part["kind"] == "player model"],
        )
        for (players, ruleset), part in seats.groupby(["players", "ruleset"], sort=True)
    ]


class SkillSection(BaseSection):
    """The section "Balance per skill level" (or "per player model"): none without
    self-play games."""

    name = "skill"
    headings = ("Balance per skill level", "Balance per player model")

    def figures(self, rt: ReportTables) -> Figures:
        t = rt.tables
        seats = t.skill_seats
        strength = t.skill_strength
        charts: Figures = {}
        if not len(seats):
            return charts
        for players, ruleset, levels, models in _chart_groups(seats):
            # the levels on their measured strength; the player models apart, in no order
            if len(levels):
                here = strength
                if len(strength):
                    mine = (strength["players"] == players) & (strength["ruleset"] == ruleset)
                    here = strength.loc[mine]
                title = f"Seat effects per skill level: {group_title(ruleset, players)}"
                fig = plots.new_figure(7.0, 4.2)
                plots.plot_skill_effects(levels, fig.subplots(), title, strength=here)
                charts[f"skill_{players}_{ruleset}"] = (title, fig)
            if len(models):
                title = f"Seat effects per player model: {group_title(ruleset, players)}"
                fig = plots.new_figure(min(7.0, 3.5 + 1.2 * models["level"].nunique()), 4.2)
                plots.plot_skill_effects(models, fig.subplots(), title, ordered=False)
                charts[f"models_{players}_{ruleset}"] = (title, fig)
        return charts

    def parts(self, ctx: Context, chart_titles: dict[str, str]) -> list[Part]:
        t = ctx.rt.tables
        seats = t.skill_seats
        findings = or_empty(t.findings)
        if not len(seats):
            return []
        leveled = seats.loc[seats["kind"] == "skill level"]
        models = seats.loc[seats["kind"] == "player model"]
        s = Part(self.headings[0] if len(leveled) else self.headings[1])
        order = leveled.drop_duplicates("level").sort_values("level_index")["level"].tolist()
        if order:
            s.paragraphs.append(
                "A skill level is one strategy in every seat, declared by the study "
                "(skill_levels, weakest first): "
                + ", ".join(order)
                + ". Each level's seat effects come from its own games; no figure here pools "
                "levels. A level's strength is its Elo in the games where the levels meet. A "
                "change with skill is a line on that strength, claimed only where three "
                "levels or more have a finite measured strength, three of them separated, and "
                "the line passes its lack-of-fit test; elsewhere the report states each step "
                "between neighbouring levels. The findings below are members of the summary's "
                "corrected family, with its intervals."
            )
        if len(models):
            s.paragraphs.append(
                "Player models (a strategy in every seat, not declared as a skill level): "
                + ", ".join(sorted(set(models["level"])))
                + ". They are shown side by side; no trend runs through them."
            )
        strength = t.skill_strength
        if len(strength):
            # a group (player count, rule set) with no level measured: one sentence, not a
            # row per level (skill_strength.csv keeps them)
            keys = ["players", "ruleset"]
            unknown = (
                (strength["status"] == "not measured")
                .groupby([strength[k] for k in keys])
                .transform("all")
            )
            unmeasured = strength.loc[unknown].drop_duplicates(keys)
            if len(unmeasured):
                where = "; ".join(
                    group_title(r.ruleset, int(r.players)) for r in unmeasured.itertuples()
                )
                s.paragraphs.append(
                    f"No level's strength is measured in {where}: the study has no games "
                    "between the levels there, so their seat effects are compared step by "
                    "step between neighbouring levels, with no line on strength "
                    "(skill_strength.csv lists those levels)."
                )
            strength = strength.loc[~unknown]
        if len(strength):
            s.tables.append(
                (
                    "Each skill level's strength (Elo, 95% interval)",
                    ["players", "rule set", "level", "strength", "separated from the one below"],
                    [
                        [
                            str(r.players),
                            str(r.ruleset),
                            str(r.level),
                            _strength_words(r),
                            _separated_words(r),
                        ]
                        for r in strength.itertuples()
                    ],
                )
            )
        if len(findings):
            skill = findings.loc[findings["question"].isin(["skill trend", "skill step"])]
            s.groups += finding_groups(skill, [str(x) for x in skill["sentence"]])
        for players, ruleset, _, _ in _chart_groups(seats):
            s.charts += charted(
                chart_titles, f"skill_{players}_{ruleset}", f"models_{players}_{ruleset}"
            )
        header = ["players", "rule set", "level", "seat", "effect", "95% interval", "games"]
        body = [
            [
                str(r.players),
                str(r.ruleset),
                f"{r.level} ({r.kind})",
                f"player {int(r.seat) + 1}",
                pp(r.effect_pp),
                interval(r.effect_lo_pp, r.effect_hi_pp),
                count(r.n_games),
            ]
            for r in seats.itertuples()
        ]
        s.tables.append(("Win share minus the fair share per seat and level", header, body))
        variants = t.skill_variants
        if len(variants):
            s.paragraphs.append(
                "Each variant against its base at each level (seat effect under the variant "
                "minus under the base, in pp). "
                + (
                    "The runs share their dice between rule sets (common seeds): a variant's "
                    "blocks are paired with the base's of the same seed (clustered by seed, "
                    "a t interval). "
                    if variants["paired"].gt(0).any()
                    else "The two rule sets' games are independent samples (a normal interval). "
                )
                + "The table's intervals are 95% each; the summary's findings on these "
                "differences use the family's wider intervals."
            )
            s.tables.append(
                (
                    "Variant minus base, per skill level and seat",
                    [
                        "players",
                        "variant",
                        "base",
                        "level",
                        "seat",
                        "difference",
                        "95% interval",
                        "p",
                    ],
                    [
                        [
                            str(r.players),
                            str(r.ruleset),
                            str(r.baseline),
                            str(r.level),
                            f"player {int(r.seat) + 1}",
                            pp(r.difference_pp),
                            interval(r.lo_pp, r.hi_pp),
                            pval(r.p),
                        ]
                        for r in variants.itertuples()
                    ],
                )
            )
        metrics = t.skill_metric_variants
        if len(metrics):
            s.tables.append(
                (
                    "Variant minus base, per skill level and per-game metric",
                    [
                        "players",
                        "variant",
                        "base",
                        "level",
                        "metric",
                        "difference",
                        "95% interval",
                        "p",
                    ],
                    [_metric_row(r) for r in metrics.itertuples()],
                )
            )
        return [s]


class DecidesSection(BaseSection):
    """The section "What decides games": restricted-play measures (none without them)."""

    name = "decides"
    headings = ("What decides games",)

    def figures(self, rt: ReportTables) -> Figures:
        decides = rt.tables.decides
        if not len(decides):
            return {}
        title = "What decides games (95% intervals)"
        fig = plots.new_figure(8.0, 0.55 * len(decides) + 1.4)
        plots.plot_decides(decides, fig.subplots(), title)
        return {"decides": (title, fig)}

    def parts(self, ctx: Context, chart_titles: dict[str, str]) -> list[Part]:
        decides = ctx.rt.tables.decides
        if not len(decides):
            return []
        s = Part(self.headings[0])
        s.paragraphs.append(
            "Restricted-play measures: how much the strongest level wins against weaker "
            "players, and which decision (turning Assam or placing rugs) matters more."
        )
        s.paragraphs += [decides_sentence(r) for r in decides.itertuples()]
        s.charts += charted(chart_titles, "decides")
        return [s]


def _separated_words(r: Any) -> str:
    """Whether a level's strength interval is apart from the one below's: '' for the
    weakest level and for a level whose strength is not measured (nothing to compare)."""
    if not r.level_index or r.status == "not measured":
        return ""
    return "yes" if r.separated else "no"


def _strength_words(r: Any) -> str:
    if r.status == "measured":
        under = "" if r.measured_under == r.ruleset else f", measured under {r.measured_under}"
        return f"{r.elo:.0f} Elo [{r.elo_lo:.0f}, {r.elo_hi:.0f}]{under}"
    if r.status == "never won":
        return "below every level it met: it never won a game against them (no finite Elo)"
    if r.status == "never lost":
        return "above every level it met: it never lost a game against them (no finite Elo)"
    return "not measured (no games against the other levels)"


def _metric_row(r: Any) -> list[str]:
    """A row of the per-level metric table: shares in pp, other metrics in their unit."""
    _, unit = metric_words(str(r.metric))
    diff = float(r.difference_value)
    lo, hi = float(r.lo_value), float(r.hi_value)
    value = fmt_metric(diff, unit, lo, hi)
    band = span_metric(lo, hi, unit)
    row = [r.players, r.ruleset, r.baseline, r.level, r.metric]
    return [*map(str, row), value, band, pval(r.p)]
