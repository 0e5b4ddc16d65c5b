"""The report's summary: one sentence per question the study can answer, from its tables.

Questions, each answered per group the data has (never across groups):

- seat advantage, per rule set and player count (tables ``seat_shares``, ``seat_tests``);
- each variant against its baseline, per metric compared (``variant_comparison``);
- strategy order, per rule set and player count (``ratings``, ``lineup_win_rates``).

Every sentence is generated from numbers read out of :class:`ReportTables` by column
name (nothing is re-estimated here), names its group, its effect (percentage points for
shares), its 95% interval and its games, and ends in a verdict:

- **shown**: the test rejects "no effect" (an interval that excludes zero; for variants,
  after Holm's correction over every comparison);
- **not shown**: the test does not reject, and the interval excludes every effect of
  ``MATTERS_PP`` percentage points or more, so an effect that size is ruled out;
- **undecided**: neither; the sentence gives the games that would settle it (the power
  table's ``n_to_settle`` for that claim) when the table has it.

The sentences speak of "these strategies": a seat advantage or a strategy order measured
among scripted players need not hold for other players.
"""

from __future__ import annotations

import math
import re
from collections.abc import Set as AbstractSet
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from marrakech_sim.report.fmt import count, interval, p_is, pct, pp
from marrakech_sim.report.tables import ReportTables

MATTERS_PP = 1.0  # an effect on a win share smaller than this does not matter to a designer
METRIC_WORDS = {
    "seat_advantage": ("the first seat's win share minus its fair share", "pp"),
    "turns": ("the game length", "turns"),
    "margin": ("the winning margin", "points"),
    "bankrupt": ("the share of games with a bankruptcy", "pp"),
    "tie_broken": ("the share of games decided by the tie-break", "pp"),
    "winner_dirhams_share": ("the dirhams' share of the winner's score", "pp"),
    "lead_changes": ("the number of lead changes per game", "changes"),
    "comeback": ("the share of comebacks", "pp"),
}
COLUMNS = (
    "question",
    "ruleset",
    "players",
    "sentence",
    "verdict",
    "estimate",
    "lo",
    "hi",
    "unit",
    "n_games",
    "games_needed",
)


@dataclass(frozen=True, slots=True)
class Finding:
    """One answered question: the sentence and the numbers it was written from."""

    question: str
    ruleset: str
    players: int
    sentence: str
    verdict: str
    estimate: float
    lo: float
    hi: float
    unit: str
    n_games: int
    games_needed: float = math.nan


def _verdict(rejected: bool, lo: float, hi: float, matters: float | None) -> str:
    if rejected:
        return "shown"
    if matters is not None and -matters < lo and hi < matters:
        return "not shown"
    return "undecided"


def _games_needed(power: pd.DataFrame, section: str, *words: str) -> float:
    """The power table's games to settle the claim of ``section`` naming all ``words``."""
    if power.empty or not {"section", "claim", "n_to_settle"} <= set(power.columns):
        return math.nan
    rows = power.loc[power["section"] == section]
    for w in words:
        rows = rows.loc[rows["claim"].astype(str).str.contains(w, regex=False)]
    if len(rows) != 1:
        return math.nan
    return float(rows["n_to_settle"].iloc[0])


def _tail(verdict: str, needed: float, what: str) -> str:
    if verdict == "shown":
        return "Shown."
    if verdict == "not shown":
        return f"Not shown: an effect of {MATTERS_PP:g} pp or more is ruled out."
    if math.isfinite(needed):
        return f"Undecided: about {count(needed)} games in all would settle {what}."
    return "Undecided: more games are needed."


def _group(ruleset: str, players: int) -> str:
    return f"{ruleset}, {players} players"


def _order(baselines: set[str]) -> Any:
    """Sort key for (players, ruleset): most players first, a baseline before its variants."""
    return lambda players, ruleset: (-int(players), str(ruleset) not in baselines, str(ruleset))


