"""Pacal: one test per rule of RULES.md §2, the rulebook's example, options
and illegal actions. Random play, properties and hidden information are in
``test_pacal_properties.py``."""

from __future__ import annotations

from typing import Any

import pytest
from marshmallow import ValidationError

from engines.core import IllegalAction, State
from engines.pacal import GAME
from engines.pacal.rules import fitting_slots, spread
from tests.engines import conformance

SOLITAIRE = {"mode": "solitaire"}


def new_match(seed: int = 0, **options: Any) -> State:
    return conformance.new_match(GAME, 2, seed, options)


def new_solitaire(seed: int = 0) -> State:
    return conformance.new_match(GAME, 1, seed, SOLITAIRE)


def play(state: State, seat: int, action: dict) -> list[dict]:
    """Apply ``action`` as the service would: loaded by its schema first."""
    loaded = GAME.action_schemas[action["type"]]().load(action)
    return GAME.apply(state, seat, loaded)


def pyramid(slots: dict[int, list[int]]) -> list[list[int]]:
    return [list(slots.get(slot, [])) for slot in range(10)]


def types(events: list[dict]) -> list[str]:
    return [event["type"] for event in events]


def placing(state: State, cards: list[int]) -> State:
    """Put ``state`` in the placement phase, seat s holding ``cards[s]``."""
    active = state["active"]
    state["offer"] = {"seat": active, "cards": sorted(cards), "chosen": cards[1 - active]}
    state["to_place"] = list(cards)
    state["pending"] = [True, True]
    state["phase"] = "place"
    return state


def choosing(state: State, cards: list[int]) -> State:
    """Put ``state`` in the choice phase with ``cards`` offered by the active seat."""
    state["offer"] = {"seat": state["active"], "cards": sorted(cards), "chosen": None}
    state["phase"] = "choose"
    return state


def last_cards(state: State, cards: list[int]) -> State:
    """Put ``state`` in the last-card phase, seat s holding ``cards[s]``."""
    state["hands"] = [[card] for card in cards]
    state["offers_made"] = 14
    state["offer"] = None
    state["pending"] = [True, True]
    state["phase"] = "last_card"
    return state


# A pyramid one card short of complete: slot 9 is empty, 1..10 fit there.
NINE = pyramid({0: [50], 1: [45], 2: [40], 3: [35], 4: [30], 5: [25], 6: [20], 7: [15], 8: [11]})


# --- Material and setup ---------------------------------------------------


def test_material_is_fifty_cards_numbered_1_to_50() -> None:
    state = new_match(3)
    cards = [c for f in state["foundations"] for c in f] + [c for h in state["hands"] for c in h]
    assert sorted(cards) == list(range(1, 51))


def test_setup_ten_face_down_foundation_cards_and_a_hand_of_fifteen_each() -> None:
    state = new_match(4)
    assert [len(f) for f in state["foundations"]] == [10, 10]
    assert [len(h) for h in state["hands"]] == [15, 15]
    assert state["pyramids"] == [pyramid({}), pyramid({})]


def test_the_higher_foundation_card_under_slot_0_starts() -> None:
    for seed in range(20):
        state = new_match(seed)
        tops = [f[0] for f in state["foundations"]]
        assert state["foundation_tops"] == tops
        assert GAME.to_act(state) == [tops.index(max(tops))]


def test_the_two_foundation_tops_are_public_from_the_start() -> None:
    state = new_match(5)
    for viewer in (None, 0, 1):
        shown = [p["foundation_top"] for p in GAME.view(state, viewer)["players"]]
        assert shown == state["foundation_tops"]


# --- Construction rule ----------------------------------------------------


def test_visible_values_strictly_decrease_in_slot_order() -> None:
    pyr = pyramid({0: [41, 40], 4: [20]})
    assert fitting_slots(pyr, 45) == []  # above the top, which is covered already
    assert fitting_slots(pyr, 30) == [1, 2, 3, 4]  # between 40 and 20, or covering 20
    assert fitting_slots(pyr, 19) == [4, 5, 6, 7, 8, 9]
    assert 5 not in fitting_slots(pyr, 25)  # slot 5 comes after 20


