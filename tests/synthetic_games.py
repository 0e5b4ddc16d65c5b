"""Synthetic games/seats/turn_scores tables with planted effects, for stats tests.

The finishing order of every game is drawn from a Plackett-Luce model: seat s, played by
strategy i, gets utility theta[i] + gamma[s] + Gumbel noise and seats finish in order
of decreasing utility (the Gumbel-max trick makes that order exactly Plackett-Luce).
So ``strategies`` plants strengths and ``seat_effects`` plants a seat advantage: with
equal strategies seat s wins with probability exp(gamma[s]) / sum(exp(gamma)).

Blocks imitate seat rotation with shared dice: a block is one line-up played in all its
cyclic seat rotations (or one game when ``rotate`` is false); with probability
``shared_dice`` a game reuses the block's per-seat noise instead of fresh noise, which
correlates the games of a block the way common dice do.

The tables follow LOG_FORMAT.md (games, seats) plus the ``block`` column. The report
layer's tests may reuse this module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

RUGS_PER_PLAYER = {2: 24, 3: 15, 4: 12}
START_DIRHAMS = 30


def seat_win_probabilities(seat_effects: Sequence[float]) -> np.ndarray:
    """Planted win probability of each seat when all strategies are equally strong."""
    g = np.exp(np.asarray(seat_effects, dtype="float64"))
    return g / g.sum()


def seat_effects_for_share(players: int, seat0_share: float) -> list[float]:
    """Seat effects (seat 0 favoured, the rest equal) giving seat 0 the win share asked."""
    rest = (1 - seat0_share) / (players - 1)
    return [float(np.log(seat0_share / rest))] + [0.0] * (players - 1)


def make_run(
    strategies: Mapping[str, float],
    n_blocks: int,
    players: int = 4,
    seat_effects: Sequence[float] | None = None,
    ruleset: str = "standard",
    rotate: bool = True,
    shared_dice: float = 0.0,
    tie_rate: float = 0.0,
    tie_break_rate: float = 0.0,
    bankrupt_rate: float = 0.0,
    error_rate: float = 0.0,
    lineups: Sequence[Sequence[str]] | None = None,
    seed: int = 0,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Simulate ``n_blocks`` blocks of games; return (games, seats).

    Args:
        strategies: name -> planted log-strength.
        seat_effects: planted log-strength per seat (default: none, a fair game).
        rotate: a block is every cyclic rotation of its line-up; else a single game.
        shared_dice: probability that a game reuses its block's noise (0 = independent).
        tie_rate: probability that the top two share the win (same score and dirhams).
        tie_break_rate: probability that the top two tie on score and dirhams decide.
        bankrupt_rate: probability that the last-placed seat was eliminated.
        error_rate: probability that a game ended with an error of a random seat.
        lineups: line-ups to cycle through; default random draws from ``strategies``
            (without repeats when there are at least ``players`` strategies).
    """
    rng = np.random.default_rng(seed)
    names = list(strategies)
    theta = np.array([strategies[n] for n in names], dtype="float64")
    k = players
    gamma = np.zeros(k) if seat_effects is None else np.asarray(seat_effects, dtype="float64")
    if lineups is None:
        if len(names) >= k:
            base = np.argsort(rng.random((n_blocks, len(names))), axis=1)[:, :k]
        else:
            base = rng.integers(len(names), size=(n_blocks, k))
    else:
        cycle = np.array([[names.index(x) for x in lu] for lu in lineups])
        base = cycle[np.arange(n_blocks) % len(cycle)]
    rotations = k if rotate else 1
    n_games = n_blocks * rotations
    block = np.repeat(np.arange(n_blocks), rotations)
    shift = np.tile(np.arange(rotations), n_blocks)
    seat = np.arange(k)
    # np.roll(line-up, shift): seat s is played by line-up member (s - shift) mod k.
    who = base[block[:, None], (seat[None, :] - shift[:, None]) % k]
    shared = rng.random(n_games) < shared_dice
    noise = np.where(
        shared[:, None], rng.gumbel(size=(n_blocks, k))[block], rng.gumbel(size=(n_games, k))
    )
    utility = theta[who] + gamma[None, :] + noise
    order = np.argsort(-utility, axis=1, kind="stable")  # seats, best first
    place_of = np.argsort(order, axis=1)  # place of each seat, 0 = first

    # Scores strictly decreasing along the finishing order, then ties planted on top.
    top = rng.integers(55, 80, size=n_games)
    gaps = rng.integers(1, 8, size=(n_games, k - 1))
    score_p = np.column_stack([top, top[:, None] - np.cumsum(gaps, axis=1)])
    visible_p = rng.integers(5, 20, size=(n_games, k))
    draw = rng.random(n_games)
    is_shared = draw < tie_rate
    is_broken = (draw >= tie_rate) & (draw < tie_rate + tie_break_rate)
    tied = is_shared | is_broken
    score_p[tied, 1] = score_p[tied, 0]
    dirhams_p = score_p - visible_p
    dirhams_p[tied, 1] = dirhams_p[tied, 0] - is_broken[tied]
    visible_p[tied, 1] = score_p[tied, 1] - dirhams_p[tied, 1]
    rank_p = np.tile(np.arange(1, k + 1), (n_games, 1))
    rank_p[is_shared, 1] = 1
    n_winners = np.where(is_shared, 2, 1)
    bankrupt = rng.random(n_games) < bankrupt_rate
    error = rng.random(n_games) < error_rate
    bad_seat = rng.integers(k, size=n_games)
    rugs = RUGS_PER_PLAYER.get(k, 12)
    turns = k * rugs - np.where(bankrupt, rng.integers(1, 6, size=n_games), 0)

    def by_seat(per_place: np.ndarray) -> np.ndarray:
        return np.take_along_axis(per_place, place_of, axis=1)

    out = bankrupt[:, None] & (place_of == k - 1)
    dirhams = np.where(out, 0, by_seat(dirhams_p))
    score = by_seat(score_p).astype("float64")
    score[out | error[:, None]] = np.nan
    rank = by_seat(rank_p).astype("float64")
    rank[error] = np.nan
    win = place_of < n_winners[:, None]
    win_share = np.where(win & ~error[:, None], 1.0 / n_winners[:, None], 0.0)
    end_reason = np.where(
        error, "error", np.where(bankrupt & (k == 2), "one_left", "rugs_exhausted")
    )
    lineup_key = [tuple(sorted(row)) for row in base.tolist()]
    match_ids = {key: i for i, key in enumerate(dict.fromkeys(lineup_key))}
    games = pd.DataFrame(
        {
            "game_id": np.arange(n_games),
            "match_id": np.array([match_ids[key] for key in lineup_key])[block],
            "ruleset": ruleset,
            "seed": np.arange(n_games, dtype="uint64") * 7919 + 1,
            "players": k,
            "turns": turns,
            "end_reason": end_reason,
            "winners": [
                [] if err else sorted(int(x) for x in np.flatnonzero(w))
                for err, w in zip(error, win, strict=True)
            ],
            "tie_broken": is_broken & ~error,
            "error": [
                f"seat {b} (strategy {names[who[g, b]]}): RuntimeError: boom" if err else None
                for g, (err, b) in enumerate(zip(error, bad_seat, strict=True))
            ],
            "block": block,
        }
    )
    seats = pd.DataFrame(
        {
            "game_id": np.repeat(np.arange(n_games), k),
            "seat": np.tile(seat, n_games),
            "strategy": np.array(names, dtype=object)[who].ravel(),
            "colours": np.tile(np.array(list("rbyp" * 2)[:k]), n_games),
            "dirhams": dirhams.ravel(),
            "visible": by_seat(visible_p).ravel(),
            "score": pd.array(score.ravel(), dtype="Float64").astype("Int16"),
            "rank": pd.array(rank.ravel(), dtype="Float64").astype("Int8"),
            "win_share": win_share.ravel(),
            "eliminated_turn": pd.array(
                np.where(out, (turns - 1)[:, None], np.nan).ravel(), dtype="Float64"
            ).astype("Int16"),
            "paid": rng.integers(0, 40, size=n_games * k),
            "received": rng.integers(0, 40, size=n_games * k),
        }
    )
    return _typed(games, seats)


