"""Choices per turn: how many legal choices a player has in a turn, per rule set.

Definition (docs/report-tables.md, ``choices``): in a turn with a placement, the choices
are the legal rotations of Assam (3 in every rule set here: left, ahead, right) times the
legal placements of the rug in the position the player faced after the roll (docs/rules.md
§6: at most 12). The rotation comes before the roll (or, in "orient at end", after the
placement), so this counts the pairs of decisions the player makes, not plans over the
dice. A turn with no rotation to choose (the last turn of an "orient at end" game, which
ends with its placement) counts its placements alone; a turn that ends in bankruptcy has no
placement and is left out. The mean is over turns (total choices / total turns), per rule
set.

The counts come from replaying a sample of the study's mixed games (the self-play games
are player models of their own) through the rules API (`GameState.legal_actions` in the
orient and place phases). The sample takes, per rule set, one game of each of up to
`CHOICES_BLOCKS` blocks (every match keeps the same share of its blocks; the seatings taken
in turn from block to block): games of different blocks share no dice, so each game is its
own cluster and the interval is the ratio estimator's (`stats.estimators.ratio_from_sums`,
CR1) with a normal 95% interval.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from marrakech_sim.errors import MarrakechError
from marrakech_sim.record import Record, Roll, Rotation, records_from_run
from marrakech_sim.report.load import RUN_SHIFT, RunInfo, has_moves
from marrakech_sim.report.sections.samples import without_self_play
from marrakech_sim.rules import GameState
from marrakech_sim.stats import estimators
from marrakech_sim.stats.intervals import DEFAULT_LEVEL, add_mean_interval

CHOICES_BLOCKS = 200  # blocks per rule set whose first game is replayed (~0.5 s per 100 games)
COLUMNS = [
    "ruleset",
    "players",
    "n_games",
    "n_turns",
    "n_not_replayed",
    "rotations",
    "placements",
    "estimate",
    "se",
    "lo",
    "hi",
]


def turn_choices(record: Record) -> Iterator[tuple[int, int]]:
    """(legal rotations, legal placements) of each turn of ``record`` that has a placement,
    counted on the rules API as the record is replayed (MarrakechError if it does not); 0
    rotations where the turn has none to choose."""
    state = (
        GameState.from_notation(record.start, record.rules)
        if record.start
        else GameState.start(record.rules)
    )
    for actions in record.turns:
        rotations = placements = 0
        for action in actions:
            if state.phase == "orient":
                rotations = len(state.legal_actions())
            elif state.phase == "place":
                placements = len(state.legal_actions())
            # a record's rotation and roll are wrapped (record.Rotation, record.Roll)
            state = state.apply(action.value if isinstance(action, Rotation | Roll) else action)
        if placements:  # a bankrupt turn places nothing
            yield rotations, placements


def sample_games(
    con: duckdb.DuckDBPyConnection, blocks: int = CHOICES_BLOCKS, kept_only: bool = False
) -> pd.DataFrame:
    """run, game id in its run, ruleset, players: one game of each of up to ``blocks`` blocks
    per rule set of the mixed games, every match keeping the same share of its blocks (its
    first ones). The i-th block of a match gives its (i mod block size)-th game, so the
    sample goes through the seatings of the line-up instead of always taking the first.

    ``kept_only``: some run kept the moves of a share of its blocks only (``keep_moves``);
    the sample then takes the blocks whose moves were kept.
    """
    where = without_self_play(con)
    if kept_only:  # the games with moves: the kept only, a small share
        where = (f"{where} AND" if where else "WHERE") + (
            " g.game_id IN (SELECT game_id FROM moved_games)"
        )
    return con.execute(
        f"""WITH g AS (
                SELECT g.run, g.game_id, g.ruleset, g.players, g.match_id, g.block,
                       row_number() OVER (PARTITION BY g.block ORDER BY g.game_id) - 1 AS k,
                       count(*) OVER (PARTITION BY g.block) AS size
                FROM games g {where} {"AND" if where else "WHERE"} g.end_reason <> 'error'),
            b AS (SELECT DISTINCT ruleset, match_id, block, size FROM g),
            r AS (SELECT *, row_number() OVER (PARTITION BY match_id ORDER BY block) AS i,
                         count(*) OVER (PARTITION BY match_id) AS nb,
                         count(*) OVER (PARTITION BY ruleset) AS nr
                  FROM b),
            keep AS (SELECT block, (i - 1) % size AS k FROM r
                     WHERE i <= ceil(least(1.0, {int(blocks)} / nr) * nb))
            SELECT g.run, g.game_id - g.run * {RUN_SHIFT} AS game_id, g.ruleset, g.players
            FROM g JOIN keep USING (block, k)
            ORDER BY g.ruleset, g.run, game_id"""
    ).df()


def choices_table(
    con: duckdb.DuckDBPyConnection,
    runs: list[RunInfo],
    level: float = DEFAULT_LEVEL,
    moves_kept_share: bool = False,
) -> pd.DataFrame:
    """Per rule set: mean legal choices per turn with its interval, from the games of
    :func:`sample_games` replayed (empty without a moves table; ``moves_kept_share``: see
    :func:`sample_games`)."""
    if not has_moves(con):
        return pd.DataFrame(columns=COLUMNS)
    sample = sample_games(con, kept_only=moves_kept_share)
    # one read of each run for all its sampled games: a read scans the run's tables (about
    # 0.8 s for 800 games of the default study, 3.3 s read rule set by rule set)
    replayed: dict[tuple[int, int], np.ndarray | None] = {}
    for run, games in sample.groupby("run", sort=True):
        ids = sorted(int(g) for g in games["game_id"])
        replayed.update(
            zip([(int(run), g) for g in ids], _replayed(runs[int(run)].path, ids), strict=True)
        )
    rows = []
    for (ruleset, players), part in sample.groupby(["ruleset", "players"], sort=True):
        per_game: list[tuple[int, int, int, int]] = []  # choices, turns, rotations, places
        failed = 0
        for run, game in zip(part["run"], part["game_id"], strict=True):
            counts = replayed[int(run), int(game)]
            if counts is None:
                failed += 1  # a hand-made or damaged run: its moves do not replay
                continue
            # no rotation to choose (the last turn under 'orient at end'): placements alone
            choices = np.maximum(counts[:, 0], 1) * counts[:, 1]
            per_game.append(
                (int(choices.sum()), len(counts), int(counts[:, 0].sum()), int(counts[:, 1].sum()))
            )
        row: dict[str, object] = {"ruleset": ruleset, "players": int(players)}
        row["n_not_replayed"] = failed
        s, t, rot, plc = np.array(per_game, dtype="float64").reshape(-1, 4).T
        ratio = estimators.ratio_from_sums(
            s.sum(), t.sum(), (s * s).sum(), (s * t).sum(), (t * t).sum(), len(s)
        )
        row.update(n_games=len(s), n_turns=int(t.sum()))
        row["rotations"] = rot.sum() / t.sum() if t.sum() else np.nan
        row["placements"] = plc.sum() / t.sum() if t.sum() else np.nan
        row["estimate"] = float(ratio["estimate"])
        row["var"] = float(ratio["var"])
        rows.append(row)
    if not rows:
        return pd.DataFrame(columns=COLUMNS)
    table = add_mean_interval(pd.DataFrame(rows), level)
    return table[COLUMNS]


def _counts(record: Record) -> np.ndarray:
    return np.array(list(turn_choices(record)), dtype="int64").reshape(-1, 2)


def _replayed(
    run_dir: Path, ids: list[int], most_failures: int = 20
) -> Iterator[np.ndarray | None]:
    """Per game of ``ids``: its (rotations, placements) per turn, or None where its moves do
    not replay. Reading a record replays it, so one bad game ends a batch: the rest are then
    read one at a time, and after ``most_failures`` failures given up (None each)."""
    done = 0
    try:
        for record in records_from_run(run_dir, ids):
            yield _counts(record)
            done += 1
    except MarrakechError:
        pass
    failures = 0
    for game in ids[done:]:
        if failures >= most_failures:
            yield None
            continue
        try:
            yield _counts(next(records_from_run(run_dir, [game])))
        except MarrakechError:
            failures += 1
            yield None
