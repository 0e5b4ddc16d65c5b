"""Running results while a run plays: each seat's win share per rule set and player model.

`LiveTotals` adds up the per-block seat totals each finished chunk reports
(`ChunkResult.seat_y`, `seat_n`: no Parquet is read back) into the sums of block totals
the report's seat shares are computed from, and `LiveTotals.rows` gives the share and
its block-aware interval with the report's own estimator functions
(`stats.estimators.ratio_from_sums`, then `stats.intervals.add_rate_interval`, as the
report's seat sections do). A player model is a line-up's strategies as a multiset
(`greedy x4`; `expert + greedy x3`): its games are not pooled with another model's. With
one model per rule set the rows are the report's: a self-play model's are its skill
section's (`skill_seats`), a mixed line-up's its seat table's (`seat_shares`, which pools
the mixed line-ups of a rule set).

Only the chunks played in this session are counted (a resumed run's earlier chunks are
on disk, and reading them back is what the live table avoids).
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from typing import Any

import numpy as np
import pandas as pd

from marrakech_sim.run.chunk import ChunkResult
from marrakech_sim.run.plan import Plan
from marrakech_sim.stats import estimators
from marrakech_sim.stats.intervals import DEFAULT_LEVEL, add_rate_interval


def model_label(lineup: tuple[str, ...]) -> str:
    """A line-up as a player model: its strategies as a sorted multiset (`greedy x4`)."""
    counts = Counter(lineup)
    return " + ".join(f"{name} x{n}" if n > 1 else name for name, n in sorted(counts.items()))


@dataclasses.dataclass(frozen=True, slots=True)
class LiveRow:
    """One seat of one (rule set, player model) group so far."""

    ruleset: str
    model: str
    players: int
    seat: int
    games: int
    blocks: int
    share: float
    lo: float  # NaN with fewer than two blocks
    hi: float


class LiveTotals:
    """The sums of block totals per (rule set, player model), chunk by chunk.

    Its work is in the run's own process, once per chunk (a terminal redraws the table
    four times a second): `add` takes every group and seat of a chunk in one
    `estimators.ratio_sums`, and `rows` is worked out once per change, every group in one
    table.
    """

    def __init__(self, plan: Plan, level: float = DEFAULT_LEVEL) -> None:
        self.plan, self.level = plan, level
        groups: dict[tuple[str, str, int], int] = {}
        match_group = []
        for match in plan.matches:
            key = (match.ruleset, model_label(match.lineup), len(match.lineup))
            match_group.append(groups.setdefault(key, len(groups)))
        self.groups = list(groups)
        self.match_group = np.asarray(match_group, np.int64)
        self.chunk_first_block = plan.chunk_first_block
        self.width = max(players for _, _, players in groups)
        self.players = np.array([players for _, _, players in groups], np.int64)
        # per group and seat (group * width + seat): the SUMS of estimators.ratio_sums,
        # added chunk by chunk
        size = len(groups) * self.width
        self.sums: dict[str, np.ndarray] = {name: np.zeros(size) for name in estimators.SUMS}
        self._rows: list[LiveRow] | None = None

    def add(self, result: ChunkResult) -> None:
        """Add a finished chunk's seat totals (a chunk without them adds nothing)."""
        if result.seat_y is None or result.seat_n is None:
            return
        first = int(self.chunk_first_block[result.chunk])
        blocks = np.arange(first, first + len(result.seat_n), dtype=np.int64)
        group = self.match_group[self.plan.block_matches(blocks)]
        played = result.seat_n > 0  # a block whose games all ended in a fault carries nothing
        seats = np.arange(result.seat_y.shape[1])
        # the (block, seat) cells of the seats each block's group has, in block order
        cell = played[:, None] & (seats[None, :] < self.players[group][:, None])
        block, seat = np.nonzero(cell)
        sums = estimators.ratio_sums(
            result.seat_y[block, seat],
            result.seat_n[block],
            group[block] * self.width + seat,
            len(self.sums["n"]),
        )
        for name in estimators.SUMS:
            self.sums[name] += sums[name]
        self._rows = None

    def rows(self) -> list[LiveRow]:
        """Each seat's share so far, with its interval at `level`; groups with games only."""
        if self._rows is not None:
            return self._rows
        est = estimators.ratio_from_sums(*(self.sums[name] for name in estimators.SUMS))
        tab = add_rate_interval(pd.DataFrame(est), self.level)
        n, blocks, share, lo, hi = (
            tab[name].to_numpy().tolist() for name in ("n", "n_blocks", "estimate", "lo", "hi")
        )
        out = []
        for g, (ruleset, model, players) in enumerate(self.groups):
            if not n[g * self.width]:
                continue
            for seat in range(players):
                i = g * self.width + seat
                out.append(
                    LiveRow(
                        ruleset,
                        model,
                        players,
                        seat,
                        int(n[i]),
                        int(blocks[i]),
                        float(share[i]),
                        float(lo[i]),
                        float(hi[i]),
                    )
                )
        self._rows = out
        return out


def stopping_text(state: dict[str, Any] | None) -> str | None:
    """The stopping rule's state in words: the LLR and its bounds, or the interval's width."""
    if not state:
        return None
    decided = f"; stop: {state['decision']}" if state.get("decision") else ""
    if state["rule"] == "sprt":
        llr = state.get("llr")
        if llr is None or not math.isfinite(llr):  # estimators.sequential_llr's NaN
            return (
                f"SPRT on {state['quantity']}: LLR not defined after {state['games']:,} games "
                "(fewer than two blocks, or a share of 0 or 1 so far)"
            )
        return (
            f"SPRT on {state['quantity']}: LLR {state['llr']:+.2f} "
            f"(bounds {state['lower']:+.2f}, {state['upper']:+.2f}), estimate "
            f"{state['estimate']:.2%} after {state['games']:,} games{decided}"
        )
    return (
        f"interval width on {state['quantity']}: {state['width']:.2%} "
        f"[{state['lo']:.2%}, {state['hi']:.2%}] after {state['games']:,} games{decided}"
    )
