"""Ducale: one test per rule of RULES.md §4, the rulebook's count, illegal moves."""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

import pytest

from engines.ducale import GAME, melds, rules
from engines.ducale.melds import JOKER, build_meld
from tests.engines import conformance


def new_state(n_players: int = 2, seed: int = 1, **options: Any) -> dict:
    return conformance.new_match(GAME, n_players, seed, options)


def table_meld(meld_id: int, owner: int, cards: str, joker_as: str | None = None) -> dict:
    return {"id": meld_id, "owner": owner, **build_meld(cards.split(), joker_as)}


def arranged(
    hands: list[str],
    *,
    phase: str = "play",
    turn: int = 0,
    table: list[dict] | None = None,
    discard: str = "2C",
    stock: str = "3C 4C 5C",
    laid_down: list[bool] | None = None,
    **options: Any,
) -> dict:
    """A state with the given hands (space-separated cards), table and piles."""
    state = new_state(len(hands), **options)
    state["hands"] = [hand.split() for hand in hands]
    state["table"] = table or []
    state["next_meld_id"] = 1 + max((meld["id"] for meld in state["table"]), default=-1)
    state["discard"] = discard.split()
    state["stock"] = stock.split()
    state["phase"] = phase
    state["turn"] = turn
    state["laid_down"] = laid_down or [False] * len(hands)
    return state


def refused(state: dict, action: dict, seat: int = 0) -> str:
    return conformance.assert_illegal_leaves_state(GAME, state, seat, action)


def play(state: dict, action: dict, seat: int = 0) -> list[dict]:
    return GAME.apply(state, seat, action)


def types(events: list[dict]) -> list[str]:
    return [event["type"] for event in events]


def all_cards(state: dict) -> Counter:
    cards = Counter(state["stock"]) + Counter(state["discard"])
    for hand in state["hands"]:
        cards += Counter(hand)
    for meld in state["table"]:
        cards += Counter(melds.meld_cards(meld))
    return cards


# -- material and setup --------------------------------------------------------


def test_material_two_54_card_decks_with_identical_twins() -> None:
    """ "Two 54-card decks: 2 x 52 cards + 4 jokers = 108." """
    cards = all_cards(new_state(4))
    assert sum(cards.values()) == 108
    assert cards[JOKER] == 4
    assert all(cards[card] == 2 for card in melds.REAL_CARDS)


@pytest.mark.parametrize("n_players", range(2, 7))
def test_setup_deals_13_each_then_stock_and_one_face_up_discard(n_players: int) -> None:
    state = new_state(n_players)
    assert [len(hand) for hand in state["hands"]] == [13] * n_players
    assert len(state["discard"]) == 1
    assert len(state["stock"]) == 108 - 13 * n_players - 1
    assert state["phase"] == "draw" and state["round"] == 1


def test_first_player_is_seat_0_and_moves_clockwise_each_round() -> None:
    state = new_state(3)
    assert GAME.to_act(state) == [0]
    firsts = []
    for _ in range(4):
        firsts.append(state["first_player"])
        assert GAME.to_act(state) == [state["first_player"]]
        rules._end_round(state, None)
    assert firsts == [0, 1, 2, 0]


def test_players_and_options_are_checked() -> None:
    with pytest.raises(ValueError):
        rules.setup({}, 7, 1)
    assert GAME.options_schema().load({}) == {
        "target_score": 500,
        "opening_minimum": 0,
        "max_stock_rebuilds": None,
    }
    errors = GAME.options_schema().validate({"opening_minimum": 30, "target_score": 0, "x": 1})
    assert set(errors) == {"opening_minimum", "target_score", "x"}


# -- a turn: draw ----------------------------------------------------------------


def test_draw_takes_the_top_card_of_the_stock() -> None:
    state = arranged(["5S 6S", "7S 8S"], phase="draw", stock="3C 4C 9D")
    events = play(state, {"type": "draw"})
    assert state["hands"][0] == ["5S", "6S", "9D"] and state["stock"] == ["3C", "4C"]
    assert state["phase"] == "play"
    public = [event for event in events if "to" not in event]
    assert public == [{"type": "drew", "seat": 0, "stock_size": 2}]
    assert {"type": "card_drawn", "seat": 0, "card": "9D", "to": [0]} in events


