"""The four corrections of issue 16, one test per corrected rule (RULES.md §2
and §4 as corrected after an audit against the rulebooks), and states stored
before the corrections playing on under them."""

from __future__ import annotations

import copy
import random
from typing import Any

from engines.core import State
from engines.ducale import GAME as DUCALE
from engines.ducale import bots as ducale_bots
from engines.ducale import rules as ducale_rules
from engines.ducale.melds import build_meld
from engines.pacal import GAME as PACAL
from tests.engines import conformance

# --- Pacal solitaire: a drawn card that fits must be placed ----------------


def solitaire(seed: int, slots: dict[int, list[int]], drawn: int) -> State:
    state = conformance.new_match(PACAL, 1, seed, {"mode": "solitaire"})
    state["pyramids"][0] = [list(slots.get(slot, [])) for slot in range(10)]
    state["drawn"] = drawn
    return state


def pacal_play(state: State, seat: int, action: dict) -> list[dict]:
    loaded = PACAL.action_schemas[action["type"]]().load(action)
    return PACAL.apply(state, seat, loaded)


def test_solitaire_a_drawn_card_that_fits_must_be_placed() -> None:
    """ "on tire une carte et on doit la poser sur la pyramide" """
    state = solitaire(2, {0: [40], 3: [20]}, 30)
    assert PACAL.legal_actions(state, 0) == [
        {"type": "place", "slot": 1},
        {"type": "place", "slot": 2},
    ]
    code = conformance.assert_illegal_leaves_state(PACAL, state, 0, {"type": "discard"})
    assert code == "illegal_action"


def test_solitaire_only_a_card_that_fits_no_empty_slot_is_set_aside() -> None:
    state = solitaire(4, {0: [40], 1: [39], 2: [38], 3: [20]}, 30)
    assert PACAL.legal_actions(state, 0) == [{"type": "discard"}]
    events = pacal_play(state, 0, {"type": "discard"})
    assert events[0] == {"type": "set_aside", "seat": 0, "card": 30}
    assert state["set_aside"] == [30] and state["cards_drawn"] == 2


NINE = {0: [50], 1: [45], 2: [40], 3: [35], 4: [30], 5: [25], 6: [20], 7: [15], 8: [11]}


def test_solitaire_won_only_with_a_perfect_pyramid_of_ten_cards() -> None:
    """ "il faut le faire en 10 cartes ... pour être le roi Pacal et gagner" """
    state = solitaire(6, NINE, 7)
    state["cards_drawn"] = 10
    events = pacal_play(state, 0, {"type": "place", "slot": 9})
    assert events[-2] == {"type": "solitaire_won", "score": 10}
    assert PACAL.outcome(state) == {
        "winners": [0],
        "scores": [10],
        "won": True,
        "completed": True,
        "score": 10,
        "cards_drawn": 10,
        "filled": 10,
    }
    assert not PACAL.outcome_schema().validate(PACAL.outcome(state))


def test_solitaire_a_pyramid_finished_with_more_cards_is_completed_not_won() -> None:
    state = solitaire(5, NINE, 7)
    state["cards_drawn"] = 23
    events = pacal_play(state, 0, {"type": "place", "slot": 9})
    assert events[-2] == {"type": "solitaire_completed", "score": 23}
    assert events[-1] == {"type": "match_over", **PACAL.outcome(state)}
    assert PACAL.outcome(state) == {
        "winners": [],
        "scores": [23],
        "won": False,
        "completed": True,
        "score": 23,
        "cards_drawn": 23,
        "filled": 10,
    }
    assert not PACAL.outcome_schema().validate(PACAL.outcome(state))
    assert PACAL.view(state, 0)["winners"] == []


