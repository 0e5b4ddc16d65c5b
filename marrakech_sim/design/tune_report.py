"""The tune's words: the tuned rule sets as TOML, and a Markdown report of every search.

Pure text from a :class:`design.tuning.TuneResult`; `write_tune_report` puts it in the tune's
output folder (tune.md, tuned.toml, tune.json).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from marrakech_sim.design.tune import Search, SeatEffects, verdict_level
from marrakech_sim.design.tuning import Replay, Tuned, TuneResult
from marrakech_sim.rules.options import Rules

REPORT_FILE = "tune.md"
TOML_FILE = "tuned.toml"
RESULT_FILE = "tune.json"


def tuned_name(item: Tuned) -> str:
    """The rule set name of a tuned rule: RULESET_LEVEL_tuned."""
    return f"{item.ruleset}_{item.level}_tuned"


def tuned_toml(result: TuneResult) -> str:
    """The tuned rule sets as [rulesets.NAME] tables, ready to paste into a study config."""
    lines = [f"# tuned by `marrakech tune` ({result.config.name}): seat 1 keeps the base purse"]
    for item in result.tuned:
        rules = result.config.study.rules(item.ruleset)
        options = rules.differences(Rules(players=rules.players))
        options.pop("seat_dirhams", None)
        options = {"players": rules.players, **options, "seat_dirhams": list(item.search.purses)}
        untuned = [rules.starting_dirhams] * rules.players
        comment = _confirmed_comment(item, result.config.margin_pp, untuned)
        lines += ["", comment]
        lines += [f"[rulesets.{tuned_name(item)}]"]
        lines += [f"{key} = {json.dumps(value)}" for key, value in options.items()]
    return "\n".join(lines) + "\n"


def _confirmed_comment(item: Tuned, margin: float, untuned: list[int]) -> str:
    """What the confirmation showed of a tuned rule set, as a TOML comment above it."""
    same = list(item.search.purses) == untuned
    if item.confirmed.all_fair:
        text = f"confirmed fair within ±{margin:g} pp at every seat for {item.level} players"
    else:
        text = (
            f"NOT shown fair within ±{margin:g} pp for {item.level} players (largest seat "
            f"effect {item.confirmed.effects.worst_pp:.2f} pp)"
        )
    if same:
        text += "; the same purses as the untuned rules"
    return f"# {text}; tuned for {item.level} players only: see tune.md for other levels"


def _pp(value: float) -> str:
    return f"{value:+.2f}"


def _percent(level: float) -> str:
    """A level as a percentage: 95%, 97.5%."""
    return f"{100 * level:.4g}%"


def _effects(effects: SeatEffects, level: float) -> str:
    """Each seat's effect with its interval, as one table cell."""
    from scipy import stats as sps

    t = float(sps.t.ppf(0.5 + level / 2, max(effects.n_blocks - 1, 1)))
    return "; ".join(
        f"{_pp(e)} [{_pp(e - t * s)}, {_pp(e + t * s)}]"
        for e, s in zip(effects.effect_pp, effects.se_pp, strict=True)
    )


def verdict_sentence(replay: Replay, margin: float, search: Search, level: float) -> str:
    """Fair within +-margin at every seat, or which seats are not shown fair and what the
    fit says whole dirhams leave (with its range over the root's interval at `level`)."""
    if replay.all_fair:
        return f"fair within ±{margin:g} pp at every seat"
    unfair = [v for v in replay.verdicts if not v.fair]
    seats = ", ".join(f"seat {v.seat} {_pp(v.effect_pp)} pp" for v in unfair)
    text = (
        f"not shown fair within ±{margin:g} pp ({seats}); the fitted model puts the best "
        f"integer purses at about {search.residual_pp:.2f} pp from fair"
    )
    if search.residual_range_pp is None:
        return text + " (the fit's point estimate: the root has no interval)"
    low, high = search.residual_range_pp
    return text + f" ({low:.2f} to {high:.2f} pp over the root's {level:.0%} interval)"


