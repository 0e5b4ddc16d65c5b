"""Regenerate tests/golden/perft.json: perft counts the engine must keep reproducing.

    .venv/bin/python tools/regen_perft_goldens.py [--reference-seconds S]

Cases: the start positions of 2, 3 and 4 players, standard and "orient at end" (RULES.md
section 8), and six mid-game positions reached by seeded random play (written into the
file as notation, so they no longer depend on how they were found). Depths are chosen so
that each count takes the engine well under 2 s.

How the counts were cross-checked: every case is also counted by `tests/reference.py`'s
`ref_perft`, the independent plain-Python reading of RULES.md (tests/rules/test_crosscheck.py
says how it was written), at the deepest depth it finishes within --reference-seconds
(default 20 s; at least depth 3); the engine must agree there, at every depth from 1 to
that one. The depth and count so checked are stored with each case
(`reference_depth`, `reference_count`); the golden count at the full depth then rests on
the engine, which agrees with the reference at every shallower depth. The script refuses
to write the file on any disagreement.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import reference  # noqa: E402

from marrakech_sim import GameState, Rules, perft  # noqa: E402

OUT = ROOT / "tests" / "golden" / "perft.json"

# (name, rule options, depth); depths sized for < ~2 s each in the engine
START_CASES = [
    ("start-2p", {"players": 2}, 11),
    ("start-2p-orient-at-end", {"players": 2, "orient_at_end": True}, 11),
    ("start-3p", {"players": 3}, 9),
    ("start-3p-orient-at-end", {"players": 3, "orient_at_end": True}, 9),
    ("start-4p", {"players": 4}, 10),
    ("start-4p-orient-at-end", {"players": 4, "orient_at_end": True}, 9),
    # RULES.md section 8 seat_dirhams: purses so small that the second player to pay is
    # bankrupt within the depth
    ("start-3p-seat-dirhams", {"players": 3, "seat_dirhams": [0, 1, 2]}, 9),
]
# (name, rule options, seed, random actions played from the start, depth)
MID_CASES = [
    ("mid-4p", {"players": 4}, 1, 60, 9),
    ("mid-3p-orient-at-end", {"players": 3, "orient_at_end": True}, 2, 45, 9),
    ("mid-2p", {"players": 2}, 3, 70, 10),
    ("mid-4p-poor", {"players": 4, "starting_dirhams": 3}, 4, 40, 9),
    (
        "mid-3p-own-cover-visible",
        {"players": 3, "own_rugs_fully_coverable": True, "tie_break": "visible"},
        5,
        90,
        9,
    ),
    ("mid-2p-board9-die", {"players": 2, "board_size": 9, "die_faces": [1, 2, 3, 5, 8]}, 6, 50, 9),
    ("mid-4p-seat-dirhams", {"players": 4, "seat_dirhams": [1, 6, 2, 9]}, 7, 30, 9),
]


def mid_position(options: dict, seed: int, plies: int) -> str:
    """The notation after `plies` uniformly random actions from the start (stops at the end)."""
    rng = random.Random(seed)
    state = GameState.start(Rules.from_dict(options))
    for _ in range(plies):
        if state.is_over:
            break
        state = state.apply(rng.choice(state.legal_actions()))
    return state.to_notation()


def reference_check(options: dict, notation: str | None, seconds: float) -> tuple[int, int]:
    """(depth, count): the deepest reference perft within `seconds`; engine agrees at each."""
    ref_rules = reference.Rules(**options)
    eng_rules = Rules.from_dict(options)
    if notation is None:
        ref_state, eng_state = reference.GameState.start(ref_rules), GameState.start(eng_rules)
    else:
        ref_state = reference.GameState.from_notation(notation, ref_rules)
        eng_state = GameState.from_notation(notation, eng_rules)
    depth, count, spent = 0, 1, 0.0
    while depth < 3 or spent < seconds / 4:  # the next depth costs ~4-30x the last
        started = time.perf_counter()
        ref_count = reference.perft(ref_state, depth + 1)
        spent = time.perf_counter() - started
        eng_count = perft(eng_state, depth + 1)
        if ref_count != eng_count:
            raise SystemExit(
                f"disagreement at depth {depth + 1} ({options}, {notation}): "
                f"reference {ref_count}, engine {eng_count}"
            )
        depth, count = depth + 1, ref_count
        if depth >= 12:
            break
    return depth, count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reference-seconds", type=float, default=20.0)
    parser.add_argument(
        "--only",
        action="append",
        metavar="NAME",
        help="recount only this case (repeatable); the others are kept from the file as they are",
    )
    args = parser.parse_args(argv)
    kept = {c["name"]: c for c in json.loads(OUT.read_text())["cases"]} if args.only else {}
    cases = []
    todo = [(name, opts, None, depth) for name, opts, depth in START_CASES]
    todo += [
        (name, opts, mid_position(opts, seed, plies), depth)
        for name, opts, seed, plies, depth in MID_CASES
    ]
    for name, options, notation, depth in todo:
        if args.only and name not in args.only and name in kept:
            cases.append(kept[name])
            continue
        rules = Rules.from_dict(options)
        state = (
            GameState.start(rules) if notation is None else GameState.from_notation(notation, rules)
        )
        started = time.perf_counter()
        count = perft(state, depth)
        took = time.perf_counter() - started
        ref_depth, ref_count = reference_check(options, notation, args.reference_seconds)
        print(
            f"{name}: depth {depth} -> {count} ({took:.2f} s); reference agrees to depth "
            f"{ref_depth} ({ref_count})",
            file=sys.stderr,
        )
        cases.append(
            {
                "name": name,
                "rules": options,
                "notation": state.to_notation(),
                "depth": depth,
                "count": count,
                "reference_depth": ref_depth,
                "reference_count": ref_count,
            }
        )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "about": "perft counts (RULES.md section 10); regenerate with "
        "tools/regen_perft_goldens.py, which also cross-checks tests/reference.py",
        "cases": cases,
    }
    OUT.write_text(json.dumps(document, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