def test_solitaire_an_unfinished_pyramid_at_the_end_of_the_pile_is_lost() -> None:
    state = solitaire(7, {0: [40], 1: [39], 2: [38], 3: [20]}, 30)
    state["pile"], state["cards_drawn"] = [], 40
    events = pacal_play(state, 0, {"type": "discard"})
    assert events[-2] == {"type": "solitaire_lost", "filled": 4}
    outcome = PACAL.outcome(state)
    assert outcome["winners"] == [] and outcome["completed"] is False
    assert outcome["won"] is False and outcome["score"] is None
    assert outcome["cards_drawn"] == 40


# --- Pacal: a stuck manche is decided once the offer is complete -----------


def stuck_offer(seed: int) -> tuple[State, int, int, int, int]:
    """A real deal where the active seat offers its lowest and highest cards,
    and the other seat, whose slot 0 shows a card below the highest (it
    covers another: nothing can go there), must choose: the highest card fits
    nowhere for it. Returns the state, the active seat, the other seat, the
    low card and the high card."""
    state = conformance.new_match(PACAL, 2, seed, {})
    active, other = state["active"], 1 - state["active"]
    hands = state["hands"]
    low, high = hands[active][0], hands[active][-1]
    below, above = hands[other][0], hands[other][1]
    assert below < high
    hands[active].remove(low)
    hands[active].remove(high)
    hands[other].remove(below)
    hands[other].remove(above)
    state["pyramids"][other][0] = [above, below]
    state["offer"] = {"seat": active, "cards": [low, high], "chosen": None}
    state["offers_made"] = 1
    state["phase"] = "choose"
    return state, active, other, low, high


def test_a_stuck_manche_is_decided_once_the_other_player_has_placed() -> None:
    state, active, other, low, high = stuck_offer(13)
    events = pacal_play(state, other, {"type": "choose", "card": high})
    assert [event["type"] for event in events] == ["chosen", "stuck"]
    assert events[1] == {"type": "stuck", "seat": other, "card": high}
    assert state["manches_won"] == [0, 0]
    assert PACAL.to_act(state) == [active]
    seen = PACAL.view(state, None)
    assert seen["phase"] == "place" and seen["players"][other]["to_place"] == high
    assert not PACAL.view_schema().validate(seen)
    assert PACAL.legal_actions(state, other) == []
    assert PACAL.legal_actions(state, active)
    for seat in (None, 0, 1):  # a bot playing through the API sees the same
        seen = PACAL.view(state, seat)
        again = PACAL.state_from_view(seen, seat, random.Random(0))
        assert PACAL.view(again, seat) == seen
        assert PACAL.to_act(again) == [active]
    events = pacal_play(state, active, {"type": "place", "slot": 9})
    assert [event["type"] for event in events][:2] == ["placed", "manche_won"]
    assert events[1]["seat"] == active and events[1]["reason"] == "stuck"
    last = state["last_manche"]
    assert last["winner"] == active and last["pyramids"][active][9] == [low]
    assert last["filled"][active] == 1
    assert state["manche"] == 2 and state["phase"] == "offer"


def test_a_stuck_manche_where_the_other_player_completes_is_won_by_them() -> None:
    state = conformance.new_match(PACAL, 2, 13, {})
    active, other = state["active"], 1 - state["active"]
    state["offer"] = {"seat": active, "cards": [7, 46], "chosen": None}
    state["phase"] = "choose"
    state["pyramids"][other] = [[45, 44], *[[] for _ in range(9)]]
    state["pyramids"][active] = [list(NINE.get(slot, [])) for slot in range(10)]
    pacal_play(state, other, {"type": "choose", "card": 46})
    events = pacal_play(state, active, {"type": "place", "slot": 9})
    won = [event for event in events if event["type"] == "manche_won"]
    assert won[0]["seat"] == active
    assert state["last_manche"]["filled"][active] == 10


# --- Ducale: take the discard, lay down and lay off, in one action ---------


