"""Report section 3, seat advantage: win share per seat, per player count and rule set."""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np
import pandas as pd

from marrakech_sim import stats
from marrakech_sim.report.pergame import PerGame
from marrakech_sim.report.tables import (
    ReportTables,
    block_chunks,
    check_block_layout,
    ratio_frame,
    small_unique,
)
from marrakech_sim.stats.intervals import (
    add_rate_interval,
)
from marrakech_sim.stats.seats import (
    SEAT_SHARE_COLUMNS,
    SEAT_TEST_COLUMNS,
    TIE_COLUMNS,
    finish_seat_shares,
    tie_table,
)


def _seat_block_totals(pg: PerGame) -> dict[str, Any]:
    """Per (players, rule set): block-by-seat win totals, games per block, tie counts.

    From the per-game arrays, whose blocks hold one match each (``check_block_layout``).
    """
    rulesets = pg.rulesets
    players = pg.players.astype("int64")
    group = pg.ruleset.astype("int64") * 256 + players
    bidx = pg.block_index
    nb = pg.n_blocks
    kmax = int(players.max())
    wv = pg.win_value
    nw = pg.n_winners.astype("int64")
    broken = pg.tie_broken
    n_b = np.bincount(bidx, minlength=nb).astype("float64")
    block_group = group[np.searchsorted(bidx, np.arange(nb))]
    shares: list[pd.DataFrame] = []
    blocks: dict[tuple[int, str], tuple[np.ndarray, np.ndarray]] = {}
    ties: dict[str, list[pd.DataFrame]] = {}
    per_game_shared = (nw > 1).astype("float64")
    shared_b = np.bincount(bidx, per_game_shared, nb)
    broken_b = np.bincount(bidx, broken, nb)
    y_b = np.empty((nb, kmax))
    # wins per (group, seat) by kind: 0 = outright, 1 = shared, 2 = decided by the tie-break
    groups, group_of = small_unique(group)
    kind = np.minimum(nw, 2) - 1  # 0: one winner, 1: several, -1: none listed
    kinds = np.zeros((len(groups), kmax, 3), "int64")
    broken_win = broken > 0
    for part in block_chunks(pg):
        local = bidx[part] - bidx[part.start]
        n_bl = int(local[-1]) + 1
        for i in range(kmax):
            won = pg.win[i, part]
            y_b[bidx[part.start] : bidx[part.start] + n_bl, i] = np.bincount(
                local, wv[part] * won, n_bl
            )
            counted = won & (kind[part] >= 0)
            cell = (group_of[part] * 2 + kind[part])[counted]
            kinds[:, i, :2] += np.bincount(cell, minlength=2 * len(groups)).reshape(-1, 2)
            kinds[:, i, 2] += np.bincount(
                group_of[part][won & broken_win[part]], minlength=len(groups)
            )
    # groups in (players, rule set) order, the order of the SQL path's tables
    for g in sorted(np.unique(block_group).tolist(), key=lambda g: (g % 256, g // 256)):
        rs, k = rulesets[g // 256], int(g % 256)
        in_g = block_group == g
        nb_g = n_b[in_g]
        won_by = kinds[np.searchsorted(groups, g)]
        blocks[(k, rs)] = (y_b[in_g, :k], nb_g)
        for seat in range(k):
            row = ratio_frame(
                {"players": [k], "ruleset": [rs], "seat": [seat]}, y_b[in_g, seat], nb_g
            )
            row["outright_wins"] = int(won_by[seat, 0])
            row["shared_wins"] = int(won_by[seat, 1])
            row["tie_broken_wins"] = int(won_by[seat, 2])
            shares.append(row)
        for col, y in (("shared", shared_b), ("broken", broken_b)):
            ties.setdefault(col, []).append(
                ratio_frame({"players": [k], "ruleset": [rs]}, y[in_g], nb_g)
            )
    return {
        "shares": pd.concat(shares, ignore_index=True),
        "blocks": blocks,
        "ties": {c: pd.concat(t, ignore_index=True) for c, t in ties.items()},
    }


def seat_tables(
    con: duckdb.DuckDBPyConnection, out: ReportTables, level: float, pg: PerGame
) -> None:
    """Win share per seat, equal-share / trend tests, ties; per (players, ruleset)."""
    keys = ["players", "ruleset", "seat"]
    check_block_layout(pg)
    if not pg.rulesets or not len(pg):
        out.tables["seat_shares"] = pd.DataFrame(columns=[*keys, *SEAT_SHARE_COLUMNS])
        out.tables["seat_tests"] = pd.DataFrame(columns=["players", "ruleset", *SEAT_TEST_COLUMNS])
        out.tables["ties"] = pd.DataFrame(columns=["players", "ruleset", *TIE_COLUMNS])
        return
    fast = _seat_block_totals(pg)
    tab = add_rate_interval(fast["shares"], level)
    tab = tab.rename(columns={"total": "wins", "n": "n_games", "estimate": "share"})
    out.tables["seat_shares"] = finish_seat_shares(tab, keys)

    # Tests from the block-by-seat matrix of summed win shares, one group at a time
    # (numbers only: a few million blocks stay small).
    records = [
        {"players": players, "ruleset": ruleset, **stats.equal_share_tests(totals, n_b, level)}
        for (players, ruleset), (totals, n_b) in sorted(fast["blocks"].items())
    ]
    cols = ["players", "ruleset", *SEAT_TEST_COLUMNS]
    out.tables["seat_tests"] = pd.DataFrame.from_records(records, columns=cols)

    # Ties: shared wins and tie-break-decided games, per game.
    out.tables["ties"] = tie_table(fast["ties"]["shared"], fast["ties"]["broken"], level)
