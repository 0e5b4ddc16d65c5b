"""The package's architecture: imports flow one way, private names stay home, lint, types."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "marrakech_sim"

# the layers from the inside out: a module may import its own layer and the ones before it
LAYERS = (
    ("errors", "files", "kernel_cache"),
    ("rules",),
    ("play",),
    ("strategies",),
    ("runfolder", "stats"),
    ("run",),
    ("palette", "plots", "report", "show", "record", "human", "web", "live"),
    ("study",),
    ("design",),
    ("cli",),
)


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ("marrakech_sim", *path.relative_to(PACKAGE).with_suffix("").parts)
        found[".".join(parts).removesuffix(".__init__")] = path
    return found


MODULES = _modules()


def _imports(path: Path) -> list[tuple[str, str | None, int]]:
    """(module, imported name or None, line) of each absolute import of the package."""
    out: list[tuple[str, str | None, int]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("marrakech_sim"):
                out += [(node.module, a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [
                (a.name, None, node.lineno)
                for a in node.names
                if a.name.startswith("marrakech_sim")
            ]
    return out


def _target(module: str, name: str | None) -> str:
    """The module an import reaches: `from pkg import mod` reaches pkg.mod."""
    return f"{module}.{name}" if name and f"{module}.{name}" in MODULES else module


def _layer(module: str) -> int:
    top = module.split(".")[1] if module.count(".") else ""
    for i, names in enumerate(LAYERS):
        if top in names:
            return i
    raise AssertionError(f"{module} belongs to no layer of LAYERS; add its folder there")


def test_imports_flow_from_the_outer_layers_inward() -> None:
    """No module imports a module of a later layer (rules <- play <- ... <- cli)."""
    wrong = []
    for module, path in MODULES.items():
        if module == "marrakech_sim":
            continue  # the package's face re-exports every layer, lazily
        for imported, name, line in _imports(path):
            target = _target(imported, name)
            if target != "marrakech_sim" and _layer(target) > _layer(module):
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_no_import_cycle_between_modules() -> None:
    """Module-level imports between the package's modules form no cycle."""
    edges: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        if path.name == "__init__.py":
            continue
        edges[module] = {
            t
            for imported, name, _ in _imports(path)
            if (t := _target(imported, name)) in MODULES
            and MODULES[t].name != "__init__.py"
            and t != module
        }
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in edges.get(node, ()):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for node in edges:
        if node not in state:
            visit(node, [node])
    assert not cycles, " / ".join(" -> ".join(c) for c in cycles)


def test_private_names_stay_in_their_module() -> None:
    """A `_name` is imported or read as an attribute only in its own module (or package, for a
    private module such as runfolder._parquet)."""
    wrong = []
    for module, path in MODULES.items():
        package = module.rsplit(".", 1)[0]
        aliases: dict[str, str] = {}
        for imported, name, line in _imports(path):
            target = _target(imported, name)
            private_module = any(p.startswith("_") for p in target.split(".")[1:])
            if private_module and not target.startswith(package + ".") and target != module:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
            if name and name.startswith("_") and not name.startswith("__") and target == imported:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {imported}.{name}")
            if name and target != imported:
                aliases[name] = target
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                wrong.append(
                    f"{path.relative_to(ROOT)}:{node.lineno} reads "
                    f"{aliases[node.value.id]}.{node.attr}"
                )
    assert not wrong, "\n".join(wrong)


def _tool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


def test_ruff_check_passes() -> None:
    """`ruff check` finds nothing in the repository (rules in pyproject.toml)."""
    done = _tool("ruff", "check", "--quiet", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_strict_passes() -> None:
    """mypy in strict mode finds no error in the package, strategies included."""
    done = _tool("mypy")
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]


def test_the_package_exports_the_notebook_api() -> None:
    """Every name of marrakech_sim.__all__ resolves, the lazy ones to their defining module."""
    import marrakech_sim

    for name in marrakech_sim.__all__:
        assert getattr(marrakech_sim, name) is not None, name
    from marrakech_sim.run.runner import run_study

    assert marrakech_sim.run_study is run_study
