"""Pacal's bots: determinize resamples exactly the hidden cards; the pyramid
score, the ranked offers, the greedy policy and the search hooks behave as
their docstrings say."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.ai import choose_action
from engines.core import State, clone
from engines.pacal import GAME, bots
from engines.pacal.rules import filled_slots, fitting_slots
from tests.engines import conformance

SOLITAIRE = {"mode": "solitaire"}
ONE_MANCHE = {"manches_to_win": 1}


def new(n: int = 2, seed: int = 7, **options: object) -> State:
    return conformance.new_match(GAME, n, seed, options)


def played(seed: int, steps: int, n: int = 2, options: dict | None = None) -> State:
    """A match after ``steps`` actions of the rollout policy (which lasts)."""
    state = conformance.new_match(GAME, n, seed, options)
    rng = random.Random(seed)
    for _ in range(steps):
        seats = GAME.to_act(state)
        if not seats:
            break
        GAME.apply(state, seats[0], bots.rollout_action(state, seats[0], rng))
    return state


def all_cards(state: State) -> list[int]:
    cards = [card for hand in state["hands"] for card in hand]
    cards += [card for foundation in state["foundations"] for card in foundation]
    cards += [card for pyramid in state["pyramids"] for stack in pyramid for card in stack]
    if state["offer"] and state["offer"]["chosen"] is None:
        cards += state["offer"]["cards"]
    cards += [card for card in state["to_place"] if card is not None]
    return sorted(cards)


def arranged(mine: list[list[int]], hand: list[int], theirs: list[list[int]]) -> State:
    """Seat 0 to offer with ``hand`` and pyramid ``mine``; seat 1's pyramid
    is ``theirs``; every other card is split between the foundations and
    seat 1's hand."""
    state = new()
    used = {card for stack in mine + theirs for card in stack} | set(hand)
    rest = [card for card in range(1, 51) if card not in used]
    state["pyramids"] = [[list(stack) for stack in mine], [list(stack) for stack in theirs]]
    state["hands"] = [sorted(hand), rest[: len(hand)]]
    rest = rest[len(hand) :]
    half = len(rest) // 2
    state["foundations"] = [rest[:half], rest[half:]]
    state["foundation_tops"] = [rest[0], rest[half]]
    state["active"] = 0
    return state


def narrow() -> list[list[int]]:
    """Slots 0 and 9 covered once already (41 on 40... 30 under 31): only
    cards 31 < c < 40 fit, in slots 1 to 8."""
    pyramid: list[list[int]] = [[] for _ in range(10)]
    pyramid[0] = [41, 40]
    pyramid[9] = [30, 31]
    return pyramid


# -- determinize ----------------------------------------------------------


def test_determinize_deals_the_other_hand_and_the_foundations_anew() -> None:
    state = played(3, 20)
    world = GAME.determinize(state, 0, random.Random(1))
    assert world["hands"][0] == state["hands"][0]
    assert world["hands"][1] != state["hands"][1], "it resamples, not copies"
    assert len(world["hands"][1]) == len(state["hands"][1])
    assert world["hands"][1] == sorted(world["hands"][1])
    assert [f[0] for f in world["foundations"]] == state["foundation_tops"]
    assert world["foundations"] != state["foundations"]
    assert all_cards(world) == all_cards(state) == list(range(1, 51))
    assert world["rng"] != state["rng"]


def test_determinize_for_a_spectator_resamples_both_hands() -> None:
    state = played(4, 10)
    world = GAME.determinize(state, None, random.Random(2))
    assert world["hands"][0] != state["hands"][0]
    assert world["hands"][1] != state["hands"][1]
    assert all_cards(world) == list(range(1, 51))


def test_determinize_resamples_the_solitaire_pile_and_foundation() -> None:
    state = played(5, 12, n=1, options=SOLITAIRE)
    world = GAME.determinize(state, 0, random.Random(3))
    assert world["drawn"] == state["drawn"]
    assert world["pile"] != state["pile"]
    assert len(world["pile"]) == len(state["pile"])
    assert sorted(world["pile"] + world["foundations"][0]) == sorted(
        state["pile"] + state["foundations"][0]
    )


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), steps=st.integers(0, 120), seat=st.sampled_from([0, 1]))
def test_determinize_keeps_the_fifty_cards_and_the_seat_view(
    seed: int, steps: int, seat: int
) -> None:
    state = played(seed % 10_000, steps)
    world = GAME.determinize(state, seat, random.Random(seed))
    assert all_cards(world) == all_cards(state)
    assert GAME.view(world, seat) == GAME.view(state, seat)


# -- evaluation ------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), steps=st.integers(0, 150))
def test_openings_agree_with_the_construction_rule(seed: int, steps: int) -> None:
    state = played(seed % 10_000, steps)
    for pyramid in state["pyramids"]:
        for covering in (True, False):
            opened = bots.openings(pyramid, covering)
            for card in range(1, 51):
                fast = [slot for slot, low, high in opened if low < card < high]
                assert fast == fitting_slots(pyramid, card, covering)


