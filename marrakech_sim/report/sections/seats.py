"""The section "Seat advantage": win share per seat, per player count and rule set."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from marrakech_sim import plots
from marrakech_sim.report import findings
from marrakech_sim.report.fmt import count, interval, num, pct, pct2, pp, pp2, pval
from marrakech_sim.report.pergame import PerGame
from marrakech_sim.report.sections import base
from marrakech_sim.report.sections.base import BaseSection, Context, Figures, Part
from marrakech_sim.report.sections.columns import BLOCKS, GAMES, PLAYERS, RULESET, with_interval
from marrakech_sim.report.tables import (
    ReportTables,
    Tables,
    add_sums,
    block_chunks,
    check_block_layout,
    or_empty,
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
from marrakech_sim.stats.winrates import LINEUP_SEP

#: seat_lineups.csv: does a seat's effect differ between the line-ups a group pools?
HETEROGENEITY_COLUMNS = [
    "players",
    "ruleset",
    "seat",
    "lineups",
    "f",
    "df1",
    "df2",
    "p",
    "lowest_lineup",
    "lowest_pp",
    "highest_lineup",
    "highest_pp",
]


class SeatTotals:
    """Per (players, rule set): sums of the block-by-seat win totals, added slice by slice.

    For each group, the sums ``estimators.equal_share_sums`` lists (of the blocks' seat
    totals y_b and games n_b), the ratio sums of the shared-win and tie-break counts, and
    the wins per seat by kind. Blocks hold one match each (``check_block_layout``).
    """

    def __init__(self, rulesets: list[str], names: list[str] | None = None) -> None:
        self.rulesets = rulesets
        self.names = names or []  # strategy names by code: the line-ups' names
        self.shares: dict[int, dict[str, np.ndarray]] = {}  # group -> equal-share sums
        # (group, line-up key) -> the equal-share sums of that line-up's blocks
        self.lineups: dict[tuple[int, int], dict[str, np.ndarray]] = {}
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
        first = np.searchsorted(bidx, np.arange(nb))
        block_group = group[first]
        block_lineup = self._lineup_keys(pg.strategy[:, first])
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
            for key in np.unique(block_lineup[in_g]).tolist():
                sel = in_g & (block_lineup == key)
                sums = estimators.equal_share_sums(y_b[sel, :k], n_b[sel])
                add_sums(self.lineups, (g, key), sums)
            for col, y in (("shared", shared_b), ("broken", broken_b)):
                sums = {c: v[0] for c, v in estimators.ratio_sums(y[in_g], n_b[in_g]).items()}
                add_sums(self.ties.setdefault(g, {}), col, sums)
            won_by = kinds[np.searchsorted(groups, g), :k]
            self.kinds[g] = self.kinds[g] + won_by if g in self.kinds else won_by

    def _lineup_keys(self, codes: np.ndarray) -> np.ndarray:
        """One integer per block naming its line-up (its seats' strategies as a multiset:
        a rotated seating is the same line-up), from (seats, blocks) strategy codes."""
        base = len(self.names) + 1
        ordered = np.sort(codes.astype("int64"), axis=0) + 1  # -1 (no seat) sorts first
        keys: np.ndarray = (ordered * base ** np.arange(len(ordered), dtype="int64")[:, None]).sum(
            axis=0
        )
        return keys

    def lineup_name(self, key: int) -> str:
        """The strategies of the line-up `key` (`_lineup_keys`), joined as line-ups are."""
        base = len(self.names) + 1
        codes = []
        while key:
            key, code = divmod(key, base)
            if code:
                codes.append(code - 1)
        return LINEUP_SEP.join(self.names[c] for c in codes)

    def heterogeneity(self) -> pd.DataFrame:
        """Per (players, rule set, seat) with two line-ups or more: whether the seat's
        effect differs between the line-ups the group pools, and the lowest and highest
        line-up effect.

        A one-way analysis of the line-ups' block totals: each line-up's effect weighted
        by its games squared over its blocks, against the within-line-up variance of the
        block totals pooled over the line-ups (a line-up whose blocks all agree, as when
        random never wins, has none of its own), an F test on (lineups - 1, blocks -
        lineups) df; with blocks of one size, scipy's ``f_oneway`` on the blocks' shares.
        """
        rows = []
        for g in sorted(self.shares, key=lambda g: (g % 256, g // 256)):
            k = int(g % 256)
            parts = sorted((key, s) for (group, key), s in self.lineups.items() if group == g)
            if len(parts) < 2:
                continue
            for seat in range(k):
                sums = [estimators.seat_ratio_sums(s, seat) for _, s in parts]
                big_m = np.array([float(s["n"]) for s in sums])
                blocks = np.array([float(s["n_blocks"]) for s in sums])
                share = np.array([float(s["total"]) for s in sums]) / big_m
                resid = np.array(
                    [
                        float(s["syy"]) - 2 * p * float(s["sym"]) + p * p * float(s["smm"])
                        for s, p in zip(sums, share, strict=True)
                    ]
                )
                df2 = int(blocks.sum()) - len(parts)
                pooled = float(resid.sum()) / df2 if df2 > 0 else 0.0
                if pooled <= 0:
                    continue  # no block differs from its line-up's mean: nothing to weigh
                effect = share - 1.0 / k
                w = big_m**2 / (blocks * pooled)
                mean = float(w @ effect / w.sum())
                f = float(w @ (effect - mean) ** 2) / (len(parts) - 1)
                low, high = int(np.argmin(effect)), int(np.argmax(effect))
                rows.append(
                    {
                        "players": k,
                        "ruleset": self.rulesets[g // 256],
                        "seat": seat,
                        "lineups": len(parts),
                        "f": f,
                        "df1": len(parts) - 1,
                        "df2": df2,
                        "p": float(sps.f.sf(f, len(parts) - 1, df2)),
                        "lowest_lineup": self.lineup_name(parts[low][0]),
                        "lowest_pp": 100 * float(effect[low]),
                        "highest_lineup": self.lineup_name(parts[high][0]),
                        "highest_pp": 100 * float(effect[high]),
                    }
                )
        return pd.DataFrame(rows, columns=HETEROGENEITY_COLUMNS)

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
        out.tables.seat_shares = pd.DataFrame(columns=[*keys, *SEAT_SHARE_COLUMNS])
        out.tables.seat_tests = pd.DataFrame(columns=["players", "ruleset", *SEAT_TEST_COLUMNS])
        out.tables.ties = pd.DataFrame(columns=["players", "ruleset", *TIE_COLUMNS])
        out.tables.seat_lineups = pd.DataFrame(columns=HETEROGENEITY_COLUMNS)
        return
    fast = totals.tables()
    tab = add_rate_interval(fast["shares"], level)
    tab = tab.rename(columns={"total": "wins", "n": "n_games", "estimate": "share"})
    out.tables.seat_shares = finish_seat_shares(tab, keys)

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
    out.tables.seat_tests = pd.DataFrame.from_records(records, columns=cols)

    # Ties: shared wins and tie-break-decided games, per game.
    out.tables.ties = tie_table(fast["ties"]["shared"], fast["ties"]["broken"], level)
    out.tables.seat_lineups = totals.heterogeneity()


# ---------------------------------------------------------------- words and charts


def _lack_of_fit(r: Any) -> str:
    """The seat tests' lack-of-fit cell: a small p says the trend per seat is no line."""
    if not np.isfinite(r.lack_of_fit_f):
        return "- (2 seats: a line fits)" if int(r.players) == 2 else "-"
    fits = "no (p < 0.05): the trend is an average, not a line" if r.lack_of_fit_p < 0.05 else "yes"
    df = int(r.lack_of_fit_df)
    degrees = f"({df}, {count(int(r.n_blocks) - df)})"
    return f"{num(r.lack_of_fit_f)} {degrees}, p={pval(r.lack_of_fit_p)}: {fits}"


