"""``state_from_view`` for the Gaudí tile game: a bot that plays through the
API rebuilds a whole state from its seat's view alone. At random points of
random games, for every seat and a spectator, after a JSON round trip of
the view (as the client receives it): the rebuilt state gives back the same
view and the same legal actions, holds the box's tiles, plays on to the end,
and the bots can search from it."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.ai import choose_action
from engines.core import Seat, State
from engines.gaudi import GAME, rules
from engines.gaudi.geometry import neighbours
from tests.engines import conformance
from tests.engines.rebuilding import (
    assert_same_legal_actions,
    assert_same_view,
    rebuilt,
    seats,
    wire_view,
)

FULL_LIST_SHARE = 0.05  # steps drawn from the whole legal list: 2 or 3 tiles, exchanges
OPTIONS = st.sampled_from(
    [
        {},
        {"short_game": True},
        {"beginner": True},
        {"short_game": True, "first_player": "random"},
        {"children": True},
    ]
)

# --- Random reachable states ----------------------------------------------


def single_tile(state: State, seat: Seat, rng: random.Random) -> dict[str, Any] | None:
    """A random one-tile placement, or None when no hand tile fits: far
    cheaper than listing every legal action."""
    board = rules._board_map(state)
    kinds = sorted(set(state["hands"][seat]))
    placed = list(board)
    rng.shuffle(placed)
    for hex_ in placed:
        around = neighbours(hex_)
        rng.shuffle(around)
        for candidate in around:
            if candidate in board:
                continue
            required = rules._requirement(board, candidate)
            fitting = [tile for tile in kinds if rules._fits(tile, required)]
            if fitting:
                tile = rng.choice(fitting)
                return {
                    "type": "place",
                    "tiles": [{"tile": tile, "q": candidate[0], "r": candidate[1]}],
                }
    return None


def play(state: State, steps: int, rng: random.Random) -> State:
    """Up to ``steps`` random legal actions (fewer if the match ends)."""
    for _ in range(steps):
        seats = GAME.to_act(state)
        if not seats:
            break
        seat = seats[0]
        action = None if rng.random() < FULL_LIST_SHARE else single_tile(state, seat, rng)
        if action is None:
            action = rng.choice(GAME.legal_actions(state, seat))
        GAME.apply(state, seat, action)
    return state


def gaudi_state(seed: int, n: int, options: dict[str, Any], steps: int) -> State:
    return play(conformance.new_match(GAME, n, seed, options), steps, random.Random(seed))


STATES = st.builds(
    gaudi_state, st.integers(0, 2**32), st.integers(2, 6), OPTIONS, st.integers(0, 160)
)


def tiles_in_play(state: State) -> Counter[str]:
    return Counter(
        [placed["tile"] for placed in state["board"]]
        + [tile for hand in state["hands"] for tile in hand]
        + state["pile"]
    )


# --- Properties -----------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(STATES, st.integers(0, 2**32))
def test_the_rebuilt_state_gives_back_the_same_view(state, seed) -> None:
    assert_same_view(GAME, state, state["players"], random.Random(seed))


@settings(max_examples=80, deadline=None)
@given(STATES, st.integers(0, 2**32))
def test_the_rebuilt_state_gives_the_same_legal_actions(state, seed) -> None:
    assert_same_legal_actions(GAME, state, state["players"], random.Random(seed))


@settings(max_examples=30, deadline=None)
@given(STATES, st.integers(0, 2**32))
def test_the_rebuilt_state_holds_the_box_and_plays_to_the_end(state, seed) -> None:
    rng = random.Random(seed)
    for seat in seats(state["players"]):
        again = rebuilt(GAME, state, seat, rng)
        assert tiles_in_play(again) - Counter(rules.BOX) == Counter(), "never above the box"
        if not state["short_game"]:
            assert tiles_in_play(again) == Counter(rules.BOX), "every tile of the box"
        assert sorted(again) == sorted(state), "the shape setup makes"
        play(again, 10_000, rng)
        assert GAME.outcome(again) is not None


# --- Exchange or pass ------------------------------------------------------


def without_fitting_pile(state: State) -> State | None:
    """``state`` with the tiles of the pile that fit taken out of the box,
    so that the seat to play must pass; None when no tile would be left."""
    state = orjson.loads(orjson.dumps(state))
    board = rules._board_map(state)
    state["pile"] = [tile for tile in state["pile"] if not rules._can_place(board, [tile])]
    return state if state["pile"] else None


def stuck_states() -> list[State]:
    """States where no tile of the active seat's hand fits, both kinds:
    the pile holds a tile that fits (exchange) or none does (pass)."""
    found: dict[bool, list[State]] = {True: [], False: []}
    for seed in range(40):
        rng = random.Random(seed)
        state = conformance.new_match(GAME, 2 + seed % 3, seed, {"short_game": seed % 2 == 0})
        while GAME.to_act(state) and not all(len(found[k]) >= 3 for k in found):
            [seat] = GAME.to_act(state)
            fits = GAME.view(state, seat)["pile_fits"]
            if fits is not None and len(found[fits]) < 3:
                found[fits].append(orjson.loads(orjson.dumps(state)))
            if fits and len(found[False]) < 3:
                passing = without_fitting_pile(state)
                if passing is not None:
                    found[False].append(passing)
            play(state, 1, rng)
        if all(len(found[k]) >= 3 for k in found):
            break
    assert all(found.values()), "both kinds are reached"
    return found[True] + found[False]


STUCK = stuck_states()


@pytest.mark.parametrize("state", STUCK)
def test_pile_fits_is_what_the_legal_actions_say_and_is_kept(state) -> None:
    [seat] = GAME.to_act(state)
    actions = GAME.legal_actions(state, seat)
    seen = wire_view(GAME, state, seat)
    assert seen["pile_fits"] == (actions[0]["type"] == "exchange")
    for other in seats(state["players"]):
        if other != seat:
            assert wire_view(GAME, state, other)["pile_fits"] is None, (
                "only the seat to play knows"
            )
    for k in range(5):
        again = GAME.state_from_view(seen, seat, random.Random(k))
        assert GAME.legal_actions(again, seat) == actions


# --- Worked cases ----------------------------------------------------------


def test_the_hidden_tiles_and_objectives_are_sampled_from_the_rng() -> None:
    state = gaudi_state(5, 3, {}, 12)
    seen = wire_view(GAME, state, 0)
    first = GAME.state_from_view(seen, 0, random.Random(1))
    assert GAME.state_from_view(seen, 0, random.Random(1)) == first, "a function of the rng"
    others = [GAME.state_from_view(seen, 0, random.Random(k)) for k in range(2, 6)]
    assert any(o["pile"] != first["pile"] for o in others), "hidden tiles resampled"
    assert any(o["objectives"] != first["objectives"] for o in others), "objectives resampled"
    assert len({o["rng"] for o in others}) == len(others), "a fresh seed each time"
    for other in others:
        assert other["hands"][0] == state["hands"][0]
        assert other["objectives"][0] == state["objectives"][0]


def test_a_view_that_shows_too_many_tiles_is_refused() -> None:
    seen = wire_view(GAME, gaudi_state(2, 2, {}, 10), 0)
    seen["pile_size"] += 1
    with pytest.raises(ValueError):
        GAME.state_from_view(seen, 0, random.Random(0))
    seen = wire_view(GAME, gaudi_state(2, 2, {}, 10), 1)
    seen["hand"] = ["OOO"] * 5
    with pytest.raises(ValueError):
        GAME.state_from_view(seen, 1, random.Random(0))


@pytest.mark.parametrize(
    "state",
    [gaudi_state(3, 2, {}, 0), gaudi_state(4, 4, {"short_game": True}, 25), STUCK[0], STUCK[-1]],
    ids=["start", "later", "exchange", "pass"],
)
def test_mcts_searches_the_rebuilt_state_and_plays_a_legal_action(state) -> None:
    rng = random.Random(9)
    seat = GAME.to_act(state)[0]
    again = rebuilt(GAME, state, seat, rng)
    action = choose_action(GAME, again, seat, "mcts", rng, budget_s=5.0, iterations=20)
    assert action in GAME.legal_actions(state, seat)
