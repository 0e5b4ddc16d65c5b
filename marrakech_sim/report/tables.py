"""The report's tables, computed from sums of block totals added slice by slice.

Scale. A run of 10 million games has 40 million seat rows and half a billion move rows;
neither goes into pandas, nor whole into numpy. The games and seats are read a *slice* of
whole blocks at a time into numpy arrays (``report.pergame``: about a million games, one
entry per game, seats side by side, sorted by block). Each section reduces a slice to
*block totals* (one value per group and block, by ``bincount`` over chunks of whole
blocks) and adds them into *sums* per group that do not grow with the games: for a ratio
the sums of ``estimators.SUMS`` (sum y, sum m, sum y^2, sum y m, sum m^2, blocks), for the
equal-share and trend tests ``estimators.SHARE_SUMS`` (with the seats' cross products),
for the distributions exact histograms (margins and lengths are integers; the quantiles
are read from them as ``np.quantile`` interpolates). Once every slice is in, the one
estimator of each statistic in ``marrakech_sim.stats.estimators`` works from the sums: the
cluster-robust ratio and its intervals, the equal-share and trend tests, the difference of
means behind ``stats.compare_variants``. Blocks never span two slices
(``pergame.plan_slices``), so block totals are whole; the tests check each table against
the stats function on the same games, and against the report read in slices of one part.

Memory (``benchmarks/bench_report.py``, peak RSS of the whole report): 921, 944 and 936 MiB
at 1, 10 and 30 million games (README, Performance), most of it the rating fit's sample.
What still grows with the run: a row per match (its counts and first game). When some
run is played with ``common_seeds``, its variants are compared block pair by block pair
(``estimators.clustered_difference_from_clusters``), which needs every block's totals per
rule set and metric: they go into a DuckDB table, paired there by seed, so DuckDB's
memory limit caps them and the rest spills to disk (1,077 / 1,750 / 1,744 MiB peak at 1,
10 and 30 million games, ``bench_report.py --paired``).

A run whose blocks mix matches or rule sets (not written by this program's runner) is
refused (:func:`check_block_layout`).

Two parts work on a sample of whole blocks instead (every block of a match is equally
likely; the sample keeps each match's share), read through DuckDB: the Plackett-Luce fit
(``stats.fit_ratings`` needs one row per seat) and everything read from the moves table
(score over turns, lead changes, comebacks). Their tables carry the number of games
they rest on like every other table, and the report says when that is a sample.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np
import pandas as pd

from marrakech_sim import stats
from marrakech_sim.errors import StatsInputError
from marrakech_sim.report.pergame import CHUNK, PerGame
from marrakech_sim.run.config import ReportOptions
from marrakech_sim.stats import estimators

TURN_METRICS = stats.LEAD_METRICS  # read from a sample's moves
GAME_METRICS = tuple(m for m in stats.VARIANT_METRICS if m not in TURN_METRICS)


QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def _frame() -> pd.DataFrame:
    return pd.DataFrame()


@dataclass
class Tables:
    """Every table of the report, one field per CSV it writes (``<field>.csv``, documented
    in docs/report-tables.md), in the order they are computed and written.

    A table every report has starts empty and is set by its section; one a report may not
    have (no moves, nothing to rate, a single rating group) is None until then, and no CSV
    is written for it.
    """

    # the data (sections.data)
    runs: pd.DataFrame = field(default_factory=_frame)
    rulesets: pd.DataFrame = field(default_factory=_frame)
    lineups: pd.DataFrame = field(default_factory=_frame)
    faults: pd.DataFrame = field(default_factory=_frame)
    fault_kinds: pd.DataFrame = field(default_factory=_frame)
    # win rates (sections.winrates)
    win_rates: pd.DataFrame = field(default_factory=_frame)
    lineup_win_rates: pd.DataFrame = field(default_factory=_frame)
    head_to_head: pd.DataFrame = field(default_factory=_frame)
    # seat advantage (sections.seats)
    seat_shares: pd.DataFrame = field(default_factory=_frame)
    seat_tests: pd.DataFrame = field(default_factory=_frame)
    ties: pd.DataFrame = field(default_factory=_frame)
    seat_lineups: pd.DataFrame = field(default_factory=_frame)
    # distributions and variants (sections.distributions, sections.variants)
    histograms: pd.DataFrame = field(default_factory=_frame)
    distributions: pd.DataFrame = field(default_factory=_frame)
    score_over_turns: pd.DataFrame | None = None  # a run with moves only
    variant_summary: pd.DataFrame = field(default_factory=_frame)
    variant_comparison: pd.DataFrame = field(default_factory=_frame)
    choices: pd.DataFrame = field(default_factory=_frame)
    # ratings (sections.ratings): absent when nothing can be rated
    ratings: pd.DataFrame | None = None
    seat_effects: pd.DataFrame | None = None
    rating_pooling: pd.DataFrame | None = None  # two rating groups or more
    ratings_pooled: pd.DataFrame | None = None  # when the pooling test does not reject
    # skill levels and player models (sections.skill)
    skill_seats: pd.DataFrame = field(default_factory=_frame)
    skill_strength: pd.DataFrame = field(default_factory=_frame)
    skill_steps: pd.DataFrame = field(default_factory=_frame)
    skill_trends: pd.DataFrame = field(default_factory=_frame)
    skill_variants: pd.DataFrame = field(default_factory=_frame)
    skill_metric_variants: pd.DataFrame = field(default_factory=_frame)
    decides: pd.DataFrame = field(default_factory=_frame)
    # a sweep's response curves (sections.response): absent without a sweep
    response_points: pd.DataFrame | None = None
    response_curves: pd.DataFrame | None = None
    response_fits: pd.DataFrame | None = None
    response_metrics: pd.DataFrame | None = None
    # power (sections.power)
    power: pd.DataFrame = field(default_factory=_frame)
    # computed by the sections once the tables above are in (build.SECTIONS order)
    findings: pd.DataFrame | None = None  # sections.summary
    plan: pd.DataFrame | None = None  # sections.power
    response_verdicts: pd.DataFrame | None = None  # sections.response, a sweep's

    def items(self) -> list[tuple[str, pd.DataFrame]]:
        """(name, table) of every table the report has, in field order: its CSV files."""
        got = ((f.name, getattr(self, f.name)) for f in fields(self))
        return [(name, table) for name, table in got if table is not None]

    def names(self) -> list[str]:
        """The names of the tables the report has (its CSV files, less ``.csv``)."""
        return [name for name, _ in self.items()]


def or_empty(table: pd.DataFrame | None) -> pd.DataFrame:
    """``table``, or an empty DataFrame for a table the report does not have (None)."""
    return pd.DataFrame() if table is None else table


@dataclass
class Facts:
    """Facts about the data that the sections read (and `marrakech report` prints)."""

    n_games: int = 0  # every game of the runs, error games included
    n_balance_games: int = 0  # the games that ended normally
    n_mixed_games: int = 0  # games between different strategies (the study's mix)
    n_blocks: int = 0
    #: each rule set's label -> its options (rule-set key -> value), as the manifests hold
    ruleset_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    moves_games: int = 0  # games of the per-turn sample (0: no moves)
    moves_sampled: bool | None = None  # the per-turn sample is not every game (None: no moves)
    moves_replayed: bool = False  # some run stores only the replay columns: its sample replayed
    rating_games: int = 0  # games of the rating sample
    rating_sampled: bool = False
    rating_left_out: int | None = None  # games of strategies no fit could rate
    rating_note: str | None = None  # why a group was not rated, or was refitted
    baselines: dict[str, str] = field(default_factory=dict)  # rule set -> its baseline's
    report_options: ReportOptions = field(default_factory=ReportOptions)
    seconds: dict[str, float] = field(default_factory=dict)  # per step of the computation
    slices: int = 0  # slices of whole blocks the games were read in

    def as_dict(self) -> dict[str, Any]:
        """The facts by name (None ones left out), as `report.build.ReportResult` has them."""
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None
        }


@dataclass
class ReportTables:
    """Every table of the report and a few facts about the data."""

    tables: Tables = field(default_factory=Tables)
    facts: Facts = field(default_factory=Facts)
    rating_fit: stats.RatingFit | None = None


def small_unique(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, return_inverse=True)`` for non-negative keys of a small range."""
    if not len(key) or int(key.max()) > 4 * len(key) + (1 << 16):
        return np.unique(key, return_inverse=True)
    seen = np.bincount(key) > 0
    keys = np.flatnonzero(seen)
    index = np.cumsum(seen) - 1
    return keys, index[key]


