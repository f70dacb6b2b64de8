"""Pacal over random games: the shared conformance checks and replay, the
invariants (strictly decreasing pyramids, 50 cards conserved, placed cards
never move, every match ends) as hypothesis properties, and the hidden
information (hands, foundations, draw pile) never reaching a view or an
event of a seat that may not see it."""

from __future__ import annotations

import copy
import itertools
import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.core import State, redact_events
from engines.pacal import GAME
from engines.pacal.rules import fitting_slots
from tests.engines import conformance

SOLITAIRE = {"mode": "solitaire"}
MAX_STEPS = 20_000

# --- Random play ----------------------------------------------------------


def random_solitaire(seed: int, check_views: bool = False) -> tuple[State, list]:
    """``conformance.random_playout`` for the solitaire; only a perfect pyramid
    of 10 cards has a winner."""
    state, log = conformance.random_playout(GAME, 1, seed, SOLITAIRE, check_views=check_views)
    outcome = GAME.outcome(state)
    assert outcome["winners"] == ([0] if outcome["won"] else [])
    assert outcome["won"] == (outcome["completed"] and outcome["cards_drawn"] == 10)
    return state, log


def careful_action(state: State, seat: int, rng: random.Random) -> dict:
    """A random legal action that avoids getting stuck: take a card that fits,
    place each card near the slot its value suits. Uniformly random play
    loses nearly every manche by a card that fits nowhere; this one also
    reaches completions, the last card and exhausted cards."""
    actions = GAME.legal_actions(state, seat)
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


def steps(
    state: State, seed: int, snapshot: Callable[[State], Any], careful: bool = False
) -> Iterator[tuple[int, dict, Any, list[dict]]]:
    """Play random legal actions to the end, yielding (seat, action,
    ``snapshot`` of the state before, the events) after each one."""
    rng = random.Random(seed)
    for _ in range(MAX_STEPS):
        seats = GAME.to_act(state)
        if not seats:
            return
        seat = rng.choice(seats)
        if careful:
            action = careful_action(state, seat, rng)
        else:
            action = rng.choice(GAME.legal_actions(state, seat))
        before = snapshot(state)
        events = GAME.apply(state, seat, action)
        yield seat, action, before, events
    raise AssertionError(f"no end after {MAX_STEPS} actions")


# --- Invariants -----------------------------------------------------------


def assert_pyramid_valid(pyramid: list[list[int]], max_face_up: int) -> None:
    """Visible values strictly decrease in slot order; a slot holds at most
    two face-up cards (one in solitaire)."""
    assert len(pyramid) == 10
    assert all(len(stack) <= max_face_up for stack in pyramid)
    visible = [stack[-1] for stack in pyramid if stack]
    assert all(a > b for a, b in itertools.pairwise(visible)), visible


def cards_in_play(state: State) -> list[int]:
    """Every card of the current deal, wherever it is."""
    cards = [c for foundation in state["foundations"] for c in foundation]
    cards += [c for pyramid in state["pyramids"] for stack in pyramid for c in stack]
    if state["mode"] == "solitaire":
        drawn = [state["drawn"]] if state["drawn"] is not None else []
        return cards + state["pile"] + state["set_aside"] + drawn
    cards += [c for hand in state["hands"] for c in hand]
    cards += [c for c in state["to_place"] if c is not None]
    if state["phase"] == "choose":
        cards += state["offer"]["cards"]
    return cards


def pyramids_snapshot(state: State) -> dict[str, Any]:
    pyramids = [[list(stack) for stack in pyramid] for pyramid in state["pyramids"]]
    return {"manche": state["manche"], "pyramids": pyramids}


def assert_invariants(state: State, before: dict[str, Any]) -> None:
    solitaire = state["mode"] == "solitaire"
    assert sorted(cards_in_play(state)) == list(range(1, 51)), "50 cards, each once"
    for pyramid in state["pyramids"]:
        assert_pyramid_valid(pyramid, 1 if solitaire else 2)
    if state["manche"] == before["manche"]:
        for old, new in zip(before["pyramids"], state["pyramids"], strict=True):
            assert all(n[: len(o)] == o for o, n in zip(old, new, strict=True)), "cards moved"
    if solitaire:
        assert state["cards_drawn"] + len(state["pile"]) == 40
        return
    if state["phase"] == "offer":
        sizes = [len(hand) for hand in state["hands"]]
        assert sum(sizes) == 30 - 2 * state["offers_made"]
        assert abs(sizes[0] - sizes[1]) in (0, 2)
    assert max(state["manches_won"]) <= state["manches_to_win"]
    assert sum(state["manches_won"]) <= state["manche"]


