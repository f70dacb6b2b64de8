"""Ducale's bots: determinize, the evaluation, greedy and the search hooks.

``determinize`` must keep the seat's view and depend on nothing else; the
policies must only ever play legal actions; the evaluation must read nothing
the seat cannot see.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.ai import arena, choose_action, mcts
from engines.ducale import GAME, bots, melds, rules
from engines.ducale.melds import JOKER, build_meld
from tests.engines import conformance

FULL_DECK = Counter({**{card: 2 for card in melds.REAL_CARDS}, JOKER: 4})
ONE_ROUND = {"target_score": 1}


def all_cards(state: dict) -> Counter:
    cards = Counter(state["stock"]) + Counter(state["discard"])
    for hand in state["hands"]:
        cards += Counter(hand)
    for meld in state["table"]:
        cards += Counter(melds.meld_cards(meld))
    return cards


def table_meld(meld_id: int, owner: int, cards: str, joker_as: str | None = None) -> dict:
    return {"id": meld_id, "owner": owner, **build_meld(cards.split(), joker_as)}


def arranged(hands: list[str], table: list[dict] | None = None, **fields: object) -> dict:
    """A two-seat state in seat 0's play phase with the given hands."""
    state = conformance.new_match(GAME, len(hands), 1, ONE_ROUND)
    state["hands"] = [hand.split() for hand in hands]
    state["table"] = table or []
    state["next_meld_id"] = len(state["table"])
    state["phase"] = "play"
    state["turn"] = 0
    state.update(fields)
    return state


def random_states(seed: int, n_players: int, steps: int, options: dict | None = None) -> dict:
    """The state after ``steps`` actions of random play (the rollout policy
    half of the time, so that melds reach the table)."""
    rng = random.Random(seed)
    state = conformance.new_match(GAME, n_players, seed, {**ONE_ROUND, **(options or {})})
    for _ in range(steps):
        seats = GAME.to_act(state)
        if not seats:
            break
        seat = seats[0]
        if rng.random() < 0.5:
            action = bots.rollout_action(state, seat, rng)
        else:
            action = rng.choice(GAME.legal_actions(state, seat))
        GAME.apply(state, seat, action)
    return state


# -- determinize -------------------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    n_players=st.integers(2, 6),
    steps=st.integers(0, 50),
    opening_minimum=st.sampled_from([0, 51]),
)
def test_determinize_gives_every_seat_the_same_view(
    seed: int, n_players: int, steps: int, opening_minimum: int
) -> None:
    state = random_states(seed, n_players, steps, {"opening_minimum": opening_minimum})
    before = mcts.clone(state)
    rng = random.Random(seed)
    for seat in [None, *range(n_players)]:
        world = GAME.determinize(state, seat, rng)
        assert GAME.view(world, seat) == GAME.view(state, seat)
        assert all_cards(world) == FULL_DECK
        assert GAME.to_act(world) == GAME.to_act(state)
        assert state == before, "determinize leaves the state untouched"


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), n_players=st.integers(2, 4), steps=st.integers(0, 40))
def test_determinize_depends_only_on_the_view(seed: int, n_players: int, steps: int) -> None:
    """Two states a seat cannot tell apart give the same world for one rng."""
    state = random_states(seed, n_players, steps)
    for seat in [None, *range(n_players)]:
        other = GAME.determinize(state, seat, random.Random(seed + 1))
        assert GAME.determinize(state, seat, random.Random(7)) == GAME.determinize(
            other, seat, random.Random(7)
        )


def test_determinize_resamples_other_hands_the_stock_and_the_seed() -> None:
    state = random_states(3, 3, 10)
    worlds = [GAME.determinize(state, 0, random.Random(seed)) for seed in range(5)]
    for world in worlds:
        assert sorted(world["hands"][0]) == sorted(state["hands"][0])
        assert [len(hand) for hand in world["hands"]] == [len(h) for h in state["hands"]]
        assert len(world["stock"]) == len(state["stock"])
        assert world["discard"] == state["discard"] and world["table"] == state["table"]
    assert any(Counter(w["hands"][1]) != Counter(state["hands"][1]) for w in worlds)
    assert any(Counter(w["hands"][2]) != Counter(state["hands"][2]) for w in worlds)
    assert any(w["stock"] != state["stock"] for w in worlds)
    assert len({w["rng"] for w in worlds}) == len(worlds)


