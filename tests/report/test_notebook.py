"""The worked example notebook in docs/ runs from top to bottom and is kept without outputs."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT

NOTEBOOK = ROOT / "docs" / "example.ipynb"


def test_notebook_is_stored_without_outputs() -> None:
    """The repository keeps the notebook stripped: no outputs, no execution counts."""
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


def test_notebook_executes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Executed on a small run of the default study, every cell runs without error: the
    finding recomputed by hand equals the report's, and the chart is drawn."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("MARRAKECH_RUN", str(tmp_path / "small"))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    )
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs)
    text = "".join(o.get("text", "") for o in outputs)
    assert "report: " in text and "among the study's mix of" in text
