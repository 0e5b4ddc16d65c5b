"""The tune report's confirmation tables: the interval printed is the one the verdict uses."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from marrakech_sim.design.tune import Search, SeatEffects, equivalence, verdict_level
from marrakech_sim.design.tune_report import tune_markdown
from marrakech_sim.design.tuning import Replay, Tuned, TuneResult, tune_config_from_dict

ROW = re.compile(
    r"^\| (\d) \| \d+ \| [+-]\d+\.\d\d \| \[([+-]\d+\.\d\d), ([+-]\d+\.\d\d)\] \| "
    r"[^|]+ \| (yes|no) \|$"
)


def _draws(effects_pp: np.ndarray, games: int, reps: int, seed: int) -> list[SeatEffects]:
    """`reps` confirmations of `games` single-game blocks with the given true effects."""
    p = 1.0 / len(effects_pp) + effects_pp / 100.0
    out = []
    for c in np.random.default_rng(seed).multinomial(games, p, size=reps):
        share = c / games
        cov = (np.diag(share) - np.outer(share, share)) / (games - 1)
        out.append(
            SeatEffects(
                (30,) * len(p),
                tuple(float(v) for v in 100 * (share - 1 / len(p))),
                tuple(tuple(float(v) for v in row) for row in 1e4 * cov),
                games,
                games,
            )
        )
    return out


# seat 1 close enough to the 1 pp margin (se about 0.22 pp) that its verdict goes both ways
NEAR = _draws(np.array([0.55, -0.15, -0.2, -0.2]), 40_000, 300, 7)


def test_every_verdict_is_its_interval_inside_the_margin() -> None:
    """For every seat of 300 four-seat confirmations, fair is exactly "the verdict's
    interval lies inside +-margin", that interval is effect +- t(1 - alpha/k) se (level
    1 - 2 alpha/k = 97.5%), and fair agrees with the TOST p-value below alpha/k."""
    margin, alpha = 1.0, 0.05
    t = sps.t.ppf(1 - alpha / 4, 40_000 - 1)
    assert verdict_level(alpha, 4) == pytest.approx(0.975)
    seen = set()
    for effects in NEAR:
        for v, se in zip(equivalence(effects, margin, alpha), effects.se_pp, strict=True):
            assert v.hi_pp - v.effect_pp == pytest.approx(t * se)
            assert v.effect_pp - v.lo_pp == pytest.approx(t * se)
            assert v.fair == (-margin < v.lo_pp and v.hi_pp < margin)
            assert v.fair == (v.p_equivalence < alpha / 4)
            seen.add(v.fair)
    assert seen == {True, False}


def _result(tmp_path: Path) -> TuneResult:
    """A report's worth of 4-seat confirmations (no games: NEAR as the confirmed effects)."""
    config = tune_config_from_dict(
        {"seed": 1, "rulesets": {"four": {}}, "strategies": {"greedy": {}}}
    )
    search = Search((30,) * 4, (), (30,) * 4, (0.0,) * 3, (-1.0,) * 3, (1.0,) * 3, 0.5, None, 0)
    tuned = []
    for effects in NEAR:
        replay = Replay("greedy", effects, tuple(equivalence(effects, config.margin_pp)))
        tuned.append(Tuned("greedy", "four", search, 1, (replay,), 0, 40_000, True, None))
    return TuneResult(config, tmp_path, tuple(tuned), 0)


def test_the_report_prints_the_verdicts_interval_and_its_level(tmp_path: Path) -> None:
    """Every seat row of the confirmation tables says "yes" exactly when its printed
    interval lies inside +-1 pp (rows with a bound printed at +-1.00, where rounding
    decides, are left out), and the tables name the level: 97.5% with 4 seats."""
    text = tune_markdown(_result(tmp_path))
    assert text.count("| 97.5% interval (the verdict's) |") == len(NEAR)
    assert "97.5% with 4 players" in text
    rows = [m.groups() for line in text.splitlines() if (m := ROW.match(line))]
    assert len(rows) == 4 * len(NEAR)
    checked = set()
    for _, lo, hi, fair in rows:
        if abs(float(lo)) == 1.0 or abs(float(hi)) == 1.0:
            continue
        inside = float(lo) > -1.0 and float(hi) < 1.0
        assert (fair == "yes") == inside, (lo, hi, fair)
        checked.add(fair)
    assert checked == {"yes", "no"}
