"""Compile kernels in a helper process while this one compiles a whole-game loop.

On a fresh installation a run's warm-up compiles the whole-game loop for a minute or
more on one core. Meanwhile a helper process compiles, on another core, the kernels the
run and its report need next: the Parquet encoder's (`runfolder.warm_up_writer`) and the
rules API's that the report replays games with (`GameState`). It compiles into a folder of
its own (numba's cache files are not safe to write from two processes at once), merged
into the kernel cache (`kernel_cache.merge`) once the loop is compiled. A helper that
fails or is late costs nothing but time: what it did not compile compiles on first use.

    helper = Helper.start()      # before compiling the loop
    ...                          # compile the loop
    helper.finish()              # wait for it, merge its kernels
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from marrakech_sim import kernel_cache

log = logging.getLogger(__name__)

#: the most seconds finish() waits for the helper (measured: about 20 CPU seconds against
#: the loop's 33 for the default study; past this its kernels compile on first use)
WAIT_SECONDS = 300.0


class Helper:
    """A helper process compiling kernels into a folder of its own (see the module)."""

    def __init__(self, process: subprocess.Popen[bytes], folder: Path) -> None:
        self.process = process
        self.folder = folder

    @classmethod
    def start(cls) -> Helper | None:
        """Start one; None where the kernel cache holds its kernels already, where the
        kernels have no cache folder, or where it cannot start."""
        if not os.environ.get("NUMBA_CACHE_DIR") or not needed():
            return None
        folder = Path(tempfile.mkdtemp(prefix="marrakech-kernels-"))
        env = {**os.environ, "NUMBA_CACHE_DIR": str(folder)}
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "marrakech_sim.run.precompile"],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except OSError as exc:
            log.info("no kernel-compiling helper process: %s", exc)
            shutil.rmtree(folder, ignore_errors=True)
            return None
        return cls(process, folder)

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


def needed() -> bool:
    """Whether the kernel cache lacks the helper's kernels (one of each of its two kinds)."""
    from marrakech_sim.rules import core
    from marrakech_sim.runfolder import columns

    return not (kernel_cache.holds(columns.value_range) and kernel_cache.holds(core.k_step))


def compile_kernels() -> None:
    """The helper's work: the encoder's kernels, then the rules API's (one game played
    through GameState, as the report's replays play it)."""
    from marrakech_sim import runfolder
    from marrakech_sim.rules import GameState

    runfolder.warm_up_writer()
    state = GameState.start()
    while not state.is_over:
        state = state.apply(state.legal_actions()[0])
    state.outcome()


if __name__ == "__main__":
    compile_kernels()
