"""Seat advantage: win share per seat, tests of equal shares and of a trend over seats.

Games of one block share dice, so all uncertainty here comes from block totals: for a
(players, ruleset) group with blocks b = 1..B, let Y_b be the vector of per-seat win
shares summed over the block's games and n_b its number of games. The share estimate is
p = sum(Y_b) / N and its covariance is the cluster-robust (sandwich) one,
V = B/(B-1) * sum_b (Y_b - n_b p)(Y_b - n_b p)' / N^2. No resampling is involved, so the
results are deterministic and cost one pass over the data.

* Intervals per seat: Wilson at the effective number of games (see ``intervals``).
* Equal shares: the Wald statistic W of p = 1/k on seats 0..k-2 with V (the last seat
  is implied, shares sum to 1), q = rank of that block of V. With equal block sizes W is
  Hotelling's T^2 of the block means, so the p-value uses its F reference,
  (B - q) / (q (B - 1)) * W ~ F(q, B - q), which is the chi-square(q) for many blocks but
  does not over-reject with a few hundred. The classic Pearson chi-square on win counts,
  which assumes independent games, is given beside it for reference.
* Trend over seat order: the least-squares slope of win share on seat index. Every game
  seats each index once, so the slope is the contrast c'p with c = (s - s_mean)/S_ss
  and its block-clustered variance is c'Vc: the same number a statsmodels OLS with
  ``cov_type='cluster'`` (groups = block) gives, without building a row per seat. Its
  interval and p-value use Student's t with B - 1 degrees of freedom (as usual for
  clustered errors).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from marrakech_sim.stats._core import balance_seats, cluster_ratio_table
from marrakech_sim.stats.estimators import equal_share_tests
from marrakech_sim.stats.intervals import DEFAULT_LEVEL, add_rate_interval

GROUP = ["players", "ruleset"]


def seat_win_shares(
    games: pd.DataFrame, seats: pd.DataFrame, level: float = DEFAULT_LEVEL
) -> pd.DataFrame:
    """Win share of each seat per (players, ruleset), against the fair share 1/k.

    Returns:
        One row per (players, ruleset, seat): n_games, n_blocks, wins (sum of win_share),
        share, lo, hi (block-aware Wilson), fair_share, effect_pp, effect_lo_pp,
        effect_hi_pp (share - 1/k in percentage points), n_eff, design_effect
        (n_games / n_eff), outright_wins, shared_wins (games the seat shared the win),
        tie_broken_wins (games the seat won on the tie-break).
    """
    rows = balance_seats(games, seats)
    rows["_one"] = 1.0
    won = rows["win_share"] > 0
    n_winners = won.groupby(rows["game_id"]).transform("sum")
    rows["_outright"] = (won & (n_winners == 1)).astype("int64")
    rows["_shared"] = (won & (n_winners > 1)).astype("int64")
    rows["_broken"] = (won & rows["tie_broken"]).astype("int64")
    keys = [*GROUP, "seat"]
    tab = add_rate_interval(cluster_ratio_table(rows, keys, "win_share", "_one"), level)
    counts = rows.groupby(keys, sort=True)[["_outright", "_shared", "_broken"]].sum().reset_index()
    tab = tab.merge(counts, on=keys, how="left", validate="one_to_one")
    tab = tab.rename(
        columns={
            "total": "wins",
            "n": "n_games",
            "estimate": "share",
            "_outright": "outright_wins",
            "_shared": "shared_wins",
            "_broken": "tie_broken_wins",
        }
    )
    return finish_seat_shares(tab, keys)


def seat_block_totals(
    games: pd.DataFrame, seats: pd.DataFrame
) -> dict[tuple[int, str], tuple[np.ndarray, np.ndarray]]:
    """Per (players, ruleset): (Y, n), Y[b, s] the block's summed win share of seat s."""
    rows = balance_seats(games, seats)
    out: dict[tuple[int, str], tuple[np.ndarray, np.ndarray]] = {}
    for (players, ruleset), part in rows.groupby(GROUP, sort=True):
        wide = part.pivot_table(
            index="block", columns="seat", values="win_share", aggfunc="sum", fill_value=0.0
        )
        wide = wide.reindex(columns=range(int(players)), fill_value=0.0)
        n = part.groupby("block", sort=True)["game_id"].nunique().reindex(wide.index)
        out[(int(players), str(ruleset))] = (
            wide.to_numpy(dtype="float64"),
            n.to_numpy(dtype="float64"),
        )
    return out


#: the columns of a seat-test table after its group keys (players, ruleset)
SEAT_TEST_COLUMNS = (
    "n_games",
    "n_blocks",
    "chi2_block",
    "df_block",
    "f_block",
    "f_df2",
    "p_block",
    "chi2_pearson",
    "p_pearson",
    "trend_pp",
    "trend_se_pp",
    "trend_lo_pp",
    "trend_hi_pp",
    "trend_p",
    "lack_of_fit_f",
    "lack_of_fit_df",
    "lack_of_fit_p",
)


