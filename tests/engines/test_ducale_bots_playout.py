"""Ducale's search: whole-round playouts, the candidates, greedy's listing.

``simulate_round`` skips the engine's checks for speed, so these tests check
what the engine would have: every card is still somewhere, every meld on the
table is valid and belongs to a seat that has laid down, a seat that never
laid down still holds its thirteen cards, and the round ends only as the
rules end it. The quick looks that spare the search a listing must never
miss a move, and greedy must choose among the compact listing.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.ai import mcts
from engines.ducale import GAME, bots, melds, rules
from tests.engines.test_ducale_bots import (
    FULL_DECK,
    all_cards,
    arranged,
    random_states,
    table_meld,
)


def assert_round_played_by_the_rules(before: dict, after: dict, went_out: int | None) -> None:
    assert all_cards(after) == all_cards(before) == FULL_DECK
    ids = [meld["id"] for meld in after["table"]]
    assert len(set(ids)) == len(ids)
    for meld in after["table"]:
        melds.validate_meld({key: meld[key] for key in ("kind", "cards", "start") if key in meld})
        assert after["laid_down"][meld["owner"]]
    for seat, hand in enumerate(after["hands"]):
        assert after["laid_down"][seat] or not before["laid_down"][seat]
        if not after["laid_down"][seat]:
            assert len(hand) == rules.HAND_SIZE
    if went_out is None:
        assert not after["stock"]
        bound = bots.playout_bound(before)
        assert not after["discard"] or after["stock_rebuilds"] == bound
        assert all(after["hands"])
    else:
        assert after["hands"][went_out] == []
        assert all(hand for seat, hand in enumerate(after["hands"]) if seat != went_out)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), n_players=st.integers(2, 4), steps=st.integers(0, 60))
def test_simulated_rounds_keep_the_rules(seed: int, n_players: int, steps: int) -> None:
    state = random_states(seed, n_players, steps)
    if GAME.outcome(state) is not None:
        return
    seat = GAME.to_act(state)[0]
    world = GAME.determinize(state, seat, random.Random(seed))
    before = mcts.clone(world)
    went_out = bots.simulate_round(world, random.Random(seed))
    assert_round_played_by_the_rules(before, world, went_out)


def test_a_seat_goes_out_by_melding_its_last_cards() -> None:
    state = arranged(["7S 7H 7D", "2S 3S 4S 9D KC"])
    before = mcts.clone(state)
    assert bots.simulate_round(state, random.Random(0)) == 0, "no discard needed"
    assert state["table"][0]["cards"] == [{"card": c} for c in ("7S", "7H", "7D")]
    assert state["hands"] == [[], before["hands"][1]] and state["laid_down"] == [True, False]


def test_the_discard_is_taken_into_a_meld_and_laid_off() -> None:
    state = arranged(["7S 7H 2C 9D", "2S 3S 4S 5S"], phase="draw", discard=["3D", "7C"])
    state["hands"][1] = ["QH", "KH", "5C", "JS"]
    bots.simulate_round(state, random.Random(0))
    assert {"card": "7C"} in state["table"][0]["cards"]
    assert state["table"][0]["owner"] == 0
    laid_off = arranged(
        ["5D 9C KS", "2S 3S 4S 5S"],
        [table_meld(0, 1, "6D 7D 8D")],
        phase="draw",
        discard=["2H", "9D"],
        laid_down=[True, True],
    )
    bots.simulate_round(laid_off, random.Random(0))
    assert "9D" in melds.meld_cards(laid_off["table"][0])


def test_a_stock_that_runs_out_again_ends_the_round_without_a_winner() -> None:
    state = arranged(
        ["2S 10C KH", "3C 10H QS"],
        [table_meld(0, 0, "6D 7D 8D")],
        stock=[],
        discard=["5C"],
        laid_down=[True, True],
        stock_rebuilds=3,
    )
    state["options"]["max_stock_rebuilds"] = 3
    assert bots.simulate_round(state, random.Random(0)) is None
    assert [len(hand) for hand in state["hands"]] == [2, 3]


def test_a_playout_at_a_blocked_table_ends_after_a_few_more_rebuilds() -> None:
    """The rulebook sets no limit, so a playout sets its own: a blocked table
    (every meld a full set, no meld in any hand) would go on forever."""
    full = ["6S 6H 6D 6C", "8S 8H 8D 8C", "5S 5H 5D 5C", "2S 2H 2D 2C"]
    state = arranged(
        ["3H 9S", "KS"],
        [table_meld(i, i % 2, cards) for i, cards in enumerate(full)],
        stock=["9C"],
        discard=["4D", "JC", "QH"],
        laid_down=[True, True],
        stock_rebuilds=5,
    )
    assert state["options"]["max_stock_rebuilds"] is None
    assert bots.playout_bound(state) == 5 + bots.PLAYOUT_STOCK_REBUILDS
    assert bots.simulate_round(state, random.Random(0)) is None
    assert state["stock_rebuilds"] == 5 + bots.PLAYOUT_STOCK_REBUILDS


def test_an_empty_stock_is_rebuilt_from_the_discard_pile() -> None:
    state = arranged(
        ["2S 9D KH", "3C 10H QS"],
        [table_meld(0, 0, "6D 7D 8D")],
        stock=[],
        discard=["5C", "JH", "4S"],
        laid_down=[True, True],
    )
    bots.simulate_round(state, random.Random(0))
    assert state["stock_rebuilds"] >= 1


@settings(max_examples=200, deadline=None)
@given(
    hand=st.lists(st.sampled_from(melds.CARDS), min_size=1, max_size=14),
    laid_on=st.sampled_from([[], ["2S 3S 4S"], ["9H 9D 9C", "JD QD KD"]]),
    seed=st.integers(0, 100),
)
def test_the_simulated_discard_is_the_least_worth_keeping(
    hand: list[str], laid_on: list[str], seed: int
) -> None:
    table = [table_meld(i, 1, cards) for i, cards in enumerate(laid_on)]
    fits = bots.table_fits(table)
    counts = Counter(hand)
    card = bots._sim_discard(hand, dict.fromkeys(fits, 0), random.Random(seed))
    scores = {c: bots._discard_key(c, counts, fits) for c in counts}
    assert scores[card] == pytest.approx(min(scores.values()))


@pytest.mark.parametrize("target_score", [1, 500])
def test_playouts_value_each_seat_by_its_chance_of_winning(target_score: int) -> None:
    state = random_states(21, 2, 9, {"target_score": target_score})
    start = GAME.determinize(state, GAME.to_act(state)[0], random.Random(0))
    values = bots.playout(start, mcts.clone(start), random.Random(1))
    assert sum(values) == pytest.approx(1.0)
    if target_score == 1:
        assert sorted(values) in ([0.0, 1.0], [0.5, 0.5])
    else:
        assert all(0.0 < value < 1.0 for value in values)


def test_playouts_under_an_opening_minimum_open_by_the_engine() -> None:
    state = random_states(22, 2, 3, {"opening_minimum": 51})
    start = GAME.determinize(state, GAME.to_act(state)[0], random.Random(0))
    world = mcts.clone(start)
    values = bots.playout(start, world, random.Random(1))
    assert sum(values) == pytest.approx(1.0)
    assert all(world["laid_down"]) or world["round"] != start["round"] or not all(world["hands"])


def test_a_joker_is_taken_back_into_a_new_meld() -> None:
    state = arranged(
        ["9H 4C 5C KD", "2S 3S 4S 5S"],
        [table_meld(0, 1, "7H 8H JOKER", "9H")],
        laid_down=[True, True],
    )
    bots.simulate_round(state, random.Random(0))
    assert state["table"][0]["cards"][-1] == {"card": "9H"}
    assert {"card": "JOKER", "as": "3C"} in state["table"][1]["cards"]
    assert state["hands"][0] == []


# -- the search's candidates ------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), steps=st.integers(0, 60))
def test_the_quick_looks_miss_no_move(seed: int, steps: int) -> None:
    """Where ``_may_take`` or ``_may_place`` says no, the listing agrees."""
    state = random_states(seed, 2, steps)
    for seat in GAME.to_act(state):
        actions = rules.compact_actions(state, seat)
        if state["phase"] == "draw" and not bots._may_take(state, seat):
            assert actions == [{"type": "draw"}]
        if state["phase"] == "play" and not bots._may_place(state, seat):
            assert all(action["type"] == "discard" for action in actions)


def test_ranked_moves_put_the_joker_where_it_helps_most() -> None:
    state = arranged(["JD KD 7S 7D AC 2C JOKER 4H 9S", "2S 3S 4S 5S"])
    ranked = bots.ranked_moves(state, 0)
    assert all(action in rules.compact_actions(state, 0) for action in ranked)
    values = []
    for action in ranked:
        after = mcts.clone(state)
        GAME.apply(after, 0, action)
        values.append(bots.search_value(after, 0))
    assert values == sorted(values, reverse=True)
    assert bots.search_actions(state, 0) == ranked[: bots.SEARCH_PLACINGS]


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    steps=st.integers(0, 50),
    opening_minimum=st.sampled_from([0, 51]),
)
def test_greedy_chooses_among_the_compact_actions(
    seed: int, steps: int, opening_minimum: int
) -> None:
    """Greedy tries the compact listing (the same positions, far fewer moves)."""
    state = random_states(seed, 2, steps, {"opening_minimum": opening_minimum})
    for seat in GAME.to_act(state):
        action = bots.greedy(state, seat, random.Random(seed))
        assert action in rules.compact_actions(state, seat)
        assert action in GAME.legal_actions(state, seat)
