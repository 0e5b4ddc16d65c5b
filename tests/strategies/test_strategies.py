"""The plug-in API, the built-in strategies and the conformance checker."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import shutil
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import EXAMPLES, PLUGINS, writing_to_stderr
from scipy import stats

from marrakech_sim.cli import main
from marrakech_sim.errors import ConfigError, StrategyNotFound
from marrakech_sim.play.conformance import check_strategy, in_child_process
from marrakech_sim.play.game import play_game
from marrakech_sim.play.rng import Rng
from marrakech_sim.play.strategy import Strategy, StrategySpec, describe, registered
from marrakech_sim.play.view import GameView
from marrakech_sim.rules import core as k
from marrakech_sim.rules.options import Rules
from marrakech_sim.rules.state import GameState

GOOD = f"{PLUGINS / 'cautious.py'}:Cautious"
BUILT_INS = ("random", "greedy", "greedy-area", "greedy-block", "expectimax", "mcts")


def view_at(notation: str, seat: int | None = None, stream: int = 64) -> GameView:
    state = GameState.from_notation(notation)
    s = np.array(state.packed)
    seat = int(s[k.SEAT_]) if seat is None else seat
    return GameView(state.rules, s, seat, Rng(3, stream))


def mid_game(rules: Rules, phase: str, seed: int = 4) -> GameState:
    """A position of a random game, in `phase`, after about 10 turns."""
    rnd = np.random.default_rng(seed)
    state = GameState.start(rules)
    while state.phase != phase or int(state.packed[k.TURN_]) < 10:
        actions = state.legal_actions()
        state = state.apply(actions[int(rnd.integers(len(actions)))])
    return state


def view_of(state: GameState, stream: int = 64) -> GameView:
    s = np.array(state.packed)
    return GameView(state.rules, s, int(s[k.SEAT_]), Rng(3, stream))


# ---------------------------------------------------------------- registry and specs


def test_built_ins_are_registered_and_described() -> None:
    """Every built-in is an entry point with a one-line description and its parameters."""
    assert set(BUILT_INS) <= set(registered())
    for name in BUILT_INS:
        info = describe(name)
        assert info["summary"] and isinstance(info["parameters"], dict)
        assert isinstance(StrategySpec.of(name).build(), Strategy)
    assert describe("greedy")["parameters"]["area"] == 1.0
    assert describe("greedy")["compiled"] and not describe("mcts")["compiled"]


def test_three_ways_to_name_a_strategy() -> None:
    """A registered name, 'module:Class' and 'file.py:Class' all load the class."""
    assert StrategySpec.of("random").load_class().__name__ == "RandomStrategy"
    assert StrategySpec.of(
        "marrakech_sim.strategies.greedy:GreedyStrategy"
    ).load_class().__name__ == ("GreedyStrategy")
    assert StrategySpec.of(GOOD).load_class().__name__ == "Cautious"


def test_unknown_names_list_what_is_available() -> None:
    """An unknown name lists the registered strategies; a file without the class lists
    the strategies it has."""
    with pytest.raises(StrategyNotFound, match=r"registered: .*greedy.*random"):
        StrategySpec.of("grody").load_class()
    with pytest.raises(StrategyNotFound, match=r"strategies there: .*Cautious"):
        StrategySpec.of(f"{PLUGINS / 'cautious.py'}:Nope").load_class()
    with pytest.raises(StrategyNotFound, match="cannot load"):
        StrategySpec.of("no_such_package.mod:Class").load_class()


def test_parameters_come_from_config_and_unknown_ones_are_errors() -> None:
    """Parameters override defaults; an unknown parameter names the allowed ones."""
    greedy = StrategySpec.of("greedy", {"block": 2.5}).build()
    assert greedy.params["block"] == 2.5 and greedy.params["area"] == 1.0  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match=r"'aggression'.*allowed: area, cover, block"):
        StrategySpec.of("greedy", {"aggression": 0.5}).build()
    with pytest.raises(ConfigError, match="depth"):
        StrategySpec.of("expectimax", {"depth": 0}).build()
    with pytest.raises(ConfigError, match="policy"):
        StrategySpec.of("mcts", {"policy": "smart"}).build()


def test_specs_pickle_and_build_in_the_worker() -> None:
    """A spec survives pickling (what workers receive) and builds an equal strategy."""
    for ref in (*BUILT_INS, GOOD):
        spec = StrategySpec.of(ref, {}, name="x")
        again = pickle.loads(pickle.dumps(spec))
        assert again == spec
        assert type(again.build()).__name__ == type(spec.build()).__name__


# ---------------------------------------------------------------- random


def test_random_is_uniform() -> None:
    """random chooses each rotation and each placement with equal probability: chi-square
    goodness of fit over 30,000 draws each, rejected only below p = 1e-4 (the test fails
    by chance once in 10,000 runs)."""
    strategy = StrategySpec.of("random").build()
    orient = view_of(mid_game(Rules(), "orient"))
    rotations = Counter(strategy.choose_rotation(orient) for _ in range(30_000))
    assert set(rotations) == {-1, 0, 1}
    assert stats.chisquare(list(rotations.values())).pvalue > 1e-4
    state = mid_game(Rules(), "place")
    options = state.legal_actions()
    view = view_of(state)
    picks = Counter(strategy.choose_placement(view, options) for _ in range(30_000))
    assert set(picks) == set(options)
    assert stats.chisquare([picks[o] for o in options]).pvalue > 1e-4


# ---------------------------------------------------------------- greedy


def test_greedy_turns_away_from_the_most_expensive_walk() -> None:
    """Standard order: greedy picks the rotation with the lowest expected payment."""
    for seed in range(8):
        view = view_of(mid_game(Rules(), "orient", seed))
        strategy = StrategySpec.of("greedy", {"ruin": 0.0}).build()
        choice = strategy.choose_rotation(view)
        costs = {r: view.expected_payment(r) for r in (-1, 0, 1)}
        assert costs[choice] == min(costs.values())


def test_greedy_orients_the_next_player_onto_its_own_rugs() -> None:
    """Orient at end: greedy picks the rotation where the next player pays it the most."""
    for seed in range(8):
        view = view_of(mid_game(Rules(orient_at_end=True), "orient", seed))
        nxt = view.next_walker
        assert nxt is not None and nxt != view.seat
        choice = StrategySpec.of("greedy", {"ruin": 0.0}).build().choose_rotation(view)
        gains = {r: view.payment_totals(r, nxt, payee=view.seat)[1] for r in (-1, 0, 1)}
        assert gains[choice] == max(gains.values())


def test_greedy_area_builds_the_largest_own_region() -> None:
    """greedy-area places the rug where its colour's region becomes largest."""
    for seed in range(8):
        state = mid_game(Rules(), "place", seed)
        view = view_of(state)
        options = state.legal_actions()
        choice = (
            StrategySpec.of("greedy-area", {"waste": 0.0}).build().choose_placement(view, options)
        )
        assert view.placement_effect(choice).region == max(
            view.placement_effect(o).region for o in options
        )


