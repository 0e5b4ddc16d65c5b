"""The section "Win rates": per strategy and line-up with intervals, and head to head."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from marrakech_sim import plots
from marrakech_sim.errors import StatsInputError
from marrakech_sim.report import findings
from marrakech_sim.report.fmt import count, interval, pct
from marrakech_sim.report.pergame import PerGame
from marrakech_sim.report.sections import base
from marrakech_sim.report.sections.base import BaseSection, Context, Figures, Part
from marrakech_sim.report.sections.columns import (
    BLOCKS,
    GAMES,
    LINEUP,
    RULESET,
    STRATEGY,
    with_interval,
)
from marrakech_sim.report.tables import ReportTables, Tables, block_chunks, check_block_layout
from marrakech_sim.stats import estimators
from marrakech_sim.stats.intervals import (
    add_rate_interval,
)
from marrakech_sim.stats.winrates import HEAD_TO_HEAD_COLUMNS, WIN_RATE_COLUMNS


def _rate_table(tab: pd.DataFrame, level: float) -> pd.DataFrame:
    return add_rate_interval(tab, level)


@dataclass(frozen=True, slots=True)
class LineupSlots:
    """Each block's line-up as numbered slots: the block's distinct strategies in code order.

    Every game of a block seats the same line-up (only the seating changes), so a seat's
    strategy is one of its block's few slots and per-(block, slot) totals are bincounts.

    Attributes:
        seats: the seats considered (the most players of any game).
        slot: (seats, games) the seat's slot, ``seats`` where the game has no such seat.
        code: (blocks, seats + 1) the strategy code in each slot of a block, -1 when
            unused (the last column: no seat).
        repeats: some game seats one strategy more than once.
    """

    seats: int
    slot: np.ndarray
    code: np.ndarray
    repeats: bool


def lineup_slots(pg: PerGame) -> LineupSlots | None:
    """The slot layout; None when a block spans two rule sets or matches, or line-ups."""
    block = pg.block
    if not len(block) or not pg.names:
        return None
    rc, mid = pg.ruleset, pg.match_id
    same = block[1:] == block[:-1]
    if np.any(same & ((rc[1:] != rc[:-1]) | (mid[1:] != mid[:-1]))):
        return None
    k = int(pg.players.max())
    slot = np.empty((k, len(pg)), "int8")
    code = np.full((pg.n_blocks, k + 1), -1, "int16")
    repeats = False
    for part in block_chunks(pg):
        s = [pg.strategy[i, part] for i in range(k)]
        m = len(s[0])
        # A seat's slot: how many distinct strategies of its game have a smaller code.
        first = []  # the seat is the first with its strategy (and has one)
        for j in range(k):
            f = s[j] >= 0
            for h in range(j):
                equal = s[h] == s[j]
                f &= ~equal
                repeats = repeats or bool(np.any(equal & (s[j] >= 0)))
            first.append(f)
        local = pg.block_index[part] - pg.block_index[part.start]
        flat = np.full(m * (k + 1), -1, "int16")  # (game, slot) -> strategy
        for i in range(k):
            count = np.zeros(m, "int8")
            for j in range(k):
                count += first[j] & (s[j] < s[i])
            slot[i, part] = np.where(s[i] >= 0, count, k)
            flat[np.arange(m) * (k + 1) + slot[i, part]] = s[i]
        by_slot = flat.reshape(m, k + 1)
        starts = np.flatnonzero(np.r_[True, local[1:] != local[:-1]])
        mine = code[pg.block_index[part.start] : pg.block_index[part.start] + len(starts)]
        mine[:, :k] = by_slot[starts, :k]
        if not np.array_equal(by_slot[:, :k], mine[local, :k]):
            return None  # games of a block seat different line-ups
    return LineupSlots(k, slot, code, repeats)


class _KeySums:
    """Sums over (block, key) cells per key: the block ratio table's inputs."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.sums: dict[str, np.ndarray] = {
            c: np.zeros(size) for c in ("y", "m", "yy", "ym", "mm", "nb", "games", "fair")
        }

    def add(
        self, key: np.ndarray, y: np.ndarray, m: np.ndarray, games: np.ndarray, fair: np.ndarray
    ) -> None:
        for name, v in (
            ("y", y),
            ("m", m),
            ("yy", y * y),
            ("ym", y * m),
            ("mm", m * m),
            ("games", games),
            ("fair", fair),
        ):
            self.sums[name] += np.bincount(key, v, self.size)
        self.sums["nb"] += np.bincount(key, minlength=self.size)

    def grow(self, size: int) -> None:
        """Room for keys up to ``size`` (new keys start at zero)."""
        if size > self.size:
            self.sums = {c: np.r_[v, np.zeros(size - self.size)] for c, v in self.sums.items()}
            self.size = size

    def regroup(self, new_key: np.ndarray, size: int) -> _KeySums:
        """The sums per ``new_key[key]``: cells are additive across keys."""
        out = _KeySums(size)
        for name, v in self.sums.items():
            out.sums[name] = np.bincount(new_key, v, size)
        return out

    def table(self) -> pd.DataFrame:
        t = self.sums
        keys = np.flatnonzero(t["nb"] > 0)
        cols = estimators.ratio_from_sums(*(t[c][keys] for c in ("y", "m", "yy", "ym", "mm", "nb")))
        cols["n_games"] = np.round(t["games"][keys])
        cols["fair_share"] = t["fair"][keys] / t["m"][keys]
        return pd.DataFrame({"key": keys, **cols})


