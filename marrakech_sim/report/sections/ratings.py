"""The section "Ratings": a Plackett-Luce fit per player count and rule set.

Strategy strengths need not be the same with 2, 3 or 4 players, nor under another rule
set: one fit pooled over them can hide a reversal (one strategy ahead with 4 players,
behind with 2). So each (rule set, players) group gets its own fit, with its own seat
term, and a pooled fit is kept only as the alternative of a likelihood-ratio test
(``stats.ratings.pooling_test``); the report shows the pooled ranking only when that
test does not reject pooling.

A fit rates only strategies that met in games (``stats.comparable_strategies``): in each
group the largest set of strategies linked by shared games is rated, and the others
(self-play alone, or a separate set of line-ups) are named in a note, since no rating
could compare them; a group of self-play games alone gets no fit.

Tables: ``ratings`` (one row per group and strategy; columns ruleset, players, then
``stats.fit_ratings``'s), ``seat_effects`` (per group and seat), ``rating_pooling`` (the
test: lr, df, p_value, n_games, rejected, groups) and, when pooling is not rejected,
``ratings_pooled``.
"""

from __future__ import annotations

import dataclasses

import duckdb
import pandas as pd

from marrakech_sim import plots, stats
from marrakech_sim.report import findings
from marrakech_sim.report.fmt import count, num, p_is, pct
from marrakech_sim.report.sections import base
from marrakech_sim.report.sections.base import BaseSection, Column, Context, Figures, Part
from marrakech_sim.report.sections.columns import BLOCKS, GAMES, PLAYERS, RULESET, STRATEGY
from marrakech_sim.report.sections.samples import make_sample, sample_frames
from marrakech_sim.report.tables import ReportTables, Tables, or_empty
from marrakech_sim.stats.ratings import RatingFit, pooling_test

POOLING_ALPHA = 0.05


#: a ridge fit's ratings columns that would claim an uncertainty it does not have
_RIDGE_BLANK = ("se", "lo", "hi", "elo_lo", "elo_hi", "p_above_next", "gap_se_elo")


def _fit(games: pd.DataFrame, seats: pd.DataFrame, level: float, notes: list[str]) -> RatingFit:
    """The group's Plackett-Luce fit. Where the plain fit has no finite estimate (a
    strategy that always finished ahead of, or behind, the others it met), a small ridge
    gives point ratings, whose intervals would be the ridge's, not the data's: left out."""
    fit = stats.fit_ratings(games, seats, level=level)
    if not fit.converged:
        fit = stats.fit_ratings(games, seats, level=level, l2=1e-3)
        notes.append(
            "refitted with a small ridge (l2 = 0.001): the plain fit did not converge (a "
            "strategy always finished ahead of, or behind, the others it met, so its rating "
            "has no finite estimate); the ratings are the ridge's, without intervals"
        )
        blank = {c: float("nan") for c in _RIDGE_BLANK if c in fit.ratings.columns}
        fit = dataclasses.replace(fit, ratings=fit.ratings.assign(**blank))
    return fit


