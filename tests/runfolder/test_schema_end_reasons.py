"""The end reason is one type from the rules kernel to the games table."""

from __future__ import annotations

from marrakech_sim import EndReason, runfolder
from marrakech_sim.rules import core as k


def test_end_reasons_are_the_kernel_codes_and_the_table_labels() -> None:
    """EndReason's values are the kernel's END_* codes and its labels the end_reason
    strings the games table writes, code for code."""
    assert [int(r) for r in EndReason] == [
        k.END_NONE,
        k.END_RUGS_EXHAUSTED,
        k.END_ONE_LEFT,
        runfolder.END_ERROR_CODE,
    ]
    assert runfolder.END_REASONS == ("none", "rugs_exhausted", "one_left", "error")
    for code, label in enumerate(runfolder.END_REASONS):
        assert EndReason(code).label == label
        assert EndReason.from_label(label) is EndReason(code)
