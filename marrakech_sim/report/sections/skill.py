"""Report sections on skill: balance per skill level, and what decides games.

A *skill level* is a strategy playing itself: a match whose every seat plays it (random,
greedy, expert at a budget, ...). Levels are ordered as the study config lists its
strategies (weakest first). Each level's seat advantage is estimated on its own blocks;
nothing is pooled across levels. How an effect changes with skill is the slope of a
weighted least-squares line through the levels' effects (weights 1 / variance; the levels
are independent samples: different blocks), tested against zero with a normal reference,
and read as "grows", "shrinks" or "reverses" (the weakest and strongest levels' intervals
on opposite sides of zero).

What decides games (the restricted-play measures of game-balance research):
- how much skill decides: the strongest level's win rate against each weaker strategy it
  met in a two-strategy line-up;
- which decision matters more: `rotation-only` (good rotations, random placements) against
  `placement-only` (the reverse), when the study has that line-up;
- how much the seat and the dice decide: the share of blocks of two-strategy line-ups whose
  winning strategy changes when only the seating changes (the same dice and rug piles),
  with a Wilson interval over blocks (blocks are independent).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from marrakech_sim.report.pergame import PerGame
from marrakech_sim.report.tables import ReportTables, add_sums, sums_frame
from marrakech_sim.stats import estimators
from marrakech_sim.stats.intervals import add_rate_interval
from marrakech_sim.stats.winrates import LINEUP_SEP

SKILL_KEYS = ["players", "ruleset", "level_index", "level", "seat"]
#: the per-game metrics of the variant comparison that are also compared level by level
LEVEL_METRICS = ("margin", "bankrupt", "turns", "tie_broken", "winner_dirhams_share")
TREND_COLUMNS = [
    "players",
    "ruleset",
    "seat",
    "levels",
    "weakest",
    "strongest",
    "weakest_pp",
    "weakest_lo_pp",
    "weakest_hi_pp",
    "strongest_pp",
    "strongest_lo_pp",
    "strongest_hi_pp",
    "slope_pp",
    "slope_lo_pp",
    "slope_hi_pp",
    "p",
    "change",
    # the steps between neighbouring levels that rose and fell the most (by their z), the
    # test of "varies"
    "up_at",
    "up_from",
    "up_to",
    "up_pp",
    "up_lo_pp",
    "up_hi_pp",
    "down_at",
    "down_from",
    "down_to",
    "down_pp",
    "down_lo_pp",
    "down_hi_pp",
]
RESTRICTED = ("rotation-only", "placement-only")


def _self_play_codes(pg: PerGame) -> list[int]:
    """Codes of the strategies that play themselves in some game of ``pg``."""
    players = pg.players.astype("int64")
    first = pg.strategy[0]
    alone = first >= 0
    for seat in range(1, pg.seats):
        alone &= (pg.strategy[seat] == first) | (seat >= players)
    return [int(c) for c in np.unique(first[alone])]


def level_order(names: list[str], codes: set[int], order: list[str]) -> list[int]:
    """``codes`` (strategies that play themselves in some match), weakest first."""
    rank = {name: i for i, name in enumerate(order)}
    return sorted(codes, key=lambda c: (rank.get(names[c], len(order)), names[c]))


def _self_play(pg: PerGame, code: int) -> np.ndarray:
    """Games whose every seat plays strategy `code`."""
    players = pg.players.astype("int64")
    alone = pg.strategy[0] == code
    for seat in range(1, pg.seats):
        alone &= (pg.strategy[seat] == code) | (seat >= players)
    return alone


class SkillTotals:
    """The skill sections' sums, added slice by slice.

    Attributes:
        seats: (level code, rule set code, players, seat) -> sums of the block totals of
            the seat's win share in the level's self-play games (estimators.SUMS).
        metrics: (level code, rule set code, players, metric) -> sums of the block totals
            of a LEVEL_METRICS metric in the level's self-play games (games where it is
            defined), taken about the first slice's mean (``estimators.ratio_sums``).
        seating: (rule set code, players) -> [blocks whose winning strategy changed with
            the seating, blocks of two-strategy line-ups with several games].
    """

    def __init__(self, names: list[str], rulesets: list[str]) -> None:
        self.names, self.rulesets = names, rulesets
        self.seats: dict[tuple[int, int, int, int], dict[str, Any]] = {}
        self.metrics: dict[tuple[int, int, int, str], dict[str, Any]] = {}
        self.seating: dict[tuple[int, int], list[int]] = {}

    def add(self, pg: PerGame) -> None:
        """Add one slice of whole blocks."""
        if not len(pg):
            return
        for code in _self_play_codes(pg):
            games = np.flatnonzero(_self_play(pg, code))
            for rs_code in np.unique(pg.ruleset[games]).tolist():
                for k in np.unique(pg.players[games][pg.ruleset[games] == rs_code]).tolist():
                    part = games[(pg.ruleset[games] == rs_code) & (pg.players[games] == k)]
                    # block totals of the part: blocks hold one match, so one level and rule set
                    blocks, local = np.unique(pg.block_index[part], return_inverse=True)
                    n_b = np.bincount(local, minlength=len(blocks)).astype("float64")
                    for seat in range(int(k)):
                        won = pg.win_value[part] * pg.win[seat, part]
                        y_b = np.bincount(local, won, minlength=len(blocks))
                        sums = {c: v[0] for c, v in estimators.ratio_sums(y_b, n_b).items()}
                        add_sums(self.seats, (code, int(rs_code), int(k), seat), sums)
                    for metric in LEVEL_METRICS:
                        values = getattr(pg, metric)[part].astype("float64")
                        ok = np.isfinite(values)
                        m_b = np.bincount(local, ok.astype("float64"), minlength=len(blocks))
                        if not m_b.any():
                            continue
                        y_b = np.bincount(local, np.where(ok, values, 0.0), minlength=len(blocks))
                        cell = (code, int(rs_code), int(k), metric)
                        before = self.metrics.get(cell)
                        shift = float(before["shift"]) if before else float(y_b.sum() / m_b.sum())
                        block_sums = estimators.ratio_sums(y_b, m_b, shift=shift)
                        add_sums(
                            self.metrics,
                            cell,
                            {c: v[0] for c, v in block_sums.items()} | {"shift": shift},
                        )
        for key, changed, n in _seating_changes(pg):
            got = self.seating.setdefault(key, [0, 0])
            got[0] += changed
            got[1] += n


def skill_tables(
    out: ReportTables, level: float, totals: SkillTotals, order: list[str], alpha: float = 0.05
) -> None:
    """`skill_seats` (each seat's effect per level), `skill_trends` (how it changes with
    skill), `skill_variants` (each variant against its base, per level and seat),
    `skill_variant_trends` (how that changes with skill), `skill_metric_variants` and
    `skill_metric_variant_trends` (the same for the per-game LEVEL_METRICS) and
    `decides`."""
    names = totals.names
    codes = level_order(names, {key[0] for key in totals.seats}, order)
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
        effects = ["effect_pp", "effect_lo_pp", "effect_hi_pp", "se_pp"]
        seats = tab[[*SKILL_KEYS, "n_games", "n_blocks", "share", *effects]]
    else:
        seats = pd.DataFrame(columns=[*SKILL_KEYS, "n_games", "effect_pp", "se_pp"])
    out.tables["skill_seats"] = seats.sort_values(SKILL_KEYS, ignore_index=True)
    out.tables["skill_trends"] = _trends(out.tables["skill_seats"], level, alpha)
    base_of = out.facts.get("baselines", {})
    out.tables["skill_variants"] = _differences(
        out.tables["skill_seats"], base_of, level, "seat", "effect_pp", "se_pp", "_pp"
    ).sort_values(["players", "ruleset", "level_index", "seat"], ignore_index=True)
    out.tables["skill_variant_trends"] = _variant_trends(out.tables["skill_variants"], level, alpha)
    metrics = frames(totals.metrics, "metric")
    means = pd.concat(metrics, ignore_index=True) if metrics else pd.DataFrame()
    if len(means):
        means = means.assign(se_value=np.sqrt(means["var"]), n_games=means["n"].astype("int64"))
    out.tables["skill_metric_variants"] = _differences(
        means, base_of, level, "metric", "estimate", "se_value", "_value"
    )
    keys = ["players", "ruleset", "baseline", "metric"]
    ends = ["difference_value", "lo_value", "hi_value"]
    out.tables["skill_metric_variant_trends"] = _trend_table(
        out.tables["skill_metric_variants"], keys, ends, level, alpha, "_value"
    )
    out.tables["decides"] = _decides(out, totals, codes, level)


def _slope(values: np.ndarray, ses: np.ndarray, z: float) -> tuple[float, float, float, float]:
    """The weighted least-squares slope of `values` over their rank (weights 1 / se^2,
    the variances known; `ses` > 0): (slope, lo, hi, p)."""
    x = np.arange(len(values), dtype="float64")
    w = 1.0 / ses**2
    xbar = float(np.sum(w * x) / np.sum(w))
    sxx = float(np.sum(w * (x - xbar) ** 2))
    slope = float(np.sum(w * (x - xbar) * values) / sxx)
    se = 1.0 / np.sqrt(sxx)
    return slope, slope - z * se, slope + z * se, estimators.two_sided_p(slope, se)


def _change(
    p: float,
    alpha: float,
    first: tuple[float, ...],
    last: tuple[float, ...],
    steps_z: np.ndarray,
) -> str:
    """How an effect changes from the weakest level to the strongest, given the trend's p,
    each end's (estimate, lo, hi) and the z of each step between neighbouring levels:
    varies when one step is significantly up and another significantly down (a line
    would misdescribe it); else, where the trend's p < alpha, reverses when the two ends'
    intervals lie on opposite sides of 0, or grows or shrinks in size; else no change
    shown."""
    z = estimators.z_value(1 - alpha)
    if np.any(steps_z > z) and np.any(steps_z < -z):
        return "varies"
    if p >= alpha:
        return "no change shown"
    if (first[1] > 0 and last[2] < 0) or (first[2] < 0 and last[1] > 0):
        return "reverses"
    return "grows" if abs(last[0]) > abs(first[0]) else "shrinks"


def _step(
    kind: str, names: list[str], steps: np.ndarray, halves: np.ndarray, i: int
) -> dict[str, Any]:
    """Step i, from level names[i] to names[i + 1] (its estimate steps[i], its interval's
    half-width halves[i]), as a trend row's `kind` columns (TREND_COLUMNS: up or down)."""
    d, half = float(steps[i]), float(halves[i])
    return {
        f"{kind}_at": i,
        f"{kind}_from": names[i],
        f"{kind}_to": names[i + 1],
        f"{kind}_pp": d,
        f"{kind}_lo_pp": d - half,
        f"{kind}_hi_pp": d + half,
    }