def test_the_discard_taken_goes_to_the_table_in_the_same_action() -> None:
    """ "A card taken from the discard pile must go to the table ...; taking it and
    putting it on the table are one action." """
    state = arranged(["7S 7H 7D 9C", "2D 3D"], phase="draw", discard="KC 7C")
    code = refused(state, {"type": "take_discard", "melds": [{"cards": ["7S", "7H", "7D"]}]})
    assert code == "illegal_action"
    assert refused(state, {"type": "take_discard"}) == "illegal_action"
    action = {"type": "take_discard", "melds": [{"cards": ["7S", "7H", "7C"]}]}
    assert action in GAME.legal_actions(state, 0)
    events = play(state, action)
    assert types(events) == ["took_discard", "melded"]
    assert state["discard"] == ["KC"] and state["hands"][0] == ["7D", "9C"]
    assert melds.meld_cards(state["table"][0]) == ["7S", "7H", "7C"]
    assert state["phase"] == "play" and state["laid_down"][0]


def test_the_discard_taken_may_be_laid_off() -> None:
    table = [table_meld(0, 1, "4H 5H 6H")]
    state = arranged(
        ["7H 9C 2S", "2D 3D"], phase="draw", discard="8H", table=table, laid_down=[True, True]
    )
    actions = GAME.legal_actions(state, 0)
    joined = {"type": "take_discard", "lay_off": {"meld": 0, "cards": ["7H", "8H"]}}
    assert joined in actions
    assert {"type": "take_discard", "lay_off": {"meld": 0, "cards": ["8H"]}} not in actions
    play(state, joined)
    assert melds.meld_cards(state["table"][0]) == ["4H", "5H", "6H", "7H", "8H"]
    assert state["table"][0]["owner"] == 1 and state["hands"][0] == ["9C", "2S"]


def test_the_discard_may_join_a_run_through_a_joker() -> None:
    table = [table_meld(0, 1, "4H 5H 6H"), table_meld(1, 1, "2S 3S 4S")]
    state = arranged(
        ["JOKER 7H 9C", "2D"], phase="draw", discard="8H", table=table, laid_down=[True, True]
    )
    lay_offs = [a["lay_off"] for a in GAME.legal_actions(state, 0) if "lay_off" in a]
    assert lay_offs == [
        {"meld": 0, "cards": ["7H", "8H"]},
        {"meld": 0, "cards": [JOKER, "8H"], "joker_as": "7H"},
        {"meld": 0, "cards": ["7H", "8H", JOKER], "joker_as": "9H"},
        {"meld": 0, "cards": [JOKER, "7H", "8H"], "joker_as": "3H"},
    ]
    play(state, {"type": "take_discard", "lay_off": lay_offs[1]})
    assert state["table"][0]["cards"][-2:] == [{"card": JOKER, "as": "7H"}, {"card": "8H"}]
    assert sorted(state["hands"][0]) == ["7H", "9C"]


def test_a_discarded_ace_may_join_either_end_of_a_run() -> None:
    table = [table_meld(0, 1, "3C 4C 5C"), table_meld(1, 1, "JC QC KC")]
    state = arranged(
        ["2C 9D", "2D"], phase="draw", discard="AC", table=table, laid_down=[True, True]
    )
    lay_offs = [a["lay_off"] for a in GAME.legal_actions(state, 0) if "lay_off" in a]
    assert lay_offs == [{"meld": 0, "cards": ["AC", "2C"]}, {"meld": 1, "cards": ["AC"]}]


def test_the_discard_cannot_be_laid_off_before_laying_down() -> None:
    table = [table_meld(0, 1, "4H 5H 6H")]
    state = arranged(["9C 2S", "2D 3D"], phase="draw", discard="7H", table=table)
    action = {"type": "take_discard", "lay_off": {"meld": 0, "cards": ["7H"]}}
    assert action not in GAME.legal_actions(state, 0)
    assert refused(state, action) == "illegal_action"


def test_draw_once_per_turn() -> None:
    state = arranged(["5S 6S", "7S 8S"], phase="play")
    assert refused(state, {"type": "draw"}) == "illegal_action"
    state = arranged(["5S 6S", "7S 8S"], phase="draw")
    assert refused(state, {"type": "discard", "card": "5S"}) == "illegal_action"
    assert GAME.legal_actions(state, 0)[0] == {"type": "draw"}


# -- a turn: meld, lay off, swap -------------------------------------------------


def test_melds_have_no_minimum_by_default() -> None:
    state = arranged(["AS 2S 3S 9D", "7S 8S"])
    action = {"type": "meld", "melds": [{"cards": ["AS", "2S", "3S"]}]}
    assert action in GAME.legal_actions(state, 0)
    events = play(state, action)
    assert events == [
        {
            "type": "melded",
            "seat": 0,
            "melds": [
                {
                    "id": 0,
                    "owner": 0,
                    "kind": "run",
                    "cards": [{"card": "AS"}, {"card": "2S"}, {"card": "3S"}],
                }
            ],
        }
    ]
    assert state["laid_down"] == [True, False]