def _typed(games: pd.DataFrame, seats: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Cast to the LOG_FORMAT.md column types."""
    games = games.astype(
        {
            "game_id": "int64",
            "match_id": "int64",
            "ruleset": "str",
            "seed": "uint64",
            "players": "int8",
            "turns": "int16",
            "end_reason": "str",
            "tie_broken": "bool",
            "error": "str",
            "block": "int64",
        }
    )
    seats = seats.astype(
        {
            "game_id": "int64",
            "seat": "int8",
            "strategy": "str",
            "colours": "str",
            "dirhams": "int16",
            "visible": "int16",
            "win_share": "float32",
            "paid": "int16",
            "received": "int16",
        }
    )
    return games, seats


def combine_runs(
    runs: Sequence[tuple[pd.DataFrame, pd.DataFrame]],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Concatenate runs, renumbering game_id, match_id and block so they stay unique."""
    all_games, all_seats = [], []
    game_off = match_off = block_off = 0
    for games, seats in runs:
        g = games.copy()
        s = seats.copy()
        g["game_id"] += game_off
        s["game_id"] += game_off
        g["match_id"] += match_off
        g["block"] += block_off
        game_off = int(g["game_id"].max()) + 1
        match_off = int(g["match_id"].max()) + 1
        block_off = int(g["block"].max()) + 1
        all_games.append(g)
        all_seats.append(s)
    return pd.concat(all_games, ignore_index=True), pd.concat(all_seats, ignore_index=True)


def make_turn_scores(
    games: pd.DataFrame, seats: pd.DataFrame, wobble: float = 6.0, seed: int = 0
) -> pd.DataFrame:
    """Per (game, turn, seat) score paths from 30 dirhams to each seat's final score.

    Each path is a straight line plus a Brownian-bridge wobble of size ``wobble`` that
    vanishes at both ends, so leads change now and then. Eliminated seats end at their
    visible squares. Error games get no rows.
    """
    rng = np.random.default_rng(seed)
    good = games.loc[games["end_reason"] != "error", ["game_id", "turns", "players"]]
    parts = []
    for k, group in good.groupby("players", sort=True):
        k = int(k)
        ids = group["game_id"].to_numpy()
        turns = group["turns"].to_numpy(dtype="int64")
        rows = seats.loc[seats["game_id"].isin(ids)].sort_values(["game_id", "seat"])
        end = rows["score"].to_numpy(dtype="float64", na_value=np.nan).reshape(-1, k)
        visible = rows["visible"].to_numpy(dtype="float64").reshape(-1, k)
        end = np.where(np.isnan(end), visible, end)
        order = np.argsort(ids)  # rows are sorted by game_id; line the games up with them
        ids, turns = ids[order], turns[order]
        t_max = int(turns.max())
        t = np.arange(t_max)
        frac = (t[None, :] + 1) / turns[:, None]  # (game, turn)
        steps = rng.normal(size=(len(ids), t_max, k)).cumsum(axis=1) / np.sqrt(turns)[:, None, None]
        last = steps[np.arange(len(ids)), turns - 1][:, None, :]
        bridge = steps - frac[:, :, None] * last
        path = (
            START_DIRHAMS + frac[:, :, None] * (end[:, None, :] - START_DIRHAMS) + wobble * bridge
        )
        path[np.arange(len(ids)), turns - 1] = end
        alive = t[None, :] < turns[:, None]
        g_idx, t_idx = np.nonzero(alive)
        parts.append(
            pd.DataFrame(
                {
                    "game_id": np.repeat(ids[g_idx], k),
                    "turn": np.repeat(t_idx, k),
                    "seat": np.tile(np.arange(k), len(g_idx)),
                    "score": np.round(path[g_idx, t_idx]).ravel(),
                }
            )
        )
    out = pd.concat(parts, ignore_index=True)
    return out.astype({"game_id": "int64", "turn": "int16", "seat": "int8", "score": "float64"})


def hand_tables(
    spec: Sequence[Mapping[str, Any]], ruleset: str = "standard"
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Small games/seats tables from hand-written results, ranked by RULES.md section 7.

    Each game is a mapping with ``seats``: a list, in seat order, of (strategy, score,
    dirhams) with score None for an eliminated seat; optional ``block`` (default: the
    game's own), ``ruleset``, ``turns``, ``error`` (error text; the game then ends in an
    error). Ranks go by (score, dirhams), competition style; eliminated seats rank last,
    later seats above earlier ones.
    """
    game_rows: list[dict[str, object]] = []
    seat_rows: list[dict[str, object]] = []
    for game_id, game in enumerate(spec):
        entries = list(game["seats"])
        k = len(entries)
        error = game.get("error")
        alive = [(s, e[1], e[2]) for s, e in enumerate(entries) if e[1] is not None]
        out = [s for s, e in enumerate(entries) if e[1] is None]
        rank = {}
        for s, sc, dh in alive:
            rank[s] = 1 + sum((sc2, dh2) > (sc, dh) for _, sc2, dh2 in alive)
        for i, s in enumerate(sorted(out, reverse=True)):
            rank[s] = len(alive) + 1 + i
        winners = sorted(s for s in rank if rank[s] == 1)
        top = max((sc for _, sc, _ in alive), default=None)
        n_top_score = sum(sc == top for _, sc, _ in alive)
        tie_broken = n_top_score > len(winners) >= 1
        game_rows.append(
            {
                "game_id": game_id,
                "match_id": game_id,
                "ruleset": game.get("ruleset", ruleset),
                "seed": game_id,
                "players": k,
                "turns": game.get("turns", 12 * k),
                "end_reason": "error" if error else "rugs_exhausted",
                "winners": [] if error else winners,
                "tie_broken": bool(tie_broken and not error),
                "error": error,
                "block": game.get("block", game_id),
            }
        )
        for s, (strategy, sc, dh) in enumerate(entries):
            seat_rows.append(
                {
                    "game_id": game_id,
                    "seat": s,
                    "strategy": strategy,
                    "colours": "rbyp"[s % 4],
                    "dirhams": dh,
                    "visible": (sc - dh) if sc is not None else 0,
                    "score": None if error else sc,
                    "rank": None if error else rank[s],
                    "win_share": 0.0 if error or s not in winners else 1.0 / len(winners),
                    "eliminated_turn": 10 if sc is None else None,
                    "paid": 0,
                    "received": 0,
                }
            )
    games = pd.DataFrame(game_rows)
    seats = pd.DataFrame(seat_rows)
    seats = seats.astype({"score": "Int16", "rank": "Int8", "eliminated_turn": "Int16"})
    return _typed(games, seats)


def null_block_totals(
    rng: np.random.Generator,
    n_blocks: int,
    players: int = 4,
    seat_effects: Sequence[float] | None = None,
    strength_sd: float = 0.3,
    shared_dice: float = 0.7,
) -> tuple[np.ndarray, np.ndarray]:
    """Fast block totals for calibration studies: (Y[b, s] wins of seat s, n_b games).

    Each block is a fresh line-up (strengths ~ N(0, strength_sd)) played in all its
    seat rotations; with probability ``shared_dice`` a game reuses the block's noise, so
    the same seat tends to win across the block (games of a block are correlated).
    """
    k = players
    gamma = np.zeros(k) if seat_effects is None else np.asarray(seat_effects, dtype="float64")
    theta = rng.normal(0.0, strength_sd, size=(n_blocks, k))
    seat = np.arange(k)
    rot = np.arange(k)
    who = (seat[None, :] - rot[:, None]) % k  # (rotation, seat) -> line-up member
    strength = theta[:, who]  # (block, rotation, seat)
    shared = rng.random((n_blocks, k, 1)) < shared_dice
    block_noise = rng.gumbel(size=(n_blocks, 1, k))
    noise = np.where(shared, block_noise, rng.gumbel(size=(n_blocks, k, k)))
    winner = np.argmax(strength + gamma + noise, axis=2)  # (block, rotation)
    totals = (winner[:, :, None] == seat[None, None, :]).sum(axis=1).astype("float64")
    return totals, np.full(n_blocks, float(k))
