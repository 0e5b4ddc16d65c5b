"""Hand-checked rule cases from RULES.md, run against the engine and the reference.

Every expectation below was worked out by hand from RULES.md (the derivation is in a
comment where it is not obvious), never by running either implementation. Each case runs
twice: against ``marrakech_sim`` and against ``tests/reference.py``, which validates the
reference the cross-check relies on.
"""

from __future__ import annotations

import pytest
from backends import (
    BACKENDS,
    EMPTY,
    board,
    dirhams,
    empty_board,
    fields,
    get_api,
    normalise_chance,
    position,
)

P4 = "r:30:12,b:30:12,y:30:12,p:30:12"
P2 = "ry:30:12+12,bp:30:12+12"


@pytest.fixture(params=BACKENDS)
def api(request):
    return get_api(request.param)


def make(api, text: str, **rules):
    return api.GameState.from_notation(text, api.Rules(**rules))


def play(state, *actions):
    for action in actions:
        state = state.apply(action)
    return state


# --- §4: the 28 edge exits of the 7x7 board ------------------------------------

EDGE_EXITS = [
    # top edge, facing N: columns {0,1} {2,3} {4,5} re-enter facing S; (6,0) -> W
    ("00N", "10S"),
    ("10N", "00S"),
    ("20N", "30S"),
    ("30N", "20S"),
    ("40N", "50S"),
    ("50N", "40S"),
    ("60N", "60W"),
    # bottom edge, facing S: (0,6) -> E; columns {1,2} {3,4} {5,6} re-enter facing N
    ("06S", "06E"),
    ("16S", "26N"),
    ("26S", "16N"),
    ("36S", "46N"),
    ("46S", "36N"),
    ("56S", "66N"),
    ("66S", "56N"),
    # left edge, facing W: rows {0,1} {2,3} {4,5} re-enter facing E; (0,6) -> N
    ("00W", "01E"),
    ("01W", "00E"),
    ("02W", "03E"),
    ("03W", "02E"),
    ("04W", "05E"),
    ("05W", "04E"),
    ("06W", "06N"),
    # right edge, facing E: (6,0) -> S; rows {1,2} {3,4} {5,6} re-enter facing W
    ("60E", "60S"),
    ("61E", "62W"),
    ("62E", "61W"),
    ("63E", "64W"),
    ("64E", "63W"),
    ("65E", "66W"),
    ("66E", "65W"),
]


@pytest.mark.parametrize(("start", "end"), EDGE_EXITS)
def test_edge_exit_one_step(api, start, end):
    """One step off each 7x7 edge square follows the arc of the §4 table and costs one step."""
    state = make(api, position(EMPTY, start, P4, "0r"))
    after = state.apply(1)
    assert fields(after.to_notation())["assam"] == end
    assert after.phase == "place"


WALKS = [
    # §4 examples
    (7, "33N", 4, "20S"),
    (7, "60N", 2, "50W"),
    (7, "06S", 2, "16E"),
    (7, "00W", 1, "01E"),
    # 33N x12: (3,2)(3,1)(3,0), arc {2,3} -> (2,0)S [4], (2,1)..(2,6) [5-10],
    # arc {1,2} -> (1,6)N [11], (1,5) [12]
    (7, "33N", 12, "15N"),
    # 60E x8: corner arc -> (6,0)S [1], (6,1)..(6,6) [2-7], arc {5,6} -> (5,6)N [8]
    (7, "60E", 8, "56N"),
    # 5x5 (§8 pattern): top {0,1}{2,3} + corner (4,0); bottom corner (0,4) + {1,2}{3,4}
    (5, "30N", 1, "20S"),
    (5, "40N", 1, "40W"),
    (5, "44S", 1, "34N"),
    (5, "04W", 1, "04N"),
    (5, "43E", 1, "44W"),
    (5, "40E", 1, "40S"),
    (5, "22N", 3, "30S"),  # (2,1)(2,0), arc {2,3} -> (3,0)S
    # 9x9: top {0,1}..{6,7} + corner (8,0); bottom/right pairs shifted {1,2}..{7,8}
    (9, "80N", 1, "80W"),
    (9, "70N", 1, "60S"),
    (9, "78S", 1, "88N"),
    (9, "08S", 1, "08E"),
    (9, "08W", 1, "08N"),
    (9, "07W", 1, "06E"),
    (9, "87E", 1, "88W"),
    (9, "80E", 1, "80S"),
    # 11x11: coordinates above 9 are written with a comma (§9)
    (11, "10,5E", 1, "10,6W"),
    (11, "10,0N", 1, "10,0W"),
    (11, "5,10S", 1, "6,10N"),
    (11, "0,10W", 1, "0,10N"),
    (11, "99N", 1, "98N"),
]


@pytest.mark.parametrize(("n", "start", "steps", "end"), WALKS)
def test_walk(api, n, start, steps, end):
    """Walks through the edge arcs land where §4 (and §8 for other sizes) says."""
    state = make(api, position(empty_board(n), start, P4, "0r"), board_size=n, die_faces=(steps,))
    after = state.apply(steps)
    assert fields(after.to_notation())["assam"] == end


@pytest.mark.parametrize("n", [5, 7, 9, 11])
def test_start_position_centre(api, n):
    """Assam starts on the centre square facing the initial facing (§2, §8)."""
    state = api.GameState.start(api.Rules(board_size=n, initial_facing="W"))
    c = n // 2
    assam = f"{c}{c}W" if c <= 9 else f"{c},{c}W"
    assert state.to_notation() == position(empty_board(n), assam, P4, "0o")


