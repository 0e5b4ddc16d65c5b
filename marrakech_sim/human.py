"""A person's game against the strategies: the choices come from a callback, with undo.

The game is played by the project's one game loop (`play_game`), with the person's seat
a `ScriptedSeat` that replays the person's decisions so far and then asks. Undo replays
the game from its seed without the person's last decision: the dice, rug piles and the
strategies' own random streams all come from the game seed, so everything else happens
again exactly as before. The finished game is a record (`marrakech_sim.record`) and,
through the ordinary runner, a one-game run folder that `marrakech verify` checks: the
run's config names the person's seat as a `ScriptedSeat` with the person's decisions as
its parameter, so the run replays the same game.

The library never prints or reads: `read(prompt)` returns one line of the person's text
(raise EOFError to stop), `show(text)` displays.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from marrakech_sim.errors import MarrakechError, RecordError
from marrakech_sim.files import read_text, write_atomic
from marrakech_sim.play.game import GameRecord, PassThrough, play_game
from marrakech_sim.play.strategy import BaseStrategy, Strategy, StrategySpec
from marrakech_sim.play.view import GameView
from marrakech_sim.record import (
    ROTATION_TOKENS,
    Record,
    Roll,
    Rotation,
    record_from_actions,
    record_from_game,
    replay,
)
from marrakech_sim.rules import GameState, Rules
from marrakech_sim.show.words import ROTATION_WORDS

Decision = Any  # a rotation (-1, 0, 1) or a placement ((x1, y1), (x2, y2))
SCRIPTED_REF = "marrakech_sim.human:ScriptedSeat"
HELP = (
    "Type a number from the list, L/S/R for a rotation, or two squares for a placement "
    "(the letters marked on the board, AB, or coordinates, 3,4 3,5 or 3,4-3,5); u = undo "
    "your last choice, h = a hint, q = quit."
)


class QuitGame(MarrakechError):
    """The person stopped the game before its end (`record`: the turns played)."""

    record: Record | None = None


class _Undo(PassThrough):
    """Raised out of play_game (past its `except Exception`) to take a decision back."""


class _Stop(PassThrough):
    """Raised out of play_game when the person quits."""


class _Pause(PassThrough):
    """Raised out of play_game at the person's first decision past the script."""

    def __init__(
        self,
        state: GameState,
        options: tuple[Any, ...] | None,
        hint: Any,
        hint_failed: BaseException | None = None,
    ) -> None:
        super().__init__()
        self.state, self.options, self.hint = state, options, hint
        self.hint_failed = hint_failed


def _plain(decision: Decision) -> Any:
    """A decision as JSON-friendly data (placements as [[x1, y1], [x2, y2]])."""
    if isinstance(decision, tuple):
        return [list(decision[0]), list(decision[1])]
    return decision


def _decision(data: Any) -> Decision:
    if isinstance(data, list):
        return ((int(data[0][0]), int(data[0][1])), (int(data[1][0]), int(data[1][1])))
    return int(data)


class ScriptedSeat(BaseStrategy):
    """Plays a fixed list of decisions in order (a person's, saved in a run's config)."""

    PARAMETERS: ClassVar[dict[str, Any]] = {"decisions": []}

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.script = [_decision(d) for d in self.params["decisions"]]
        self.used = 0

    def _next(self) -> Decision:
        if self.used >= len(self.script):
            raise MarrakechError(f"the script has only {len(self.script)} decisions")
        self.used += 1
        return self.script[self.used - 1]

    def choose_rotation(self, view: GameView) -> int:
        return int(self._next())

    def choose_placement(self, view: GameView, options: tuple[Any, ...]) -> Any:
        choice = self._next()
        if choice not in options and (choice[1], choice[0]) in options:
            return (choice[1], choice[0])
        return choice


@dataclasses.dataclass
class _Seen:
    """A decision some seat made, with the position it was made in."""

    state: GameState
    decision: Decision