def ducale_state(
    hand: str, table: list[str], discard: str, laid_down: bool = False, **options: Any
) -> State:
    state = conformance.new_match(DUCALE, 2, 1, options)
    state["hands"] = [hand.split(), ["2D", "9C", "KD"]]
    state["table"] = [
        {"id": i, "owner": 1, **build_meld(cards.split())} for i, cards in enumerate(table)
    ]
    state["next_meld_id"] = len(table)
    state["discard"] = discard.split()
    state["stock"] = ["3C", "4C", "5C"]
    state["phase"] = "draw"
    state["turn"] = 0
    state["laid_down"] = [laid_down, True]
    return state


EXAMPLE = {
    "type": "take_discard",
    "melds": [{"cards": ["8S", "8D", "8C"]}],
    "lay_off": {"meld": 0, "cards": ["7H"]},
}


def test_take_the_discard_lay_down_and_lay_off_in_one_action() -> None:
    """The rulebook example: 8S 8D 8C in hand, 4H-5H-6H on the table, the 7H
    on the discard pile: take it, lay down the eights, lay it off on the hearts."""
    state = ducale_state("8S 8D 8C KS 2C", ["4H 5H 6H"], "9S 7H")
    assert EXAMPLE in DUCALE.legal_actions(state, 0)
    assert EXAMPLE in ducale_rules.compact_actions(state, 0)
    assert DUCALE.action_schemas["take_discard"]().load(EXAMPLE) == EXAMPLE
    events = DUCALE.apply(state, 0, EXAMPLE)
    assert [event["type"] for event in events] == ["took_discard", "melded", "laid_off"]
    assert state["hands"][0] == ["KS", "2C"] and state["discard"] == ["9S"]
    assert [slot["card"] for slot in state["table"][0]["cards"]] == ["4H", "5H", "6H", "7H"]
    assert [slot["card"] for slot in state["table"][1]["cards"]] == ["8S", "8D", "8C"]
    assert state["laid_down"][0] and state["phase"] == "play"


def test_the_opening_minimum_counts_the_melds_alone() -> None:
    """With ``opening_minimum: 51`` the melds of the opening must make 51 by
    themselves; the card laid off in the same action does not count."""
    short = ducale_state("KS KD KC QS QD QC 2C", ["4H 5H 6H"], "9S 7H", opening_minimum=51)
    action = {
        "type": "take_discard",
        "melds": [{"cards": ["KS", "KD", "KC"]}],
        "lay_off": {"meld": 0, "cards": ["7H"]},
    }
    assert conformance.assert_illegal_leaves_state(DUCALE, short, 0, action) == "illegal_action"
    assert action not in DUCALE.legal_actions(short, 0)
    opening = {
        **action,
        "melds": [{"cards": ["QS", "QD", "QC"]}, {"cards": ["KS", "KD", "KC"]}],
    }
    assert opening in DUCALE.legal_actions(short, 0)
    assert opening in ducale_rules.compact_actions(short, 0)
    DUCALE.apply(short, 0, opening)
    assert short["hands"][0] == ["2C"] and short["laid_down"][0]


def test_the_bots_consider_taking_the_discard_to_lay_down_and_lay_off() -> None:
    state = ducale_state("8S 8D 8C KS QD 2C", ["4H 5H 6H"], "9S 7H")
    searched = ducale_bots.search_actions(state, 0)
    assert any(action.get("melds") and action.get("lay_off") for action in searched)
    assert EXAMPLE in ducale_bots.ranked_moves(state, 0)
    assert ducale_bots.rollout_action(state, 0, random.Random(0)) == EXAMPLE


# --- Ducale: the stock is rebuilt as often as needed -----------------------


def blocked(**options: Any) -> State:
    state = conformance.new_match(DUCALE, 2, 1, options)
    state["hands"] = [["5S", "9D"], ["KS"]]
    state["table"] = []
    state["discard"] = ["2C", "3C", "4C"]
    state["stock"] = []
    state["phase"] = "play"
    state["turn"] = 0
    state["laid_down"] = [True, False]
    state["stock_rebuilds"] = 3
    return state


