"""Draw the package's layers from its import graph, as docs/architecture.md shows them.

    .venv/bin/python tools/architecture.py          print the picture
    .venv/bin/python tools/architecture.py --write  put it into docs/architecture.md

A part is a folder of marrakech_sim or one of its top-level modules. Part A imports B when
any module of A imports (at any depth, a function's lazy imports included) a module of B;
the package's face (marrakech_sim/__init__.py, which re-exports every layer lazily) is
left out. Each part stands one row above the highest part it imports, so every import
points down the picture; the arrows name what each part imports. tests/test_docs.py
checks that docs/architecture.md shows the picture of the code as it is.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "marrakech_sim"
DOC = ROOT / "docs" / "architecture.md"
BEGIN = "<!-- layers: begin (tools/architecture.py --write) -->"
END = "<!-- layers: end -->"


def _part(path: Path) -> str | None:
    """The part a module file belongs to; None for the package's face."""
    rel = path.relative_to(PACKAGE)
    if rel.parts == ("__init__.py",):
        return None
    return rel.parts[0].removesuffix(".py")


def _part_of_module(module: str) -> str | None:
    """The part a dotted module name (marrakech_sim.x.y) belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "marrakech_sim" else None


def import_graph() -> dict[str, set[str]]:
    """part -> the other parts it imports."""
    known = {p for path in PACKAGE.rglob("*.py") if (p := _part(path)) is not None}
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        part = _part(path)
        if part is None:
            continue
        reached = graph.setdefault(part, set())
        for node in ast.walk(ast.parse(path.read_text())):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module == "marrakech_sim":
                    names = [f"marrakech_sim.{a.name}" for a in node.names]
                else:
                    names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                target = _part_of_module(name)
                if target in known and target != part:
                    reached.add(target)
    return graph


def layers(graph: dict[str, set[str]]) -> list[list[str]]:
    """The parts by height: a part stands one above the highest part it imports."""
    height: dict[str, int] = {}

    def level(part: str, path: tuple[str, ...]) -> int:
        if part in path:
            raise SystemExit(f"import cycle: {' -> '.join((*path, part))}")
        if part not in height:
            below = [level(p, (*path, part)) for p in graph.get(part, ())]
            height[part] = 1 + max(below, default=-1)
        return height[part]

    for part in graph:
        level(part, ())
    rows: list[list[str]] = [[] for _ in range(max(height.values()) + 1)]
    for part, h in sorted(height.items()):
        rows[h].append(part)
    return rows


def picture() -> str:
    """The layers from the outside (top) in, each part with what it imports."""
    graph = import_graph()
    out = []
    rows = layers(graph)
    for h in range(len(rows) - 1, -1, -1):
        out.append(f"{h:>2}  " + "   ".join(f"[{p}]" for p in rows[h]))
        for part in rows[h]:
            if graph[part]:
                out.append(f"      {part:<13}-> {', '.join(sorted(graph[part]))}")
        if h:
            out.append("     |")
    return "\n".join(out) + "\n"


def write() -> None:
    """Replace the picture between the markers of docs/architecture.md."""
    text = DOC.read_text()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(f"{head}{BEGIN}\n```\n{picture()}```\n{END}{tail}")


def main() -> int:
    if sys.argv[1:] == ["--write"]:
        write()
    elif sys.argv[1:]:
        print(__doc__)
        return 2
    else:
        print(picture(), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