def test_a_card_may_go_on_an_empty_slot_where_the_order_holds() -> None:
    state = placing(new_match(), [30, 12])
    state["pyramids"][0] = pyramid({0: [40], 6: [20]})
    legal = [a["slot"] for a in GAME.legal_actions(state, 0)]
    assert legal == [0, 1, 2, 3, 4, 5, 6]  # 0 and 6 by covering 40 and 20
    events = play(state, 0, {"type": "place", "slot": 2})
    assert events[0] == {"type": "placed", "seat": 0, "slot": 2, "card": 30, "covered": None}
    assert state["pyramids"][0][2] == [30]


def test_a_card_may_cover_a_face_up_card_that_covers_nothing() -> None:
    state = placing(new_match(), [19, 12])
    state["pyramids"][0] = pyramid({3: [20], 4: [18]})
    events = play(state, 0, {"type": "place", "slot": 3})
    assert events[0]["covered"] == 20
    assert state["pyramids"][0][3] == [20, 19]


def test_a_card_can_be_covered_only_once() -> None:
    pyr = pyramid({3: [22, 20], 4: [18]})
    assert 3 not in fitting_slots(pyr, 21)
    state = placing(new_match(), [21, 12])
    state["pyramids"][0] = pyr
    with pytest.raises(IllegalAction, match="covered only once"):
        play(state, 0, {"type": "place", "slot": 3})


def test_only_the_visible_card_of_a_slot_counts_for_the_order() -> None:
    pyr = pyramid({1: [40, 25]})  # 40 is covered: slot 1 shows 25
    assert 2 not in fitting_slots(pyr, 30)
    assert fitting_slots(pyr, 30) == [0]
    assert 2 in fitting_slots(pyr, 24)


def test_rulebook_example_26_cannot_cover_33_or_21_and_17_may_go_on_18_or_16() -> None:
    """Rulebook: "La carte 26 ne peut être placée sur les cartes car les cartes 33
    et 21 recouvrent déjà la première carte jouée. Le 17 peut être placé sur le
    18 ou sur le 16, car ces cartes n'en recouvrent pas d'autres." """
    pyr = pyramid({0: [45], 1: [35, 33], 2: [24, 21], 3: [18], 4: [16], 6: [10]})
    assert fitting_slots(pyr, 26) == []
    assert fitting_slots(pyr, 17) == [3, 4]
    state = placing(new_match(), [26, 17])
    state["pyramids"] = [[list(s) for s in pyr], [list(s) for s in pyr]]
    for slot in (1, 2):
        with pytest.raises(IllegalAction, match="covered only once"):
            play(state, 0, {"type": "place", "slot": slot})
    assert GAME.legal_actions(state, 1) == [
        {"type": "place", "slot": 3},
        {"type": "place", "slot": 4},
    ]
    play(state, 1, {"type": "place", "slot": 3})
    assert state["pyramids"][1][3] == [18, 17]


def test_placed_cards_never_move() -> None:
    state = placing(new_match(), [30, 12])
    state["pyramids"][0] = pyramid({0: [40], 6: [20]})
    before = [list(stack) for stack in state["pyramids"][0]]
    play(state, 0, {"type": "place", "slot": 1})
    after = state["pyramids"][0]
    assert all(after[s][: len(before[s])] == before[s] for s in range(10))


# --- A turn ---------------------------------------------------------------


def test_the_active_player_offers_two_cards_of_their_hand() -> None:
    state = new_match(6)
    active = state["active"]
    offers = GAME.legal_actions(state, active)
    assert len(offers) == 15 * 14 // 2
    a, b = state["hands"][active][3], state["hands"][active][7]
    events = play(state, active, {"type": "offer", "cards": [b, a]})
    assert events == [{"type": "offered", "seat": active, "cards": [a, b]}]
    assert len(state["hands"][active]) == 13
    assert GAME.to_act(state) == [1 - active]
    assert GAME.view(state, None)["offer"] == {"seat": active, "cards": [a, b], "chosen": None}


def test_the_other_player_takes_one_card_and_the_active_player_gets_the_other() -> None:
    state = new_match(7)
    active, other = state["active"], 1 - state["active"]
    a, b = state["hands"][active][:2]
    play(state, active, {"type": "offer", "cards": [a, b]})
    assert GAME.legal_actions(state, other) == [
        {"type": "choose", "card": a},
        {"type": "choose", "card": b},
    ]
    events = play(state, other, {"type": "choose", "card": b})
    assert events[0] == {"type": "chosen", "seat": other, "card": b, "left": a}
    assert state["to_place"][other] == b and state["to_place"][active] == a