# --- §3: orientation ------------------------------------------------------------


@pytest.mark.parametrize(("rotation", "facing"), [(-1, "W"), (0, "N"), (1, "E")])
def test_rotation(api, rotation, facing):
    """-1 turns Assam 90 degrees left, 1 right, 0 leaves him; the roll follows (§3)."""
    state = api.GameState.start(api.Rules())
    assert list(state.legal_actions()) == [-1, 0, 1]
    after = state.apply(rotation)
    assert after.to_notation() == position(EMPTY, f"33{facing}", P4, "0r")
    assert after.phase == "roll"


# --- §5: payments -------------------------------------------------------------

# Blue region under (3,2): b1 at (3,1)(3,2), b2 at (1,2)(2,2) -> 4 squares. y1 touches
# (3,1) but is another colour; b3 at (4,3) only touches (3,2) diagonally.
REGION4 = board(
    ". . . y1 y1 . .",
    ". . . b1 . . .",
    ". b2 b2 b1 . . .",
    ". . . . b3 b3 .",
    ". . . . . . .",
    ". . . . . . .",
    ". . . . . . .",
)
# 2 players: b at (3,1)(2,1) and (3,0)(4,0) -> 4; purple p1 at (4,1)(5,1) is not counted.
REGION4_2P = board(
    ". . . b2 b2 . .",
    ". . b1 b1 p1 p1 .",
    ". . . . . . .",
    ". . . . . . .",
    ". . . . . . .",
    ". . . . . . .",
    ". . . . . . .",
)
RED12 = board(". . . . . . .", ". . . r1 . . .", ". . . r1 . . .", *[". . . . . . ."] * 4)
YELLOW12 = board(". . . . . . .", ". . . y1 . . .", ". . . y1 . . .", *[". . . . . . ."] * 4)
BLUE12 = board(". . . . . . .", ". . . b1 . . .", ". . . b1 . . .", *[". . . . . . ."] * 4)
# b1 shows only at (3,2); its other half is under r1 -> blue region of 1.
HALF_BLUE = board(". . . r1 . . .", ". . . r1 . . .", ". . . b1 . . .", *[". . . . . . ."] * 4)

PAYMENTS = [
    # (id, rules, position, roll, expected dirhams, expected to-move)
    (
        "region-4-diagonal-and-other-colour-excluded",
        {},
        position(REGION4, "33N", "r:30:12,b:30:9,y:30:11,p:30:12", "0r"),
        1,
        [26, 34, 30, 30],
        "0p",
    ),
    (
        "2p-region-per-colour",
        {"players": 2},
        position(REGION4_2P, "33N", "ry:30:12+12,bp:30:10+11", "0rr"),
        2,
        [26, 34],
        "0pr",
    ),
    (
        "2p-seat1-pays-seat0",
        {"players": 2},
        position(YELLOW12, "33N", "ry:30:12+11,bp:30:12+12", "1rb"),
        2,
        [32, 28],
        "1pb",
    ),
    (
        "2p-own-second-colour-free",
        {"players": 2},
        position(YELLOW12, "33N", "ry:30:12+11,bp:30:12+12", "0rr"),
        2,
        [30, 30],
        "0pr",
    ),
    (
        "own-colour-free",
        {},
        position(RED12, "33N", "r:30:11,b:30:12,y:30:12,p:30:12", "0r"),
        1,
        [30, 30, 30, 30],
        "0p",
    ),
    (
        "eliminated-owner-free",
        {"players": 3},
        position(BLUE12, "33N", "r:30:15,b:0:0:out,y:30:15", "0r"),
        1,
        [30, 0, 30],
        "0p",
    ),
    ("empty-square-free", {}, position(EMPTY, "33N", P4, "0r"), 3, [30, 30, 30, 30], "0p"),
    (
        "seat2-pays-red-owner",
        {},
        position(RED12, "33N", "r:30:11,b:30:12,y:30:12,p:30:12", "2r"),
        2,
        [32, 30, 28, 30],
        "2p",
    ),
    (
        "only-visible-halves-count",
        {},
        position(HALF_BLUE, "33N", "r:30:11,b:30:11,y:30:12,p:30:12", "2r"),
        1,
        [30, 31, 29, 30],
        "2p",
    ),
]


@pytest.mark.parametrize(
    ("rules", "text", "roll", "expected", "to_move"),
    [case[1:] for case in PAYMENTS],
    ids=[case[0] for case in PAYMENTS],
)
def test_payment(api, rules, text, roll, expected, to_move):
    """The mover pays the size of the 4-connected region of the colour under Assam (§5)."""
    after = make(api, text, **rules).apply(roll)
    assert dirhams(after.to_notation()) == expected
    assert fields(after.to_notation())["to_move"] == to_move


# --- §5: bankruptcy -----------------------------------------------------------


def test_paying_exactly_all_is_not_bankruptcy(api):
    """Paying exactly all one's dirhams leaves 0 and keeps the player in the game (§5)."""
    state = make(api, position(REGION4, "33N", "r:4:12,b:30:9,y:30:11,p:30:12", "0r"))
    after = state.apply(1)
    assert after.to_notation() == position(REGION4, "32N", "r:0:12,b:34:9,y:30:11,p:30:12", "0p")


