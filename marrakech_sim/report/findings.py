"""The report's findings: one corrected family of tests, each stated once in plain words.

Every sentence of the summary is one test of a single family, corrected together
(`stats.verdicts`: Bonferroni, so each finding's printed interval is a ``1 - 0.05 / m``
interval and its verdict is read off that same interval). The family holds, per group
the data has (rule set, player count, player model; never across groups):

- **seat**: each seat's win share against a fair share (with 2 players seat 1's is minus
  seat 0's, so only seat 0 is tested), in the study's mixed games (``seat_shares``), or
  per skill level where the study declares levels (``skill_seats``);
- **skill**: how a seat's effect changes with skill: a line on the levels' measured
  strength where one fits (``skill_trends``; its lack-of-fit test at 5%), judged on the
  line's change from the weakest to the strongest level, else each step between
  neighbouring levels (``skill_steps``);
- **variant**: each variant against its base, per metric (``variant_comparison``), or per
  skill level and seat / metric (``skill_variants``, ``skill_metric_variants``);
- **strategy order**: the top strategy's Elo gap over the second (``ratings``).

A verdict compares the interval with what matters to the designer (the study's
``[report] matters_pp`` for shares, ``margins`` for metrics in their own unit): *matters*,
*real but small*, *negligible* or *undecided* (with the games a prospective 80%-power
design at the family's level would need). The player model is named in every sentence:
a seat advantage among scripted players need not hold for other players.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from functools import partial
from typing import Any

import pandas as pd

from marrakech_sim.report.fmt import count, interval, p_is, pct, pp, signed
from marrakech_sim.report.tables import TURN_METRICS, ReportTables, Tables, or_empty
from marrakech_sim.run.config import ReportOptions
from marrakech_sim.stats import estimators, verdicts
from marrakech_sim.stats.variants import PRIMARY_METRICS
from marrakech_sim.stats.winrates import LINEUP_SEP

ALPHA = 0.05  # the family's error rate
LACK_OF_FIT_ALPHA = 0.05  # a line rejected at this level is not a trend
MATTERS_PP = ReportOptions().matters_pp
METRIC_WORDS = {
    "seat_advantage": ("the first seat's win share minus its fair share", "pp"),
    "turns": ("the game length", "turns"),
    "margin": ("the winning margin", "points"),
    "bankrupt": ("the share of games with a bankruptcy", "pp"),
    "tie_broken": ("the share of games decided by the tie-break", "pp"),
    "winner_dirhams_share": ("the dirhams' share of the winner's score", "pp"),
    "lead_changes": ("the number of lead changes per game", "changes"),
    "comeback": ("the share of comebacks", "pp"),
    "decided_turn": ("the turn from which the winner leads for good", "turns"),
}
COLUMNS = (
    "question",
    "ruleset",
    "players",
    "model",
    "subject",
    "sentence",
    "headline",
    "verdict",
    "estimate",
    "lo",
    "hi",
    "unit",
    "margin",
    "n_games",
    "games_needed",
    "family_size",
    "level",
)
VERDICT_WORDS = {
    "matters": "it matters",
    "real but small": "real but small",
    "negligible": "negligible",
    "undecided": "undecided",
}


@dataclass(frozen=True, slots=True)
class Test:
    """One member of the family before the correction: an effect, its standard error and
    (for a share) what a Wilson interval needs, and how to say it."""

    question: str
    ruleset: str
    players: int
    model: str
    subject: str
    estimate: float
    se: float
    unit: str
    margin: float
    n_games: int
    say: Callable[[Finding], str]
    plain: Callable[[Finding], str] | None = None
    share: tuple[float, float, float] | None = None  # (share, n_eff, fair share): Wilson
    # the degrees of freedom of the variance (blocks or seeds - 1): a t quantile, not the
    # normal one, so that few blocks give a wide interval (inf: the normal quantile)
    df: float = math.inf


@dataclass(frozen=True, slots=True)
class Finding:
    """One answered question: the sentence and the numbers it was written from."""

    question: str
    ruleset: str
    players: int
    model: str
    subject: str
    sentence: str
    headline: str
    verdict: str
    estimate: float
    lo: float
    hi: float
    unit: str
    margin: float
    n_games: int
    games_needed: float
    family_size: int
    level: float


def player(seat: int) -> str:
    """A seat as a person reads it: seat 0 is player 1."""
    return f"player {int(seat) + 1}"


def title(ruleset: str) -> str:
    """A rule set's name as a title: 'orient_at_end' -> 'orient at end'."""
    return str(ruleset).replace("_", " ")


