"""The uniform random baseline."""

from __future__ import annotations

from typing import ClassVar

from marrakech_sim.play.strategy import BaseStrategy, CompiledTwin
from marrakech_sim.play.view import GameView
from marrakech_sim.rules.state import Placement
from marrakech_sim.strategies.kernels import random_placement, random_rotation


class RandomStrategy(BaseStrategy):
    """Uniform over the legal options: the statistical baseline.

    Each rotation with probability 1/3, each legal placement with probability 1/n,
    from the seat's own stream (exactly uniform, see `Rng.below`).
    """

    COMPILED: ClassVar[CompiledTwin | None] = CompiledTwin(
        "random", code=0, rotation=random_rotation, placement=random_placement
    )

    def choose_rotation(self, view: GameView) -> int:
        return view.rng.below(3) - 1

    def choose_placement(self, view: GameView, options: tuple[Placement, ...]) -> Placement:
        return options[view.rng.below(len(options))]