class _Watched:
    """A strategy whose decisions are noted (to show the person what happened)."""

    def __init__(self, inner: Strategy, seen: list[_Seen]) -> None:
        self.inner = inner
        self.seen = seen

    def __getattr__(self, name: str) -> Any:  # the hooks (on_game_start, on_game_end)
        return getattr(self.inner, name)

    def choose_rotation(self, view: GameView) -> int:
        state = view.state()
        choice = self.inner.choose_rotation(view)
        self.seen.append(_Seen(state, choice))  # as given: the game judges it (a fault)
        return choice

    def choose_placement(self, view: GameView, options: tuple[Any, ...]) -> Any:
        state = view.state()
        choice = self.inner.choose_placement(view, options)
        self.seen.append(_Seen(state, choice))
        return choice


class _Person(ScriptedSeat):
    """The person's seat: the script first, then `ask` (which may raise _Undo / _Stop)."""

    def __init__(
        self,
        script: list[Decision],
        ask: Callable[[GameView, tuple[Any, ...] | None], Decision],
        seen: list[_Seen],
    ) -> None:
        super().__init__()
        self.script = list(script)
        self.ask = ask
        self.seen = seen

    def _choose(self, view: GameView, options: tuple[Any, ...] | None) -> Decision:
        state = view.state()
        if self.used < len(self.script):
            choice = self.script[self.used]
        else:
            choice = self.ask(view, options)
            self.script.append(choice)
        self.used += 1
        self.seen.append(_Seen(state, choice))
        return choice

    def choose_rotation(self, view: GameView) -> int:
        return int(self._choose(view, None))

    def choose_placement(self, view: GameView, options: tuple[Any, ...]) -> Any:
        return self._choose(view, options)


def _chance_path(state: GameState, target: str, depth: int = 16) -> list[Any] | None:
    """The chance actions (draws, rolls) that lead from `state` to the position `target`."""
    if state.phase not in ("draw", "roll"):
        return [] if state.to_notation() == target else None
    if depth == 0:
        return None
    for action in state.legal_actions():
        rest = _chance_path(state.apply(action), target, depth - 1)
        if rest is not None:
            return [action, *rest]
    return None


def history_turns(
    rules: Rules, seen: Sequence[_Seen], current: GameState | None = None
) -> list[list[Any]]:
    """The turns so far (record actions) from the decisions seen, chance filled in up to
    `current` (the last turn may be unfinished)."""
    state = GameState.start(rules)
    actions: list[Any] = []
    steps: list[tuple[GameState, Decision | None]] = [(i.state, i.decision) for i in seen]
    if current is not None:
        steps.append((current, None))
    for target, decision in steps:
        path = _chance_path(state, target.to_notation())
        if path is None:
            break  # cannot happen with one game loop; show what is known
        for a in path:
            actions.append(a if isinstance(a, str) else Roll(a))
            state = state.apply(a)
        if decision is not None:
            try:  # a strategy's last choice may be its fault: not a move
                after = state.apply(decision)
            except (MarrakechError, TypeError, ValueError):
                break
            actions.append(Rotation(decision) if state.phase == "orient" else decision)
            state = after
    # group into turns: a turn starts at a draw, or at the first phase without one
    first = "roll" if rules.orient_at_end else "orient"
    turns: list[list[Any]] = []
    state = GameState.start(rules)
    for a in actions:
        starts = state.phase == "draw" or (rules.colours_per_player == 1 and state.phase == first)
        if starts or not turns:
            turns.append([])
        turns[-1].append(a)
        state = state.apply(a.value if isinstance(a, (Roll, Rotation)) else a)
    return turns


def whole_turns(rules: Rules, turns: list[list[Any]]) -> list[list[Any]]:
    """`turns` without an unfinished last one: a record holds whole turns (one to a line),
    and one cut in the middle (a quit, an opponent's fault) would not import."""
    if not turns:
        return turns
    try:
        replay(record_from_actions(rules, [f"seat{i}" for i in range(rules.players)], turns))
    except RecordError:
        return turns[:-1]
    return turns


# ---------------------------------------------------------------- the person's text