def test_greedy_breaks_ties_with_the_seats_stream() -> None:
    """Among equally good options greedy draws from view.rng: same stream, same choice;
    across streams every tied option turns up."""
    state = GameState.start(Rules())  # an empty board: every rotation costs nothing
    strategy = StrategySpec.of("greedy").build()
    same = {strategy.choose_rotation(view_of(state, 64)) for _ in range(5)}
    assert len(same) == 1
    seen = {strategy.choose_rotation(view_of(state, stream)) for stream in range(64, 104)}
    assert seen == {-1, 0, 1}


# ---------------------------------------------------------------- search


@pytest.mark.parametrize(
    "ref, params", [("expectimax", {"depth": 2}), ("mcts", {"rollouts": 20, "horizon": 4})]
)
def test_search_strategies_play_reproducible_legal_games(ref: str, params: dict) -> None:
    """expectimax and mcts play whole games without faults, the same game for a seed."""
    rules = Rules(players=3, orient_at_end=True)
    lineup = [StrategySpec.of(ref, params), StrategySpec.of("greedy"), StrategySpec.of("random")]
    first = play_game(rules, [s.build() for s in lineup], 11)
    again = play_game(rules, [s.build() for s in lineup], 11)
    assert first.error is None
    np.testing.assert_array_equal(first.moves, again.moves)


def test_expectimax_avoids_a_certain_payment() -> None:
    """Depth 1 expectimax picks the rotation with the lowest expected payment when the
    board only differs in what the walk costs."""
    for seed in range(6):
        view = view_of(mid_game(Rules(players=2), "orient", seed))
        choice = StrategySpec.of("expectimax", {"depth": 1, "region": 0.0}).build()
        rotation = choice.choose_rotation(view)
        costs = {r: view.expected_payment(r) for r in (-1, 0, 1)}
        # paying an opponent costs twice in "my value minus theirs"
        assert costs[rotation] == min(costs.values())


# ---------------------------------------------------------------- conformance


def test_conformance_passes_a_good_strategy() -> None:
    """check_strategy finds nothing wrong with a well-behaved file strategy."""
    report = check_strategy(GOOD, {"tolerance": 0.5}, games=1)
    assert report.ok, report.failures
    assert report.games == 18 and report.decisions > 100
    assert 0 < report.mean_decision_s <= report.max_decision_s


@pytest.mark.parametrize(
    "name, params, words",
    [
        ("Raises", {}, "boom in choose_placement"),
        ("Illegal", {}, "not one of the legal options"),
        ("Garbage", {}, "not one of the legal options"),
        ("Unseeded", {}, "not deterministic"),
        ("Cautious", {"colour": "red"}, "unknown parameter 'colour'"),
        ("Cautious", {"f": object()}, "not plain data"),
        ("Missing", {}, "has no class 'Missing'"),
    ],
)
def test_conformance_reports_bad_strategies(name: str, params: dict, words: str) -> None:
    """check_strategy reports exceptions, illegal and malformed choices,
    non-determinism, bad parameters, specs that do not pickle and unknown classes."""
    where = PLUGINS / "cautious.py" if name in ("Cautious", "Missing") else EXAMPLES / "bad.py"
    report = check_strategy(f"{where}:{name}", params, games=1)
    assert not report.ok
    assert any(words in failure for failure in report.failures), report.failures


