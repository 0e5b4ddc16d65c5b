"""Stopping rules: a run that stops once its question is answered, checked after every block.

The runner hands each chunk's per-block totals of the rule's quantity (win share and
seat-games, ``run.chunk.block_totals``) to :class:`Stopper`, which takes the chunks
strictly in chunk order and the blocks of a chunk in schedule order, so the decision is the
same whatever the number of workers. After every block it updates running sums of the
block totals and asks the estimators (``stats.estimators``) whether to stop:

* ``interval_width``: the block-clustered Wilson interval of the share is narrower than
  ``width``;
* ``sprt``: the generalised SPRT on the block totals (``estimators.sequential_test``)
  crosses one of Wald's bounds.

The decision names its block. The run keeps whole chunks, so it holds the games up to the
end of the chunk of the stopping block (a deterministic set: the chunks are fixed by the
plan); the manifest records the block, the games up to it and the games the run holds.
The estimate reported with the decision is the plain ratio at the stopping block: it is
**not corrected for the sequential stop** (a test stopped early on a large LLR overstates
the distance from p0 and p1's midpoint a little).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from marrakech_sim.run.config import StoppingRule
from marrakech_sim.run.plan import Plan
from marrakech_sim.stats import estimators

NOT_CORRECTED = "the estimate is not corrected for the sequential stop"


class Stopper:
    """A stopping rule over the run's blocks, taken strictly in chunk and block order."""

    def __init__(self, rule: StoppingRule, plan: Plan) -> None:
        self.rule = rule
        self.plan = plan
        self.pending: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.next_chunk = 0
        self.sums: dict[str, float] = dict.fromkeys(estimators.SUMS, 0.0)
        self.decision: dict[str, Any] | None = None
        self.last: dict[str, Any] = {}

    def add(self, chunk: int, y: np.ndarray, n: np.ndarray) -> int | None:
        """Record a chunk's block totals; return the chunk of the stopping block, if any."""
        self.pending[chunk] = (y, n)
        while self.decision is None and self.next_chunk in self.pending:
            y, n = self.pending.pop(self.next_chunk)
            first = int(self.plan.chunk_first_block[self.next_chunk])
            blocks = first + np.flatnonzero(n > 0)  # blocks that carry the quantity
            found = self.check(np.asarray(y)[n > 0], np.asarray(n)[n > 0], blocks)
            if found is not None:
                self.decision = {**self.last, "chunk": self.next_chunk}
                return self.next_chunk
            self.next_chunk += 1
        return None

    def check(self, y: np.ndarray, n: np.ndarray, blocks: np.ndarray) -> int | None:
        """Add blocks in order; the index of the first after which the rule stops, or None."""
        if not len(y):
            return None
        rule = self.rule
        games = self.plan.block_first_games(blocks + 1)  # games up to the end of each block
        allowed = games >= rule.min_games
        if rule.rule == "sprt":
            assert rule.p0 is not None and rule.p1 is not None
            res = estimators.sequential_test(
                y, n, rule.p0, rule.p1, rule.alpha, rule.beta, self.sums, allowed=allowed
            )
            index: int | None = res["index"]
            at = index if index is not None else len(y) - 1
            self.sums = res["sums"]  # through the stopping block, or the last one
            extra = {"llr": res["llr"], "lower": res["lower"], "upper": res["upper"]}
            decision = {"H1": "accept H1 (p1)", "H0": "accept H0 (p0)"}.get(res["decision"] or "")
        else:
            assert rule.width is not None
            cum = estimators.cumulative_sums(y, n, self.sums)
            est = estimators.ratio_from_sums(*(cum[name] for name in estimators.SUMS))
            ci = estimators.rate_interval(est["estimate"], est["var"], est["n"], rule.level)
            width = ci["hi"] - ci["lo"]
            with np.errstate(invalid="ignore"):
                stop = allowed & (cum["n_blocks"] >= 2) & (width < rule.width)
            hit = np.flatnonzero(stop)
            index = int(hit[0]) if len(hit) else None
            at = index if index is not None else len(y) - 1
            self.sums = {name: float(cum[name][at]) for name in estimators.SUMS}
            extra = {
                "lo": float(ci["lo"][at]),
                "hi": float(ci["hi"][at]),
                "width": float(width[at]),
                "n_eff": float(ci["n_eff"][at]),
            }
            decision = "interval narrow enough" if index is not None else None
        self.last = self._statistics(int(blocks[at]), int(games[at]), extra, decision)
        return index

    def _statistics(
        self, block: int, games: int, extra: dict[str, Any], decision: str | None
    ) -> dict[str, Any]:
        rule, s = self.rule, self.sums
        est = estimators.ratio_from_sums(*(np.array([s[name]]) for name in estimators.SUMS))
        ci = estimators.rate_interval(est["estimate"], est["var"], est["n"], rule.level)
        out: dict[str, Any] = {
            "rule": rule.rule,
            "quantity": rule.quantity,
            "block": block,  # the last block taken in (the stopping block when stopped)
            "games": games,  # games of the schedule up to the end of that block
            "blocks": int(s["n_blocks"]),  # blocks that carried the quantity
            "n": int(s["n"]),
            "estimate": float(est["estimate"][0]),
            "estimate_lo": float(ci["lo"][0]),
            "estimate_hi": float(ci["hi"][0]),
            "stop": decision is not None,
            "decision": decision,
            **extra,
        }
        if rule.rule == "sprt":
            out["estimate_note"] = NOT_CORRECTED
        return out


def stopping_line(statistics: dict[str, Any], stopped: bool) -> str:
    """One line a person reads: the rule's statistic, its bounds, and what it decided.

    e.g. ``LLR 2.97 (-2.94, 2.94) H1 accepted after 1,204 blocks``.
    """
    s = statistics
    blocks = f"{s.get('blocks', 0):,} blocks"
    if s.get("rule") == "sprt":
        if "llr" not in s or s["llr"] is None or not np.isfinite(s["llr"]):
            return f"LLR not yet defined after {blocks}"
        head = f"LLR {s['llr']:.2f} ({s['lower']:.2f}, {s['upper']:.2f})"
        verdict = {"accept H1 (p1)": "H1 accepted", "accept H0 (p0)": "H0 accepted"}.get(
            s.get("decision") or "", "no decision"
        )
        tail = (
            f"; share {s['estimate']:.4f} ({s['estimate_lo']:.4f}-{s['estimate_hi']:.4f}), "
            "not corrected for the sequential stop"
            if "estimate" in s and np.isfinite(s["estimate"])
            else ""
        )
        return f"{head} {verdict} after {blocks}{tail}"
    if "width" not in s:
        return f"interval not yet defined after {blocks}"
    verdict = "narrow enough" if stopped else "not yet narrow enough"
    return (
        f"interval {s['lo']:.4f}-{s['hi']:.4f} (width {s['width']:.4f}) {verdict} "
        f"after {blocks}; share {s['estimate']:.4f}"
    )