def test_the_stock_is_rebuilt_as_often_as_needed() -> None:
    """ "on mélange la pile de défausse pour créer une nouvelle pioche": no limit."""
    state = blocked()
    DUCALE.apply(state, 0, {"type": "discard", "card": "9D"})
    assert DUCALE.to_act(state) == [1]
    events = DUCALE.apply(state, 1, {"type": "draw"})
    assert events[0] == {"type": "stock_rebuilt", "stock_size": 4, "rebuilds": 4}
    seen = DUCALE.view(state, None)
    assert seen["stock_rebuilds"] == 4 and seen["options"]["max_stock_rebuilds"] is None
    assert not DUCALE.view_schema().validate(seen)


def test_option_max_stock_rebuilds_ends_the_round_at_the_bound() -> None:
    options = DUCALE.options_schema().load({"max_stock_rebuilds": 3})
    assert options["max_stock_rebuilds"] == 3
    assert DUCALE.options_schema().load({})["max_stock_rebuilds"] is None
    state = blocked(max_stock_rebuilds=3)
    events = DUCALE.apply(state, 0, {"type": "discard", "card": "9D"})
    assert [event["type"] for event in events][:3] == [
        "discarded",
        "stock_exhausted",
        "round_scored",
    ]
    state = blocked(max_stock_rebuilds=5)
    DUCALE.apply(state, 0, {"type": "discard", "card": "9D"})
    assert DUCALE.apply(state, 1, {"type": "draw"})[0]["rebuilds"] == 4


def test_the_arena_bounds_the_stock_rebuilds_of_its_matches() -> None:
    from engines.ai import arena

    assert arena.match_options(DUCALE, {})["max_stock_rebuilds"] == 3
    assert arena.match_options(DUCALE, {"max_stock_rebuilds": 7})["max_stock_rebuilds"] == 7
    assert arena.match_options(PACAL, {}) == PACAL.options_schema().load({})


# --- States stored before the corrections ----------------------------------


def test_a_ducale_state_stored_before_the_corrections_plays_on() -> None:
    """Stored states have no ``max_stock_rebuilds`` in their options: no limit."""
    state = blocked()
    del state["options"]["max_stock_rebuilds"]
    DUCALE.apply(state, 0, {"type": "discard", "card": "9D"})
    assert DUCALE.apply(state, 1, {"type": "draw"})[0]["rebuilds"] == 4
    stored = conformance.new_match(DUCALE, 3, 2, {"target_score": 100})
    del stored["options"]["max_stock_rebuilds"]
    old = copy.deepcopy(stored)
    for seat in (None, 0, 1, 2):
        seen = DUCALE.view(stored, seat)
        assert seen["options"]["max_stock_rebuilds"] is None
        assert not DUCALE.view_schema().validate(seen)
        again = DUCALE.state_from_view(seen, seat, random.Random(0))
        assert DUCALE.view(again, seat) == seen
    assert stored == old, "reading an old state leaves it as it was"
    rng = random.Random(2)
    for _ in range(20_000):
        if not (seats := DUCALE.to_act(stored)):
            break
        DUCALE.apply(stored, seats[0], rng.choice(DUCALE.legal_actions(stored, seats[0])))
    assert not DUCALE.outcome_schema().validate(DUCALE.outcome(stored))


def test_a_pacal_solitaire_stored_before_the_corrections_plays_on() -> None:
    """A solitaire's stored shape is unchanged; the corrected rules read it."""
    state = solitaire(2, {0: [40], 3: [20]}, 30)
    assert {"type": "discard"} not in PACAL.legal_actions(state, 0)
    while PACAL.to_act(state):
        PACAL.apply(state, 0, PACAL.legal_actions(state, 0)[0])
    outcome = PACAL.outcome(state)
    assert not PACAL.outcome_schema().validate(outcome)
    assert outcome["winners"] == ([0] if outcome["cards_drawn"] == 10 else [])