def group_title(ruleset: str, players: int) -> str:
    """A rule set with its player count, 'orient at end, 4 players'; a name that already
    says the count ('three_players') is not said twice ('three players, 3 players')."""
    name = title(ruleset)
    return name if "player" in name.lower() else f"{name}, {int(players)} players"


def metric_words(metric: str) -> tuple[str, str]:
    """A variant metric in words, and its unit ('pp' for a share): seat_2_share is
    player 3's win share (the primary family's per-seat metrics)."""
    seat = re.fullmatch(r"seat_(\d+)_share", metric)
    if seat:
        return f"{player(int(seat.group(1)))}'s win share", "pp"
    return METRIC_WORDS.get(metric, (metric, ""))


def margin_of(options: ReportOptions, metric: str, unit: str) -> float:
    """The practical margin of a metric in its unit: matters_pp for shares (pp)."""
    return options.matters_pp if unit == "pp" else options.margin(metric)


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
    return pp(100 * x) if unit == "pp" else f"{signed(x, metric_decimals(lo, hi))} {unit}"


def span_metric(lo: float, hi: float, unit: str, margin: float = math.nan) -> str:
    """A variant metric's interval in its unit, as fmt_metric: '[+1.1, +2.3]'; an end
    gets more decimals where it would round onto 0 or the margin (`clear_decimals`)."""
    if unit == "pp":
        return pp_interval(100 * lo, 100 * hi, margin)
    decimals = clear_decimals(lo, hi, metric_decimals(lo, hi), margin)
    return interval(lo, hi, lambda v: signed(v, decimals))


def real_but_undecided(verdict: str, lo: float, hi: float) -> bool:
    """An undecided verdict whose interval (of some width) excludes 0 but crosses the
    margin: the effect is real, its size is what is undecided."""
    spread = math.isfinite(lo) and math.isfinite(hi) and lo < hi
    return verdict == "undecided" and spread and (lo > 0 or hi < 0)


def verdict_label(verdict: str, lo: float, hi: float) -> str:
    """A verdict as a table cell: 'real, size undecided' where `real_but_undecided`, as
    its sentence says."""
    return "real, size undecided" if real_but_undecided(verdict, lo, hi) else verdict


def clear_decimals(lo: float, hi: float, decimals: int, margin: float) -> int:
    """`decimals`, or as many more (up to four) as an end of [lo, hi] needs not to round
    onto 0 or the margin (either sign) when it is not that value: a verdict read off the
    interval then reads off the printed one too ('excludes 0' beside [+0.04, +0.6], not
    [0.0, +0.6])."""
    ends = [abs(v) for v in (lo, hi) if math.isfinite(v)]
    marks = [0.0, *([abs(margin)] if math.isfinite(margin) else [])]
    while decimals < 4 and any(round(v, decimals) == m != v for v in ends for m in marks):
        decimals += 1
    return decimals


def pp_interval(lo: float, hi: float, margin: float) -> str:
    """An interval in pp, to one decimal, or as many more (up to four) as an end needs not
    to round onto 0 or the margin it is judged against ([+0.50, +1.02], not [+0.5, +1.0],
    for a verdict read off +1.016)."""
    digits = clear_decimals(lo, hi, 1, margin)
    return interval(lo, hi, lambda v: signed(v, digits))


def _value(f: Finding) -> str:
    """A finding's estimate and its family interval in its unit: '+1.2 pp [+0.3, +2.1]'."""
    if f.unit == "pp" or f.unit.startswith("pp "):
        return f"{pp(f.estimate)} {pp_interval(f.lo, f.hi, f.margin)}{f.unit[2:]}"
    if f.unit == "Elo":
        return f"{f.estimate:+.0f} Elo {interval(f.lo, f.hi, lambda v: f'{v:+.0f}')}"
    unit = f.unit.split(" ", 1)
    shown = fmt_metric(f.estimate, unit[0], f.lo, f.hi)
    band = span_metric(f.lo, f.hi, unit[0], f.margin)
    return f"{shown} {band}" + (f" {unit[1]}" if len(unit) > 1 else "")


def _margin(f: Finding) -> str:
    """'±1 pp', '±2 points', '±1 point', '±20 Elo'."""
    unit = f.unit.split(" ")[0]
    if f.margin == 1 and unit.endswith("s"):
        unit = unit[:-1]
    return f"±{f.margin:g} {unit}"