def test_each_player_places_the_card_they_got_in_either_order() -> None:
    for first in (0, 1):
        state = placing(new_match(8), [30, 20])
        assert sorted(GAME.to_act(state)) == [0, 1]
        play(state, first, {"type": "place", "slot": 0})
        assert GAME.to_act(state) == [1 - first]
        play(state, 1 - first, {"type": "place", "slot": 0})
        assert state["pyramids"][0][0] == [30] and state["pyramids"][1][0] == [20]
        assert state["phase"] == "offer"


def test_roles_alternate_after_each_offer() -> None:
    state = new_match(9)
    first = state["active"]
    placing(state, [30, 20])
    play(state, 0, {"type": "place", "slot": 0})
    events = play(state, 1, {"type": "place", "slot": 0})
    assert events[-1] == {"type": "next_offer", "seat": 1 - first}
    assert state["active"] == 1 - first
    assert state["offers_made"] == 1


def test_each_player_offers_seven_times_then_may_place_the_last_card() -> None:
    state = new_match(10)
    state["pyramids"] = [pyramid({}), pyramid({})]
    counts = [0, 0]
    while state["phase"] != "last_card":
        active = state["active"]
        counts[active] += 1
        low, high = state["hands"][active][0], state["hands"][active][-1]
        play(state, active, {"type": "offer", "cards": [low, high]})
        play(state, 1 - active, {"type": "choose", "card": high})
        for seat in (0, 1):
            # Wipe the pyramids so that random cards always fit somewhere.
            state["pyramids"][seat] = pyramid({})
            play(state, seat, {"type": "place", "slot": 0})
            state["pyramids"][seat] = pyramid({})
    assert counts == [7, 7]
    assert [len(hand) for hand in state["hands"]] == [1, 1]
    assert sorted(GAME.to_act(state)) == [0, 1]


def test_the_last_card_is_optional() -> None:
    state = last_cards(new_match(11), [30, 20])
    state["pyramids"] = [pyramid({0: [40]}), pyramid({0: [40]})]
    assert {"type": "pass"} in GAME.legal_actions(state, 0)
    assert {"type": "place", "slot": 1} in GAME.legal_actions(state, 0)
    play(state, 0, {"type": "place", "slot": 1})
    events = play(state, 1, {"type": "pass"})
    assert events[0] == {"type": "passed", "seat": 1}
    assert state["last_manche"]["reason"] == "exhausted"
    assert state["last_manche"]["winner"] == 0  # two filled slots against one


def test_a_last_card_that_fits_nowhere_is_never_a_loss() -> None:
    state = last_cards(new_match(12), [45, 20])
    state["pyramids"] = [pyramid({0: [40, 39], 1: [30]}), pyramid({0: [40]})]
    assert GAME.legal_actions(state, 0) == [{"type": "pass"}]
    assert 0 in GAME.to_act(state)  # still asked, so nothing leaks about the card
    play(state, 0, {"type": "pass"})
    events = play(state, 1, {"type": "pass"})
    assert "stuck" not in types(events)
    assert state["last_manche"]["winner"] == 0


# --- End of a manche ------------------------------------------------------


def test_a_player_whose_card_fits_nowhere_loses_the_manche() -> None:
    """Decided once the offer is complete: the other player places first
    (``test_rules_audit.py``)."""
    state = new_match(13)
    active, other = state["active"], 1 - state["active"]
    choosing(state, [46, 5])
    state["pyramids"][other] = pyramid({0: [45, 44]})  # 46 fits nowhere
    events = play(state, other, {"type": "choose", "card": 46})
    events += play(state, active, {"type": "place", "slot": 9})
    assert types(events)[:4] == ["chosen", "stuck", "placed", "manche_won"]
    assert events[1] == {"type": "stuck", "seat": other, "card": 46}
    assert events[3]["seat"] == active and events[3]["reason"] == "stuck"
    assert state["manches_won"][active] == 1
    assert state["manche"] == 2 and state["phase"] == "offer"