def seat_finding(shares: pd.DataFrame) -> str:
    """Title for the seat-advantage chart: the largest effect, or that none is clear."""
    tab = shares.assign(_abs=shares["effect_pp"].abs()).sort_values("_abs", ascending=False)
    clear = tab.loc[~((tab["effect_lo_pp"] <= 0) & (tab["effect_hi_pp"] >= 0))]
    if clear.empty:
        return "No seat's win share differs clearly from a fair share"
    r = clear.iloc[0]
    more = "more" if r.effect_pp > 0 else "less"
    return (
        f"Player {int(r.seat) + 1} wins {abs(r.effect_pp):.1f} pp {more} than a fair share "
        f"({findings.group_title(r.ruleset, r.players)}, n={count(r.n_games)})"
    )


class SeatSection(BaseSection):
    """The section "Seat advantage"."""

    name = "seats"
    headings = ("Seat advantage",)
    mix_only = True
    intro = (
        "Win share per seat against the fair share 1/players, per player count and rule set. "
        "Intervals and tests use block totals (cluster-robust), so the dice a block's games "
        "share are accounted for. The equal-share test is a block-level Wald test with an F "
        "reference (the Pearson chi-square, which treats games as independent, is shown beside "
        "it); the trend is the slope of win share over seat order, and its lack-of-fit test says "
        "whether the shares lie on a line at all. Shared wins and tie-break "
        "wins are counted separately."
    )

    def draw(self, t: Tables, charts: Figures) -> None:
        if not t.seat_shares.empty:
            title = seat_finding(t.seat_shares)
            n = t.seat_shares.groupby(["players", "ruleset"]).ngroups
            fig = plots.new_figure(max(7, 2.0 * n), 4.2)
            plots.plot_seat_effects(t.seat_shares, fig.add_subplot(), title)
            charts["seat_advantage"] = (title, fig)

    def parts(self, ctx: Context, chart_titles: dict[str, str]) -> list[Part]:
        t = ctx.rt.tables
        s = self.opening(base.pooled_levels(t))
        s.charts += base.charted(chart_titles, "seat_advantage")
        s.add_table(
            "Win share per seat",
            t.seat_shares,
            [
                RULESET,
                PLAYERS,
                ("seat", lambda r: str(r.seat)),
                GAMES,
                BLOCKS,
                with_interval("share", "share", pct),
                with_interval("effect", "effect_pp", pp, "effect_lo_pp", "effect_hi_pp"),
                (
                    "outright / shared / tie-break wins",
                    lambda r: " / ".join(
                        count(x) for x in (r.outright_wins, r.shared_wins, r.tie_broken_wins)
                    ),
                ),
            ],
        )
        s.add_table(
            "Tests of equal shares and of a trend over seats",
            t.seat_tests,
            [
                RULESET,
                PLAYERS,
                GAMES,
                BLOCKS,
                (
                    "F test on blocks: F (df1, df2), p",
                    lambda r: (
                        f"{num(r.f_block)} ({r.df_block}, {count(r.f_df2)}), p={pval(r.p_block)}"
                    ),
                ),
                (
                    "Pearson chi2, p",
                    lambda r: f"{num(r.chi2_pearson)}, p={pval(r.p_pearson)}",
                ),
                (
                    "trend per seat [95%], p",
                    lambda r: (
                        f"{pp(r.trend_pp, 2)} "
                        f"{interval(r.trend_lo_pp, r.trend_hi_pp, pp2)}, "
                        f"p={pval(r.trend_p)}"
                    ),
                ),
                ("does a line fit? lack of fit: F (df), p", _lack_of_fit),
            ],
        )
        s.add_table(
            "Shared wins and tie-break decisions",
            t.ties,
            [
                RULESET,
                PLAYERS,
                GAMES,
                (
                    "shared wins [95%]",
                    lambda r: (
                        f"{count(r.shared_wins)} = {pct(r.shared_rate, 2)} "
                        f"{interval(r.shared_lo, r.shared_hi, pct2)}"
                    ),
                ),
                (
                    "decided by tie-break [95%]",
                    lambda r: (
                        f"{count(r.tie_broken)} = {pct(r.tie_broken_rate, 2)} "
                        f"{interval(r.tie_broken_lo, r.tie_broken_hi, pct2)}"
                    ),
                ),
            ],
        )
        spread = or_empty(t.seat_lineups)
        if len(spread):
            s.add_table(
                "Does a seat's effect differ between the line-ups a group pools? (an F test "
                "of the line-ups' block totals; a small p: the pooled share depends on "
                "which line-ups the study plays)",
                spread,
                [
                    RULESET,
                    PLAYERS,
                    ("seat", lambda r: plots.player_label(int(r.seat))),
                    ("line-ups", lambda r: str(r.lineups)),
                    ("F (df), p", lambda r: f"{num(r.f)} ({r.df1}, {count(r.df2)}), p={pval(r.p)}"),
                    (
                        "lowest effect",
                        lambda r: f"{pp(r.lowest_pp)} ({r.lowest_lineup.replace('|', ', ')})",
                    ),
                    (
                        "highest effect",
                        lambda r: f"{pp(r.highest_pp)} ({r.highest_lineup.replace('|', ', ')})",
                    ),
                ],
            )
        return [s]