def tail(f: Finding) -> str:
    """The verdict in words, with the margin it was judged against, and for an undecided
    finding the games a prospective design would need."""
    band = _margin(f)
    if f.verdict == "matters":
        return f"It matters: the interval lies beyond {band}."
    if f.verdict == "real but small":
        return f"Real but small: the interval excludes 0 and lies within {band}."
    if f.verdict == "negligible":
        return f"Negligible: the interval lies within {band} (an equivalence test)."
    if f.lo == f.hi and f.estimate == 0:
        return (
            "Undecided: the difference is exactly 0 in every pair of blocks sharing dice "
            "(the two played the same games to the same end), so it has no spread to bound "
            "it by: the change may make no difference at all, or only in games these seeds "
            "did not deal; more games are needed to tell."
        )
    if f.lo == f.hi:
        return (
            "Undecided: these games show no spread (each block, or pair of blocks sharing "
            "dice, gave the same value), so their interval cannot bound the effect; more "
            "games are needed."
        )
    real = real_but_undecided(f.verdict, f.lo, f.hi)
    head = (
        f"Real, but undecided in size: the interval excludes 0 and crosses {band};"
        if real
        else "Undecided:"
    )
    if math.isfinite(f.games_needed) and f.games_needed > f.n_games:
        more = f.games_needed - f.n_games
        if not real:
            return (
                f"{head} about {count(more)} more games ({count(f.games_needed)} in all) "
                f"would give 80% power at the family's level to show a zero effect "
                f"negligible (within {band}); they would also detect an effect of {band}."
            )
        return (
            f"{head} about {count(more)} more games ({count(f.games_needed)} in all) "
            f"would give 80% power to show an effect of {band} at the family's level."
        )
    if math.isfinite(f.games_needed):
        return (
            f"{head} these games already give 80% power for an effect of "
            f"{band}: the effect lies close to that margin."
        )
    return f"{head} more games are needed."


# ---------------------------------------------------------------- the family's members


def _group_words(ruleset: str, players: int) -> str:
    return f"{players}-player games under {title(ruleset)}"


def mixed_model(t: Tables, ruleset: str) -> str:
    """The player model of a rule set's mixed games: the strategies that played them."""
    lineups = t.lineup_win_rates
    names: set[str] = set()
    if len(lineups) and "lineup" in lineups.columns:
        for x in lineups.loc[lineups["ruleset"].astype(str) == ruleset, "lineup"]:
            names |= set(str(x).split(LINEUP_SEP))
    if not names:
        wr = t.win_rates
        names = {str(s) for s in wr.get("strategy", [])}
    return "the study's mix of " + ", ".join(sorted(names)) if names else "the study's players"


def level_model(level: str) -> str:
    """A self-play player model in words: 'greedy players in every seat'."""
    return f"{level} players in every seat"


def _seat_sentence(
    f: Finding, r: Any, model: str, fair: float, plain: bool = False, spread: str = ""
) -> str:
    """A seat test's finding in words: the full sentence, or the summary's plain one;
    `spread`: what the pooled line-ups hide (`lineup_spread`), said after the verdict."""
    group = _group_words(r.ruleset, int(r.players))
    if plain:
        return (
            f"{player(r.seat).capitalize()} wins {pct(r.share)} of {group} among {model}, "
            f"against a fair {pct(fair)}: {_value(f)}; {VERDICT_WORDS[f.verdict]}."
        )
    return (
        f"Seat advantage ({group}, among {model}): {player(r.seat)} wins {pct(r.share)} "
        f"against a fair share of {pct(fair)}: {_value(f)} "
        f"({count(r.n_games)} games). {tail(f)}{spread}"
    )


#: a seat's effect differs between the pooled line-ups below this p, Bonferroni-corrected
#: over the report's heterogeneity tests
SPREAD_ALPHA = 0.05


def lineup_spread(t: Tables) -> dict[tuple[int, str, int], str]:
    """(players, rule set, seat) -> a sentence, for each seat whose effect differs between
    the line-ups its group pools (seat_lineups' F test, Bonferroni over its rows)."""
    rows = or_empty(t.seat_lineups)
    out = {}
    for r in rows.itertuples():
        if r.p >= SPREAD_ALPHA / len(rows):
            continue
        low, high = (str(x).replace(LINEUP_SEP, ", ") for x in (r.lowest_lineup, r.highest_lineup))
        out[(int(r.players), str(r.ruleset), int(r.seat))] = (
            f" The effect differs between the {r.lineups} line-ups pooled here (F = "
            f"{r.f:.1f} on {r.df1} and {r.df2} df, p{p_is(r.p)}): from {pp(r.lowest_pp)} "
            f"among {low} to {pp(r.highest_pp)} among {high}."
        )
    return out


