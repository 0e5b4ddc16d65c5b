"""Report section 3, seat advantage: win share per seat, per player count and rule set."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from marrakech_sim.report.pergame import PerGame
from marrakech_sim.report.tables import (
    ReportTables,
    add_sums,
    block_chunks,
    check_block_layout,
    small_unique,
    sums_frame,
)
from marrakech_sim.stats import estimators
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


class SeatTotals:
    """Per (players, rule set): sums of the block-by-seat win totals, added slice by slice.

    For each group, the sums ``estimators.equal_share_sums`` lists (of the blocks' seat
    totals y_b and games n_b), the ratio sums of the shared-win and tie-break counts, and
    the wins per seat by kind. Blocks hold one match each (``check_block_layout``).
    """

    def __init__(self, rulesets: list[str]) -> None:
        self.rulesets = rulesets
        self.shares: dict[int, dict[str, np.ndarray]] = {}  # group -> equal-share sums
        self.ties: dict[int, dict[str, dict[str, np.ndarray]]] = {}  # group -> kind -> sums
        # wins per seat by kind: 0 = outright, 1 = shared, 2 = decided by the tie-break
        self.kinds: dict[int, np.ndarray] = {}

    def add(self, pg: PerGame) -> None:
        """Add one slice of whole blocks."""
        check_block_layout(pg)
        if not len(pg):
            return
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
        shared_b = np.bincount(bidx, (nw > 1).astype("float64"), nb)
        broken_b = np.bincount(bidx, broken, nb)
        y_b = np.empty((nb, kmax))
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
        for g in np.unique(block_group).tolist():
            k = int(g % 256)
            in_g = block_group == g
            add_sums(self.shares, g, estimators.equal_share_sums(y_b[in_g, :k], n_b[in_g]))
            for col, y in (("shared", shared_b), ("broken", broken_b)):
                sums = {c: v[0] for c, v in estimators.ratio_sums(y[in_g], n_b[in_g]).items()}
                add_sums(self.ties.setdefault(g, {}), col, sums)
            won_by = kinds[np.searchsorted(groups, g), :k]
            self.kinds[g] = self.kinds[g] + won_by if g in self.kinds else won_by

    def tables(self) -> dict[str, Any]:
        """Per-seat share rows (block ratio tables), the tests' sums, the tie rows."""
        shares: list[pd.DataFrame] = []
        tests: dict[tuple[int, str], dict[str, np.ndarray]] = {}
        ties: dict[str, list[pd.DataFrame]] = {}
        # groups in (players, rule set) order, the order of the SQL path's tables
        for g in sorted(self.shares, key=lambda g: (g % 256, g // 256)):
            rs, k = self.rulesets[g // 256], int(g % 256)
            sums = self.shares[g]
            tests[(k, rs)] = sums
            won_by = self.kinds[g]
            for seat in range(k):
                row = sums_frame(
                    {"players": [k], "ruleset": [rs], "seat": [seat]},
                    estimators.seat_ratio_sums(sums, seat),
                )
                row["outright_wins"] = int(won_by[seat, 0])
                row["shared_wins"] = int(won_by[seat, 1])
                row["tie_broken_wins"] = int(won_by[seat, 2])
                shares.append(row)
            for col in ("shared", "broken"):
                ties.setdefault(col, []).append(
                    sums_frame({"players": [k], "ruleset": [rs]}, self.ties[g][col])
                )
        return {
            "shares": pd.concat(shares, ignore_index=True),
            "tests": tests,
            "ties": {c: pd.concat(t, ignore_index=True) for c, t in ties.items()},
        }


def seat_tables(out: ReportTables, level: float, totals: SeatTotals) -> None:
    """Win share per seat, equal-share / trend tests, ties; per (players, ruleset)."""
    keys = ["players", "ruleset", "seat"]
    if not totals.shares:
        out.tables["seat_shares"] = pd.DataFrame(columns=[*keys, *SEAT_SHARE_COLUMNS])
        out.tables["seat_tests"] = pd.DataFrame(columns=["players", "ruleset", *SEAT_TEST_COLUMNS])
        out.tables["ties"] = pd.DataFrame(columns=["players", "ruleset", *TIE_COLUMNS])
        return
    fast = totals.tables()
    tab = add_rate_interval(fast["shares"], level)
    tab = tab.rename(columns={"total": "wins", "n": "n_games", "estimate": "share"})
    out.tables["seat_shares"] = finish_seat_shares(tab, keys)

    # Tests from the sums of the block-by-seat matrix, one group at a time.
    records = [
        {
            "players": players,
            "ruleset": ruleset,
            **estimators.equal_share_tests_from_sums(level=level, **sums),
        }
        for (players, ruleset), sums in sorted(fast["tests"].items())
    ]
    cols = ["players", "ruleset", *SEAT_TEST_COLUMNS]
    out.tables["seat_tests"] = pd.DataFrame.from_records(records, columns=cols)

    # Ties: shared wins and tie-break-decided games, per game.
    out.tables["ties"] = tie_table(fast["ties"]["shared"], fast["ties"]["broken"], level)