def seat_tests(
    games: pd.DataFrame, seats: pd.DataFrame, level: float = DEFAULT_LEVEL
) -> pd.DataFrame:
    """Tests of seat advantage per (players, ruleset); see :func:`equal_share_tests`.

    Returns:
        One row per (players, ruleset): n_games, n_blocks, chi2_block, df_block, f_block,
        f_df2, p_block (the F test on blocks), chi2_pearson, p_pearson, trend_pp,
        trend_se_pp, trend_lo_pp, trend_hi_pp, trend_p.
    """
    records = []
    for (players, ruleset), (totals, n) in seat_block_totals(games, seats).items():
        records.append(
            {"players": players, "ruleset": ruleset, **equal_share_tests(totals, n, level)}
        )
    return pd.DataFrame.from_records(records, columns=[*GROUP, *SEAT_TEST_COLUMNS])


def tie_summary(
    games: pd.DataFrame, seats: pd.DataFrame, level: float = DEFAULT_LEVEL
) -> pd.DataFrame:
    """Shared wins and tie-break-decided games per (players, ruleset).

    Returns:
        One row per (players, ruleset): n_games, n_blocks, shared_wins, shared_rate,
        shared_lo, shared_hi, tie_broken, tie_broken_rate, tie_broken_lo, tie_broken_hi
        (rates with block-aware Wilson intervals).
    """
    rows = balance_seats(games, seats)
    rows["_won"] = (rows["win_share"] > 0).astype("int64")
    per_game = (
        rows.groupby(["game_id", "block", *GROUP], sort=True)
        .agg(_winners=("_won", "sum"), _broken=("tie_broken", "first"))
        .reset_index()
    )
    per_game["_shared"] = (per_game["_winners"] > 1).astype("float64")
    per_game["_broken"] = per_game["_broken"].astype("float64")
    per_game["_one"] = 1.0
    shared, broken = (
        cluster_ratio_table(per_game, GROUP, col, "_one") for col in ("_shared", "_broken")
    )
    return tie_table(shared, broken, level)


TIE_COLUMNS = (
    "n_games",
    "n_blocks",
    "shared_wins",
    "shared_rate",
    "shared_lo",
    "shared_hi",
    "tie_broken",
    "tie_broken_rate",
    "tie_broken_lo",
    "tie_broken_hi",
)


def tie_table(shared: pd.DataFrame, broken: pd.DataFrame, level: float) -> pd.DataFrame:
    """The ties table from the block ratio tables of shared wins and tie-broken games.

    Both are keyed by (players, ruleset); shared with the report's numpy path.
    """
    out = None
    for tab, name in ((shared, "shared"), (broken, "tie_broken")):
        tab = add_rate_interval(tab, level).rename(
            columns={
                "total": "shared_wins" if name == "shared" else name,
                "estimate": f"{name}_rate",
                "lo": f"{name}_lo",
                "hi": f"{name}_hi",
                "n": "n_games",
            }
        )
        keep = [
            c for c in tab.columns if c.startswith(name) or c in (*GROUP, "n_games", "n_blocks")
        ]
        out = (
            tab[keep]
            if out is None
            else out.merge(tab[[c for c in keep if c not in ("n_games", "n_blocks")]], on=GROUP)
        )
    assert out is not None
    for c in ("n_games", "shared_wins", "tie_broken"):
        out[c] = out[c].astype("int64")
    return out[[*GROUP, *TIE_COLUMNS]].reset_index(drop=True)


SEAT_SHARE_COLUMNS = (
    "n_games",
    "n_blocks",
    "wins",
    "share",
    "lo",
    "hi",
    "fair_share",
    "effect_pp",
    "effect_lo_pp",
    "effect_hi_pp",
    "n_eff",
    "design_effect",
    "outright_wins",
    "shared_wins",
    "tie_broken_wins",
)


def finish_seat_shares(tab: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Add the fair share and the effects in pp, and order the columns of a seat table.

    `tab` has the keys (with `players`), n_games, n_blocks, wins, share, lo, hi, n_eff,
    design_effect and the three win counts. Shared with the report's out-of-core path.
    """
    tab = tab.copy()
    tab["n_games"] = tab["n_games"].astype("int64")
    tab["fair_share"] = 1.0 / tab["players"]
    for col, src in (("effect_pp", "share"), ("effect_lo_pp", "lo"), ("effect_hi_pp", "hi")):
        tab[col] = 100.0 * (tab[src] - tab["fair_share"])
    for col in ("outright_wins", "shared_wins", "tie_broken_wins"):
        tab[col] = tab[col].astype("int64")
    return tab[[*keys, *SEAT_SHARE_COLUMNS]].reset_index(drop=True)