def _trend_table(
    rows: pd.DataFrame,
    keys: list[str],
    ends: list[str],
    level: float,
    alpha: float,
    unit: str = "_pp",
) -> pd.DataFrame:
    """Per `keys` group with two levels or more: the weighted slope over the level index of
    the effect in ends[0] (interval ends[1], ends[2]; standard error se{unit}), its interval
    and p, and the change it shows (columns: keys, then TREND_COLUMNS after the seat, the
    effects' names ending in `unit`)."""
    rename = {c: c.removesuffix("_pp") + unit for c in TREND_COLUMNS if c.endswith("_pp")}
    z = estimators.z_value(level)
    out = []
    for key, part in rows.groupby(keys, sort=True):
        part = part.sort_values("level_index")
        if len(part) < 2:
            continue
        values = part[ends[0]].to_numpy(dtype="float64")
        ses = np.maximum(part["se" + unit].to_numpy(dtype="float64"), 1e-9)
        slope, slope_lo, slope_hi, p = _slope(values, ses, z)
        first, last = part.iloc[0], part.iloc[-1]
        steps, step_ses = np.diff(values), np.hypot(ses[1:], ses[:-1])
        steps_z = steps / step_ses
        names = part["level"].tolist()
        out.append(
            {
                **dict(zip(keys, key, strict=True)),
                "levels": len(part),
                "weakest": first["level"],
                "strongest": last["level"],
                "weakest_pp": first[ends[0]],
                "weakest_lo_pp": first[ends[1]],
                "weakest_hi_pp": first[ends[2]],
                "strongest_pp": last[ends[0]],
                "strongest_lo_pp": last[ends[1]],
                "strongest_hi_pp": last[ends[2]],
                "slope_pp": slope,
                "slope_lo_pp": slope_lo,
                "slope_hi_pp": slope_hi,
                "p": p,
                "change": _change(p, alpha, tuple(first[ends]), tuple(last[ends]), steps_z),
                **_step("up", names, steps, z * step_ses, int(np.argmax(steps_z))),
                **_step("down", names, steps, z * step_ses, int(np.argmin(steps_z))),
            }
        )
    columns = [*keys, *TREND_COLUMNS[TREND_COLUMNS.index("seat") + 1 :]]
    return pd.DataFrame(out, columns=columns).rename(columns=rename)