def test_an_empty_pyramid_scores_the_ways_to_fill_it() -> None:
    available = list(range(51))
    empty: list[list[int]] = [[] for _ in range(10)]
    assert bots.pyramid_score(empty, available) == pytest.approx(math.log(math.comb(50, 10)))


def test_a_run_without_room_is_dead_and_filled_slots_count() -> None:
    available = list(range(51))
    pyramid = narrow()
    # 8 empty slots between 40 and 31: 8 cards (32..39) fit, one way.
    assert bots.pyramid_score(pyramid, available) == pytest.approx(2 * bots.FILL_WEIGHT)
    pyramid[9] = [36]
    # 8 empty slots between 40 and 36: only 3 cards fit, 5 slots short.
    expected = 2 * bots.FILL_WEIGHT - 5 * bots.DEAD_WEIGHT
    assert bots.pyramid_score(pyramid, available) == pytest.approx(expected)


def test_best_slot_keeps_the_order_roomy_and_says_when_nothing_fits() -> None:
    available = list(range(51))
    empty: list[list[int]] = [[] for _ in range(10)]
    slot, _ = bots.best_slot(empty, 25, available)
    assert slot in (4, 5), "a middle card goes to the middle of the pyramid"
    assert bots.best_slot(empty, 50, available)[0] == 0
    assert bots.best_slot(narrow(), 20, available) == (None, -math.inf)


def test_evaluate_reads_only_public_information() -> None:
    state = played(6, 25)
    for seat in range(2):
        world = GAME.determinize(state, seat, random.Random(5))
        assert bots.evaluate(world, seat) == bots.evaluate(state, seat)


def test_evaluate_is_antisymmetric_and_counts_manches() -> None:
    state = played(7, 30)
    assert bots.evaluate(state, 0) == pytest.approx(-bots.evaluate(state, 1))
    ahead = clone(state)
    ahead["manches_won"] = [1, 0]
    gain = bots.evaluate(ahead, 0) - bots.evaluate(state, 0)
    assert gain == pytest.approx(bots.MANCHE_WEIGHT)


def test_ranked_offers_are_what_evaluate_makes_of_each_offer() -> None:
    state = played(8, 12)
    while state["phase"] != "offer":
        seat = GAME.to_act(state)[0]
        GAME.apply(state, seat, GAME.legal_actions(state, seat)[0])
    seat = state["active"]
    ranked = bots.ranked_offers(state, seat)
    assert len(ranked) == len(GAME.legal_actions(state, seat))
    assert [value for value, _ in ranked] == sorted((v for v, _ in ranked), reverse=True)
    for value, action in ranked:
        after = clone(state)
        GAME.apply(after, seat, action)
        assert bots.evaluate(after, seat) == pytest.approx(value)


# -- policies --------------------------------------------------------------


def test_greedy_chooses_the_card_that_leaves_the_offerer_stuck() -> None:
    """Seat 0 offers 20 and 35; only 31 < c < 40 fits its pyramid: taking
    the 35 hands it the 20, which fits nowhere, and it loses the manche."""
    state = arranged(narrow(), [20, 35, 5, 6, 7, 8, 9, 10], [[] for _ in range(10)])
    GAME.apply(state, 0, {"type": "offer", "cards": [20, 35]})
    assert bots.greedy(state, 1, random.Random(1)) == {"type": "choose", "card": 35}


def test_greedy_offers_only_cards_that_fit_its_own_pyramid() -> None:
    """Any card outside 31..40 in the offer would be left to seat 0."""
    hand = [5, 12, 20, 33, 35, 45, 48, 50]
    state = arranged(narrow(), hand, [[] for _ in range(10)])
    action = bots.greedy(state, 0, random.Random(2))
    assert action == {"type": "offer", "cards": [33, 35]}
    assert bots.ranked_offers(state, 0)[0][1] == action


def test_greedy_places_its_card_at_the_roomiest_slot() -> None:
    state = arranged([[] for _ in range(10)], [1, 2, 3], [[] for _ in range(10)])
    state["phase"] = "place"
    state["to_place"] = [25, 26]
    state["pending"] = [True, True]
    action = bots.greedy(state, 0, random.Random(3))
    assert action["type"] == "place" and action["slot"] in (4, 5)


def test_the_rollout_policy_plays_legal_moves_to_the_end() -> None:
    for n, options in ((2, {}), (1, SOLITAIRE)):
        state = new(n, seed=9, **options)
        rng = random.Random(1)
        while seats := GAME.to_act(state):
            action = bots.rollout_action(state, seats[0], rng)
            assert action in GAME.legal_actions(state, seats[0])
            GAME.apply(state, seats[0], action)
        assert GAME.outcome(state) is not None


