"""Check a run folder: replay every game from its moves and rule set, compare every column.

The replay applies each recorded draw, rotation, roll and placement with the rules
kernel (so an illegal move is caught), writes the move rows the rules make of them, and
compares them cell by cell with the record; draws and rolls are also checked against
the game seed's chance streams. The seats and games columns are checked against the
replayed end position, and the games' ids, matches, blocks, seeds and seatings against
the run's plan. Parts are read one chunk at a time, so memory stays flat.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from numba import njit

from marrakech_sim import runfolder
from marrakech_sim.errors import MarrakechError
from marrakech_sim.play import turns as t
from marrakech_sim.play.rng import STREAM_DICE, STREAM_PILE, seed_of
from marrakech_sim.rules import core as k
from marrakech_sim.rules.options import COLOUR_LETTERS
from marrakech_sim.run.plan import Plan

MAX_EXAMPLES = 10


@dataclasses.dataclass
class VerifyReport:
    """What `verify_run` found."""

    games: int = 0
    moves: int = 0
    mismatches: int = 0  # recorded values that differ from the replay or the plan
    unkept: int = 0  # games whose moves the study does not keep (checked against the plan)
    problems: list[str] = dataclasses.field(default_factory=list)  # missing/corrupt parts
    examples: list[str] = dataclasses.field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.mismatches == 0 and not self.problems

    def summary(self) -> str:
        if not self.unkept:
            return f"verified {self.games} games, {self.moves} moves, {self.mismatches} mismatches"
        return (
            f"verified {self.games} games ({self.games - self.unkept} replayed from their "
            f"moves; {self.unkept} whose moves the study does not keep, against the plan "
            f"only), {self.moves} moves, {self.mismatches} mismatches"
        )

    def _mismatch(self, count: int, what: str) -> None:
        if count:
            self.mismatches += int(count)
            if len(self.examples) < MAX_EXAMPLES:
                self.examples.append(what)


@njit(cache=True)
def k_replay(init, seeds, first, counts, rec, out, result, seats):
    """Replay game g from rows rec[first[g] : first[g] + counts[g]] into `out` (with the
    one replay loop, `turns.replay_moves`).

    Chance cells (a draw's colour, a roll) in `out` are those of the game seed's streams.
    result[g] = (turns replayed, end code, tie_broken, status bits).
    """
    p = init[k.P_]
    width = rec.shape[1]
    streams = np.empty(1 + p, np.uint64)
    for g in range(seeds.shape[0]):
        s = init.copy()
        n = counts[g]
        buf = np.full((n + 1, width), t.NULL, np.int32)
        streams[0] = seed_of(seeds[g], STREAM_DICE)
        for i in range(p):
            streams[1 + i] = seed_of(seeds[g], STREAM_PILE + i)
        status = t.replay_moves(s, rec[first[g] : first[g] + n], buf, streams)
        over = s[k.PHASE_] == k.PHASE_OVER
        out[first[g] : first[g] + n] = buf[:n]
        result[g, 0] = s[k.TURN_] + 1 if over else s[k.TURN_]
        result[g, 1] = s[k.END_]
        result[g, 2] = t.k_summary(s, seats[g])
        result[g, 3] = status
    return 0


def _ranges(numbers: list[int], most: int = 8) -> str:
    """'0-3, 7, 9-12' for a sorted list, the first `most` runs, then how many more."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    words = [f"{a}-{b}" if b > a else f"{a}" for a, b in runs[:most]]
    if len(runs) > most:
        words.append(f"and {len(runs) - most} more runs")
    return "chunks " + ", ".join(words) if words else "none"


def verify_run(run_dir: str | Path) -> VerifyReport:
    """Replay and check every game of a run folder.

    Missing, extra or unreadable parts are `problems`; values that disagree with the
    replay or the plan are `mismatches`. Raises RunFolderError when there is no manifest.
    """
    from marrakech_sim.run.chunk import Prepared
    from marrakech_sim.run.runner import study_from_manifest

    run_dir = Path(run_dir)
    manifest = runfolder.read_manifest(run_dir)
    report = VerifyReport()
    try:
        prep = Prepared(study_from_manifest(manifest))
    except MarrakechError as exc:
        report.problems.append(f"the manifest's config does not load: {exc}")
        return report
    plan = prep.plan
    played = manifest.chunks_played
    expected = set(range(plan.chunks if played is None else played))
    if manifest.status == "complete":
        expected = set(range(plan.chunks))
    found = {table: dict(runfolder.iter_parts(run_dir, table)) for table in runfolder.TABLES}
    every = set().union(*(set(v) for v in found.values()))
    if manifest.status not in ("complete", "stopped"):
        # a run still playing (or stopped early) has its chunks on disk verified; the
        # manifest counts chunks only when a session ends
        expected = every & set(range(plan.chunks))
        lost = sorted(set(range(plan.chunks)) - expected)
        report.problems.append(
            f"the run is {manifest.status!r}, not complete: {len(lost)} of "
            f"{plan.chunks} chunks missing ({_ranges(lost)})"
        )
    for chunk in sorted(every - expected):
        report.problems.append(f"part {runfolder.part_name(chunk)} is not part of the run")
    # a file no chunk is read from (a second name of a part, a stray) is named, as the
    # report and resume name it: readers refuse the folder while it is there
    for stray in runfolder.check_parts(run_dir, moves_required=False).strays:
        report.problems.append(f"{stray} is not part of the run (not read as a chunk)")
    for chunk in sorted(expected):
        absent = [table for table in runfolder.TABLES if chunk not in found[table]]
        if absent:
            report.problems.append(
                f"part {runfolder.part_name(chunk)} missing in {', '.join(absent)}"
            )
            continue
        try:
            tables = [pq.read_table(found[table][chunk]) for table in runfolder.TABLES]
        except (OSError, pa.ArrowException) as exc:
            report.problems.append(f"part {runfolder.part_name(chunk)} cannot be read: {exc}")
            continue
        schemas = (runfolder.GAMES_SCHEMA, runfolder.SEATS_SCHEMA, prep.moves_schema)
        wrong = [
            name
            for name, table, schema in zip(runfolder.TABLES, tables, schemas, strict=True)
            if not table.schema.equals(schema)
        ]
        if wrong:
            report.problems.append(
                f"part {runfolder.part_name(chunk)} of {', '.join(wrong)} does not have the "
                "LOG_FORMAT.md schema"
            )
            continue
        _verify_chunk(prep, plan, chunk, tables[0], tables[1], tables[2], report)
    return report


def _verify_chunk(
    prep: Any,
    plan: Plan,
    chunk: int,
    games: pa.Table,
    seats: pa.Table,
    moves: pa.Table,
    report: VerifyReport,
) -> None:
    name = runfolder.part_name(chunk)
    games = games.sort_by("game_id")
    seats = seats.sort_by([("game_id", "ascending"), ("seat", "ascending")])
    moves = moves.sort_by([("game_id", "ascending"), ("turn", "ascending")])
    cg = plan.chunk_games(chunk)
    gid = games.column("game_id").to_numpy()
    report.games += len(gid)
    report.moves += moves.num_rows
    if len(gid) != len(cg) or not np.array_equal(gid, cg.game_id):
        report._mismatch(
            max(1, abs(len(gid) - len(cg))),
            f"{name}: games {gid[:5].tolist()}... are not the planned games "
            f"{cg.game_id[0]}..{cg.game_id[-1]}",
        )
        return
    for column, planned in (
        ("match_id", cg.match_id),
        ("block", cg.block),
        ("seed", cg.seed),
    ):
        _compare(report, name, "games", column, gid, games.column(column).to_numpy(), planned)
    ruleset = games.column("ruleset").to_numpy(zero_copy_only=False)
    planned_rs = np.array([prep.rulesets[i].name for i in prep.match_ruleset[cg.match_id]], object)
    _compare(report, name, "games", "ruleset", gid, ruleset, planned_rs)
    planned_players = np.array(
        [prep.rulesets[i].rules.players for i in prep.match_ruleset[cg.match_id]]
    )
    players = games.column("players").to_numpy().astype(np.int64)
    _compare(report, name, "games", "players", gid, players, planned_players)
    end_reason = games.column("end_reason").to_numpy(zero_copy_only=False)
    is_error = end_reason == "error"
    has_error = games.column("error").is_valid().to_numpy(zero_copy_only=False)
    _compare(
        report, name, "games", "error (null unless end_reason is 'error')", gid, has_error, is_error
    )

    # moves: per game, rows 0..turns-1 in order
    mg = moves.column("game_id").to_numpy()
    first = np.searchsorted(mg, gid, side="left")
    counts = np.searchsorted(mg, gid, side="right") - first
    if len(mg) and not np.isin(mg, gid).all():
        report._mismatch(1, f"{name}: moves of games that are not in games")
    turn = moves.column("turn").to_numpy().astype(np.int64)
    expected_turn = np.arange(len(mg)) - np.repeat(first, counts)
    _compare(report, name, "moves", "turn", mg, turn, expected_turn)
    # the study's keep_moves: the other games have no moves, and only the kept are replayed
    kept = cg.moves_kept
    turns = games.column("turns").to_numpy()
    _compare(report, name, "games", "turns", gid[kept], turns[kept], counts[kept])
    _compare(
        report,
        name,
        "moves",
        "rows of a game whose moves are not kept",
        gid[~kept],
        counts[~kept],
        np.zeros(int((~kept).sum()), counts.dtype),
    )
    report.unkept += int((~kept).sum())

    sg = seats.column("game_id").to_numpy()
    for ri, r in enumerate(prep.rulesets):
        in_rs = (prep.match_ruleset[cg.match_id] == ri) & kept
        if not in_rs.any():
            continue
        p = r.rules.players
        rows = np.flatnonzero(np.isin(mg, gid[in_rs]))
        rec = runfolder.move_rows(moves.take(pa.array(rows)), p, r.columns)
        if rec is None:
            report._mismatch(1, f"{name}: a dirhams_after/visible_after list has not {p} entries")
            continue
        ng = int(in_rs.sum())
        sub_first = np.concatenate([[0], np.cumsum(counts[in_rs])[:-1]]).astype(np.int64)
        out = np.full_like(rec, t.NULL)
        result = np.zeros((ng, 4), np.int64)
        summary = np.zeros((ng, p, t.SEAT_COLUMNS), np.int32)
        k_replay(
            r.init,
            cg.seed[in_rs],
            sub_first,
            counts[in_rs].astype(np.int64),
            rec,
            out,
            result,
            summary,
        )
        rgid = gid[in_rs]
        row_game = np.repeat(rgid, counts[in_rs])
        row_turn = np.concatenate([np.arange(c) for c in counts[in_rs]]) if ng else np.zeros(0)
        compared = min(rec.shape[1], out.shape[1])
        names = _move_column_names(p, rec.shape[1])
        diff = rec[:, :compared] != out[:, :compared]
        for c in np.flatnonzero(diff.any(axis=0)):
            bad = np.flatnonzero(diff[:, c])
            i = bad[0]
            report._mismatch(
                len(bad),
                f"{name}: moves.{names[c]} of game {row_game[i]} turn {row_turn[i]}: recorded "
                f"{_show(rec[i, c])}, the replay gives {_show(out[i, c])}",
            )
        err = is_error[in_rs]
        status = result[:, 3]
        illegal = (status & t.REPLAY_ILLEGAL) != 0
        report._mismatch(
            int(illegal.sum()),
            f"{name}: an illegal recorded action in game {rgid[illegal][:1].tolist()}",
        )
        unfinished = ((status & t.REPLAY_NOT_OVER) != 0) & ~err & ~illegal
        report._mismatch(
            int(unfinished.sum()),
            f"{name}: game(s) {rgid[unfinished][:3].tolist()} do not reach the end",
        )
        ok = ~err
        end = np.array(runfolder.END_REASONS, object)[result[:, 1]]
        _compare(report, name, "games", "end_reason", rgid[ok], end_reason[in_rs][ok], end[ok])
        tie = games.column("tie_broken").to_numpy(zero_copy_only=False)[in_rs]
        _compare(report, name, "games", "tie_broken", rgid[ok], tie[ok], result[ok, 2] == 1)
        winners = games.column("winners").to_pylist()
        recorded_w = [tuple(w) for w, keep in zip(winners, in_rs, strict=True) if keep]
        replay_w = [tuple(np.flatnonzero(summary[g, :, t.S_WINNER]).tolist()) for g in range(ng)]
        bad_w = [i for i in range(ng) if ok[i] and recorded_w[i] != replay_w[i]]
        if bad_w:
            i = bad_w[0]
            report._mismatch(
                len(bad_w),
                f"{name}: games.winners of game {rgid[i]}: recorded "
                f"{list(recorded_w[i])}, the replay gives {list(replay_w[i])}",
            )
        _verify_seats(report, name, prep, cg, seats, sg, rgid, in_rs, summary, ok, r)


def _verify_seats(
    report: VerifyReport,
    name: str,
    prep: Any,
    cg: Any,
    seats: pa.Table,
    sg: np.ndarray,
    rgid: np.ndarray,
    in_rs: np.ndarray,
    summary: np.ndarray,
    ok: np.ndarray,
    r: Any,
) -> None:
    p = r.rules.players
    pick = np.isin(sg, rgid)
    sub = seats.filter(pa.array(pick))
    if sub.num_rows != len(rgid) * p:
        report._mismatch(
            1, f"{name}: seats has {sub.num_rows} rows for {len(rgid)} games of {p} seats"
        )
        return
    game = np.repeat(rgid, p)
    flat = summary.reshape(-1, t.SEAT_COLUMNS)
    okr = np.repeat(ok, p)
    seat = sub.column("seat").to_numpy()
    _compare(report, name, "seats", "seat", game, seat, np.tile(np.arange(p), len(rgid)))
    checks = [
        ("dirhams", t.S_DIRHAMS, None),
        ("visible", t.S_VISIBLE, None),
        ("score", t.S_SCORE, -1),
        ("eliminated_turn", t.S_ELIMINATED_TURN, -1),
        ("paid", t.S_PAID, None),
        ("received", t.S_RECEIVED, None),
    ]
    for column, index, null in checks:
        recorded = runfolder.int_column(sub.column(column))
        if null is not None:
            recorded = np.where(recorded == t.NULL, null, recorded)
        _compare(report, name, "seats", column, game, recorded, flat[:, index])
    rank = sub.column("rank").to_numpy()
    _compare(report, name, "seats", "rank", game[okr], rank[okr], flat[okr, t.S_RANK])
    winners = summary[:, :, t.S_WINNER]
    share = np.where(winners > 0, 1.0 / np.maximum(winners.sum(axis=1, keepdims=True), 1), 0.0)
    recorded_share = sub.column("win_share").to_numpy()
    _compare(
        report,
        name,
        "seats",
        "win_share",
        game[okr],
        recorded_share[okr],
        share.ravel().astype(np.float32)[okr],
    )
    seating = prep.plan.seating_rows[cg.seating[in_rs], :p].ravel()
    planned = np.array(prep.names, object)[seating]
    _compare(
        report,
        name,
        "seats",
        "strategy",
        game,
        sub.column("strategy").to_numpy(zero_copy_only=False),
        planned,
    )
    letters = [COLOUR_LETTERS[s : r.rules.colours : p] for s in range(p)]
    _compare(
        report,
        name,
        "seats",
        "colours",
        game,
        sub.column("colours").to_numpy(zero_copy_only=False),
        np.array(letters * len(rgid), object),
    )


def _move_column_names(players: int, width: int) -> list[str]:
    names = list(runfolder.MOVE_ROW_NAMES)
    names += [f"dirhams_after[{i}]" for i in range(players)]
    names += [f"visible_after[{i}]" for i in range(players)]
    return names[:width]


def _show(value: Any) -> str:
    return "null" if value == t.NULL else str(value)


def _compare(
    report: VerifyReport,
    part: str,
    table: str,
    column: str,
    game: np.ndarray,
    recorded: np.ndarray,
    expected: np.ndarray,
) -> None:
    recorded = np.asarray(recorded)
    expected = np.asarray(expected)
    if recorded.shape != expected.shape:
        report._mismatch(
            1, f"{part}: {table}.{column} has {len(recorded)} values, expected {len(expected)}"
        )
        return
    bad = np.flatnonzero(recorded != expected)
    if len(bad):
        i = bad[0]
        report._mismatch(
            len(bad),
            f"{part}: {table}.{column} of game {game[i]}: recorded {_plain(recorded[i])!r}, "
            f"expected {_plain(expected[i])!r}",
        )


def _plain(value: Any) -> Any:
    """A NumPy scalar as its Python value (9, not np.int8(9), in a message)."""
    return value.item() if isinstance(value, np.generic) else value