def _answer(progress: Any) -> int:
    return 42


def test_a_checking_child_ends_though_a_thread_here_wrote_to_stderr_as_it_forked() -> None:
    """in_child_process forks. A thread of this process writing to a buffered sys.stderr
    as it forked left the child a copy of that stream's lock held for good, and a child
    that multiprocessing ends flushes stderr first: it waited for ever, and the check
    with it (a run's reproducibility check hung so, tools/fork_lock_repro.py --mode run).
    The child now ends without that flush, and the answer comes at once."""
    answers: list[Any] = []
    check = threading.Thread(
        target=lambda: answers.append(in_child_process(_answer, (), 60.0)), daemon=True
    )
    with writing_to_stderr():
        check.start()
        check.join(30)
    stuck = check.is_alive()
    for child in multiprocessing.active_children():  # (or the check would never end)
        child.kill()
    check.join()
    assert not stuck, "the child waited on a lock its fork copied held"
    assert answers[0][:2] == (42, "")


def test_cli_lists_and_checks_strategies() -> None:
    """`marrakech strategies` lists the built-ins; `check-strategy` exits 0 for a good
    strategy and 1 with the problems for a bad one."""
    runner = CliRunner()
    listed = runner.invoke(main, ["strategies"])
    assert listed.exit_code == 0
    for name in BUILT_INS:
        assert f"\n{name}" in "\n" + listed.output
    assert "area = 1.0" in listed.output
    good = runner.invoke(main, ["check-strategy", GOOD, "--games", "1", "--param", "tolerance=1"])
    assert good.exit_code == 0, good.output
    assert "OK" in good.output
    bad = runner.invoke(main, ["check-strategy", f"{EXAMPLES / 'bad.py'}:Raises"])
    assert bad.exit_code == 1
    assert "FAILED" in bad.output and "boom" in bad.output
    unknown = runner.invoke(main, ["check-strategy", "grody"])
    assert unknown.exit_code == 1 and "registered:" in unknown.output
    malformed = runner.invoke(main, ["check-strategy", "random", "--param", "nonsense"])
    assert malformed.exit_code != 0 and "key=value" in malformed.output


def test_relative_file_reference_follows_the_working_directory(tmp_path, monkeypatch) -> None:
    """A spec's class is cached per working directory: the same relative reference in
    another folder is another file."""
    from marrakech_sim.play.strategy import StrategySpec

    for name in ("one", "two"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "mine.py").write_text(
            f"class Mine:\n    WHO = {name!r}\n"
            "    def choose_rotation(self, view):\n        return 0\n"
            "    def choose_placement(self, view, options):\n        return options[0]\n"
        )
    spec = StrategySpec.of("mine.py:Mine")
    monkeypatch.chdir(tmp_path / "one")
    assert spec.build().WHO == "one"
    assert spec.build().WHO == "one"
    monkeypatch.chdir(tmp_path / "two")
    assert spec.build().WHO == "two"


def test_conformance_shows_each_distinct_fault_once_with_its_traceback() -> None:
    """A strategy that fails the same way in every game gets one entry: the first message,
    the strategy's file and line, its traceback, and the count."""
    report = check_strategy(f"{EXAMPLES / 'bad.py'}:Raises", games=1)
    assert len(report.failures) == report.games == 18
    assert len(report.faults) == 1
    fault = next(iter(report.faults.values()))
    assert fault.count == 18
    bad = str((EXAMPLES / "bad.py").resolve())
    assert fault.location.startswith(f"{bad}:") and fault.location.split(":")[-1].isdigit()
    assert 'raise RuntimeError("boom in choose_placement")' in fault.traceback
    text = "\n".join(report.lines())
    assert text.count("boom in choose_placement") == 3  # message, source line, exception
    assert "(18 times in all)" in text and "18 problem(s), 1 distinct" in text


def test_conformance_of_a_builtin_does_not_time_its_kernels_compile(tmp_path: Path) -> None:
    """In a kernel cache without its kernels, a built-in's first decision would be their
    compile (about 4 s for greedy's, minutes for the expert's) and fail the time budget:
    check-strategy compiles them in an untimed game first, as a run and `play` do. The
    cache is this process's, copied, less greedy's kernels (strategies/kernels.py), so
    what check-strategy shares with other tests loads and greedy's alone compile."""
    from numba.core import config

    assert check_strategy("greedy", games=1).ok  # this process's cache holds it all
    cache = tmp_path / "cache"
    shutil.copytree(config.CACHE_DIR, cache)
    greedy = list(cache.glob("strategies_*/kernels.*"))
    assert any("greedy_placement" in p.name for p in greedy)
    for path in greedy:
        path.unlink()
    code = (
        "from marrakech_sim.play.conformance import check_strategy\n"
        "r = check_strategy('greedy', games=1, time_budget=0.05)\n"
        "print(r.ok, r.games, r.failures)\n"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert out.startswith("True 18 []"), out