def parse_choice(text: str, options: tuple[Any, ...] | None) -> Decision | str:
    """A person's line as a decision, or one of 'undo', 'hint', 'quit', 'help', 'board'.

    options: the legal placements, or None when a rotation is asked for. Raises
    ValueError with what is allowed when the text is neither.
    """
    word = text.strip().lower()
    commands = {
        "u": "undo",
        "undo": "undo",
        "h": "hint",
        "hint": "hint",
        "q": "quit",
        "quit": "quit",
        "?": "help",
        "help": "help",
        "b": "board",
        "board": "board",
    }
    if word in commands:
        return commands[word]
    if options is None:
        named = {"l": -1, "left": -1, "s": 0, "straight": 0, "r": 1, "right": 1}
        if word in named:
            return named[word]
        if word in ("1", "2", "3"):
            return (-1, 0, 1)[int(word) - 1]
        raise ValueError(f"{text.strip()!r}: choose 1 (left), 2 (straight on), 3 (right) or L/S/R")
    if word.isdigit():
        i = int(word)
        if 1 <= i <= len(options):
            return options[i - 1]
        raise ValueError(f"{text.strip()!r}: choose a placement from 1 to {len(options)}")
    letters = {letter.lower(): q for q, letter in square_letters(options).items()}
    pair = [c for c in word if c not in " -,"]
    if len(pair) == 2 and all(c in letters for c in pair):
        a, b = letters[pair[0]], letters[pair[1]]
        for option in options:
            if option in ((a, b), (b, a)):
                return option
        raise ValueError(f"{text.strip()!r}: not a legal placement here")
    numbers = [int(v) for v in re.findall(r"\d+", word)]
    if len(numbers) == 4:
        a, b = (numbers[0], numbers[1]), (numbers[2], numbers[3])
        for option in options:
            if option in ((a, b), (b, a)):
                return option
        raise ValueError(f"{text.strip()!r}: not a legal placement here")
    raise ValueError(
        f"{text.strip()!r}: choose a placement by number (1 to {len(options)}) or by its two "
        "squares, by letters (A B) or coordinates (3,4 3,5)"
    )


def square_letters(options: tuple[Any, ...]) -> dict[tuple[int, int], str]:
    """A capital letter for each square a legal placement covers, in reading order (the
    marks on the board: a placement is then two letters)."""
    squares = sorted({q for option in options for q in option}, key=lambda q: (q[1], q[0]))
    return {q: chr(ord("A") + i) for i, q in enumerate(squares)}


def options_text(options: tuple[Any, ...] | None) -> str:
    """The numbered choices of a prompt."""
    if options is None:
        return "  ".join(
            f"{i + 1}) {ROTATION_WORDS[r]} ({ROTATION_TOKENS[r]})" for i, r in enumerate((-1, 0, 1))
        )
    letters = square_letters(options)
    return "  ".join(
        f"{i + 1}) {letters[a]}{letters[b]} {a[0]},{a[1]}-{b[0]},{b[1]}"
        for i, (a, b) in enumerate(options)
    )


# ---------------------------------------------------------------- the game


@dataclasses.dataclass
class PersonGame:
    """A finished (or quit) game of a person against strategies."""

    rules: Rules
    seat: int
    seed: int
    names: tuple[str, ...]
    decisions: list[Decision]  # the person's, in order
    game: GameRecord | None  # None when quit
    record: Record


@dataclasses.dataclass
class _Prompter:
    """Asks the person for one decision: shows the position and what happened, reads."""

    rules: Rules
    names: list[str]
    seat: int
    read: Callable[[str], str]
    show: Callable[[str], None]
    hinter: Strategy | None
    colour: bool
    seen: list[_Seen] = dataclasses.field(default_factory=list)
    person: _Person | None = None

    def ask(self, view: GameView, options: tuple[Any, ...] | None) -> Decision:
        from marrakech_sim.show.terminal import position_text
        from marrakech_sim.show.words import Legend, player

        state = view.state()
        turns = history_turns(self.rules, self.seen, state)
        draft = record_from_actions(self.rules, self.names, turns) if turns else None
        heading = f"You are {player(self.seat)} ({self.names[self.seat]})."
        if self.rules.colours_per_player > 1 and state.colour:  # RULES.md §1: drawn first
            heading += f" Your rug this turn: {state.colour}."
        marks = square_letters(options) if options else None  # the placements on the board
        legend = Legend(names=self.names, title=heading)
        board = position_text(state, legend, colour=self.colour, marks=marks)
        self.show(board)
        for line in _since_last(draft, self.seat, self.names) if draft else []:
            self.show(line)
        what = "rotation" if options is None else "placement"
        while True:
            self.show(f"Your {what}: {options_text(options)}")
            try:
                text = self.read(f"{what} (u undo, h hint, q quit)")
            except (EOFError, KeyboardInterrupt):  # Ctrl-D or Ctrl-C at the prompt: quit, saved
                raise _Stop from None
            try:
                choice = parse_choice(text, options)
            except ValueError as exc:
                self.show(str(exc))
                continue
            if choice == "undo":
                if self.person is None or self.person.used == 0:
                    self.show("nothing to undo yet")
                    continue
                raise _Undo
            if choice == "quit":
                raise _Stop
            if choice in ("help", "board", "hint"):
                shown = {"help": HELP, "board": board}.get(choice)
                self.show(shown if shown is not None else _hint(self.hinter, view, options))
                continue
            return choice


