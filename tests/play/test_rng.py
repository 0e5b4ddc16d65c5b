"""The seeded streams: exact uniformity of below(n), its bounds, reproducibility."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from marrakech_sim.play.rng import Rng, rng_below, rng_next


@pytest.mark.parametrize("n", [1, 2, 3, 6, 7, 12, 1000])
def test_below_is_uniform(n: int) -> None:
    rng = Rng(11, 3)
    draws = [rng.below(n) for _ in range(20 * n + 2000)]
    assert min(draws) >= 0 and max(draws) < n
    if n > 1:
        counts = np.bincount(draws, minlength=n)
        assert stats.chisquare(counts).pvalue > 1e-4


def test_below_rejects_exactly_the_biased_draws() -> None:
    """Lemire's method: with n = 3 * 2**30, a quarter of the 32-bit draws are rejected;
    the accepted ones map to [0, n) uniformly (checked on the top bits' thirds)."""
    n = 3 << 30
    state = np.array([5], dtype=np.uint64)
    copy = state.copy()
    draws = [int(rng_below(state, n)) for _ in range(3000)]
    used = 0
    while copy[0] != state[0]:  # count the raw draws consumed
        rng_next(copy)
        used += 1
    assert 3000 < used < 3000 * 1.5  # about 4/3 draws per value
    thirds = np.bincount([d * 3 // n for d in draws], minlength=3)
    assert stats.chisquare(thirds).pvalue > 1e-4


def test_below_large_n() -> None:
    rng = Rng(2, 0)
    n = (1 << 40) + 7
    draws = [rng.below(n) for _ in range(2000)]
    assert min(draws) >= 0 and max(draws) < n
    assert max(draws) > n // 2  # the top bits are used


@pytest.mark.parametrize("n", [0, -3])
def test_below_needs_a_positive_bound(n: int) -> None:
    with pytest.raises(ValueError, match=f"got {n}"):
        Rng(1).below(n)


def test_streams_repeat_and_differ() -> None:
    def draws(seed: int, stream: int) -> list[int]:
        rng = Rng(seed, stream)
        return [rng.below(10**9) for _ in range(5)]

    assert draws(7, 1) == draws(7, 1)
    assert draws(7, 1) != draws(7, 2)
    assert draws(7, 1) != draws(8, 1)


def test_random_api_draws_through_below() -> None:
    """choice, randrange and shuffle (random.Random's API, as strategy authors use it)
    take their integers from below: the same stream gives the same picks."""
    seq = tuple("abcdefg")
    a, b = Rng(4, 9), Rng(4, 9)
    assert [a.choice(seq) for _ in range(50)] == [seq[b.below(len(seq))] for _ in range(50)]
    assert a.randrange(10, 20) == 10 + b.below(10)
    counts = np.bincount([a.randrange(5) for _ in range(5000)], minlength=5)
    assert stats.chisquare(counts).pvalue > 1e-4
    items = list(range(10))
    a.shuffle(items)
    assert sorted(items) == list(range(10))
