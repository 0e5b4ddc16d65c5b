"""GameView: what a strategy sees, and its compiled queries, against plain computations."""

from __future__ import annotations

import random

import numpy as np
import pytest

from marrakech_sim.play.rng import Rng
from marrakech_sim.play.view import GameView
from marrakech_sim.rules import core as k
from marrakech_sim.rules.options import COLOUR_LETTERS, FACINGS, Rules
from marrakech_sim.rules.queries import (
    F_OPPONENT_HALVES,
    F_OPPONENT_REGION,
    F_OWN_HALVES,
    F_REGION,
    _colour_mask,
    _labelled_rug_region,
    _rug_region,
    k_label_regions,
    k_payment_totals,
    k_rotation_totals,
    placing_mask,
    prepare_regions,
)
from marrakech_sim.rules.state import GameState


def positions(rules: Rules, phase: str, count: int, seed: int = 5) -> list[GameState]:
    """`count` positions in `phase` from random games (spread over the game)."""
    rnd = random.Random(seed)
    found: list[GameState] = []
    while len(found) < count:
        state = GameState.start(rules)
        while not state.is_over:
            if state.phase == phase and rnd.random() < 0.25:
                found.append(state)
            state = state.apply(rnd.choice(state.legal_actions()))
    return found[:count]


def view_of(state: GameState) -> GameView:
    s = np.array(state.packed)
    return GameView(state.rules, s, int(s[k.SEAT_]), Rng(1, 64))


def assert_same_position(a: np.ndarray, b: np.ndarray) -> None:
    """Equal packed states, apart from the scratch section (work space, not position)."""
    keep = np.ones(len(a), bool)
    keep[a[k.SCRATCH_AT] : a[k.FACES_AT]] = False
    np.testing.assert_array_equal(a[keep], b[keep])


# boards of up to 63 squares answer region queries with bitboards, larger ones from a
# labelling of the board (view.prepare_regions): both are checked
RULES = [
    Rules(),
    Rules(players=2),
    Rules(players=3, orient_at_end=True, starting_dirhams=8),
    Rules(board_size=5, players=3, colours_per_player=2, rugs_per_colour=4),
    Rules(board_size=9, players=3, starting_dirhams=10),
]
IDS = ["4p", "2p", "3p-end", "3p-two-colours-board5", "3p-board9"]


@pytest.mark.parametrize("rules", RULES, ids=IDS)
def test_landing_matches_walking_the_state(rules: Rules) -> None:
    """landing(rotation, roll) is where GameState puts Assam after that rotation and roll."""
    for state in positions(rules, "orient", 10):
        if rules.orient_at_end:
            continue  # the variant's rotation is followed by the next player's roll
        view = view_of(state)
        for rotation in (-1, 0, 1):
            rolled = state.apply(rotation)
            for face in rules.distinct_faces:
                assert view.landing(rotation, face) == rolled.apply(face).assam
            dist = dict(view.landing_distribution(rotation))
            assert sum(dist.values()) == pytest.approx(1.0)
            land = view.landings(rotation)
            for (x, y, f), face in zip(land.tolist(), rules.die_faces, strict=True):
                assert view.landing(rotation, face) == (x, y, FACINGS[f])


@pytest.mark.parametrize("rules", RULES, ids=IDS)
def test_payment_queries_agree(rules: Rules) -> None:
    """payment_totals equals summing payment_at over the landings, and the batched
    k_rotation_totals (one region labelling) equals the per-rotation flood fills."""
    for state in positions(rules, "orient", 12):
        view = view_of(state)
        s = np.array(state.packed)
        for payer in range(rules.players):
            for payee in [None, *range(rules.players)]:
                batched = np.empty((3, 3), np.int64)
                k_rotation_totals(s, payer, -1 if payee is None else payee, batched)
                for rotation in (-1, 0, 1):
                    due = paid = bankrupt = 0
                    have = view.dirhams(payer)
                    for face in rules.die_faces:
                        x, y, _ = view.landing(rotation, face)
                        amount, to = view.payment_at(x, y, payer)
                        if amount and (payee is None or to == payee):
                            due += amount
                            paid += min(amount, have)
                            bankrupt += amount > have
                    totals = view.payment_totals(rotation, payer, payee)
                    assert totals == (due, paid, bankrupt)
                    assert tuple(batched[rotation + 1]) == totals
                    single = np.empty(3, np.int64)
                    k_payment_totals(s, rotation, payer, -1 if payee is None else payee, single)
                    assert tuple(single) == totals
        assert_same_position(s, np.array(state.packed))