def _seat_tests(
    rows: pd.DataFrame,
    model_of: Callable[[Any], str],
    options: ReportOptions,
    spreads: dict[tuple[int, str, int], str] | None = None,
) -> Iterator[Test]:
    """One test per seat row (share, n_eff, effect_pp, n_games, players, seat, ruleset);
    with 2 players seat 0 only. `spreads`: `lineup_spread`'s sentences."""
    for r in rows.itertuples():
        if int(r.players) == 2 and int(r.seat) == 1:
            continue
        share, n_eff, fair = float(r.share), float(r.n_eff), 1.0 / int(r.players)
        se = 100 * math.sqrt(share * (1 - share) / n_eff) if n_eff > 0 else math.nan
        model = model_of(r)
        spread = (spreads or {}).get((int(r.players), str(r.ruleset), int(r.seat)), "")

        say = partial(_seat_sentence, r=r, model=model, fair=fair, spread=spread)
        plain = partial(_seat_sentence, r=r, model=model, fair=fair, plain=True)

        yield Test(
            "seat",
            str(r.ruleset),
            int(r.players),
            model,
            player(r.seat),
            float(r.effect_pp),
            se,
            "pp",
            options.matters_pp,
            int(r.n_games),
            say,
            plain,
            (share, n_eff, fair),
            float(r.n_blocks) - 1,
        )


def _step_tests(t: Tables, options: ReportOptions) -> Iterator[Test]:
    """The skill findings of each (players, rule set, seat): the lines on strength that
    fit, and where none fits, each step between neighbouring levels."""
    lines = t.skill_trends
    steps = t.skill_steps
    fitted: set[tuple[int, str, int]] = set()
    for r in lines.itertuples():
        if r.lack_of_fit_p < LACK_OF_FIT_ALPHA:
            continue
        fitted.add((int(r.players), str(r.ruleset), int(r.seat)))

        def say(f: Finding, r: Any = r) -> str:
            names = str(r.names).replace(LINEUP_SEP, ", ")
            return (
                f"Skill ({_group_words(r.ruleset, int(r.players))}, {player(r.seat)}, "
                f"{r.level_set}: {names}): on the levels' measured strength "
                f"({r.elo_from:.0f} to {r.elo_to:.0f} Elo) a line fits (lack of fit "
                f"chi-square {r.lack_of_fit:.1f} on {r.lack_of_fit_df} df, p = "
                f"{r.lack_of_fit_p:.2f}; slope {pp(r.slope_pp)} per 100 Elo); from "
                f"the weakest to the strongest level the effect {_direction(r, f)} by "
                f"{_value(f)}, from {pp(r.weakest_fit_pp)} to {pp(r.strongest_fit_pp)} "
                f"on the line. {tail(f)}"
            )

        # judged on the line's change over the levels' range, not per 100 Elo: a slope
        # within the margin per 100 Elo can add up to many margins over 1,600 Elo
        yield Test(
            "skill trend",
            str(r.ruleset),
            int(r.players),
            f"skill levels ({r.level_set})",
            player(r.seat),
            float(r.change_pp),
            float(r.change_se_pp),
            "pp over the levels' range",
            options.matters_pp,
            int(r.n_games),  # every level's games: more of each narrows the line alike
            say,
        )
    for r in steps.itertuples():
        if (int(r.players), str(r.ruleset), int(r.seat)) in fitted:
            continue

        def say_step(f: Finding, r: Any = r) -> str:
            return (
                f"Skill ({_group_words(r.ruleset, int(r.players))}, {player(r.seat)}): from "
                f"{r.from_level} to {r.to_level} players (every seat plays it) "
                f"{player(r.seat)}'s effect changes by {_value(f)} "
                f"({count(r.n_games_from)} and {count(r.n_games_to)} games). {tail(f)}"
            )

        yield Test(
            "skill step",
            str(r.ruleset),
            int(r.players),
            f"{r.from_level} to {r.to_level}",
            player(r.seat),
            float(r.step_pp),
            float(r.se_pp),
            "pp",
            options.matters_pp,
            int(r.n_games_from + r.n_games_to),
            say_step,
        )