def test_several_melds_in_one_action_get_ids_in_order() -> None:
    state = arranged(["AS 2S 3S 9D 9H 9C KD", "7S 8S"], table=[table_meld(4, 1, "QC KC AC")])
    play(
        state,
        {"type": "meld", "melds": [{"cards": ["9D", "9H", "9C"]}, {"cards": ["3S", "AS", "2S"]}]},
    )
    assert [meld["id"] for meld in state["table"]] == [4, 5, 6]
    assert [meld["kind"] for meld in state["table"][1:]] == ["set", "run"]
    assert state["hands"][0] == ["KD"]


def test_melds_cannot_share_a_card() -> None:
    state = arranged(["5S 6S 7S 7H 7D", "2D"])
    action = {
        "type": "meld",
        "melds": [{"cards": ["5S", "6S", "7S"]}, {"cards": ["7S", "7H", "7D"]}],
    }
    assert refused(state, action) == "illegal_action"


def test_identical_twins_can_go_to_two_melds() -> None:
    state = arranged(["5S 6S 7S 7S 7H 7D 2C", "2D"])
    play(
        state,
        {"type": "meld", "melds": [{"cards": ["5S", "6S", "7S"]}, {"cards": ["7S", "7H", "7D"]}]},
    )
    assert state["hands"][0] == ["2C"]


def test_invalid_melds_are_refused() -> None:
    state = arranged(["KH AH 2H 7S 7H JOKER JOKER 9D", "2D"])
    for cards in (["KH", "AH", "2H"], ["7S", "7H", JOKER, JOKER], ["7S", "7H"]):
        assert refused(state, {"type": "meld", "melds": [{"cards": cards}]}) == "illegal_action"
    ambiguous = {"type": "meld", "melds": [{"cards": ["7S", "7H", JOKER]}]}
    assert refused(state, ambiguous) == "illegal_action"
    not_held = {"type": "meld", "melds": [{"cards": ["7S", "7H", "7D"]}]}
    assert refused(state, not_held) == "illegal_action"


def test_each_meaning_of_a_joker_is_a_legal_action() -> None:
    state = arranged(["7S 7H JOKER 2C", "2D"])
    melds_listed = [a["melds"] for a in GAME.legal_actions(state, 0) if a["type"] == "meld"]
    assert melds_listed == [
        [{"cards": ["7S", "7H", JOKER], "joker_as": "7D"}],
        [{"cards": ["7S", "7H", JOKER], "joker_as": "7C"}],
    ]


OPENING = dict(opening_minimum=51)


def test_opening_minimum_51_with_the_classic_count() -> None:
    """ "The melds of a player's first lay-down ... total at least 51 points,
    counting 2..10 at face value, J Q K as 10, an ace as 1 in A-2-3 and 11
    otherwise, and a joker as the card it stands for." """
    hand = "AS 2S 3S QH KH AH 8D 9D JOKER 4C"
    small = {"type": "meld", "melds": [{"cards": ["QH", "KH", "AH"]}]}  # 31
    state = arranged([hand, "2D"], **OPENING)
    assert refused(state, small) == "illegal_action"
    assert small not in GAME.legal_actions(state, 0)
    fifty = {
        "type": "meld",
        "melds": [
            {"cards": ["QH", "KH", "AH"]},
            {"cards": ["AS", "2S", "3S"]},
        ],
    }  # 31 + 6 = 37
    assert refused(state, fifty) == "illegal_action"
    opening = {
        "type": "meld",
        "melds": [
            {"cards": ["QH", "KH", "AH"]},
            {"cards": ["8D", "9D", JOKER], "joker_as": "10D"},
        ],
    }  # 31 + 27 = 58
    assert opening in GAME.legal_actions(state, 0)
    play(state, opening)
    assert state["laid_down"][0]
    play(state, {"type": "meld", "melds": [{"cards": ["AS", "2S", "3S"]}]})  # now any meld


