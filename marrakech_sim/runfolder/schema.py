"""The run folder's contract: file names, the format version, the three tables' schemas."""

from __future__ import annotations

import pyarrow as pa

from marrakech_sim.play import turns as t
from marrakech_sim.rules.state import EndReason

FORMAT_VERSION = 1

#: the format of a run whose moves table holds only REPLAY_MOVE_COLUMNS (a study's
#: `move_columns = "replay"`): version 1 without the outcome columns
REPLAY_FORMAT_VERSION = 2

#: the versions this program reads
FORMAT_VERSIONS = (FORMAT_VERSION, REPLAY_FORMAT_VERSION)


MANIFEST = "run.json"


LOG_FILE = "run.log"


TABLES = ("games", "seats", "moves")


END_REASONS = tuple(reason.label for reason in EndReason)  # by end code


END_ERROR_CODE = int(EndReason.ERROR)


COMPRESSION = "zstd"


COMPRESSION_LEVEL = 1  # pyarrow's default; higher levels cost far more than they save


def _field(name: str, kind: pa.DataType, nullable: bool = False) -> pa.Field:
    return pa.field(name, kind, nullable=nullable)


GAMES_SCHEMA = pa.schema(
    [
        _field("game_id", pa.int64()),
        _field("match_id", pa.int64()),
        _field("ruleset", pa.string()),
        _field("seed", pa.uint64()),
        _field("players", pa.int8()),
        _field("turns", pa.int16()),
        _field("end_reason", pa.string()),
        _field("winners", pa.list_(pa.int8())),
        _field("tie_broken", pa.bool_()),
        _field("error", pa.string(), nullable=True),
        # added column: games of a block share their game seed and differ only in seating
        _field("block", pa.int64()),
    ]
)


SEATS_SCHEMA = pa.schema(
    [
        _field("game_id", pa.int64()),
        _field("seat", pa.int8()),
        _field("strategy", pa.string()),
        _field("colours", pa.string()),
        _field("dirhams", pa.int16()),
        _field("visible", pa.int16()),
        _field("score", pa.int16(), nullable=True),
        _field("rank", pa.int8()),
        _field("win_share", pa.float32()),
        _field("eliminated_turn", pa.int16(), nullable=True),
        _field("paid", pa.int16()),
        _field("received", pa.int16()),
    ]
)


_MOVE_FIELDS = [
    _field("game_id", pa.int64()),
    _field("turn", pa.int16()),
    _field("seat", pa.int8()),
    _field("colour", pa.string()),
    _field("rotation", pa.int8(), nullable=True),
    _field("roll", pa.int8()),
    _field("assam_x", pa.int8()),
    _field("assam_y", pa.int8()),
    _field("facing", pa.string()),
    _field("payment", pa.int16()),
    _field("paid_to", pa.int8(), nullable=True),
    _field("bankrupt", pa.bool_()),
    _field("x1", pa.int8(), nullable=True),
    _field("y1", pa.int8(), nullable=True),
    _field("x2", pa.int8(), nullable=True),
    _field("y2", pa.int8(), nullable=True),
    _field("end_rotation", pa.int8(), nullable=True),
    _field("dirhams_after", pa.list_(pa.int16())),
]


# each integer move column of the compiled rows, in row order, with its turns.M_* index
# (its Arrow type is the moves schema's)
INT_MOVE_COLUMNS = (
    ("seat", t.M_SEAT),
    ("rotation", t.M_ROTATION),
    ("roll", t.M_ROLL),
    ("assam_x", t.M_ASSAM_X),
    ("assam_y", t.M_ASSAM_Y),
    ("payment", t.M_PAYMENT),
    ("paid_to", t.M_PAID_TO),
    ("x1", t.M_X1),
    ("y1", t.M_Y1),
    ("x2", t.M_X2),
    ("y2", t.M_Y2),
    ("end_rotation", t.M_END_ROTATION),
)


#: the moves table's column for each turns.M_* index of a move row, in index order
MOVE_ROW_NAMES = tuple(
    name
    for _, name in sorted(
        [(index, name) for name, index in INT_MOVE_COLUMNS]
        + [(t.M_COLOUR, "colour"), (t.M_FACING, "facing"), (t.M_BANKRUPT, "bankrupt")]
    )
)


#: the moves columns a replay needs: who played, the draw, the rotations, the roll and
#: the placement (REPLAY_FORMAT_VERSION's moves table)
REPLAY_MOVE_COLUMNS = (
    "game_id",
    "turn",
    "seat",
    "colour",
    "rotation",
    "roll",
    "x1",
    "y1",
    "x2",
    "y2",
    "end_rotation",
)


def moves_schema(visible_after: bool, replay_only: bool = False) -> pa.Schema:
    """The moves schema; `visible_after` (an added column) when the rows carry it, and
    REPLAY_MOVE_COLUMNS alone when `replay_only`."""
    fields = list(_MOVE_FIELDS)
    if replay_only:
        fields = [f for f in fields if f.name in REPLAY_MOVE_COLUMNS]
    elif visible_after:
        fields.append(_field("visible_after", pa.list_(pa.int16())))
    return pa.schema(fields)


def has_visible_after(columns: int, players: int) -> bool:
    """Whether compiled move rows of `columns` columns carry visible_after per seat."""
    return columns >= t.MOVE_COLUMNS + 2 * players


SCHEMAS = {"games": GAMES_SCHEMA, "seats": SEATS_SCHEMA}