def test_search_actions_are_the_best_legal_offers() -> None:
    state = new(seed=10)
    seat = state["active"]
    candidates = bots.search_actions(state, seat)
    assert len(candidates) == bots.SEARCH_OFFERS
    legal = GAME.legal_actions(state, seat)
    assert all(action in legal for action in candidates)
    assert candidates == [action for _, action in bots.ranked_offers(state, seat)][:6]


def test_match_chance_is_the_chance_of_a_fair_best_of() -> None:
    assert bots.match_chance(0, 3) == 1.0
    assert bots.match_chance(3, 0) == 0.0
    assert bots.match_chance(3, 3) == 0.5
    assert bots.match_chance(1, 3) == 7 / 8
    assert bots.match_chance(1, 2) == 3 / 4


def test_playouts_value_a_decided_manche_by_the_chance_of_winning_the_match() -> None:
    start = new(seed=11)
    assert bots.playout_value(start, start) is None
    decided = clone(start)
    decided["manche"], decided["manches_won"] = 2, [1, 0]
    assert bots.playout_value(start, decided) == [0.6875, 0.3125]


def test_a_playout_plays_the_manche_out_from_any_phase() -> None:
    rng = random.Random(3)
    for steps in (0, 1, 2, 3, 4, 9, 60):
        start = played(12, steps)
        world = GAME.determinize(start, GAME.to_act(start)[0], rng)
        values = bots.playout(start, world, rng)
        need = [start["manches_to_win"] - won for won in start["manches_won"]]
        outcomes = {
            bots.match_chance(need[0], need[1]),  # a void manche
            bots.match_chance(need[0] - 1, need[1]),  # seat 0 wins it
            bots.match_chance(need[0], need[1] - 1),  # seat 1 wins it
        }
        assert values[0] in outcomes
        assert sum(values) == pytest.approx(1.0)


def test_mcts_beats_random_in_short_matches() -> None:
    """A smoke test of strength (the real measure is in docs/clients/bots.md)."""
    for seed in range(2):
        state = new(2, seed=seed, **ONE_MANCHE)
        rng = random.Random(seed)
        while seats := GAME.to_act(state):
            seat = seats[0]
            policy = "mcts" if seat == seed % 2 else "random"
            action = choose_action(GAME, state, seat, policy, rng, budget_s=1, iterations=30)
            GAME.apply(state, seat, action)
        assert GAME.outcome(state)["winners"] == [seed % 2]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), steps=st.integers(0, 150))
def test_best_slot_scores_a_card_as_if_the_pyramid_were_rescored(seed: int, steps: int) -> None:
    state = played(seed % 10_000, steps)
    available = bots._available_prefix(state["pyramids"])
    for pyramid in state["pyramids"]:
        for card in range(1, 51):
            slot, score = bots.best_slot(pyramid, card, available)
            brute = []
            for fit in fitting_slots(pyramid, card):
                pyramid[fit].append(card)
                brute.append((bots.pyramid_score(pyramid, available), -fit))
                pyramid[fit].pop()
            if not brute:
                assert (slot, score) == (None, -math.inf)
                continue
            assert score == pytest.approx(max(brute)[0])
            pyramid[slot].append(card)
            assert bots.pyramid_score(pyramid, available) == pytest.approx(score)
            pyramid[slot].pop()


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), steps=st.integers(0, 150))
def test_fit_levels_say_whether_a_card_fills_a_slot_covers_one_or_fits_nowhere(
    seed: int, steps: int
) -> None:
    state = played(seed % 10_000, steps)
    for pyramid in state["pyramids"]:
        levels = bots._fit_levels(pyramid)
        for card in range(1, 51):
            slots = fitting_slots(pyramid, card)
            if any(not pyramid[slot] for slot in slots):
                assert levels[card] == bots.EMPTY_FIT
            else:
                assert levels[card] == (bots.COVER_FIT if slots else 0)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), steps=st.integers(0, 100))
def test_a_simulated_manche_follows_the_construction_rule_to_a_result(
    seed: int, steps: int
) -> None:
    state = played(seed % 10_000, steps)
    if state["phase"] != "offer":
        return
    world = GAME.determinize(state, 0, random.Random(seed))
    before = all_cards(world)
    winner = bots.simulate_manche(world, random.Random(seed))
    assert winner in (0, 1, None)
    for pyramid in world["pyramids"]:
        visible = [stack[-1] for stack in pyramid if stack]
        assert visible == sorted(visible, reverse=True) and len(set(visible)) == len(visible)
        assert all(len(stack) <= 2 for stack in pyramid)
    placed = [card for pyramid in world["pyramids"] for stack in pyramid for card in stack]
    assert len(placed) == len(set(placed)) and set(placed) <= set(before)
    if winner is not None and filled_slots(world["pyramids"][winner]) < 10:
        loser = world["pyramids"][1 - winner]
        assert filled_slots(loser) < 10
