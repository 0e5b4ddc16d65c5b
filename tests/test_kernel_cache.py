"""Where compiled kernels are cached: a folder keyed by the kernels' source."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from marrakech_sim.kernel_cache import source_digest


def _cache_path(tmp_path: Path, first: str, numba_cache_dir: str | None) -> Path:
    """Where a fresh process that imports `first`, then the core, caches a kernel."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    if numba_cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = numba_cache_dir
    code = (
        f"import {first}\nimport marrakech_sim.rules.core as k\n"
        "print(k.region_size._cache._cache_path)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    return Path(out)


@pytest.mark.parametrize("first", ["numba", "marrakech_sim"])
def test_cache_folder_whatever_is_imported_first(tmp_path: Path, first: str) -> None:
    """The kernels' cache is under XDG_CACHE_HOME in the folder of this source's digest,
    even when a script imported numba before marrakech_sim."""
    expected = tmp_path / "marrakech_sim" / f"numba-{source_digest()}"
    assert _cache_path(tmp_path, first, None).is_relative_to(expected)


@pytest.mark.parametrize("first", ["numba", "marrakech_sim"])
def test_inherited_folder_of_other_sources_is_not_used(tmp_path: Path, first: str) -> None:
    """A process started by one running other sources (the variable set by its
    configure()) caches in the folder of its own sources' digest."""
    inherited = str(tmp_path / "marrakech_sim" / "numba-0123456789abcdef")
    expected = tmp_path / "marrakech_sim" / f"numba-{source_digest()}"
    assert _cache_path(tmp_path, first, inherited).is_relative_to(expected)


def test_user_chosen_folder_is_kept(tmp_path: Path) -> None:
    """A NUMBA_CACHE_DIR the user chose is left alone."""
    mine = tmp_path / "my-numba-cache"
    assert _cache_path(tmp_path, "marrakech_sim", str(mine)).is_relative_to(mine)
