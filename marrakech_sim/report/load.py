"""Open run folders (LOG_FORMAT.md) as DuckDB views, column-wise, without loading them.

Several runs are read as one: every run gets an index, and ``game_id``, ``match_id`` and
``block`` are made unique across runs by putting the run index above bit 40 (game ids
are numbered 0.. within a run, so they never reach 2^40). Blocks of different runs are
therefore never paired: different runs do not share dice. A rule set name used by two
runs with different options is renamed ``name@run_id`` so the two are not pooled. The
first run keeps its ids as stored (its offset is 0), so a filter or join on ``game_id``
reaches its Parquet scan and skips row groups.

Views on the connection (nothing is loaded; every query reads the columns it needs):

* ``games``: the games of every run plus ``run`` (index) and the made-unique ids.
* ``seats``: the seats table plus ``run``; ``game_id`` made unique.
* ``seats_<run>``: one run's seats as stored (its own game ids), for per-run scans.
* ``moves``: ``run``, ``game_id`` (made unique), ``turn``, ``dirhams_after``,
  ``visible_after`` (only when every run has a moves table). A run that stores only the
  replay columns (``move_columns = "replay"``) is in it through the table
  ``replayed_moves``: the games `replay_sample` replayed, and no others.
* ``moved_games``: ``game_id`` (made unique) of each game that has rows in a moves table.
* ``bseats`` (a view): seats of the games that count for balance statistics (not ended by an
  error) joined with their game's ``block``, ``ruleset``, ``players``, ``match_id``,
  ``tie_broken`` and number of winners (``n_winners``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from marrakech_sim import runfolder
from marrakech_sim.errors import ConfigError, RunFolderError
from marrakech_sim.rules import Rules
from marrakech_sim.runfolder import TABLES, Manifest, read_manifest

RUN_SHIFT = 1 << 40  # game ids of a run stay below this
_RULE_KEYS = frozenset(f.name for f in dataclasses.fields(Rules))


@dataclass(frozen=True, slots=True)
class RunInfo:
    """One run folder: its manifest and where its parts are."""

    index: int
    path: Path
    manifest: Manifest
    parts: dict[str, list[Path]]
    rulesets: dict[str, dict[str, Any]]
    ruleset_labels: dict[str, str] = field(default_factory=dict)
    label: str = ""  # the run's name in the report when two runs share a run id

    @property
    def run_id(self) -> str:
        """The run's name in the report: the manifest's run id (the folder name when it has
        none), or `label` where two different runs have the same one."""
        return self.label or self.manifest.run_id

    @property
    def identity(self) -> tuple[str, str, str]:
        """What makes two folders the same run: its id, when it was made, and its seed (a
        copy of a run folder is the same run; two runs of one name are not)."""
        m = self.manifest
        return (m.run_id, m.created, str(m.seed))


def _manifest(path: Path) -> Manifest:
    """The run's manifest, and RunFolderError unless its parts are whole and complete."""
    if not (path / "run.json").is_file():
        raise RunFolderError(f"{str(path)!r} is not a run folder: it has no run.json")
    manifest = read_manifest(path)
    runfolder.check_complete(path, manifest)
    return manifest


def _strategies(manifest: Manifest) -> dict[str, Any]:
    """Strategy name -> its definition (ref and parameters) as the manifest records it."""
    found = manifest.config.get("strategies", {})
    if isinstance(found, list):  # a list of {"name": ...}
        found = {str(s.get("name")): s for s in found if isinstance(s, dict)}
    if not isinstance(found, dict):
        return {}
    return {
        str(name): {k: v for k, v in dict(d).items() if k != "name"}
        for name, d in found.items()
        if isinstance(d, dict)
    }


def _check_distinct(runs: list[RunInfo]) -> None:
    """RunFolderError for a run given twice or a strategy name that means two strategies."""
    seen: dict[object, RunInfo] = {}
    for run in runs:
        for key in (run.path.resolve(), run.identity):
            if key in seen:
                raise RunFolderError(
                    f"{str(run.path)!r} and {str(seen[key].path)!r} are the same run "
                    f"({run.manifest.run_id!r}): each game would count twice; give each run once"
                )
            seen[key] = run
    defined: dict[str, tuple[Any, RunInfo]] = {}
    for run in runs:
        for name, definition in _strategies(run.manifest).items():
            if not definition.get("ref"):
                continue  # a manifest that does not say what the strategy is
            if name in defined and defined[name][0] != definition:
                other, where = defined[name]
                raise RunFolderError(
                    f"strategy {name!r} means two strategies: {json.dumps(other, sort_keys=True)} "
                    f"in {where.run_id!r} and {json.dumps(definition, sort_keys=True)} in "
                    f"{run.run_id!r}; report them apart, or give one another name in its study"
                )
            defined.setdefault(name, (definition, run))