def test_opening_counts_a_low_ace_as_one() -> None:
    """A-2-3 + 10-J-Q-K... : the same cards open or not depending on the ace."""
    hand = "AS 2S 3S 4S JD QD KD 9C 9H 5C"
    state = arranged([hand, "2D"], **OPENING)
    low = {
        "type": "meld",
        "melds": [{"cards": ["AS", "2S", "3S", "4S"]}, {"cards": ["JD", "QD", "KD"]}],
    }
    assert rules.melds.meld_value(build_meld(["AS", "2S", "3S", "4S"])) == 10
    assert refused(state, low) == "illegal_action"  # 10 + 30 = 40
    sets = {
        "type": "meld",
        "melds": [
            {"cards": ["AS", "2S", "3S", "4S"]},
            {"cards": ["JD", "QD", "KD"]},
            {"cards": ["9C", "9H", "5C"]},
        ],
    }
    assert refused(state, sets) == "illegal_action"  # 9 9 5 is no meld


def test_opening_is_listed_as_every_combination_that_reaches_51() -> None:
    state = arranged(["QH KH AH 8D 9D 10D JD 5S 5H 5D", "2D"], **OPENING)
    openings = [a["melds"] for a in GAME.legal_actions(state, 0) if a["type"] == "meld"]
    as_sets = [{tuple(m["cards"]) for m in combo} for combo in openings]
    assert {("QH", "KH", "AH"), ("8D", "9D", "10D")} in as_sets  # 31 + 27
    assert {("QH", "KH", "AH"), ("9D", "10D", "JD")} in as_sets  # 31 + 29
    assert {("QH", "KH", "AH"), ("8D", "9D", "10D", "JD")} in as_sets  # 31 + 37
    assert {("5S", "5H", "5D"), ("8D", "9D", "10D", "JD")} in as_sets  # 15 + 37
    assert {("QH", "KH", "AH"), ("5S", "5H", "5D")} not in as_sets  # 31 + 15
    assert len(openings) == 7  # and with the set of 5s each of the three with QH KH AH
    for combo in openings:
        total = sum(
            rules.melds.meld_value(build_meld(m["cards"], m.get("joker_as"))) for m in combo
        )
        assert total >= 51


def test_opening_comes_in_one_action_also_from_the_discard() -> None:
    state = arranged(["QH KH 8D 9D 10D 5C", "2D"], phase="draw", discard="AH", **OPENING)
    actions = [a for a in GAME.legal_actions(state, 0) if a["type"] == "take_discard"]
    assert actions == [
        {
            "type": "take_discard",
            "melds": [{"cards": ["QH", "KH", "AH"]}, {"cards": ["8D", "9D", "10D"]}],
        }
    ]
    only_run = {"type": "take_discard", "melds": [{"cards": ["QH", "KH", "AH"]}]}
    assert refused(state, only_run) == "illegal_action"
    play(state, actions[0])
    assert state["hands"][0] == ["5C"]


def test_lay_off_only_once_laid_down() -> None:
    table = [table_meld(0, 1, "4H 5H 6H")]
    state = arranged(["7H 9C", "2D"], table=table)
    action = {"type": "lay_off", "meld": 0, "cards": ["7H"]}
    assert action not in GAME.legal_actions(state, 0)
    assert refused(state, action) == "illegal_action"


def test_lay_off_on_any_meld_in_the_same_turn_as_melding() -> None:
    """ "once the player has laid down melds (earlier or in this turn), add cards
    from the hand to any meld on the table, theirs or another player's" """
    table = [table_meld(0, 1, "4H 5H 6H")]
    state = arranged(["7H 9C 9D 9S 2C", "2D"], table=table)
    play(state, {"type": "meld", "melds": [{"cards": ["9C", "9D", "9S"]}]})
    action = {"type": "lay_off", "meld": 0, "cards": ["7H"]}
    assert action in GAME.legal_actions(state, 0)
    events = play(state, action)
    assert events[0]["type"] == "laid_off" and events[0]["cards"] == [{"card": "7H"}]
    assert events[0]["result"]["cards"][-1] == {"card": "7H"}
    assert state["table"][0]["owner"] == 1


def test_lay_off_keeps_the_meld_valid() -> None:
    """ "a set holds at most 4 cards; a run grows at either end" """
    table = [table_meld(0, 1, "4H 5H 6H"), table_meld(1, 1, "9S 9H 9D 9C")]
    state = arranged(["3H 8H 9S 2C", "2D"], table=table, laid_down=[True, False])
    for cards in (["8H"], ["9S"], ["3H", "8H"]):
        assert (
            refused(
                state, {"type": "lay_off", "meld": 0 if cards[0] != "9S" else 1, "cards": cards}
            )
            == "illegal_action"
        )
    assert refused(state, {"type": "lay_off", "meld": 7, "cards": ["3H"]}) == "illegal_action"
    play(state, {"type": "lay_off", "meld": 0, "cards": ["3H"]})
    assert melds.meld_cards(state["table"][0]) == ["3H", "4H", "5H", "6H"]


