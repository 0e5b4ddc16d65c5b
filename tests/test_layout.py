"""The package's architecture: imports flow one way, private names stay home, lint, types."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "marrakech_sim"

# the layers from the inside out: a module may import its own layer and the ones before it
LAYERS = (
    ("errors", "files", "kernel_cache"),
    ("rules",),
    ("play",),
    ("strategies",),
    ("runfolder", "stats"),
    ("arena",),
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


def _imports(path: Path) -> list[tuple[str, str | None, str, int]]:
    """(module, imported name or None, local name, line) of each absolute import of the package,
    at any depth (an import inside a function is a dependency too, only a later one)."""
    out: list[tuple[str, str | None, str, int]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("marrakech_sim"):
                out += [(node.module, a.name, a.asname or a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [
                (a.name, None, a.asname or a.name, node.lineno)
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
        for imported, name, _, line in _imports(path):
            target = _target(imported, name)
            if target != "marrakech_sim" and _layer(target) > _layer(module):
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not wrong, "\n".join(wrong)


#: what plays games: the game loops and the turn steps they are made of
GAME_LOOPS = frozenset(
    {
        "marrakech_sim.play.game.play_game",
        "marrakech_sim.play.turns.record_turn",
        "marrakech_sim.play.turns.k_chance",
        "marrakech_sim.play.turns.seed_streams",
        "marrakech_sim.arena.loop.play_batch",
    }
)


def _uses(path: Path) -> set[str]:
    """The package names `path` uses: each `module.name` it imports, and each attribute it
    reads of a package module it imported (`t.record_turn` after `from ...play import
    turns as t`)."""
    found = set()
    aliases = {}
    for imported, name, local, _ in _imports(path):
        target = _target(imported, name)
        if name is None or target != imported:
            aliases[local] = target
            found.add(target)
        else:
            found.add(f"{imported}.{name}")
    for node in ast.walk(ast.parse(path.read_text())):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
        ):
            found.add(f"{aliases[node.value.id]}.{node.attr}")
    return found


def test_one_layer_plays_games() -> None:
    """Games are played in arena/ (on play/'s game loop and turn steps): strategies/ holds
    no game loop, run/ plays no game itself and reaches the arena through its face
    (`arena.play_games`), and nothing outside the arena calls the compiled loop."""
    wrong = []
    for module, path in MODULES.items():
        folder = module.split(".")[1] if module.count(".") > 1 else ""
        uses = _uses(path)
        if folder in ("strategies", "run"):
            wrong += [f"{module} uses {use}" for use in sorted(uses & GAME_LOOPS)]
        if folder == "run":
            wrong += [
                f"{module} uses {use}: the run goes through the arena's face"
                for use in sorted(uses)
                if use.startswith(("marrakech_sim.arena.loop", "marrakech_sim.arena.games"))
            ]
        if folder not in ("arena", "play"):
            wrong += [
                f"{module} uses {use}"
                for use in sorted(uses)
                if use.startswith("marrakech_sim.arena.loop")
            ]
    assert not wrong, "\n".join(wrong)
    assert "marrakech_sim.arena.play_games" in _uses(PACKAGE / "run" / "chunk.py")


def test_the_game_loop_check_sees_imports_and_attributes(tmp_path: Path) -> None:
    """_uses finds a loop imported by name, read through a module alias, or imported deep."""
    source = tmp_path / "user.py"
    source.write_text(
        "from marrakech_sim.play.game import play_game\n"
        "from marrakech_sim.play import turns as t\n"
        "import marrakech_sim.arena.loop as fast\n"
        "t.record_turn\n"
        "fast.play_batch\n"
    )
    assert _uses(source) & GAME_LOOPS == {
        "marrakech_sim.play.game.play_game",
        "marrakech_sim.play.turns.record_turn",
        "marrakech_sim.arena.loop.play_batch",
    }


def _packages_run(target: str, importer: str) -> list[str]:
    """The package __init__ modules that importing `target` runs first, less the importer's own
    packages (already running) and the lazy package face (`marrakech_sim` itself)."""
    parts = target.split(".")
    return [
        package
        for i in range(2, len(parts))
        if (package := ".".join(parts[:i])) in MODULES and not importer.startswith(package + ".")
    ]


def _import_graph() -> dict[str, set[str]]:
    """module -> the package modules its imports run, __init__ files included."""
    edges: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        if module == "marrakech_sim":
            continue  # the package's face re-exports every layer, lazily
        reached: set[str] = set()
        for imported, name, _, _ in _imports(path):
            target = _target(imported, name)
            reached.update(_packages_run(target, module))
            if target in MODULES and target != "marrakech_sim":
                reached.add(target)
        reached.discard(module)
        edges[module] = reached
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The cycles a depth-first walk of `edges` meets (each back edge once)."""
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    return cycles


def test_no_import_cycle_between_modules() -> None:
    """The imports between the package's modules, package __init__ files included (and the
    imports inside functions), form no cycle."""
    cycles = _cycles(_import_graph())
    assert not cycles, " / ".join(" -> ".join(c) for c in cycles)


def test_the_cycle_check_sees_init_files_and_function_imports() -> None:
    """The cycle walk finds a cycle that passes through a package __init__."""
    edges = {
        "marrakech_sim.report": {"marrakech_sim.report.build"},
        "marrakech_sim.report.build": {"marrakech_sim.report.compute"},
        "marrakech_sim.report.compute": {"marrakech_sim.report"},
    }
    assert _cycles(edges) == [
        [
            "marrakech_sim.report",
            "marrakech_sim.report.build",
            "marrakech_sim.report.compute",
            "marrakech_sim.report",
        ]
    ]
    assert _packages_run("marrakech_sim.report.build", "marrakech_sim.cli.report") == [
        "marrakech_sim.report"
    ]
    assert _packages_run("marrakech_sim.report.build", "marrakech_sim.report.compute") == []


def _private_uses(module: str, path: Path) -> list[str]:
    """Where `path` (module `module`) imports or reads another module's `_name`."""
    wrong = []
    package = module.rsplit(".", 1)[0]
    aliases: dict[str, str] = {}  # local name -> the module it is bound to
    for imported, name, local, line in _imports(path):
        target = _target(imported, name)
        private_module = any(p.startswith("_") for p in target.split(".")[1:])
        if private_module and not target.startswith(package + ".") and target != module:
            wrong.append(f"{path.name}:{line} imports {target}")
        if name and name.startswith("_") and not name.startswith("__") and target == imported:
            wrong.append(f"{path.name}:{line} imports {imported}.{name}")
        if name is None and local != imported:
            aliases[local] = imported  # import marrakech_sim.a.b as m
        elif name and target != imported:
            aliases[local] = target  # from marrakech_sim.a import b [as m]
    for node in ast.walk(ast.parse(path.read_text())):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and aliases[node.value.id] != module
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            wrong.append(f"{path.name}:{node.lineno} reads {aliases[node.value.id]}.{node.attr}")
    return wrong


def test_private_names_stay_in_their_module() -> None:
    """A `_name` is imported or read as an attribute only in its own module (or package, for a
    private module such as runfolder._parquet), under its own name or an alias."""
    wrong = []
    for module, path in MODULES.items():
        wrong += [f"{path.parent.relative_to(ROOT)}/{w}" for w in _private_uses(module, path)]
    assert not wrong, "\n".join(wrong)


def test_the_private_name_check_sees_aliases(tmp_path: Path) -> None:
    """`from pkg import mod as m; m._x` and `import pkg.mod as m; m._x` are both caught."""
    source = tmp_path / "user.py"
    source.write_text(
        "from marrakech_sim.play import turns as t\n"
        "import marrakech_sim.rules.core as k\n"
        "from marrakech_sim.play.turns import _hidden as visible\n"
        "t._record()\n"
        "k._private\n"
    )
    assert sorted(_private_uses("marrakech_sim.run.user", source)) == [
        "user.py:3 imports marrakech_sim.play.turns._hidden",
        "user.py:4 reads marrakech_sim.play.turns._record",
        "user.py:5 reads marrakech_sim.rules.core._private",
    ]


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


def test_the_lazy_exports_are_typed() -> None:
    """The package face's TYPE_CHECKING imports name each lazy export from the module that
    defines it, so a type checker sees their types (not Any)."""
    import marrakech_sim

    tree = ast.parse((PACKAGE / "__init__.py").read_text())
    typed = {
        alias.asname or alias.name: node.module
        for block in tree.body
        if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert typed == marrakech_sim._LAZY


def _compiled_nodes(tree: ast.AST) -> set[int]:
    """ids of the nodes inside functions compiled by numba (@njit, @overload, ...)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any(
            "jit" in ast.unparse(d) or "overload" in ast.unparse(d) for d in node.decorator_list
        ):
            inside.update(id(sub) for sub in ast.walk(node))
    return inside


def test_the_packed_layout_stays_in_rules() -> None:
    """Outside rules/, Python code reads a packed state through rules.state's named
    accessors: only compiled kernels index it by the core's offsets (k.SEAT_, k.COLOUR_AT)."""
    wrong = []
    for module, path in MODULES.items():
        if module.startswith("marrakech_sim.rules"):
            continue
        tree = ast.parse(path.read_text())
        compiled = _compiled_nodes(tree)
        wrong += [
            f"{path.relative_to(ROOT)}:{node.lineno} reads k.{node.attr}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "k"
            and node.attr.isupper()
            and node.attr.endswith(("_", "_AT"))
            and id(node) not in compiled
        ]
    assert not wrong, "\n".join(wrong)


def _count_untyped() -> Any:
    """tools/count_untyped.py as a module."""
    spec = importlib.util.spec_from_file_location(
        "count_untyped", ROOT / "tools" / "count_untyped.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_only_the_kernels_are_unannotated() -> None:
    """mypy lets the kernel modules define unannotated functions (numba reads no annotations);
    every function outside the numba kernels is annotated, and the modules mypy relaxes are
    the ones that define kernels."""
    tool = _count_untyped()
    wrong = [
        f"{path.relative_to(ROOT)}:{line} {name}"
        for path in MODULES.values()
        for line, name in tool.unannotated(path)
    ]
    assert not wrong, "annotate:\n" + "\n".join(wrong)
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    relaxed = [
        module
        for override in config["overrides"]
        if override.get("disallow_untyped_defs") is False
        for module in override["module"]
    ]
    assert relaxed
    for module in relaxed:
        tree = ast.parse(MODULES[module].read_text())
        assert any(kernel for _, _, kernel in tool.functions(tree)), f"{module} has no kernel"
    assert "disallow_untyped_calls" not in config and "warn_return_any" not in config


def test_the_version_is_written_once() -> None:
    """pyproject.toml takes the version from marrakech_sim.__version__ (dynamic), so the
    installed metadata that `marrakech --version` prints and the version that run.json and
    the Parquet files record are one."""
    import importlib.metadata
    import tomllib

    import marrakech_sim

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert importlib.metadata.version("marrakech_sim") == marrakech_sim.__version__
