"""``state_from_view`` for Ducale: a bot that plays through the API rebuilds a
whole state from its seat's view alone. At random points of random matches,
for every seat and a spectator, after a JSON round trip of the view (as the
client receives it): the rebuilt state gives back the same view and the same
legal actions, holds the 108 cards, plays on to the end, and the bots can
search from it."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.ai import choose_action
from engines.core import Seat, State
from engines.ducale import GAME, melds
from engines.ducale.melds import JOKER
from tests.engines import conformance
from tests.engines.rebuilding import (
    assert_same_legal_actions,
    assert_same_view,
    rebuilt,
    seats,
    wire_view,
)

FULL_DECK = Counter({**{card: 2 for card in melds.REAL_CARDS}, JOKER: 4})

# --- Random reachable states ----------------------------------------------


def eager_action(state: State, seat: Seat, rng: random.Random) -> dict[str, Any]:
    """Random, but mostly melds, lays off and swaps when it can, so that tables
    fill, rounds end and later rounds are reached within few steps."""
    actions = GAME.legal_actions(state, seat)
    placing = [a for a in actions if a["type"] not in ("draw", "discard")]
    if placing and rng.random() < 0.8:
        return rng.choice(placing)
    return rng.choice(actions)


def play(state: State, steps: int, rng: random.Random) -> State:
    """Up to ``steps`` actions (fewer if the match ends)."""
    for _ in range(steps):
        seats = GAME.to_act(state)
        if not seats:
            break
        GAME.apply(state, seats[0], eager_action(state, seats[0], rng))
    return state


def ducale_state(seed: int, n: int, options: dict[str, Any], steps: int) -> State:
    rng = random.Random(seed)
    return play(conformance.new_match(GAME, n, seed, options), steps, rng)


STATES = st.builds(
    ducale_state,
    st.integers(0, 2**32),
    st.integers(2, 6),
    st.fixed_dictionaries(
        {
            "target_score": st.sampled_from([1, 150, 500]),
            "opening_minimum": st.sampled_from([0, 51]),
        }
    ),
    st.integers(0, 150),
)


def all_cards(state: State) -> Counter[str]:
    cards = [*state["stock"], *state["discard"]]
    cards += [card for hand in state["hands"] for card in hand]
    cards += [card for meld in state["table"] for card in melds.meld_cards(meld)]
    return Counter(cards)


# --- Properties -----------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(STATES, st.integers(0, 2**32))
def test_the_rebuilt_state_gives_back_the_same_view(state, seed) -> None:
    assert_same_view(GAME, state, state["n_players"], random.Random(seed))


@settings(max_examples=40, deadline=None)
@given(STATES, st.integers(0, 2**32))
def test_the_rebuilt_state_gives_the_same_legal_actions(state, seed) -> None:
    assert_same_legal_actions(GAME, state, state["n_players"], random.Random(seed))


@settings(max_examples=20, deadline=None)
@given(STATES, st.integers(0, 2**32))
def test_the_rebuilt_state_holds_the_whole_deck_and_plays_on(state, seed) -> None:
    rng = random.Random(seed)
    for seat in seats(state["n_players"]):
        again = rebuilt(GAME, state, seat, rng)
        assert all_cards(again) == FULL_DECK, "the 108 cards are conserved"
        assert sorted(again) == sorted(state), "the shape setup makes"
        assert again["table"] == state["table"], "melds as the state keeps them"
        assert again["next_meld_id"] == state["next_meld_id"]
        play(again, 30, rng)


# --- Worked cases ----------------------------------------------------------


def test_the_hidden_cards_are_sampled_from_the_rng() -> None:
    state = ducale_state(5, 3, {}, 20)
    seen = wire_view(GAME, state, 0)
    first = GAME.state_from_view(seen, 0, random.Random(1))
    assert GAME.state_from_view(seen, 0, random.Random(1)) == first, "a function of the rng"
    others = [GAME.state_from_view(seen, 0, random.Random(k)) for k in range(2, 6)]
    assert any(other["hands"][1] != first["hands"][1] for other in others), "hands resampled"
    assert len({other["rng"] for other in others}) == len(others), "a fresh seed each time"


def test_the_seats_own_hand_is_kept_and_the_others_resampled() -> None:
    state = ducale_state(11, 3, {}, 25)
    again = GAME.state_from_view(wire_view(GAME, state, 1), 1, random.Random(4))
    assert sorted(again["hands"][1]) == sorted(state["hands"][1])
    assert [len(hand) for hand in again["hands"]] == [len(hand) for hand in state["hands"]]
    assert len(again["stock"]) == len(state["stock"])


def test_a_run_keeps_its_place_on_the_ladder() -> None:
    """The view shows a run's cards, not its ``start``: an ace first is low."""
    state = conformance.new_match(GAME, 2, 1, {})
    low = melds.build_meld(["AH", "2H", "3H"])
    high = melds.build_meld(["QS", "KS", "AS"])
    for card in melds.meld_cards(low) + melds.meld_cards(high):
        next(cards for cards in [state["stock"], *state["hands"]] if card in cards).remove(card)
    state["table"] = [{"id": 0, "owner": 0, **low}, {"id": 1, "owner": 1, **high}]
    state["next_meld_id"] = 2
    again = rebuilt(GAME, state, 1, random.Random(0))
    assert again["table"] == state["table"]
    assert [meld["start"] for meld in again["table"]] == [1, 12]


def test_a_view_that_shows_too_many_cards_is_refused() -> None:
    seen = wire_view(GAME, ducale_state(2, 2, {}, 10), 0)
    seen["players"][1]["hand_size"] += 1
    with pytest.raises(ValueError):
        GAME.state_from_view(seen, 0, random.Random(0))
    seen = wire_view(GAME, ducale_state(2, 2, {}, 10), 0)
    seen["discard"] += [JOKER] * 5
    with pytest.raises(ValueError):
        GAME.state_from_view(seen, 0, random.Random(0))


@pytest.mark.parametrize(("n", "steps"), [(2, 0), (2, 9), (3, 21)], ids=["draw", "play", "later"])
def test_mcts_searches_the_rebuilt_state_and_plays_a_legal_action(n: int, steps: int) -> None:
    state = ducale_state(9, n, {"target_score": 1}, steps)
    rng = random.Random(9)
    seat = GAME.to_act(state)[0]
    again = rebuilt(GAME, state, seat, rng)
    action = choose_action(GAME, again, seat, "mcts", rng, budget_s=5.0, iterations=30)
    assert action in GAME.legal_actions(state, seat)