def test_a_spectator_world_resamples_every_hand() -> None:
    state = random_states(4, 2, 6)
    worlds = [GAME.determinize(state, None, random.Random(seed)) for seed in range(5)]
    for seat in range(2):
        assert any(Counter(w["hands"][seat]) != Counter(state["hands"][seat]) for w in worlds)


def test_determinized_worlds_play_on_to_the_end() -> None:
    state = random_states(5, 2, 12)
    world = GAME.determinize(state, 1, random.Random(0))
    rng = random.Random(0)
    while seats := GAME.to_act(world):
        GAME.apply(world, seats[0], bots.rollout_action(world, seats[0], rng))
    assert GAME.outcome(world) is not None


# -- the evaluation ------------------------------------------------------------


def test_shape_reads_melds_partials_and_lone_cards() -> None:
    seen = Counter(["7S", "7H", "7D", "5H", "6H", "2C"])
    shaped = bots.shape(["7S", "7H", "7D", "5H", "6H", "2C"], seen, set(), laid_down=False)
    assert (shaped.ready, shaped.partials, shaped.lone) == (3, 1, 1)
    assert shaped.points == 7 * 3 + 5 + 6 + 2
    # The partial 5H 6H has 3 outs (two 4H, one 7H: the other is in the set).
    assert shaped.needs == pytest.approx(1 - 3 * bots.OUT_CREDIT + bots.LONE_NEEDS)


def test_shape_counts_a_dead_partial_as_two_lone_cards() -> None:
    seen = Counter(["5H", "7H", "6H", "6H"])
    shaped = bots.shape(["5H", "7H"], seen, set(), laid_down=True)
    assert shaped.partials == 1 and shaped.needs == bots.DEAD_PARTIAL_NEEDS


def test_shape_lets_a_joker_complete_a_partial_and_cards_fit_the_table() -> None:
    seen = Counter(["9S", "9D", "JOKER", "4C"])
    shaped = bots.shape(["9S", "9D", "JOKER", "4C"], seen, {"4C"}, laid_down=True)
    assert (shaped.ready, shaped.layable, shaped.needs) == (3, 1, 0)


def test_a_pending_discard_needs_nothing() -> None:
    hand = ["2S", "9D"]
    assert bots.shape(hand, Counter(hand), set(), True).needs == 2 * bots.LONE_NEEDS
    assert bots.shape(hand, Counter(hand), set(), True, pending_discard=True).needs == 2


def test_laying_down_is_worth_more_than_keeping_melds_in_hand() -> None:
    state = arranged(["7S 7H 7D 2C 9D", "2S 3S 4S 5S 6S"])
    melded = mcts.clone(state)
    GAME.apply(melded, 0, {"type": "meld", "melds": [{"cards": ["7S", "7H", "7D"]}]})
    assert bots.evaluate(melded, 0) > bots.evaluate(state, 0)


def test_the_winners_own_melds_do_not_spare_the_others_the_rami_sec() -> None:
    """Rami sec: "if the winner goes out while no other player has laid down
    anything this round, each other player scores 200"; the winner's melds
    do not count."""
    two = arranged(["7S 7H 7D 2C", "2S 3S 4S 5S 6S"], laid_down=[True, False])
    assert bots._stake(two, 1, 35, winner=0) == rules.RAMI_SEC
    assert bots._stake(two, 0, 35, winner=1) == 35
    three = arranged(["7S 7H 7D", "2S 3S 4S", "9C 9D"], laid_down=[True, False, False])
    # the third seat may still lay down before the winner goes out
    assert bots._stake(three, 1, 35, winner=0) == (rules.NOT_LAID_DOWN + rules.RAMI_SEC) / 2
    three["laid_down"] = [False, False, True]
    assert bots._stake(three, 1, 35, winner=0) == rules.NOT_LAID_DOWN


def test_greedy_lays_down_its_melds_before_anyone_has() -> None:
    """Laying down first spares the other seat nothing: it still pays 200 if
    it has laid nothing down when this seat goes out. (A greedy that thought
    otherwise held its melds back.)"""
    state = arranged(
        ["10D 4C 4D 5C 5H 5S 5S 7S 8D AD JOKER KD QC QD", "2S 3S 4S 6H 9C 9D JC JH KS KC 3D 6D 8C"]
    )
    assert bots.greedy(state, 0, random.Random(1))["type"] == "meld"