def test_each_meaning_of_a_laid_off_joker_is_listed() -> None:
    table = [table_meld(0, 1, "4H 5H 6H"), table_meld(1, 1, "9S 9H 9D")]
    state = arranged(["JOKER 2C", "2D"], table=table, laid_down=[True, False])
    lay_offs = [a for a in GAME.legal_actions(state, 0) if a["type"] == "lay_off"]
    assert lay_offs == [
        {"type": "lay_off", "meld": 0, "cards": [JOKER], "joker_as": "7H"},
        {"type": "lay_off", "meld": 0, "cards": [JOKER], "joker_as": "3H"},
        {"type": "lay_off", "meld": 1, "cards": [JOKER], "joker_as": "9C"},
    ]


def test_at_most_one_joker_per_meld_on_lay_off() -> None:
    table = [table_meld(0, 1, "4H JOKER 6H")]
    state = arranged(["JOKER 2C", "2D"], table=table, laid_down=[True, False])
    action = {"type": "lay_off", "meld": 0, "cards": [JOKER], "joker_as": "7H"}
    assert refused(state, action) == "illegal_action"


def test_swap_a_joker_for_the_card_it_stands_for_once_laid_down() -> None:
    """ "take a joker from any meld by putting in its place the real card it stands
    for from the hand; that joker must be melded or laid off ... within the same
    action as the swap." """
    table = [table_meld(0, 1, "4H JOKER 6H"), table_meld(1, 1, "9S 9H 9D")]
    swap = {"type": "swap_joker", "meld": 0, "card": "5H"}
    action = {**swap, "lay_off": {"meld": 1, "cards": [JOKER], "joker_as": "9C"}}
    not_laid = arranged(["5H 2C", "2D"], table=table)
    assert refused(not_laid, action) == "illegal_action"
    state = arranged(["5H 2C", "2D"], table=copy.deepcopy(table), laid_down=[True, False])
    assert refused(state, {**swap, "melds": [{"cards": ["2C", "3C", "4C"]}]}) == "illegal_action"
    assert refused(state, {**swap, "card": "5S", "lay_off": action["lay_off"]}) == "illegal_action"
    assert action in GAME.legal_actions(state, 0)
    events = play(state, action)
    assert types(events) == ["joker_swapped", "laid_off"]
    assert melds.meld_cards(state["table"][0]) == ["4H", "5H", "6H"]
    assert state["table"][1]["cards"][-1] == {"card": JOKER, "as": "9C"}
    assert state["hands"][0] == ["2C"]


def test_a_recovered_joker_may_go_back_on_its_own_meld_or_a_new_meld() -> None:
    table = [table_meld(0, 1, "4H JOKER 6H")]
    state = arranged(["5H 8S 9S 2C", "2D"], table=table, laid_down=[True, False])
    actions = [a for a in GAME.legal_actions(state, 0) if a["type"] == "swap_joker"]
    back = {
        "type": "swap_joker",
        "meld": 0,
        "card": "5H",
        "lay_off": {"meld": 0, "cards": [JOKER], "joker_as": "7H"},
    }
    new = {
        "type": "swap_joker",
        "meld": 0,
        "card": "5H",
        "melds": [{"cards": ["8S", "9S", JOKER], "joker_as": "10S"}],
    }
    assert back in actions and new in actions
    play(state, back)
    assert [s["card"] for s in state["table"][0]["cards"]] == ["4H", "5H", "6H", JOKER]


def test_the_taken_discard_may_replace_a_joker_standing_for_it() -> None:
    """ "A card taken from the discard pile must go to the table (in a new meld,
    laid off, or put in place of a joker)": the issue's example. Seat 0 has laid
    down, the 7D is on top of the discard pile, a set holds a joker declared as
    the 7D: take the 7D into the joker's place and lay the joker off elsewhere."""
    table = [table_meld(0, 1, "7S 7H JOKER", "7D"), table_meld(1, 0, "4C 5C 6C")]
    state = arranged(
        ["KS 2H", "2D"], phase="draw", table=table, discard="9S 7D", laid_down=[True, True]
    )
    action = {
        "type": "take_discard",
        "swap_joker": 0,
        "lay_off": {"meld": 1, "cards": [JOKER], "joker_as": "7C"},
    }
    assert GAME.action_schemas["take_discard"]().load(action) == action
    assert action in GAME.legal_actions(state, 0)
    assert action in rules.compact_actions(state, 0)
    events = play(state, action)
    assert types(events) == ["took_discard", "joker_swapped", "laid_off"]
    assert events[1] == {"type": "joker_swapped", "seat": 0, "meld": 0, "card": "7D"}
    assert melds.meld_cards(state["table"][0]) == ["7S", "7H", "7D"]
    assert state["table"][1]["cards"][-1] == {"card": JOKER, "as": "7C"}
    assert state["hands"][0] == ["KS", "2H"] and state["discard"] == ["9S"]
    assert state["phase"] == "play"