def play_and_check(state: State, seed: int, careful: bool) -> State:
    for _, action, before, events in steps(state, seed, pyramids_snapshot, careful):
        assert_invariants(state, before)
        if action["type"] == "discard":
            # A solitaire card is set aside only when it fits no empty slot.
            card = events[0]["card"]
            assert not fitting_slots(before["pyramids"][0], card, covering=False)
    return state


# --- Conformance and replay -----------------------------------------------


@pytest.mark.parametrize("seed", range(60))
def test_random_matches_conform_and_replay(seed: int) -> None:
    options = {"manches_to_win": 1 + seed % 3}
    check_views = seed < 3  # validating every view is slow; a few matches suffice
    state, log = conformance.random_playout(GAME, 2, seed, options, check_views=check_views)
    assert conformance.replay(GAME, 2, seed, log, options) == state
    assert (
        GAME.outcome(state)["manches_won"][GAME.outcome(state)["winners"][0]]
        == (options["manches_to_win"])
    )


@pytest.mark.parametrize("seed", range(200))
def test_random_solitaires_conform_and_replay(seed: int) -> None:
    state, log = random_solitaire(seed, check_views=seed < 10)
    assert conformance.replay(GAME, 1, seed, log, SOLITAIRE) == state


# --- Properties -----------------------------------------------------------

SEEDS = st.integers(0, 2**63 - 1)


@settings(max_examples=700, deadline=None, database=None)
@given(seed=SEEDS, manches_to_win=st.integers(1, 3), careful=st.booleans())
def test_random_matches_keep_the_invariants_and_end(
    seed: int, manches_to_win: int, careful: bool
) -> None:
    state = conformance.new_match(GAME, 2, seed, {"manches_to_win": manches_to_win})
    play_and_check(state, seed, careful)
    outcome = GAME.outcome(state)
    assert outcome["manches_won"][outcome["winners"][0]] == manches_to_win
    assert sum(outcome["manches_won"]) <= outcome["manches_played"]


@settings(max_examples=2500, deadline=None, database=None)
@given(seed=SEEDS, careful=st.booleans())
def test_random_solitaires_keep_the_invariants_and_end(seed: int, careful: bool) -> None:
    state = play_and_check(conformance.new_match(GAME, 1, seed, SOLITAIRE), seed, careful)
    outcome = GAME.outcome(state)
    assert outcome["completed"] == (outcome["filled"] == 10)
    assert outcome["won"] == (outcome["completed"] and outcome["cards_drawn"] == 10)
    assert outcome["winners"] == ([0] if outcome["won"] else [])
    if outcome["completed"]:
        assert 10 <= outcome["score"] == outcome["cards_drawn"] <= 40
    else:
        assert outcome["cards_drawn"] == 40 and not state["pile"]


# --- Hidden information ---------------------------------------------------

CARD_KEYS = {
    "pyramid",
    "pyramids",
    "hand",
    "to_place",
    "foundation_top",
    "foundation_tops",
    "cards",
    "chosen",
    "card",
    "left",
    "covered",
    "drawn",
    "set_aside",
}
OTHER_KEYS = {
    "type",
    "mode",
    "phase",
    "reason",
    "seat",
    "manche",
    "manches_to_win",
    "active",
    "offers_made",
    "offer",
    "players",
    "pile_size",
    "cards_drawn",
    "last_manche",
    "winners",
    "winner",
    "hand_size",
    "to_act",
    "manches_won",
    "filled",
    "spread",
    "spreads",
    "starter",
    "score",
    "scores",
    "slot",
    "manches_played",
    "won",
    "completed",
}


def card_values(data: Any, is_card: bool = False) -> Iterator[int]:
    """Every card value in ``data``; every key must be a known one, so that a
    new field cannot slip past this scan."""
    if isinstance(data, dict):
        for key, value in data.items():
            assert key in CARD_KEYS | OTHER_KEYS, f"unknown key {key!r}"
            yield from card_values(value, key in CARD_KEYS)
    elif isinstance(data, list):
        for item in data:
            yield from card_values(item, is_card)
    elif is_card and isinstance(data, int) and not isinstance(data, bool):
        yield data