def _direction(r: Any, f: Finding) -> str:
    """How a fitted line's effect moves from the weakest to the strongest level: only a
    verdict that excludes 0 says which way."""
    if f.verdict not in ("matters", "real but small"):
        return "changes"
    a, b = float(r.weakest_fit_pp), float(r.strongest_fit_pp)
    if a * b < 0:
        return "reverses (crosses 0) as skill rises, changing"
    return (
        "grows as skill rises, changing" if abs(b) > abs(a) else "shrinks as skill rises, changing"
    )


def _variant_sentence(
    f: Finding, r: Any, noun: str, model: str, players: int, plain: bool = False
) -> str:
    """A variant test's finding in words: the full sentence, or the summary's plain one."""
    ruleset, baseline = title(r.ruleset).capitalize(), title(r.baseline)
    among = f"{players} players, among {model}"
    subset = _subset_words(r, noun, title(r.ruleset), baseline)
    shown = _value(f)
    if plain:
        word = _sign_word(f, shown, ("raises", "lowers", "changes"))
        among_games = " (in the games that have one; see the finding)" if subset else ""
        return (
            f"{ruleset} (against {baseline}, {among}) {word} {noun}{among_games}: "
            f"{shown}; {VERDICT_WORDS[f.verdict]}."
        )
    word = "is " + _sign_word(f, shown, ("higher", "lower", "about the same"))
    sample = ""
    if str(r.metric) in TURN_METRICS and f.verdict == "undecided":
        sample = (
            " (Its games are the report's per-turn sample, whose moves it reads: "
            "`marrakech report --moves-games N` reads more of them.)"
        )
    return (
        f"{ruleset} against {baseline} ({among}): {noun} {word}: {shown} "
        f"({count(r.n_games)} and {count(r.n_games_baseline)} games). {tail(f)}{sample}{subset}"
    )


def _sign_word(f: Finding, shown: str, words: tuple[str, str, str]) -> str:
    """The word for the estimate's direction (up, down), or the third where the estimate
    as shown (`shown`, its value before the interval) rounds to 0."""
    value = shown.split(" [", 1)[0]
    if not re.search(r"[1-9]", value):
        return words[2]
    return words[0] if f.estimate > 0 else words[1]


#: two rule sets whose shares of games with a value of the metric differ by more than
#: this, and whose games do not pair, compare different sets of games: the finding says so
SUBSET_GAP = 0.001


def _subset_words(r: Any, noun: str, ruleset: str, baseline: str) -> str:
    """Where the metric has a value in different games of the two rule sets (the margin
    of a 2-player game with a bankruptcy), what the difference compares; else ''."""
    mine = float(getattr(r, "defined_share", math.nan))
    theirs = float(getattr(r, "defined_share_baseline", math.nan))
    why = " (it needs two seats that finish)" if str(r.metric) == "margin" else ""
    shares = (
        f"{noun} has a value in {pct(mine, 1)} of the games of {ruleset} and "
        f"{pct(theirs, 1)} of those of {baseline}{why}"
    )
    if bool(getattr(r, "common_only", False)):
        return (
            f" Note: {shares}; the games share their dice, so the difference is taken on "
            f"the seeds where every game has a value under both ({count(r.n_games)} games): "
            "the change the rule makes to the same games."
        )
    if not abs(mine - theirs) > SUBSET_GAP:
        return ""
    return (
        f" Note: {shares}, so the difference compares different sets of games: it mixes a "
        "change of the metric with a change of which games have it, and is not the change "
        "the rule makes to the same games."
    )


def _variant_tests(
    rows: pd.DataFrame,
    options: ReportOptions,
    model_of: Callable[[Any], str],
    players_of: Callable[[Any], int],
) -> Iterator[Test]:
    """One test per variant comparison row (metric, diff, se, n_games, n_games_baseline)."""
    for r in rows.itertuples():
        metric = str(r.metric)
        players = players_of(r)
        if players == 2 and metric == "seat_1_share":
            continue
        noun, unit = metric_words(metric)
        scale = 100.0 if unit == "pp" else 1.0
        model = model_of(r)

        words = {"r": r, "noun": noun, "model": model, "players": players}
        say = partial(_variant_sentence, **words)
        plain = partial(_variant_sentence, plain=True, **words)

        yield Test(
            f"variant: {metric}",
            str(r.ruleset),
            players,
            model,
            noun,
            scale * float(r.diff),
            scale * float(r.se),
            unit,
            margin_of(options, metric, unit),
            int(r.n_games + r.n_games_baseline),
            say,
            plain,
            df=float(getattr(r, "df", math.inf)),
        )


