"""Playing in the browser: `marrakech play --web` serves one game on 127.0.0.1.

    session   one person's game as page data: the board, Assam's walks, the legal
              placements, what happened since the last choice; moves checked, undo, hints
    server    the page and its JSON routes (bottle), served by the standard library's
              WSGI server on one address
    page      the page itself: inline style and script, no asset from the network

The game is the terminal `play`'s (`marrakech_sim.human`): the same replay from the seed
with the person's decisions, saved as the same record and one-game run folder.
"""
