"""``state_from_view`` for Dékal and Pacal: a bot that plays through the API
rebuilds a whole state from its seat's view alone. At random points of
random games, for every seat and a spectator, after a JSON round trip of
the view (as the client receives it): the rebuilt state gives back the same
view and the same legal actions, holds the whole deck, plays on to the end,
and the bots can search from it."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.ai import choose_action
from engines.core import Game, Seat, State
from engines.dekal import GAME as DEKAL
from engines.pacal import GAME as PACAL
from engines.pacal.rules import fitting_slots
from tests.engines.rebuilding import (
    assert_same_legal_actions,
    assert_same_view,
    rebuilt,
    seats,
    wire_view,
)

# --- Random reachable states ----------------------------------------------

DEKAL_OPTIONS = st.fixed_dictionaries(
    {
        "target_score": st.sampled_from([None, 25, 60]),
        "first_player": st.sampled_from(["lowest_card", "random", 1]),
    }
)


def pacal_action(state: State, seat: Seat, rng: random.Random) -> dict[str, Any]:
    """A random legal action that mostly avoids getting stuck, so that
    completed pyramids, the last card and later manches are reached too."""
    actions = PACAL.legal_actions(state, seat)
    if actions[0]["type"] == "choose":
        pyramid = state["pyramids"][seat]
        return rng.choice([a for a in actions if fitting_slots(pyramid, a["card"])] or actions)
    places = [a for a in actions if a["type"] == "place"]
    if not places or rng.random() < 0.1:
        return rng.choice(actions)
    if state["mode"] == "solitaire":
        card = state["drawn"]
    else:
        card = state["to_place"][seat] or state["hands"][seat][0]
    return min(places, key=lambda a: (abs(card - (48 - 5 * a["slot"])), rng.random()))


def play(game: Game, state: State, steps: int, rng: random.Random) -> State:
    """Up to ``steps`` random legal actions (fewer if the match ends)."""
    for _ in range(steps):
        seats = game.to_act(state)
        if not seats:
            break
        seat = rng.choice(seats)
        if game is PACAL:
            action = pacal_action(state, seat, rng)
        else:
            action = rng.choice(game.legal_actions(state, seat))
        game.apply(state, seat, action)
    return state


def dekal_state(seed: int, n: int, options: dict[str, Any], steps: int) -> State:
    rng = random.Random(seed)
    return play(DEKAL, DEKAL.setup(options, n, rng.getrandbits(32)), steps, rng)


def pacal_state(seed: int, solitaire: bool, steps: int) -> State:
    rng = random.Random(seed)
    options = {"mode": "solitaire"} if solitaire else {}
    state = PACAL.setup(options, 1 if solitaire else 2, rng.getrandbits(32))
    return play(PACAL, state, steps, rng)


DEKAL_STATES = st.builds(
    dekal_state,
    st.integers(0, 2**32),
    st.integers(2, 6),
    DEKAL_OPTIONS,
    st.integers(0, 400),
)
PACAL_STATES = st.builds(pacal_state, st.integers(0, 2**32), st.booleans(), st.integers(0, 250))
STATES = st.one_of(
    st.tuples(st.just(DEKAL), DEKAL_STATES), st.tuples(st.just(PACAL), PACAL_STATES)
)


def deck(game: Game, state: State) -> Counter[int]:
    """Every card of the current deal, wherever it is."""
    if game is DEKAL:
        cards = [v for grid in state["grids"] for row in grid for v in row if v is not None]
        cards += state["centre"] + state["reserve"] + state["reserve_drawn"]
        return Counter(cards)
    cards = [card for pyramid in state["pyramids"] for stack in pyramid for card in stack]
    cards += [card for foundation in state["foundations"] for card in foundation]
    if state["mode"] == "solitaire":
        cards += state["pile"] + state["set_aside"]
        cards += [state["drawn"]] if state["drawn"] is not None else []
        return Counter(cards)
    cards += [card for hand in state["hands"] for card in hand]
    if state["phase"] == "choose":
        cards += state["offer"]["cards"]
    elif state["phase"] != "last_card":
        cards += [card for card in state["to_place"] if card is not None]
    return Counter(cards)


# --- Properties -----------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(STATES, st.integers(0, 2**32))
def test_the_rebuilt_state_gives_back_the_same_view(game_state, seed) -> None:
    game, state = game_state
    assert_same_view(game, state, state["n_players"], random.Random(seed))


@settings(max_examples=40, deadline=None)
@given(STATES, st.integers(0, 2**32))
def test_the_rebuilt_state_gives_the_same_legal_actions(game_state, seed) -> None:
    game, state = game_state
    assert_same_legal_actions(game, state, state["n_players"], random.Random(seed))


@settings(max_examples=25, deadline=None)
@given(STATES, st.integers(0, 2**32))
def test_the_rebuilt_state_holds_the_whole_deck_and_plays_to_the_end(game_state, seed) -> None:
    game, state = game_state
    rng = random.Random(seed)
    for seat in seats(state["n_players"]):
        again = rebuilt(game, state, seat, rng)
        assert deck(game, again) == deck(game, state), "hidden cards conserved"
        assert sorted(again) == sorted(state), "the shape setup makes"
        play(game, again, 10_000, rng)
        assert game.outcome(again) is not None


# --- Worked cases ----------------------------------------------------------


@pytest.mark.parametrize("game", [DEKAL, PACAL])
def test_the_hidden_cards_are_sampled_from_the_rng(game: Game) -> None:
    state = dekal_state(5, 3, {}, 40) if game is DEKAL else pacal_state(5, False, 30)
    seen = wire_view(game, state, 0)
    first = game.state_from_view(seen, 0, random.Random(1))
    assert game.state_from_view(seen, 0, random.Random(1)) == first, "a function of the rng"
    others = [game.state_from_view(seen, 0, random.Random(k)) for k in range(2, 6)]
    assert any(other != first for other in others), "hidden cards resampled"
    assert len({other["rng"] for other in others}) == len(others), "a fresh seed each time"


def test_dekal_keeps_the_seats_own_choice_and_redraws_the_others() -> None:
    state = DEKAL.setup({}, 3, 7)
    DEKAL.apply(state, 0, {"type": "reveal", "row": 1, "col": 2})
    DEKAL.apply(state, 1, {"type": "reveal", "row": 0, "col": 0})
    again = DEKAL.state_from_view(wire_view(DEKAL, state, 0), 0, random.Random(3))
    assert again["choices"][0] == {"row": 1, "col": 2}
    assert again["choices"][1] is not None
    assert again["choices"][2] is None


def test_pacal_keeps_the_seats_own_hand_and_resamples_the_other() -> None:
    state = pacal_state(11, False, 9)
    again = PACAL.state_from_view(wire_view(PACAL, state, 1), 1, random.Random(4))
    assert again["hands"][1] == state["hands"][1]
    assert len(again["hands"][0]) == len(state["hands"][0])
    assert [f[0] for f in again["foundations"]] == state["foundation_tops"]


def test_a_view_that_shows_too_many_cards_is_refused() -> None:
    state = dekal_state(2, 2, {}, 10)
    seen = wire_view(DEKAL, state, 0)
    seen["reserve"]["count"] += 1
    with pytest.raises(ValueError):
        DEKAL.state_from_view(seen, 0, random.Random(0))
    seen = wire_view(PACAL, pacal_state(2, False, 10), 0)
    seen["players"][1]["hand_size"] += 1
    with pytest.raises(ValueError):
        PACAL.state_from_view(seen, 0, random.Random(0))


@pytest.mark.parametrize(
    ("game", "state"),
    [
        (DEKAL, dekal_state(3, 2, {}, 0)),
        (DEKAL, dekal_state(4, 3, {}, 41)),
        (PACAL, pacal_state(3, False, 0)),
        (PACAL, pacal_state(4, False, 13)),
        (PACAL, pacal_state(5, True, 3)),
    ],
    ids=["dekal-reveal", "dekal-draft", "pacal-offer", "pacal-later", "pacal-solitaire"],
)
def test_mcts_searches_the_rebuilt_state_and_plays_a_legal_action(game, state) -> None:
    rng = random.Random(9)
    seat = game.to_act(state)[0]
    again = rebuilt(game, state, seat, rng)
    action = choose_action(game, again, seat, "mcts", rng, budget_s=5.0, iterations=30)
    assert action in game.legal_actions(state, seat)