def _order_tests(t: Tables, options: ReportOptions) -> Iterator[Test]:
    """Per (rule set, players) with ratings: the top strategy's Elo gap over the second."""
    ratings = or_empty(t.ratings)
    if ratings.empty or "gap_se_elo" not in ratings.columns:
        return
    for (ruleset, players), part in ratings.groupby(["ruleset", "players"], sort=True):
        part = part.sort_values("elo", ascending=False)
        if len(part) < 2:
            continue
        top, second = part.iloc[0], part.iloc[1]
        gap = float(top.elo - second.elo)
        order = " > ".join(str(s) for s in part["strategy"])
        model = mixed_model(t, str(ruleset))

        def say(
            f: Finding,
            top: Any = top,
            second: Any = second,
            order: str = order,
            group: str = _group_words(str(ruleset), int(players)),
            model: str = model,
        ) -> str:
            return (
                f"Strategy order ({group}, among "
                f"{model}): {top.strategy} rates highest, {_value(f)} above "
                f"{second.strategy} (estimated order {order}, only the top two's gap "
                f"tested; {count(top.n_games)} games of {top.strategy}). {tail(f)}"
            )

        def plain(
            f: Finding,
            top: Any = top,
            second: Any = second,
            group: str = _group_words(str(ruleset), int(players)),
            model: str = model,
        ) -> str:
            return (
                f"In {group}, {top.strategy} rates highest among {model}: {_value(f)} above "
                f"{second.strategy}; {VERDICT_WORDS[f.verdict]}."
            )

        yield Test(
            "strategy order",
            str(ruleset),
            int(players),
            model,
            str(top.strategy),
            gap,
            float(top.gap_se_elo),
            "Elo",
            options.margin("elo"),
            int(part["n_games"].max()),
            say,
            plain,
        )


def family(rt: ReportTables) -> list[Test]:
    """Every member of the report's family of tests, in the summary's order: the study's
    mixed games (their own tables), then each self-play player model and skill level."""
    t = rt.tables
    options = rt.facts.report_options
    rulesets = t.rulesets
    players_of_rs = (
        dict(zip(rulesets["ruleset"].astype(str), rulesets["players"], strict=True))
        if len(rulesets)
        else {}
    )
    shares = t.seat_shares
    if len(shares):
        shares = shares.sort_values(["players", "ruleset", "seat"], ascending=[False, True, True])
    tests = list(
        _seat_tests(shares, lambda r: mixed_model(t, str(r.ruleset)), options, lineup_spread(t))
    )
    comp = t.variant_comparison
    if len(comp):
        tests += _variant_tests(
            comp,
            options,
            lambda r: mixed_model(t, str(r.ruleset)),
            lambda r: int(players_of_rs.get(str(r.ruleset), 0)),
        )
    alone = t.skill_seats
    if len(alone):
        tests += _seat_tests(alone, lambda r: level_model(str(r.level)), options)
        tests += _step_tests(t, options)
    per_level = t.skill_variants
    if len(per_level):
        rows = per_level.assign(
            metric=[f"seat_{s}_share" for s in per_level["seat"]],
            diff=per_level["difference_pp"] / 100,
            se=per_level["se_pp"] / 100,
            df=per_level["df"].fillna(math.inf),  # unpaired: the normal quantile
        )
        tests += _variant_tests(
            rows, options, lambda r: level_model(str(r.level)), lambda r: r.players
        )
    metrics = t.skill_metric_variants
    if len(metrics):
        rows = metrics.assign(
            diff=metrics["difference_value"],
            se=metrics["se_value"],
            df=metrics["df"].fillna(math.inf),
        )
        tests += _variant_tests(
            rows, options, lambda r: level_model(str(r.level)), lambda r: r.players
        )
    tests += _order_tests(t, options)
    return [x for x in tests if math.isfinite(x.estimate)]