def seat_findings(
    t: dict[str, pd.DataFrame], baselines: AbstractSet[str] = frozenset()
) -> list[Finding]:
    """One finding per (rule set, players): the first and last seat against a fair share."""
    shares = t.get("seat_shares", pd.DataFrame())
    tests = t.get("seat_tests", pd.DataFrame())
    power = t.get("power", pd.DataFrame())
    out = []
    key = _order(set(baselines))
    groups = sorted(shares.groupby(["players", "ruleset"]), key=lambda g: key(*g[0]))
    for (players, ruleset), part in groups:
        part = part.sort_values("seat")
        first, last = part.iloc[0], part.iloc[-1]
        test = tests.loc[(tests["players"] == players) & (tests["ruleset"] == ruleset)]
        p = float(test["p_block"].iloc[0]) if len(test) else math.nan
        lo_all = float(part["effect_lo_pp"].min())
        hi_all = float(part["effect_hi_pp"].max())
        rejected = (not math.isnan(p) and p < 0.05) or not (
            first.effect_lo_pp <= 0 <= first.effect_hi_pp
        )
        verdict = _verdict(rejected, lo_all, hi_all, MATTERS_PP)
        needed = (
            math.nan
            if verdict != "undecided"
            else _games_needed(power, "seat advantage", "seat 0", f"({ruleset}, {players} ")
        )
        fair = 100.0 / int(players)

        def said(r: Any) -> str:
            more = "more" if r.effect_pp >= 0 else "less"
            return (
                f"{abs(r.effect_pp):.1f} pp {more} [{r.effect_lo_pp:+.1f}, {r.effect_hi_pp:+.1f}]"
            )

        sentence = (
            f"Seat advantage ({_group(ruleset, int(players))}): among these strategies, the "
            f"first seat wins {said(first)} than a fair share of {fair:.1f}%, the last seat "
            f"{said(last)} ({count(first.n_games)} games; test of equal shares "
            f"p{p_is(p)}). " + _tail(verdict, needed, "the first seat's advantage")
        )
        out.append(
            Finding(
                "seat advantage",
                str(ruleset),
                int(players),
                sentence,
                verdict,
                float(first.effect_pp),
                float(first.effect_lo_pp),
                float(first.effect_hi_pp),
                "pp",
                int(first.n_games),
                needed,
            )
        )
    return out


def metric_words(metric: str) -> tuple[str, str]:
    """A variant metric in words, and its unit ('pp' for a share): seat_2_share is seat 2's
    win share (the primary family's per-seat metrics)."""
    seat = re.fullmatch(r"seat_(\d+)_share", metric)
    if seat:
        return f"seat {seat.group(1)}'s win share", "pp"
    return METRIC_WORDS.get(metric, (metric, ""))


def variant_findings(t: dict[str, pd.DataFrame]) -> list[Finding]:
    """One finding per (variant, metric) against the variant's baseline rule set."""
    comp = t.get("variant_comparison", pd.DataFrame())
    power = t.get("power", pd.DataFrame())
    rulesets = t.get("rulesets", pd.DataFrame())
    players_of = (
        dict(zip(rulesets["ruleset"].astype(str), rulesets["players"], strict=True))
        if len(rulesets)
        else {}
    )
    out = []
    for r in comp.itertuples():
        metric = str(r.metric)
        noun, unit = metric_words(metric)
        share = unit == "pp"
        scale = 100.0 if share else 1.0
        d, lo, hi = scale * r.diff, scale * r.lo, scale * r.hi
        verdict = _verdict(bool(r.reject_holm), lo, hi, MATTERS_PP if share else None)
        needed = (
            math.nan
            if verdict != "undecided"
            else _games_needed(power, "variants", f"{metric}:", f" {r.ruleset} minus {r.baseline}")
        )
        word = "higher" if d > 0 else "lower"
        value = fmt_metric(float(r.diff), unit, float(r.lo), float(r.hi))
        band = span_metric(float(r.lo), float(r.hi), unit)
        players = int(players_of.get(str(r.ruleset), 0))
        sentence = (
            f"{r.ruleset} against {r.baseline} ({players} players): among these strategies, "
            f"{noun} is {word} by {value.lstrip('+-')} ({value} {band}; "
            f"{count(r.n_games)} and {count(r.n_games_baseline)} games; Holm-corrected "
            f"p{p_is(float(r.p_holm))}). " + _tail(verdict, needed, "this difference")
        )
        out.append(
            Finding(
                f"variant: {metric}",
                str(r.ruleset),
                players,
                sentence,
                verdict,
                d,
                lo,
                hi,
                "pp" if share else unit,
                int(r.n_games + r.n_games_baseline),
                needed,
            )
        )
    return out


