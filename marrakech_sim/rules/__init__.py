"""The rules core: RULES.md as data and compiled kernels. No I/O, no randomness."""

from marrakech_sim.rules.options import COLOUR_LETTERS, DIE_FACES, FACINGS, Rules
from marrakech_sim.rules.perft import perft, perft_divide
from marrakech_sim.rules.state import Action, EndReason, GameState, Outcome, Placement

__all__ = [
    "COLOUR_LETTERS",
    "DIE_FACES",
    "FACINGS",
    "Action",
    "EndReason",
    "GameState",
    "Outcome",
    "Placement",
    "Rules",
    "perft",
    "perft_divide",
]
