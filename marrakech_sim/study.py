"""The main job in one call: play a study config into its run folder, then report on it.

Running it again is cheap and safe: a finished run folder of the same study, played by
the same code (marrakech_sim.provenance), is reused, an interrupted one is resumed, and
the report is rebuilt.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path

from marrakech_sim import runfolder
from marrakech_sim.errors import RunFolderError
from marrakech_sim.report import ReportResult, build_report
from marrakech_sim.run.config import Study, load_study
from marrakech_sim.run.dask_backend import DaskBackend
from marrakech_sim.run.provenance import check_same_code
from marrakech_sim.run.runner import Progress, RunResult, resume_run, run_study


@dataclasses.dataclass(frozen=True, slots=True)
class StudyResult:
    """Where the run and the report went, and what this call did to the run."""

    run_dir: Path
    report: ReportResult
    run: RunResult | None  # None when a finished run was reused
    action: str  # 'ran', 'resumed' or 'reused'


def run_and_report(
    config: str | Path,
    *,
    run_dir: str | Path | None = None,
    report_dir: str | Path | None = None,
    workers: int | None = None,
    progress: Progress | None = None,
    games: int | None = None,
    seed: int | None = None,
    backend: DaskBackend | None = None,
) -> StudyResult:
    """Play `config` into `run_dir` (default runs/NAME) and report into reports/NAME.

    ``games`` (per line-up) and ``seed`` override the config's for a trial run; the
    default folders are then named by :func:`study_name`. backend: play the chunks as Dask
    tasks (`run.dask_backend`), else worker processes.
    """
    study = load_study(config).replace(games_per_lineup=games, seed=seed)
    name = study_name(load_study(config), games, seed)
    runs = Path(run_dir) if run_dir is not None else Path("runs") / name
    out = Path(report_dir) if report_dir is not None else Path("reports") / name
    action, result = _play(study, runs, workers, progress, backend)
    return StudyResult(runs, build_report([runs], out), result, action)


def study_name(study: Study, games: int | None, seed: int | None) -> str:
    """The folder name of a study, or of a trial of it with other games or seed."""
    if games is None and seed is None:
        return study.name
    parts = [f"g{games}" if games is not None else "", f"s{seed}" if seed is not None else ""]
    return f"{study.name}-trial-" + "-".join(p for p in parts if p)


def _play(
    study: Study,
    run_dir: Path,
    workers: int | None,
    progress: Progress | None,
    backend: DaskBackend | None,
) -> tuple[str, RunResult | None]:
    if not (run_dir / runfolder.MANIFEST).exists():
        return "ran", run_study(study, run_dir, workers=workers, progress=progress, backend=backend)
    manifest = runfolder.read_manifest(run_dir)
    if _canonical(manifest.config) != _canonical(study.to_dict()):
        raise RunFolderError(
            f"{str(run_dir)!r} holds a run of a different study config; give another run "
            "folder (--run-dir) or remove it"
        )
    if manifest.status in runfolder.FINISHED:
        check_same_code(run_dir, manifest)  # (resume_run checks an interrupted one)
        return "reused", None
    return "resumed", resume_run(run_dir, workers=workers, progress=progress, backend=backend)


def _canonical(config: Mapping[str, object]) -> str:
    return json.dumps(config, sort_keys=True, default=str)
