"""The balance report: tables agree with marrakech_sim.stats, files are complete and safe."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from report_runs import write_manifest, write_run, write_tables
from synthetic_games import combine_runs, make_run, make_turn_scores

from marrakech_sim import stats
from marrakech_sim.cli import main
from marrakech_sim.errors import RunFolderError, StatsInputError
from marrakech_sim.report import build_report, findings, fmt, pergame, tables
from marrakech_sim.report.build import SECTIONS, report_parts
from marrakech_sim.report.compute import compute_tables
from marrakech_sim.report.load import connect, open_runs
from marrakech_sim.report.sections import base
from marrakech_sim.report.sections.base import Context
from marrakech_sim.report.sections.variants import turn_scores_sql
from marrakech_sim.stats.seats import SEAT_SHARE_COLUMNS

EVIL = '<script>alert("x")</script>'
ODD_RULESET = "orient'at<end>"
STRATEGIES = {"alpha": 0.3, "beta": 0.0, EVIL: -0.2, "delta": 0.1, "eps & co": 0.0}


def _tables() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    g1, s1 = make_run(
        STRATEGIES,
        60,
        players=4,
        seat_effects=[0.3, 0, 0, 0],
        tie_rate=0.05,
        tie_break_rate=0.05,
        bankrupt_rate=0.05,
        error_rate=0.02,
        shared_dice=0.3,
        seed=1,
    )
    g2, s2 = make_run(
        STRATEGIES, 60, players=4, ruleset=ODD_RULESET, tie_rate=0.03, bankrupt_rate=0.1, seed=2
    )
    g3, s3 = make_run(
        STRATEGIES, 80, players=2, ruleset="two", seat_effects=[0.2, 0], tie_rate=0.05, seed=3
    )
    games, seats = combine_runs([(g1, s1), (g2, s2), (g3, s3)])
    return games, seats, make_turn_scores(games, seats, seed=4)


RULESETS = {
    "standard": {"players": 4},
    ODD_RULESET: {"players": 4, "orient_at_end": True},
    "two": {"players": 2},
}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    games, seats, turn_scores = _tables()
    return write_run(
        tmp_path_factory.mktemp("run") / "r1", games, seats, turn_scores, RULESETS, parts=3
    )


@pytest.fixture(scope="module")
def frames(run_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """games, seats and turn_scores as read back from the run folder."""
    runs = open_runs([run_dir])
    con = connect(runs)
    games = con.execute("SELECT * FROM games ORDER BY game_id").df()
    seats = con.execute("SELECT * FROM seats ORDER BY game_id, seat").df()
    con.execute("CREATE TEMP TABLE everything AS SELECT game_id, block FROM games")
    turn_scores = con.execute(turn_scores_sql(con, "everything")).df()
    con.close()
    return games, seats, turn_scores


@pytest.fixture(scope="module")
def report_tables(run_dir: Path):
    runs = open_runs([run_dir])
    con = connect(runs)
    rt = compute_tables(con, runs)
    con.close()
    return rt


@pytest.fixture(scope="module")
def built(run_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    return build_report([run_dir], tmp_path_factory.mktemp("rep") / "out")


def _tables_and_frames(run: Path):  # type: ignore[no-untyped-def]
    """The report's tables of one run folder, and its games and seats read back."""
    runs = open_runs([run])
    con = connect(runs)
    rt = compute_tables(con, runs)
    games = con.execute("SELECT * FROM games ORDER BY game_id").df()
    seats = con.execute("SELECT * FROM seats ORDER BY game_id, seat").df()
    con.close()
    return rt, games, seats


def _same(got: pd.DataFrame, want: pd.DataFrame, keys: list[str], cols: list[str]) -> None:
    got = got.sort_values(keys, ignore_index=True)
    want = want.sort_values(keys, ignore_index=True)
    assert got[keys].astype(str).equals(want[keys].astype(str))
    for c in cols:
        np.testing.assert_allclose(
            got[c].to_numpy(float), want[c].to_numpy(float), rtol=1e-9, atol=1e-12, err_msg=c
        )


