"""The plan of a study: match-ups, blocks of seatings sharing one chance stream, chunks.

A **match** is one line-up of strategies under one rule set. A **block** is one game
seed played under every distinct seating of the match's line-up (rotation "all": the
k! permutations, fewer when a strategy sits twice; "latin": the k cyclic rotations;
"none": the line-up as given). All games of a block share the dice and the piles, so
each strategy meets the same luck in every seat.

Games are numbered in schedule order, round by round: block r of every match, then
block r + 1, so any prefix of the run is balanced over the matches (which is what a
stopping rule needs). A **chunk** is a run of consecutive whole blocks of about
`chunk_games` games: the unit of work of a worker and of one part file per table.

Seeds: block b's game seed is word b % 1024 of
``numpy.random.SeedSequence(seed, spawn_key=(b // 1024,)).generate_state(1024, numpy.uint64)``
(the state of child b // 1024 of ``SeedSequence(seed).spawn(...)``), so it depends on
the run seed and the block number only, never on process state or worker count.

Common seeds (``common_seeds = true``): the rule sets play the same seeds, so a variant and
its base meet the same dice and rug piles (common random numbers) and their comparison can
be paired block by block. Block b then takes the seed of its *seed key*
round(b) * L + i(b), where i(b) is the position of b's line-up among its rule set's
line-ups (config order), round(b) the block's number within its match and L the most
line-ups of any rule set; round r of line-up i has one seed under every rule set. Without
it the key is the block number.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from functools import cached_property

import numpy as np

from marrakech_sim.run.config import Study, check_size, lineups_of

SEED_GROUP = 1024  # block seeds are drawn in groups of this many per SeedSequence child
#: the cost of a Python-loop game in compiled games (times its heaviest strategy's COST)
PYTHON_GAME_COST = 16
#: a chunk holds at least this many games (or one block), however costly they are
MIN_CHUNK_GAMES = 64


@dataclasses.dataclass(frozen=True, slots=True)
class Match:
    """One line-up (strategy names in seat order) under one rule set."""

    match_id: int
    ruleset: str
    lineup: tuple[str, ...]
    seatings: tuple[tuple[str, ...], ...]  # the seatings of a block, first = the line-up


def seatings(lineup: Sequence[str], rotation: str) -> tuple[tuple[str, ...], ...]:
    """The distinct seatings of a block, the line-up itself first."""
    lineup = tuple(lineup)
    if rotation == "all":
        found: Iterator[tuple[str, ...]] = distinct_permutations(lineup)
    elif rotation == "latin":
        found = (lineup[r:] + lineup[:r] for r in range(len(lineup)))
    else:
        found = iter([lineup])
    return tuple(dict.fromkeys(found))


def distinct_permutations(items: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    """The distinct orders of `items`, in the order of their first appearance in
    ``itertools.permutations(items)``, without listing the repeats: 12 copies of one
    strategy and one other give 13 seatings for 13 steps, not 13! = 6.2e9.

    (The depth-first search of itertools.permutations over positions, skipping at each
    level a value already tried there: what it skips holds only orders seen before.)
    """
    n = len(items)
    used = [False] * n
    chosen: list[str] = []

    def extend() -> Iterator[tuple[str, ...]]:
        if len(chosen) == n:
            yield tuple(chosen)
            return
        tried: set[str] = set()
        for i in range(n):
            if used[i] or items[i] in tried:
                continue
            tried.add(items[i])
            used[i] = True
            chosen.append(items[i])
            yield from extend()
            chosen.pop()
            used[i] = False

    return extend()


def matches_of(study: Study) -> list[Match]:
    """The study's matches, numbered in config order (rule sets, then line-ups)."""
    out: list[Match] = []
    for ruleset, lineups in lineups_of(study).items():
        for lineup in lineups:
            out.append(Match(len(out), ruleset, lineup, seatings(lineup, study.rotation)))
    return out