def strategy_findings(
    t: dict[str, pd.DataFrame], baselines: AbstractSet[str] = frozenset()
) -> list[Finding]:
    """One finding per (rule set, players): the rating order and how sure each step is."""
    ratings = t.get("ratings", pd.DataFrame())
    if ratings.empty or "ruleset" not in ratings.columns:
        return []
    out = []
    lineups = t.get("lineup_win_rates", pd.DataFrame())
    key = _order(set(baselines))
    groups = sorted(ratings.groupby(["ruleset", "players"]), key=lambda g: key(g[0][1], g[0][0]))
    for (ruleset, players), part in groups:
        part = part.sort_values("elo", ascending=False)
        steps = []
        for a, b in zip(part.itertuples(), part.iloc[1:].itertuples(), strict=False):
            sure = a.p_above_next >= 0.975
            steps.append(
                f"{a.strategy} {'above' if sure else 'not clearly above'} {b.strategy} "
                f"(P(stronger) = {a.p_above_next:.2f})"
            )
        top, second = part.iloc[0], part.iloc[1]
        gap = float(top.elo - second.elo)
        sure_top = bool(top.p_above_next >= 0.975)
        verdict = "shown" if sure_top else "undecided"
        n_games = int(part["n_games"].max())
        sentence = (
            f"Strategy order ({_group(ruleset, int(players))}): among these strategies, "
            f"{top.strategy} rates highest, {gap:.0f} Elo above {second.strategy} "
            f"({top.strategy} {top.elo:.0f} [{top.elo_lo:.0f}, {top.elo_hi:.0f}], "
            f"{second.strategy} {second.elo:.0f} [{second.elo_lo:.0f}, {second.elo_hi:.0f}]; "
            f"{count(n_games)} games); order: " + ", ".join(steps) + ". "
        )
        duel = _duel(lineups, str(ruleset), str(top.strategy), str(second.strategy))
        if duel:
            sentence += duel + " "
        sentence += (
            "Shown: the top strategy is ahead."
            if sure_top
            else "Undecided: the top two are within chance of each other."
        )
        out.append(
            Finding(
                "strategy order",
                str(ruleset),
                int(players),
                sentence,
                verdict,
                gap,
                float("nan"),
                float("nan"),
                "Elo",
                n_games,
            )
        )
    return out


def _duel(lineups: pd.DataFrame, ruleset: str, top: str, second: str) -> str:
    """The top strategy's win share against the second alone, when a line-up is just them."""
    need = {"ruleset", "lineup", "strategy", "rate", "lo", "hi", "n_games"}
    if lineups.empty or not need <= set(lineups.columns):
        return ""
    pair = {top, second}
    rows = lineups.loc[
        (lineups["ruleset"].astype(str) == ruleset)
        & (lineups["strategy"].astype(str) == top)
        & lineups["lineup"].astype(str).map(lambda x: set(x.split("|")) == pair)
    ]
    if len(rows) != 1:
        return ""
    r = rows.iloc[0]
    return (
        f"Head to head, {top} wins {100 * r.rate:.1f}% of its games against {second} "
        f"[{100 * r.lo:.1f}, {100 * r.hi:.1f}], {pp(100 * (r.rate - 0.5))} over an even "
        f"share ({count(r.n_games)} games)."
    )


def player_model(rt: ReportTables) -> str:
    """The sentence stating whom the findings hold for."""
    names: list[str] = []
    wr = rt.tables.get("win_rates", pd.DataFrame())
    if "strategy" in wr:
        names = sorted(str(s) for s in wr["strategy"].unique())
    who = ", ".join(names) if names else "the study's strategies"
    return (
        f"These findings are about the scripted strategies this study played ({who}) in its "
        "schedule; a seat advantage or a strategy order among other players (people, or "
        "stronger programs) may differ. Intervals are 95% and computed from block totals "
        "(games that share dice are not counted as independent)."
    )


def metric_decimals(lo: float, hi: float) -> int:
    """Decimals for a metric in its own unit (not pp) whose interval is [lo, hi]: enough
    to show the half-width to one significant digit (0.005 -> 3), from 2 to 4, so that a
    difference of a few thousandths of a turn does not print as '+0.00 [-0.00, +0.01]'."""
    half = (hi - lo) / 2
    if not math.isfinite(half) or half <= 0:
        return 2
    return min(4, max(2, -math.floor(math.log10(half))))