def test_short_by_one_is_bankruptcy(api):
    """Short by one dirham: pay all, leave the game, lose unplaced rugs, no placement (§5)."""
    state = make(api, position(REGION4, "33N", "r:3:12,b:30:9,y:30:11,p:30:12", "0r"))
    after = state.apply(1)
    assert after.to_notation() == position(REGION4, "32N", "r:0:0:out,b:33:9,y:30:11,p:30:12", "1o")


def test_bankrupt_seat_is_skipped_later(api):
    """An eliminated seat's later turns are skipped (§2, §5)."""
    state = make(api, position(EMPTY, "33N", "r:0:0:out,b:30:5,y:30:5,p:30:5", "3p"))
    after = state.apply(((3, 2), (3, 1)))
    p8 = board(". . . . . . .", ". . . p8 . . .", ". . . p8 . . .", *[". . . . . . ."] * 4)
    assert after.to_notation() == position(p8, "33N", "r:0:0:out,b:30:5,y:30:5,p:30:4", "1o")


def test_seat_without_rugs_is_skipped(api):
    """The next player is the next seat still in the game that has rugs left (§2)."""
    state = make(api, position(EMPTY, "33N", "r:30:5,b:30:0,y:30:5,p:30:5", "0p"))
    after = state.apply(((3, 2), (3, 1)))
    assert fields(after.to_notation())["to_move"] == "2o"


def test_eliminated_players_rugs_stay_and_block(api):
    """An eliminated player's rugs are free to land on but may not be fully covered (§5, §6)."""
    # Seat 1 (blue, out) owns b1 on (3,1)(3,2).
    text = position(BLUE12, "33N", "r:30:11,b:0:0:out,y:30:11,p:30:11", "0r")
    assert dirhams(make(api, text).apply(1).to_notation()) == [30, 0, 30, 30]
    placing = make(api, text.replace(" 0r", " 0p"))
    assert ((3, 2), (3, 1)) not in placements(placing)
    assert len(placements(placing)) == 11


# --- §6: placements and the full-cover rule -----------------------------------

# r1 (3,1)(3,2) intact; r2 (2,3)(2,4) intact; r3 (1,2)(1,3) intact; b1 shows only at
# (4,3) (its other half is under y1 at (5,3)(5,2)). Assam on (3,3).
COVER = board(
    ". . . . . . .",
    ". . . r1 . . .",
    ". r3 . r1 . y1 .",
    ". r3 r2 . b1 y1 .",
    ". . r2 . . . .",
    ". . . . . . .",
    ". . . . . . .",
)
COVER_PLAYERS = "r:30:9,b:30:11,y:30:11,p:30:12"
ALL12 = {
    ((3, 2), (3, 1)),
    ((3, 2), (2, 2)),
    ((3, 2), (4, 2)),
    ((2, 3), (1, 3)),
    ((2, 3), (2, 2)),
    ((2, 3), (2, 4)),
    ((4, 3), (5, 3)),
    ((4, 3), (4, 2)),
    ((4, 3), (4, 4)),
    ((3, 4), (3, 5)),
    ((3, 4), (2, 4)),
    ((3, 4), (4, 4)),
}
FULL_COVER_RED = {((3, 2), (3, 1)), ((2, 3), (2, 4))}  # both halves of r1, of r2


def placements(state) -> set:
    return {(tuple(a), tuple(b)) for a, b in state.legal_actions()}


@pytest.mark.parametrize(
    ("seat", "own_cover", "expected"),
    [
        (0, False, ALL12 - FULL_COVER_RED),  # own rugs protected by default
        (0, True, ALL12),  # the option lets red cover its own rugs fully
        (1, False, ALL12 - FULL_COVER_RED),
        (1, True, ALL12 - FULL_COVER_RED),  # red is not blue's own colour
    ],
)
def test_full_cover_by_rug_identity(api, seat, own_cover, expected):
    """One rug may not be fully covered; two rugs of one colour or a lone half may (§6.3)."""
    state = make(
        api, position(COVER, "33N", COVER_PLAYERS, f"{seat}p"), own_rugs_fully_coverable=own_cover
    )
    assert placements(state) == expected


def test_covering_two_rugs_of_one_colour_numbers_the_new_rug(api):
    """Covering halves of two red rugs is legal and the new rug takes the next number (§6, §9)."""
    state = make(api, position(COVER, "33N", COVER_PLAYERS, "0p"))
    after = state.apply(((2, 3), (1, 3)))
    expected = board(
        ". . . . . . .",
        ". . . r1 . . .",
        ". r3 . r1 . y1 .",
        ". r4 r4 . b1 y1 .",
        ". . r2 . . . .",
        ". . . . . . .",
        ". . . . . . .",
    )
    assert after.to_notation() == position(expected, "33N", "r:30:8,b:30:11,y:30:11,p:30:12", "1o")


@pytest.mark.parametrize(
    ("to_move", "own_cover", "legal"),
    [
        ("0pr", False, False),
        ("0pr", True, True),  # y is seat 0's second own colour
        ("1pb", True, False),  # y is not seat 1's
    ],
)
def test_full_cover_own_second_colour(api, to_move, own_cover, legal):
    """With two colours each, both are 'own' for the full-cover exemption (§6.3, §8)."""
    # y1 on (3,1)(3,2), Assam on (3,3): the placement (3,2)+(3,1) covers all of y1.
    players = "ry:30:12+11,bp:30:12+12"
    state = make(
        api,
        position(YELLOW12, "33N", players, to_move),
        players=2,
        own_rugs_fully_coverable=own_cover,
    )
    assert (((3, 2), (3, 1)) in placements(state)) is legal
    assert len(placements(state)) == (12 if legal else 11)


