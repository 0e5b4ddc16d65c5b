"""Statistics for tournament results: tables in (pandas DataFrames), tables out.

Inputs are the ``games`` and ``seats`` tables of LOG_FORMAT.md plus a ``block`` column
on ``games`` (games of a block share dice and differ only in seating), and for per-turn
metrics a ``turn_scores`` table (game_id, turn, seat, score). Games that ended in an
error are left out of every balance statistic and counted by :func:`fault_counts`.
Every output row carries the counts it rests on (``n_games``, ``n_blocks``, ...).

Modules::

    estimators     one estimator per statistic, from block totals: the clustered ratio,
                   the clustered (paired) difference, the equal-share and trend tests,
                   the sequential test of the stopping rule
    intervals      Wilson intervals, block-aware rate and mean intervals
    winrates       win rates per strategy / line-up, head-to-head, fault counts
    seats          seat advantage: shares per seat, equal-share and trend tests, ties
    ratings        Plackett-Luce ratings with a seat term, Elo conversion
    variants       per-game metrics, per-rule-set means, rule-set comparisons (Holm)
    power          smallest detectable effects, games for 80% power, study sizes
    distributions  summaries of margins and lengths, score over turns

Uncertainty: games of a block share dice, so every interval and test is computed from
block totals with a cluster-robust (sandwich) variance - not a bootstrap: deterministic,
one pass over millions of games, checked in the tests against statsmodels'
``cov_type='cluster'`` and by null-calibration studies. Rates get Wilson intervals at
the effective number of games; tests with few blocks use F / t references.

Libraries, and why:

* statsmodels: ``proportion_confint(method='wilson')`` for rate intervals,
  ``multipletests(method='holm')`` for the multiple-comparison correction,
  ``NormalIndPower`` and ``proportion_effectsize`` for sample sizes - the standard,
  tested implementations.
* scipy: ``scipy.stats`` distributions (chi-square, normal) and ``chisquare``;
  ``scipy.optimize.minimize`` (trust-exact, exact Hessian) and ``scipy.sparse`` for the
  Plackett-Luce fit.
* Block-clustered (sandwich) variances are written out here: from block totals they are
  a few array operations, where statsmodels' clustered OLS would need one row per seat
  and game; the tests check them against statsmodels' ``cov_type='cluster'``.
* choix fits Plackett-Luce but has no seat covariate, so it is not used at run time;
  the tests use it as the reference for the fit without seat term.
"""

from marrakech_sim.errors import StatsInputError
from marrakech_sim.stats import estimators
from marrakech_sim.stats._core import balance_games
from marrakech_sim.stats.distributions import (
    length_summary,
    margin_summary,
    score_over_turns,
    summarize,
)
from marrakech_sim.stats.estimators import clustered_difference, equal_share_tests
from marrakech_sim.stats.intervals import wilson_interval
from marrakech_sim.stats.power import (
    flag_underpowered,
    plan_seat_advantage,
    plan_variant_difference,
    prospective_power,
)
from marrakech_sim.stats.ratings import RatingFit, comparable_strategies, fit_ratings, to_elo
from marrakech_sim.stats.seats import (
    seat_block_totals,
    seat_tests,
    seat_win_shares,
    tie_summary,
)
from marrakech_sim.stats.variants import (
    LEAD_METRICS,
    VARIANT_METRICS,
    compare_variants,
    game_metrics,
    lead_metrics,
    variant_summary,
)
from marrakech_sim.stats.winrates import (
    LINEUP_SEP,
    fault_counts,
    head_to_head,
    lineup_win_rates,
    win_rates,
    with_lineup,
)

__all__ = [
    "LEAD_METRICS",
    "LINEUP_SEP",
    "VARIANT_METRICS",
    "RatingFit",
    "StatsInputError",
    "balance_games",
    "clustered_difference",
    "comparable_strategies",
    "compare_variants",
    "equal_share_tests",
    "estimators",
    "fault_counts",
    "fit_ratings",
    "flag_underpowered",
    "game_metrics",
    "head_to_head",
    "lead_metrics",
    "length_summary",
    "lineup_win_rates",
    "margin_summary",
    "plan_seat_advantage",
    "plan_variant_difference",
    "prospective_power",
    "score_over_turns",
    "seat_block_totals",
    "seat_tests",
    "seat_win_shares",
    "summarize",
    "tie_summary",
    "to_elo",
    "variant_summary",
    "wilson_interval",
    "win_rates",
    "with_lineup",
]