def test_the_taken_discard_replaces_a_joker_once_laid_down_earlier_or_in_the_action() -> None:
    """ "once the player has laid down, earlier or in this action": a seat with
    no melds may take the 7D into the joker's place only if it lays down in the
    same action (the joker in its new meld, or laid off after it); the joker
    must go back to the table, and only the card it stands for replaces it."""
    table = [table_meld(0, 1, "7S 7H JOKER", "7D"), table_meld(1, 1, "4C 5C 6C")]
    hand = "8S 8D 8C 9H 10H"
    state = arranged([hand, "2D"], phase="draw", table=table, discard="7D")
    take = {"type": "take_discard", "swap_joker": 0}
    lay_off = {"meld": 1, "cards": [JOKER], "joker_as": "7C"}
    assert refused(state, {**take, "lay_off": lay_off}) == "illegal_action"
    assert refused(state, {**take, "melds": [{"cards": ["8S", "8D", "8C"]}]}) == "illegal_action"
    opening = {**take, "melds": [{"cards": ["8S", "8D", "8C"]}], "lay_off": lay_off}
    in_a_meld = {**take, "melds": [{"cards": ["9H", "10H", JOKER], "joker_as": "JH"}]}
    legal = GAME.legal_actions(state, 0)
    assert opening in legal and in_a_meld in legal
    other = arranged([hand, "2D"], phase="draw", table=copy.deepcopy(table), discard="7C")
    assert refused(other, {**take, "lay_off": lay_off}) == "illegal_action"
    events = play(state, opening)
    assert types(events) == ["took_discard", "joker_swapped", "melded", "laid_off"]
    assert state["hands"][0] == ["9H", "10H"] and state["laid_down"][0]


def test_discard_ends_the_turn() -> None:
    state = arranged(["5S 6S", "7S 8S", "9C 9D"])
    events = play(state, {"type": "discard", "card": "6S"})
    assert events == [{"type": "discarded", "seat": 0, "card": "6S"}, {"type": "turn", "seat": 1}]
    assert state["discard"][-1] == "6S" and GAME.to_act(state) == [1]
    assert state["phase"] == "draw"


def test_a_joker_may_be_discarded() -> None:
    state = arranged(["JOKER 6S", "7S 8S"])
    assert {"type": "discard", "card": JOKER} in GAME.legal_actions(state, 0)
    play(state, {"type": "discard", "card": JOKER})


# -- going out, empty stock --------------------------------------------------------


def test_going_out_by_melding_the_last_cards_ends_the_round() -> None:
    state = arranged(["5S 6S 7S", "KS 8D", "QH"], laid_down=[False, True, True])
    events = play(state, {"type": "meld", "melds": [{"cards": ["5S", "6S", "7S"]}]})
    assert types(events)[:3] == ["melded", "went_out", "round_scored"]
    assert state["history"][0]["scores"] == [0, 18, 10]
    assert state["round"] == 2


def test_going_out_by_taking_the_discard_into_a_meld() -> None:
    state = arranged(["5S 6S", "KS"], phase="draw", discard="7S", laid_down=[False, True])
    play(state, {"type": "take_discard", "melds": [{"cards": ["5S", "6S", "7S"]}]})
    assert state["history"][0]["went_out"] == 0


def test_going_out_by_discarding_the_last_card() -> None:
    state = arranged(["5S", "KS 8D"], laid_down=[True, True])
    events = play(state, {"type": "discard", "card": "5S"})
    assert types(events)[:3] == ["discarded", "went_out", "round_scored"]
    assert state["history"][0]["scores"] == [0, 18]