def fmt_metric(x: float, unit: str, lo: float, hi: float) -> str:
    """A variant metric's value in its unit (metric_words), a share given as a fraction,
    to the decimals its interval [lo, hi] calls for: '+1.2 pp' or '+0.35 points'."""
    return pp(100 * x) if unit == "pp" else f"{x:+.{metric_decimals(lo, hi)}f} {unit}"


def span_metric(lo: float, hi: float, unit: str) -> str:
    """A variant metric's interval in its unit, as fmt_metric: '[+1.1, +2.3]'."""
    if unit == "pp":
        return interval(100 * lo, 100 * hi)
    decimals = metric_decimals(lo, hi)
    return interval(lo, hi, lambda v: f"{v:+.{decimals}f}")


def _ends_and_test(r: Any, unit: str = "pp", suffix: str = "_pp") -> tuple[str, str]:
    """A trend row's effect at the weakest and strongest levels, and its test. Its effect
    columns end in `suffix`: '_pp' (in pp already), or '_value' (a variant metric in its
    `unit`, shares as fractions)."""

    def get(name: str) -> float:
        return float(getattr(r, name + suffix))

    in_pp = suffix == "_pp"

    def estimate(name: str) -> str:
        """The column `name`'s estimate and interval: '+1.2 pp [+0.3, +2.1]'."""
        x, lo, hi = get(name), get(name + "_lo"), get(name + "_hi")
        if in_pp:
            return f"{pp(x)} {interval(lo, hi)}"
        return f"{fmt_metric(x, unit, lo, hi)} {span_metric(lo, hi, unit)}"

    ends = (
        f"{estimate('weakest')} when every seat plays {r.weakest}, "
        f"{estimate('strongest')} when every seat plays {r.strongest}"
    )
    slope_lo, slope_hi = get("slope_lo"), get("slope_hi")
    slope = (
        f"{pp(get('slope'), 2)} per level {interval(slope_lo, slope_hi)}"
        if in_pp
        else f"{fmt_metric(get('slope'), unit, slope_lo, slope_hi)} per level "
        f"{span_metric(slope_lo, slope_hi, unit)}"
    )
    trend = f"slope {slope}, p{p_is(r.p)}"
    if r.change != "varies":
        return ends, f"{trend} (weighted trend over {r.levels} levels)"
    steps = {
        r.up_at: f"up {estimate('up')} from {r.up_from} to {r.up_to}",
        r.down_at: f"down {estimate('down')} from {r.down_from} to {r.down_to}",
    }
    test = (
        f"{' and '.join(steps[i] for i in sorted(steps))}, each step beyond its 95% interval, "
        f"so a line misdescribes it (weighted trend over {r.levels} levels: {trend})"
    )
    return ends, test


def _variant_trend(what: str, r: Any, ends: str, test: str) -> str:
    """A variant's trend sentence: what changes, and how."""
    if r.change == "no change shown":
        return f"{what}: no change of the variant's effect with skill is shown ({ends}; {test})."
    return f"{what}: the variant's effect {r.change} with skill: {ends}; {test}."


def trend_sentence(r: Any) -> str:
    """One sentence per (players, rule set, seat): how the seat's effect changes with skill."""
    where = f"with {r.players} players under {r.ruleset}"
    ends, test = _ends_and_test(r)
    if r.change == "no change shown":
        return f"Seat {r.seat} {where}: no change with skill is shown ({ends}; {test})."
    return f"Seat {r.seat}'s advantage {where} {r.change} with skill: {ends}; {test}."


def variant_trend_sentence(r: Any) -> str:
    """One sentence per (players, variant, seat): how the variant's effect on the seat
    (variant minus base) changes with skill."""
    what = f"{r.ruleset} against {r.baseline} ({r.players} players), seat {r.seat}"
    return _variant_trend(what, r, *_ends_and_test(r))


def decides_sentence(r: Any) -> str:
    """One sentence per restricted-play measure."""
    where = f"{r.players} players, {r.ruleset}"
    if r.measure == "seating":
        return (
            f"How much the seat and the dice decide: in {pct(r.rate)} "
            f"{interval(r.lo, r.hi, pct)} of {count(r.n)} blocks of two-strategy line-ups "
            f"({where}) the winning strategy changes when only the seating changes."
        )
    lead = "How much skill decides" if r.measure == "skill" else "Which decision matters more"
    return (
        f"{lead}: {r.what}, {pct(r.rate)} {interval(r.lo, r.hi, pct)} of "
        f"{count(r.n)} games ({where}; fair share {pct(r.fair_share)})."
    )