def test_seat_tables_equal_stats(report_tables, frames) -> None:
    """Seat shares, tests and ties from DuckDB block totals equal the stats functions."""
    games, seats, _ = frames
    _same(
        report_tables.tables.seat_shares,
        stats.seat_win_shares(games, seats),
        ["players", "ruleset", "seat"],
        list(SEAT_SHARE_COLUMNS),
    )
    _same(
        report_tables.tables.seat_tests,
        stats.seat_tests(games, seats),
        ["players", "ruleset"],
        ["n_games", "chi2_block", "p_block", "chi2_pearson", "trend_pp", "trend_lo_pp", "trend_p"],
    )
    _same(
        report_tables.tables.ties,
        stats.tie_summary(games, seats),
        ["players", "ruleset"],
        ["n_games", "shared_wins", "shared_lo", "tie_broken", "tie_broken_hi"],
    )


def test_win_rate_tables_equal_stats(report_tables, frames) -> None:
    """Win rates overall, per line-up and head to head equal the stats functions."""
    games, seats, _ = frames
    _same(
        report_tables.tables.win_rates,
        stats.win_rates(games, seats, by=("ruleset",)),
        ["ruleset", "strategy"],
        ["n_games", "n_seat_games", "n_blocks", "wins", "rate", "lo", "hi", "fair_share"],
    )
    _same(
        report_tables.tables.lineup_win_rates,
        stats.lineup_win_rates(games, seats),
        ["ruleset", "lineup", "strategy"],
        ["n_games", "wins", "rate", "lo", "hi"],
    )
    _same(
        report_tables.tables.head_to_head,
        stats.head_to_head(games, seats, by=("ruleset",)),
        ["ruleset", "strategy", "opponent"],
        ["n_games", "n_blocks", "n_pairs", "tied_pairs", "rate", "lo", "hi"],
    )
    want = stats.fault_counts(games, seats)
    _same(report_tables.tables.faults, want, ["strategy"], ["n_games", "n_errors", "lo", "hi"])


def test_variant_tables_equal_stats(report_tables, frames) -> None:
    """Per-rule-set means, comparisons (Holm) and summaries equal the stats functions."""
    games, seats, turn_scores = frames
    metrics = stats.game_metrics(games, seats, turn_scores)
    _same(
        report_tables.tables.variant_summary,
        stats.variant_summary(metrics),
        ["ruleset", "metric"],
        ["n_games", "n_blocks", "mean", "se", "lo", "hi"],
    )
    four = metrics.loc[metrics["players"] == 4]
    want = stats.compare_variants(four, "standard")
    _same(
        report_tables.tables.variant_comparison,
        want,
        ["metric", "ruleset"],
        ["diff", "se", "lo", "hi", "p_value", "p_holm", "n_games", "n_blocks"],
    )
    got = report_tables.tables.distributions
    for metric, fn in (("margin", stats.margin_summary), ("turns", stats.length_summary)):
        _same(
            got.loc[got["metric"] == metric],
            fn(metrics),
            ["ruleset"],
            ["n", "n_blocks", "mean", "sd", "min", "q5", "q50", "q95", "max"],
        )
    _same(
        report_tables.tables.score_over_turns,
        stats.score_over_turns(turn_scores, games),
        ["ruleset", "players", "seat", "turn"],
        ["n_games", "mean", "lo", "hi"],
    )


def test_turn_scores_from_moves_match_synthetic(frames) -> None:
    """dirhams_after + visible_after read back give the synthetic score paths."""
    turn_scores = frames[2]
    want = make_turn_scores(*_tables()[:2], seed=4)
    merged = turn_scores.merge(want, on=["game_id", "turn", "seat"], suffixes=("", "_want"))
    assert len(merged) == len(want)
    out = merged["score"].isna()
    assert (merged.loc[~out, "score"] == merged.loc[~out, "score_want"]).all()


