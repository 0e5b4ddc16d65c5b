"""The run folder: `run.json` and the `games`, `seats`, `moves` Parquet datasets.

schema    file names, the format version, the tables' schemas
parts     a chunk's tables as numpy columns (`Part`)
folder    writing: parts written atomically, the manifest, finished chunks
read      reading: the manifest, each table as a pyarrow dataset or table
check     checking: every part whole, the tables agreeing, the run finished
digest    integrity by content: each part's digest and the run's definition in run.json
lock      one writer per run folder (an advisory lock held for the run)
manifest  run.json as a typed, frozen value (`Manifest`)
outcomes  a replay-only moves table's outcome columns, rebuilt by replaying its actions
columns   compiled helpers: move rows to columns, Parquet's level encodings
"""

from marrakech_sim.runfolder.check import (
    FINISHED,
    PartsCheck,
    check_complete,
    check_parts,
    every_move,
    one_line,
    records_moves,
)
from marrakech_sim.runfolder.digest import (
    changed_chunks,
    chunk_digests,
    chunk_of_key,
    data_digest,
    edited_definition,
    forget_chunks,
    manifest_digest,
    part_key,
    write_digested_part,
    written_digests,
)
from marrakech_sim.runfolder.folder import (
    WRITERS,
    check_writer,
    chunks_done,
    parquet_file,
    part_name,
    remove_chunks,
    remove_temporaries,
    utc_now,
    warm_up_writer,
    write_manifest,
    write_part,
    write_part_file,
)
from marrakech_sim.runfolder.lock import LOCK_FILE, describe_os_error, holds_a_run, locked
from marrakech_sim.runfolder.manifest import Manifest
from marrakech_sim.runfolder.outcomes import read_moves, replay_only, run_rulesets, with_outcomes
from marrakech_sim.runfolder.parts import (
    Column,
    Part,
    concat_parts,
    games_part,
    moves_part,
    seats_part,
)
from marrakech_sim.runfolder.read import (
    int_column,
    iter_parts,
    move_rows,
    open_dataset,
    read_manifest,
    read_table,
)
from marrakech_sim.runfolder.schema import (
    END_ERROR_CODE,
    END_REASONS,
    FORMAT_VERSION,
    FORMAT_VERSIONS,
    GAMES_SCHEMA,
    LOG_FILE,
    MANIFEST,
    MOVE_ROW_NAMES,
    REPLAY_FORMAT_VERSION,
    REPLAY_MOVE_COLUMNS,
    SCHEMAS,
    SEATS_SCHEMA,
    TABLES,
    has_visible_after,
    moves_schema,
)

__all__ = [
    "END_ERROR_CODE",
    "END_REASONS",
    "FINISHED",
    "FORMAT_VERSION",
    "FORMAT_VERSIONS",
    "GAMES_SCHEMA",
    "LOCK_FILE",
    "LOG_FILE",
    "MANIFEST",
    "MOVE_ROW_NAMES",
    "REPLAY_FORMAT_VERSION",
    "REPLAY_MOVE_COLUMNS",
    "SCHEMAS",
    "SEATS_SCHEMA",
    "TABLES",
    "WRITERS",
    "Column",
    "Manifest",
    "Part",
    "PartsCheck",
    "changed_chunks",
    "check_complete",
    "check_parts",
    "check_writer",
    "chunk_digests",
    "chunk_of_key",
    "chunks_done",
    "concat_parts",
    "data_digest",
    "describe_os_error",
    "edited_definition",
    "every_move",
    "forget_chunks",
    "games_part",
    "has_visible_after",
    "holds_a_run",
    "int_column",
    "iter_parts",
    "locked",
    "manifest_digest",
    "move_rows",
    "moves_part",
    "moves_schema",
    "one_line",
    "open_dataset",
    "parquet_file",
    "part_key",
    "part_name",
    "read_manifest",
    "read_moves",
    "read_table",
    "records_moves",
    "remove_chunks",
    "remove_temporaries",
    "replay_only",
    "run_rulesets",
    "seats_part",
    "utc_now",
    "warm_up_writer",
    "with_outcomes",
    "write_digested_part",
    "write_manifest",
    "write_part",
    "write_part_file",
    "written_digests",
]
