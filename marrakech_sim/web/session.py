"""One person's game in the browser, as the data the page draws.

`WebGame` holds the person's decisions and nothing else of the game: every view replays
the game from its seed with them (`human.play_to_choice`), so undo drops the last one
and the same decisions always give the same position. A choice that is not legal where
it is made is refused (`Refused`, with what is allowed) and changes nothing.

A view (`WebGame.view`) is JSON-ready: the board as the pictures draw it, what is asked
(a rotation with Assam's walks for each, or a placement with the legal ones), the colour
drawn, the move list, and the steps since the last view (each action of the other seats
and of the person's own walk and payment) for the page to animate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from marrakech_sim.errors import MarrakechError
from marrakech_sim.files import write_atomic
from marrakech_sim.human import (
    Asked,
    Decision,
    game_seed,
    play_to_choice,
    save_game,
    seat_names,
    warm_up,
)
from marrakech_sim.play.strategy import StrategySpec
from marrakech_sim.record import Record, Roll, Rotation, record_from_actions, replay
from marrakech_sim.rules import FACINGS, GameState, Rules
from marrakech_sim.rules import core as k
from marrakech_sim.rules.queries import k_next_walker
from marrakech_sim.show.page import board_svg
from marrakech_sim.show.palette import COLOURS
from marrakech_sim.show.scene import MARGIN, SQUARE
from marrakech_sim.show.words import ROTATION_WORDS, Legend, player

Square = tuple[int, int]


class Refused(MarrakechError):
    """A choice that is not a legal move now (the message says what is allowed)."""


# ---------------------------------------------------------------- rule previews


def walk_path(x: int, y: int, facing: int, steps: int, n: int) -> list[Square]:
    """The squares Assam steps on, in order, walking `steps` from (x, y) (RULES.md §4)."""
    path = []
    for _ in range(steps):
        x, y, facing = (int(v) for v in k.step(x, y, facing, n))
        path.append((x, y))
    return path


def region(state: GameState, x: int, y: int) -> list[Square]:
    """The 4-connected squares of the colour visible at (x, y) (RULES.md §5), sorted."""
    half = state.square(x, y)
    if half is None:
        return []
    n = state.rules.board_size
    seen, todo = {(x, y)}, [(x, y)]
    while todo:
        cx, cy = todo.pop()
        for nx, ny in ((cx + 1, cy), (cx - 1, cy), (cx, cy + 1), (cx, cy - 1)):
            if (nx, ny) in seen or not (0 <= nx < n and 0 <= ny < n):
                continue
            other = state.square(nx, ny)
            if other is not None and other[0] == half[0]:
                seen.add((nx, ny))
                todo.append((nx, ny))
    return sorted(seen)


def payment(state: GameState, x: int, y: int, payer: int) -> tuple[int, int | None]:
    """(amount due, payee) if `payer` stopped on (x, y) now (RULES.md §5: the rules core's)."""
    packed = state.packed.copy()  # payment_at uses the scratch section
    due, payee = k.payment_at(packed, y * state.rules.board_size + x, payer)
    return int(due), (int(payee) if payee >= 0 else None)


def walks(state: GameState, walker: int) -> dict[str, Any]:
    """Assam's walks for each rotation: the path of the longest roll, and per die face
    the landing, its chance, what `walker` would pay there and the region paid for."""
    rules = state.rules
    x, y, facing = state.assam
    f0 = FACINGS.index(facing)
    faces = rules.die_faces
    out: dict[str, Any] = {}
    for rotation in (-1, 0, 1):
        f = (f0 + rotation) % 4
        path = walk_path(x, y, f, max(faces), rules.board_size)
        stops = []
        for face in rules.distinct_faces:
            lx, ly = path[face - 1]
            due, payee = payment(state, lx, ly, walker)
            stops.append(
                {
                    "roll": face,
                    "chance": faces.count(face) / len(faces),
                    "square": [lx, ly],
                    "due": due,
                    "payee": payee,
                    "region": [list(q) for q in region(state, lx, ly)] if due else [],
                }
            )
        out[str(rotation)] = {"path": [[x, y], *([a, b] for a, b in path)], "stops": stops}
    return out


# ---------------------------------------------------------------- the steps to animate


def _api(action: Any) -> Any:
    return action.value if isinstance(action, (Rotation, Roll)) else action


def _who(seat: int, person: int, names: Sequence[str]) -> str:
    return "you" if seat == person else f"{player(seat)} ({names[seat]})"


def steps(
    rules: Rules, names: Sequence[str], person: int, actions: Sequence[Any], start: int
) -> list[dict[str, Any]]:
    """One frame per action from `actions[start]` on: the board, a caption, highlights.

    A roll has two frames: Assam's walk with the region to pay for (before paying), then
    the position after the payment.
    """
    state = GameState.start(rules)
    for action in actions[:start]:
        state = state.apply(_api(action))
    frames: list[dict[str, Any]] = []
    legend = Legend(names=names)
    for action in actions[start:]:
        seat, who = state.seat, _who(state.seat, person, names)
        if isinstance(action, Roll):
            x, y, facing = state.assam
            path = walk_path(x, y, FACINGS.index(facing), action.value, rules.board_size)
            lx, ly = path[-1]
            due, payee = payment(state, lx, ly, seat)
            caption = f"{who} rolled {action.value}: Assam walks to {lx},{ly}"
            if due:
                caption += f"; {'you pay' if seat == person else 'pays'} {due} to "
                caption += _who(payee, person, names) if payee is not None else "?"
                caption += f" for a region of {due}"
            walked = {
                "path": [[x, y], *([a, b] for a, b in path)],
                "region": [list(q) for q in region(state, lx, ly)] if due else [],
            }
            frames.append(
                {"board": board_svg(state, legend), "caption": caption, "overlay": walked}
            )
            had = state.dirhams[seat]
            state = state.apply(action.value)
            if due:
                after = f"{who} paid {had - state.dirhams[seat]}"
                if state.eliminated[seat]:
                    after += ": bankrupt, out of the game"
                frames.append({"board": board_svg(state, legend), "caption": after, "overlay": {}})
            continue
        overlay: dict[str, Any] = {}
        if isinstance(action, str):
            caption = f"{who} drew {action}" if seat != person else f"you drew {action}"
        elif isinstance(action, Rotation):
            caption = f"{who}: Assam {ROTATION_WORDS[action.value]}"
        else:
            (x1, y1), (x2, y2) = action
            caption = f"{who} placed {state.colour} on {x1},{y1}-{x2},{y2}"
            overlay = {"rug": [[x1, y1], [x2, y2]]}
        state = state.apply(_api(action))
        frames.append({"board": board_svg(state, legend), "caption": caption, "overlay": overlay})
    return frames


# ---------------------------------------------------------------- the game


class WebGame:
    """A person's game against strategies, one choice at a time (see the module doc).

    A plug-in opponent's fault (it raises, exits, crashes, sleeps past its time or answers
    garbage: `human.play_to_choice` plays it in a process of its own) ends the game: the
    turns played are saved as a record in `unfinished.txt` of the run folder, as the
    terminal's `play` does, and the view says why (`fault`).
    """

    def __init__(
        self,
        rules: Rules,
        opponents: Sequence[StrategySpec],
        *,
        run_seed: int,
        out_dir: str | Path,
        seat: int = 0,
        name: str = "you",
        hint: StrategySpec | None = None,
        compiling: Callable[[str], None] | None = None,
        budgets: Sequence[float | None] | None = None,
    ) -> None:
        """compiling(words): told before the opponents' kernels are compiled into an
        empty cache (`human.warm_up`: minutes, once per installation). budgets: each
        seat's time per decision (default: `human.opponent_budgets`)."""
        self.rules = rules
        self.opponents = list(opponents)
        self.names = seat_names(rules, self.opponents, seat, name)
        warm_up(rules, self.opponents, compiling)
        self.seat, self.name, self.hinter = seat, name, hint
        self.budgets = list(budgets) if budgets is not None else None
        self.run_seed, self.seed = run_seed, game_seed(run_seed)
        self.out_dir = Path(out_dir)
        self.decisions: list[Decision] = []
        self.record: Record | None = None  # the saved record, once the game is over
        self.saved: Path | None = None  # where the record is
        self.fault: str | None = None  # why the game ended in a strategy's fault
        self.shown = 0  # actions whose frames the page has had
        self.asked = self._play(None)

    def _play(self, hint: StrategySpec | None) -> Asked:
        asked = play_to_choice(
            self.rules,
            self.opponents,
            self.decisions,
            seat=self.seat,
            seed=self.seed,
            name=self.name,
            hint=hint,
            budgets=self.budgets,
        )
        if asked.fault is not None and self.record is None:
            self._save_fault(asked)
        return asked

    def _save_fault(self, asked: Asked) -> None:
        """The turns played up to an opponent's fault, saved as the terminal's play does."""
        self.fault = asked.fault
        record = record_from_actions(
            self.rules, self.names, asked.turns, event="play", seed=self.seed
        )
        self.record = record
        target = self.out_dir / "unfinished.txt"
        try:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            self.saved = write_atomic(target, record.to_text())
        except (OSError, MarrakechError) as exc:
            self.fault = f"{asked.fault} (the turns played could not be saved: {exc})"

    @property
    def phase(self) -> str:
        """'orient' or 'place' (what is asked of the person), or 'over'."""
        if self.asked.game is not None or self.asked.fault is not None:
            return "over"
        return "orient" if self.asked.options is None else "place"

    def next_game(self, number: int) -> WebGame:
        """Game `number` (2, 3, ...) of the server whose first game this is: the same
        seats, strategies and rules, run seed `run_seed + number - 1` and run folder
        `OUT-number` beside this one's, or the first `OUT-k` (k > number) that is missing
        or empty when that one holds files (the seed stays that of game `number`)."""
        first, k = self.out_dir, number
        out = Path(f"{first}-{k}")
        while out.exists() and (not out.is_dir() or any(out.iterdir())):
            k += 1
            out = Path(f"{first}-{k}")
        return WebGame(
            self.rules,
            self.opponents,
            run_seed=self.run_seed + number - 1,
            out_dir=out,
            seat=self.seat,
            name=self.name,
            hint=self.hinter,
            budgets=self.budgets,
        )

    # ------------------------------------------------------------ the person's moves

    def check(self, data: Any) -> Decision:
        """The decision of a page's request ({"rotation": -1|0|1} or {"placement":
        [[x1, y1], [x2, y2]]}) as the game takes it; Refused when it is not legal now."""
        if self.phase == "over":
            raise Refused("the game is over: no more moves")
        if (
            not isinstance(data, dict)
            or len(data) != 1
            or next(iter(data))
            not in (
                "rotation",
                "placement",
            )
        ):
            raise Refused(f"{data!r}: expected {{'rotation': ...}} or {{'placement': ...}}")
        kind, value = next(iter(data.items()))
        if self.phase == "orient":
            if kind != "rotation":
                raise Refused("a rotation is asked for now: left, straight on or right")
            if value not in (-1, 0, 1) or isinstance(value, bool):
                raise Refused(f"rotation {value!r}: allowed are -1 (left), 0, 1 (right)")
            return int(value)
        if kind != "placement":
            raise Refused("a placement is asked for now: two squares next to Assam")
        options = self.asked.options or ()
        try:
            (x1, y1), (x2, y2) = value
            a, b = (int(x1), int(y1)), (int(x2), int(y2))
        except (TypeError, ValueError):
            raise Refused(f"placement {value!r}: expected [[x1, y1], [x2, y2]]") from None
        for option in options:
            if option in ((a, b), (b, a)):
                return option
        legal = ", ".join(f"{p[0]},{p[1]}-{q[0]},{q[1]}" for p, q in options)
        raise Refused(f"{a[0]},{a[1]}-{b[0]},{b[1]} is not a legal placement now; legal: {legal}")

    def choose(self, data: Any) -> dict[str, Any]:
        """Make the person's choice and play on to the next one; the new view."""
        decision = self.check(data)
        self.decisions.append(decision)
        self.asked = self._play(None)
        if self.asked.game is not None and self.record is None:
            self.record = save_game(self.asked.game, self.run_seed, self.opponents, self.out_dir)
            self.saved = self.out_dir / "game.txt"
        return self.view()

    def undo(self) -> dict[str, Any]:
        """Take the person's last choice back (the game replays without it); the new view."""
        if self.record is not None:
            raise Refused("the game is over and saved: nothing to undo")
        if not self.decisions:
            raise Refused("nothing to undo yet")
        self.decisions.pop()
        self.asked = self._play(None)
        self.shown = len(self.asked.actions)
        return self.view()

    def hint(self) -> dict[str, Any]:
        """The hint strategy's choice here, in words and as the page's request."""
        if self.hinter is None:
            raise Refused("no hint strategy (start with --hint NAME)")
        if self.phase == "over":
            raise Refused("the game is over: no hints")
        asked = self._play(self.hinter)
        if asked.fault is not None:  # an opponent that does not play the same game again
            self.asked = asked
            raise Refused(f"no hint: the game ended in a fault: {asked.fault}")
        advice: Any = asked.hint
        if advice is None:  # the hint strategy's fault is not the person's
            raise Refused(
                f"no hint: the hint strategy ({self.hinter.label}) raised "
                f"{asked.hint_failed!r} (your game goes on)"
            )
        if self.phase == "orient":
            text = f"hint ({self.hinter.label}): {ROTATION_WORDS[int(advice)]}"
            return {"hint": text, "move": {"rotation": int(advice)}}
        (x1, y1), (x2, y2) = advice
        text = f"hint ({self.hinter.label}): {x1},{y1}-{x2},{y2}"
        return {"hint": text, "move": {"placement": [[x1, y1], [x2, y2]]}}

    # ------------------------------------------------------------ what the page draws

    def view(self, *, reload: bool = False) -> dict[str, Any]:
        """The page's data now, with the frames of the actions it has not had yet.

        reload: a page (re)opened mid-game gets no frames; at the start it gets those of
        the seats before the person's.
        """
        asked, rules = self.asked, self.rules
        state = asked.state
        actions = asked.actions
        if reload and self.decisions:
            self.shown = len(actions)
        frames = steps(rules, self.names, self.seat, actions, self.shown)
        self.shown = len(actions)
        draft = record_from_actions(rules, self.names, asked.turns) if asked.turns else None
        infos = replay(draft, check=False).turns if draft else ()
        # a turn with nothing but the draw so far has nothing to say yet
        moves = [m for m in (t.describe(self.names, player) for t in infos) if not m.endswith(": ")]
        colour = state.colour if self.phase != "over" else None
        data: dict[str, Any] = {
            "phase": self.phase,
            "board": board_svg(state, Legend(names=self.names)),
            "geometry": {"n": rules.board_size, "square": SQUARE, "margin": MARGIN},
            "seat": self.seat,
            "names": self.names,
            "colour": colour,
            "colour_hex": COLOURS[colour] if colour else None,
            "assam": list(state.assam),
            "position": state.to_notation(),
            "decisions": len(self.decisions),
            "moves": moves,
            "steps": frames,
            "prompt": self._prompt(state),
        }
        if self.phase == "orient":
            walker = int(k_next_walker(state.packed))
            data["walker"] = walker
            data["walks"] = walks(state, walker) if walker >= 0 else {}
        elif self.phase == "place":
            data["placements"] = [[list(a), list(b)] for a, b in asked.options or ()]
        else:
            assert self.record is not None
            data["result"] = self.record.result
            data["fault"] = self.fault
            data["saved"] = {
                "run": str(self.out_dir) if self.fault is None else None,
                "record": str(self.saved) if self.saved is not None else None,
            }
        return data

    def _prompt(self, state: GameState) -> str:
        if self.fault is not None:
            return f"Game over: it ended in a fault. {self.fault}"
        if self.phase == "over":
            outcome = state.outcome()
            won = outcome is not None and self.seat in outcome.winners
            return "Game over: " + ("you won." if won else "you did not win.")
        you = f"You are {player(self.seat)}"
        drew = f", your rug this turn is {state.colour}" if state.colour else ""
        if self.phase == "place":
            return f"{you}{drew}: place it on two squares, one of them next to Assam."
        walker = int(k_next_walker(state.packed))
        if walker != self.seat:
            return f"{you}{drew}: turn Assam for {player(walker)}'s walk (the variant)."
        return f"{you}{drew}: turn Assam left, keep him straight on, or turn him right."