def rating_tables(
    con: duckdb.DuckDBPyConnection, out: ReportTables, max_games: int, level: float
) -> None:
    """Ratings per (rule set, players) on a whole-block sample, and the pooling test."""
    n = make_sample(con, "rating_sample", max_games, out.facts.n_games)
    out.facts.rating_games = n
    out.facts.rating_sampled = n < out.facts.n_games
    games, seats = sample_frames(con, "rating_sample")
    ok = games.loc[games["end_reason"] != "error"]
    if ok.empty or seats["strategy"].nunique() < 2:
        out.facts.rating_note = "fewer than two strategies or no games: nothing to rate"
        return
    fits: list[RatingFit] = []
    ratings, effects = [], []
    notes: list[str] = []
    used = []  # the games each fit rated
    left_out = 0  # games of strategies no fit could rate
    for (ruleset, players), part in ok.groupby(["ruleset", "players"], sort=True):
        part_seats = seats.loc[seats["game_id"].isin(part["game_id"])]
        if part_seats["strategy"].nunique() < 2:
            continue
        rated, *apart = stats.comparable_strategies(part_seats)
        group = f"{ruleset}, {players} players"
        if len(rated) < 2:
            left_out += len(part)
            notes.append(
                f"{group}: not rated, no two strategies met in a game (each game has one "
                "strategy in every seat, which shows the seats' balance, not the strategies' "
                "strengths)"
            )
            continue
        if apart:
            others = ", ".join(sorted(name for members in apart for name in members))
            notes.append(
                f"{group}: rated {', '.join(rated)} only; {others} never met them in a game "
                "(directly or through another strategy), so no rating compares them"
            )
            away = part_seats.loc[~part_seats["strategy"].astype(str).isin(rated), "game_id"]
            left_out += int(part["game_id"].isin(away).sum())
            part = part.loc[~part["game_id"].isin(away)]
            part_seats = part_seats.loc[part_seats["game_id"].isin(part["game_id"])]
        used.append(part["game_id"])
        group_notes: list[str] = []
        fit = _fit(part, part_seats, level, group_notes)
        notes += [f"{group}: {t}" for t in group_notes]
        fits.append(fit)
        keys = {"ruleset": str(ruleset), "players": int(players)}
        ratings.append(fit.ratings.assign(**keys))
        effects.append(fit.seat_effects.assign(**keys))
    out.facts.rating_left_out = left_out
    if notes:
        out.facts.rating_note = "; ".join(notes)
    if not fits:
        if out.facts.rating_note is None:
            out.facts.rating_note = "no rule set with two strategies: nothing to rate"
        return
    first = ["ruleset", "players"]

    def front(t: pd.DataFrame) -> pd.DataFrame:
        return t[[*first, *(c for c in t.columns if c not in first)]]

    out.tables.ratings = front(pd.concat(ratings, ignore_index=True))
    out.tables.seat_effects = front(pd.concat(effects, ignore_index=True))
    out.rating_fit = fits[0] if len(fits) == 1 else None
    if len(fits) < 2:
        return
    fitted = ok.loc[ok["game_id"].isin(pd.concat(used))]
    fitted_seats = seats.loc[seats["game_id"].isin(fitted["game_id"])]
    if len(stats.comparable_strategies(fitted_seats)) > 1:
        return  # the groups share no strategy: a pooled fit would have no common scale
    pooled = _fit(fitted, fitted_seats, level, [])
    test = pooling_test(fits, pooled)
    rejected = bool(test["p_value"] < POOLING_ALPHA)
    groups = len(fits)
    out.tables.rating_pooling = pd.DataFrame(
        [
            {
                "groups": groups,
                "n_games": int(test["n_games"]),
                "lr": test["lr"],
                "df": int(test["df"]),
                "p_value": test["p_value"],
                "rejected": rejected,
            }
        ]
    )
    if not rejected:
        out.tables.ratings_pooled = pooled.ratings
        out.rating_fit = pooled


# ---------------------------------------------------------------- words and charts


def rating_finding(ratings: pd.DataFrame, ruleset: str = "", players: int = 0) -> str:
    """Title for one group's ratings panel."""
    tab = ratings.sort_values("elo", ascending=False)
    top = tab.iloc[0]
    where = f"{findings.group_title(ruleset, players)}: " if ruleset else ""
    if len(tab) < 2:
        return f"{where}{top.strategy} {top.elo:.0f} Elo"
    second = tab.iloc[1]
    return (
        f"{where}{top.strategy} {top.elo - second.elo:.0f} Elo above {second.strategy} "
        f"(P(stronger) = {top.p_above_next:.2f})"
    )


