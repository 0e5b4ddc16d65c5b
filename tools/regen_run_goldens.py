"""Regenerate tests/golden/runs.json: digests of small runs and games the code must keep.

    .venv/bin/python tools/regen_run_goldens.py

Plays a small run of configs/default.toml and a small study of the other built-in
strategies (tests/golden_runs.py says which), digests every Parquet part byte for byte
and the manifest's deterministic keys, and each built-in's Python-loop games on a few
seeds. Run it only when a change of the games is intended: the file pins behaviour
(a refactor must leave every digest as it is). It refuses to write when the run's
digests differ between 0 and 2 worker processes.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import golden_runs  # noqa: E402


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        serial = golden_runs.study_digests(Path(tmp) / "serial", workers=0)
        parallel = golden_runs.study_digests(Path(tmp) / "parallel", workers=2)
    if serial != parallel:
        raise SystemExit("the digests differ between 0 and 2 workers: not written")
    document = {
        "about": "digests of small runs and games; regenerate with tools/regen_run_goldens.py "
        "only when the games are meant to change",
        "runs": serial,
        "games": golden_runs.game_digests(),
    }
    golden_runs.GOLDEN_RUNS.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
