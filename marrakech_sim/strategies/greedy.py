"""The greedy family: one-turn look-ahead with weighted features.

Rotation. Standard order: turn Assam where the expected payment over the die is
lowest (a face that would bankrupt counts `ruin` extra). Variant "orient at end": the
rotation sets the next player's walk, so turn him where the next player is expected to
pay this seat the most (`ruin` extra for each face that would bankrupt them paying it).

Placement: maximise

    area * (my colour's region after placing)
    + cover * (visible halves of opponents still in the game it covers)
    + block * (largest opponent region it covers into, size before placing)
    - waste * (visible halves of my own colours it covers)

Ties are broken by one draw from the seat's stream (`view.rng.below`), in the order of
the options; the compiled twin (`marrakech_sim.strategies.twins`, code 1) decides exactly the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from marrakech_sim.play.strategy import BaseStrategy
from marrakech_sim.play.view import GameView
from marrakech_sim.rules.queries import F_OPPONENT_HALVES, F_OPPONENT_REGION, F_OWN_HALVES, F_REGION
from marrakech_sim.rules.state import Placement


def _pick_best(view: GameView, scores: list[float]) -> int:
    """Index of the highest score; ties by one draw from the seat's stream."""
    best = max(scores)
    ties = [i for i, score in enumerate(scores) if score == best]
    return ties[view.rng.below(len(ties))] if len(ties) > 1 else ties[0]


class GreedyStrategy(BaseStrategy):
    """Greedy: cheapest walk (or the next player's dearest), then the best-scoring rug."""

    PARAMETERS: ClassVar[Mapping[str, Any]] = {
        "area": 1.0,  # weight of my colour's region after placing
        "cover": 1.0,  # weight per opponent half covered
        "block": 0.5,  # weight of the largest opponent region covered into
        "waste": 1.0,  # penalty per own half covered
        "ruin": 10.0,  # extra weight of a die face that bankrupts the payer
    }
    COMPILED: ClassVar[str | None] = "greedy"

    def rotation_scores(self, view: GameView) -> list[float]:
        """Score of rotations -1, 0, 1 (higher is better)."""
        ruin = float(self.params["ruin"])
        walker = view.next_walker
        scores = []
        for rotation in (-1, 0, 1):
            if walker is None or walker == view.seat:
                due, _, bankrupt = view.payment_totals(rotation)
                scores.append(-(due + ruin * bankrupt))
            else:
                _, paid, bankrupt = view.payment_totals(rotation, walker, payee=view.seat)
                scores.append(paid + ruin * bankrupt)
        return scores

    def placement_scores(self, view: GameView, options: tuple[Placement, ...]) -> list[float]:
        """Score of each option (higher is better)."""
        p = self.params
        area, cover, block, waste = (float(p[key]) for key in ("area", "cover", "block", "waste"))
        return [
            area * row[F_REGION]
            + cover * row[F_OPPONENT_HALVES]
            + block * row[F_OPPONENT_REGION]
            - waste * row[F_OWN_HALVES]
            for row in view.placement_features(options).tolist()
        ]

    def choose_rotation(self, view: GameView) -> int:
        return _pick_best(view, self.rotation_scores(view)) - 1

    def choose_placement(self, view: GameView, options: tuple[Placement, ...]) -> Placement:
        return options[_pick_best(view, self.placement_scores(view, options))]


class GreedyAreaStrategy(GreedyStrategy):
    """Greedy builder: grows its own regions and never aims at opponents' rugs."""

    PARAMETERS: ClassVar[Mapping[str, Any]] = {
        **GreedyStrategy.PARAMETERS,
        "cover": 0.0,
        "block": 0.0,
    }


class GreedyBlockStrategy(GreedyStrategy):
    """Greedy blocker: covers opponents' largest regions before growing its own."""

    PARAMETERS: ClassVar[Mapping[str, Any]] = {
        **GreedyStrategy.PARAMETERS,
        "area": 0.5,
        "cover": 2.0,
        "block": 1.0,
    }