@pytest.mark.parametrize(
    ("assam", "count"),
    [("33N", 12), ("31N", 11), ("30N", 7), ("00N", 4), ("10N", 6), ("66E", 4)],
)
def test_placement_count_on_empty_board(api, assam, count):
    """Placements touch Assam, avoid his square and stay on the board (§6.1, §6.2)."""
    # Count = sum over Assam's neighbours a of (on-board neighbours of a, minus Assam).
    state = make(api, position(EMPTY, assam, P4, "0p"))
    assert len(placements(state)) == count
    for a, b in placements(state):
        ax, ay = int(assam[0]), int(assam[1])
        assert abs(a[0] - ax) + abs(a[1] - ay) == 1  # the square next to Assam comes first
        assert abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1


# --- §3: the variant "orient at end" ------------------------------------------


def test_orient_at_end_turn_order(api):
    """Variant: the first player walks the initial facing, then roll, place, orient (§3, §9)."""
    rules = api.Rules(orient_at_end=True)
    state = api.GameState.start(rules)
    assert state.to_notation() == position(EMPTY, "33N", P4, "0r")
    assert state.phase == "roll"
    state = state.apply(1)
    assert state.to_notation() == position(EMPTY, "32N", P4, "0p")
    state = state.apply(((3, 1), (3, 0)))
    r1 = board(". . . r1 . . .", ". . . r1 . . .", *[". . . . . . ."] * 5)
    assert state.to_notation() == position(r1, "32N", "r:30:11,b:30:12,y:30:12,p:30:12", "0o")
    assert state.phase == "orient"
    state = state.apply(1)
    assert state.to_notation() == position(r1, "32E", "r:30:11,b:30:12,y:30:12,p:30:12", "1r")


@pytest.mark.parametrize(("orient_at_end", "phase"), [(True, "0r"), (False, "0o")])
def test_initial_facing_option(api, orient_at_end, phase):
    """The initial facing option sets Assam's facing at the start (§2, §8)."""
    state = api.GameState.start(api.Rules(orient_at_end=orient_at_end, initial_facing="E"))
    assert state.to_notation() == position(EMPTY, "33E", P4, phase)


def test_orient_at_end_no_orientation_after_last_rug(api):
    """Variant: the game ends on the last rug, with no orientation after it (§3)."""
    state = make(
        api, position(EMPTY, "33N", "r:30:0,b:30:0,y:30:0,p:30:1", "3p"), orient_at_end=True
    )
    after = state.apply(((3, 2), (3, 1)))
    p12 = board(". . . . . . .", ". . . p12 . . .", ". . . p12 . . .", *[". . . . . . ."] * 4)
    assert after.to_notation() == position(p12, "33N", "r:30:0,b:30:0,y:30:0,p:30:0", "0x")
    assert after.phase == "over"
    assert after.outcome().reason.label == "rugs_exhausted"


def test_orient_at_end_after_own_last_rug(api):
    """Variant: a player who placed their own last rug still orients for the next player (§3)."""
    state = make(
        api, position(EMPTY, "33N", "r:30:1,b:30:1,y:30:1,p:30:1", "0p"), orient_at_end=True
    )
    state = state.apply(((3, 2), (3, 1)))
    assert fields(state.to_notation())["to_move"] == "0o"
    assert fields(state.apply(-1).to_notation())["to_move"] == "1r"
    assert fields(state.apply(-1).to_notation())["assam"] == "33W"


def test_orient_at_end_bankrupt_turn_has_no_orientation(api):
    """Variant: a bankrupt turn ends without the end orientation (§3, §5)."""
    state = make(
        api, position(REGION4, "33N", "r:3:12,b:30:9,y:30:11,p:30:12", "0r"), orient_at_end=True
    )
    after = state.apply(1)
    assert after.to_notation() == position(REGION4, "32N", "r:0:0:out,b:33:9,y:30:11,p:30:12", "1r")


# --- §1/§9: the two-player draw phase -----------------------------------------


def test_two_player_turn_with_draw(api):
    """Two colours each: draw, then orient/roll/place carrying the drawn colour (§1, §9)."""
    state = api.GameState.start(api.Rules(players=2))
    assert state.to_notation() == position(EMPTY, "33N", P2, "0d")
    assert state.phase == "draw"
    assert list(state.legal_actions()) == ["r", "y"]
    assert normalise_chance(state.chance_outcomes()) == pytest.approx({"r": 0.5, "y": 0.5})
    state = state.apply("y")
    assert state.to_notation() == position(EMPTY, "33N", P2, "0oy")
    state = state.apply(0)
    assert state.to_notation() == position(EMPTY, "33N", P2, "0ry")
    state = state.apply(1)
    assert state.to_notation() == position(EMPTY, "32N", P2, "0py")
    state = state.apply(((3, 1), (3, 0)))
    y1 = board(". . . y1 . . .", ". . . y1 . . .", *[". . . . . . ."] * 5)
    assert state.to_notation() == position(y1, "32N", "ry:30:12+11,bp:30:12+12", "1d")
    assert list(state.legal_actions()) == ["b", "p"]