def play_person(
    rules: Rules,
    opponents: Sequence[StrategySpec],
    *,
    read: Callable[[str], str],
    show: Callable[[str], None],
    seat: int = 0,
    seed: int = 0,
    name: str = "you",
    hint: StrategySpec | None = None,
    colour: bool = False,
    script: Sequence[Decision] = (),
) -> PersonGame:
    """Play one game with a person in `seat` and `opponents` in the other seats, in order.

    script: the person's first decisions, already made. Raises QuitGame when the person
    quits (its `record` holds the turns played).
    """
    from marrakech_sim.run.isolated import isolated
    from marrakech_sim.show.terminal import position_text
    from marrakech_sim.show.words import Legend

    names = seat_names(rules, opponents, seat, name)
    decisions: list[Decision] = list(script)
    budgets = opponent_budgets(rules, seat)
    # plug-ins play in processes of their own: one that ends its process (os._exit, a
    # segfault) ends the game as its fault, and the turns played are kept
    seconds = max(b for b in budgets if b is not None)
    hinter = isolated(hint, seconds) if hint is not None else None
    warm_up(rules, opponents, show)

    while True:
        prompter = _Prompter(rules, names, seat, read, show, hinter, colour)
        person = _Person(decisions, prompter.ask, prompter.seen)
        prompter.person = person
        players: list[Any] = [
            _Watched(isolated(spec, seconds), prompter.seen) for spec in opponents
        ]
        players.insert(seat, person)
        try:
            game = play_game(rules, players, seed, names=names, time_budgets=budgets)
        except _Undo:
            decisions = person.script[: person.used - 1]
            show("(undone: your last choice is taken back)")
            continue
        except _Stop:
            turns = whole_turns(rules, history_turns(rules, prompter.seen))
            stopped = QuitGame(f"quit after {len(turns)} turns")
            stopped.record = record_from_actions(rules, names, turns, event="play", seed=seed)
            raise stopped from None
        if game.error is not None:  # an opponent's fault ends the game; its turns are kept
            turns = whole_turns(rules, history_turns(rules, prompter.seen))
            faulted = QuitGame(f"the game ended in a fault after {len(turns)} turns: {game.error}")
            faulted.record = record_from_actions(rules, names, turns, event="play", seed=seed)
            raise faulted
        record = record_from_game(game, rules, names, event="play", seed=seed)
        done = replay(record)
        legend = Legend(names=names, info=done.turns[-1], title="Final position")
        final = position_text(done.final, legend, colour=colour)
        show(final)
        return PersonGame(rules, seat, seed, tuple(names), person.script, game, record)


#: what warm_up says before compiling the built-in players' kernels into an empty cache
#: (the expert's: 2.7 min of CPU, 9 min on a busy 2-core machine)
COMPILING = (
    "compiling the kernels of {names}: a few minutes (more on a busy machine), once per "
    "installation"
)