def test_a_rebuilt_stock_takes_the_whole_discard_pile() -> None:
    """ "the whole discard pile is shuffled to form the new stock (« on mélange la
    pile de défausse pour créer une nouvelle pioche »; the discard pile is then
    empty until the next discard)"."""
    state = arranged(["5S", "KS"], phase="draw", stock="", discard="2C 3C 4C 9H")
    events = play(state, {"type": "draw"})
    assert events[0] == {"type": "stock_rebuilt", "stock_size": 4, "rebuilds": 1}
    assert state["discard"] == []
    assert sorted([*state["stock"], state["hands"][0][-1]]) == ["2C", "3C", "4C", "9H"]
    assert GAME.view(state, None)["discard"] == []
    assert not GAME.view_schema().validate(GAME.view(state, 0))


def test_taking_the_discard_is_not_offered_while_the_pile_is_empty() -> None:
    """ "the discard pile is then empty until the next discard": after a rebuild
    the next seat may only draw, until a card is discarded."""
    state = arranged(["5S 6S", "5H 6H"], phase="draw", stock="", discard="7S 7H")
    play(state, {"type": "draw"})
    assert state["discard"] == [] and state["phase"] == "play"
    state["phase"], state["turn"] = "draw", 1  # the next seat, before any discard
    assert GAME.legal_actions(state, 1) == [{"type": "draw"}]
    action = {"type": "take_discard", "melds": [{"cards": ["5H", "6H", "7H"]}]}
    assert refused(state, action, seat=1) == "illegal_action"


def test_a_single_discard_is_enough_to_rebuild_the_stock() -> None:
    """The whole pile becomes the stock: one card left on the discard pile can
    be drawn, so the round goes on."""
    state = arranged(["5S 9D", "KS"], stock="", discard="", laid_down=[True, False])
    events = play(state, {"type": "discard", "card": "9D"})
    assert types(events) == ["discarded", "turn"]
    events = play(state, {"type": "draw"}, seat=1)
    assert events[0] == {"type": "stock_rebuilt", "stock_size": 1, "rebuilds": 1}
    assert state["hands"][1] == ["KS", "9D"] and state["discard"] == state["stock"] == []


def test_nothing_left_to_draw_ends_the_round_with_no_winner() -> None:
    """Decision: stock and discard pile both empty when a turn begins (only a
    table arranged so, since every turn but the last ends with a discard)."""
    state = arranged(["5S 9D", "KS"], stock="", discard="", laid_down=[True, False])
    events = rules._start_turn(state, 1)
    assert types(events)[:2] == ["stock_exhausted", "round_scored"]
    entry = state["history"][0]
    assert entry["went_out"] is None and entry["rami_sec"] is False
    assert entry["scores"] == [14, 100]


def test_option_max_stock_rebuilds_bounds_the_rebuilds_of_a_round() -> None:
    """Without the option there is no limit (``test_rules_audit.py``)."""

    def empty_stock(rebuilds: int) -> dict:
        state = arranged(
            ["5S 9D", "KS"],
            stock="",
            discard="2C 3C 4C",
            laid_down=[True, False],
            max_stock_rebuilds=3,
        )
        state["stock_rebuilds"] = rebuilds
        return state

    state = empty_stock(2)
    play(state, {"type": "discard", "card": "9D"})
    assert GAME.to_act(state) == [1]
    assert play(state, {"type": "draw"}, seat=1)[0]["rebuilds"] == 3
    assert GAME.view(state, None)["stock_rebuilds"] == 3
    state = empty_stock(3)
    events = play(state, {"type": "discard", "card": "9D"})
    assert types(events)[:3] == ["discarded", "stock_exhausted", "round_scored"]
    assert state["history"][0]["went_out"] is None


# -- scoring -------------------------------------------------------------------------


def test_the_player_who_went_out_scores_zero_others_their_hand() -> None:
    state = arranged(["", "AS KH 2D JOKER", "10C"], laid_down=[True, True, True])
    assert rules.round_scores(state, 0) == [0, 11 + 10 + 2 + 20, 10]


def test_a_player_who_never_laid_down_scores_100() -> None:
    state = arranged(["", "AS", "10C"], laid_down=[True, False, True])
    assert rules.round_scores(state, 0) == [0, 100, 10]


def test_rami_sec_scores_200_for_each_other_player() -> None:
    """ "if the winner goes out while no other player has laid down anything this
    round, each other player scores 200" """
    state = arranged(["5S 6S 7S", "AS", "10C"])
    play(state, {"type": "meld", "melds": [{"cards": ["5S", "6S", "7S"]}]})
    entry = state["history"][0]
    assert entry["rami_sec"] and entry["scores"] == [0, 200, 200]
    assert state["totals"] == [0, 200, 200]


