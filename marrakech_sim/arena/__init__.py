"""Playing games: one call for a batch of games, in the compiled loop or the Python loop.

`play_games(roster, ruleset, seatings, seeds)` plays games of one rule set, each seating
strategies of a `Roster` with its own seed: in the compiled whole-game loop
(`loop.play_batch`) the games whose every seat has a compiled twin (`twins`, built from
the strategies' `CompiledTwin` declarations), the others through the Python game loop
(`play.game.play_game`). Both loops play the same game from the same seed.

Between the strategies and the run: the run plans which games to play and writes them;
the arena plays them.
"""

from marrakech_sim.arena.games import (
    BATCH_GAMES,
    Buffers,
    Games,
    MoveRows,
    Roster,
    Ruleset,
    play_games,
)

__all__ = ["BATCH_GAMES", "Buffers", "Games", "MoveRows", "Roster", "Ruleset", "play_games"]