def decide(tests: list[Test], alpha: float = ALPHA) -> list[Finding]:
    """The family's findings: each test's interval at the family's level, its verdict read
    off that interval, and the games a prospective design would need when undecided."""
    if not tests:
        return []
    m = len(tests)
    level = verdicts.family_level(m, alpha)
    z = verdicts.family_z(m, alpha)
    out = []
    for x in tests:
        # Student's t on the variance's degrees of freedom (NaN below 1: one block), in
        # the Wilson interval too
        crit = z if math.isinf(x.df) else estimators.t_value(level, x.df)
        if x.share is not None and math.isfinite(crit):
            share, n_eff, fair = x.share
            lo_s, hi_s = estimators.wilson_interval(share * n_eff, n_eff, crit=crit)
            lo, hi = 100 * (lo_s - fair), 100 * (hi_s - fair)
        else:
            lo, hi = x.estimate - crit * x.se, x.estimate + crit * x.se
        verdict = verdicts.verdict(lo, hi, x.margin)
        # undecided with 0 inside: the games to show it negligible if it is 0 (which also
        # detect an effect of the margin); else the games to detect one of the margin
        needed = (
            verdicts.games_for_power(x.se, x.n_games, x.margin, z, equivalence=lo <= 0 <= hi)
            if verdict == "undecided" and x.n_games
            else math.nan
        )
        f = Finding(
            x.question, x.ruleset, x.players, x.model, x.subject, "", "", verdict,
            x.estimate, lo, hi, x.unit, x.margin, x.n_games, needed, m, level,
        )  # fmt: skip
        sentence = x.say(f)
        out.append(replace(f, sentence=sentence, headline=x.plain(f) if x.plain else sentence))
    return out


def find(rt: ReportTables) -> pd.DataFrame:
    """Every finding of the report as a table (``COLUMNS``), in the summary's order."""
    found = decide(family(rt))
    table = pd.DataFrame([asdict(f) for f in found], columns=list(COLUMNS))
    table["n_games"] = table["n_games"].astype("int64")
    return table


#: the summary's questions in the order a designer asks them, and how many findings that
#: matter each may put on the first screen: is there a seat advantage (the largest of two
#: groups), which variant is fairer (a seat share, else a primary metric, else another),
#: which strategy wins
HEADLINE_QUESTIONS = (("seat", 2), ("variant", 1), ("strategy order", 1))


def _headline_rank(question: str) -> int:
    """Within the variant findings: a seat's share first, then the primary metrics."""
    metric = question.removeprefix("variant: ")
    if metric.startswith("seat_"):
        return 0
    return 1 if metric in PRIMARY_METRICS else 2


def headlines(findings: pd.DataFrame, most: int = 4) -> list[str]:
    """The first screen, in plain words, in the order of the study's questions: the
    largest seat effects that matter (one per rule set, player count and player model, at
    most two), the variant difference that matters most (a seat's share before a primary
    metric, before the others), the strategy order where it matters; at most ``most`` in
    all. With fewer than three, each player count's largest other seat effect is added."""
    if findings.empty:
        return []
    ranked = findings.assign(
        size=findings["estimate"].abs() / findings["margin"],
        kind=findings["question"].str.split(":").str[0],
        rank=[_headline_rank(q) for q in findings["question"]],
    ).sort_values(["rank", "size"], ascending=[True, False])
    matters = ranked.loc[ranked["verdict"] == "matters"]
    chosen = []
    for kind, count_of in HEADLINE_QUESTIONS:
        mine = matters.loc[matters["kind"] == kind]
        if kind == "seat":
            group = [c for c in ("players", "ruleset", "model") if c in mine.columns]
            mine = mine.drop_duplicates(group)
        chosen.append(mine.head(count_of))
    picked = pd.concat(chosen).head(most)
    seats = ranked.loc[(ranked["kind"] == "seat") & ~ranked.index.isin(picked.index)]
    # fewer than three: add each player count's largest other seat effect
    extra = seats.sort_values("size", ascending=False).drop_duplicates("players")
    extra = extra.head(max(0, 3 - len(picked)))
    return [str(h) for h in pd.concat([picked, extra])["headline"]]


def headline_paragraph(findings: pd.DataFrame, most: int = 4) -> str:
    """The `headlines` as one paragraph; when they all hold among one player model, it is
    said once in front ("Among the study's mix of greedy, random: ...") instead of in each
    sentence, so the paragraph reads in a breath and no claim loses its scope."""
    heads = headlines(findings, most)
    chosen = findings.loc[findings["headline"].isin(heads), "model"].unique()
    if len(heads) < 2 or len(chosen) != 1:
        return " ".join(heads)
    phrase = f"among {chosen[0]}"
    if not all(phrase in h for h in heads):
        return " ".join(heads)
    short = [h.replace(f", {phrase}", "").replace(f" {phrase}", "") for h in heads]
    return f"Among {chosen[0]}: " + " ".join(short)


