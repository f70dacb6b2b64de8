"""Dékal: one test per rule of RULES.md §1, the rulebook's worked example,
the options and the refused moves. Random play and invariants are in
``test_dekal_properties.py``."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from marshmallow import ValidationError

from engines.core import IllegalAction, State, clone
from engines.dekal import GAME
from engines.dekal.rules import legal_directions, score_grid, winners
from tests.engines import conformance

LABELS = [[11, 12, 13, 14], [15, 16, 17, 18], [19, 20, 21, 22], [23, 24, 25, 26]]
# The rulebook's figure 3 is missing; this grid fits its text: the 8s, the
# 10s, the 1s and the two 4s that touch cancel, a third 4 touches no 4.
WORKED_EXAMPLE = [[8, 8, 5, 10], [8, 4, 4, 10], [1, 5, 7, 10], [1, 1, 3, 4]]


def new(n: int = 2, seed: int = 7, **options: object) -> State:
    return conformance.new_match(GAME, n, seed, options)


def set_grid(state: State, seat: int, rows: list[list[int]], face_up: bool = False) -> None:
    state["grids"][seat] = [list(row) for row in rows]
    state["face_up"][seat] = [[face_up] * 4 for _ in range(4)]


def reveal(seat: int, row: int, col: int) -> dict:
    return {"type": "reveal", "row": row, "col": col}


def take(value: int, side: str) -> dict:
    return {"type": "take", "value": value, "from": side}


def reveal_all(state: State, positions: list[tuple[int, int]]) -> list[dict]:
    events = []
    for seat, (row, col) in enumerate(positions):
        events += GAME.apply(state, seat, reveal(seat, row, col))
    return events


def of_type(events: list[dict], kind: str) -> list[dict]:
    return [event for event in events if event["type"] == kind]


def play_randomly(state: State, rng: random.Random, until=lambda s: False) -> list[dict]:
    events = []
    while GAME.to_act(state) and not until(state):
        seat = rng.choice(GAME.to_act(state))
        events += GAME.apply(state, seat, rng.choice(GAME.legal_actions(state, seat)))
    return events


def finish_with(finals: list[list[list[int]]]) -> tuple[State, list[dict]]:
    """Play turn 16 so that the grids end as ``finals``.

    Every card is face up but each seat's top-left one, which holds the
    value its final top-right cell needs: revealed, then pushed back in from
    the right, it shifts row 0 left into place.
    """
    state = new(len(finals), first_player=0)
    state["turn"] = 16
    for seat, final in enumerate(finals):
        set_grid(state, seat, [[final[0][3], *final[0][:3]], *final[1:]], face_up=True)
        state["face_up"][seat][0][0] = False
    events = reveal_all(state, [(0, 0)] * len(finals))
    for seat, final in enumerate(finals):
        events += GAME.apply(state, seat, take(final[0][3], "right"))
    assert state["grids"] == finals
    return state, events


# -- material and setup ----------------------------------------------------


def test_material_is_100_cards_ten_of_each_value_1_to_10() -> None:
    state = new(3)
    cards = [v for grid in state["grids"] for row in grid for v in row] + state["reserve"]
    assert Counter(cards) == {value: 10 for value in range(1, 11)}


@pytest.mark.parametrize("n", range(2, 7))
def test_setup_deals_16_face_down_cards_per_grid_and_the_rest_is_the_reserve(n: int) -> None:
    state = new(n)
    assert len(state["grids"]) == n
    for grid, face_up in zip(state["grids"], state["face_up"], strict=True):
        assert [len(row) for row in grid] == [4, 4, 4, 4]
        assert not any(any(row) for row in face_up)
    assert len(state["reserve"]) == 100 - 16 * n
    assert state["centre"] == [] and state["phase"] == "reveal" and state["turn"] == 1


def test_setup_is_a_pure_function_of_the_seed() -> None:
    assert new(4, seed=3) == new(4, seed=3)
    assert new(4, seed=3)["grids"] != new(4, seed=4)["grids"]


def test_face_down_values_are_hidden_from_everyone_including_their_owner() -> None:
    state = new(3)
    for viewer in [None, 0, 1, 2]:
        for player in GAME.view(state, viewer)["players"]:
            assert all(
                cell == {"face_up": False, "value": None} for row in player["grid"] for cell in row
            )


def test_a_view_is_a_copy_that_never_aliases_the_state() -> None:
    state = new(2, first_player=0)
    GAME.apply(state, 0, reveal(0, 1, 1))
    before = clone(state)
    seen = GAME.view(state, 0)
    seen["my_choice"]["row"] = 3
    seen["players"][0]["grid"][0][0] = None
    seen["centre"].append(1)
    seen["reserve"]["drawn"].append(1)
    assert state == before


# -- the reveal phase ------------------------------------------------------


def test_reveal_every_seat_acts_at_once_and_only_once() -> None:
    state = new(3)
    assert GAME.to_act(state) == [0, 1, 2]
    GAME.apply(state, 1, reveal(1, 0, 0))
    assert GAME.to_act(state) == [0, 2]
    assert GAME.legal_actions(state, 1) == []
    assert conformance.assert_illegal_leaves_state(GAME, state, 1, reveal(1, 2, 2)) == (
        "not_your_turn"
    )


def test_reveal_chooses_any_face_down_card_of_ones_own_grid() -> None:
    state = new(2)
    state["face_up"][0][1][1] = True
    legal = GAME.legal_actions(state, 0)
    assert len(legal) == 15 and reveal(0, 1, 1) not in legal
    code = conformance.assert_illegal_leaves_state(GAME, state, 0, reveal(0, 1, 1))
    assert code == "illegal_action"


def test_reveal_choice_stays_secret_until_every_seat_has_chosen() -> None:
    state = new(3)
    before = {viewer: GAME.view(state, viewer) for viewer in [None, 1, 2]}
    events = GAME.apply(state, 0, reveal(0, 2, 3))
    assert events == [{"type": "chosen", "seat": 0}]
    for viewer, seen in before.items():
        seen["players"][0]["chosen"] = True
        assert GAME.view(state, viewer) == seen
    assert GAME.view(state, 0)["my_choice"] == {"row": 2, "col": 3}
    assert GAME.view(state, 1)["my_choice"] is None
    assert "my_choice" not in GAME.view(state, None)


def test_reveal_turns_every_chosen_card_face_up_into_the_centre_at_once() -> None:
    state = new(3)
    values = [state["grids"][s][s][0] for s in range(3)]
    events = reveal_all(state, [(0, 0), (1, 0), (2, 0)])
    revealed = of_type(events, "revealed")
    assert len(revealed) == 1 and len(events) == 3 + 1 + 1  # chosen x3, revealed, first_player
    assert revealed[0]["cards"] == [
        {"seat": s, "row": s, "col": 0, "value": values[s]} for s in range(3)
    ]
    assert state["centre"] == sorted(values)
    seen = GAME.view(state, None)
    assert seen["centre"] == sorted(values) and seen["phase"] == "draft"
    for s, player in enumerate(seen["players"]):
        assert player["hole"] == {"row": s, "col": 0}
        assert player["grid"][s][0] is None
        assert not player["chosen"]


# -- the first player ------------------------------------------------------


def test_first_player_of_turn_1_is_the_lowest_revealed_card() -> None:
    state = new(3)
    for seat, value in enumerate([5, 2, 7]):
        state["grids"][seat][0][0] = value
    events = reveal_all(state, [(0, 0)] * 3)
    assert of_type(events, "first_player") == [
        {"type": "first_player", "seat": 1, "by": "lowest_card"}
    ]
    assert GAME.to_act(state) == [1]
    assert GAME.view(state, None)["first_player"] == 1


def test_first_player_is_unknown_before_turn_1_is_revealed() -> None:
    assert GAME.view(new(3), None)["first_player"] is None


def test_first_player_tie_is_broken_by_reserve_draws_lowest_wins() -> None:
    state = new(3)
    for seat, value in enumerate([2, 2, 7]):
        state["grids"][seat][0][0] = value
    state["reserve"] = [1, 4, 9]  # drawn from the end: seat 0 draws 9, seat 1 draws 4
    events = reveal_all(state, [(0, 0)] * 3)
    assert of_type(events, "reserve_drawn") == [
        {"type": "reserve_drawn", "draws": [{"seat": 0, "value": 9}, {"seat": 1, "value": 4}]}
    ]
    assert of_type(events, "first_player")[0] == {
        "type": "first_player",
        "seat": 1,
        "by": "reserve",
    }
    assert state["reserve"] == [1] and state["reserve_drawn"] == [9, 4]
    assert GAME.view(state, None)["reserve"] == {"count": 1, "drawn": [9, 4]}


def test_reserve_draws_repeat_among_the_seats_still_tied() -> None:
    state = new(3)
    for seat in range(3):
        state["grids"][seat][0][0] = 3
    state["reserve"] = [2, 6, 8, 5, 5]  # round 1: 5, 5, 8; round 2 (seats 0, 1): 6, 2
    events = reveal_all(state, [(0, 0)] * 3)
    rounds = of_type(events, "reserve_drawn")
    assert [[(d["seat"], d["value"]) for d in e["draws"]] for e in rounds] == [
        [(0, 5), (1, 5), (2, 8)],
        [(0, 6), (1, 2)],
    ]
    assert of_type(events, "first_player")[0] == {
        "type": "first_player",
        "seat": 1,
        "by": "reserve",
    }


def test_tie_with_an_exhausted_reserve_is_broken_at_random_and_replays() -> None:
    chosen = set()
    for seed in range(30):
        state = new(3, seed=seed)
        for seat, value in enumerate([1, 1, 4]):
            state["grids"][seat][0][0] = value
        state["reserve"] = [6, 6]  # one round ties again, then nothing left
        replayed = clone(state)
        events = reveal_all(state, [(0, 0)] * 3)
        assert reveal_all(replayed, [(0, 0)] * 3) == events and replayed == state
        first = of_type(events, "first_player")[0]
        assert first["by"] == "random" and state["reserve"] == []
        chosen.add(first["seat"])
    assert chosen == {0, 1}


def test_tie_with_fewer_reserve_cards_than_tied_seats_is_random_without_draws() -> None:
    state = new(6)
    for seat in range(6):
        state["grids"][seat][0][0] = 1
    assert len(state["reserve"]) == 4
    events = reveal_all(state, [(0, 0)] * 6)
    assert not of_type(events, "reserve_drawn") and len(state["reserve"]) == 4
    assert of_type(events, "first_player")[0]["by"] == "random"


def test_first_player_option_seat_number_starts_turn_1() -> None:
    state = new(4, first_player=2)
    assert GAME.view(state, None)["first_player"] == 2
    events = reveal_all(state, [(0, 0)] * 4)
    assert not of_type(events, "first_player")
    assert GAME.to_act(state) == [2]


def test_first_player_option_random_is_seeded() -> None:
    starters = {new(5, seed=seed, first_player="random")["first_player"] for seed in range(40)}
    assert starters == set(range(5))
    assert new(5, seed=9, first_player="random") == new(5, seed=9, first_player="random")


def test_first_player_token_passes_clockwise_after_every_turn() -> None:
    state = new(3, first_player=1)
    firsts = []
    for _ in range(4):
        firsts.append(state["first_player"])
        reveal_all(state, [(0, 0)] * 3)
        for _ in range(3):
            seat = GAME.to_act(state)[0]
            GAME.apply(state, seat, GAME.legal_actions(state, seat)[0])
    assert firsts == [1, 2, 0, 1]


# -- the draft phase -------------------------------------------------------


def test_draft_starts_with_the_first_player_and_goes_clockwise() -> None:
    state = new(4, first_player=2)
    reveal_all(state, [(1, 1)] * 4)
    order = []
    while state["phase"] == "draft":
        (seat,) = GAME.to_act(state)
        order.append(seat)
        GAME.apply(state, seat, GAME.legal_actions(state, seat)[0])
    assert order == [2, 3, 0, 1]


def test_draft_each_distinct_value_and_legal_side_is_offered_once() -> None:
    state = new(3, first_player=0)
    for seat, value in enumerate([4, 9, 4]):
        state["grids"][seat][0][0] = value
    reveal_all(state, [(0, 0)] * 3)
    assert GAME.legal_actions(state, 0) == [
        take(4, "right"),
        take(4, "bottom"),
        take(9, "right"),
        take(9, "bottom"),
    ]


def test_the_last_player_takes_the_last_card_but_chooses_how_to_insert_it() -> None:
    state = new(2, first_player=0)
    reveal_all(state, [(1, 1), (1, 2)])
    GAME.apply(state, 0, GAME.legal_actions(state, 0)[0])
    (last,) = state["centre"]
    assert GAME.legal_actions(state, 1) == [
        take(last, side) for side in ("left", "right", "top", "bottom")
    ]


def test_the_centre_is_empty_once_every_seat_has_taken() -> None:
    state = new(3, first_player=0)
    reveal_all(state, [(0, 0)] * 3)
    for seat in (0, 1, 2):
        assert state["centre"]
        GAME.apply(state, seat, GAME.legal_actions(state, seat)[0])
    assert state["centre"] == [] and state["phase"] == "reveal" and state["turn"] == 2


# -- insertion -------------------------------------------------------------


@pytest.mark.parametrize(
    ("side", "expected"),
    [
        ("left", [[11, 12, 13, 14], [17, 15, 16, 18], [19, 20, 21, 22], [23, 24, 25, 26]]),
        ("right", [[11, 12, 13, 14], [15, 16, 18, 17], [19, 20, 21, 22], [23, 24, 25, 26]]),
        ("top", [[11, 12, 17, 14], [15, 16, 13, 18], [19, 20, 21, 22], [23, 24, 25, 26]]),
        ("bottom", [[11, 12, 13, 14], [15, 16, 21, 18], [19, 20, 25, 22], [23, 24, 17, 26]]),
    ],
)
def test_insertion_pushes_the_cards_between_the_edge_and_the_hole(
    side: str, expected: list[list[int]]
) -> None:
    state = new(2, first_player=0)
    set_grid(state, 0, LABELS)
    reveal_all(state, [(1, 2), (0, 0)])  # seat 0's hole at (1, 2), its card 17 in the centre
    events = GAME.apply(state, 0, take(17, side))
    assert state["grids"][0] == expected
    assert events == [
        {"type": "taken", "seat": 0, "value": 17, "from": side, "hole": {"row": 1, "col": 2}}
    ]
    assert state["holes"][0] is None


def test_insertion_pushed_cards_keep_their_face_and_the_new_card_is_face_up() -> None:
    state = new(2, first_player=0)
    set_grid(state, 0, LABELS)
    state["face_up"][0][1][0] = True
    reveal_all(state, [(1, 2), (0, 0)])
    GAME.apply(state, 0, take(17, "left"))
    assert state["face_up"][0][1] == [True, True, False, False]
    row = GAME.view(state, 1)["players"][0]["grid"][1]
    assert row == [
        {"face_up": True, "value": 17},
        {"face_up": True, "value": 15},
        {"face_up": False, "value": None},
        {"face_up": False, "value": None},
    ]


@pytest.mark.parametrize(
    ("row", "col", "sides"),
    [
        (0, 0, ["right", "bottom"]),
        (0, 3, ["left", "bottom"]),
        (3, 0, ["right", "top"]),
        (3, 3, ["left", "top"]),
        (0, 1, ["left", "right", "bottom"]),
        (2, 0, ["right", "top", "bottom"]),
        (3, 2, ["left", "right", "top"]),
        (1, 3, ["left", "top", "bottom"]),
        (1, 1, ["left", "right", "top", "bottom"]),
        (2, 2, ["left", "right", "top", "bottom"]),
    ],
)
def test_edge_rule_a_card_never_drops_straight_into_the_hole(
    row: int, col: int, sides: list[str]
) -> None:
    assert legal_directions({"row": row, "col": col}) == sides
    state = new(2, first_player=0)
    reveal_all(state, [(row, col), (1, 1)])
    value = state["centre"][0]
    assert {a["from"] for a in GAME.legal_actions(state, 0)} == set(sides)
    for side in {"left", "right", "top", "bottom"} - set(sides):
        code = conformance.assert_illegal_leaves_state(GAME, state, 0, take(value, side))
        assert code == "illegal_action"


def test_corner_holes_allow_2_sides_edge_holes_3_inner_holes_4() -> None:
    counts = Counter(
        len(legal_directions({"row": r, "col": c})) for r in range(4) for c in range(4)
    )
    assert counts == {2: 4, 3: 8, 4: 4}


# -- the end of a manche ---------------------------------------------------


def test_worked_example_grid_scores_24_with_5_cards_left() -> None:
    result = score_grid(WORKED_EXAMPLE)
    assert result["score"] == 5 + 5 + 3 + 4 + 7 == 24
    assert result["cards_left"] == 5
    kept = [WORKED_EXAMPLE[r][c] for r in range(4) for c in range(4)]
    for cell in result["cancelled"]:
        kept.remove(WORKED_EXAMPLE[cell["row"]][cell["col"]])
    assert sorted(kept) == [3, 4, 5, 5, 7]


def test_worked_example_played_out_on_the_last_turn() -> None:
    other = [[1, 2, 1, 2], [2, 1, 2, 1], [1, 2, 1, 2], [2, 1, 2, 6]]
    state, events = finish_with([WORKED_EXAMPLE, other])
    (scored,) = of_type(events, "manche_scored")
    assert scored["scores"] == [24, 29]
    assert scored["cards_left"] == [5, 16]
    assert len(scored["cancelled"][0]) == 11 and scored["cancelled"][1] == []
    assert scored["grids"] == [WORKED_EXAMPLE, other]
    assert GAME.outcome(state)["winners"] == [0]


def test_orthogonally_adjacent_equal_cards_cancel() -> None:
    grid = [[7, 7, 1, 2], [3, 4, 5, 6], [8, 9, 10, 1], [2, 3, 4, 5]]
    result = score_grid(grid)
    assert result["cancelled"] == [{"row": 0, "col": 0}, {"row": 0, "col": 1}]
    assert result["score"] == sum(map(sum, grid)) - 14


def test_a_card_cancels_when_any_one_neighbour_matches_so_chains_cancel_whole() -> None:
    grid = [[6, 6, 6, 1], [2, 3, 6, 4], [5, 7, 8, 9], [10, 1, 2, 3]]
    assert len(score_grid(grid)["cancelled"]) == 4


def test_diagonal_equal_cards_do_not_cancel() -> None:
    grid = [[5, 1, 2, 3], [4, 5, 6, 7], [8, 9, 5, 10], [1, 2, 3, 5]]
    assert score_grid(grid) == {"score": sum(map(sum, grid)), "cards_left": 16, "cancelled": []}


def test_after_turn_16_every_card_is_face_up_and_the_manche_is_scored() -> None:
    state = new(2, seed=11)
    events = play_randomly(state, random.Random(11))
    assert len(of_type(events, "revealed")) == 16
    assert len(of_type(events, "turn_started")) == 15
    assert all(all(all(row) for row in face) for face in state["face_up"])
    (scored,) = of_type(events, "manche_scored")
    assert scored["scores"] == [score_grid(g)["score"] for g in state["grids"]]
    assert events[-1]["type"] == "match_over"
    assert GAME.view(state, None)["phase"] == "over" and GAME.to_act(state) == []


# -- the winner ------------------------------------------------------------


def test_winner_is_the_lowest_score() -> None:
    assert winners([30, 12, 40], [5, 9, 2]) == [1]


def test_winner_tie_goes_to_fewer_cards_left() -> None:
    assert winners([20, 20, 30], [6, 4, 3]) == [1]


def test_winner_still_tied_is_a_shared_victory() -> None:
    assert winners([20, 20, 30], [4, 4, 3]) == [0, 1]


def test_single_manche_outcome_breaks_ties_on_cards_left() -> None:
    sixteen_lone = [[1, 2, 1, 2], [2, 1, 2, 1], [1, 2, 1, 2], [2, 1, 2, 1]]
    three_lone = [[10, 3, 3, 3], [3, 3, 3, 3], [3, 3, 9, 3], [3, 5, 3, 3]]
    state, _ = finish_with([sixteen_lone, three_lone, sixteen_lone])
    assert GAME.outcome(state) == {
        "winners": [1],
        "scores": [24, 24, 24],
        "cards_left": [16, 3, 16],
        "manche_scores": [[24, 24, 24]],
        "manches": 1,
    }


def test_single_manche_full_tie_is_shared() -> None:
    grid = [[1, 2, 1, 2], [2, 1, 2, 1], [1, 2, 1, 2], [2, 1, 2, 1]]
    state, _ = finish_with([grid, grid])
    assert GAME.outcome(state)["winners"] == [0, 1]


# -- several manches -------------------------------------------------------


def test_manches_go_on_until_a_cumulative_score_reaches_the_target() -> None:
    state = new(3, seed=5, target_score=150)
    events = play_randomly(state, random.Random(5))
    scored = of_type(events, "manche_scored")
    assert len(scored) >= 2
    assert all(max(m["totals"]) < 150 for m in scored[:-1])
    assert max(scored[-1]["totals"]) >= 150
    assert [m["manche"] for m in scored] == list(range(1, len(scored) + 1))
    result = GAME.outcome(state)
    assert result["scores"] == scored[-1]["totals"]
    assert result["manche_scores"] == [m["scores"] for m in scored]
    assert result["manches"] == len(scored)


def test_next_manche_first_player_is_the_seat_after_the_previous_starter() -> None:
    state = new(3, seed=2, target_score=1000)
    rng = random.Random(2)
    starters = []
    for manche in (1, 2, 3, 4):
        play_randomly(
            state, rng, until=lambda s, m=manche: s["manche"] == m and s["phase"] == "draft"
        )
        starters.append(state["first_player"])
    assert starters[1:] == [(starters[0] + k) % 3 for k in (1, 2, 3)]
    assert [m["first_player"] for m in state["manches"]] == starters[:3]


def test_a_new_manche_is_dealt_afresh_with_its_first_player_known() -> None:
    state = new(2, seed=4, target_score=1000)
    events = play_randomly(state, random.Random(4), until=lambda s: s["manche"] == 2)
    assert events[-1] == {"type": "manche_started", "manche": 2, "first_player": state["starter"]}
    seen = GAME.view(state, 0)
    assert seen["manche"] == 2 and seen["turn"] == 1 and seen["phase"] == "reveal"
    assert seen["first_player"] == state["starter"] and seen["centre"] == []
    assert len(state["reserve"]) == 68 and state["reserve_drawn"] == []
    assert not any(any(row) for face in state["face_up"] for row in face)
    assert [p["total"] for p in seen["players"]] == state["manches"][0]["scores"]


def test_multi_manche_ties_on_the_cumulative_score_are_shared() -> None:
    state = new(2, target_score=10)
    state["phase"] = "over"
    state["totals"] = [40, 40]
    state["manches"] = [
        {
            "manche": 1,
            "first_player": 0,
            "scores": [40, 40],
            "cards_left": [3, 9],
            "cancelled": [[], []],
            "totals": [40, 40],
        }
    ]
    assert GAME.outcome(state)["winners"] == [0, 1]


# -- options ---------------------------------------------------------------


def test_options_defaults() -> None:
    assert GAME.options_schema().load({}) == {"target_score": None, "first_player": "lowest_card"}


@pytest.mark.parametrize(
    "options",
    [
        {"target_score": 0},
        {"target_score": 1001},
        {"target_score": "100"},
        {"target_score": True},
        {"first_player": "youngest"},
        {"first_player": 6},
        {"first_player": -1},
        {"first_player": True},
        {"first_player": 1.5},
        {"rounds": 3},
    ],
)
def test_options_schema_refuses(options: dict) -> None:
    with pytest.raises(ValidationError):
        GAME.options_schema().load(options)


def test_options_seat_number_must_be_a_seat_of_this_match() -> None:
    options = GAME.options_schema().load({"first_player": 3})
    with pytest.raises(IllegalAction) as refused:
        GAME.setup(options, 3, 1)
    assert refused.value.code == "invalid_options"
    assert GAME.setup(options, 4, 1)["first_player"] == 3


@pytest.mark.parametrize("n", [0, 1, 7])
def test_setup_refuses_a_player_count_outside_2_to_6(n: int) -> None:
    with pytest.raises(IllegalAction):
        GAME.setup(GAME.options_schema().load({}), n, 1)


# -- refused actions -------------------------------------------------------


def draft_state() -> State:
    state = new(3, first_player=0)
    for seat, value in enumerate([4, 9, 4]):
        state["grids"][seat][0][0] = value
    reveal_all(state, [(0, 0)] * 3)
    return state


@pytest.mark.parametrize(
    "action",
    [
        {"type": "reveal", "row": 4, "col": 0},
        {"type": "reveal", "row": -1, "col": 0},
        {"type": "reveal", "row": 0, "col": True},
        {"type": "reveal", "row": "0", "col": 0},
        {"type": "reveal", "row": 0},
        {"type": "take", "value": 3, "from": "left"},
        {"type": "pass"},
        {},
    ],
)
def test_illegal_in_the_reveal_phase(action: dict) -> None:
    code = conformance.assert_illegal_leaves_state(GAME, new(3), 0, action)
    assert code == "illegal_action"


@pytest.mark.parametrize(
    "action",
    [
        take(5, "right"),
        take(4, "left"),
        take(4, "top"),
        take(4, "diagonal"),
        {"type": "take", "value": 4},
        {"type": "take", "value": True, "from": "right"},
        {"type": "take", "value": 4.0, "from": "right"},
        reveal(0, 1, 1),
    ],
)
def test_illegal_in_the_draft_phase(action: dict) -> None:
    code = conformance.assert_illegal_leaves_state(GAME, draft_state(), 0, action)
    assert code == "illegal_action"


@pytest.mark.parametrize("seat", [1, 2, 3, -1, None, True])
def test_only_the_current_seat_may_take(seat: object) -> None:
    code = conformance.assert_illegal_leaves_state(GAME, draft_state(), seat, take(4, "right"))
    assert code == "not_your_turn"


def test_nobody_acts_once_the_match_is_over() -> None:
    state = new(2, seed=3)
    play_randomly(state, random.Random(3))
    assert GAME.legal_actions(state, 0) == []
    assert GAME.outcome(state) is not None
    code = conformance.assert_illegal_leaves_state(GAME, state, 0, reveal(0, 0, 0))
    assert code == "not_your_turn"


def test_a_seat_must_be_a_seat_number() -> None:
    code = conformance.assert_illegal_leaves_state(GAME, new(3), True, reveal(1, 0, 0))
    assert code == "not_your_turn"