@pytest.mark.parametrize("rules", RULES, ids=IDS)
def test_placement_effects_match_placing(rules: Rules) -> None:
    """placement_effect and the batched placement_features describe what applying the
    placement to a GameState really gives, and change nothing."""
    for state in positions(rules, "place", 15):
        view = view_of(state)
        before = np.array(view.packed)
        options = state.legal_actions()
        features = view.placement_features(options)
        me = state.seat
        for option, row in zip(options, features.tolist(), strict=True):
            effect = view.placement_effect(option)
            after = state.apply(option)
            (x1, y1), (x2, y2) = option
            n = rules.board_size
            a = np.array(after.packed)
            assert effect.region == k.region_size(a, y1 * n + x1) == row[F_REGION]
            owners = [view.owner(x, y) for x, y in option]
            opp = [o for o in owners if o is not None and o != me and not view.is_eliminated(o)]
            assert effect.opponent_halves == len(opp) == row[F_OPPONENT_HALVES]
            assert effect.own_halves == owners.count(me) == row[F_OWN_HALVES]
            largest = max(
                [
                    view.region_size(x, y)
                    for (x, y), o in zip(option, owners, strict=True)
                    if o in opp
                ]
                or [0]
            )
            assert effect.opponent_region == largest == row[F_OPPONENT_REGION]
            assert effect.covered == (state.square(x1, y1), state.square(x2, y2))
            assert set(effect.covered_seats) == {o for o in owners if o is not None}
        assert_same_position(np.array(view.packed), before)


def flood_labels(board: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Plain labelling of a square board of colours (-1 empty): each square's root (the
    first square of its 4-connected region of one colour; an empty square itself) and
    each root's region size."""
    n = board.shape[0]
    flat = board.reshape(-1)
    root = np.arange(n * n)
    size = np.zeros(n * n, np.int64)
    seen = np.zeros(n * n, bool)
    for start in range(n * n):
        if flat[start] < 0 or seen[start]:
            continue
        region, todo = [], [start]
        seen[start] = True
        while todo:
            sq = todo.pop()
            region.append(sq)
            x, y = sq % n, sq // n
            for nx, ny in ((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)):
                nb = ny * n + nx
                if 0 <= nx < n and 0 <= ny < n and not seen[nb] and flat[nb] == flat[sq]:
                    seen[nb] = True
                    todo.append(nb)
        root[region] = start
        size[start] = len(region)
    return root, size


@pytest.mark.parametrize("board_size", [5, 7, 9, 11])
def test_label_regions_matches_a_flood_fill(board_size: int) -> None:
    """k_label_regions gives each square its region's first square and each region its
    size, also for the spirals and combs whose parts join late in its one pass."""
    rules = Rules(board_size=board_size)
    n = board_size
    rnd = np.random.default_rng(board_size)
    boards = [rnd.integers(-1, colours, (n, n)) for colours in (1, 2, 3) for _ in range(30)]
    comb = np.full((n, n), 1)
    comb[1::2, 1:] = -1  # teeth that join only in the first column
    snake = np.full((n, n), 2)
    for y in range(1, n, 2):
        snake[y, :] = -1
        snake[y, n - 1 if y % 4 == 1 else 0] = 2  # one long path, back and forth
    shapes = [comb, comb.T, comb[:, ::-1], comb[::-1].T, snake, snake.T, snake[::-1, ::-1]]
    for board in boards + shapes:
        s = k.initial_state(rules)
        s[s[k.COLOUR_AT] : s[k.COLOUR_AT] + n * n] = board.reshape(-1)
        k_label_regions(s)
        lab = s[k.SCRATCH_AT]
        root, size = flood_labels(board)
        np.testing.assert_array_equal(s[lab : lab + n * n], root)
        np.testing.assert_array_equal(s[lab + n * n : lab + 2 * n * n], size)


