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
the options. The scores and the choice are the compiled kernels of
`marrakech_sim.strategies.kernels`, which the compiled twin (`GreedyStrategy.COMPILED`,
code 1) calls too: one implementation, so both game loops decide exactly the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from marrakech_sim.play.strategy import BaseStrategy, CompiledTwin
from marrakech_sim.play.view import GameView
from marrakech_sim.rules.state import Placement, placement_codes
from marrakech_sim.strategies.kernels import (
    GREEDY_PARAMETERS,
    greedy_placement,
    greedy_placement_scores,
    greedy_rotation,
    greedy_rotation_scores,
    greedy_twin_placement,
    greedy_twin_rotation,
)


class GreedyStrategy(BaseStrategy):
    """Greedy: cheapest walk (or the next player's dearest), then the best-scoring rug."""

    PARAMETERS: ClassVar[Mapping[str, Any]] = {
        "area": 1.0,  # weight of my colour's region after placing
        "cover": 1.0,  # weight per opponent half covered
        "block": 0.5,  # weight of the largest opponent region covered into
        "waste": 1.0,  # penalty per own half covered
        "ruin": 10.0,  # extra weight of a die face that bankrupts the payer
    }
    #: the presets inherit it, with their own defaults in the parameter vector
    COMPILED: ClassVar[CompiledTwin | None] = CompiledTwin(
        "greedy",
        code=1,
        rotation=greedy_twin_rotation,
        placement=greedy_twin_placement,
        params=GREEDY_PARAMETERS,
    )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        # the kernels' weight vector, in GREEDY_PARAMETERS order (as the twin's)
        self._weights = np.array([float(self.params[key]) for key in GREEDY_PARAMETERS])

    def _codes(self, view: GameView, options: tuple[Placement, ...]) -> np.ndarray:
        """The options' kernel codes, in their order."""
        codes = placement_codes(view.rules.board_size)
        return np.array([codes[option] for option in options], np.int64)

    def rotation_scores(self, view: GameView) -> list[float]:
        """Score of rotations -1, 0, 1 (higher is better)."""
        out = np.empty(3)
        greedy_rotation_scores(view.packed.copy(), self._weights, out)
        return list(out.tolist())

    def placement_scores(self, view: GameView, options: tuple[Placement, ...]) -> list[float]:
        """Score of each option (higher is better)."""
        out = np.empty(len(options))
        codes = self._codes(view, options)
        greedy_placement_scores(view.packed.copy(), self._weights, codes, len(options), out)
        return list(out.tolist())

    def choose_rotation(self, view: GameView) -> int:
        return int(greedy_rotation(view.packed.copy(), self._weights, view.rng.state))

    def choose_placement(self, view: GameView, options: tuple[Placement, ...]) -> Placement:
        codes = self._codes(view, options)
        s = view.packed.copy()
        return options[int(greedy_placement(s, self._weights, view.rng.state, codes, len(codes)))]


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
