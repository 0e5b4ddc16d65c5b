"""Where compiled kernels are cached: a folder keyed by the kernels' source."""

from __future__ import annotations

import json
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


KERNEL = """
from numba import njit


@njit(cache=True)
def twice(x):
    return 2 * x
"""

USE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import kernel
for value in json.loads(sys.argv[2]):
    kernel.twice(value)
print(json.dumps({"hits": len(kernel.twice.stats.cache_hits),
                  "misses": len(kernel.twice.stats.cache_misses)}))
"""

MERGE = """
import sys
from marrakech_sim.kernel_cache import merge
print(merge(sys.argv[1]))
"""


def _run(code: str, cache: Path, *args: str) -> str:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_merge_adds_the_kernels_another_folder_holds(tmp_path: Path) -> None:
    """Kernels compiled into a helper's folder load from the cache folder they are merged
    into: the argument types it lacked are added, those it held are kept, and a second
    merge adds nothing."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "kernel.py").write_text(KERNEL)
    src, helper, ours = str(tmp_path / "src"), tmp_path / "helper", tmp_path / "ours"
    assert json.loads(_run(USE, helper, src, "[1, 1.5]")) == {"hits": 0, "misses": 2}
    assert json.loads(_run(USE, ours, src, "[1]")) == {"hits": 0, "misses": 1}
    assert _run(MERGE, ours, str(helper)) == "1"  # the float version; the int one was held
    assert _run(MERGE, ours, str(helper)) == "0"
    assert json.loads(_run(USE, ours, src, "[1, 1.5]")) == {"hits": 2, "misses": 0}


def test_merge_of_a_folder_that_is_not_a_kernel_cache_adds_nothing(tmp_path: Path) -> None:
    """Damaged index files are left out (their kernels compile on first use), with a
    warning that names the file."""
    (tmp_path / "helper" / "sub").mkdir(parents=True)
    damaged = tmp_path / "helper" / "sub" / "f-1.py311.nbi"
    damaged.write_bytes(b"not a pickle")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "ours")}
    done = subprocess.run(
        [sys.executable, "-c", MERGE, str(tmp_path / "helper")],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "0"
    assert f"kernel cache: {damaged} not merged (" in done.stderr


def test_the_helper_writes_the_bytecode_an_import_did_not(tmp_path: Path) -> None:
    """precompile's byte_compile writes the .pyc of each imported module that has none (in
    a process that writes none itself, as under PYTHONDONTWRITEBYTECODE), so the next
    process that imports it finds it; a file that does not compile is left as it is."""
    (tmp_path / "plain_module.py").write_text("VALUE = 3\n")
    (tmp_path / "broken_module.py").write_text("def (:\n")
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "import plain_module\n"
        "from marrakech_sim.run.precompile import byte_compile, without_bytecode\n"
        "found = [p for p in without_bytecode() if 'plain_module' in p]\n"
        f"print(len(found), byte_compile(found + [{str(tmp_path / 'broken_module.py')!r}]))\n"
        "print(len([p for p in without_bytecode() if 'plain_module' in p]))\n"
    )
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["1", "1", "0"]  # one found, one written (not the broken one), none left
    cached = list((tmp_path / "__pycache__").glob("*.pyc"))
    assert [p.name.split(".")[0] for p in cached] == ["plain_module"]


def test_a_second_copy_of_the_same_sources_says_it_compiles(tmp_path: Path) -> None:
    """numba files a kernel under its source file's folder, so the same sources at another
    path (a second checkout) compile their kernels again into the shared cache folder: the
    record that a kind was compiled is this copy's, so the other copy says it compiles."""
    import shutil

    import marrakech_sim

    other = tmp_path / "other"
    shutil.copytree(
        Path(marrakech_sim.__file__).parent,
        other / "marrakech_sim",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    code = (
        "from marrakech_sim import kernel_cache as c\n"
        "print(c.compiled_before('loop'))\n"
        "c.mark_compiled('loop')\n"
        "print(c.compiled_before('loop'))"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}

    def run(where: Path | None) -> list[str]:
        paths = {"PYTHONPATH": str(where)} if where else {}
        out = subprocess.run(
            [sys.executable, "-c", code],
            env={**env, **paths},
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.split()

    assert run(None) == ["False", "True"]  # this copy: nothing recorded, then recorded
    assert run(None) == ["True", "True"]
    assert run(other) == ["False", "True"]  # the other copy compiles into the same folder