def test_colour_masks_are_the_colours_squares() -> None:
    """On a bitboard, each colour's mask is its squares (the state's kept sets), and
    colour -1's (placing_mask before the draw) the empty squares, for every colour index."""
    rules = Rules(players=len(COLOUR_LETTERS), board_size=5)
    s = k.initial_state(rules)
    n = rules.board_size
    board = np.arange(n * n) % (len(COLOUR_LETTERS) + 1) - 1
    s[s[k.COLOUR_AT] : s[k.COLOUR_AT] + n * n] = board
    k.k_recount(s)  # the kept data of the board written above
    rb = prepare_regions(s)
    for c in range(-1, len(COLOUR_LETTERS)):
        mask = sum(1 << int(sq) for sq in np.flatnonzero(board == c))
        assert _colour_mask(s, c, rb) == mask


def test_bitboard_and_labelled_rug_regions_agree() -> None:
    """On a board small enough for bitboards, the rug's region after placing is the same
    by bitboard and from the board's labelling (the path of larger boards)."""
    for rules in (Rules(), Rules(board_size=5, players=2)):
        for state in positions(rules, "place", 40, seed=11):
            s = np.array(state.packed)
            rb = prepare_regions(s)
            own = placing_mask(s, rb)
            k_label_regions(s)
            for stamp, ((x1, y1), (x2, y2)) in enumerate(state.legal_actions(), 1):
                by_bits = _rug_region(s, x1, y1, x2, y2, rb, own, stamp)
                assert by_bits == _labelled_rug_region(s, x1, y1, x2, y2, stamp)


def test_view_reads_the_live_position() -> None:
    """The view reads the state it wraps (no copy), and its accessors match GameState."""
    state = positions(Rules(players=2), "place", 1, seed=9)[0]
    view = view_of(state)
    assert view.phase == "place" and view.colour == state.colour
    assert view.assam == state.assam
    assert [view.dirhams(i) for i in range(2)] == list(state.dirhams)
    assert view.rugs_left(0) == sum(v for c, v in state.rugs_left.items() if c in "ry")
    board, rugs = view.board(), view.rugs()
    for y in range(7):
        for x in range(7):
            sq = state.square(x, y)
            assert view.square(x, y) == sq
            assert (board[y, x] >= 0) == (sq is not None) == (rugs[y, x] > 0)
    assert view.visible(0) + view.visible(1) == int((board >= 0).sum())
    assert max(view.largest_regions().values()) >= 1
    with pytest.raises(ValueError, match="not a legal placement"):
        view.placement_effect(((0, 0), (5, 5)))
    s = view._s
    s[s[k.DIRHAMS_AT]] = 77  # the game loop changes its state: the view sees it
    assert view.dirhams(0) == 77
    with pytest.raises(ValueError):
        view.packed[0] = 1  # strategies get a read-only array


def test_next_walker_in_the_variant() -> None:
    """With orient at end the rotation sets the next seat's walk; otherwise the mover's."""
    state = positions(Rules(players=3, orient_at_end=True), "orient", 1, seed=3)[0]
    view = view_of(state)
    assert view.orient_for_next
    assert view.next_walker == (state.seat + 1) % 3
    standard = view_of(positions(Rules(), "orient", 1)[0])
    assert not standard.orient_for_next and standard.next_walker == standard.to_move