def test_a_hand_closer_to_going_out_is_worth_more() -> None:
    close = arranged(["5H 6H", "2S 3S 4S 5S 6S 8D 9C"], laid_down=[True, True])
    far = arranged(["5H 9C 2D KS", "2S 3S 4S 5S 6S 8D 9C"], laid_down=[True, True])
    assert bots.evaluate(close, 0) > bots.evaluate(far, 0)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), n_players=st.integers(2, 4), steps=st.integers(0, 60))
def test_evaluate_reads_only_what_the_seat_sees(seed: int, n_players: int, steps: int) -> None:
    state = random_states(seed, n_players, steps)
    for seat in range(n_players):
        world = GAME.determinize(state, seat, random.Random(seed))
        assert bots.evaluate(world, seat) == bots.evaluate(state, seat)


def test_a_finished_match_is_valued_by_its_outcome() -> None:
    state = random_states(6, 2, 400)
    assert GAME.outcome(state) is not None
    winner = GAME.outcome(state)["winners"]
    if len(winner) == 1:
        assert bots.evaluate(state, winner[0]) > bots.MATCH_POINTS / 2
        assert bots.evaluate(state, 1 - winner[0]) < -bots.MATCH_POINTS / 2
    assert bots.playout_value(state, state) in ([1.0, 0.0], [0.0, 1.0], [0.5, 0.5])


def test_match_chances_are_decided_at_the_target() -> None:
    state = arranged(["2S", "3S"])
    assert bots.match_chances(state, [0.0, 12.0]) == [1.0, 0.0]
    state["options"] = {**state["options"], "target_score": 500}
    near, far = bots.match_chances(state, [0.0, 12.0]), bots.match_chances(state, [0.0, 200.0])
    assert 0.5 < near[0] < far[0] < 1.0
    assert sum(near) == pytest.approx(1.0)


# -- the policies and the search hooks -------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    n_players=st.integers(2, 4),
    opening_minimum=st.sampled_from([0, 51]),
)
def test_rollout_actions_are_accepted_and_rounds_end(
    seed: int, n_players: int, opening_minimum: int
) -> None:
    """A whole round by the rollout policy alone, each action checked by its
    schema and by ``apply`` (which refuses anything illegal)."""
    rng = random.Random(seed)
    options = {**ONE_ROUND, "opening_minimum": opening_minimum}
    state = conformance.new_match(GAME, n_players, seed, options)
    for _ in range(2_000):
        seats = GAME.to_act(state)
        if not seats:
            break
        action = bots.rollout_action(state, seats[0], rng)
        assert GAME.action_schemas[action["type"]]().load(action) == action
        GAME.apply(state, seats[0], action)
    assert GAME.outcome(state) is not None
    assert all_cards(state) == FULL_DECK


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), steps=st.integers(0, 60))
def test_search_actions_are_legal(seed: int, steps: int) -> None:
    state = random_states(seed, 2, steps)
    for seat in GAME.to_act(state):
        legal = GAME.legal_actions(state, seat)
        narrowed = bots.search_actions(state, seat)
        assert narrowed and all(action in legal for action in narrowed)
        if state["phase"] == "play":
            assert any(action["type"] == "discard" for action in narrowed) or any(
                bots.search_actions(state, seat)
            )


def test_the_search_lays_down_first_then_weighs_the_best_discards() -> None:
    state = arranged(["7S 7H 7D 2C KD", "2S 3S 4S 5S 6S"])
    assert bots.search_actions(state, 0) == [
        {"type": "meld", "melds": [{"cards": ["7S", "7H", "7D"]}]}
    ]
    state["hands"][0] = ["2C", "9D", "KS", "KH", "5D"]
    ranked = bots.ranked_discards(state, 0)
    assert bots.search_actions(state, 0) == [
        {"type": "discard", "card": card} for card in ranked[: bots.SEARCH_DISCARDS]
    ]
    assert sorted(ranked[-2:]) == ["KH", "KS"], "a pair is kept"


def test_rollout_takes_the_discard_into_a_meld() -> None:
    state = arranged(["7S 7H 2C 9D", "2S 3S 4S 5S"], phase="draw", discard=["3D", "7C"])
    action = bots.rollout_action(state, 0, random.Random(0))
    assert action == {"type": "take_discard", "melds": [{"cards": ["7S", "7H", "7C"]}]}


