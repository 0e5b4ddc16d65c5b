"""Report section 7, power: which claims the data support, and the games to settle the rest."""

from __future__ import annotations

import pandas as pd

from marrakech_sim import stats
from marrakech_sim.report.tables import ReportTables


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
            }
        )
    for r in out.tables["win_rates"].itertuples():
        claims.append(
            {
                "section": "win rates",
                "claim": f"{r.strategy}: win rate minus fair share",
                "unit": "pp",
                "estimate": 100 * (r.rate - r.fair_share),
                "lo": 100 * (r.lo - r.fair_share),
                "hi": 100 * (r.hi - r.fair_share),
                "n_games": r.n_games,
            }
        )
    for r in out.tables.get("variant_comparison", pd.DataFrame()).itertuples():
        claims.append(
            {
                "section": "variants",
                "claim": f"{r.metric}: {r.ruleset} minus {r.baseline}",
                "unit": "",
                "estimate": r.diff,
                "lo": r.lo,
                "hi": r.hi,
                "n_games": r.n_games + r.n_games_baseline,
            }
        )
    table = pd.DataFrame.from_records(
        claims, columns=["section", "claim", "unit", "estimate", "lo", "hi", "n_games"]
    )
    if table.empty:
        return table
    return stats.flag_underpowered(table, "estimate", "lo", "hi", n="n_games")