def test_both_stuck_in_the_same_offer_makes_a_void_manche_that_is_re_dealt() -> None:
    state = new_match(14)
    other = 1 - state["active"]
    choosing(state, [46, 47])
    state["pyramids"] = [pyramid({0: [45, 44]}), pyramid({0: [45, 44]})]
    events = play(state, other, {"type": "choose", "card": 46})
    assert types(events)[:4] == ["chosen", "stuck", "stuck", "manche_void"]
    assert events[3] == {"type": "manche_void", "manche": 1, "reason": "both_stuck"}
    assert state["manches_won"] == [0, 0]
    assert state["manche"] == 2
    assert state["pyramids"] == [pyramid({}), pyramid({})]
    assert [len(hand) for hand in state["hands"]] == [15, 15]


def test_a_completed_pyramid_wins_the_manche() -> None:
    state = placing(new_match(15), [5, 30])
    state["pyramids"][0] = [list(stack) for stack in NINE]
    play(state, 0, {"type": "place", "slot": 9})
    events = play(state, 1, {"type": "place", "slot": 0})
    won = events[types(events).index("manche_won")]
    assert won == {
        "type": "manche_won",
        "manche": 1,
        "seat": 0,
        "reason": "completed",
        "manches_won": [1, 0],
    }
    assert state["last_manche"]["pyramids"][0][9] == [5]


def test_the_manche_is_decided_only_once_both_placements_are_made() -> None:
    state = placing(new_match(15), [5, 30])
    state["pyramids"][0] = [list(stack) for stack in NINE]
    play(state, 0, {"type": "place", "slot": 9})
    assert state["manches_won"] == [0, 0] and GAME.to_act(state) == [1]


def test_both_complete_in_the_same_offer_the_larger_spread_wins() -> None:
    state = placing(new_match(16), [5, 2])
    state["pyramids"] = [[list(s) for s in NINE], [list(s) for s in NINE]]
    state["pyramids"][1][0] = [49]
    play(state, 0, {"type": "place", "slot": 9})  # spread 50 - 5 = 45
    events = play(state, 1, {"type": "place", "slot": 9})  # spread 49 - 2 = 47
    won = events[types(events).index("manche_won")]
    assert won["seat"] == 1 and won["reason"] == "spread"
    assert state["last_manche"]["spreads"] == [45, 47]


def test_both_complete_with_equal_spreads_make_a_void_manche() -> None:
    state = placing(new_match(17), [5, 4])
    state["pyramids"] = [[list(s) for s in NINE], [list(s) for s in NINE]]
    state["pyramids"][1][0] = [49]
    play(state, 0, {"type": "place", "slot": 9})  # spread 50 - 5 = 45
    events = play(state, 1, {"type": "place", "slot": 9})  # spread 49 - 4 = 45
    assert {"type": "manche_void", "manche": 1, "reason": "equal_spread"} in events
    assert state["manches_won"] == [0, 0] and state["manche"] == 2


def test_cards_exhausted_more_filled_slots_wins() -> None:
    state = last_cards(new_match(18), [1, 2])
    state["pyramids"] = [pyramid({0: [50], 1: [40]}), pyramid({0: [30], 1: [20], 2: [10]})]
    play(state, 0, {"type": "pass"})
    events = play(state, 1, {"type": "pass"})
    won = events[types(events).index("manche_won")]
    assert won["seat"] == 1 and won["reason"] == "exhausted"


def test_cards_exhausted_equal_filled_slots_the_larger_spread_wins() -> None:
    state = last_cards(new_match(19), [1, 2])
    state["pyramids"] = [pyramid({0: [50], 1: [10]}), pyramid({0: [30], 1: [20]})]
    play(state, 0, {"type": "pass"})
    events = play(state, 1, {"type": "pass"})
    won = events[types(events).index("manche_won")]
    assert won["seat"] == 0 and won["reason"] == "exhausted_spread"


def test_cards_exhausted_equal_filled_slots_and_spreads_make_a_void_manche() -> None:
    state = last_cards(new_match(20), [1, 2])
    state["pyramids"] = [pyramid({0: [50], 1: [40]}), pyramid({0: [30], 1: [20]})]
    play(state, 0, {"type": "pass"})
    events = play(state, 1, {"type": "pass"})
    assert {"type": "manche_void", "manche": 1, "reason": "exhausted_tie"} in events


def test_spread_is_highest_minus_lowest_visible_value() -> None:
    assert spread(pyramid({0: [50, 44], 5: [20], 9: [3]})) == 41
    assert spread(pyramid({4: [20]})) == 0
    assert spread(pyramid({})) == 0


