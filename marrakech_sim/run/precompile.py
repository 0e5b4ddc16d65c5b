"""Compile kernels in a helper process while this one compiles a whole-game loop.

On a fresh installation a run's warm-up compiles the whole-game loop for a minute or
more on one core. Meanwhile a helper process compiles, on another core, the kernels the
run and its report need next: the Parquet encoder's (`runfolder.warm_up_writer`), the
rules API's (`GameState`) and the replay loop's (`play.turns.replay_moves`), with which the
report makes the records of its notable games. It compiles into a folder of
its own (numba's cache files are not safe to write from two processes at once), merged
into the kernel cache (`kernel_cache.merge`) once the loop is compiled. Then it writes
the bytecode (.pyc) of every module this process and it imported that has none: README
command 1 installs with `pip install --no-compile` (pip byte-compiles every file of every
dependency, tests included, on one core: 18 of the install's 31 CPU seconds), so the
modules a run uses are compiled here, on the other core, once. A helper that fails or is
late costs nothing but time: what it did not compile compiles on first use.

    helper = Helper.start()      # before compiling the loop
    ...                          # compile the loop
    helper.finish()              # wait for it, merge its kernels
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import py_compile
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from marrakech_sim import kernel_cache

log = logging.getLogger(__name__)

#: the most seconds finish() waits for the helper (measured: about 20 CPU seconds of kernels
#: and, after a `--no-compile` install, 4.5 of bytecode for 1,732 modules, against the
#: loop's 33 for the default study; past this its kernels compile on first use)
WAIT_SECONDS = 300.0


class Helper:
    """A helper process compiling kernels into a folder of its own (see the module)."""

    def __init__(self, process: subprocess.Popen[bytes], folder: Path, sources: Path) -> None:
        self.process = process
        self.folder = folder
        self.sources = sources  # the modules of this process to byte-compile, one a line

    @classmethod
    def start(cls) -> Helper | None:
        """Start one; None where the kernel cache holds its kernels already, where the
        kernels have no cache folder, or where it cannot start."""
        if not os.environ.get("NUMBA_CACHE_DIR") or not needed():
            return None
        folder = Path(tempfile.mkdtemp(prefix="marrakech-kernels-"))
        env = {**os.environ, "NUMBA_CACHE_DIR": str(folder)}
        sources = folder.parent / f"{folder.name}-sources.txt"  # outside the kernels' folder
        try:
            sources.write_text("\n".join(without_bytecode()), encoding="utf-8")
            process = subprocess.Popen(
                [sys.executable, "-m", "marrakech_sim.run.precompile", str(sources)],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except OSError as exc:
            log.info("no kernel-compiling helper process: %s", exc)
            shutil.rmtree(folder, ignore_errors=True)
            sources.unlink(missing_ok=True)
            return None
        return cls(process, folder, sources)

    def finish(self, wait: float = WAIT_SECONDS) -> int:
        """Wait for the helper (at most `wait` seconds), merge what it compiled into the
        kernel cache, and remove its folder; returns the kernels merged."""
        started = time.perf_counter()
        try:
            code = self.process.wait(wait)
        except subprocess.TimeoutExpired:
            code = None
        merged = kernel_cache.merge(self.folder) if code == 0 else 0
        log.info(
            "kernel-compiling helper: exit %s, %d kernels merged, waited %.1f s",
            code,
            merged,
            time.perf_counter() - started,
        )
        self.close()
        return merged

    def close(self) -> None:
        """Stop the helper if it still runs and remove its folder."""
        if self.process.poll() is None:
            self.process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(10)
        shutil.rmtree(self.folder, ignore_errors=True)
        self.sources.unlink(missing_ok=True)


def needed() -> bool:
    """Whether the kernel cache lacks the helper's kernels (one of each of its kinds)."""
    from marrakech_sim.play import turns
    from marrakech_sim.rules import core
    from marrakech_sim.runfolder import columns

    kernels = (columns.value_range, core.k_step, turns.replay_moves)
    return not all(kernel_cache.holds(kernel) for kernel in kernels)


def compile_kernels() -> None:
    """The helper's kernels: the encoder's, the rules API's (one game played through
    GameState, as the report's replays play it), then the replay loop's."""
    import numpy as np

    from marrakech_sim import runfolder
    from marrakech_sim.play import turns
    from marrakech_sim.rules import GameState, Rules

    runfolder.warm_up_writer()
    state = GameState.start()
    while not state.is_over:
        state = state.apply(state.legal_actions()[0])
    state.outcome()
    rules = Rules()
    turns.replay_rows(rules, np.zeros((0, turns.move_columns(rules.players)), np.int32))


def without_bytecode() -> list[str]:
    """The source files of this process's imported modules that have no bytecode file."""
    found = []
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and path.endswith(".py"):
            with contextlib.suppress(ValueError, NotImplementedError):
                if not os.path.exists(importlib.util.cache_from_source(path)):
                    found.append(path)
    return found


def byte_compile(paths: list[str]) -> int:
    """Write the bytecode file of each source file that has none (as its first import
    would, where the environment lets it); returns how many were written. A file that
    cannot be compiled or written (a read-only installation) is left as it is."""
    written = 0
    for path in dict.fromkeys(paths):
        with contextlib.suppress(OSError, py_compile.PyCompileError):
            if not os.path.exists(importlib.util.cache_from_source(path)):
                py_compile.compile(path, doraise=True)
                written += 1
    return written


def main(sources: str | None) -> None:
    """The helper's work: its kernels, then the bytecode of the modules the parent named
    in the file `sources` and of its own."""
    compile_kernels()
    paths = Path(sources).read_text(encoding="utf-8").split("\n") if sources else []
    byte_compile([p for p in paths if p] + without_bytecode())


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