def warm_up(
    rules: Rules,
    opponents: Sequence[StrategySpec],
    compiling: Callable[[str], None] | None = None,
) -> None:
    """Load (or compile) the built-in opponents' kernels before the game, untimed.

    In the game each opponent's start and decisions are timed (`opponent_budgets`), and
    compiling the expert's kernels into an empty cache takes minutes: the game would end
    in its fault, and again at every start, since a compilation cut short is not cached.
    So the first time (per installation and player: `kernel_cache` markers) one game of
    the built-in opponents, greedy in the other seats, is played here without a clock.
    A plug-in opponent is not played here (it could hang or crash this process): its
    own kernels are its business.

    compiling(words): told first when there is something to compile.
    """
    from marrakech_sim import kernel_cache

    greedy = StrategySpec.of("greedy")
    classes = [spec.load_class() for spec in opponents]
    builtin = [spec.is_builtin for spec in opponents]
    kinds = {
        _kind(cls): spec.label
        for spec, cls, ours in zip(opponents, classes, builtin, strict=True)
        if ours
    }
    kinds.setdefault(_kind(greedy.load_class()), greedy.label)  # the other seats' player
    cold = [kind for kind in kinds if not kernel_cache.compiled_before(kind)]
    if not cold:
        return
    if compiling is not None:
        names = ", ".join(sorted({kinds[kind] for kind in cold}))
        compiling(COMPILING.format(names=names))
    players = [
        spec.build() if ours else greedy.build()
        for spec, ours in zip(opponents, builtin, strict=True)
    ]
    players += [greedy.build()] * (rules.players - len(players))
    play_game(rules, players, 0)  # no time budgets; a fault here shows in the real game
    for kind in cold:
        kernel_cache.mark_compiled(kind)


def _kind(cls: type) -> str:
    """The kernel cache marker of a player class's warm-up."""
    return f"play-{cls.__module__}.{cls.__qualname__}"


def opponent_budgets(rules: Rules, seat: int) -> list[float | None]:
    """Each opponent's time per decision (a study's default); none for the person."""
    from marrakech_sim.run.config import DEFAULT_DECISION_SECONDS

    budgets: list[float | None] = [DEFAULT_DECISION_SECONDS] * rules.players
    budgets[seat] = None
    return budgets


def seat_names(rules: Rules, opponents: Sequence[StrategySpec], seat: int, name: str) -> list[str]:
    """The seats' names: the opponents' labels in order, the person's `name` in `seat`."""
    if len(opponents) != rules.players - 1:
        raise MarrakechError(
            f"{len(opponents)} opponents for a {rules.players}-player game: give "
            f"{rules.players - 1}"
        )
    if not 0 <= seat < rules.players:
        raise MarrakechError(f"seat {seat}: allowed are 0 to {rules.players - 1}")
    names = [spec.label for spec in opponents]
    names.insert(seat, name)
    return names


@dataclasses.dataclass
class Asked:
    """Where a person's game stands after a script of decisions: the next choice, or the end.

    `state` is the position the person chooses in (the final one when `game` is set);
    `options` the legal placements, None when a rotation is asked, () at the end; `turns`
    the record actions so far (the last turn may be unfinished); `hint` the hint
    strategy's choice when one was asked for; `fault` why the game ended in a strategy's
    fault (then `options` is () and `turns` the turns played, the last maybe unfinished).
    """

    state: GameState
    options: tuple[Any, ...] | None
    turns: list[list[Any]]
    game: PersonGame | None = None
    hint: Decision | None = None
    fault: str | None = None
    hint_failed: BaseException | None = None  # what the hint strategy raised, if it failed

    @property
    def actions(self) -> list[Any]:
        """The record actions so far, in order (Rotation/Roll wrapped)."""
        return [a for turn in self.turns for a in turn]


