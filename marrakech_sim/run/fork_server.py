"""What multiprocessing's fork server imports first as it starts for a LocalCluster
(`dask_backend.FORKSERVER_PRELOAD`): it forks the cluster's workers from its one thread,
and they start with what it loaded.

A run starting its own LocalCluster starts the server itself, with its study (pickled,
about 0.5 kB) in the environment variable STUDY, read here only when that is set (so
only in that server): the server ignores Ctrl-C and a closed terminal (they reach the
whole process group; the run stops its cluster, and the server ends with its workers),
drops the variable so that the workers do not see it, then plans the study and warms it
up (`Prepared.warm_up`), which loads from the kernel cache the compiled kernels the
run's chunks play with (and imports its plug-in strategies): measured with 2 workers,
0.45 CPU s here once for the default study, saving each worker 0.2 of its own, and 0.95
for tests/run's study of a plug-in, saving each worker 0.9. A server started otherwise
(by the first worker of a `local_cluster` given no study) imports the package only.
"""

from __future__ import annotations

import base64
import os
import pickle
import signal

from marrakech_sim.run.chunk import Prepared
from marrakech_sim.run.config import Study
from marrakech_sim.run.pool import ignore_hang_up

STUDY = "MARRAKECH_FORK_SERVER_STUDY"


def encode(study: Study) -> str:
    """`study` as STUDY's value."""
    return base64.b64encode(pickle.dumps(study)).decode()


def warm_up(value: str) -> None:
    """Plan and warm up the study in STUDY's value; anything wrong with it is passed
    over (the workers then load their kernels themselves)."""
    try:
        study = pickle.loads(base64.b64decode(value))
        if isinstance(study, Study):
            Prepared(study).warm_up()
    except Exception:  # an exception here would stop the server: it would fork no worker
        pass


if STUDY in os.environ:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    ignore_hang_up()
    warm_up(os.environ.pop(STUDY))