def test_chunked_passes_give_the_same_tables(
    run_dir: Path, report_tables, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Per-game passes over chunks of a few blocks, and slices of one part, give the tables
    one pass gives."""
    monkeypatch.setattr(pergame, "CHUNK", 7)
    monkeypatch.setattr(tables, "CHUNK", 7)
    monkeypatch.setattr(pergame, "SLICE_GAMES", 7)
    runs = open_runs([run_dir])
    con = connect(runs)
    chunked = compute_tables(con, runs)
    con.close()
    assert chunked.tables.names() == report_tables.tables.names()
    for name, want in report_tables.tables.items():
        pd.testing.assert_frame_equal(getattr(chunked.tables, name), want, rtol=1e-12, obj=name)


def test_ratings_and_power_present(report_tables) -> None:
    """Ratings per rule set come with P(stronger than next) and a pooling test; every
    headline claim is flagged."""
    ratings = report_tables.tables.ratings
    assert set(ratings["strategy"]) == set(STRATEGIES)
    for _, part in ratings.groupby(["ruleset", "players"]):
        part = part.sort_values("order")
        assert part["p_above_next"].iloc[:-1].between(0, 1).all()
        assert part["p_above_next"].iloc[-1:].isna().all()
    assert set(ratings["ruleset"]) == set(RULESETS)
    pooling = report_tables.tables.rating_pooling.iloc[0]
    assert pooling["groups"] == 3 and pooling["df"] > 0 and 0 <= pooling["p_value"] <= 1
    power = report_tables.tables.power
    assert {"seat advantage", "win rates", "variants"} <= set(power["section"])
    assert power["underpowered"].dtype == bool


def test_a_sections_intro_opens_its_first_part(report_tables) -> None:
    """A section that declares an intro opens its first part with it; what depends on the
    tables (the seat section's note on the self-play games) follows it."""
    ctx = Context(report_tables)
    with_intro = [section for section in SECTIONS if getattr(section, "intro", "")]
    assert {s.name for s in with_intro} == {"distributions", "power", "seats", "win_rates"}
    for section in with_intro:
        first = section.parts(ctx, {})[0]
        assert first.title == section.headings[0]
        more = base.pooled_levels(report_tables.tables) if section.name == "seats" else ""
        assert first.paragraphs[0] == section.intro + more


def test_report_has_every_section(built) -> None:
    """HTML and Markdown open with the summary, have every section and the data appendix,
    the charts (inline SVG in HTML, PNG beside the Markdown) and the CSV tables."""
    html = built.html.read_text()
    md = built.markdown.read_text()
    assert md.index("## Summary") < md.index("## 1. Win rates") < md.index("## Appendix: the data")
    assert "among the study's mix of" in md
    assert re.search(r"(It matters|Real but small|Negligible|Undecided)", md)
    for title in (
        "Win rates",
        "Seat advantage",
        "Ratings",
        "Variant comparison",
        "Distributions",
        "Power",
    ):
        assert title in html
        assert f". {title}" in md
    # one per chart, and the Summary's headline chart (the seats' gaps) a second time
    assert html.count("<svg") == len(built.charts) + 1 >= 9
    summary = md[md.index("## Summary") : md.index("## Every finding")]
    assert summary.index("](seat_advantage.png)") < summary.index("**At a glance")
    assert summary.index("**At a glance") < summary.index("Words used here")
    assert "<img" not in html  # (the heatmap's cells are a raster image inside its SVG)
    for name in (
        "win_rates",
        "seat_shares",
        "seat_tests",
        "ratings",
        "variant_comparison",
        "power",
        "findings",
    ):
        assert (built.folder / f"{name}.csv").is_file()
    for png in built.charts:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"]({png.name})" in md


def _glance_rows(md: str) -> list[list[str]]:
    """The at-a-glance table of report.md, as cells (header first)."""
    lines = md[md.index("**At a glance") :].splitlines()[2:]
    table = list(itertools.takewhile(lambda x: x.startswith("|"), lines))
    return [[c.strip() for c in line.strip("|").split("|")] for line in table if "---" not in line]


def test_at_a_glance_equals_the_tables(built, report_tables) -> None:
    """Each row of the first screen's table is its rule set's means of variant_summary
    (length, bankruptcies, margin, the turn the winner leads for good from the moves'
    sample) and the largest seat gap among the family's findings, with their intervals."""
    header, *rows = _glance_rows(built.markdown.read_text())
    assert header[3:] == [
        "turns",
        "bankruptcies",
        "winning margin (points)",
        "winner leads for good from turn",
        "choices per turn (replayed games)",
    ]
    means = report_tables.tables.variant_summary.set_index(["ruleset", "metric"])
    seats = pd.read_csv(built.folder / "findings.csv").query("question == 'seat'")
    assert len(rows) == seats.groupby(["ruleset", "model"]).ngroups == 3
    for row in rows:
        name = row[0].replace("\\", "")  # Markdown writes '<' as a backslash and '<'
        ruleset = next(r for r in RULESETS if name.startswith(findings.title(r) + ","))
        for cell, metric, scale, unit in (
            (row[3], "turns", 1, ""),
            (row[4], "bankrupt", 100, "%"),
            (row[5], "margin", 1, ""),
            (row[6], "decided_turn", 1, ""),
        ):
            m = means.loc[(ruleset, metric)]
            want = f"{scale * m['mean']:.1f}{unit} [{scale * m['lo']:.1f}, {scale * m['hi']:.1f}]"
            assert cell == want, (ruleset, metric)
        top = seats.loc[seats["ruleset"] == ruleset]
        top = top.loc[top["estimate"].abs().idxmax()]
        assert row[2].startswith(f"{str(top.subject).capitalize()} {fmt.pp(top.estimate)}")
        real = top.verdict == "undecided" and (top.lo > 0 or top.hi < 0)
        assert row[2].endswith("(real, size undecided)" if real else f"({top.verdict})")
        # the fixture's moves are synthetic score paths, not games: none replays
        assert row[7] == "n/a"
    choices = pd.read_csv(built.folder / "choices.csv")
    assert (choices["n_games"] == 0).all() and (choices["n_not_replayed"] > 0).all()


def test_sections_are_in_the_order_of_the_reports_headings(built) -> None:
    """The report's headings, in order, are those of build.SECTIONS in its order: each
    heading belongs to one section, sections never interleave, the numbered ones count
    from 1, and the summary, every analysis section and the appendix are there."""
    headings = re.findall(r"^## (.+)$", built.markdown.read_text(), flags=re.MULTILINE)
    owner = {h: i for i, sec in enumerate(SECTIONS) for h in sec.headings}
    bare = [re.sub(r"^\d+\\?\. ", "", h) for h in headings]
    assert all(h in owner for h in bare), [h for h in bare if h not in owner]
    order = [owner[h] for h in bare]
    assert order == sorted(order)
    numbered = [h for h in headings if h[0].isdigit()]
    assert [int(h.split(".")[0]) for h in numbered] == list(range(1, len(numbered) + 1))
    always = ["summary", "win_rates", "seats", "ratings", "variants", "distributions"]
    always += ["power", "notable", "data"]
    names = [SECTIONS[i].name for i in order]
    assert set(always) <= set(names)
    assert names[0] == "summary" and names[-1] == "data"


def test_html_is_self_contained(built) -> None:
    """No src, href or url() leaves the file: only data: URIs and in-page anchors."""
    html = built.html.read_text()
    refs = re.findall(r'(?:src|href)\s*=\s*"([^"]*)"', html, flags=re.IGNORECASE)
    assert refs
    assert all(r.startswith(("data:", "#")) for r in refs), [r[:40] for r in refs]
    assert "<script" not in html.lower() and "<link" not in html.lower()
    assert all(u.startswith("#") for u in re.findall(r"url\(([^)]*)\)", html))


def test_user_names_escaped(built) -> None:
    """A strategy named like markup and a rule set with quotes appear as text, not markup."""
    html = built.html.read_text()
    md = built.markdown.read_text()
    assert EVIL not in html and "&lt;script&gt;" in html
    assert EVIL not in md and "\\<script>" in md
    assert "orient&#39;at&lt;end&gt;" in html


def test_markdown_is_clean(built) -> None:
    """report.md has no HTML entity, no escaped backtick and no raw HTML: a CommonMark
    reader shows the markup-like names as their text."""
    from markdown_it import MarkdownIt

    md = built.markdown.read_text()
    assert not re.search(r"&(#\d+|#x[0-9a-f]+|[a-z]+);", md, flags=re.IGNORECASE)
    assert "\\`" not in md
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    kinds = {t.type for t in tokens} | {c.type for t in tokens for c in t.children or []}
    assert not kinds & {"html_inline", "html_block"}
    text = " ".join(c.content for t in tokens for c in t.children or [] if c.type == "text")
    assert EVIL in text and ODD_RULESET in text and "eps & co" in text


def test_two_runs_are_kept_apart(tmp_path: Path) -> None:
    """Two runs: ids made unique, a rule set name reused with other options is renamed."""
    g, s = make_run({"x": 0.0, "y": 0.0}, 30, players=2, seed=5)
    a = write_run(tmp_path / "a", g, s, None, {"standard": {"players": 2}}, run_id="ra")
    b = write_run(
        tmp_path / "b", g, s, None, {"standard": {"players": 2, "orient_at_end": True}}, run_id="rb"
    )
    result = build_report([a, b], tmp_path / "out")
    rulesets = pd.read_csv(result.folder / "rulesets.csv")
    assert sorted(rulesets["ruleset"]) == ["standard", "standard@rb"]
    assert rulesets["n_games"].tolist() == [60, 60]
    comp = pd.read_csv(result.folder / "variant_comparison.csv")
    assert set(comp["ruleset"]) == {"standard@rb"}
    # The same games in both runs: every difference is exactly 0 and blocks are not paired.
    np.testing.assert_allclose(comp["diff"], 0.0, atol=1e-12)
    assert (comp["n_blocks"] == comp["n_blocks_baseline"]).all()
    assert not (result.folder / "score_over_turns.csv").exists()  # no moves tables


def test_samples_are_whole_blocks(run_dir: Path) -> None:
    """With small sample caps ratings and per-turn metrics use whole blocks and say so."""
    runs = open_runs([run_dir])
    con = connect(runs)
    rt = compute_tables(con, runs, rating_games=200, moves_games=100)
    sampled = con.execute(
        "SELECT count(*) FROM games JOIN (SELECT DISTINCT block FROM rating_sample) USING (block)"
    ).fetchone()
    con.close()
    assert rt.facts.rating_sampled and rt.facts.moves_sampled
    assert 200 <= rt.facts.rating_games < 260
    assert sampled == (rt.facts.rating_games,)  # every game of a sampled block
    assert rt.tables.ratings["n_games"].max() <= rt.facts.rating_games
    assert rt.tables.score_over_turns["n_games"].max() <= rt.facts.moves_games
    ratings = next(p for p in report_parts(Context(rt, runs), {}) if p.title.endswith("Ratings"))
    assert "a sample of" in " ".join(ratings.paragraphs)


def test_not_a_run_folder(tmp_path: Path) -> None:
    """A folder without run.json is a RunFolderError naming the folder."""
    with pytest.raises(RunFolderError, match=r"no run\.json"):
        open_runs([tmp_path])


def test_cli_report(tmp_path: Path) -> None:
    """`marrakech report RUN_DIR --out DIR` writes the report and prints its path."""
    g, s = make_run({"x": 0.0, "y": 0.1}, 20, players=2, seed=6)
    run_dir = write_run(tmp_path / "run", g, s, None, {"standard": {"players": 2}})
    out = tmp_path / "cli"
    res = CliRunner().invoke(main, ["report", str(run_dir), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert res.output.strip().endswith(str(out / "report.html"))
    assert (out / "report.md").is_file()
    bad = CliRunner().invoke(main, ["report", str(tmp_path)])
    assert bad.exit_code == 1 and "no run.json" in bad.output


@pytest.mark.parametrize(("players", "effect"), [(4, 0.01), (2, 0.02), (3, 0.005)])
def test_cli_plan_matches_stats(players: int, effect: float) -> None:
    """`marrakech plan` prints what stats.plan_seat_advantage / plan_variant_difference give."""
    res = CliRunner().invoke(main, ["plan", "--seats", str(players), "--effect", str(effect)])
    assert res.exit_code == 0, res.output
    seat = stats.plan_seat_advantage(players, effect)
    variant = stats.plan_variant_difference(players, effect)
    assert f"needs {int(seat['n_games'].iloc[0]):,} games" in res.output
    assert f"needs {int(variant['n_games_per_variant'].iloc[0]):,} games per variant" in res.output
    assert f"({int(variant['n_games_total'].iloc[0]):,} in all)" in res.output
    # players are counted from 1, as in the report (seat 0 is the CSV tables' index)
    assert "seat advantage: player 1 winning" in res.output and "seat 0" not in res.output


def test_commands_have_help() -> None:
    """Both commands explain themselves in --help."""
    for cmd in ("report", "plan"):
        res = CliRunner().invoke(main, [cmd, "--help"])
        assert res.exit_code == 0 and len(res.output) > 200


def test_repeated_strategies_in_a_game(tmp_path: Path) -> None:
    """A strategy seated twice in a game: head to head and win rates equal stats' over the
    mixed games (a game with one strategy in every seat is a player model of its own)."""
    g, s = make_run({"x": 0.2, "y": 0.0}, 40, players=4, tie_rate=0.1, seed=8)
    run = write_run(tmp_path / "dup", g, s, None, {"standard": {"players": 4}})
    rt, games, seats = _tables_and_frames(run)
    alone = seats.groupby("game_id")["strategy"].nunique() == 1
    mixed = set(alone.index[~alone])
    assert 0 < len(mixed) < len(alone)  # the fixture has self-play games to leave out
    games = games[games["game_id"].isin(mixed)]
    seats = seats[seats["game_id"].isin(mixed)]
    _same(
        rt.tables.head_to_head,
        stats.head_to_head(games, seats, by=("ruleset",)),
        ["ruleset", "strategy", "opponent"],
        ["n_games", "n_pairs", "tied_pairs", "rate", "lo", "hi"],
    )
    _same(
        rt.tables.win_rates,
        stats.win_rates(games, seats, by=("ruleset",)),
        ["ruleset", "strategy"],
        ["n_games", "n_seat_games", "rate", "lo", "hi"],
    )


def test_blocks_that_mix_lineups_are_refused(tmp_path: Path) -> None:
    """Blocks holding games of several matches (not this program's layout): a clear error."""
    g, s = make_run({"x": 0.2, "y": 0.0, "z": 0.1}, 40, players=2, tie_rate=0.1, seed=9)
    g["block"] = g["game_id"] // 6  # every block spans two matches
    run = write_run(tmp_path / "mixed", g, s, None, {"standard": {"players": 2}})
    with pytest.raises(StatsInputError, match="holds games of two matches"):
        _tables_and_frames(run)
    res = CliRunner().invoke(main, ["report", str(run), "--out", str(tmp_path / "r")])
    assert res.exit_code != 0 and "holds games of two matches" in res.output
    assert "Traceback" not in res.output


def test_cli_plan_states_its_design_effect() -> None:
    """`marrakech plan` says which design effect it assumes, and warns against borrowing one."""
    res = CliRunner().invoke(main, ["plan"])
    assert res.exit_code == 0, res.output
    assert "design effect 1 (assumed" in res.output and "`random`" in res.output
    given = CliRunner().invoke(main, ["plan", "--design-effect", "2.5"])
    assert "design effect 2.5 (given" in given.output


def test_power_table_is_prospective(report_tables) -> None:
    """Each claim has its 80%-power detectable effect and games for its stated effect (1e-12)."""
    power = report_tables.tables.power
    assert {"mde", "target_effect", "n_for_power", "detectable"} <= set(power.columns)
    ok = power["se"].notna() & power["target_effect"].notna()
    assert ok.all()
    z = 1.959963984540054 + 0.8416212335729143
    np.testing.assert_allclose(power["mde"], z * power["se"], rtol=1e-12)
    assert (
        power.loc[power["detectable"], "n_for_power"] <= power.loc[power["detectable"], "n_games"]
    ).all()


def test_paired_variant_comparison_equals_stats(tmp_path: Path) -> None:
    """A common_seeds run: the report pairs blocks by seed exactly as stats does (1e-9)."""
    import json

    g1, s1 = make_run(STRATEGIES, 50, players=4, shared_dice=0.3, seed=5)
    g2, s2 = make_run(STRATEGIES, 50, players=4, ruleset=ODD_RULESET, shared_dice=0.3, seed=6)
    games, seats = combine_runs([(g1, s1), (g2, s2)])
    n_base = int(g1["block"].max()) + 1
    games["seed"] = (games["block"] % n_base + 1000).astype("uint64")  # block i of each pairs
    run = write_run(
        tmp_path / "paired", games, seats, None, {k: RULESETS[k] for k in ("standard", ODD_RULESET)}
    )
    manifest = json.loads((run / "run.json").read_text())
    manifest["config"]["common_seeds"] = True
    (run / "run.json").write_text(json.dumps(manifest))
    rt, games, seats = _tables_and_frames(run)
    metrics = stats.game_metrics(games, seats)
    want = stats.compare_variants(metrics, "standard", cluster="seed")
    got = rt.tables.variant_comparison
    _same(
        got,
        want,
        ["metric", "ruleset"],
        ["diff", "se", "df", "lo", "hi", "p_value", "p_holm", "se_unpaired", "n_clusters"],
    )
    assert (got["paired"] == n_base).all()
    assert set(got["family"]) == {"primary", "secondary"}


def test_report_plan_never_borrows_a_design_effect_below_one(built) -> None:
    """The report's study sizes use this data's seat-0 design effect, floored at 1 (exact)."""
    plan = pd.read_csv(built.folder / "plan.csv")
    assert (plan["design_effect"] >= 1.0).all()
    assert np.array_equal(plan["design_effect"], np.maximum(plan["design_effect_observed"], 1.0))


@pytest.fixture(scope="module")
def block_parts_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test run written as the runner writes a run: each part a range of whole blocks."""
    games, seats, turn_scores = _tables()
    run_dir = tmp_path_factory.mktemp("blocks") / "r1"
    write_manifest(run_dir, RULESETS, sorted(seats["strategy"].unique()), len(games))
    edges = np.quantile(games["block"], [0, 0.3, 0.7])
    part_of = np.searchsorted(edges, games["block"], side="right") - 1
    for part in range(3):
        ids = games.loc[part_of == part, "game_id"]
        write_tables(
            run_dir,
            games.loc[games["game_id"].isin(ids)],
            seats.loc[seats["game_id"].isin(ids)],
            turn_scores.loc[turn_scores["game_id"].isin(ids)],
            part=part,
        )
    return run_dir


def test_slices_hold_whole_blocks(block_parts_dir: Path) -> None:
    """Slices of one part each never share a block, and together hold every game."""
    runs = open_runs([block_parts_dir])
    slices = pergame.plan_slices(runs, size=1)
    assert len(slices) == 3
    blocks = []
    for part in slices:
        got = pd.concat([pd.read_parquet(p, columns=["block"]) for p in part.games])
        assert len(got) == part.n_games
        blocks.append(set(got["block"]))
    assert sum(len(b) for b in blocks) == len(set().union(*blocks))
    total = sum(len(pd.read_parquet(p, columns=["block"])) for p in runs[0].parts["games"])
    assert sum(part.n_games for part in slices) == total


def test_sliced_report_equals_one_pass(
    block_parts_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tables summed over slices of one part each equal those of one slice."""
    runs = open_runs([block_parts_dir])
    con = connect(runs)
    whole = compute_tables(con, runs)
    monkeypatch.setattr(pergame, "SLICE_GAMES", 1)
    sliced = compute_tables(con, runs)
    con.close()
    assert whole.facts.slices == 1
    assert sliced.facts.slices == 3
    assert sliced.tables.names() == whole.tables.names()
    for name, want in whole.tables.items():
        pd.testing.assert_frame_equal(getattr(sliced.tables, name), want, rtol=1e-9, obj=name)


def test_seats_of_another_part_are_refused(block_parts_dir: Path) -> None:
    """Seat rows of games that are not in their slice are an error, not a silent loss."""
    run = open_runs([block_parts_dir])[0]
    games_part, seats_part = run.parts["games"][0], run.parts["seats"][1]
    part = pergame.Slice(run, [games_part], [seats_part], 0, whole_run=False)
    rulesets, names = pergame.scan_names([run])
    games = pergame.load_games(part, rulesets)
    with pytest.raises(StatsInputError, match="not in the games part"):
        pergame.build_per_game(games, part, names)


def test_histogram_quantiles_match_numpy() -> None:
    """Quantiles read from a histogram equal np.quantile of the values it counts."""
    from marrakech_sim.report.sections.distributions import histogram_quantiles

    rng = np.random.default_rng(8)
    for size in (1, 2, 5, 101, 1000):
        values = rng.integers(-3, 40, size=size).astype("float64")
        value, count = np.unique(values, return_counts=True)
        got = histogram_quantiles(value, count, tables.QUANTILES)
        want = np.quantile(values, tables.QUANTILES)
        np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--effect", "0"], "effect 0.0"),
        (["--effect", "nan"], "effect = nan"),
        (["--effect", "0.8"], "1.05 is not a share"),
        (["--effect", "1e-12"], "more than 1e+15"),
        (["--alpha", "0"], "alpha 0.0"),
        (["--alpha", "2"], "alpha 2.0"),
        (["--power", "0"], "power 0.0"),
        (["--power", "1"], "power 1.0"),
        (["--design-effect", "nan"], "design effect nan"),
        (["--design-effect", "-1"], "design effect -1.0"),
        (["--design-effect", "0"], "design effect 0.0"),
    ],
)
def test_plan_refuses_values_outside_their_range(args: list[str], named: str) -> None:
    """`marrakech plan` answers a value outside its range with one line naming it and
    the allowed range, never a traceback or a negative or zero number of games."""
    res = CliRunner().invoke(main, ["plan", *args])
    assert res.exit_code != 0 and named in res.output
    assert "allowed" in res.output
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1


def test_head_to_head_is_per_rule_set(report_tables, frames) -> None:
    """No head-to-head row pools rule sets (nor so player counts): each rule set has its
    own pairs, with the games of that rule set alone (issue: it pooled all of them)."""
    h2h = report_tables.tables.head_to_head
    games, seats = frames[0], frames[1]
    assert set(h2h["ruleset"]) == set(RULESETS)
    for ruleset, part in h2h.groupby("ruleset"):
        ids = set(games.loc[games["ruleset"] == ruleset, "game_id"])
        in_games = seats[seats["game_id"].isin(ids)]
        assert part["n_games"].max() <= len(ids)
        assert set(part["strategy"]) <= set(in_games["strategy"])


def test_the_variant_table_gives_each_rows_verdict_from_every_finding(built) -> None:
    """Beside its Holm test of 0, each row of "Differences from the baseline" gives the
    verdict the same comparison has in Every finding (findings.csv), so the two are read
    together; a comparison the family does not hold shows '-'."""
    md = built.markdown.read_text()
    start = md.index("**Differences from the baseline**")
    lines = list(itertools.takewhile(lambda x: x.startswith("|"), md[start:].splitlines()[2:]))
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines if "---" not in line]
    assert rows[0][-1] == "verdict (Every finding)"
    found = pd.read_csv(built.folder / "findings.csv")
    variants = found.loc[found["question"].str.startswith("variant: ")]
    checked = 0
    for cells in rows[1:]:
        metric, ruleset = cells[1], re.sub(r"\\(.)", r"\1", cells[2])  # md_escape undone
        mine = variants.loc[
            (variants["question"] == f"variant: {metric}") & (variants["ruleset"] == ruleset)
        ]
        if len(mine):
            assert cells[-1] == mine["verdict"].iloc[0], cells
            checked += 1
        else:
            assert cells[-1] == "-"
    assert checked >= 1


def test_power_sizes_each_claim_for_the_studys_margin_in_pp(built) -> None:
    """The power table's variant claims are in the findings' units (a share's difference
    in pp, as variant_comparison's fraction times 100) and sized for the study's margins
    (matters_pp for a share, the metric's margin otherwise), as the findings judge them."""
    from marrakech_sim.run.config import MARGINS, ReportOptions

    power = pd.read_csv(built.folder / "power.csv")
    comp = pd.read_csv(built.folder / "variant_comparison.csv")
    variants = power.loc[power["section"] == "variants"]
    assert len(variants) == len(comp)
    for p, c in zip(variants.itertuples(), comp.itertuples(), strict=True):
        share = c.metric.startswith("seat_") or c.metric in ("bankrupt", "tie_broken")
        share = share or c.metric in ("winner_dirhams_share", "comeback")
        assert p.unit == ("pp" if share else findings.metric_words(c.metric)[1])
        assert p.estimate == pytest.approx((100 if share else 1) * c.diff)
        margin = ReportOptions().matters_pp if share else MARGINS[c.metric]
        assert p.target_effect == margin
    seats = power.loc[power["claim"].str.startswith("player 1's share")]
    assert (seats["target_effect"] == ReportOptions().matters_pp).all()


def test_groups_of_findings_are_headed_and_a_long_one_folded(tmp_path: Path) -> None:
    """A part's groups of list items come under their headings, in the HTML page (a
    folded group closed, another open) and in the Markdown (every item, in order)."""
    from marrakech_sim.report.render import write_html, write_markdown

    part = base.Part("Every finding", numbered=False)
    part.groups += [("It matters: 1 finding", ["a <b>"], False), ("Undecided", ["c", "d"], True)]
    write_html(tmp_path / "g.html", "t", "s", [part], {})
    html = (tmp_path / "g.html").read_text()
    assert "<details open>\n<summary>It matters: 1 finding</summary>" in html
    assert "<details>\n<summary>Undecided</summary>" in html
    assert "<li>a &lt;b&gt;</li>" in html and html.index("<li>c</li>") < html.index("<li>d</li>")
    write_markdown(tmp_path / "g.md", "t", "s", [part])
    md = (tmp_path / "g.md").read_text()
    assert "**It matters: 1 finding**\n\n- a \\<b>\n\n**Undecided**\n\n- c\n- d\n" in md


def test_the_first_screens_table_is_never_folded(tmp_path: Path) -> None:
    """A table of more than OPEN_ROWS rows is folded under its caption, but not in a part
    with fold=False (the Summary's at-a-glance table, 13 rows in the skill study)."""
    from marrakech_sim.report.render import OPEN_ROWS, write_html

    rows = [[str(i), "x"] for i in range(OPEN_ROWS + 1)]
    for fold in (True, False):
        part = base.Part("Summary", numbered=False, fold=fold)
        part.tables.append(("At a glance", ["a", "b"], rows))
        path = tmp_path / f"fold-{fold}.html"
        write_html(path, "t", "s", [part], {})
        html = path.read_text()
        assert html.count(f"<td>{OPEN_ROWS}</td>") == 1
        assert ("<details>" in html) is fold