def in_short(result: TuneResult) -> list[str]:
    """The tune's answer first: which tuned rule sets were confirmed fair, which were not,
    and where one level's purses leave another level's play less fair than none."""
    margin = result.config.margin_pp
    fair = [f"{i.ruleset} at {i.level} {list(i.search.purses)}" for i in result.tuned]
    fair = [f for f, i in zip(fair, result.tuned, strict=True) if i.confirmed.all_fair]
    unfair = [
        f"{i.ruleset} at {i.level} {list(i.search.purses)} (largest seat effect "
        f"{i.confirmed.effects.worst_pp:.2f} pp)"
        for i in result.tuned
        if not i.confirmed.all_fair
    ]
    out = ["## In short", ""]
    out.append(
        f"- Confirmed fair within ±{margin:g} pp at every seat: "
        + ("; ".join(fair) if fair else "none")
        + "."
    )
    if unfair:
        out.append("- Not shown fair: " + "; ".join(unfair) + ".")
    for item in result.tuned:  # played at item.level: each level's purses, then untuned
        untuned = item.replays[-1].effects.worst_pp
        for other in item.replays:
            if other.tuned_at in (None, item.level) or other.effects.worst_pp <= untuned:
                continue
            out.append(
                f"- {item.ruleset}: the purses tuned for {other.tuned_at} players leave "
                f"{item.level} play less fair than no compensation (largest seat effect "
                f"{other.effects.worst_pp:.2f} pp against {untuned:.2f} pp untuned): a "
                "compensation holds for the players it was tuned for."
            )
    return [*out, ""]


def tune_markdown(result: TuneResult) -> str:
    """The report: compensation per level, the replay table, each search's path."""
    cfg = result.config
    plan = cfg.plan
    players = sorted({rules.players for _, rules in cfg.study.rulesets})
    levels = ", ".join(
        f"{_percent(verdict_level(plan.alpha, k))} with {k} players" for k in players
    )
    mirror = ""
    if 2 in players:
        mirror = (
            " With 2 players the two seats mirror each other (their effects sum to zero), so "
            "their two verdicts are one and the correction over 2 is conservative."
        )
    out = [
        f"# Seat compensation: {cfg.name}",
        "",
        f"Each seat's effect is its win share minus the fair share 1/k, in percentage points, "
        "with intervals clustered on blocks. A seat is *fair* when two one-sided tests show its "
        f"effect within ±{cfg.margin_pp:g} pp at level alpha/k (alpha = {plan.alpha:g}, "
        "Bonferroni over the k seats: the chance of calling any seat outside the margin fair "
        "is at most alpha), that is, exactly when its interval at level 1 - 2 alpha/k lies "
        f"inside ±{cfg.margin_pp:g} pp: the confirmation tables print that interval ({levels})."
        + mirror
        + f" The search path's intervals are at {_percent(plan.level)}. The confirmation plays "
        f"seeds disjoint from every seed of the search. {result.games:,} games in all.",
        "",
        *in_short(result),
        "## Compensation per level",
        "",
        "| rule set | level | tuned purses | root (offsets of seats 2..k, interval) | "
        "untuned worst seat | tuned worst seat | verdict |",
        "|---|---|---|---|---:|---:|---|",
    ]
    for item in result.tuned:
        s = item.search
        root = ", ".join(
            f"{r:+.1f} [{lo:+.1f}, {hi:+.1f}]"
            for r, lo, hi in zip(s.root, s.root_lo, s.root_hi, strict=True)
        )
        untuned = item.replays[-1].effects.worst_pp
        out.append(
            f"| {item.ruleset} | {item.level} | {list(s.purses)} | {root} | {untuned:.2f} pp | "
            f"{item.confirmed.effects.worst_pp:.2f} pp | "
            f"{verdict_sentence(item.confirmed, cfg.margin_pp, s, plan.level)} |"
        )
    if len(cfg.levels) > 1:
        out += ["", "## Each level's tuned rule played at the other levels", ""]
        out.append(
            "Largest absolute seat effect (pp) of the rule tuned at the row's level, played at "
            "the column's level on that level's confirmatory seeds; * = fair at every seat."
        )
        for ruleset, _ in cfg.study.rulesets:
            out += ["", f"**{ruleset}**", ""]
            out.append("| tuned at | " + " | ".join(f"played at {lv}" for lv in cfg.levels) + " |")
            out.append("|---|" + "---:|" * len(cfg.levels))
            rows = [*cfg.levels, None]
            for row in rows:
                cells = []
                for col in cfg.levels:
                    item = _find(result, col, ruleset)
                    replay = next(r for r in item.replays if r.tuned_at == row)
                    cells.append(f"{replay.effects.worst_pp:.2f}{' *' if replay.all_fair else ''}")
                out.append(f"| {row or 'untuned'} | " + " | ".join(cells) + " |")
    for item in result.tuned:
        out += _detail(item, result)
    out += ["", "## Rule sets to paste", "", "```toml", tuned_toml(result).rstrip(), "```", ""]
    return "\n".join(out)