def test_rulebook_count_example_30_25_31() -> None:
    """The rulebook: player 4 went out; "10 + 10 + 10 = 30", "20 + 5 = 25",
    "7 + 10 + 3 + 11 = 31"."""
    state = arranged(["10S KH QD", "JOKER 5C", "7H JD 3S AC", ""], laid_down=[True] * 4)
    assert rules.round_scores(state, 3) == [30, 25, 31, 0]


def test_cards_on_the_table_never_count() -> None:
    table = [table_meld(0, 1, "KS KH KD KC"), table_meld(1, 0, "4H JOKER 6H")]
    state = arranged(["", "5C"], table=table, laid_down=[True, True])
    assert rules.round_scores(state, 0) == [0, 5]


# -- end of the game -------------------------------------------------------------------


def test_rounds_go_on_until_a_total_reaches_the_target() -> None:
    state = arranged(["5S", "KS 8D"], laid_down=[True, True], target_score=20)
    play(state, {"type": "discard", "card": "5S"})
    assert state["totals"] == [0, 18]
    assert state["phase"] == "draw" and state["round"] == 2 and GAME.outcome(state) is None
    state["hands"] = [[JOKER], ["KS"]]
    state["phase"], state["laid_down"] = "play", [True, True]
    assert GAME.to_act(state) == [1]
    events = play(state, {"type": "discard", "card": "KS"}, seat=1)
    assert GAME.outcome(state) == {"winners": [1], "scores": [20, 18], "rounds": state["history"]}
    assert events[-1] == {"type": "match_over", **GAME.outcome(state)}
    assert GAME.to_act(state) == [] and GAME.legal_actions(state, 0) == []
    assert GAME.view(state, None)["phase"] == "over" and GAME.view(state, None)["turn"] is None


def test_lowest_total_wins_and_ties_are_shared() -> None:
    state = arranged(["5S", "5H", "KS"], laid_down=[True, True, True], target_score=10)
    play(state, {"type": "discard", "card": "5S"})
    outcome = GAME.outcome(state)
    assert outcome["winners"] == [0] and outcome["scores"] == [0, 5, 10]
    tie = arranged(["5S", "5H", "5D"], laid_down=[True, True, True], target_score=1)
    tie["totals"] = [10, 5, 5]
    play(tie, {"type": "discard", "card": "5S"})
    assert GAME.outcome(tie)["winners"] == [0, 1, 2]


# -- refusals and views -------------------------------------------------------------------


def test_not_your_turn() -> None:
    state = new_state(3)
    assert refused(state, {"type": "draw"}, seat=1) == "not_your_turn"
    assert GAME.legal_actions(state, 1) == []


def test_cards_must_come_from_the_hand() -> None:
    state = arranged(["5S 6S", "7S 8S"])
    assert refused(state, {"type": "discard", "card": "7S"}) == "illegal_action"
    assert refused(state, {"type": "discard", "card": "ZZ"}) == "illegal_action"
    assert refused(state, {"type": "meld", "melds": []}) == "illegal_action"
    assert refused(state, {"type": "meld", "melds": [{"cards": "5S"}]}) == "illegal_action"
    assert refused(state, {"type": "fly"}) == "illegal_action"


def test_views_show_only_ones_own_hand() -> None:
    state = new_state(3)
    for seat in (0, 1, 2):
        view = GAME.view(state, seat)
        assert view["hand"] == sorted(state["hands"][seat], key=rules._card_order)
        assert [p["hand_size"] for p in view["players"]] == [13, 13, 13]
        conformance.assert_view_valid(GAME, view)
    spectator = GAME.view(state, None)
    assert spectator["hand"] is None and spectator["stock_size"] == 68
    assert spectator["discard"] == state["discard"] and spectator["must_use"] is None
    conformance.assert_view_valid(GAME, spectator)


def test_views_events_and_outcome_share_nothing_with_the_state() -> None:
    state = arranged(["5S 6S 7S", "KS"], table=[table_meld(0, 1, "4H 5H 6H")], target_score=1)
    events = play(state, {"type": "meld", "melds": [{"cards": ["5S", "6S", "7S"]}]})
    before = copy.deepcopy(state)
    view, outcome = GAME.view(state, 0), GAME.outcome(state)
    for value in (view, outcome, events):
        scramble(value)
    assert state == before


def scramble(value: Any) -> None:
    """Change every list and dict inside ``value``, in place."""
    if isinstance(value, list):
        for item in value:
            scramble(item)
        value.append("scrambled")
    elif isinstance(value, dict):
        for item in value.values():
            scramble(item)
        value["scrambled"] = True
