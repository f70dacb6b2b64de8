"""Dékal under random play: the shared conformance checks, replay, the
invariants of RULES.md §1 (hypothesis) and hidden information in every view."""

from __future__ import annotations

import random
from collections import Counter

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.core import State, clone
from engines.dekal import GAME
from tests.engines import conformance

FULL_DECK = Counter({value: 10 for value in range(1, 11)})
FIRST_PLAYER = st.sampled_from(["lowest_card", "random", 0, 1])
MAX_MANCHES = 60


def all_cards(state: State) -> list[int]:
    cards = [v for grid in state["grids"] for row in grid for v in row]
    cards += state["centre"] + state["reserve"] + state["reserve_drawn"]
    return [v for v in cards if v is not None]


def check_turn_start(state: State) -> None:
    """At the start of each turn every grid holds 16 cards, exactly
    16 - (turn - 1) of them face down; the centre is empty."""
    assert state["centre"] == []
    assert state["holes"] == [None] * state["n_players"]
    for grid, face_up in zip(state["grids"], state["face_up"], strict=True):
        assert all(v is not None for row in grid for v in row)
        face_down = sum(not up for row in face_up for up in row)
        assert face_down == 16 - (state["turn"] - 1)


def check_step(state: State) -> None:
    assert len(all_cards(state)) == 100, "100 cards at all times"
    if state["phase"] == "reveal":
        assert state["centre"] == []
        if not any(state["choices"]):
            assert Counter(all_cards(state)) == FULL_DECK, "ten cards of each value"
            check_turn_start(state)
    if state["phase"] == "draft":
        assert GAME.to_act(state) == [state["current"]]
        holes = sum(hole is not None for hole in state["holes"])
        assert holes == len(state["centre"])


def play_checked(state: State, rng: random.Random) -> list[tuple[int, dict]]:
    """Random legal play to the end, checking the invariants at every step."""
    n = state["n_players"]
    log: list[tuple[int, dict]] = []
    for _ in range(MAX_MANCHES * 32 * n):
        check_step(state)
        seats = GAME.to_act(state)
        if not seats:
            return log
        seat = rng.choice(seats)
        action = rng.choice(GAME.legal_actions(state, seat))
        GAME.apply(state, seat, action)
        log.append((seat, action))
    raise AssertionError("the match did not end")


# -- conformance and replay ------------------------------------------------


@pytest.mark.parametrize("n", [2, 3])
def test_random_playout_conforms_with_every_view_checked(n: int) -> None:
    options = {"target_score": 60} if n == 2 else {}
    state, log = conformance.random_playout(GAME, n, seed=n, options=options)
    assert conformance.replay(GAME, n, n, log, options) == state


@pytest.mark.parametrize("n", range(2, 7))
def test_views_at_every_phase_match_the_view_schema(n: int) -> None:
    """Validating every view of every step is slow for 6 seats: sample the
    start of each phase, and the end."""
    rng = random.Random(n)
    state = conformance.new_match(GAME, n, n, {"target_score": 50})
    phase = None
    while seats := GAME.to_act(state):
        if state["phase"] != phase:
            phase = state["phase"]
            for viewer in [None, *range(n)]:
                conformance.assert_view_valid(GAME, GAME.view(state, viewer))
        seat = rng.choice(seats)
        GAME.apply(state, seat, rng.choice(GAME.legal_actions(state, seat)))
    for viewer in [None, *range(n)]:
        conformance.assert_view_valid(GAME, GAME.view(state, viewer))
    assert not GAME.outcome_schema().validate(GAME.outcome(state))


@pytest.mark.parametrize("n", range(2, 7))
@pytest.mark.parametrize(
    "options", [{}, {"target_score": 100}, {"first_player": "random"}, {"first_player": 1}]
)
def test_random_playouts_replay_to_the_identical_state(n: int, options: dict) -> None:
    for seed in range(8):
        state, log = conformance.random_playout(GAME, n, seed, options, check_views=False)
        assert conformance.replay(GAME, n, seed, log, options) == state
        assert orjson.loads(orjson.dumps(state)) == state


# -- invariants ------------------------------------------------------------


@settings(max_examples=1500, deadline=None)
@given(n=st.integers(2, 6), seed=st.integers(0, 2**63 - 1), first=FIRST_PLAYER)
def test_invariants_hold_in_random_single_manche_games(n: int, seed: int, first: object) -> None:
    options = {"first_player": first if first in ("lowest_card", "random") else first % n}
    state = conformance.new_match(GAME, n, seed, options)
    log = play_checked(state, random.Random(seed))
    assert len(log) == 16 * 2 * n, "16 turns of one reveal and one take per seat"
    outcome = GAME.outcome(state)
    assert outcome["scores"] == state["manches"][0]["scores"]
    assert conformance.replay(GAME, n, seed, log, options) == state


