"""The section "Power": which claims the data support, and the games to settle the rest.

Prospective power (``stats.power.prospective_power``): for each claim the smallest effect
its data detect with 80% power (``mde``, two-sided 5% test) and the games needed for 80%
power at the stated effect of :data:`TARGET_EFFECTS` (``target_effect``, in the claim's
units). The older retrospective columns (``underpowered``: the interval reaches 0;
``n_to_settle``: about 50% power at the observed effect) stay beside them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from marrakech_sim import stats
from marrakech_sim.report import findings
from marrakech_sim.report.fmt import count, interval, num
from marrakech_sim.report.sections.base import BaseSection, Context, Part
from marrakech_sim.report.sections.columns import GAMES, PLAYERS
from marrakech_sim.report.tables import ReportTables
from marrakech_sim.stats.intervals import z_value

#: the stated effect of a seat trend, in pp per seat (the study's margins name no slope)
TREND_EFFECT_PP = 0.5
POWER = 0.8


def power_table(out: ReportTables) -> pd.DataFrame:
    """Each headline claim with its interval, flagged by ``stats.flag_underpowered``; the
    stated effect of each is the study's margin (``[report]``: matters_pp for a share, the
    metric's margin in its own unit), as the findings judge them, and a variant's
    difference of shares is in pp like every other share."""
    options = out.facts.report_options
    claims = []
    for r in out.tables.seat_shares.itertuples():
        if r.seat == 0:
            claims.append(
                {
                    "section": "seat advantage",
                    "claim": (
                        f"player 1's share minus 1/{r.players} ({r.ruleset}, {r.players} players)"
                    ),
                    "unit": "pp",
                    "estimate": r.effect_pp,
                    "lo": r.effect_lo_pp,
                    "hi": r.effect_hi_pp,
                    "n_games": r.n_games,
                    "target_effect": options.matters_pp,
                }
            )
    for r in out.tables.seat_tests.itertuples():
        claims.append(
            {
                "section": "seat advantage",
                "claim": f"trend of win share per seat ({r.ruleset}, {r.players} players)",
                "unit": "pp per seat",
                "estimate": r.trend_pp,
                "lo": r.trend_lo_pp,
                "hi": r.trend_hi_pp,
                "n_games": r.n_games,
                "se": r.trend_se_pp,
                "target_effect": TREND_EFFECT_PP,
            }
        )
    for r in out.tables.win_rates.itertuples():
        if getattr(r, "constant", False):
            continue  # a constant (a strategy in every seat) is no claim to power
        claims.append(
            {
                "section": "win rates",
                "claim": f"{r.strategy} ({r.ruleset}): win rate minus fair share",
                "unit": "pp",
                "estimate": 100 * (r.rate - r.fair_share),
                "lo": 100 * (r.lo - r.fair_share),
                "hi": 100 * (r.hi - r.fair_share),
                "n_games": r.n_games,
                "target_effect": options.matters_pp,
            }
        )
    for r in out.tables.variant_comparison.itertuples():
        unit = findings.metric_words(str(r.metric))[1]
        scale = 100.0 if unit == "pp" else 1.0  # a share's difference in pp
        claims.append(
            {
                "section": "variants",
                "claim": f"{r.metric}: {r.ruleset} minus {r.baseline} ({r.family})",
                "unit": unit,
                "estimate": scale * r.diff,
                "lo": scale * r.lo,
                "hi": scale * r.hi,
                "n_games": r.n_games + r.n_games_baseline,
                "se": scale * r.se,
                "target_effect": findings.margin_of(options, str(r.metric), unit),
            }
        )
    columns = ["section", "claim", "unit", "estimate", "lo", "hi", "n_games", "se"]
    table = pd.DataFrame.from_records(claims, columns=[*columns, "target_effect"])
    # Wilson intervals (shares) have no se column: the half-width over z is one
    half = (table["hi"] - table["lo"]).to_numpy(dtype="float64") / 2
    table["se"] = np.where(table["se"].isna(), half / z_value(), table["se"])
    table = stats.flag_underpowered(table, "estimate", "lo", "hi", n="n_games")
    return stats.prospective_power(table, "se", "n_games", "target_effect", power=POWER)


# ---------------------------------------------------------------- words and charts


def plan_from_data(rt: ReportTables) -> pd.DataFrame:
    """Games needed for a 1 pp seat-0 advantage per player count, with this data's design.

    The design effect is this data's for seat 0, but never below 1: below 1 it comes from
    seat rotation cancelling the strength differences of unevenly matched players (line-ups
    against ``random``), which a study of evenly matched players does not have, so borrowing
    it would undersize that study (about 2.5 times in the default study). The observed one is
    kept in ``design_effect_observed``.
    """
    shares = rt.tables.seat_shares
    rows = []
    for players, part in shares.loc[shares["seat"] == 0].groupby("players"):
        observed = (
            float(np.nanmean(part["design_effect"])) if part["design_effect"].notna().any() else 1.0
        )
        size = max(round(float((part["n_games"] / part["n_blocks"]).median())), 1)
        row = stats.plan_seat_advantage(
            int(players), 0.01, design_effect=max(observed, 1.0), block_size=size
        )
        row["design_effect_observed"] = observed
        rows.append(row)
    if not rows:  # no seat-0 share to size from: the table's columns, no row
        rows = [stats.plan_seat_advantage(2, 0.01).assign(design_effect_observed=1.0).iloc[:0]]
    return pd.concat(rows, ignore_index=True)


class PowerSection(BaseSection):
    """The section "Power"."""

    name = "power"
    headings = ("Power",)
    mix_only = True
    intro = (
        "Each headline claim with its 95% interval, and what its data can detect: the "
        "smallest effect found with 80% power at this size (two-sided, 5% level), and the "
        "games needed for 80% power at the stated effect (the study's margin, as the "
        "findings use it: its matters_pp for a share, the metric's margin in its own unit; "
        "0.5 pp per seat for a trend), each claim alone: the summary's findings are judged "
        "at the family's level, so their counts are larger. `marrakech plan` sizes a study "
        "before it is run."
    )

    def compute(self, ctx: Context) -> None:
        ctx.rt.tables.plan = plan_from_data(ctx.rt)

    def parts(self, ctx: Context, chart_titles: dict[str, str]) -> list[Part]:
        t = ctx.rt.tables
        s = self.opening()
        power = t.power
        if not power.empty:
            short = int((~power["detectable"].astype(bool)).sum())
            s.paragraphs.append(
                f"{short} of {len(power)} claims have data too few to detect their stated effect "
                "with 80% power."
            )
            s.add_table(
                "Claims",
                power,
                [
                    ("section", lambda r: str(r.section)),
                    ("claim", lambda r: str(r.claim)),
                    (
                        "estimate [95%]",
                        lambda r: (
                            f"{num(r.estimate, 3)} {interval(r.lo, r.hi, num)} {r.unit}"
                        ).strip(),
                    ),
                    GAMES,
                    (
                        "detectable with 80% power",
                        lambda r: f"{num(r.mde, 3)} {r.unit}".strip(),
                    ),
                    (
                        "stated effect",
                        lambda r: f"{num(r.target_effect, 3)} {r.unit}".strip(),
                    ),
                    ("games for 80% power at it", lambda r: count(r.n_for_power)),
                ],
            )
        if t.plan is not None:
            s.add_table(
                "Games needed to detect a 1 pp advantage of player 1 (alpha 0.05, power 0.8)",
                t.plan,
                [
                    PLAYERS,
                    ("design effect assumed", lambda r: num(r.design_effect, 3)),
                    ("observed", lambda r: num(r.design_effect_observed, 3)),
                    ("independent games", lambda r: count(r.n_games_independent)),
                    GAMES,
                ],
            )
        return [s]