def block_seeds(seed: int, blocks: np.ndarray) -> np.ndarray:
    """The game seed (uint64) of each block number in `blocks` (see the module docstring)."""
    blocks = np.asarray(blocks, dtype=np.int64)
    out = np.empty(len(blocks), dtype=np.uint64)
    if len(blocks) == 0:
        return out
    groups = blocks // SEED_GROUP
    for group in np.unique(groups):
        where = groups == group
        offsets = blocks[where] % SEED_GROUP
        # generate_state is prefix-stable: words 0..n-1 do not depend on n
        words = np.random.SeedSequence(seed, spawn_key=(int(group),)).generate_state(
            int(offsets.max()) + 1, np.uint64
        )
        out[where] = words[offsets]
    return out


@dataclasses.dataclass(frozen=True)
class ChunkGames:
    """The games of one chunk, in game-id order (numpy arrays, one entry per game)."""

    chunk: int
    game_id: np.ndarray  # int64
    match_id: np.ndarray  # int64
    block: np.ndarray  # int64
    seating: np.ndarray  # int64, index into Plan.seating_rows
    seed: np.ndarray  # uint64
    moves_kept: np.ndarray  # bool: the game's moves are written (Study.keep_moves)

    def __len__(self) -> int:
        return len(self.game_id)


