"""Starting a command as a terminal would, so that Ctrl-C (SIGINT) reaches it; waiting
for a run started so to write its first parts.

A shell starts a background job (`cmd &`, a CI step run in the background) with SIGINT
ignored, and an ignored signal stays ignored across exec: Python then installs no
KeyboardInterrupt handler, and a test that sends SIGINT to its child would see it
ignored. The tests of Ctrl-C start their child with SIGINT at its default instead.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# a small Python that sets SIGINT to its default and then becomes the command (same
# process id); a default disposition, unlike an ignored one, is what exec passes on
_RESET_AND_EXEC = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execvp(sys.argv[1], sys.argv[1:])"
)


def start_in_terminal(args: Sequence[str], **popen: Any) -> subprocess.Popen[bytes]:
    """subprocess.Popen(args, stdout and stderr piped, **popen) with SIGINT at its default
    in the command, whatever this process inherited."""
    return subprocess.Popen(
        [sys.executable, "-c", _RESET_AND_EXEC, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **popen,
    )


def wait_for_parts(out: Path, proc: subprocess.Popen[bytes], parts: int) -> None:
    """Return once the run `proc` plays into `out` has written `parts` part files; an
    AssertionError when it ends first or takes over 300 s."""
    from marrakech_sim import runfolder

    deadline = time.monotonic() + 300  # the first start may compile kernels
    while time.monotonic() < deadline:
        if len(runfolder.chunks_done(out)) >= parts:
            return
        if proc.poll() is not None:
            raise AssertionError(f"the run ended early: {proc.communicate()}")
        time.sleep(0.01)
    raise AssertionError("the run wrote no parts in time")
