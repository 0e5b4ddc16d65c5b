"""Strategies whose faults are in their inputs, for the tests of one-line errors."""

from marrakech_sim.play.strategy import BaseStrategy


class ConstructorRaises(BaseStrategy):
    """A strategy whose constructor fails with an error of its own."""

    def __init__(self, **params):
        super().__init__(**params)
        raise RuntimeError("no licence for this strategy")

    def choose_rotation(self, view):
        return 0

    def choose_placement(self, view, options):
        return options[0]