def play_to_choice(
    rules: Rules,
    opponents: Sequence[StrategySpec],
    script: Sequence[Decision],
    *,
    seat: int = 0,
    seed: int = 0,
    name: str = "you",
    hint: StrategySpec | None = None,
    budgets: Sequence[float | None] | None = None,
) -> Asked:
    """Play the game with the person's decisions `script`, up to the person's next choice.

    Stateless: the same script gives the same position (the game replays from `seed`),
    so a page can ask for one decision at a time and undo by dropping the last. Raises
    MarrakechError when a scripted decision is not legal where it is played.

    Plug-in opponents and the hint strategy play in processes of their own
    (`run.isolated`), as in `play_person`: whatever one does (raise, a BaseException
    included, exit, crash, sleep, answer garbage) ends the game as its fault, and the
    answer is an `Asked` with `fault` set and the turns played. budgets: each seat's time
    per decision (default `opponent_budgets`).
    """
    from marrakech_sim.run.isolated import close, isolated

    names = seat_names(rules, opponents, seat, name)
    budgets = list(budgets) if budgets is not None else opponent_budgets(rules, seat)
    seconds = max((b for b in budgets if b is not None), default=None)
    seen: list[_Seen] = []
    built: list[Any] = []
    try:
        hinter = isolated(hint, seconds) if hint is not None else None
        built.append(hinter)

        def pause(view: GameView, options: tuple[Any, ...] | None) -> Decision:
            advice, failed = _advice(hinter, view, options) if hinter else (None, None)
            raise _Pause(view.state(), options, advice, failed)

        person = _Person(list(script), pause, seen)
        built += [isolated(spec, seconds) for spec in opponents]
        players: list[Any] = [_Watched(strategy, seen) for strategy in built[1:]]
        players.insert(seat, person)
        try:
            game = play_game(rules, players, seed, names=names, time_budgets=budgets)
        except _Pause as asked:
            turns = history_turns(rules, seen, asked.state)
            return Asked(
                asked.state, asked.options, turns, hint=asked.hint, hint_failed=asked.hint_failed
            )
    finally:
        close(built)
    if game.error is not None:  # an opponent's fault ends the game; its whole turns are kept
        turns = whole_turns(rules, history_turns(rules, seen))
        kept = record_from_actions(rules, names, turns) if turns else None
        final = replay(kept).final if kept else GameState.start(rules)
        return Asked(final, (), turns, fault=game.error)
    if person.used < len(person.script):
        raise MarrakechError(
            f"the game ended after {person.used} of the {len(person.script)} decisions"
        )
    record = record_from_game(game, rules, names, event="play", seed=seed)
    done = PersonGame(rules, seat, seed, tuple(names), person.script, game, record)
    return Asked(replay(record).final, (), [list(t) for t in record.turns], done)


def _since_last(draft: Record, seat: int, names: Sequence[str]) -> list[str]:
    """The turns since the person's last turn, in words."""
    from marrakech_sim.show.words import player

    infos = replay(draft, check=False).turns
    out: list[str] = []
    for info in reversed(infos):
        if info.seat == seat and out:
            break
        if info.rotation is None and info.roll is None:  # the turn about to start
            continue
        out.append(info.describe(names, player))
    return list(reversed(out))[-len(names) :]


def _hint(hinter: Strategy | None, view: GameView, options: tuple[Any, ...] | None) -> str:
    """The hint strategy's choice in words; what went wrong when it fails (the game goes on)."""
    if hinter is None:
        return "no hint strategy"
    advice, failed = _advice(hinter, view, options)
    if failed is not None:
        return f"no hint: the hint strategy raised {failed!r} (your game goes on)"
    if options is None:
        return f"hint: {ROTATION_WORDS[advice]} ({ROTATION_TOKENS[advice]})"
    (x1, y1), (x2, y2) = advice
    return f"hint: {x1},{y1}-{x2},{y2}"


def _advice(
    hinter: Strategy, view: GameView, options: tuple[Any, ...] | None
) -> tuple[Any, BaseException | None]:
    """The hint strategy's choice (a rotation as an int), or None and what it raised: its
    fault is not the person's, in the terminal or the browser."""
    try:
        if options is None:
            return int(hinter.choose_rotation(view)), None
        return hinter.choose_placement(view, options), None
    except PassThrough:
        raise
    except BaseException as exc:
        return None, exc


def study_rules(config: str | Path, name: str) -> Rules:
    """The rule set `name` of a config file: a study config (any rule set its study can
    name, a sweep's points too) or a file of rule sets alone (`marrakech tune`'s
    tuned.toml)."""
    try:
        data = tomllib.loads(read_text(config, "config", MarrakechError))
    except tomllib.TOMLDecodeError as exc:
        raise MarrakechError(f"config {str(config)!r} is not valid TOML: {exc}") from exc
    rulesets = _config_rulesets(config, data)
    if name not in rulesets:
        raise MarrakechError(
            f"rule set {name!r} is not in {str(config)!r}: allowed are {', '.join(rulesets)}"
        )
    return rulesets[name]