def test_two_player_orient_at_end_with_draw(api):
    """Variant with two colours: d r p o, and the final o carries no letter (§9)."""
    state = api.GameState.start(api.Rules(players=2, orient_at_end=True))
    assert fields(state.to_notation())["to_move"] == "0d"
    state = state.apply("r")
    assert fields(state.to_notation())["to_move"] == "0rr"
    state = state.apply(2)
    assert fields(state.to_notation())["to_move"] == "0pr"
    state = state.apply(((3, 0), (2, 0)))
    assert fields(state.to_notation())["to_move"] == "0o"
    assert fields(state.to_notation())["players"] == "ry:30:11+12,bp:30:12+12"
    assert fields(state.apply(0).to_notation())["to_move"] == "1d"


@pytest.mark.parametrize(
    ("players", "expected"),
    [
        ("ry:30:0+3,bp:30:1+3", {"y": 1.0}),  # a draw phase even with one colour left
        ("ry:30:3+1,bp:30:3+3", {"r": 0.75, "y": 0.25}),  # proportional to rugs left
    ],
)
def test_draw_chance_outcomes(api, players, expected):
    """A draw is uniform over the player's remaining rugs, so proportional per colour (§1)."""
    state = make(api, position(EMPTY, "33N", players, "0d"), players=2)
    assert state.phase == "draw"
    assert list(state.legal_actions()) == list(expected)
    assert normalise_chance(state.chance_outcomes()) == pytest.approx(expected)


def test_three_players_two_colours_letters(api):
    """3 players with two colours each own rp, bg, yo and draw between them (§1)."""
    state = api.GameState.start(api.Rules(players=3, colours_per_player=2, rugs_per_colour=10))
    assert state.to_notation() == position(
        EMPTY, "33N", "rp:30:10+10,bg:30:10+10,yo:30:10+10", "0d"
    )
    assert list(state.legal_actions()) == ["r", "p"]


@pytest.mark.parametrize(
    ("rules", "players", "to_move"),
    [
        ({"players": 3}, "r:30:15,b:30:15,y:30:15", "0o"),
        ({"players": 5}, "r:30:12,b:30:12,y:30:12,p:30:12,g:30:12", "0o"),
        ({"players": 2, "colours_per_player": 1}, "r:30:15,b:30:15", "0o"),
        (
            {"players": 4, "starting_dirhams": 7, "rugs_per_colour": 3},
            "r:7:3,b:7:3,y:7:3,p:7:3",
            "0o",
        ),
        # §8 seat_dirhams: one purse per seat, replacing starting_dirhams
        ({"seat_dirhams": (30, 31, 32, 33)}, "r:30:12,b:31:12,y:32:12,p:33:12", "0o"),
        (
            {"players": 2, "starting_dirhams": 5, "seat_dirhams": (0, 40)},
            "ry:0:12+12,bp:40:12+12",
            "0d",
        ),
    ],
)
def test_default_set_up(api, rules, players, to_move):
    """Rug counts and dirhams follow the §8 defaults for each player count."""
    state = api.GameState.start(api.Rules(**rules))
    assert state.to_notation() == position(EMPTY, "33N", players, to_move)


# --- chance: the die ------------------------------------------------------------


@pytest.mark.parametrize(
    ("faces", "expected"),
    [
        (None, {1: 1 / 6, 2: 1 / 3, 3: 1 / 3, 4: 1 / 6}),
        ((1, 1, 5), {1: 2 / 3, 5: 1 / 3}),
    ],
)
def test_roll_outcomes(api, faces, expected):
    """Rolls branch on distinct faces, weighted by how often each face appears (§1, §10)."""
    rules = {} if faces is None else {"die_faces": faces}
    state = make(api, position(EMPTY, "33N", P4, "0r"), **rules)
    assert list(state.legal_actions()) == sorted(expected)
    assert normalise_chance(state.chance_outcomes()) == pytest.approx(expected)


# --- §7: end conditions ---------------------------------------------------------


def test_end_when_rugs_exhausted(api):
    """The game ends when the last rug is placed; to-move is the next seat in the game (§7, §9)."""
    state = make(api, position(EMPTY, "33N", "r:0:0:out,b:30:0,y:30:0,p:30:1", "3p"))
    after = state.apply(((3, 2), (3, 1)))
    assert fields(after.to_notation())["to_move"] == "1x"  # seat 0 is out, so seat 1
    assert after.phase == "over"
    assert len(after.legal_actions()) == 0
    assert after.outcome().reason.label == "rugs_exhausted"


def test_end_when_one_left(api):
    """A bankruptcy leaving one player ends the game with the survivor to move (§7, §9)."""
    state = make(api, position(REGION4_2P, "33N", "ry:3:12+12,bp:30:10+11", "0rr"), players=2)
    after = state.apply(2)
    assert after.to_notation() == position(REGION4_2P, "31N", "ry:0:0+0:out,bp:33:10+11", "1x")
    outcome = after.outcome()
    assert outcome.reason.label == "one_left"
    assert tuple(outcome.winners) == (1,)
    assert tuple(outcome.ranks) == (2, 1)
    # seat 1: 33 dirhams + visible b (3,0)(4,0)(2,1)(3,1) + p (4,1)(5,1) = 39
    assert tuple(outcome.scores) == (None, 39)


