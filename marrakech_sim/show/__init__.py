"""Seeing games: board pictures (SVG, PNG, GIF), the terminal board, and a page that
steps through a game. (A person's game against the strategies is marrakech_sim.human.)

    palette     the one colour of each rug colour letter (Okabe-Ito, colour-blind safe)
    scene       a position as drawing primitives; to SVG text or onto a matplotlib Axes
    terminal    a position as ANSI text with rug seams; stepping through a replay by key
    page        one self-contained HTML file stepping through a game
    animate     PNG of one position, GIF of a whole game (matplotlib + Pillow)
"""