class RatingSection(BaseSection):
    """The section "Ratings"."""

    name = "ratings"
    headings = ("Ratings",)
    mix_only = True

    def draw(self, t: Tables, charts: Figures) -> None:
        strategy_colour = base.strategy_colours(t)
        ratings = or_empty(t.ratings)
        if not ratings.empty:
            groups = list(ratings.groupby(["players", "ruleset"], sort=True))[::-1]
            per = ratings.groupby(["players", "ruleset"]).size().max()
            fig, axes = base.panels(len(groups), 2, 5.2, 1.1 + 0.4 * per)
            for ax, ((players, ruleset), part) in zip(axes, groups, strict=True):
                plots.plot_ratings(
                    part, ax, rating_finding(part, str(ruleset), int(players)), strategy_colour
                )
            plots.share_x(axes)
            charts["ratings"] = ("Ratings per player count and rule set (separate fits)", fig)

    def parts(self, ctx: Context, chart_titles: dict[str, str]) -> list[Part]:
        t, f = ctx.rt.tables, ctx.rt.facts
        s = Part(self.headings[0])
        if t.ratings is not None:
            sample = (
                f"a sample of {count(f.rating_games)} games (whole blocks, every match in "
                f"proportion) of the {count(f.n_games)}"
                if f.rating_sampled
                else f"all {count(f.n_games)} games"
            )
            if f.rating_left_out:
                sample += (
                    f", less the {count(f.rating_left_out)} games of strategies that no fit "
                    "can compare (see the note)"
                )
            s.paragraphs.append(
                "Plackett-Luce fits of the finishing orders, one per player count and rule set "
                "(strengths need not carry over from one to another), each with its own seat term "
                "(maximum likelihood, block-clustered standard errors), on " + sample + ". Elo = "
                "1500 + 400/ln(10) x rating, 1500 being the mean of the strategies in that fit; "
                "P(stronger than next) is the probability, from the fit's covariance, that a "
                "strategy "
                "is stronger than the one listed below it."
            )
            if t.rating_pooling is not None:
                r = t.rating_pooling.iloc[0]
                verdict = (
                    "rejects pooling, so no pooled ranking is given"
                    if bool(r.rejected)
                    else "does not reject pooling; the pooled ranking is shown below"
                )
                s.paragraphs.append(
                    f"One fit pooled over the {r.groups} groups against separate fits: likelihood "
                    f"ratio {r.lr:,.1f} on {r.df} df, p{p_is(r.p_value)} "
                    f"({count(r.n_games)} games). The test {verdict}. (Games in a block share "
                    "dice, "
                    "so the test is approximate.)"
                )
            if f.rating_note:
                s.paragraphs.append("Note: " + f.rating_note + ".")
            s.charts += base.charted(chart_titles, "ratings")
            rating_columns: list[Column] = [
                RULESET,
                PLAYERS,
                ("#", lambda r: str(r.order)),
                STRATEGY,
                GAMES,
                BLOCKS,
                ("rating [95%]", lambda r: f"{r.rating:+.3f} [{r.lo:+.3f}, {r.hi:+.3f}]"),
                ("Elo [95%]", lambda r: f"{r.elo:.0f} [{r.elo_lo:.0f}, {r.elo_hi:.0f}]"),
                ("P(stronger than next)", lambda r: num(r.p_above_next, 3)),
            ]
            s.add_table("Ratings per player count and rule set", t.ratings, rating_columns)
            if t.ratings_pooled is not None:
                s.add_table(
                    "Pooled ratings (pooling not rejected)",
                    t.ratings_pooled,
                    rating_columns[2:],
                )
            s.add_table(
                "Seat effects per rule set (log-strength over player 1's seat)",
                t.seat_effects,
                [
                    ("rule set", lambda r: str(getattr(r, "ruleset", ""))),
                    PLAYERS,
                    ("seat", lambda r: str(r.seat)),
                    GAMES,
                    (
                        "effect [95%]",
                        lambda r: f"{r.effect:+.3f} [{r.lo:+.3f}, {r.hi:+.3f}]",
                    ),
                    ("Elo", lambda r: f"{r.elo_effect:+.0f}"),
                    ("win chance, equal strategies", lambda r: pct(r.win_prob_equal)),
                ],
            )
        else:
            s.paragraphs.append("No ratings: " + (f.rating_note or "nothing to rate") + ".")
        return [s]