def block_chunks(pg: PerGame) -> list[slice]:
    """Slices of about ``CHUNK`` games that start and end at block boundaries."""
    n, size = len(pg), CHUNK
    if not n:
        return []
    cuts = np.searchsorted(pg.block_index, pg.block_index[np.arange(size, n, size)])
    edges = np.unique(np.r_[0, cuts, n])
    return [slice(int(a), int(b)) for a, b in itertools.pairwise(edges)]


def sums_frame(keys: dict[str, list[Any]], sums: dict[str, Any]) -> pd.DataFrame:
    """A block ratio table (``stats.estimators.ratio_from_sums``) from sums of block totals."""
    s = {c: np.atleast_1d(sums[c]) for c in estimators.SUMS}
    cols = estimators.ratio_from_sums(
        s["total"], s["n"], s["syy"], s["sym"], s["smm"], s["n_blocks"], sums.get("shift", 0.0)
    )
    return pd.DataFrame({**keys, **cols})


def add_sums(into: dict[Any, dict[str, Any]], key: Any, sums: dict[str, Any]) -> None:
    """Add ``sums`` to ``into[key]``: sums of block totals over disjoint blocks add up.

    A ``shift`` (``estimators.ratio_sums``) is not summed: sums added to one key share it.
    """
    if key in into:
        got = into[key]
        into[key] = {name: v if name == "shift" else got[name] + v for name, v in sums.items()}
    else:
        into[key] = dict(sums)