def study_ruleset_names(path: str | Path) -> tuple[str, ...] | None:
    """The rule set names of a config file with a `[rulesets]` table; None for a file
    that has none (a rules file, or no TOML at all: reading it as rules says what is
    wrong)."""
    try:
        data = tomllib.loads(read_text(path, "rules file", MarrakechError))
    except (tomllib.TOMLDecodeError, MarrakechError):
        return None
    if not isinstance(data.get("rulesets"), dict):
        return None
    return tuple(_config_rulesets(path, data))


def _config_rulesets(path: str | Path, data: dict[str, Any]) -> dict[str, Rules]:
    """The rule sets of the config `data` read from `path`: a study config's (loaded as
    its study resolves them), or those of a file of `[rulesets.NAME]` tables alone."""
    from marrakech_sim.run.config import load_study, rulesets_from_table

    if "strategies" not in data:  # rule sets alone: nothing else of a study to check
        return rulesets_from_table(data.get("rulesets"))
    return dict(load_study(path).rulesets)


def game_seed(seed: int) -> int:
    """The game seed of the one game of a run with root seed `seed` (its block 0)."""
    import numpy as np

    from marrakech_sim.run.plan import block_seeds

    return int(block_seeds(seed, np.zeros(1, np.int64))[0])


def write_run(
    game: PersonGame, run_seed: int, opponents: Sequence[StrategySpec], out_dir: str | Path
) -> Path:
    """The game as a one-game run folder that `verify` checks (the runner replays it).

    The game must have been played with seed `game_seed(run_seed)`.
    """
    from marrakech_sim.run.config import study_from_dict
    from marrakech_sim.run.runner import run_study

    if game.seed != game_seed(run_seed):
        raise MarrakechError("the game was not played with the run's game seed")
    strategies: dict[str, Any] = {}
    lineup = []
    for spec in opponents:
        strategies[spec.label] = {"ref": spec.ref, "params": dict(spec.params)}
        lineup.append(spec.label)
    person = game.names[game.seat]
    if person in strategies:
        person = f"{person}-person"
    strategies[person] = {
        "ref": SCRIPTED_REF,
        "params": {"decisions": [_plain(d) for d in game.decisions]},
    }
    lineup.insert(game.seat, person)
    config = {
        "name": "play",
        "description": ""
        "a person's game (marrakech play): the person's seat replays their decisions",
        "seed": run_seed,
        "games_per_lineup": 1,
        "rotation": "none",
        "rulesets": {"play": game.rules.to_dict()},
        "strategies": strategies,
        "schedule": {"kind": "lineups", "rulesets": ["play"], "lineups": [lineup]},
    }
    study = study_from_dict(config)
    run_study(study, out_dir, workers=0)
    return Path(out_dir)


def save_game(
    game: PersonGame, run_seed: int, opponents: Sequence[StrategySpec], out_dir: str | Path
) -> Record:
    """The game as a one-game run folder (`write_run`) with its record in game.txt.

    The record is the one `export` writes from the run folder (Event, Game, Date of the run).
    """
    from marrakech_sim.record import records_from_run

    out = Path(out_dir)
    try:
        write_run(game, run_seed, opponents, out)
    except (MarrakechError, OSError) as exc:  # the game is saved whatever stops the run folder
        fallback = out.parent / f"{out.name}-game.txt"
        try:
            saved = write_atomic(fallback, game.record.to_text())
        except (OSError, MarrakechError) as also:
            raise MarrakechError(
                f"the one-game run folder {str(out)!r} could not be written ({exc}), nor "
                f"its record: {also}"
            ) from exc
        raise MarrakechError(
            f"the one-game run folder {str(out)!r} could not be written ({exc}); "
            f"the game's record is in {str(saved)!r}"
        ) from exc
    record = next(records_from_run(out, [0]))
    write_atomic(out / "game.txt", record.to_text())
    return record
