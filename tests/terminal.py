"""Starting a command as a terminal would, so that Ctrl-C (SIGINT) reaches it.

A shell starts a background job (`cmd &`, a CI step run in the background) with SIGINT
ignored, and an ignored signal stays ignored across exec: Python then installs no
KeyboardInterrupt handler, and a test that sends SIGINT to its child would see it
ignored. The tests of Ctrl-C start their child with SIGINT at its default instead.
"""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Sequence
from typing import Any


def _ctrl_c_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_in_terminal(args: Sequence[str], **popen: Any) -> subprocess.Popen[bytes]:
    """subprocess.Popen(args, stdout and stderr piped, **popen) with SIGINT at its default
    in the child, whatever this process inherited."""
    return subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_ctrl_c_default, **popen
    )
