"""A moves table's outcome columns, rebuilt by replaying its actions.

A run of REPLAY_FORMAT_VERSION (a study's ``move_columns = "replay"``) writes only the
moves columns a replay needs: who played, the draw, the rotations, the roll and the
placement. What the rules made of them (where Assam stopped, the payment, a bankruptcy,
every seat's dirhams and visible squares after the turn) is rebuilt here by the one
replay loop, `play.turns.replay_games`, the loop `marrakech verify` checks the record
with, so the rebuilt rows are those the game loop wrote in a run of version 1.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds

from marrakech_sim.errors import RunFolderError
from marrakech_sim.play import turns as t
from marrakech_sim.rules.options import Rules
from marrakech_sim.rules.state import initial_packed
from marrakech_sim.runfolder.manifest import Manifest
from marrakech_sim.runfolder.parts import moves_part
from marrakech_sim.runfolder.read import move_rows, open_dataset, read_manifest
from marrakech_sim.runfolder.schema import REPLAY_FORMAT_VERSION, moves_schema

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
        return moves.sort_by(_ORDER)
    games = open_dataset(run_dir, "games").to_table(columns=["game_id", "ruleset"], filter=where)
    return with_outcomes(moves, games, run_rulesets(manifest))


def with_outcomes(moves: pa.Table, games: pa.Table, rulesets: Mapping[str, Rules]) -> pa.Table:
    """`moves`, the rows of whole games with at least the replay columns, with every
    column of the moves table (`moves_schema`), sorted by game and turn. The outcome
    columns are those a replay of the actions gives.

    games: ``game_id`` and ``ruleset`` of those games (the games table's); rulesets: the
    rule sets by name. RunFolderError names a game whose actions do not replay (an action
    the rules refuse, or a turn missing), or whose rule set is unknown.
    """
    schema = moves_schema(visible_after=True)
    moves = moves.sort_by(_ORDER)
    game = moves.column("game_id").to_numpy()
    if not len(game):
        return schema.empty_table()
    ids = games.column("game_id").to_numpy()
    order = np.argsort(ids, kind="stable")
    ids = ids[order]
    names = np.asarray(games.column("ruleset").to_pylist(), object)[order]
    at = np.minimum(np.searchsorted(ids, game), len(ids) - 1)
    unknown = ids[at] != game if len(ids) else np.ones(len(game), bool)
    if unknown.any():
        raise RunFolderError(f"moves of game {game[unknown][0]}, which the games table has not")
    row_ruleset = names[at]
    tables = []
    for name in sorted(set(row_ruleset)):
        rules = rulesets.get(name)
        if rules is None:
            raise RunFolderError(
                f"game {game[row_ruleset == name][0]}: unknown rule set {name!r}; the run's "
                f"rule sets are {', '.join(sorted(rulesets))}"
            )
        taken = moves.take(pa.array(np.flatnonzero(row_ruleset == name)))
        tables.append(_replayed(taken, rules, schema))
    return pa.concat_tables(tables).sort_by(_ORDER)


def _replayed(moves: pa.Table, rules: Rules, schema: pa.Schema) -> pa.Table:
    """The games of one rule set (sorted rows) with their outcome columns replayed."""
    p = rules.players
    rows = move_rows(moves, p, t.move_columns(p))
    if rows is None:
        raise RunFolderError(f"a dirhams_after or visible_after list has not {p} entries")
    game = moves.column("game_id").to_numpy()
    first = np.flatnonzero(np.r_[True, game[1:] != game[:-1]])
    counts = np.diff(np.r_[first, len(game)])
    out = np.full_like(rows, t.NULL)
    status = t.replay_games(initial_packed(rules), first, counts, rows, out)
    unreplayed = np.flatnonzero(out[:, t.M_SEAT] == t.NULL)  # rows after a refused action
    illegal = np.flatnonzero(status & t.REPLAY_ILLEGAL)
    if len(illegal) or len(unreplayed):
        bad = game[first[illegal[0]]] if len(illegal) else game[unreplayed[0]]
        raise RunFolderError(
            f"game {bad}: its recorded actions do not replay (an action the rules refuse, "
            "or a turn missing); `marrakech verify` names the turn"
        )
    outcomes = list(range(t.FIRST_OUTCOME, t.LAST_OUTCOME + 1))
    rows[:, outcomes] = out[:, outcomes]  # the actions as recorded, the outcomes replayed
    rows[:, t.MOVE_COLUMNS :] = out[:, t.MOVE_COLUMNS :]
    per_seat = rows[:, t.MOVE_COLUMNS :].reshape(len(rows), 2, p)  # dirhams, then visible
    part = moves_part(
        game_id=game,
        head=np.ascontiguousarray(rows[:, : t.MOVE_COLUMNS].T).astype(np.int16),
        lists=per_seat.transpose(1, 0, 2).reshape(2, -1).astype(np.int16),
        turn=moves.column("turn").to_numpy(),
        players=p,
        schema=schema,
    )
    return part.to_arrow()
