"""The built-in strategies, from the uniform random baseline to search.

Each is registered under the entry-point group `marrakech_sim.strategies` (see
pyproject.toml). Those with a compiled twin in `marrakech_sim.strategies.compiled` run whole games
inside the compiled loop when every seat of a game has one.
"""