def check_block_layout(pg: PerGame) -> None:
    """Raise StatsInputError unless every block holds games of one match (one rule set).

    This program's runner writes blocks that way (`run.plan`); the report's reductions
    rely on it, and a run whose blocks mix matches was not written by it.
    """
    block, mid = pg.block, pg.match_id
    same = block[1:] == block[:-1]
    bad = np.flatnonzero(same & ((mid[1:] != mid[:-1]) | (pg.ruleset[1:] != pg.ruleset[:-1])))
    if len(bad):
        raise StatsInputError(
            f"block {int(block[bad[0]])} holds games of two matches or rule sets "
            f"(match ids {int(mid[bad[0]])} and {int(mid[bad[0] + 1])}): not the block layout "
            "this program writes (one match per block, run.plan)"
        )


def is_self_play(pg: PerGame) -> np.ndarray:
    """Per game: every seat plays one strategy (a player model of its own)."""
    players = pg.players.astype("int64")
    first = pg.strategy[0]
    alone: np.ndarray = first >= 0
    for seat in range(1, pg.seats):
        alone &= (pg.strategy[seat] == first) | (seat >= players)
    return alone


def subset(pg: PerGame, keep: np.ndarray) -> PerGame:
    """The games of ``pg`` where ``keep`` (whole blocks: a block is one match), with the
    blocks renumbered."""
    if keep.all():
        return pg
    cut: dict[str, Any] = {}
    for f in fields(pg):
        value = getattr(pg, f.name)
        if isinstance(value, np.ndarray):
            cut[f.name] = value[..., keep] if value.ndim == 2 else value[keep]
    _, block_index = np.unique(cut["block_index"], return_inverse=True)
    n_blocks = int(block_index.max()) + 1 if len(block_index) else 0
    cut["block_index"] = block_index.astype(pg.block_index.dtype)
    return replace(pg, **cut, n_blocks=n_blocks)
