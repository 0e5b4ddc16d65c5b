"""Every table of the report, section by section (`compute_tables`)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb
import numpy as np

from marrakech_sim import runfolder
from marrakech_sim.report.load import RunInfo
from marrakech_sim.report.pergame import build_per_game, load_games, plan_slices, scan_names
from marrakech_sim.report.sections.choices import choices_table
from marrakech_sim.report.sections.data import DataTotals, data_tables
from marrakech_sim.report.sections.power import power_table
from marrakech_sim.report.sections.ratings import rating_tables
from marrakech_sim.report.sections.response import response_tables
from marrakech_sim.report.sections.seats import SeatTotals, seat_tables
from marrakech_sim.report.sections.skill import BLOCK_TABLE as SKILL_BLOCKS
from marrakech_sim.report.sections.skill import SkillTotals, skill_tables, study_levels
from marrakech_sim.report.sections.variants import VariantTotals, keyed_blocks, variant_tables
from marrakech_sim.report.sections.winrates import WinRateTotals, win_rate_tables
from marrakech_sim.report.sizes import MOVES_GAMES, RATING_GAMES
from marrakech_sim.report.tables import ReportTables, is_self_play, subset
from marrakech_sim.run.config import DEFAULT_MATTERS_PP, MARGINS, ReportOptions
from marrakech_sim.stats.intervals import (
    DEFAULT_LEVEL,
)


def compute_tables(
    con: duckdb.DuckDBPyConnection,
    runs: list[RunInfo],
    rating_games: int = RATING_GAMES,
    moves_games: int = MOVES_GAMES,
    level: float = DEFAULT_LEVEL,
) -> ReportTables:
    """Every table of the report, section by section.

    The games are read one slice of whole blocks at a time (``pergame.plan_slices``); each
    section adds the slice's block totals to its sums, and estimates once every slice is
    in. Memory holds one slice's arrays, whatever the number of games.
    """
    out = ReportTables()
    steps = (
        "games",
        "data",
        "per_game",
        "win_rates",
        "seats",
        "variants",
        "choices",
        "skill",
        "ratings",
        "response",
    )
    seconds = dict.fromkeys(steps, 0.0)
    paired = [r.index for r in runs if r.manifest.config.get("common_seeds")]

    @contextmanager
    def clock(name: str) -> Iterator[None]:
        start = time.perf_counter()
        yield
        seconds[name] += time.perf_counter() - start

    with clock("games"):
        rulesets, names = scan_names(runs)
        slices = plan_slices(runs)
    data = DataTotals(runs, rulesets)
    wins = WinRateTotals(names, rulesets)
    seats = SeatTotals(rulesets, names)
    variants = VariantTotals(rulesets, con if paired else None)
    skill = SkillTotals(names, rulesets, con if paired else None)
    self_play_matches: set[int] = set()
    for part in slices:
        with clock("games"):
            games = load_games(part, rulesets)
        with clock("data"):
            data.add(games)
        with clock("per_game"):
            pg = build_per_game(games, part, names)
            # self-play games are player models of their own (the skill section's, one
            # model each); the sections on the study's mix read its mixed games only
            alone = is_self_play(pg)
            mixed = subset(pg, ~alone)
            out.facts.n_mixed_games += int((~alone).sum())
            self_play_matches.update(np.unique(pg.match_id[alone]).tolist())
        del games  # build_per_game took its arrays
        with clock("win_rates"):
            wins.add(mixed)
        with clock("seats"):
            seats.add(mixed)
        with clock("variants"):
            variants.add(mixed)
        with clock("skill"):
            skill.add(pg)
        del pg, mixed
    sample_games = max(rating_games, moves_games)
    with clock("data"):
        data_tables(con, out, data, slices, sample_games)
    # the samples of whole blocks (ratings, moves) leave the self-play matches out
    con.execute("CREATE OR REPLACE TEMP TABLE self_play_matches (match_id BIGINT)")
    if self_play_matches:
        con.executemany(
            "INSERT INTO self_play_matches VALUES (?)", [[m] for m in sorted(self_play_matches)]
        )
    with clock("win_rates"):
        win_rate_tables(con, out, level, wins)
    with clock("seats"):
        seat_tables(out, level, seats)
    with clock("variants"):
        kept_share = not all(runfolder.every_move(r.manifest) for r in runs)
        variant_tables(con, out, moves_games, level, variants, paired, kept_share)
    with clock("choices"):  # replays a sample of the mixed games: after self_play_matches
        out.tables.choices = choices_table(con, runs, level=level, moves_kept_share=kept_share)
    with clock("ratings"):
        rating_tables(con, out, rating_games, level)
    with clock("skill"):  # after the ratings: a skill level's strength is its Elo
        keyed = keyed_blocks(con, paired, SKILL_BLOCKS) if skill.blocks is not None else None
        skill_tables(out, level, skill, *study_levels([r.manifest for r in runs]), keyed)
    with clock("response"):  # a sweep's response curves (none without a sweep)
        response_tables(con, out, runs, level)
    out.facts.report_options = report_options(runs)
    out.tables.power = power_table(out)
    out.facts.seconds = {name: round(v, 2) for name, v in seconds.items()}
    out.facts.slices = len(slices)
    return out


def report_options(runs: list[RunInfo]) -> ReportOptions:
    """What matters to the designer: the first run's `[report]` table that has one, else
    the defaults (run.config.ReportOptions)."""
    for run in runs:
        config = run.manifest.config
        raw = config.get("report") if isinstance(config, dict) else None
        if isinstance(raw, dict):
            margins = raw.get("margins", {})
            return ReportOptions(
                float(raw.get("matters_pp", DEFAULT_MATTERS_PP)),
                tuple((str(k), float(v)) for k, v in {**MARGINS, **margins}.items()),
            )
    return ReportOptions()