def test_rollout_discards_the_least_connected_card() -> None:
    state = arranged(["5H 6H 9H KS 2D JOKER", "2S 3S 4S 5S"], laid_down=[True, False])
    state["table"] = [table_meld(0, 1, "8C 8D 8S 8H")]
    assert bots.rollout_action(state, 0, random.Random(0)) == {
        "type": "meld",
        "melds": [{"cards": ["5H", "6H", "JOKER"], "joker_as": "4H"}],
    }
    state["hands"][0].remove(JOKER)
    assert bots.rollout_action(state, 0, random.Random(0)) == {"type": "discard", "card": "KS"}


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), steps=st.integers(0, 50))
def test_greedy_plays_legal_actions(seed: int, steps: int) -> None:
    state = random_states(seed, 2, steps)
    for seat in GAME.to_act(state):
        before = mcts.clone(state)
        action = bots.greedy(state, seat, random.Random(seed))
        assert action in GAME.legal_actions(state, seat)
        assert state == before


def test_greedy_lays_down_and_takes_a_useful_discard() -> None:
    state = arranged(["7S 7H 7D 2C 9D", "2S 3S 4S 5S 6S"])
    assert bots.greedy(state, 0, random.Random(0))["type"] == "meld"
    state = arranged(["7S 7H 2C 9D KS", "2S 3S 4S 5S"], phase="draw", discard=["3D", "7C"])
    assert bots.greedy(state, 0, random.Random(0))["type"] == "take_discard"


def test_playout_values_are_chances() -> None:
    state = random_states(8, 2, 4)
    rng = random.Random(0)
    start = mcts.clone(state)
    for _ in range(200):
        seats = GAME.to_act(state)
        if not seats:
            break
        GAME.apply(state, seats[0], bots.rollout_action(state, seats[0], rng))
        values = bots.playout_value(start, state)
        if values is not None:
            assert len(values) == 2 and sum(values) == pytest.approx(1.0)
            assert all(0.0 <= value <= 1.0 for value in values)
            break
    else:
        raise AssertionError("the playout was never valued")


@pytest.mark.parametrize("n_players", [2, 3])
def test_mcts_plays_a_legal_action_within_its_budget(n_players: int) -> None:
    state = random_states(9, n_players, 5)
    seat = GAME.to_act(state)[0]
    action = choose_action(GAME, state, seat, "mcts", random.Random(0), 5.0, iterations=30)
    assert action in GAME.legal_actions(state, seat)


def test_greedy_beats_random() -> None:
    result = arena.run("ducale", ["greedy", "random"], 6, 0, 0, ONE_ROUND)
    assert result["wins"]["greedy"] >= 5


def test_mcts_searches_the_whole_round_in_short_matches() -> None:
    state = conformance.new_match(GAME, 2, 11, ONE_ROUND)
    while GAME.to_act(state):
        seat = GAME.to_act(state)[0]
        policy = "mcts" if seat == 0 else "greedy"
        action = choose_action(GAME, state, seat, policy, random.Random(1), 5.0, iterations=8)
        GAME.apply(state, seat, action)
    assert rules.outcome(state) is not None


def test_the_bots_take_the_discard_into_the_place_of_a_joker() -> None:
    """The taken discard may replace a joker standing for it (RULES.md §4): the
    search considers it and the fast policies play it."""
    state = conformance.new_match(GAME, 2, 1, {})
    state["hands"] = [["9H", "10H", "2S", "KD"], ["2D", "3D", "8C"]]
    state["table"] = [
        {"id": 0, "owner": 1, **build_meld(["7S", "7H", JOKER], "7D")},
        {"id": 1, "owner": 0, **build_meld(["4C", "5C", "6C"])},
    ]
    state["next_meld_id"] = 2
    state["discard"] = ["QS", "7D"]
    state["phase"], state["turn"], state["laid_down"] = "draw", 0, [True, True]
    into_joker = [a for a in bots.search_actions(state, 0) if a.get("swap_joker") == 0]
    assert into_joker
    action = bots.rollout_action(state, 0, random.Random(0))
    assert action == {
        "type": "take_discard",
        "swap_joker": 0,
        "melds": [{"cards": ["9H", "10H", JOKER], "joker_as": "8H"}],
    }
    GAME.apply(state, 0, action)
    assert state["hands"][0] == ["2S", "KD"]
