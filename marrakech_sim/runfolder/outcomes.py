"""A moves table's outcome columns, rebuilt by replaying its actions.

A run of REPLAY_FORMAT_VERSION (a study's ``move_columns = "replay"``) writes only the
moves columns a replay needs: who played, the draw, the rotations, the roll and the
placement. What the rules made of them (where Assam stopped, the payment, a bankruptcy,
every seat's dirhams and visible squares after the turn) is rebuilt here by the one
replay loop, `play.turns.replay_moves` (through `replay_outcomes`), which `marrakech
verify` checks records with, so the rebuilt rows are those the game loop wrote in a run
of version 1.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds

from marrakech_sim.errors import RunFolderError
from marrakech_sim.play import turns as t
from marrakech_sim.rules.options import FACINGS, Rules
from marrakech_sim.rules.state import initial_packed
from marrakech_sim.runfolder.manifest import Manifest
from marrakech_sim.runfolder.parts import Column, Part
from marrakech_sim.runfolder.read import is_sorted, move_rows, open_dataset, read_manifest
from marrakech_sim.runfolder.schema import INT_MOVE_COLUMNS, REPLAY_FORMAT_VERSION, moves_schema

_ORDER = [("game_id", "ascending"), ("turn", "ascending")]


def replay_only(manifest: Manifest) -> bool:
    """Whether the run's moves table holds only the columns a replay needs."""
    return manifest.format_version == REPLAY_FORMAT_VERSION


def run_rulesets(manifest: Manifest) -> dict[str, Rules]:
    """The run's rule sets by name, from its resolved config."""
    found = manifest.config.get("rulesets", {})
    return {name: Rules.from_dict(options) for name, options in found.items()}


def read_moves(run_dir: str | Path, game_ids: Iterable[int] | None = None) -> pa.Table:
    """The moves of a run's games (all, or those of `game_ids`) with every column of the
    moves table, sorted by game and turn: as stored, or, in a run that stores only the
    replay columns, with the outcome columns replayed (`with_outcomes`)."""
    manifest = read_manifest(run_dir)
    where = ds.field("game_id").isin(list(game_ids)) if game_ids is not None else None
    moves = open_dataset(run_dir, "moves").to_table(filter=where)
    if not replay_only(manifest):
        return _in_order(moves)
    games = open_dataset(run_dir, "games").to_table(columns=["game_id", "ruleset"], filter=where)
    return with_outcomes(moves, games, run_rulesets(manifest))


def _in_order(moves: pa.Table) -> pa.Table:
    """The rows by game and turn (parts are written in that order: seldom sorted here)."""
    return moves if is_sorted(moves, ["game_id", "turn"]) else moves.sort_by(_ORDER)


def with_outcomes(moves: pa.Table, games: pa.Table, rulesets: Mapping[str, Rules]) -> pa.Table:
    """`moves`, the rows of whole games with at least the replay columns, with every
    column of the moves table (`moves_schema`), sorted by game and turn. The outcome
    columns are those a replay of the actions gives; the others are `moves`' own.

    games: ``game_id`` and ``ruleset`` of those games (the games table's); rulesets: the
    rule sets by name. RunFolderError names a game whose actions do not replay (an action
    the rules refuse, or a turn missing), or whose rule set is unknown.
    """
    schema = moves_schema(visible_after=True)
    moves = _in_order(moves)
    game = moves.column("game_id").to_numpy()
    if not len(game):
        return schema.empty_table()
    ids = games.column("game_id").to_numpy()
    order = np.argsort(ids, kind="stable")
    ids = ids[order]
    names, game_code = np.unique(
        np.asarray(games.column("ruleset").to_pylist(), object)[order], return_inverse=True
    )
    at = np.minimum(np.searchsorted(ids, game), len(ids) - 1)
    unknown = ids[at] != game if len(ids) else np.ones(len(game), bool)
    if unknown.any():
        raise RunFolderError(f"moves of game {game[unknown][0]}, which the games table has not")
    row_code = game_code[at]
    for code in np.unique(row_code):
        if names[code] not in rulesets:
            raise RunFolderError(
                f"game {game[row_code == code][0]}: unknown rule set {names[code]!r}; the "
                f"run's rule sets are {', '.join(sorted(rulesets)) or 'none'}"
            )
    seats = np.array([rulesets[n].players if n in rulesets else 0 for n in names], np.int64)
    offsets = np.zeros(len(game) + 1, np.int64)  # of each row's per-seat items
    np.cumsum(seats[row_code], out=offsets[1:])
    actions = move_rows(moves, 0, t.MOVE_COLUMNS)  # (no list column read)
    assert actions is not None
    starts = [
        initial_packed(rulesets[n]) if n in rulesets else np.zeros(0, np.int32) for n in names
    ]
    sizes = np.array([len(x) for x in starts], np.int64)
    inits = np.zeros((len(starts), sizes.max()), np.int32)
    for i, x in enumerate(starts):
        inits[i, : len(x)] = x
    first = np.flatnonzero(np.r_[True, game[1:] != game[:-1]])
    counts = np.diff(np.r_[first, len(game)])
    outcomes = np.empty((len(game), t.LAST_OUTCOME + 1 - t.FIRST_OUTCOME), np.int32)
    per_seat = np.empty((2, offsets[-1]), np.int16)  # dirhams, then visible squares
    status = t.replay_outcomes(
        inits,
        sizes,
        row_code[first],
        first,
        counts,
        actions,
        offsets,
        outcomes,
        per_seat,
        t.move_columns(int(seats.max())),
    )
    bad = np.flatnonzero(status & (t.REPLAY_ILLEGAL | t.REPLAY_UNFINISHED))
    if len(bad):
        raise RunFolderError(
            f"game {game[first[bad[0]]]}: its recorded actions do not replay (an action the "
            "rules refuse, or a turn missing); `marrakech verify` names the turn"
        )
    column = {name: i - t.FIRST_OUTCOME for name, i in INT_MOVE_COLUMNS}
    built = {
        **{name: Column(outcomes[:, column[name]]) for name in ("assam_x", "assam_y", "payment")},
        "paid_to": Column(outcomes[:, column["paid_to"]], outcomes[:, column["paid_to"]] != t.NULL),
        "facing": Column(outcomes[:, t.M_FACING - t.FIRST_OUTCOME], labels=tuple(FACINGS)),
        "bankrupt": Column(outcomes[:, t.M_BANKRUPT - t.FIRST_OUTCOME] == 1),
        "dirhams_after": Column(per_seat[0], offsets=offsets),
        "visible_after": Column(per_seat[1], offsets=offsets),
    }
    added = Part(pa.schema([schema.field(n) for n in built]), tuple(built.values())).to_arrow()
    return pa.table(
        [added.column(f.name) if f.name in built else moves.column(f.name) for f in schema],
        schema=schema,
    )
