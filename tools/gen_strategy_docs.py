"""Regenerate the view reference in docs/STRATEGIES.md from the code's docstrings.

    python tools/gen_strategy_docs.py          # rewrite the generated block
    python tools/gen_strategy_docs.py --check  # exit 1 if the file is out of date

The block between the ``<!-- generated: view reference -->`` markers lists every public
member of ``GameView`` with the first paragraph of its docstring, and the fields of
``PlacementEffect`` (what ``placement_effect`` returns) with their comments, so the
documentation cannot drift from the code. ``tests/test_docs.py`` runs the check.
"""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path

from marrakech_sim.play import view

DOC = Path(__file__).resolve().parent.parent / "docs" / "STRATEGIES.md"
START = "<!-- generated: view reference (tools/gen_strategy_docs.py) -->"
END = "<!-- end of generated view reference -->"


def _summary(obj: object) -> str:
    doc = inspect.getdoc(obj) or ""
    return " ".join(doc.split("\n\n")[0].split())


def _signature(name: str, member: object) -> str:
    if isinstance(member, property):
        return f"`{name}`"
    try:
        params = list(inspect.signature(member).parameters)[1:]  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return f"`{name}`"
    return f"`{name}({', '.join(params)})`"


def placement_effect_fields() -> list[tuple[str, str]]:
    """(field, comment) of PlacementEffect, in order, from its source."""
    source = inspect.getsource(view.PlacementEffect)
    return re.findall(r"^\s+(\w+): [^#\n]+#\s*(.+)$", source, flags=re.MULTILINE)


def reference() -> str:
    """The generated block (markers included)."""
    lines = [START, "", "| member | what it gives |", "|---|---|"]
    attributes = {
        "rules": "the game's rule options (`Rules`)",
        "seat": "the seat this view belongs to",
        "rng": "this seat's own seeded random stream, a `random.Random` (`below(n)` too)",
    }
    members = {}  # the class's own and inherited members (GameState shares a few)
    for cls in reversed(view.GameView.__mro__[:-1]):
        members.update(vars(cls))
    for name, member in sorted(members.items()):
        if name.startswith("_"):
            continue
        text = attributes.get(name) or _summary(member) or "-"
        lines.append(f"| {_signature(name, member)} | {text.replace('|', '/')} |")
    lines += [
        "",
        "`placement_effect(p)` returns a `PlacementEffect`, a named tuple of:",
        "",
        "| field | meaning |",
        "|---|---|",
    ]
    lines += [f"| `{f}` | {c} |" for f, c in placement_effect_fields()]
    lines += ["", END]
    return "\n".join(lines)


def updated(text: str) -> str:
    """``text`` with its generated block replaced (appended when it has none)."""
    block = reference()
    if START in text and END in text:
        head, rest = text.split(START, 1)
        return head + block + rest.split(END, 1)[1]
    return text.rstrip("\n") + "\n\n" + block + "\n"


def main(argv: list[str]) -> int:
    text = DOC.read_text(encoding="utf-8")
    new = updated(text)
    if "--check" in argv:
        if new != text:
            print(f"{DOC} is out of date: run python tools/gen_strategy_docs.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