H2H_SUMS = ("y", "m", "count", "tie", "syy", "sym", "smm", "nb")


def head_to_head_sums(pg: PerGame, slots: LineupSlots | None, acc: dict[str, np.ndarray]) -> None:
    """Add the head-to-head sums of ``pg``'s blocks to ``acc`` (per rule set and strategy
    pair: key rule set * strategies**2 + strategy * strategies + opponent).

    Every ordered seat pair of a game scores 1 / 0.5 / 0 by rank, weighted 1 / (mult_A *
    mult_B) for strategies seated several times; block totals per (rule set, strategy,
    opponent), summed as ``estimators.ratio_from_sums`` needs them, plus pair counts. A
    rule set fixes the player count: nothing pools rule sets or player counts.
    """
    kk = len(pg.rulesets) * len(pg.names) ** 2

    def add(
        key: np.ndarray,
        y: np.ndarray,
        m: np.ndarray,
        count: np.ndarray,
        tie: np.ndarray,
        **sums: np.ndarray,
    ) -> None:
        """Accumulate per-(block, pair) cells, or per-pair sums (syy, sym, smm, nb given)."""
        if not sums:
            sums = {"syy": y * y, "sym": y * m, "smm": m * m, "nb": count > 0}
        for name, v in (("y", y), ("m", m), ("count", count), ("tie", tie), *sums.items()):
            acc[name] += np.bincount(key, v, kk)

    if slots is not None and not slots.repeats:
        _head_to_head_by_slot(pg, slots, add)
    elif len(pg) and pg.names:
        _head_to_head_by_pair(pg, add)


