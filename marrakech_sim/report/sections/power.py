"""Report section 7, power: which claims the data support, and the games to settle the rest.

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
from marrakech_sim.report.tables import ReportTables
from marrakech_sim.stats.intervals import z_value

#: the stated effect each kind of claim is sized for, in the claim's units
TARGET_EFFECTS = {
    "pp": 1.0,  # a win share 1 percentage point from fair
    "pp per seat": 0.5,  # a trend of half a point per seat
    "seat_share": 0.01,  # a seat's win share differing by 1 pp between variants
    "margin": 1.0,  # one point of winning margin
    "bankrupt": 0.01,  # a bankruptcy rate 1 pp apart
    "turns": 0.5,  # half a turn of game length
    "tie_broken": 0.01,
    "winner_dirhams_share": 0.01,
    "lead_changes": 0.1,
    "comeback": 0.01,
    "decided_turn": 0.5,  # half a turn earlier or later
}
POWER = 0.8


def _target(unit: str, metric: str | None = None) -> float:
    if metric is not None:
        key = "seat_share" if metric.startswith("seat_") else metric
        return TARGET_EFFECTS.get(key, float("nan"))
    return TARGET_EFFECTS.get(unit, float("nan"))


def power_table(out: ReportTables) -> pd.DataFrame:
    """Each headline claim with its interval, flagged by ``stats.flag_underpowered``."""
    claims = []
    for r in out.tables["seat_shares"].itertuples():
        if r.seat == 0:
            claims.append(
                {
                    "section": "seat advantage",
                    "claim": f"seat 0 share minus 1/{r.players} ({r.ruleset}, {r.players} players)",
                    "unit": "pp",
                    "estimate": r.effect_pp,
                    "lo": r.effect_lo_pp,
                    "hi": r.effect_hi_pp,
                    "n_games": r.n_games,
                    "target_effect": _target("pp"),
                }
            )
    for r in out.tables["seat_tests"].itertuples():
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
                "target_effect": _target("pp per seat"),
            }
        )
    for r in out.tables["win_rates"].itertuples():
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
                "target_effect": _target("pp"),
            }
        )
    for r in out.tables.get("variant_comparison", pd.DataFrame()).itertuples():
        claims.append(
            {
                "section": "variants",
                "claim": f"{r.metric}: {r.ruleset} minus {r.baseline} ({r.family})",
                "unit": "",
                "estimate": r.diff,
                "lo": r.lo,
                "hi": r.hi,
                "n_games": r.n_games + r.n_games_baseline,
                "se": r.se,
                "target_effect": _target("", r.metric),
            }
        )
    columns = ["section", "claim", "unit", "estimate", "lo", "hi", "n_games", "se"]
    table = pd.DataFrame.from_records(claims, columns=[*columns, "target_effect"])
    if table.empty:
        return table
    # Wilson intervals (shares) have no se column: the half-width over z is one
    half = (table["hi"] - table["lo"]).to_numpy(dtype="float64") / 2
    table["se"] = np.where(table["se"].isna(), half / z_value(), table["se"])
    table = stats.flag_underpowered(table, "estimate", "lo", "hi", n="n_games")
    return stats.prospective_power(table, "se", "n_games", "target_effect", power=POWER)
