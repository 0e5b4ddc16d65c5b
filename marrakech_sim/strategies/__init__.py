"""The built-in strategies, from the uniform random baseline to search.

Each is registered under the entry-point group `marrakech_sim.strategies` (see
pyproject.toml). Those with a compiled twin declare it beside their code (the class's
`COMPILED`, a `play.strategy.CompiledTwin`); `marrakech_sim.arena` plays whole games in
its compiled loop when every seat of a game has one.
"""
