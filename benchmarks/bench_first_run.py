"""Time what a user waits for on a fresh machine: compiling the game kernels, or all of
README command 1 in a fresh clone.

Kernels (the default): a study's warm-up (`Prepared.warm_up`, what `marrakech run` does
before its workers start) into an empty kernel cache, in a child process, then again with
that cache warm; one JSON line per study, seconds each:

    python benchmarks/bench_first_run.py configs/default.toml configs/skill.toml

Clone (``--clone DIR``): clone this repository's HEAD into DIR, with an empty kernel
cache (XDG_CACHE_HOME inside DIR) and pip's cache as it is, run README command 1 there
(a new venv, the install, `marrakech study configs/default.toml`) and print its wall time,
the seconds until its first line of output, and the CPU seconds of all its processes (on
a busy machine the steadier figure; on an idle one the wall time is what a user waits):

    python benchmarks/bench_first_run.py --clone /tmp/fresh
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WARM_UP = """
import resource, sys, time
from marrakech_sim.run.chunk import Prepared
from marrakech_sim.run.config import load_study
prep = Prepared(load_study(sys.argv[1]))
start, cpu = time.perf_counter(), time.process_time()
prep.warm_up(lambda words: print(words, file=sys.stderr))
helper = resource.getrusage(resource.RUSAGE_CHILDREN)
print(time.perf_counter() - start, time.process_time() - cpu, helper.ru_utime + helper.ru_stime)
"""


def warm_up_seconds(config: str, cache: Path) -> tuple[float, float, float]:
    """Seconds of one study's warm-up in a child process with this kernel cache folder:
    wall, the process's CPU, and its own children's CPU (a kernel-compiling helper's).
    On a busy machine the CPU seconds are the steadier figures: on an idle one with two
    cores free, the wall time is about the larger of the two."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", WARM_UP, config],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    wall, cpu, helper = (float(x) for x in done.stdout.split()[-3:])
    return wall, cpu, helper


def kernels(configs: list[str]) -> None:
    for config in configs:
        with tempfile.TemporaryDirectory() as folder:
            cold, cpu, helper = warm_up_seconds(config, Path(folder))
            warm, _, _ = warm_up_seconds(config, Path(folder))
        print(
            json.dumps(
                {
                    "study": config,
                    "cold_s": round(cold, 1),
                    "cold_cpu_s": round(cpu, 1),
                    "cold_helper_cpu_s": round(helper, 1),
                    "warm_s": round(warm, 2),
                }
            )
        )


def readme_command() -> str:
    """README command 1: the first line of the README's first code block."""
    lines = (ROOT / "README.md").read_text().splitlines()
    return lines[lines.index("```bash") + 1]


def clone(folder: Path) -> None:
    if folder.exists():
        shutil.rmtree(folder)
    subprocess.run(["git", "clone", "-q", str(ROOT), str(folder)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "VIRTUAL_ENV"))}
    env["XDG_CACHE_HOME"] = str(folder / ".cache")  # an empty kernel cache
    env["PIP_CACHE_DIR"] = os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip"))
    command = readme_command()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(
        ["bash", "-c", command],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    first: float | None = None
    lines = []
    for line in proc.stdout:
        if first is None:
            first = time.perf_counter() - start
        lines.append((round(time.perf_counter() - start, 1), line.rstrip()))
    code = proc.wait()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # every process it waited for
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    for at, line in lines:
        print(f"{at:7.1f}s  {line}", file=sys.stderr)
    print(
        json.dumps(
            {
                "command": command,
                "exit": code,
                "wall_s": round(wall, 1),
                "first_output_s": first and round(first, 1),
                "cpu_s": round(cpu, 1),
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("configs", nargs="*", default=["configs/default.toml"])
    parser.add_argument("--clone", type=Path, help="run README command 1 in a fresh clone here")
    args = parser.parse_args()
    if args.clone:
        clone(args.clone)
    else:
        kernels(args.configs)


if __name__ == "__main__":
    main()