# Red region of 4 under (3,2): r1 (3,1)(3,2), r2 (1,2)(2,2).
RED_REGION4 = board(
    ". . . . . . .",
    ". . . r1 . . .",
    ". r2 r2 r1 . . .",
    *[". . . . . . ."] * 4,
)


@pytest.mark.parametrize(
    ("end_when_one_left", "reason"),
    [(True, "one_left"), (False, "rugs_exhausted")],
)
def test_both_end_conditions_at_once(api, end_when_one_left, reason):
    """Both end conditions at once end as 'one left' when that condition is on (§7)."""
    # Seat 2 (2 dirhams) lands on red region 4 and goes bankrupt; seat 0 is the only one in
    # the game and has no rugs left, so both end conditions hold.
    state = make(
        api,
        position(RED_REGION4, "33N", "r:30:0,b:0:0:out,y:2:1", "2r"),
        players=3,
        end_when_one_left=end_when_one_left,
    )
    after = state.apply(1)
    assert after.to_notation() == position(RED_REGION4, "32N", "r:32:0,b:0:0:out,y:0:0:out", "0x")
    assert after.outcome().reason.label == reason


def test_survivor_places_the_rest_when_option_off(api):
    """With end_when_one_left false the survivor keeps taking turns (§8)."""
    state = make(
        api,
        position(RED_REGION4, "33N", "r:30:5,b:0:0:out,y:2:1", "2r"),
        players=3,
        end_when_one_left=False,
    )
    after = state.apply(1)
    assert fields(after.to_notation())["to_move"] == "0o"
    after = play(after, 0, 1, ((3, 0), (2, 0)))  # Assam (3,2) -> (3,1), own rug: no payment
    assert fields(after.to_notation())["to_move"] == "0o"
    assert fields(after.to_notation())["players"] == "r:32:4,b:0:0:out,y:0:0:out"


def test_survivor_alone_ends_game_when_option_on(api):
    """With end_when_one_left on, the bankruptcy of the second-last player ends the game (§7)."""
    state = make(api, position(RED_REGION4, "33N", "r:30:5,b:0:0:out,y:2:1", "2r"), players=3)
    after = state.apply(1)
    assert fields(after.to_notation())["to_move"] == "0x"
    assert after.outcome().reason.label == "one_left"


def test_outcome_of_parsed_finished_position(api):
    """A finished position read from notation reports its outcome (§7, §9)."""
    text = position(REGION4_2P, "31N", "ry:0:0+0:out,bp:33:10+11", "1x")
    outcome = make(api, text, players=2).outcome()
    assert outcome.reason.label == "one_left"
    assert tuple(outcome.winners) == (1,)
    assert tuple(outcome.scores) == (None, 39)


# --- §7: scoring, tie-break, ranks ----------------------------------------------

# r1 (0,0)(1,0) and b1 (0,6)(1,6); blue places its last rug on (3,2)(3,1) -> r 2, b 4 visible.
TIE_BOARD = board("r1 r1 . . . . .", *[". . . . . . ."] * 5, "b1 b1 . . . . .")
# as TIE_BOARD plus r2 (0,2)(1,2) -> r 4, b 4 visible after blue's last rug
SHARED_BOARD = board(
    "r1 r1 . . . . .", ". . . . . . .", "r2 r2 . . . . .", *[". . . . . . ."] * 3, "b1 b1 . . . . ."
)

OUTCOMES = [
    # (id, board, seat dirhams, tie_break, winners, ranks, scores, tie_broken)
    # 32+2 = 30+4 = 34: tie on score, red has more dirhams.
    ("tie-broken-by-dirhams", TIE_BOARD, (32, 30), "dirhams", (0,), (1, 2), (34, 34), True),
    # same position, tie-break on visible squares: blue 4 > red 2.
    ("tie-broken-by-visible", TIE_BOARD, (32, 30), "visible", (1,), (2, 1), (34, 34), True),
    # 30+4 = 30+4 and 30 = 30 dirhams: a shared win.
    ("shared-win", SHARED_BOARD, (30, 30), "dirhams", (0, 1), (1, 1), (34, 34), False),
    ("shared-win-visible", SHARED_BOARD, (30, 30), "visible", (0, 1), (1, 1), (34, 34), False),
    # 40+2 = 42 > 34: no tie, so the tie-break did not decide.
    ("no-tie", TIE_BOARD, (40, 30), "dirhams", (0,), (1, 2), (42, 34), False),
]


@pytest.mark.parametrize(
    ("board_field", "money", "tie_break", "winners", "ranks", "scores", "tie_broken"),
    [case[1:] for case in OUTCOMES],
    ids=[case[0] for case in OUTCOMES],
)
def test_outcome_tie_break(api, board_field, money, tie_break, winners, ranks, scores, tie_broken):
    """Highest score wins; ties go to the tie-break value, then a shared win (§7)."""
    text = position(board_field, "33N", f"r:{money[0]}:0,b:{money[1]}:1", "1p")
    state = make(api, text, players=2, colours_per_player=1, tie_break=tie_break)
    assert state.outcome() is None
    outcome = state.apply(((3, 2), (3, 1))).outcome()
    assert outcome.reason.label == "rugs_exhausted"
    assert tuple(outcome.winners) == winners
    assert tuple(outcome.ranks) == ranks
    assert tuple(outcome.scores) == scores
    assert tuple(outcome.dirhams) == money
    assert bool(outcome.tie_broken) is tie_broken
    shares = tuple(1 / len(winners) if s in winners else 0.0 for s in range(2))
    assert tuple(outcome.win_shares) == pytest.approx(shares)


