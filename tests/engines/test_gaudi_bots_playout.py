"""The Gaudí search's fast playouts (``bots.simulate`` on a ``Pavement``)
keep the rules: every turn the fast policy plays is one the engine accepts,
and leaves the light copy exactly where the engine leaves the match."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from engines.core import State, clone
from engines.gaudi import GAME, bots, rules
from tests.engines import conformance
from tests.engines.test_gaudi_bots import played


def same_position(table: bots.Pavement, state: State) -> None:
    """The light copy holds what the engine's state holds."""
    mirror = bots.pavement(state)
    assert table.board == mirror.board
    assert table.openings == mirror.openings
    assert table.hands == mirror.hands
    assert table.pile == mirror.pile
    assert table.markers == mirror.markers
    assert table.points == rules.points(state)
    assert table.finished == state["finished"]
    if not table.finished:
        assert table.active == state["active"]


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    n=st.integers(2, 4),
    steps=st.integers(0, 40),
    short=st.booleans(),
    sampler=st.integers(0, 2**31),
)
def test_fast_turns_are_turns_the_engine_accepts(
    seed: int, n: int, steps: int, short: bool, sampler: int
) -> None:
    """Each turn from the engine's state, played fast then by the engine
    with the same tiles (the pass too); an exchange draws at random in
    both, so the engine then plays its own exchange and the copy is rebuilt."""
    state = played(seed, steps, n, {"short_game": short})
    rng = random.Random(sampler)
    while seats := GAME.to_act(state):
        seat = seats[0]
        legal = GAME.legal_actions(state, seat)
        table = bots.pavement(state)
        laid = bots.play_turn(table, rng)
        if legal[0]["type"] == "exchange":
            GAME.apply(state, seat, legal[0])
            continue
        if legal[0]["type"] == "pass":
            assert laid == []
            GAME.apply(state, seat, legal[0])
        else:
            tiles = [{"tile": kind, "q": q, "r": r} for (q, r), kind in laid]
            GAME.apply(state, seat, {"type": "place", "tiles": tiles})
        same_position(table, state)


def test_a_simulated_game_ends_by_the_rules() -> None:
    """Played to the end fast: the game ends with an empty pile and hand,
    or with nothing in play fitting anywhere."""
    for seed in range(4):
        state = played(seed, 10)
        table = bots.pavement(GAME.determinize(state, 0, random.Random(seed)))
        bots.simulate(table, random.Random(seed))
        assert table.finished
        emptied = not table.pile and any(not hand for hand in table.hands)
        in_play = [tile for hand in table.hands for tile in hand] + table.pile
        assert emptied or not bots._fitting(table, in_play)
        assert sum(len(hand) for hand in table.hands) + len(table.pile) + len(table.board) == len(
            state["board"]
        ) + sum(len(hand) for hand in state["hands"]) + len(state["pile"])


def test_the_fast_policy_lays_a_second_tile_to_complete_an_animal() -> None:
    """A tile OOO on (0, 1) completes the orange starfish of (0, 0) and
    (1, 0), worth 2 to seat 0 (starfish, orange); it also leaves the orange
    jellyfish site of (1, 1) one hex short, on (0, 2), which seat 0's other
    OOO completes: the fast policy lays both."""
    state = conformance.new_match(GAME, 2, 3, {})
    state["board"] = [
        {"q": 0, "r": 0, "tile": "OGB"},
        {"q": 1, "r": 0, "tile": "OBB"},
        {"q": 1, "r": 1, "tile": "OBO"},
    ]
    state["animals"] = []
    state["objectives"] = [
        {"animal": "starfish", "colour": "orange"},
        {"animal": "snail", "colour": "green"},
    ]
    state["hands"][0] = ["OOO", "OOO", "BBB"]
    state["active"] = 0
    before = clone(state)
    action = bots.rollout_action(state, 0, random.Random(1))
    assert state == before
    assert len(action["tiles"]) >= 2
    events = GAME.apply(state, 0, action)
    marked = [e for e in events if e["type"] == "animal_completed" and e["marker"] == 0]
    assert len(marked) >= 2