def _find(result: TuneResult, level: str, ruleset: str) -> Tuned:
    return next(t for t in result.tuned if t.level == level and t.ruleset == ruleset)


def _detail(item: Tuned, result: TuneResult) -> list[str]:
    plan = result.config.plan
    c = item.confirmed
    out = [
        "",
        f"## {item.ruleset} at level {item.level}",
        "",
        f"Confirmation: {c.effects.n_games:,} games on fresh seeds "
        f"({item.confirm_seeds:,} game seeds, none of the search's {item.search_seeds:,}: "
        f"{'checked' if item.disjoint else 'NOT disjoint'}); purses {list(c.effects.purses)}: "
        f"{verdict_sentence(c, result.config.margin_pp, item.search, plan.level)}.",
        "",
        _games_kept(item),
        "",
        f"| seat | purse | effect (pp) | {_percent(verdict_level(plan.alpha, len(c.verdicts)))} "
        "interval (the verdict's) | TOST p | fair |",
        "|---:|---:|---:|---|---:|---|",
    ]
    for v, purse in zip(c.verdicts, c.effects.purses, strict=True):
        out.append(
            f"| {v.seat} | {purse} | {_pp(v.effect_pp)} | [{_pp(v.lo_pp)}, {_pp(v.hi_pp)}] | "
            f"{v.p_equivalence:.3g} | {'yes' if v.fair else 'no'} |"
        )
    out += [
        "",
        "Search path (each step on its own seeds; the purse vectors of a step share them):",
        "",
        "| step | kind | games each | purses tried | effect per seat, pp [interval] |",
        "|---:|---|---:|---|---|",
    ]
    for i, step in enumerate(item.search.steps, 1):
        for point in step.points:
            out.append(
                f"| {i} | {step.kind} | {step.games:,} | {list(point.purses)} | "
                f"{_effects(point, plan.level)} |"
            )
    return out


def _games_kept(item: Tuned) -> str:
    """Where the confirmation's games are, and which of its rule sets plays which purses."""
    if item.confirm_run is None:
        return "The confirmation's games were not kept (a tune from before they were)."
    purses = dict.fromkeys(r.effects.purses for r in item.replays)
    names = ", ".join(f"p{i} {list(p)}" for i, p in enumerate(purses))
    return (
        f"The confirmation's games are kept in `{item.confirm_run}` (in this folder), a run "
        f"folder with one rule set per purse vector: {names}."
    )


def result_dict(result: TuneResult) -> dict[str, Any]:
    """The result as JSON-friendly data (tune.json)."""
    return {
        "name": result.config.name,
        "margin_pp": result.config.margin_pp,
        "plan": dataclasses.asdict(result.config.plan),
        "games": result.games,
        "tuned": [dataclasses.asdict(t) for t in result.tuned],
    }


def write_tune_report(result: TuneResult) -> Path:
    """Write tune.md, tuned.toml and tune.json into the tune's folder; the report's path."""
    out = result.out_dir
    (out / TOML_FILE).write_text(tuned_toml(result), encoding="utf-8")
    (out / RESULT_FILE).write_text(
        json.dumps(result_dict(result), indent=1, default=str), encoding="utf-8"
    )
    (out / REPORT_FILE).write_text(tune_markdown(result), encoding="utf-8")
    return out / REPORT_FILE