def test_competition_ranks_with_eliminated_seat(api):
    """Ties share a rank and the next rank skips; eliminated seats rank last (§7)."""
    # r1, b1, p1 two squares each; yellow places y12 -> visible 2 each. Scores 32, 32, 22;
    # purple is out: score None, still 2 visible squares in the record.
    b = board(
        "r1 r1 . . . . .",
        ". . . . . . .",
        "b1 b1 . . . . .",
        ". . . . . . .",
        "p1 p1 . . . . .",
        ". . . . . . .",
        ". . . . . . .",
    )
    state = make(api, position(b, "33N", "r:30:0,b:30:0,y:20:1,p:0:0:out", "2p"))
    outcome = state.apply(((3, 2), (3, 1))).outcome()
    assert tuple(outcome.scores) == (32, 32, 22, None)
    assert tuple(outcome.visible) == (2, 2, 2, 2)
    assert tuple(outcome.dirhams) == (30, 30, 20, 0)
    assert tuple(outcome.ranks) == (1, 1, 3, 4)
    assert tuple(outcome.winners) == (0, 1)
    assert tuple(outcome.win_shares) == pytest.approx((0.5, 0.5, 0.0, 0.0))
    assert not outcome.tie_broken


def test_later_elimination_ranks_above_earlier(api):
    """Among eliminated seats, the later elimination ranks higher (§7)."""
    # Seat 1 is out already. Seat 2 (0 dirhams) lands on r1 (region 2): out. Seat 3
    # (1 dirham) orients 0, rolls 1 onto (3,1), r1 again: out. Seat 0 is left with 31.
    state = make(api, position(RED12, "33N", "r:30:11,b:0:0:out,y:0:11,p:1:11", "2r"))
    state = state.apply(1)
    assert fields(state.to_notation())["to_move"] == "3o"
    state = play(state, 0, 1)
    assert state.to_notation() == position(
        RED12, "31N", "r:31:11,b:0:0:out,y:0:0:out,p:0:0:out", "0x"
    )
    outcome = state.outcome()
    assert outcome.reason.label == "one_left"
    assert tuple(outcome.scores) == (33, None, None, None)
    assert tuple(outcome.ranks) == (1, 4, 3, 2)
    assert tuple(outcome.winners) == (0,)


# --- §10: perft -----------------------------------------------------------------

# Every roll from 33N lands on blue: (3,2),(3,1) b1; (3,0),(2,0) b2. Red has 0 dirhams.
ALL_BLUE = board(". . b2 b2 . . .", ". . . b1 . . .", ". . . b1 . . .", *[". . . . . . ."] * 4)


@pytest.mark.parametrize(
    ("rules", "text", "counts"),
    [
        # 3 rotations x 4 rolls x placements: N (3,2)12 (3,1)11 (3,0)7 (2,0)7 = 37, same
        # for W and E -> 111; then the next player's 3 rotations -> 333.
        ({}, position(EMPTY, "33N", P4, "0o"), [1, 3, 12, 111, 333]),
        ({"players": 2}, position(EMPTY, "33N", P2, "0d"), [1, 2, 6, 24, 222]),
        ({"orient_at_end": True}, position(EMPTY, "33N", P4, "0r"), [1, 4, 37, 111]),
        # bankruptcy skips the placement: 4 rolls -> seat 1 orients (3) -> rolls (4)
        ({}, position(ALL_BLUE, "33N", "r:0:12,b:30:10,y:30:12,p:30:12", "0r"), [1, 4, 12, 48]),
        # a finished game is a leaf at any depth
        ({}, position(EMPTY, "33N", "r:30:0,b:30:0,y:30:0,p:30:0", "0x"), [1, 1, 1]),
    ],
    ids=["4p-start", "2p-start", "orient-at-end-start", "bankruptcy", "over"],
)
def test_perft(api, rules, text, counts):
    """perft counts one branch per phase choice, unweighted, with finished games as leaves (§10)."""
    state = make(api, text, **rules)
    assert [api.perft(state, d) for d in range(len(counts))] == counts


# --- §9: notation round trip and errors -----------------------------------------

ROUND_TRIP = [
    ({}, position(EMPTY, "33N", P4, "0o")),
    ({}, position(COVER, "33N", COVER_PLAYERS, "2p")),
    ({"players": 2}, position(REGION4_2P, "31N", "ry:0:0+0:out,bp:33:10+11", "1x")),
    ({"players": 2}, position(YELLOW12, "33N", "ry:30:12+11,bp:30:12+12", "0pr")),
    (
        {"players": 2, "orient_at_end": True},
        position(YELLOW12, "33N", "ry:30:12+11,bp:30:12+12", "0o"),
    ),
    ({"board_size": 11}, position(empty_board(11), "10,3W", P4, "1r")),
    ({"board_size": 5}, position(empty_board(5), "22S", P4, "3o")),
]


@pytest.mark.parametrize(("rules", "text"), ROUND_TRIP)
def test_notation_round_trip(api, rules, text):
    """Parsing then writing a valid position gives the same string (§9)."""
    assert make(api, text, **rules).to_notation() == text