def hidden_from(state: State, viewer: int | None) -> set[int]:
    """The cards ``viewer`` may not see: every foundation card but the two
    tops of a match, other seats' hands, the solitaire's pile."""
    if state["mode"] == "solitaire":
        return set(state["foundations"][0]) | set(state["pile"])
    hidden = {c for foundation in state["foundations"] for c in foundation[1:]}
    for seat, hand in enumerate(state["hands"]):
        if seat != viewer:
            hidden |= set(hand)
    return hidden


def revealed_by(before: State, seat: int, action: dict) -> set[int]:
    """Hidden cards that ``action`` makes public: an offer, a placed last card."""
    if action["type"] == "offer":
        return set(action["cards"])
    if action["type"] == "place" and before["phase"] == "last_card":
        return {before["hands"][seat][0]}
    return set()


def resample_hidden(state: State, viewer: int | None, rng: random.Random) -> State:
    """A copy of ``state`` with what ``viewer`` cannot see dealt differently."""
    other = copy.deepcopy(state)
    if state["mode"] == "solitaire":
        places = [other["foundations"][0], other["pile"]]
        pool = [c for place in places for c in place]
        rng.shuffle(pool)
        other["foundations"][0], other["pile"] = pool[:10], pool[10:]
        return other
    hands = [s for s in range(2) if s != viewer]
    pool = [c for f in other["foundations"] for c in f[1:]]
    pool += [c for s in hands for c in other["hands"][s]]
    rng.shuffle(pool)
    for foundation in other["foundations"]:
        foundation[1:], pool = pool[:9], pool[9:]
    for s in hands:
        size = len(other["hands"][s])
        other["hands"][s], pool = sorted(pool[:size]), pool[size:]
    return other


def assert_nothing_hidden_leaks(state: State, seed: int, careful: bool) -> None:
    viewers = [None, 0] if state["mode"] == "solitaire" else [None, 0, 1]
    rng = random.Random(seed)
    for seat, action, before, events in steps(state, seed, copy.deepcopy, careful):
        dealt = next((i for i, e in enumerate(events) if e["type"] == "manche_dealt"), None)
        for viewer in viewers:
            view = GAME.view(state, viewer)
            hidden = hidden_from(state, viewer)
            shown = set(card_values({k: v for k, v in view.items() if k != "last_manche"}))
            assert not shown & hidden, f"view of {viewer} shows hidden {shown & hidden}"
            assert view == GAME.view(resample_hidden(state, viewer, rng), viewer)
            visible = redact_events(events, viewer)
            if dealt is None:
                assert not set(card_values(visible)) & hidden
            else:
                old = hidden_from(before, viewer) - revealed_by(before, seat, action)
                cut = len(redact_events(events[:dealt], viewer))
                assert not set(card_values(visible[:cut])) & old
                assert not set(card_values(visible[cut:])) & hidden
        if dealt is not None and state["mode"] == "match":
            assert_last_manche_is_public(state, before, events[:dealt])


def assert_last_manche_is_public(state: State, before: State, events: list[dict]) -> None:
    """The previous manche's pyramids shown after a re-deal are exactly the
    public pyramids with the cards placed by the last action."""
    expected = copy.deepcopy(before["pyramids"])
    for event in events:
        if event["type"] == "placed":
            expected[event["seat"]][event["slot"]].append(event["card"])
    assert state["last_manche"]["pyramids"] == expected


@pytest.mark.parametrize("seed", range(25))
def test_views_and_events_never_show_hidden_cards_in_a_match(seed: int) -> None:
    options = {"manches_to_win": 1 + seed % 3}
    state = conformance.new_match(GAME, 2, seed, options)
    assert_nothing_hidden_leaks(state, seed, careful=seed % 2 == 0)


@pytest.mark.parametrize("seed", range(40))
def test_views_and_events_never_show_hidden_cards_in_a_solitaire(seed: int) -> None:
    state = conformance.new_match(GAME, 1, seed, SOLITAIRE)
    assert_nothing_hidden_leaks(state, seed, careful=seed % 2 == 0)


def test_a_spectator_sees_no_hand_and_a_seat_only_its_own() -> None:
    state = conformance.new_match(GAME, 2, 99, {})
    assert [p["hand"] for p in GAME.view(state, None)["players"]] == [None, None]
    mine = GAME.view(state, 1)["players"]
    assert mine[0]["hand"] is None and mine[1]["hand"] == state["hands"][1]
    assert [p["hand_size"] for p in mine] == [15, 15]
