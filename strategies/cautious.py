"""Example plug-in strategies: copy this file, edit it, load it by path.

    marrakech check-strategy strategies/cautious.py:Cautious --param tolerance=0.5

`Cautious` is the 10-line example of docs/STRATEGIES.md; `PlainRandom` is written against
the Protocol alone. The built-in strategies live in the package (`marrakech_sim.strategies`).
"""

from marrakech_sim.play.strategy import BaseStrategy


class Cautious(BaseStrategy):
    """Turns Assam where the expected payment is lowest; places the rug at random."""

    PARAMETERS = {"tolerance": 0.0}  # noqa: RUF012 (kept as short as a user writes it)

    def choose_rotation(self, view):
        costs = {r: view.expected_payment(r) for r in (-1, 0, 1)}
        cheapest = min(costs.values())
        calm = [r for r, cost in costs.items() if cost <= cheapest + self.params["tolerance"]]
        return calm[view.rng.below(len(calm))]

    def choose_placement(self, view, options):
        return options[view.rng.below(len(options))]


class PlainRandom:
    """A random player written against the Protocol only (no base class), as a user would."""

    def choose_rotation(self, view):
        return view.rng.choice((-1, 0, 1))

    def choose_placement(self, view, options):
        return view.rng.choice(options)