def _trends(seats: pd.DataFrame, level: float, alpha: float) -> pd.DataFrame:
    """Per (players, rule set, seat) with two levels or more: how the seat's effect changes
    with skill (`_trend_table`)."""
    ends = ["effect_pp", "effect_lo_pp", "effect_hi_pp"]
    return _trend_table(seats, ["players", "ruleset", "seat"], ends, level, alpha)


def _variant_trends(variants: pd.DataFrame, level: float, alpha: float) -> pd.DataFrame:
    """Per (players, variant, seat) with two levels or more: how the variant's effect on the
    seat (variant minus base) changes with skill (`_trend_table`)."""
    keys = ["players", "ruleset", "baseline", "seat"]
    return _trend_table(variants, keys, ["difference_pp", "lo_pp", "hi_pp"], level, alpha)


def _differences(
    rows: pd.DataFrame,
    base_of: dict[str, str],
    level: float,
    last: str,
    value: str,
    se: str,
    unit: str,
) -> pd.DataFrame:
    """Per level and `last` (seat or metric): a variant's `value` minus its base's, with a
    normal interval (columns difference, se, lo, hi, each ending in `unit`).

    The two rule sets' blocks are taken as independent samples; with common seeds they are
    positively correlated, so the interval is then conservative.
    """
    z = estimators.z_value(level)
    out = []
    keys = ["players", "ruleset", "level", last]
    keyed = rows.set_index(keys) if len(rows) else rows
    for (k, rs, lvl, which), row in keyed.iterrows():
        base = base_of.get(rs)
        if base is None or base == rs or (k, base, lvl, which) not in keyed.index:
            continue
        other = keyed.loc[(k, base, lvl, which)]
        diff = float(row[value] - other[value])
        error = float(np.hypot(row[se], other[se]))
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
                "lo" + unit: diff - z * error,
                "hi" + unit: diff + z * error,
                "p": estimators.two_sided_p(diff, error),
                "n_games": int(row["n_games"]),
                "n_games_baseline": int(other["n_games"]),
            }
        )
    cols = ["players", "ruleset", "baseline", "level_index", "level", last]
    cols += [name + unit for name in ("difference", "se", "lo", "hi")]
    cols += ["p", "n_games", "n_games_baseline"]
    return pd.DataFrame(out, columns=cols).sort_values(
        ["players", "ruleset", last, "level_index"], ignore_index=True
    )