# --- Match ----------------------------------------------------------------


def _win_a_manche(state: State, winner: int) -> list[dict]:
    """The loser gets a card that fits nowhere; the winner places theirs."""
    loser = 1 - winner
    choosing(state, [49, 50])
    state["pyramids"][loser] = pyramid({0: [48, 47]})
    state["pyramids"][winner] = pyramid({})
    events = play(state, 1 - state["active"], {"type": "choose", "card": 49})
    return events + play(state, winner, {"type": "place", "slot": 0})


def test_first_to_three_manches_wins_the_match() -> None:
    state = new_match(21)
    for expected in ([1, 0], [1, 1], [2, 1]):
        _win_a_manche(state, 0 if expected != [1, 1] else 1)
        assert state["manches_won"] == expected
        assert GAME.outcome(state) is None
    events = _win_a_manche(state, 0)
    assert GAME.to_act(state) == []
    assert GAME.outcome(state) == {
        "winners": [0],
        "scores": [3, 1],
        "manches_won": [3, 1],
        "manches_played": 4,
    }
    assert events[-1] == {"type": "match_over", **GAME.outcome(state)}
    assert GAME.view(state, None)["winners"] == [0]


def test_option_manches_to_win() -> None:
    state = new_match(22, manches_to_win=1)
    _win_a_manche(state, 1)
    assert GAME.outcome(state)["winners"] == [1]


def test_all_fifty_cards_are_reshuffled_and_the_starter_redrawn_each_manche() -> None:
    state = new_match(23)
    events = _win_a_manche(state, 0)
    dealt = events[types(events).index("manche_dealt")]
    tops = state["foundation_tops"]
    assert dealt == {
        "type": "manche_dealt",
        "manche": 2,
        "foundation_tops": tops,
        "starter": tops.index(max(tops)),
    }
    assert state["active"] == tops.index(max(tops))
    cards = [c for f in state["foundations"] for c in f] + [c for h in state["hands"] for c in h]
    assert sorted(cards) == list(range(1, 51))
    hands = [e for e in events if e["type"] == "hand_dealt"]
    assert [(e["seat"], e["to"], e["hand"]) for e in hands] == [
        (0, [0], state["hands"][0]),
        (1, [1], state["hands"][1]),
    ]


def test_the_last_manche_stays_visible_after_the_re_deal() -> None:
    state = new_match(24)
    _win_a_manche(state, 1)
    last = GAME.view(state, None)["last_manche"]
    assert last["winner"] == 1 and last["reason"] == "stuck"
    assert last["pyramids"][0] == pyramid({0: [48, 47]})


# --- Solitaire ------------------------------------------------------------


def test_solitaire_ten_foundation_cards_and_a_pile_of_forty() -> None:
    state = new_solitaire(1)
    assert len(state["foundations"][0]) == 10
    assert len(state["pile"]) + 1 == 40 and state["cards_drawn"] == 1
    cards = state["foundations"][0] + state["pile"] + [state["drawn"]]
    assert sorted(cards) == list(range(1, 51))
    assert GAME.to_act(state) == [0]


def test_solitaire_place_the_drawn_card_on_an_empty_slot_where_the_order_holds() -> None:
    state = new_solitaire(2)
    state["pyramids"][0] = pyramid({0: [40], 3: [20]})
    state["drawn"] = 30
    assert GAME.legal_actions(state, 0) == [
        {"type": "place", "slot": 1},
        {"type": "place", "slot": 2},
    ]
    events = play(state, 0, {"type": "place", "slot": 2})
    assert events[0] == {"type": "placed", "seat": 0, "slot": 2, "card": 30}
    assert events[1]["type"] == "drawn" and events[1]["cards_drawn"] == 2


def test_solitaire_covering_a_card_is_refused() -> None:
    state = new_solitaire(3)
    state["pyramids"][0] = pyramid({0: [40], 3: [20]})
    state["drawn"] = 19
    assert {"type": "place", "slot": 3} not in GAME.legal_actions(state, 0)
    code = conformance.assert_illegal_leaves_state(GAME, state, 0, {"type": "place", "slot": 3})
    assert code == "illegal_action"