def head_to_head_table(
    names: list[str], rulesets: list[str], acc: dict[str, np.ndarray]
) -> pd.DataFrame:
    """Head-to-head block ratio table (``estimators.ratio_from_sums``) plus pair counts,
    per (rule set, strategy, opponent)."""
    n_s = len(names)
    present = np.flatnonzero(acc["count"] > 0)
    tab = pd.DataFrame(
        {
            "ruleset": [rulesets[k // (n_s * n_s)] for k in present],
            "strategy": [names[k % (n_s * n_s) // n_s] for k in present],
            "opponent": [names[k % n_s] for k in present],
            **estimators.ratio_from_sums(
                acc["y"][present],
                acc["m"][present],
                acc["syy"][present],
                acc["sym"][present],
                acc["smm"][present],
                acc["nb"][present],
            ),
            "n_pairs": acc["count"][present].astype("int64"),
            "tied_pairs": acc["tie"][present].astype("int64"),
        }
    )
    return tab.sort_values(["ruleset", "strategy", "opponent"], ignore_index=True)


def _head_to_head_by_slot(pg: PerGame, slots: LineupSlots, add: Any) -> None:
    """Block totals per slot pair (no strategy twice in a game: every pair weighs 1).

    A block's games all seat its line-up, so a slot pair meets in every game of the block
    (``count`` times). Slots are in code order: for slots a < b the pair (code[a], code[b])
    has the smaller strategy first, and its mirror scores ``count - y`` in each block, so
    the mirror's sums follow from the pair's (all of them exact: halves and integers).
    """
    k, n_s = slots.seats, len(pg.names)
    kk = n_s * n_s
    size = len(pg.rulesets) * kk
    sums = {c: np.zeros(size) for c in ("y", "yy", "yc", "c", "cc", "nb", "tie")}
    for part in block_chunks(pg):
        b0 = int(pg.block_index[part.start])
        local = pg.block_index[part] - b0
        n_bl = int(local[-1]) + 1
        m = len(local)
        rank = np.zeros(m * (k + 1), "int8")  # (slot, game) -> rank; slot k: no seat
        games = np.arange(m)
        for i in range(k):
            rank[slots.slot[i, part].astype("int64") * m + games] = pg.rank[i, part]
        by_slot = rank.reshape(k + 1, m)
        code = slots.code[b0 : b0 + n_bl].astype("int64")
        first_game = part.start + np.flatnonzero(np.r_[True, local[1:] != local[:-1]])
        ruleset = pg.ruleset[first_game].astype("int64") * kk  # a block has one rule set
        n_games = np.bincount(local, minlength=n_bl).astype("float64")
        keys, ys, ties, counts = [], [], [], []
        for a in range(k):
            for b in range(a + 1, k):
                both = np.flatnonzero((code[:, a] >= 0) & (code[:, b] >= 0))
                if not len(both):
                    continue
                # lower rank is better (RULES.md section 7: rank 1 = winner)
                ahead = np.bincount(local, by_slot[a] < by_slot[b], n_bl)[both]
                tie = np.bincount(local, by_slot[a] == by_slot[b], n_bl)[both]
                keys.append(ruleset[both] + code[both, a] * n_s + code[both, b])
                ys.append(ahead + 0.5 * tie)
                ties.append(tie)
                counts.append(n_games[both])
        if not keys:
            continue
        key, y, tie, c = (np.concatenate(v) for v in (keys, ys, ties, counts))
        for name, v in (("y", y), ("yy", y * y), ("yc", y * c), ("c", c), ("cc", c * c)):
            sums[name] += np.bincount(key, v, size)
        sums["tie"] += np.bincount(key, tie, size)
        sums["nb"] += np.bincount(key, minlength=size)
    pair = np.flatnonzero(sums["nb"] > 0)
    within = pair % kk
    mirror = pair - within + (within % n_s) * n_s + within // n_s
    t = {name: v[pair] for name, v in sums.items()}
    for key, y, yy, yc in (
        (pair, t["y"], t["yy"], t["yc"]),
        (mirror, t["c"] - t["y"], t["cc"] - 2 * t["yc"] + t["yy"], t["cc"] - t["yc"]),
    ):
        add(key, y=y, m=t["c"], count=t["c"], tie=t["tie"], syy=yy, sym=yc, smm=t["cc"], nb=t["nb"])


def _head_to_head_by_pair(pg: PerGame, add: Any) -> None:
    """Block totals per (block, strategy, opponent) cell, any layout, in chunks of blocks."""
    n_s = len(pg.names)
    kk = len(pg.rulesets) * n_s * n_s  # (rule set, strategy, opponent) cells
    kmax = int(pg.players.max())
    bidx = pg.block_index
    per = max(1, 4_000_000 // kk)  # blocks per chunk
    starts = np.searchsorted(bidx, np.arange(0, pg.n_blocks, per))
    stops = np.r_[starts[1:], len(bidx)]
    for a, b in zip(starts, stops, strict=True):
        local = bidx[a:b] - bidx[a]
        nbl = int(local[-1]) + 1
        ruleset = pg.ruleset[a:b].astype("int64") * (n_s * n_s)
        s = [pg.strategy[i, a:b].astype("int64") for i in range(kmax)]
        r = [pg.rank[i, a:b].astype("float64") for i in range(kmax)]
        mult = [
            sum(((s[j] == s[i]) & (s[i] >= 0)).astype("float64") for j in range(kmax))
            for i in range(kmax)
        ]
        parts: dict[str, list[np.ndarray]] = {"key": [], "y": [], "m": [], "tie": []}
        for i in range(kmax):
            for j in range(kmax):
                if i == j:
                    continue
                ok = (s[i] >= 0) & (s[j] >= 0) & (s[i] != s[j])
                w = 1.0 / (mult[i][ok] * mult[j][ok])
                ri, rj = r[i][ok], r[j][ok]
                parts["key"].append(local[ok] * kk + ruleset[ok] + s[i][ok] * n_s + s[j][ok])
                # Lower rank is better (RULES.md section 7: rank 1 = winner).
                parts["y"].append(np.where(ri < rj, 1.0, np.where(ri == rj, 0.5, 0.0)) * w)
                parts["m"].append(w)
                parts["tie"].append((ri == rj).astype("float64"))
        key = np.concatenate(parts["key"])
        size = nbl * kk
        cell = {c: np.bincount(key, np.concatenate(parts[c]), size) for c in ("y", "m", "tie")}
        cell["count"] = np.bincount(key, minlength=size).astype("float64")
        used = np.flatnonzero(cell["count"] > 0)
        add(used % kk, *(cell[c][used] for c in ("y", "m", "count", "tie")))


class WinRateTotals:
    """Win-rate and head-to-head sums of block totals, added slice by slice.

    Win rates are summed per (rule set, match, strategy): a match seats one line-up, and
    the line-ups are named only once every game has been read (``match_info``), so the
    sums are folded per line-up at the end.
    """

    def __init__(self, names: list[str], rulesets: list[str]) -> None:
        self.names, self.rulesets = names, rulesets
        self.groups: dict[tuple[int, int], int] = {}  # (rule set code, match id) -> group
        self.per_group = _KeySums(0)
        self.head_to_head = {c: np.zeros(len(rulesets) * len(names) ** 2) for c in H2H_SUMS}

    def add(self, pg: PerGame) -> None:
        """Add one slice of whole blocks."""
        check_block_layout(pg)
        slots = lineup_slots(pg) if len(pg) else None
        if len(pg) and slots is None:
            raise StatsInputError(
                "the games of a block seat different line-ups: not the block layout this "
                "program writes (every seating of one line-up per block, run.plan)"
            )
        if slots is None:  # no balance game
            return
        self._add_win_rates(pg, slots)
        head_to_head_sums(pg, slots, self.head_to_head)

    def _add_win_rates(self, pg: PerGame, slots: LineupSlots) -> None:
        """Per (block, slot) totals by bincounts over the seats, block chunk by block chunk,
        then summed per (rule set, match, strategy)."""
        k, n_s = slots.seats, len(self.names)
        inv_players = 1.0 / pg.players
        for part in block_chunks(pg):
            b0 = int(pg.block_index[part.start])
            local = pg.block_index[part] - b0
            n_bl = int(local[-1]) + 1
            size = n_bl * (k + 1)
            y = np.zeros(size)
            wv, inv = pg.win_value[part], inv_players[part]
            s = [pg.strategy[i, part] for i in range(k)]
            if slots.repeats:
                m, games, fair = np.zeros(size), np.zeros(size), np.zeros(size)
            for i in range(k):
                cell = local * (k + 1) + slots.slot[i, part]
                y += np.bincount(cell, wv * pg.win[i, part], size)
                if slots.repeats:  # games: each of a strategy's mult seats counts 1 / mult
                    mult = sum((s[j] == s[i]).astype("float64") for j in range(k))
                    m += np.bincount(cell, minlength=size)
                    games += np.bincount(cell, 1.0 / mult, size)
                    fair += np.bincount(cell, inv, size)
            if not slots.repeats:  # one seat per slot in every game of the block
                m = np.repeat(np.bincount(local, minlength=n_bl).astype("float64"), k + 1)
                fair = np.repeat(np.bincount(local, inv, n_bl), k + 1)
                games = m
            code = slots.code[b0 : b0 + n_bl].astype("int64")  # (blocks, slots)
            first_game = part.start + np.flatnonzero(np.r_[True, local[1:] != local[:-1]])
            n_rs = len(self.rulesets)
            pair = pg.match_id[first_game] * n_rs + pg.ruleset[first_game]
            pairs, pair_of = np.unique(pair, return_inverse=True)  # a few (match, rule set)
            found = [(int(p % n_rs), int(p // n_rs)) for p in pairs]
            group = np.array([self.groups.setdefault(p, len(self.groups)) for p in found])[pair_of]
            self.per_group.grow(len(self.groups) * n_s)
            used = np.flatnonzero(code.ravel() >= 0)
            key = (group[:, None] * n_s + code).ravel()[used]
            self.per_group.add(key, y[used], m[used], games[used], fair[used])

    def tables(self, con: duckdb.DuckDBPyConnection) -> dict[str, pd.DataFrame]:
        """``win_rates``, ``lineup_win_rates`` (block ratio tables) and ``head_to_head``."""
        names, rulesets = self.names, self.rulesets
        n_s = len(names)
        h2h = head_to_head_table(names, rulesets, self.head_to_head)
        if not self.groups:  # no balance game
            empty = _KeySums(0).table().drop(columns="key")
            lineups = empty.assign(ruleset=[], lineup=[])
            return {
                "win_rates": empty.assign(ruleset=[], strategy=[]),
                "lineup_win_rates": lineups.assign(strategy=[]),
                "head_to_head": h2h,
            }
        info = con.execute("SELECT match_id, lineup FROM match_info").fetchnumpy()
        order = np.argsort(info["match_id"])
        info_ids = np.asarray(info["match_id"])[order].astype("int64")
        lineup_codes, lineup_idx = np.unique(
            np.asarray(info["lineup"], dtype=object)[order].astype(str), return_inverse=True
        )
        n_l = len(lineup_codes)
        if len(rulesets) * n_l * n_s > 1 << 24:
            raise StatsInputError(
                f"{len(rulesets)} rule sets x {n_l} line-ups x {n_s} strategies: more cells "
                "than the report's dense sums hold (16,777,216); report fewer runs at a time"
            )
        group_of = np.zeros(len(self.groups), "int64")  # (rule set, match) -> (rule set, line-up)
        for (rs, mid), g in self.groups.items():
            group_of[g] = rs * n_l + lineup_idx[np.searchsorted(info_ids, mid)]
        old = np.arange(len(self.groups) * n_s)
        new_key = group_of[old // n_s] * n_s + old % n_s
        per_lineup = self.per_group.regroup(new_key, len(rulesets) * n_l * n_s)
        # per (rule set, strategy): a rule set fixes the player count, nothing pools them
        cells = np.arange(len(rulesets) * n_l * n_s)
        per_rs = per_lineup.regroup((cells // (n_l * n_s)) * n_s + cells % n_s, len(rulesets) * n_s)
        win_rates = per_rs.table()
        key = win_rates.pop("key").to_numpy()
        win_rates.insert(0, "strategy", [names[x % n_s] for x in key])
        win_rates.insert(0, "ruleset", [rulesets[x // n_s] for x in key])
        lineups = per_lineup.table()
        key = lineups.pop("key").to_numpy()
        lineups.insert(0, "strategy", [names[x % n_s] for x in key])
        lineups.insert(0, "lineup", [str(lineup_codes[(x // n_s) % n_l]) for x in key])
        lineups.insert(0, "ruleset", [rulesets[x // n_s // n_l] for x in key])
        return {"win_rates": win_rates, "lineup_win_rates": lineups, "head_to_head": h2h}


def _finish_win_rates(keys: list[str], tab: pd.DataFrame) -> pd.DataFrame:
    """A win-rate table; a rate that is the fair share in every block (a strategy
    in every seat of its games: its seats' shares add up to 1) is a constant, with no
    interval (`constant`)."""
    tab = tab.rename(columns={"total": "wins", "n": "n_seat_games", "estimate": "rate"})
    tab["n_seat_games"] = tab["n_seat_games"].astype("int64")
    tab["n_games"] = tab["n_games"].astype("int64")
    rate, fair = tab["rate"].to_numpy(dtype="float64"), tab["fair_share"].to_numpy(dtype="float64")
    constant = (tab["var"].to_numpy(dtype="float64") == 0) & np.isclose(
        rate, fair, rtol=0, atol=1e-12
    )
    tab["constant"] = constant
    tab.loc[constant, ["lo", "hi", "n_eff", "design_effect"]] = np.nan
    return tab[[*keys, *WIN_RATE_COLUMNS, "constant"]].reset_index(drop=True)


def win_rate_tables(
    con: duckdb.DuckDBPyConnection, out: ReportTables, level: float, totals: WinRateTotals
) -> None:
    """Win rate per (rule set, strategy), per (rule set, line-up, strategy), and head to head."""
    fast = totals.tables(con)
    tabs = []
    for name, by in (("win_rates", ["ruleset"]), ("lineup_win_rates", ["ruleset", "lineup"])):
        keys = [*by, "strategy"]
        tab = _rate_table(fast[name], level).sort_values(keys, ignore_index=True)
        tabs.append(_finish_win_rates(keys, tab))
    out.tables.win_rates, out.tables.lineup_win_rates = tabs

    # Head to head: each (A seat, B seat) pair of a game scores 1 / 0.5 / 0 by rank; a game's
    # score is the mean over its pairs, i.e. each pair weighs 1 / (mult_A * mult_B).
    keys = ["ruleset", "strategy", "opponent"]
    tab = _rate_table(fast["head_to_head"], level)
    tab = tab.rename(columns={"total": "ahead", "n": "n_games", "estimate": "rate"})
    tab["n_games"] = np.round(tab["n_games"]).astype("int64")
    for c in ("n_pairs", "tied_pairs"):
        tab[c] = tab[c].astype("int64")
    out.tables.head_to_head = tab[[*keys, *HEAD_TO_HEAD_COLUMNS]].reset_index(drop=True)


# ---------------------------------------------------------------- words and charts


def win_rate_finding(wr: pd.DataFrame) -> str:
    """Title for the win-rate chart: the strategy furthest above its fair share, in the
    rule set where it is (each rule set is judged against its own 1/players)."""
    above = wr["rate"] - wr["fair_share"]
    best = wr.loc[above.idxmax()]
    if wr["strategy"].nunique() == 1:
        return f"{best.strategy} wins {pct(best.rate)} of its games (n={count(best.n_games)})"
    clear = not (best.lo <= best.fair_share <= best.hi)
    verb = "wins most often" if clear else "wins most often, but within chance of a fair share"
    where = f" under {findings.title(best.ruleset)}" if wr["ruleset"].nunique() > 1 else ""
    return (
        f"{best.strategy} {verb}{where}: {pct(best.rate)} vs fair {pct(best.fair_share)} "
        f"(n={count(best.n_games)})"
    )


def h2h_finding(h2h: pd.DataFrame, players_of: dict[str, int]) -> str:
    """Title for the head-to-head heatmaps (one per rule set)."""
    top = h2h.sort_values(["rate", "ruleset"], ascending=[False, True]).iloc[0]
    return (
        f"Most one-sided pairing: {top.strategy} ahead of {top.opponent} "
        f"in {pct(top.rate)} of {count(top.n_games)} games "
        f"({findings.title(top.ruleset)}, {players_of.get(top.ruleset, '?')} players)"
    )


def _lineup_label(lineup: str, strategy: str) -> str:
    others = [s for s in str(lineup).split("|")]
    others.remove(strategy) if strategy in others else None
    return f"{strategy} vs {', '.join(others)}" if others else strategy


def _one_side(part: pd.DataFrame) -> pd.DataFrame:
    """One row per 2-player line-up: the side that won more (the other won the rest)."""
    return part.sort_values("rate", ascending=False, kind="stable").drop_duplicates("lineup")


def _rate(r: Any) -> str:
    """A win rate with its interval, or a constant as a constant."""
    if getattr(r, "constant", False):
        return f"{pct(r.rate)} (a constant: it holds every seat, so its seats share every win)"
    return f"{pct(r.rate)} {interval(r.lo, r.hi, pct)}"


class WinRateSection(BaseSection):
    """The section "Win rates"."""

    name = "win_rates"
    headings = ("Win rates",)
    mix_only = True
    intro = (
        "Share of games won (a shared win counts 1/k to each winner; win counts are rounded to "
        "whole games) with 95% Wilson intervals at the effective number of games. A strategy's "
        "fair share is 1/players: each rule set (and so each player count) is apart, in the "
        "table as in the chart."
    )

    def draw(self, t: Tables, charts: Figures) -> None:
        strategy_colour = base.strategy_colours(t)
        players_of = base.players_of(t)
        lwr = t.lineup_win_rates
        if not lwr.empty:
            groups = [
                (ruleset, _one_side(part) if players_of.get(ruleset) == 2 else part)
                for ruleset, part in sorted(
                    lwr.groupby("ruleset"), key=lambda g: (-players_of.get(g[0], 0), g[0])
                )
            ]
            sizes = [len(part) for _, part in groups]
            fig = plots.new_figure(8.5, 0.8 * len(groups) + 0.24 * sum(sizes) + 0.6)
            grid = fig.subplots(len(groups), 1, squeeze=False, height_ratios=[n + 3 for n in sizes])
            for ax, (ruleset, part) in zip(grid[:, 0], groups, strict=True):
                part = part.assign(
                    label=[_lineup_label(r.lineup, r.strategy) for r in part.itertuples()],
                    # a constant (a strategy in every seat) is drawn as a point with no bar
                    lo=part["lo"].fillna(part["rate"]),
                    hi=part["hi"].fillna(part["rate"]),
                ).sort_values(["lineup", "rate"], ascending=[True, False])
                games = part["n_games"]
                n_text = (
                    f"{count(games.iloc[0])} games per line-up"
                    if games.nunique() == 1
                    else f"{count(games.min())}-{count(games.max())} games per line-up"
                )
                if players_of.get(ruleset) == 2:
                    n_text += "; each pairing once: the other side won the rest"
                plots.plot_win_rates(
                    part,
                    ax,
                    f"{findings.title(ruleset)}, {players_of.get(ruleset, '?')} players ({n_text})",
                    colours=strategy_colour,
                    counts=False,
                )
            title = win_rate_finding(t.win_rates)
            fig.suptitle("Win rate per strategy and line-up; dotted: the fair share 1/players")
            charts["win_rates"] = (title, fig)
        h2h = t.head_to_head
        if not h2h.empty:  # one matrix per rule set: nothing pools rule sets or player counts
            title = h2h_finding(h2h, players_of)
            groups = sorted(h2h.groupby("ruleset"), key=lambda g: (-players_of.get(g[0], 0), g[0]))
            n = h2h["strategy"].nunique()
            columns = min(2, len(groups))
            rows_ = -(-len(groups) // columns)
            fig = plots.new_figure(
                columns * max(5.5, 1.4 * n + 2.5), rows_ * max(4, 1.1 * n + 1.5) + 0.4
            )
            grid = fig.subplots(rows_, columns, squeeze=False)
            for ax, (ruleset, part) in zip(grid.flat, groups, strict=False):
                plots.plot_head_to_head(
                    part, ax, f"{findings.title(ruleset)}, {players_of.get(ruleset, '?')} players"
                )
            for ax in grid.flat[len(groups) :]:
                ax.set_visible(False)
            fig.suptitle(title)
            charts["head_to_head"] = (title, fig)

    def parts(self, ctx: Context, chart_titles: dict[str, str]) -> list[Part]:
        t = ctx.rt.tables
        players_of = base.players_of(t)
        s = self.opening()
        s.charts += base.charted(chart_titles, "win_rates", "head_to_head")
        s.add_table(
            "Per strategy",
            t.win_rates,
            [
                RULESET,
                ("players", lambda r: str(players_of.get(r.ruleset, "?"))),
                STRATEGY,
                GAMES,
                BLOCKS,
                ("wins", lambda r: count(r.wins)),
                ("rate [95%]", _rate),
                ("fair share", lambda r: pct(r.fair_share)),
            ],
        )
        s.add_table(
            "Per line-up",
            t.lineup_win_rates,
            [
                RULESET,
                LINEUP,
                STRATEGY,
                GAMES,
                ("rate [95%]", _rate),
            ],
        )
        s.add_table(
            "Head to head (row strategy finished ahead of the opponent)",
            t.head_to_head,
            [
                RULESET,
                STRATEGY,
                ("opponent", lambda r: str(r.opponent)),
                GAMES,
                ("tied pairs", lambda r: count(r.tied_pairs)),
                with_interval("ahead", "rate", pct),
            ],
        )
        return [s]