def metric_trend_sentence(r: Any) -> str:
    """One sentence per (players, variant, metric): how the variant's effect on a per-game
    metric (variant minus base) changes with skill."""
    noun, unit = metric_words(str(r.metric))
    what = f"{r.ruleset} against {r.baseline} ({r.players} players), {noun}"
    return _variant_trend(what, r, *_ends_and_test(r, unit, "_value"))


def skill_findings(t: dict[str, pd.DataFrame]) -> list[Finding]:
    """One finding per (players, rule set, seat) of a study with skill levels: how the seat's
    effect changes from the weakest to the strongest level, and one per (players, variant,
    seat) and per (players, variant, per-game metric): how the variant's effect changes
    (report.sections.skill)."""
    out = []
    rows = [
        (trend_sentence, r, "skill") for r in t.get("skill_trends", pd.DataFrame()).itertuples()
    ]
    rows += [
        (variant_trend_sentence, r, "skill: variant")
        for r in t.get("skill_variant_trends", pd.DataFrame()).itertuples()
    ]
    for sentence, r, kind in rows:
        slope = (float(r.slope_pp), float(r.slope_lo_pp), float(r.slope_hi_pp))
        out.append(_skill_finding(kind, r, sentence(r), slope, "pp", MATTERS_PP))
    for r in t.get("skill_metric_variant_trends", pd.DataFrame()).itertuples():
        _, unit = metric_words(str(r.metric))
        scale = 100.0 if unit == "pp" else 1.0
        scaled = (
            scale * float(r.slope_value),
            scale * float(r.slope_lo_value),
            scale * float(r.slope_hi_value),
        )
        matters = MATTERS_PP if unit == "pp" else None
        said = metric_trend_sentence(r)
        out.append(_skill_finding("skill: variant metric", r, said, scaled, unit, matters))
    return out


def _skill_finding(
    kind: str,
    r: Any,
    sentence: str,
    slope: tuple[float, float, float],
    unit: str,
    matters: float | None,
) -> Finding:
    """A trend over the skill levels as a finding: shown when it changes; not shown when
    the slope's interval rules out `matters` per level either way."""
    verdict = _verdict(r.change != "no change shown", slope[1], slope[2], matters)
    return Finding(
        kind,
        str(r.ruleset),
        int(r.players),
        f"{sentence} {verdict.capitalize()}.",
        verdict,
        slope[0],
        slope[1],
        slope[2],
        f"{unit} per level",
        0,
    )


def find(rt: ReportTables) -> pd.DataFrame:
    """Every finding of the report as a table (``COLUMNS``), in the summary's order.

    In a study with skill levels (one strategy in every seat), a rule set's seat and
    variant findings are per level (`skill_findings`): a seat effect or a variant's effect
    pooled over levels is not a finding.
    """
    t = rt.tables
    bases = {str(b) for b in rt.facts.get("baselines", {}).values()}
    skill = skill_findings(t)
    leveled = {(f.ruleset, f.players) for f in skill}
    seats = [f for f in seat_findings(t, bases) if (f.ruleset, f.players) not in leveled]
    variants = [f for f in variant_findings(t) if (f.ruleset, f.players) not in leveled]
    found = [*seats, *skill, *variants, *strategy_findings(t, bases)]
    table = pd.DataFrame([asdict(f) for f in found], columns=list(COLUMNS))
    table["n_games"] = table["n_games"].astype("int64")
    return table


def summary_lines(findings: pd.DataFrame) -> list[str]:
    """The sentences, one per finding, in order."""
    return [str(s) for s in findings["sentence"]]


def verdict_counts(findings: pd.DataFrame) -> dict[str, int]:
    """How many findings have each verdict."""
    counts = findings["verdict"].value_counts()
    return {v: int(counts.get(v, 0)) for v in ("shown", "not shown", "undecided")}


__all__ = [
    "COLUMNS",
    "MATTERS_PP",
    "Finding",
    "find",
    "player_model",
    "summary_lines",
    "verdict_counts",
]
