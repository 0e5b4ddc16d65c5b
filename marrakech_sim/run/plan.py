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

import bisect
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
        pool = np.random.SeedSequence(seed, spawn_key=(int(group),)).pool
        out[where] = seed_words(pool, int(offsets.max()) + 1)[offsets]
    return out


# SeedSequence.generate_state's output hash (numpy/random/bit_generator.pyx): 32-bit word i
# is ((pool[i % 4] ^ H[i]) * H[i + 1]) ^ (same >> 16), with H[i] = INIT_B * MULT_B**i mod
# 2**32. numpy computes it one word at a time (100-160 us for a group of 1,024 seeds: a
# chunk's plan took 0.225 us a random game, 0.084 now); with H tabled once it is three
# array operations.
# tests/run/test_plan.py checks seed_words against generate_state.
_INIT_B = 0x8B51F9DD
_MULT_B = 0x58F38DED


def _hash_constants(words: int) -> np.ndarray:
    h = np.empty(words, np.uint32)
    x = _INIT_B
    for i in range(words):
        h[i] = x
        x = x * _MULT_B & 0xFFFFFFFF
    return h


_HASH = _hash_constants(2 * SEED_GROUP + 1)


def seed_words(pool: np.ndarray, count: int) -> np.ndarray:
    """SeedSequence.generate_state(count, numpy.uint64) of a SeedSequence with entropy
    pool `pool` (4 uint32 words, its `pool`), for count <= SEED_GROUP."""
    n = 2 * count
    words = np.tile(pool.astype(np.uint32), -(-n // len(pool)))[:n] ^ _HASH[:n]
    words *= _HASH[1 : n + 1]
    words ^= words >> np.uint32(16)
    # as numpy does: the pairs of words read as little-endian 64-bit numbers
    out: np.ndarray = words.astype("<u4").view("<u8").astype(np.uint64)
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
    """Every planned game of a study and its chunks, in memory O(matches + chunks).

    No array has an entry per block or game: a block's match, round, first game, cost,
    seed key and whether its moves are kept are computed on demand from the schedule's
    closed form (`_Layout`), for any range of blocks at once (`block_matches`,
    `block_first_games`, ...). A 10^9-game study plans in the memory of its chunk list.
    """

    def __init__(self, study: Study) -> None:
        check_size(study)  # before any seating is listed: k! of them for rotation "all"
        self.study = study
        self.matches = matches_of(study)
        names = study.strategy_names
        index = {name: i for i, name in enumerate(names)}
        sizes = np.array([len(m.seatings) for m in self.matches], dtype=np.int64)
        # blocks per match (its rounds): games_per_lineup rounded up to whole blocks
        self.match_rounds = -(-study.games_per_lineup // sizes)
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
        # keep_moves: the moves of each match's first rounds, ceil(keep_moves x its rounds);
        # the rounds are exchangeable (independent seeds), so the first ones are a random
        # sample of whole blocks, and a run a stopping rule ends early has all of them
        self.kept_rounds = np.ceil(study.keep_moves * self.match_rounds - 1e-9).astype(np.int64)
        # common seeds: round r of line-up i has seed key r * L + i under every rule set
        self.lineup_position = _lineup_positions(self.matches)
        self.seed_width = int(self.lineup_position.max()) + 1
        # chunks are sized by cost, not games, so a study of slow players is cut into
        # enough chunks for every worker; the games and their ids do not change
        costs = match_costs(study, self.matches) * sizes
        self.layout = _Layout(self.match_rounds, sizes, costs)
        self.games_planned = self.layout.games
        self.chunk_first_block = _chunk_bounds(self.layout, study.chunk_games)

    @property
    def blocks(self) -> int:
        return self.layout.blocks

    @property
    def chunks(self) -> int:
        return len(self.chunk_first_block) - 1

    @cached_property
    def chunk_first_game(self) -> np.ndarray:
        """The first game of each chunk, and the games planned at the end."""
        return self.block_first_games(self.chunk_first_block)

    def block_matches(self, blocks: np.ndarray) -> np.ndarray:
        """The match of each block number in `blocks` (0 <= b < blocks)."""
        return self.layout.at(blocks)[0]

    def block_rounds(self, blocks: np.ndarray) -> np.ndarray:
        """Each block's round: its number among its match's blocks."""
        return self.layout.at(blocks)[1]

    def block_first_games(self, blocks: np.ndarray) -> np.ndarray:
        """The first game id of each block (0 <= b <= blocks: `blocks` gives games_planned)."""
        return self.layout.first(blocks)

    def block_seed_keys(self, blocks: np.ndarray) -> np.ndarray:
        """The seed key of each block (`block_seeds` takes it; see the module docstring)."""
        blocks = np.asarray(blocks, dtype=np.int64)
        if not self.study.common_seeds:
            return blocks.copy()
        match, rounds = self.layout.at(blocks)
        keys: np.ndarray = rounds * self.seed_width + self.lineup_position[match]
        return keys

    def block_moves_kept(self, blocks: np.ndarray) -> np.ndarray:
        """Whether each block's moves are kept (Study.keep_moves)."""
        match, rounds = self.layout.at(blocks)
        kept: np.ndarray = rounds < self.kept_rounds[match]
        return kept

    def match_blocks(self, match: int, rounds: int | None = None) -> np.ndarray:
        """The block numbers of a match's first `rounds` rounds (default: all), in order."""
        most = int(self.match_rounds[match])
        return self.layout.blocks_of(
            match, np.arange(most if rounds is None else min(rounds, most))
        )

    def chunk_games(self, chunk: int) -> ChunkGames:
        """The games of chunk `chunk`."""
        if not 0 <= chunk < self.chunks:
            raise IndexError(f"chunk {chunk} of {self.chunks}")
        b0, b1 = int(self.chunk_first_block[chunk]), int(self.chunk_first_block[chunk + 1])
        blocks = np.arange(b0, b1, dtype=np.int64)
        match, rounds = self.layout.at(blocks)
        sizes = self.match_size[match]
        first = self.layout.first(blocks)
        g0, g1 = int(first[0]), int(first[-1] + sizes[-1])
        game_id = np.arange(g0, g1, dtype=np.int64)
        block = np.repeat(blocks, sizes)
        within = game_id - np.repeat(first, sizes)  # seating index within the block
        match_id = np.repeat(match, sizes)
        if self.study.common_seeds:
            keys = rounds * self.seed_width + self.lineup_position[match]
        else:
            keys = blocks
        return ChunkGames(
            chunk=chunk,
            game_id=game_id,
            match_id=match_id,
            block=block,
            seating=self.seating_offset[match_id] + within,
            seed=np.repeat(block_seeds(self.study.seed, keys), sizes),
            moves_kept=np.repeat(rounds < self.kept_rounds[match], sizes),
        )

    def matches_table(self) -> list[dict[str, object]]:
        """The matches as plain data (for the manifest)."""
        return [
            {
                "match_id": m.match_id,
                "ruleset": m.ruleset,
                "lineup": list(m.lineup),
                "seatings": len(m.seatings),
                "blocks": int(self.match_rounds[m.match_id]),
            }
            for m in self.matches
        ]


class _Layout:
    """The schedule's block order in closed form: segments of rounds with the same matches.

    Blocks go round by round (round r of every match that has one, in match order), and a
    match with fewer seatings has more rounds. Between two consecutive distinct round
    counts the set of matches playing a round does not change: a *segment* is such a run
    of rounds, every round of it the same blocks of the same matches in the same order.
    So block b is found by the segment (a search among a few), then the round and the
    position within it by division; its first game (or cost) is the segment's first plus
    whole rounds plus the games of the blocks before it in its round. Memory: segments x
    matches (segments: the distinct round counts, a handful).
    """

    def __init__(self, rounds: np.ndarray, games: np.ndarray, costs: np.ndarray) -> None:
        ends = np.unique(rounds)  # the segments end after these rounds
        starts = np.concatenate([[0], ends[:-1]]).astype(np.int64)
        members = [np.flatnonzero(rounds >= end).astype(np.int64) for end in ends]
        self.round0 = starts
        self.width = np.array([len(m) for m in members], dtype=np.int64)  # blocks per round
        self.rounds = ends - starts
        self.member = np.concatenate(members)
        self.member_at = np.concatenate([[0], np.cumsum(self.width)[:-1]]).astype(np.int64)
        # per segment: the games (costs) before each of its round's blocks, and the round's
        # total last (width + 1 entries each, from cum_at); per segment the games (costs)
        # before it, and the study's total last
        self.cum_at = self.member_at + np.arange(len(members), dtype=np.int64)
        self.block0 = _starts(self.width * self.rounds)
        self.blocks = int(self.block0[-1])
        self.sums: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        for kind, values in (("games", games), ("costs", costs)):
            cum = _per_round(members, values)
            per_round = cum[self.cum_at + self.width]
            self.sums[kind] = (_starts(per_round * self.rounds), per_round, cum)
        self.games = int(self.sums["games"][0][-1])
        # the same as plain lists, for the scalar searches of _chunk_bounds (a numpy call
        # costs microseconds, and a 10^9-game study has 10^5 chunks and more)
        self._lists = {kind: tuple(a.tolist() for a in v) for kind, v in self.sums.items()}
        self._block0 = self.block0.tolist()
        self._width = self.width.tolist()
        self._cum_at = self.cum_at.tolist()

    def _place(self, blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each block's segment, its round within the segment and its position in the round
        (the block count itself is the end: past the last round of the last segment)."""
        blocks = np.asarray(blocks, dtype=np.int64)
        seg = np.searchsorted(self.block0, blocks, side="right") - 1
        seg = np.minimum(seg, len(self.width) - 1)
        q, pos = np.divmod(blocks - self.block0[seg], self.width[seg])
        return seg, q, pos

    def at(self, blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The match and the round of each block."""
        seg, q, pos = self._place(blocks)
        return self.member[self.member_at[seg] + pos], self.round0[seg] + q

    def first(self, blocks: np.ndarray, kind: str = "games") -> np.ndarray:
        """The games (kind "games") or costs ("costs") before each block."""
        seg, q, pos = self._place(blocks)
        start, per_round, cum = self.sums[kind]
        out: np.ndarray = start[seg] + q * per_round[seg] + cum[self.cum_at[seg] + pos]
        return out

    def blocks_of(self, match: int, rounds: np.ndarray) -> np.ndarray:
        """The block numbers of `match`'s rounds `rounds`."""
        rounds = np.asarray(rounds, dtype=np.int64)
        seg = np.searchsorted(self.round0, rounds, side="right") - 1
        members = [self.member[a : a + w] for a, w in zip(self.member_at, self.width, strict=True)]
        pos = np.array([int(np.searchsorted(members[s], match)) for s in seg], dtype=np.int64)
        out: np.ndarray = self.block0[seg] + (rounds - self.round0[seg]) * self.width[seg] + pos
        return out

    def first_one(self, block: int, kind: str) -> int:
        """`first` of one block, in plain Python."""
        start, per_round, values = self._lists[kind]
        seg = bisect.bisect_right(self._block0, block) - 1
        seg = min(seg, len(self._width) - 1)
        q, pos = divmod(block - self._block0[seg], self._width[seg])
        return int(start[seg] + q * per_round[seg] + values[self._cum_at[seg] + pos])

    def reaching(self, value: int, kind: str) -> int:
        """The first block whose games (costs) before it are at least `value`: what
        ``numpy.searchsorted(first(arange(blocks + 1), kind), value, "left")`` gives."""
        start, per_round, values = self._lists[kind]
        if value > start[-1]:
            return self.blocks + 1
        if value <= 0:
            return 0
        seg = bisect.bisect_right(start, value) - 1
        seg = min(seg, len(self._width) - 1)
        q, rest = divmod(value - start[seg], per_round[seg])
        at, width = self._cum_at[seg], self._width[seg]
        pos = bisect.bisect_left(values, rest, at, at + width + 1) - at
        return int(self._block0[seg] + q * width + pos)


def _per_round(members: list[np.ndarray], values: np.ndarray) -> np.ndarray:
    """Per segment, the running sum of its members' values from 0 (width + 1 entries)."""
    parts = [np.concatenate([[0], np.cumsum(values[m])]) for m in members]
    return np.concatenate(parts).astype(np.int64)


def _starts(lengths: np.ndarray) -> np.ndarray:
    """Where each of consecutive runs of `lengths` starts, and their total last."""
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


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
    from marrakech_sim.arena.twins import compiled_twin

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


def _chunk_bounds(layout: _Layout, chunk_games: int) -> np.ndarray:
    """First block of each chunk (and the block count at the end): whole blocks per chunk.

    A chunk ends at the first block boundary where its cost reaches chunk_games, and
    holds at least MIN_CHUNK_GAMES games (or chunk_games if fewer) and one block. With
    compiled games only (cost 1 a game) that is chunk_games games.
    """
    bounds = [0]
    blocks = layout.blocks
    least = min(MIN_CHUNK_GAMES, chunk_games)
    b = 0
    while b < blocks:
        by_cost = layout.reaching(layout.first_one(b, "costs") + chunk_games, "costs")
        by_games = layout.reaching(layout.first_one(b, "games") + least, "games")
        b = min(max(by_cost, by_games, b + 1), blocks)
        bounds.append(b)
    return np.array(bounds, dtype=np.int64)