def _decides(
    out: ReportTables, totals: SkillTotals, codes: list[int], level: float
) -> pd.DataFrame:
    """The restricted-play measures: one row each, with its interval and count."""
    rows: list[dict[str, object]] = []
    lineups = out.tables.get("lineup_win_rates", pd.DataFrame())
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
    rows += _seating_rows(totals, level)
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


def _seating_changes(pg: PerGame) -> list[tuple[tuple[int, int], int, int]]:
    """Per (rule set code, players): of the blocks of two-strategy line-ups played with
    several games, those whose winning strategy is not the same in every game, and all."""
    players = pg.players.astype("int64")
    seat_of_winner = np.argmax(pg.win, axis=0)
    winner = np.where(
        pg.n_winners == 1, pg.strategy[seat_of_winner, np.arange(len(pg))], -2
    )  # -2: a shared win
    seated = pg.strategy >= 0  # (seats, games): -1 past a game's player count
    lowest = np.where(seated, pg.strategy, np.iinfo(pg.strategy.dtype).max).min(axis=0)
    highest = np.where(seated, pg.strategy, -1).max(axis=0)
    mixed = (lowest != highest) & (pg.n_winners > 0)
    out = []
    for rs in np.unique(pg.ruleset[mixed]).tolist():
        for k in np.unique(players[mixed & (pg.ruleset == rs)]).tolist():
            part = np.flatnonzero(mixed & (pg.ruleset == rs) & (players == k))
            blocks, local = np.unique(pg.block_index[part], return_inverse=True)
            size = np.bincount(local, minlength=len(blocks))
            lo_w = np.full(len(blocks), np.iinfo(np.int64).max)
            hi_w = np.full(len(blocks), np.iinfo(np.int64).min)
            np.minimum.at(lo_w, local, winner[part])
            np.maximum.at(hi_w, local, winner[part])
            several = size > 1
            out.append(
                ((int(rs), int(k)), int(np.sum((lo_w != hi_w) & several)), int(np.sum(several)))
            )
    return out


def _seating_rows(totals: SkillTotals, level: float) -> list[dict[str, object]]:
    """Per (players, rule set): the share of blocks of two-strategy line-ups (played under
    several seatings) whose winning strategy is not the same in every game."""
    rows = []
    for (rs, k), (changed, n) in sorted(totals.seating.items()):
        if not n:
            continue
        lo, hi = estimators.wilson_interval(changed, n, level)
        rows.append(
            {
                "measure": "seating",
                "what": "blocks whose winning strategy changes with the seating",
                "ruleset": totals.rulesets[rs],
                "players": k,
                "rate": changed / n,
                "lo": lo,
                "hi": hi,
                "fair_share": float("nan"),
                "n": n,
            }
        )
    return rows
