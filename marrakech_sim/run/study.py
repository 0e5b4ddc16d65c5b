"""The main job in one call: play a study config into its run folder, then report on it.

Running it again is cheap and safe: a finished run folder of the same study, played by
the same code (marrakech_sim.provenance), is reused, an interrupted one is resumed, and
the report is rebuilt.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from marrakech_sim import runfolder
from marrakech_sim.errors import RunFolderError
from marrakech_sim.report import ReportResult, build_report
from marrakech_sim.run.config import Study, load_study
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
) -> StudyResult:
    """Play `config` into `run_dir` (default runs/NAME) and report into reports/NAME."""
    study = load_study(config)
    runs = Path(run_dir) if run_dir is not None else Path("runs") / study.name
    out = Path(report_dir) if report_dir is not None else Path("reports") / study.name
    action, result = _play(study, runs, workers, progress)
    return StudyResult(runs, build_report([runs], out), result, action)


def _play(
    study: Study, run_dir: Path, workers: int | None, progress: Progress | None
) -> tuple[str, RunResult | None]:
    if not (run_dir / runfolder.MANIFEST).exists():
        return "ran", run_study(study, run_dir, workers=workers, progress=progress)
    manifest = runfolder.read_manifest(run_dir)
    if _canonical(manifest["config"]) != _canonical(study.to_dict()):
        raise RunFolderError(
            f"{str(run_dir)!r} holds a run of a different study config; give another run "
            "folder (--run-dir) or remove it"
        )
    if manifest.get("status") in runfolder.FINISHED:
        check_same_code(run_dir, manifest)  # (resume_run checks an interrupted one)
        return "reused", None
    return "resumed", resume_run(run_dir, workers=workers, progress=progress)


def _canonical(config: dict[str, object]) -> str:
    return json.dumps(config, sort_keys=True, default=str)
