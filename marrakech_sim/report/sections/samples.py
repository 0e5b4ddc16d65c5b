"""Samples of whole blocks, for the parts of the report that read every seat row or move."""

from __future__ import annotations

import duckdb
import pandas as pd


def make_sample(con: duckdb.DuckDBPyConnection, name: str, max_games: int, total_games: int) -> int:
    """Temp table ``name`` of the games of whole blocks, about ``max_games`` games.

    Every match keeps the same fraction of its blocks (its first ones by block id), so the
    sample's mix of rule sets and line-ups is the run's (``total_games`` is the number of
    games; ``match_blocks`` holds each match's first blocks, those a sample can take, and
    its number of blocks ``nb``: report.sections.data). The table has the
    games' columns :func:`sample_frames` reads (game_id, block, match_id, ruleset, players,
    turns, end_reason, tie_broken, error). Returns the games sampled.
    """
    frac = 1.0 if total_games <= max_games else max_games / total_games
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE {name} AS
            WITH r AS (SELECT block, nb,
                              row_number() OVER (PARTITION BY match_id ORDER BY block) AS i
                       FROM match_blocks),
                 keep AS (SELECT block FROM r WHERE i <= ceil({frac} * nb))
            -- the self-play matches (if the report listed them) are player models of
            -- their own: no sample of the study's mix takes them
            SELECT g.game_id, g.block, g.match_id, g.ruleset, g.players, g.turns, g.end_reason,
                   g.tie_broken, g.error
            FROM games g SEMI JOIN keep USING (block)
            {without_self_play(con)}"""
    )
    got = con.execute(f"SELECT count(*) FROM {name}").fetchone()
    assert got is not None
    return int(got[0])


def without_self_play(con: duckdb.DuckDBPyConnection) -> str:
    """The WHERE clause that leaves the table ``self_play_matches`` out, when it exists."""
    found = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'self_play_matches'"
    ).fetchone()
    if not found or not found[0]:
        return ""
    return "WHERE g.match_id NOT IN (SELECT match_id FROM self_play_matches)"


def sample_frames(con: duckdb.DuckDBPyConnection, sample: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    games = con.execute(
        f"""SELECT game_id, match_id, ruleset, players, turns, end_reason, tie_broken, error, block
            FROM {sample} ORDER BY game_id"""
    ).df()
    seats = con.execute(
        f"""SELECT game_id, seat, strategy, dirhams, score, rank, win_share, eliminated_turn
            FROM seats SEMI JOIN {sample} USING (game_id) ORDER BY game_id, seat"""
    ).df()
    return games, seats
