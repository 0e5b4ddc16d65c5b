"""Report section 4, ratings: a Plackett-Luce fit with a seat term."""

from __future__ import annotations

import duckdb

from marrakech_sim import stats
from marrakech_sim.report.sections.samples import make_sample, sample_frames
from marrakech_sim.report.tables import ReportTables


def rating_tables(
    con: duckdb.DuckDBPyConnection, out: ReportTables, max_games: int, level: float
) -> None:
    """Plackett-Luce ratings with a seat term on a whole-block sample (all games if small)."""
    n = make_sample(con, "rating_sample", max_games, out.facts["n_games"])
    out.facts["rating_games"] = n
    out.facts["rating_sampled"] = n < out.facts["n_games"]
    games, seats = sample_frames(con, "rating_sample")
    if (games["end_reason"] != "error").sum() == 0 or seats["strategy"].nunique() < 2:
        out.facts["rating_note"] = "fewer than two strategies or no games: nothing to rate"
        return
    fit = stats.fit_ratings(games, seats, level=level)
    if not fit.converged:
        fit = stats.fit_ratings(games, seats, level=level, l2=1e-3)
        out.facts["rating_note"] = (
            "the plain fit did not converge; refitted with a small ridge (l2 = 0.001)"
        )
    out.rating_fit = fit
    out.tables["ratings"] = fit.ratings
    out.tables["seat_effects"] = fit.seat_effects
