"""Starting a command as a terminal would, so that Ctrl-C (SIGINT) reaches it.

A shell starts a background job (`cmd &`, a CI step run in the background) with SIGINT
ignored, and an ignored signal stays ignored across exec: Python then installs no
KeyboardInterrupt handler, and a test that sends SIGINT to its child would see it
ignored. The tests of Ctrl-C start their child with SIGINT at its default instead.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
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
