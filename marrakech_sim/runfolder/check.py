"""Checking a run folder before it is trusted: every part whole, the three tables agreeing.

`check_parts` reads only Parquet footers and two small columns of each games part
(`players`, `turns`), so it costs little even for millions of games. A chunk is whole when

* its part exists in `games` and `seats` (and in `moves` when the run records moves),
  and every one of them has a readable Parquet footer;
* the seats part has one row per seat of the games part (the sum of `players`), the moves
  part one row per turn (the sum of `turns`; only when moves are required, as the runner
  writes them), and all of them cover the same game ids;
* when the caller knows the plan, the games part holds exactly the chunk's planned games.

`resume_run` replays the chunks that are not whole; the report refuses a run with any.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections.abc import Mapping
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from marrakech_sim.errors import RunFolderError
from marrakech_sim.runfolder.digest import changed_chunks, chunk_digests, edited_definition
from marrakech_sim.runfolder.folder import chunk_of, is_part_name, is_temporary, part_name
from marrakech_sim.runfolder.manifest import Manifest
from marrakech_sim.runfolder.schema import TABLES

FINISHED = ("complete", "stopped")  # run.json statuses of a run that played to its end


@dataclasses.dataclass(frozen=True, slots=True)
class PartsCheck:
    """The chunks of a run folder that are whole, and what is wrong with the others."""

    whole: dict[int, int]  # chunk -> its games
    damaged: dict[int, str]  # chunk -> what is wrong, in words
    strays: tuple[str, ...] = ()  # files in a table's folder that are not parts (table/name)

    def refuse_strays(self, run_dir: str | Path) -> None:
        """RunFolderError naming the files that are no part of the run (never read as one)."""
        if self.strays:
            shown = ", ".join(repr(s) for s in self.strays[:3])
            more = f" and {len(self.strays) - 3} more" if len(self.strays) > 3 else ""
            raise RunFolderError(
                f"run {str(run_dir)!r} holds {shown}{more}, not part of the run (a part is "
                f"named like {part_name(0)}, one name per chunk): move it out of the run folder"
            )

    @property
    def games(self) -> int:
        """Games in the whole chunks."""
        return sum(self.whole.values())

    def describe(self, most: int = 3) -> str:
        """The damaged chunks in one line (the first `most` with their reason)."""
        items = sorted(self.damaged.items())
        text = "; ".join(f"chunk {c}: {why}" for c, why in items[:most])
        more = f"; and {len(items) - most} more" if len(items) > most else ""
        return f"{len(items)} damaged chunk(s): {text}{more}"


def records_moves(run_dir: str | Path, manifest: Manifest) -> bool:
    """Whether every chunk of the run must have a moves part.

    A run written by the runner says so in its manifest (`moves_columns`); a folder
    written by other code may keep moves for some chunks only (benchmarks do).
    """
    return manifest.moves_columns is not None


def every_move(manifest: Manifest) -> bool:
    """Whether the run keeps the moves of every game (its study's `keep_moves` is 1)."""
    return bool(manifest.config.get("keep_moves", 1) == 1)


def check_parts(
    run_dir: str | Path,
    *,
    moves_required: bool = True,
    every_turn: bool = True,
    planned: Mapping[int, tuple[int, int]] | None = None,
) -> PartsCheck:
    """Check every part of a run folder (see the module docstring).

    Args:
        moves_required: a chunk without a moves part is damaged (else moves are optional).
        every_turn: a moves part has a row per turn of its games; else (a study keeping the
            moves of a share of its blocks) at most that many (the part digests in the
            manifest check which).
        planned: chunk -> (first game id, games) from the plan, when the caller has it;
            a part of a chunk not in it is damaged too.
    """
    run_dir = Path(run_dir)
    found: dict[str, dict[int, Path]] = {}
    strays: list[str] = []
    for table in TABLES:
        found[table], odd = _part_files(run_dir / table)
        strays += [f"{table}/{name}" for name in odd]
    chunks = set(found["games"]) | set(found["seats"]) | set(found["moves"])
    spans: dict[int, tuple[int, int]] = {}
    damaged: dict[int, str] = {}
    for chunk in sorted(chunks):
        found_span = _check_chunk(chunk, found, moves_required, every_turn, planned)
        if isinstance(found_span, str):
            damaged[chunk] = found_span
        else:
            spans[chunk] = found_span
    # whole chunks must not share games (a part copied under a second name counts twice)
    ordered = sorted((span, c) for c, span in spans.items())
    for (prev, c0), (span, c1) in itertools.pairwise(ordered):
        if span[0] <= prev[1]:
            damaged[c1] = f"its game ids {span[0]}..{span[1]} overlap those of chunk {c0}"
            del spans[c1]
    whole = {c: last - first + 1 for c, (first, last) in sorted(spans.items())}
    return PartsCheck(whole, damaged, tuple(strays))


def check_complete(run_dir: str | Path, manifest: Manifest) -> PartsCheck:
    """RunFolderError unless the run folder is finished, whole and agrees with its manifest.

    The one check a reader runs before trusting a run's tables (the report does): no damaged
    part, and, for a run written by the runner, a finished status and exactly the chunks
    and games its manifest records.
    """
    run_dir = Path(run_dir)
    resume = f"; resume it with `marrakech run --resume {run_dir}`"
    status = manifest.status
    if status is not None and status not in FINISHED:
        played = "?" if manifest.games_played is None else manifest.games_played
        raise RunFolderError(
            f"run {str(run_dir)!r} is not finished (status {status!r}, "
            f"{played} of {manifest.games_planned} games){resume}"
        )
    edited = edited_definition(manifest)
    if edited is not None:
        raise RunFolderError(f"run {str(run_dir)!r}: {edited}")
    parts = check_parts(
        run_dir, moves_required=records_moves(run_dir, manifest), every_turn=every_move(manifest)
    )
    parts.refuse_strays(run_dir)
    changed = changed_chunks(
        manifest, chunk_digests(run_dir, parts.whole, manifest.digests), required=True
    )
    if changed:
        parts = dataclasses.replace(
            parts,
            whole={c: n for c, n in parts.whole.items() if c not in changed},
            damaged={**parts.damaged, **changed},
        )
    if parts.damaged:
        raise RunFolderError(f"run {str(run_dir)!r} has {parts.describe()}{resume}")
    if not parts.whole:
        raise RunFolderError(f"run {str(run_dir)!r} has no games (no games/part-*.parquet)")
    chunks = manifest.chunks_played
    if chunks is not None and sorted(parts.whole) != list(range(chunks)):
        missing = sorted(set(range(chunks)) - set(parts.whole))
        extra = sorted(set(parts.whole) - set(range(chunks)))
        raise RunFolderError(
            f"run {str(run_dir)!r}: run.json records chunks 0..{int(chunks) - 1}; "
            + (f"missing {_few(missing)}" if missing else f"parts of unplayed chunks {_few(extra)}")
            + resume
        )
    games = manifest.games_played
    if games is not None and games != parts.games:
        raise RunFolderError(
            f"run {str(run_dir)!r}: run.json records games_played = {games}, its parts hold "
            f"{parts.games} games"
        )
    return parts


def one_line(exc: BaseException, most: int = 200) -> str:
    """An exception's message on one line, cut to `most` characters (pyarrow's span lines)."""
    text = " ".join(str(exc).split())
    return text if len(text) <= most else text[: most - 3] + "..."


def _few(chunks: list[int]) -> str:
    shown = ", ".join(map(str, chunks[:5]))
    return f"chunk(s) {shown}" + (f" and {len(chunks) - 5} more" if len(chunks) > 5 else "")


def _part_files(folder: Path) -> tuple[dict[int, Path], list[str]]:
    """The parts of a table's folder by chunk, and the names of the files that are no
    part: not a part's name, or a second name of one chunk (part-3 beside part-000003)."""
    names = sorted(os.listdir(folder)) if folder.is_dir() else []
    by_chunk: dict[int, list[str]] = {}
    odd = []
    for name in names:
        if is_part_name(name):
            by_chunk.setdefault(chunk_of(name), []).append(name)
        elif not is_temporary(name):
            odd.append(name)
    out = {}
    for chunk, named in by_chunk.items():
        if len(named) == 1:
            out[chunk] = folder / named[0]
        else:
            odd += named
    return out, sorted(odd)


def _check_chunk(
    chunk: int,
    found: dict[str, dict[int, Path]],
    moves_required: bool,
    every_turn: bool,
    planned: Mapping[int, tuple[int, int]] | None,
) -> str | tuple[int, int]:
    """What is wrong with one chunk, or its first and last game id when it is whole."""
    if planned is not None and chunk not in planned:
        return "a part of a chunk the plan does not have"
    tables = [t for t in TABLES if t != "moves" or moves_required or chunk in found["moves"]]
    for table in tables:
        if chunk not in found[table]:
            return f"no {table}/{part_name(chunk)}"
    meta: dict[str, pq.FileMetaData] = {}
    for table in tables:
        try:
            meta[table] = pq.read_metadata(found[table][chunk])
        except (OSError, pa.ArrowException) as exc:
            return f"{table}/{part_name(chunk)} is not a readable Parquet file ({one_line(exc)})"
    try:
        games = pq.read_table(found["games"][chunk], columns=["game_id", "players", "turns"])
    except (OSError, pa.ArrowException, KeyError) as exc:
        return f"games/{part_name(chunk)} cannot be read ({one_line(exc)})"
    n = games.num_rows
    if n == 0:
        return f"games/{part_name(chunk)} holds no games"
    ids = games["game_id"]
    first, last = pc.min(ids).as_py(), pc.max(ids).as_py()
    if last - first + 1 != n or pc.count_distinct(ids).as_py() != n:
        return f"games/{part_name(chunk)}: its {n} game ids are not {first}..{last} once each"
    if planned is not None and (first, n) != planned[chunk]:
        p_first, p_n = planned[chunk]
        return (
            f"games/{part_name(chunk)} holds games {first}..{last}; the plan has "
            f"{p_first}..{p_first + p_n - 1}"
        )
    expected = {"seats": pc.sum(games["players"]).as_py(), "moves": pc.sum(games["turns"]).as_py()}
    for table in tables[1:]:
        rows = meta[table].num_rows
        # moves written by other code than the runner (moves not required) may keep some
        # turns only; the runner writes one row per turn
        full = table == "seats" or (moves_required and every_turn)
        if rows != expected[table] if full else moves_required and rows > expected[table]:
            unit = "seat" if table == "seats" else "turn"
            return (
                f"{table}/{part_name(chunk)} has {rows} rows; its games have "
                f"{expected[table]} {unit}s"
            )
        span = _stats_span(meta[table])
        # every game has its seats; a game that faulted before its first move has no moves
        if span is not None and not (
            span == (first, last) if table == "seats" else first <= span[0] <= span[1] <= last
        ):
            return (
                f"{table}/{part_name(chunk)} covers games {span[0]}..{span[1]}; the games "
                f"part {first}..{last}"
            )
    return first, last


def _stats_span(meta: pq.FileMetaData) -> tuple[int, int] | None:
    """(min, max) game_id from a footer's statistics, None when it has none."""
    names = [meta.schema.column(i).name for i in range(meta.num_columns)]
    if "game_id" not in names or meta.num_row_groups == 0:
        return None
    column = names.index("game_id")
    lows, highs = [], []
    for g in range(meta.num_row_groups):
        stats = meta.row_group(g).column(column).statistics
        if stats is None or not stats.has_min_max:
            return None
        lows.append(stats.min)
        highs.append(stats.max)
    return min(lows), max(highs)
