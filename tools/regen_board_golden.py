"""Regenerate tests/golden/board.png: the board picture tests/show/test_show.py compares with.

    .venv/bin/python tools/regen_board_golden.py

The position is tests/show/test_show.py's FIXED (written there as notation) with the turn
described in its panel; the picture is the PNG `marrakech replay --png` writes. Look at
the new picture before committing it: the test only says that the drawing did not change.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "show")]

from test_show import BOARD, fixed_scene  # noqa: E402

from marrakech_sim.show.animate import png_bytes  # noqa: E402

if __name__ == "__main__":
    BOARD.write_bytes(png_bytes(fixed_scene()))
    print(f"wrote {BOARD}")
