"""The documents: links stay inside the repository, generated parts are current."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TEXT_SUFFIXES = {".py", ".md", ".toml", ".ipynb", ".txt", ".cfg"}
#: the development machine's folders (spelled apart so this file passes)
OUTSIDE = ("../" + "shared/", "/" + "work/")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_relative_links_resolve(doc: Path) -> None:
    """Every relative Markdown link points at a file that exists in the repository."""
    text = doc.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path = (doc.parent / target).resolve()
        assert path.is_relative_to(ROOT), f"{doc.name} links outside the repository: {target}"
        assert path.exists(), f"{doc.name} links to a missing file: {target}"


def test_nothing_points_outside_the_repository() -> None:
    """No tracked text file refers to the development machine's folders (its shared folder,
    its virtual environment): a user's clone has neither."""
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    for name in tracked:
        path = ROOT / name
        if path.suffix not in TEXT_SUFFIXES or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        assert not any(o in text for o in OUTSIDE), name


def test_strategies_view_reference_is_current() -> None:
    """docs/STRATEGIES.md's view reference is what tools/gen_strategy_docs.py generates."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_strategy_docs.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


def test_documented_shell_completion_works() -> None:
    """The README's completion line gives a bash completion script for `marrakech`."""
    assert "_MARRAKECH_COMPLETE=bash_source marrakech" in (ROOT / "README.md").read_text()
    exe = Path(sys.executable).parent / "marrakech"
    if not exe.exists():
        pytest.skip("the marrakech script is not installed beside this Python")
    env = {**os.environ, "_MARRAKECH_COMPLETE": "bash_source"}
    result = subprocess.run([str(exe)], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "complete -o nosort -F" in result.stdout


def test_architecture_picture_is_current() -> None:
    """docs/architecture.md shows the layers tools/architecture.py draws from the code."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "architecture.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert f"```\n{done.stdout}```" in text, "run: python tools/architecture.py --write"