def test_solitaire_a_drawn_card_that_fits_no_empty_slot_is_set_aside() -> None:
    state = new_solitaire(4)
    state["pyramids"][0] = pyramid({slot: [50 - slot] for slot in range(9)})
    state["drawn"] = 49  # fits no empty slot: only slot 9 is empty
    card, nxt = state["drawn"], state["pile"][-1]
    events = play(state, 0, {"type": "discard"})
    assert events == [
        {"type": "set_aside", "seat": 0, "card": card},
        {"type": "drawn", "card": nxt, "cards_drawn": 2, "pile_size": 38},
    ]
    assert state["set_aside"] == [card]


def test_solitaire_ends_when_all_ten_slots_are_filled_score_is_cards_drawn() -> None:
    """Won only with 10 cards (``test_rules_audit.py``)."""
    state = new_solitaire(5)
    state["pyramids"][0] = [list(stack) for stack in NINE]
    state["drawn"], state["cards_drawn"] = 7, 23
    events = play(state, 0, {"type": "place", "slot": 9})
    assert events[-1] == {"type": "match_over", **GAME.outcome(state)}
    assert GAME.to_act(state) == [] and GAME.outcome(state)["score"] == 23


def test_solitaire_perfect_game_of_ten_cards_is_the_roi_pacal() -> None:
    state = new_solitaire(6)
    draws = [50, 45, 40, 35, 30, 25, 20, 15, 10, 5]
    state["drawn"] = draws[0]
    state["pile"] = [c for c in state["pile"] if c not in draws] + draws[:0:-1]
    for slot in range(10):
        play(state, 0, {"type": "place", "slot": slot})
    assert GAME.outcome(state)["score"] == 10
    assert GAME.outcome(state)["winners"] == [0] and GAME.outcome(state)["won"]


def test_solitaire_lost_when_the_pile_runs_out() -> None:
    state = new_solitaire(7)
    # Slots 0..8 show 49..41: the last card, 50, fits no empty slot.
    state["pyramids"][0] = pyramid({slot: [49 - slot] for slot in range(9)})
    state["pile"], state["drawn"], state["cards_drawn"] = [], 50, 40
    assert GAME.legal_actions(state, 0) == [{"type": "discard"}]
    events = play(state, 0, {"type": "discard"})
    assert events[-2] == {"type": "solitaire_lost", "filled": 9}
    outcome = GAME.outcome(state)
    assert outcome["winners"] == [] and outcome["won"] is False and outcome["score"] is None
    assert GAME.to_act(state) == []


# --- Options --------------------------------------------------------------


def test_options_defaults() -> None:
    assert GAME.options_schema().load({}) == {"mode": None, "manches_to_win": 3}


@pytest.mark.parametrize(("n_players", "mode"), [(1, "solitaire"), (2, "match")])
def test_mode_defaults_to_what_the_player_count_allows(n_players: int, mode: str) -> None:
    assert conformance.new_match(GAME, n_players, 0)["mode"] == mode


@pytest.mark.parametrize(
    "options",
    [
        {"mode": "duel"},
        {"manches_to_win": 0},
        {"manches_to_win": "3"},
        {"manches_to_win": 2.5},
        {"target": 3},
    ],
)
def test_invalid_options_are_refused(options: dict) -> None:
    with pytest.raises(ValidationError):
        GAME.options_schema().load(options)


@pytest.mark.parametrize(("options", "n_players"), [({"mode": "match"}, 1), (SOLITAIRE, 2)])
def test_a_player_count_that_does_not_fit_the_mode_is_refused(
    options: dict, n_players: int
) -> None:
    with pytest.raises(IllegalAction) as refused:
        conformance.new_match(GAME, n_players, 0, options)
    assert refused.value.code == "invalid_options"


def test_game_metadata() -> None:
    assert (GAME.name, GAME.title, GAME.min_players, GAME.max_players) == ("pacal", "Pacal", 1, 2)
    assert set(GAME.action_schemas) == {"offer", "choose", "place", "pass", "discard"}


@pytest.mark.parametrize(
    "action",
    [
        {"type": "offer", "cards": [1]},
        {"type": "offer", "cards": [1, 51]},
        {"type": "choose"},
        {"type": "place", "slot": 10},
        {"type": "place", "slot": True},
        {"type": "pass", "slot": 1},
    ],
)
def test_malformed_actions_are_refused_by_their_schema(action: dict) -> None:
    with pytest.raises(ValidationError):
        GAME.action_schemas[action["type"]]().load(action)