def player_model(rt: ReportTables) -> str:
    """The sentence stating whom the findings hold for."""
    names: list[str] = []
    wr = rt.tables.win_rates
    if "strategy" in wr:
        names = sorted(str(s) for s in wr["strategy"].unique())
    alone = or_empty(rt.tables.skill_seats)  # self-play only: the strategies of its models
    if not names and "level" in alone:
        names = sorted(str(s) for s in alone["level"].unique())
    who = ", ".join(names) if names else "the study's strategies"
    return (
        f"These findings are about the scripted strategies this study played ({who}), each "
        "sentence among the players it names; a seat advantage or a strategy order among "
        "other players (people, or stronger programs) may differ."
    )


def _counted(n: int, verdict: str) -> str:
    """'9 matter', '1 matters', '4 are real but small', '1 is negligible'."""
    if verdict == "matters":
        return f"{n} matters" if n == 1 else f"{n} matter"
    return f"{n} {'is' if n == 1 else 'are'} {verdict}"


def family_note(findings: pd.DataFrame) -> str:
    """How the family was corrected and what the verdicts mean, with their counts."""
    if findings.empty:
        return ""
    m = int(findings["family_size"].iloc[0])
    level = float(findings["level"].iloc[0])
    counts = verdict_counts(findings)
    said = ", ".join(_counted(counts[v], v) for v in verdicts.VERDICTS)
    real = sum(real_but_undecided(r.verdict, r.lo, r.hi) for r in findings.itertuples())
    if real:
        said += f" ({real} of them real, their size undecided: the interval excludes 0)"
    return (
        f"{m} tests, corrected together (Bonferroni: each interval is a {100 * level:.2f}% "
        f"interval, so that all {m} hold together with 95% confidence, and each verdict is "
        f"read off the interval it prints): {said}. Intervals are computed from block "
        "totals (games that share dice are not counted as independent), with Student's t "
        "on their degrees of freedom (few blocks give a wide interval)."
    )


def common_model(findings: pd.DataFrame) -> str | None:
    """The player model every finding holds among, when there is one and each sentence
    names it ("among {model}"); else None."""
    models = findings["model"].unique() if len(findings) else []
    if len(models) != 1:
        return None
    phrase = f"among {models[0]}"
    return str(models[0]) if all(phrase in str(s) for s in findings["sentence"]) else None


def summary_lines(findings: pd.DataFrame) -> list[str]:
    """The sentences, one per finding, in order; where they all hold among one player
    model (`common_model`), without it: the list says it once in front (findings.csv
    keeps each sentence whole)."""
    model = common_model(findings)
    if model is None:
        return [str(s) for s in findings["sentence"]]
    phrase = f"among {model}"
    return [
        str(s).replace(f", {phrase}", "").replace(f" ({phrase})", "").replace(f" {phrase}", "")
        for s in findings["sentence"]
    ]


#: the groups findings are listed in, what matters first: the verdicts, with the undecided
#: findings whose interval excludes 0 (`real_but_undecided`) apart from the others
GROUPS = ("matters", "real, size undecided", "real but small", "negligible", "undecided")


def verdict_groups(findings: pd.DataFrame, lines: Sequence[str]) -> list[tuple[str, list[str]]]:
    """The findings' `lines` (one per row, as `summary_lines` or their whole sentences)
    grouped by `verdict_label`, in the order of `GROUPS`, each group in the table's
    order; a group no finding is in is left out."""
    labels = [verdict_label(r.verdict, r.lo, r.hi) for r in findings.itertuples()]
    return [
        (g, [line for line, label in zip(lines, labels, strict=True) if label == g])
        for g in GROUPS
        if g in labels
    ]


def verdict_counts(findings: pd.DataFrame) -> dict[str, int]:
    """How many findings have each verdict."""
    counts = findings["verdict"].value_counts()
    return {v: int(counts.get(v, 0)) for v in verdicts.VERDICTS}


def decides_sentence(r: Any) -> str:
    """One sentence per restricted-play measure."""
    where = f"{r.players} players, {title(r.ruleset)}"
    lead = "How much skill decides" if r.measure == "skill" else "Which decision matters more"
    return (
        f"{lead}: {r.what}, {pct(r.rate)} {interval(r.lo, r.hi, pct)} of "
        f"{count(r.n)} games ({where}; fair share {pct(r.fair_share)}; a 95% interval, "
        "not a finding of the summary's family)."
    )


__all__ = [
    "COLUMNS",
    "GROUPS",
    "MATTERS_PP",
    "Finding",
    "Test",
    "common_model",
    "decide",
    "family",
    "family_note",
    "find",
    "headlines",
    "player_model",
    "summary_lines",
    "verdict_counts",
    "verdict_groups",
]