NOTATION_ERRORS = [
    # (id, rules, text, field named in the message)
    (
        "bad-colour-letter",
        {},
        position(EMPTY.replace(".......", "q1......", 1), "33N", P4, "0o"),
        "board",
    ),
    (
        "token-without-number",
        {},
        position(EMPTY.replace(".......", "r......", 1), "33N", P4, "0o"),
        "board",
    ),
    (
        "rug-number-zero",
        {},
        position(EMPTY.replace(".......", "r0......", 1), "33N", P4, "0o"),
        "board",
    ),
    ("short-row", {}, position(EMPTY.replace(".......", "......", 1), "33N", P4, "0o"), "board"),
    ("six-rows", {}, position("/".join(["......."] * 6), "33N", P4, "0o"), "board"),
    (
        "rug-on-three-squares",
        {},
        position(
            EMPTY.replace(".......", "r1r1r1....", 1),
            "33N",
            "r:30:11,b:30:12,y:30:12,p:30:12",
            "0o",
        ),
        "board",
    ),
    (
        "more-rugs-than-rules",
        {},
        position(EMPTY, "33N", "r:30:13,b:30:12,y:30:12,p:30:12", "0o"),
        "players",
    ),
    ("assam-x-off-board", {}, position(EMPTY, "73N", P4, "0o"), "assam"),
    ("assam-y-off-board", {}, position(EMPTY, "37N", P4, "0o"), "assam"),
    ("assam-bad-facing", {}, position(EMPTY, "33Q", P4, "0o"), "assam"),
    (
        "three-seats-for-four",
        {},
        position(EMPTY, "33N", "r:30:12,b:30:12,y:30:12", "0o"),
        "players",
    ),
    ("five-seats-for-four", {}, position(EMPTY, "33N", P4 + ",g:30:12", "0o"), "players"),
    ("bad-phase-letter", {}, position(EMPTY, "33N", P4, "0z"), "to-move"),
    ("seat-out-of-range", {}, position(EMPTY, "33N", P4, "4o"), "to-move"),
    ("draw-phase-one-colour", {}, position(EMPTY, "33N", P4, "0d"), "to-move"),
    ("missing-drawn-colour", {"players": 2}, position(EMPTY, "33N", P2, "0o"), "to-move"),
]
FIELD_PATTERNS = {
    "board": r"(?i)board",
    "assam": r"(?i)assam",
    "players": r"(?i)player|seat",
    "to-move": r"(?i)to.?move|phase",
}


@pytest.mark.parametrize(
    ("rules", "text", "field"),
    [case[1:] for case in NOTATION_ERRORS],
    ids=[case[0] for case in NOTATION_ERRORS],
)
def test_notation_error(api, rules, text, field):
    """A malformed position raises NotationError naming the bad field (§9)."""
    with pytest.raises(api.NotationError, match=FIELD_PATTERNS[field]):
        make(api, text, **rules)


def test_notation_error_is_value_error(api):
    """NotationError is a ValueError, so callers can catch either."""
    with pytest.raises(ValueError):
        make(api, position(EMPTY, "99N", P4, "0o"))


# --- §8: rule options outside their range ---------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"board_size": 6},  # board sizes are odd
        {"board_size": 3},  # from 5
        {"die_faces": ()},  # a non-empty list
        {"die_faces": (0, 1)},  # of positive integers
        {"initial_facing": "X"},
        {"tie_break": "score"},
        {"starting_dirhams": -1},  # any number from 0
        {"rugs_per_colour": 0},  # any positive number
        {"seat_dirhams": (30, 30, 30)},  # one purse per seat (4 players)
        {"players": 2, "seat_dirhams": (30, 30, 30)},
        {"seat_dirhams": (30, -1, 30, 30)},  # each from 0
    ],
)
def test_bad_rule_options_raise(api, options):
    """Rule options outside the ranges of §8 raise ConfigError."""
    with pytest.raises(api.ConfigError):
        api.GameState.start(api.Rules(**options))


# --- illegal actions ------------------------------------------------------------


@pytest.mark.parametrize(
    ("rules", "text", "action"),
    [
        ({}, position(EMPTY, "33N", P4, "0o"), 2),  # no 180-degree turn
        ({}, position(EMPTY, "33N", P4, "0r"), 5),  # not a die face
        ({}, position(EMPTY, "33N", P4, "0p"), ((3, 1), (3, 0))),  # does not touch Assam
        ({}, position(EMPTY, "33N", P4, "0p"), ((3, 2), (3, 3))),  # covers Assam
        ({}, position(COVER, "33N", COVER_PLAYERS, "0p"), ((3, 2), (3, 1))),  # all of r1
        ({"players": 2}, position(EMPTY, "33N", "ry:30:0+3,bp:30:1+3", "0d"), "r"),  # none left
        ({}, position(EMPTY, "33N", "r:30:0,b:30:0,y:30:0,p:30:0", "0x"), 0),  # game over
    ],
)
def test_illegal_action_raises(api, rules, text, action):
    """An action outside legal_actions() raises IllegalActionError and changes nothing."""
    state = make(api, text, **rules)
    with pytest.raises(api.IllegalActionError):
        state.apply(action)
    assert state.to_notation() == text


def test_apply_returns_new_state(api):
    """apply() leaves the original state unchanged."""
    state = api.GameState.start(api.Rules())
    before = state.to_notation()
    state.apply(1)
    assert state.to_notation() == before