# --- Illegal actions leave the state untouched ----------------------------


def _refused(state: State, seat: int, action: dict) -> str:
    return conformance.assert_illegal_leaves_state(GAME, state, seat, action)


def test_acting_out_of_turn_is_refused() -> None:
    state = new_match(30)
    other = 1 - state["active"]
    card = state["hands"][other][:2]
    assert _refused(state, other, {"type": "offer", "cards": card}) == "not_your_turn"
    assert GAME.legal_actions(state, other) == []


@pytest.mark.parametrize(
    "cards", ["not in hand", "twice", "one", "three", "not ints", "bools", "missing"]
)
def test_illegal_offers_are_refused(cards: str) -> None:
    state = new_match(31)
    active = state["active"]
    hand = state["hands"][active]
    absent = next(c for c in range(1, 51) if c not in hand)
    action: dict = {
        "not in hand": {"type": "offer", "cards": [hand[0], absent]},
        "twice": {"type": "offer", "cards": [hand[0], hand[0]]},
        "one": {"type": "offer", "cards": [hand[0]]},
        "three": {"type": "offer", "cards": hand[:3]},
        "not ints": {"type": "offer", "cards": [str(hand[0]), hand[1]]},
        "bools": {"type": "offer", "cards": [True, hand[1]]},
        "missing": {"type": "offer"},
    }[cards]
    assert _refused(state, active, action) == "illegal_action"


def test_choosing_a_card_that_was_not_offered_is_refused() -> None:
    state = choosing(new_match(32), [10, 20])
    other = 1 - state["active"]
    assert _refused(state, other, {"type": "choose", "card": 30}) == "illegal_action"
    assert _refused(state, other, {"type": "choose"}) == "illegal_action"
    assert _refused(state, state["active"], {"type": "choose", "card": 10}) == "not_your_turn"


@pytest.mark.parametrize("slot", [1, 10, -1, None, True, "0"])
def test_placing_on_an_illegal_slot_is_refused(slot: Any) -> None:
    state = placing(new_match(33), [30, 20])
    state["pyramids"][0] = pyramid({0: [40], 1: [36, 35]})
    assert _refused(state, 0, {"type": "place", "slot": slot}) == "illegal_action"


def test_placing_twice_in_one_offer_is_refused() -> None:
    state = placing(new_match(34), [30, 20])
    play(state, 0, {"type": "place", "slot": 0})
    assert _refused(state, 0, {"type": "place", "slot": 1}) == "not_your_turn"


@pytest.mark.parametrize(
    ("phase", "action"),
    [
        ("offer", {"type": "pass"}),
        ("offer", {"type": "place", "slot": 0}),
        ("offer", {"type": "discard"}),
        ("offer", {"type": "choose", "card": 1}),
        ("place", {"type": "pass"}),
        ("place", {"type": "offer", "cards": [1, 2]}),
        ("last_card", {"type": "discard"}),
        ("last_card", {"type": "offer", "cards": [1, 2]}),
        ("offer", {"type": "dance"}),
    ],
)
def test_an_action_of_another_phase_is_refused(phase: str, action: dict) -> None:
    state = new_match(35)
    if phase == "place":
        placing(state, [30, 20])
    elif phase == "last_card":
        last_cards(state, [30, 20])
    assert _refused(state, state["active"], action) == "illegal_action"


def test_solitaire_refuses_match_actions() -> None:
    state = new_solitaire(36)
    for action in ({"type": "pass"}, {"type": "offer", "cards": [1, 2]}):
        assert _refused(state, 0, action) == "illegal_action"
    assert _refused(state, 1, {"type": "discard"}) == "not_your_turn"


def test_acting_after_the_match_is_over_is_refused() -> None:
    state = new_match(37, manches_to_win=1)
    _win_a_manche(state, 0)
    assert _refused(state, 0, {"type": "offer", "cards": [1, 2]}) == "illegal_action"
    assert GAME.legal_actions(state, 0) == [] and GAME.legal_actions(state, 1) == []
    solitaire = new_solitaire(38)
    solitaire["pyramids"][0] = pyramid({slot: [49 - slot] for slot in range(9)})
    solitaire["pile"], solitaire["drawn"] = [], 50
    play(solitaire, 0, {"type": "discard"})
    assert _refused(solitaire, 0, {"type": "discard"}) == "illegal_action"
