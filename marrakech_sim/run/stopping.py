"""Stopping rules: a run that stops once its question is answered."""

from __future__ import annotations

from typing import Any

import numpy as np

from marrakech_sim.run.config import StoppingRule
from marrakech_sim.run.plan import Plan
from marrakech_sim.stats.intervals import wilson_interval


class Stopper:
    """A stopping rule over the run's chunks, taken strictly in chunk order."""

    def __init__(self, rule: StoppingRule, plan: Plan) -> None:
        self.rule = rule
        self.plan = plan
        self.pending: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.next_chunk = 0
        self.sums = np.zeros(6)  # Y, N, sum y^2, sum y*n, sum n^2, blocks
        self.decision: dict[str, Any] | None = None
        self.last: dict[str, Any] = {}

    def add(self, chunk: int, y: np.ndarray, n: np.ndarray) -> int | None:
        """Record a chunk's block totals; return the chunk after which to stop, if any."""
        self.pending[chunk] = (y, n)
        while self.decision is None and self.next_chunk in self.pending:
            y, n = self.pending.pop(self.next_chunk)
            used = n > 0
            y, n = y[used], n[used]
            self.sums += [y.sum(), n.sum(), (y * y).sum(), (y * n).sum(), (n * n).sum(), len(n)]
            games = int(self.plan.chunk_first_game[self.next_chunk + 1])
            self.last = self.statistics(games)
            if self.last["stop"]:
                self.decision = {**self.last, "chunk": self.next_chunk}
                return self.next_chunk
            self.next_chunk += 1
        return None

    def statistics(self, games: int) -> dict[str, Any]:
        rule = self.rule
        big_y, big_n, syy, syn, snn, blocks = self.sums
        out: dict[str, Any] = {
            "rule": rule.rule,
            "quantity": rule.quantity,
            "games": games,
            "blocks": int(blocks),
            "n": int(big_n),
            "stop": False,
        }
        if big_n == 0:
            return out
        p = big_y / big_n
        out["estimate"] = p
        enough = games >= rule.min_games
        if rule.rule == "interval_width":
            assert rule.width is not None
            # block-clustered variance of the ratio estimator (games of a block share dice)
            var = (syy - 2 * p * syn + p * p * snn) / big_n**2 * (blocks / max(blocks - 1, 1))
            n_eff = p * (1 - p) / var if var > 0 and 0 < p < 1 else big_n
            lo, hi = wilson_interval(p * n_eff, n_eff, rule.level)
            out.update(lo=lo, hi=hi, width=hi - lo, n_eff=n_eff)
            out["stop"] = bool(enough and blocks >= 2 and hi - lo < rule.width)
            out["decision"] = "interval narrow enough" if out["stop"] else None
        else:
            assert rule.p0 is not None and rule.p1 is not None
            llr = big_y * np.log(rule.p1 / rule.p0) + (big_n - big_y) * np.log(
                (1 - rule.p1) / (1 - rule.p0)
            )
            upper = float(np.log((1 - rule.beta) / rule.alpha))
            lower = float(np.log(rule.beta / (1 - rule.alpha)))
            out.update(llr=float(llr), upper=upper, lower=lower)
            if enough and llr >= upper:
                out.update(stop=True, decision="accept H1 (p1)")
            elif enough and llr <= lower:
                out.update(stop=True, decision="accept H0 (p0)")
        return out