def _rulesets(manifest: Manifest) -> dict[str, dict[str, Any]]:
    """The manifest's resolved rule sets: name -> options (run.json keeps them in its config)."""
    found = manifest.config.get("rulesets", manifest.extra.get("rulesets", {}))
    if isinstance(found, list):  # a list of {"name": ..., options}
        found = {str(r.get("name")): r for r in found if isinstance(r, dict)}
    if not isinstance(found, dict):
        return {}
    return {str(k): dict(v) if isinstance(v, dict) else {} for k, v in found.items()}


def rule_differences(options: dict[str, Any]) -> dict[str, Any]:
    """Options of a rule set that differ from the standard rules (RULES.md section 8)."""
    known = {k: v for k, v in options.items() if k in _RULE_KEYS}
    try:
        return Rules.from_dict(known).differences()
    except (ConfigError, TypeError, ValueError):
        standard = Rules().to_dict()
        return {k: v for k, v in known.items() if standard.get(k) != v}


def open_runs(paths: list[Path] | tuple[Path, ...]) -> list[RunInfo]:
    """Read the manifests and list the parts of each run folder; check they are usable.

    Each run must be finished and whole (`runfolder.check_complete`), no run may be given
    twice, and a strategy name must mean the same strategy in every run.
    """
    if not paths:
        raise RunFolderError("no run folder given; pass at least one RUN_DIR")
    runs: list[RunInfo] = []
    seen_options: dict[str, dict[str, Any]] = {}
    manifests = [_manifest(Path(raw)) for raw in paths]
    ids = [m.run_id for m in manifests]
    for index, raw in enumerate(paths):
        path = Path(raw)
        manifest = manifests[index]
        # two runs of one id (folders of the same name): each named by its folder's parent
        label = f"{ids[index]}@{path.resolve().parent.name}" if ids.count(ids[index]) > 1 else ""
        parts = {t: sorted((path / t).glob("part-*.parquet")) for t in TABLES}
        for table in ("games", "seats"):
            if not parts[table]:
                raise RunFolderError(
                    f"run folder {str(path)!r} has no {table}/part-*.parquet files"
                )
        rulesets = _rulesets(manifest)
        labels = {}
        for name, options in rulesets.items():
            if name in seen_options and seen_options[name] != options:
                labels[name] = f"{name}@{label or ids[index]}"
            else:
                seen_options.setdefault(name, options)
        runs.append(RunInfo(index, path, manifest, parts, rulesets, labels, label))
    _check_distinct(runs)
    return runs


def _files(paths: list[Path]) -> str:
    return "[" + ", ".join("'" + str(p).replace("'", "''") + "'" for p in paths) + "]"


def _ruleset_expr(run: RunInfo) -> str:
    if not run.ruleset_labels:
        return "ruleset"
    cases = " ".join(
        f"WHEN '{k.replace(chr(39), chr(39) * 2)}' THEN '{v.replace(chr(39), chr(39) * 2)}'"
        for k, v in run.ruleset_labels.items()
    )
    return f"CASE ruleset {cases} ELSE ruleset END"


