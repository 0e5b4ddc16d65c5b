"""Count the package's functions and those without full annotations.

    .venv/bin/python tools/count_untyped.py             the counts, by folder
    .venv/bin/python tools/count_untyped.py --list      and every unannotated function

A function is unannotated when its return or any parameter (bar the first of a method,
``self``/``cls``) has no annotation; ``__init__`` may leave out its return, as mypy allows
when a parameter is annotated. A compiled kernel is counted apart: numba infers its types
from the calls and does not read annotations. A kernel is a function decorated ``@njit``,
``@jit``, or one of numba's typing hooks (``@overload``, ``@intrinsic``), or a function
defined inside one (the implementations a typing hook returns).
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "marrakech_sim"
Function = ast.FunctionDef | ast.AsyncFunctionDef
KERNEL_DECORATORS = {"njit", "jit", "overload", "overload_method", "intrinsic"}


def _is_kernel(node: Function) -> bool:
    """Whether a function is decorated for numba (``@njit``, ``@njit(...)``, ``@numba.njit``)."""
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in KERNEL_DECORATORS:
            return True
    return False


def is_unannotated(node: Function, is_method: bool) -> bool:
    """Whether a parameter or the return lacks an annotation."""
    args = node.args
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    if (
        is_method
        and params
        and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)
    ):
        params = params[1:]
    params += [a for a in (args.vararg, args.kwarg) if a is not None]
    if any(p.annotation is None for p in params):
        return True
    if node.returns is None:
        return not (node.name == "__init__" and params)
    return False


def functions(tree: ast.Module) -> list[tuple[Function, bool, bool]]:
    """Every function in a module with whether it is a method and whether it is a kernel."""
    found: list[tuple[Function, bool, bool]] = []

    def visit(node: ast.AST, in_class: bool, in_kernel: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, Function):
                kernel = in_kernel or _is_kernel(child)
                found.append((child, in_class, kernel))
                visit(child, False, kernel)
            elif isinstance(child, ast.ClassDef):
                visit(child, True, in_kernel)
            else:
                visit(child, in_class, in_kernel)

    visit(tree, False, False)
    return found


def unannotated(path: Path) -> list[tuple[int, str]]:
    """(line, name) of each unannotated function of a module outside its kernels."""
    tree = ast.parse(path.read_text(), filename=str(path))
    return [
        (node.lineno, node.name)
        for node, is_method, kernel in functions(tree)
        if not kernel and is_unannotated(node, is_method)
    ]


def main(argv: list[str]) -> int:
    """Print the counts (and with --list every unannotated function)."""
    show = "--list" in argv
    total = untyped = kernels = kernels_untyped = 0
    by_folder: Counter[str] = Counter()
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT)
        tree = ast.parse(path.read_text(), filename=str(rel))
        for node, is_method, kernel in functions(tree):
            total += 1
            kernels += kernel
            if is_unannotated(node, is_method):
                if kernel:
                    kernels_untyped += 1
                    continue
                untyped += 1
                by_folder[str(rel.parent)] += 1
                if show:
                    print(f"{rel}:{node.lineno}: {node.name}")
    print(f"functions: {total}, of them numba kernels: {kernels} ({kernels_untyped} unannotated)")
    print(f"unannotated outside the kernels: {untyped}")
    for folder, n in sorted(by_folder.items()):
        print(f"  {folder}: {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