class Plan:
    """Every planned game of a study, as arrays (blocks in schedule order), and its chunks."""

    def __init__(self, study: Study) -> None:
        check_size(study)  # before any seating is listed: k! of them for rotation "all"
        self.study = study
        self.matches = matches_of(study)
        names = study.strategy_names
        index = {name: i for i, name in enumerate(names)}
        sizes = np.array([len(m.seatings) for m in self.matches], dtype=np.int64)
        # blocks per match: games_per_lineup rounded up to whole blocks
        per_match = -(-study.games_per_lineup // sizes)
        # seating rows: one per (match, seating), strategy indices per seat, -1 padded
        width = max(len(m.lineup) for m in self.matches)
        rows = [
            [index[name] for name in seating] + [-1] * (width - len(seating))
            for m in self.matches
            for seating in m.seatings
        ]
        self.seating_rows = np.array(rows, dtype=np.int64).reshape(-1, width)
        self.seating_offset = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self.match_size = sizes
        # round-major block order: round r of match 0, 1, ..., then round r + 1
        match_of = np.repeat(np.arange(len(self.matches), dtype=np.int64), per_match)
        round_of = np.concatenate([np.arange(n, dtype=np.int64) for n in per_match])
        order = np.lexsort((match_of, round_of))
        self.block_match = match_of[order]
        # keep_moves: the moves of each match's first rounds, ceil(keep_moves x its rounds);
        # the rounds are exchangeable (independent seeds), so the first ones are a random
        # sample of whole blocks, and a run a stopping rule ends early has all of them
        kept_rounds = np.ceil(study.keep_moves * per_match - 1e-9).astype(np.int64)
        self.block_moves_kept = round_of[order] < kept_rounds[self.block_match]
        self.block_seed_key = np.arange(len(order), dtype=np.int64)
        if study.common_seeds:
            position = _lineup_positions(self.matches)
            width = int(position.max()) + 1
            self.block_seed_key = round_of[order] * width + position[self.block_match]
        block_sizes = sizes[self.block_match]
        self.block_first = np.concatenate([[0], np.cumsum(block_sizes)]).astype(np.int64)
        self.games_planned = int(self.block_first[-1])
        # chunks are sized by cost, not games, so a study of slow players is cut into
        # enough chunks for every worker; the games and their ids do not change
        costs = match_costs(study, self.matches)[self.block_match] * block_sizes
        self.block_cost_first = np.concatenate([[0], np.cumsum(costs)]).astype(np.int64)
        self.chunk_first_block = _chunk_bounds(
            self.block_first, self.block_cost_first, study.chunk_games
        )

    @property
    def blocks(self) -> int:
        return len(self.block_match)

    @property
    def chunks(self) -> int:
        return len(self.chunk_first_block) - 1

    @cached_property
    def chunk_first_game(self) -> np.ndarray:
        first: np.ndarray = self.block_first[self.chunk_first_block]
        return first

    def chunk_games(self, chunk: int) -> ChunkGames:
        """The games of chunk `chunk`."""
        if not 0 <= chunk < self.chunks:
            raise IndexError(f"chunk {chunk} of {self.chunks}")
        b0, b1 = int(self.chunk_first_block[chunk]), int(self.chunk_first_block[chunk + 1])
        blocks = np.arange(b0, b1, dtype=np.int64)
        match = self.block_match[b0:b1]
        sizes = self.match_size[match]
        block = np.repeat(blocks, sizes)
        first = self.block_first[block]
        g0, g1 = int(self.block_first[b0]), int(self.block_first[b1])
        game_id = np.arange(g0, g1, dtype=np.int64)
        within = game_id - first  # seating index within the block
        match_id = np.repeat(match, sizes)
        return ChunkGames(
            chunk=chunk,
            game_id=game_id,
            match_id=match_id,
            block=block,
            seating=self.seating_offset[match_id] + within,
            seed=np.repeat(block_seeds(self.study.seed, self.block_seed_key[b0:b1]), sizes),
            moves_kept=np.repeat(self.block_moves_kept[b0:b1], sizes),
        )

    def chunk_of_game(self, game_id: int) -> int:
        return int(np.searchsorted(self.chunk_first_game, game_id, side="right") - 1)

    def matches_table(self) -> list[dict[str, object]]:
        """The matches as plain data (for the manifest)."""
        return [
            {
                "match_id": m.match_id,
                "ruleset": m.ruleset,
                "lineup": list(m.lineup),
                "seatings": len(m.seatings),
                "blocks": int(np.count_nonzero(self.block_match == m.match_id)),
            }
            for m in self.matches
        ]


def _lineup_positions(matches: Sequence[Match]) -> np.ndarray:
    """Per match, the position of its line-up among its rule set's line-ups (config order)."""
    seen: dict[str, int] = {}
    out = np.empty(len(matches), dtype=np.int64)
    for m in matches:
        out[m.match_id] = seen.get(m.ruleset, 0)
        seen[m.ruleset] = out[m.match_id] + 1
    return out


def match_costs(study: Study, matches: Sequence[Match]) -> np.ndarray:
    """The cost of one game of each match, in compiled games: 1 when every strategy of
    its line-up has a compiled twin, else PYTHON_GAME_COST times the largest `COST` of
    its strategies (a deterministic estimate: chunks must not depend on timings)."""
    from marrakech_sim.strategies.twins import compiled_twin

    cost = {}
    for spec in study.strategies:
        cls = spec.load_class()
        cost[spec.label] = 0 if compiled_twin(cls) is not None else getattr(cls, "COST", 1)
    out = np.ones(len(matches), np.int64)
    for i, m in enumerate(matches):
        heaviest = max(cost[name] for name in m.lineup)
        if heaviest:
            out[i] = PYTHON_GAME_COST * heaviest
    return out


def _chunk_bounds(
    block_first: np.ndarray, block_cost_first: np.ndarray, chunk_games: int
) -> np.ndarray:
    """First block of each chunk (and the block count at the end): whole blocks per chunk.

    A chunk ends at the first block boundary where its cost reaches chunk_games, and
    holds at least MIN_CHUNK_GAMES games (or chunk_games if fewer) and one block. With
    compiled games only (cost 1 a game) that is chunk_games games.
    """
    bounds = [0]
    blocks = len(block_first) - 1
    least = min(MIN_CHUNK_GAMES, chunk_games)
    while bounds[-1] < blocks:
        b = bounds[-1]
        by_cost = np.searchsorted(block_cost_first, block_cost_first[b] + chunk_games, "left")
        by_games = np.searchsorted(block_first, block_first[b] + least, "left")
        bounds.append(min(max(int(by_cost), int(by_games), b + 1), blocks))
    return np.array(bounds, dtype=np.int64)