def connect(
    runs: list[RunInfo],
    memory_limit: str = "2GB",
    threads: int | None = None,
    database: Path | None = None,
    temp_directory: Path | None = None,
) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with the tables and views described in the module docstring.

    Args:
        database: a scratch DuckDB file; its tables are compressed and may spill to disk,
            which keeps memory flat for tens of millions of seats (default: in memory).
    """
    con = duckdb.connect(str(database) if database else ":memory:")
    con.execute(f"SET memory_limit = '{memory_limit}'")
    con.execute("SET preserve_insertion_order = false")
    if temp_directory is not None:
        con.execute(f"SET temp_directory = '{temp_directory}'")
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    games, seats, moves, moved = [], [], [], []
    replayed = [run for run in runs if run.parts["moves"] and runfolder.replay_only(run.manifest)]
    for run in runs:
        off = run.index * RUN_SHIFT

        def unique(column: str, off: int = off) -> str:
            return f"{column} + {off} AS {column}" if off else column

        games.append(
            f"SELECT {run.index} AS run, {unique('game_id')}, {unique('match_id')}, "
            f"{_ruleset_expr(run)} AS ruleset, seed, "
            "CAST(players AS INTEGER) AS players, CAST(turns AS INTEGER) AS turns, "
            f"end_reason, winners, tie_broken, error, {unique('block')} "
            f"FROM read_parquet({_files(run.parts['games'])})"
        )
        seats.append(
            f"SELECT {run.index} AS run, {unique('game_id')}, "
            "CAST(seat AS INTEGER) AS seat, strategy, dirhams, visible, score, rank, "
            f"win_share, eliminated_turn FROM read_parquet({_files(run.parts['seats'])})"
        )
        # The run's own seats, ids as stored: a filter on game_id reaches the Parquet scan.
        con.execute(
            f"CREATE VIEW seats_{run.index} AS SELECT * FROM "
            f"read_parquet({_files(run.parts['seats'])})"
        )
        if run.parts["moves"]:
            stored = f"read_parquet({_files(run.parts['moves'])})"
            moved.append(f"SELECT DISTINCT {unique('game_id')} FROM {stored}")
            if run in replayed:
                continue
            moves.append(
                f"SELECT {run.index} AS run, {unique('game_id')}, "
                f"CAST(turn AS INTEGER) AS turn, dirhams_after, visible_after FROM {stored}"
            )
    # A view, not a table: 10 million games would hold about 1 GB in memory, and the report
    # scans them only a few times (report.tables keeps block-level totals, report.pergame
    # the per-game arrays).
    con.execute("CREATE VIEW games AS " + " UNION ALL ".join(games))
    con.execute("CREATE VIEW seats AS " + " UNION ALL ".join(seats))
    if replayed:
        con.execute(
            "CREATE TABLE replayed_moves (run INTEGER, game_id BIGINT, turn INTEGER, "
            "dirhams_after SMALLINT[], visible_after SMALLINT[])"
        )
        con.execute("CREATE TABLE replay_runs (run INTEGER, path VARCHAR)")
        con.executemany(
            "INSERT INTO replay_runs VALUES (?, ?)", [(r.index, str(r.path)) for r in replayed]
        )
        moves.append("SELECT * FROM replayed_moves")
    if len(moved) == len(runs):
        con.execute("CREATE VIEW moves AS " + " UNION ALL ".join(moves))
        con.execute("CREATE VIEW moved_games AS " + " UNION ALL ".join(moved))
    # bseats is a view: the report reduces the seats per game once (report.pergame); only
    # fallbacks for unusual blocks aggregate it directly.
    con.execute(
        """
        CREATE VIEW bseats AS
        SELECT s.game_id, s.seat, s.strategy, CAST(s.win_share AS FLOAT) AS win_share,
               s.score, s.dirhams, CAST(s.rank AS TINYINT) AS rank, g.block, g.ruleset,
               CAST(g.players AS TINYINT) AS players, g.match_id, g.tie_broken,
               CAST(len(g.winners) AS TINYINT) AS n_winners, CAST(g.turns AS SMALLINT) AS turns
        FROM seats s JOIN games g USING (game_id)
        WHERE g.end_reason <> 'error'
        """
    )
    return con


def has_moves(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the connection has a ``moves`` view (every run has a moves table)."""
    rows = con.execute(
        "SELECT count(*) FROM duckdb_views() WHERE view_name = 'moves' AND NOT internal"
    ).fetchone()
    return bool(rows and rows[0])


def replay_sample(con: duckdb.DuckDBPyConnection, sample: str) -> None:
    """Put the moves of the games in table `sample` (``game_id`` made unique) into the
    ``moves`` view where their run stores only the replay columns: their outcome columns
    replayed (`runfolder.read_moves`) into ``replayed_moves``, each game once. The report
    reads per-turn metrics of samples, so only those games are replayed."""
    if not replays(con):
        return
    for run, path in con.execute("SELECT run, path FROM replay_runs ORDER BY run").fetchall():
        off = run * RUN_SHIFT
        ids = con.execute(
            f"""SELECT game_id - {off} AS g FROM {sample}
                WHERE game_id >= {off} AND game_id < {off + RUN_SHIFT} AND game_id NOT IN
                      (SELECT game_id FROM replayed_moves WHERE run = {run})"""
        ).fetchnumpy()["g"]
        if not len(ids):
            continue
        table = runfolder.read_moves(path, ids.tolist())
        con.register("replayed_now", table.select(list(_REPLAYED)))
        con.execute(
            f"INSERT INTO replayed_moves SELECT {run}, game_id + {off}, turn, "
            "dirhams_after, visible_after FROM replayed_now"
        )
        con.unregister("replayed_now")


_REPLAYED = ("game_id", "turn", "dirhams_after", "visible_after")


def replays(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether some run of the connection stores only the moves' replay columns (its
    per-turn columns are replayed where they are read: `replay_sample`)."""
    found = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'replay_runs'"
    ).fetchone()
    return bool(found and found[0])


def digest(paths: list[Path], root: Path) -> str:
    """sha256 over the part files' relative names and contents, in name order."""
    total = hashlib.sha256()
    for path in sorted(paths):
        total.update(str(path.relative_to(root)).encode())
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 22):
                total.update(chunk)
    return total.hexdigest()
