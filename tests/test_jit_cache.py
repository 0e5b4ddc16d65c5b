"""Where compiled kernels are cached: a folder keyed by the kernels' source."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from marrakech_sim._jit_cache import source_digest


@pytest.mark.parametrize("first", ["numba", "marrakech_sim"])
def test_cache_folder_whatever_is_imported_first(tmp_path: Path, first: str) -> None:
    """The kernels' cache is under XDG_CACHE_HOME in the folder of this source's digest,
    even when a script imported numba before marrakech_sim."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    code = (
        f"import {first}\nimport marrakech_sim.rules.core as k\n"
        "print(k.region_size._cache._cache_path)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    expected = tmp_path / "marrakech_sim" / f"numba-{source_digest()}"
    assert Path(out).is_relative_to(expected)
