"""Game play: chance streams, the game loop, what a strategy sees, the strategy API."""