@settings(max_examples=500, deadline=None)
@given(n=st.integers(2, 6), seed=st.integers(0, 2**63 - 1), target=st.integers(1, 250))
def test_invariants_hold_in_random_multi_manche_games(n: int, seed: int, target: int) -> None:
    options = {"target_score": target}
    state = conformance.new_match(GAME, n, seed, options)
    log = play_checked(state, random.Random(seed))
    manches = state["manches"]
    assert len(log) == 16 * 2 * n * len(manches)
    assert all(max(m["totals"]) < target for m in manches[:-1])
    assert max(manches[-1]["totals"]) >= target
    starters = [m["first_player"] for m in manches]
    assert starters == [(starters[0] + k) % n for k in range(len(manches))]
    outcome = GAME.outcome(state)
    best = min(outcome["scores"])
    assert outcome["winners"] == [s for s, v in enumerate(outcome["scores"]) if v == best]
    assert conformance.replay(GAME, n, seed, log, options) == state


# -- hidden information ----------------------------------------------------


def resample_hidden(state: State, rng: random.Random) -> State:
    """Another state nobody can tell apart from ``state``: face-down values
    and the reserve reshuffled together, reveal choices moved to other
    face-down cells."""
    other = clone(state)
    cells = [
        (s, r, c)
        for s, (grid, face_up) in enumerate(zip(other["grids"], other["face_up"], strict=True))
        for r in range(4)
        for c in range(4)
        if grid[r][c] is not None and not face_up[r][c]
    ]
    hidden = [other["grids"][s][r][c] for s, r, c in cells] + other["reserve"]
    rng.shuffle(hidden)
    for s, r, c in cells:
        other["grids"][s][r][c] = hidden.pop()
    other["reserve"] = hidden
    for s, choice in enumerate(other["choices"]):
        if choice is not None:
            row, col = rng.choice([(r, c) for t, r, c in cells if t == s])
            other["choices"][s] = {"row": row, "col": col}
    return other


def assert_views_hide_everything(state: State, rng: random.Random) -> None:
    other = resample_hidden(state, rng)
    for viewer in [None, *range(state["n_players"])]:
        if viewer is not None:
            other["choices"][viewer] = state["choices"][viewer]
        seen = GAME.view(state, viewer)
        assert GAME.view(other, viewer) == seen, "a view depends on hidden information"
        for player in seen["players"]:
            for row in player["grid"]:
                for cell in row:
                    assert cell is None or cell["face_up"] or cell["value"] is None
        assert ("my_choice" in seen) == (viewer is not None)


@pytest.mark.parametrize("n", range(2, 7))
def test_no_view_of_any_seat_or_spectator_shows_hidden_information(n: int) -> None:
    for seed in range(2):
        rng = random.Random(seed)
        state = conformance.new_match(GAME, n, seed, {"target_score": 40 if seed else None})
        while seats := GAME.to_act(state):
            assert_views_hide_everything(state, rng)
            seat = rng.choice(seats)
            action = rng.choice(GAME.legal_actions(state, seat))
            completes = state["phase"] == "reveal" and len(seats) == 1
            twin = resample_hidden(state, rng)
            twin["choices"][seat] = state["choices"][seat]
            events = GAME.apply(state, seat, action)
            assert all("to" not in event for event in events), "Dékal has no private event"
            if not completes:
                assert GAME.apply(twin, seat, action) == events, "an event leaks hidden info"
        assert_views_hide_everything(state, rng)


@pytest.mark.parametrize("n", range(2, 7))
def test_revealed_and_drawn_values_are_exactly_the_cards_turned_face_up(n: int) -> None:
    rng = random.Random(n)
    state = conformance.new_match(GAME, n, n, {})
    while seats := GAME.to_act(state):
        seat = rng.choice(seats)
        before = clone(state)
        for event in GAME.apply(state, seat, rng.choice(GAME.legal_actions(state, seat))):
            if event["type"] == "revealed":
                for card in event["cards"]:
                    assert before["grids"][card["seat"]][card["row"]][card["col"]] == card["value"]
                assert sorted(c["value"] for c in event["cards"]) == state["centre"]
            if event["type"] == "reserve_drawn":
                drawn = [d["value"] for d in event["draws"]]
                assert state["reserve_drawn"][-len(drawn) :] == drawn
