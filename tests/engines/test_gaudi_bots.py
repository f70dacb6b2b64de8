"""The Gaudí tile game's bots: determinize resamples exactly what a seat cannot
see (other hands, the pile, hidden objectives) and keeps what it can; the
evaluation, the greedy policy and the search hooks behave as their
docstrings say."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.ai import choose_action
from engines.core import State, clone
from engines.gaudi import GAME, bots, rules
from tests.engines import conformance

SHORT = {"short_game": True}
OPTIONS = [
    {},
    SHORT,
    {"beginner": True},
    {"short_game": True, "first_player": "random"},
    {"children": True},
]


def new(n: int = 2, seed: int = 7, **options: object) -> State:
    return conformance.new_match(GAME, n, seed, options)


def played(seed: int, steps: int, n: int = 2, options: dict | None = None) -> State:
    """A match after up to ``steps`` random legal actions."""
    state = conformance.new_match(GAME, n, seed, options)
    rng = random.Random(seed)
    for _ in range(steps):
        seats = GAME.to_act(state)
        if not seats:
            break
        GAME.apply(state, seats[0], rng.choice(GAME.legal_actions(state, seats[0])))
    return state


def tiles_in_play(state: State) -> Counter:
    return Counter(
        [p["tile"] for p in state["board"]]
        + [tile for hand in state["hands"] for tile in hand]
        + state["pile"]
    )


def with_board(state: State, tiles: dict[tuple[int, int], str]) -> State:
    """``state`` with exactly these tiles on the table (the start tile included)."""
    state["board"] = [{"q": q, "r": r, "tile": tile} for (q, r), tile in tiles.items()]
    return state


# -- determinize ----------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    n=st.integers(2, 6),
    options=st.sampled_from(OPTIONS),
    steps=st.integers(0, 80),
    sampler=st.integers(0, 2**31),
)
def test_determinize_keeps_every_view_and_the_legal_actions(
    seed: int, n: int, options: dict, steps: int, sampler: int
) -> None:
    state = played(seed, steps, n, options)
    before = clone(state)
    rng = random.Random(sampler)
    for seat in [None, *range(n)]:
        world = GAME.determinize(state, seat, rng)
        assert GAME.view(world, seat) == GAME.view(state, seat)
        if seat is not None and seat in GAME.to_act(state):
            assert GAME.legal_actions(world, seat) == GAME.legal_actions(state, seat)
        assert tiles_in_play(world) - Counter(rules.BOX) == Counter()
        if not options.get("short_game"):
            assert tiles_in_play(world) == Counter(rules.BOX)
    assert state == before


def test_determinize_deals_the_other_hands_and_the_pile_anew() -> None:
    state = played(seed=3, steps=10)
    seat = state["active"]
    worlds = [GAME.determinize(state, seat, random.Random(i)) for i in range(10)]
    for world in worlds:
        assert world["hands"][seat] == state["hands"][seat]
        assert world["objectives"][seat] == state["objectives"][seat]
        assert len(world["pile"]) == len(state["pile"])
    assert len({tuple(world["hands"][1 - seat]) for world in worlds}) > 1
    assert len({tuple(world["pile"]) for world in worlds}) > 1
    assert len({world["rng"] for world in worlds}) == len(worlds)


def test_determinize_redeals_hidden_objectives_from_the_cards_left() -> None:
    """With 2 players no card is shared: the other holds neither of the
    seat's cards, and every other pair is sampled."""
    state = new(seed=4)
    mine = state["objectives"][0]
    dealt = {
        tuple(GAME.determinize(state, 0, random.Random(i))["objectives"][1].values())
        for i in range(60)
    }
    assert len(dealt) == 4
    assert all(animal != mine["animal"] and colour != mine["colour"] for animal, colour in dealt)


def test_determinize_for_a_spectator_resamples_every_hand_and_objective() -> None:
    state = played(seed=5, steps=6)
    worlds = [GAME.determinize(state, None, random.Random(i)) for i in range(20)]
    for seat in range(2):
        assert len({tuple(world["hands"][seat]) for world in worlds}) > 1
        assert len({tuple(world["objectives"][seat].values()) for world in worlds}) > 1


def test_public_objectives_are_kept() -> None:
    for state in (new(seed=6, beginner=True), played(seed=6, steps=500, options=SHORT)):
        world = GAME.determinize(state, 0, random.Random(1))
        assert world["objectives"] == state["objectives"]


def test_determinize_depends_only_on_what_the_seat_sees() -> None:
    for steps in (0, 15, 40):
        state = played(seed=8, steps=steps, n=3)
        for seat in range(3):
            twin = GAME.determinize(state, seat, random.Random(99))
            first = GAME.determinize(state, seat, random.Random(1))
            second = GAME.determinize(twin, seat, random.Random(1))
            assert first == second


def test_candidates_follow_the_markers_on_the_table() -> None:
    """Every animal the other marked matches one of its cards; with 2
    players, an unmarked animal matching the seat's cards was the other's,
    and matches none of its cards."""
    state = new(seed=9)
    state["objectives"] = [
        {"animal": "starfish", "colour": "orange"},
        {"animal": "snail", "colour": "green"},
    ]
    before = rules.objective_candidates(state, 0, 1)
    assert len(before) == 4
    state["animals"] = [{"q": 0, "r": 0, "animal": "snail", "colour": "blue", "marker": 1}]
    after = rules.objective_candidates(state, 0, 1)
    assert {(o["animal"], o["colour"]) for o in after} == {
        ("snail", "green"),
        ("snail", "blue"),
        ("jellyfish", "blue"),
    }
    state["animals"].append(
        {"q": 3, "r": 0, "animal": "jellyfish", "colour": "orange", "marker": None}
    )
    assert {(o["animal"], o["colour"]) for o in rules.objective_candidates(state, 0, 1)} == {
        ("snail", "green"),
        ("snail", "blue"),
    }
    state["markers"][1] = 0  # out of markers: an unmarked animal tells nothing
    assert len(rules.objective_candidates(state, 0, 1)) == 3


@pytest.mark.parametrize("n", [2, 3, 4])
def test_sampled_objectives_explain_the_markers(n: int) -> None:
    state = played(seed=10 + n, steps=60, n=n)
    assert any(animal["marker"] is not None for animal in state["animals"])
    for seat in range(n):
        for i in range(5):
            world = GAME.determinize(state, seat, random.Random(i))
            for animal in world["animals"]:
                owner = animal["marker"]
                if owner is not None:
                    objective = world["objectives"][owner]
                    assert animal["animal"] == objective["animal"] or (
                        animal["colour"] == objective["colour"]
                    )


def stuck(pile: list[str]) -> State:
    """Seat 0 to act with no tile that fits next to the start tile ``OGB``
    (every third differs from it), the pile as given."""
    state = with_board(new(seed=12), {(0, 0): "OGB"})
    state["hands"] = [["GBO", "GBO", "BOG"], ["OOO", "GGG", "BBB"]]
    state["pile"] = pile
    return state


@pytest.mark.parametrize(
    ("pile", "kind"),
    [(["GBO", "BOG", "OGB"], "exchange"), (["GBO", "BOG", "BOG"], "pass")],
)
def test_determinize_keeps_what_the_exchange_or_the_pass_tells(pile: list[str], kind: str) -> None:
    state = stuck(pile)
    assert {action["type"] for action in GAME.legal_actions(state, 0)} == {kind}
    for i in range(30):
        world = GAME.determinize(state, 0, random.Random(i))
        assert GAME.legal_actions(world, 0) == GAME.legal_actions(state, 0)


# -- evaluation -------------------------------------------------------------


def test_objective_weights_are_exact_for_the_seat_and_averaged_for_the_others() -> None:
    state = new(seed=13)
    state["objectives"] = [
        {"animal": "starfish", "colour": "orange"},
        {"animal": "snail", "colour": "green"},
    ]
    mine, theirs = bots.objective_weights(state, 0)
    assert mine[0][0] == 2.0 and mine[0][1] == 1.0 and mine[1][0] == 1.0 and mine[1][1] == 0.0
    # The other holds snail or jellyfish, green or blue: each with chance 1/2.
    assert theirs[0][0] == 0.0
    assert theirs[1][1] == pytest.approx(1.0)
    assert theirs[0][1] == pytest.approx(0.5)


def test_evaluate_counts_points_and_is_antisymmetric() -> None:
    state = played(seed=14, steps=30, options={"beginner": True})
    assert bots.evaluate(state, 0) == pytest.approx(-bots.evaluate(state, 1))
    marked = clone(state)
    objective = marked["objectives"][0]
    marked["animals"].append(
        {"q": 50, "r": 50, "animal": objective["animal"], "colour": objective["colour"]}
        | {"marker": 0}
    )
    assert bots.evaluate(marked, 0) == pytest.approx(bots.evaluate(state, 0) + 2)


def test_evaluate_reads_only_what_the_seat_sees() -> None:
    state = played(seed=15, steps=25)
    for seat in range(2):
        world = GAME.determinize(state, seat, random.Random(3))
        assert bots.evaluate(world, seat) == pytest.approx(bots.evaluate(state, seat))


def test_an_open_site_is_a_threat_when_the_other_moves_next() -> None:
    """Two hexes of the starfish site (0, 0) paved in orange: whoever fills
    (0, 1) completes it. It counts for the seat to move."""
    state = with_board(new(seed=16, beginner=True), {(0, 0): "OGB", (1, 0): "OBB"})
    state["objectives"] = [
        {"animal": "snail", "colour": "blue"},
        {"animal": "starfish", "colour": "orange"},
    ]
    state["animals"] = []
    state["active"] = 1
    threatened = bots.evaluate(state, 0)
    state["active"] = 0
    assert bots.evaluate(state, 0) > threatened
    quiet = with_board(clone(state), {(0, 0): "OGB"})
    quiet["active"] = 1
    assert bots.evaluate(quiet, 0) > threatened


def test_a_finished_game_is_valued_by_its_outcome() -> None:
    state = played(seed=17, steps=1000, options=SHORT)
    result = GAME.outcome(state)
    assert result is not None
    for seat in range(2):
        value = bots.evaluate(state, seat)
        if result["winners"] == [seat]:
            assert value > 50
        elif seat not in result["winners"]:
            assert value < -50
    values = bots.playout_value(state, state)
    assert values is not None and all(0 <= v <= 1 for v in values)
    if len(result["winners"]) == 1:
        assert values[result["winners"][0]] > 0.5


# -- policies ---------------------------------------------------------------


def test_greedy_completes_the_animal_worth_two_points() -> None:
    """Orange starfish on (0, 0) and (1, 0): a tile with an orange starfish
    on (0, 1) completes an animal matching both of seat 0's cards."""
    state = with_board(new(seed=18), {(0, 0): "OGB", (1, 0): "OBB"})
    state["objectives"][0] = {"animal": "starfish", "colour": "orange"}
    state["hands"][0] = ["GGG", "OGG", "BBB"]
    action = bots.greedy(state, 0, random.Random(1))
    assert {"tile": "OGG", "q": 0, "r": 1} in action["tiles"]
    events = GAME.apply(state, 0, action)
    assert any(e["type"] == "animal_completed" and e["marker"] == 0 for e in events)


def test_greedy_exchanges_when_stuck_and_passes_when_it_must() -> None:
    exchanging = stuck(["GBO", "BOG", "OGB"])
    action = bots.greedy(exchanging, 0, random.Random(1))
    assert action in GAME.legal_actions(exchanging, 0) and action["type"] == "exchange"
    passing = stuck(["GBO", "BOG", "BOG"])
    assert bots.greedy(passing, 0, random.Random(1)) == {"type": "pass"}


def test_ranked_placements_are_every_placement_best_first() -> None:
    state = played(seed=19, steps=12)
    seat = state["active"]
    legal = GAME.legal_actions(state, seat)
    ranked = bots.ranked_placements(state, seat, legal, random.Random(2))
    assert sorted(map(str, (a for _, a in ranked))) == sorted(map(str, legal))
    values = [value for value, _ in ranked]
    assert values == sorted(values, reverse=True)
    assert bots.greedy(state, seat, random.Random(2)) == ranked[0][1]


def test_search_actions_are_the_best_legal_placements() -> None:
    """Once the pile is low: a few placements, the best by the evaluation first."""
    state = played(seed=20, steps=48)
    assert len(state["pile"]) <= bots.LATE_PILE
    seat = state["active"]
    candidates = bots.search_actions(state, seat)
    legal = GAME.legal_actions(state, seat)
    assert 1 <= len(candidates) <= bots.SEARCH_PLACEMENTS
    assert all(action in legal for action in candidates)
    best = bots.ranked_placements(state, seat, legal, random.Random(0))[0][0]
    first = bots.ranked_placements(state, seat, candidates[:1], random.Random(0))[0][0]
    assert first == pytest.approx(best)


def placed(action: dict) -> list[tuple[int, int, str]]:
    """A placement's tiles, whatever their order."""
    return sorted((t["q"], t["r"], t["tile"]) for t in action["tiles"])


@pytest.mark.parametrize("n", [2, 4])
def test_the_rollout_policy_plays_legal_moves_to_the_end(n: int) -> None:
    state = new(n, seed=21, **SHORT)
    rng = random.Random(1)
    while seats := GAME.to_act(state):
        action = bots.rollout_action(state, seats[0], rng)
        legal = GAME.legal_actions(state, seats[0])
        if action["type"] == "place":
            assert placed(action) in [placed(a) for a in legal if a["type"] == "place"]
        else:
            assert action in legal
        GAME.apply(state, seats[0], action)
    assert GAME.outcome(state) is not None


def test_the_search_weighs_alternatives_at_its_root_only() -> None:
    """In the seat's own sample at the turn searched: the best placements;
    deeper (another seat, a later turn): the fast policy's one placement."""
    state = played(seed=23, steps=14)
    seat = state["active"]
    world = GAME.determinize(state, seat, random.Random(4))
    assert bots.search_actions(world, seat) == bots.search_actions(state, seat)
    GAME.apply(world, seat, bots.search_actions(world, seat)[0])
    other = world["active"]
    (reply,) = bots.search_actions(world, other)
    assert reply == bots.rollout_action(world, other, random.Random(world["rng"]))


def test_a_playout_plays_to_the_end_once_the_pile_is_low() -> None:
    """Late, a playout's values are a game's end: one seat's share of a win
    (or a shared one) plus a margin term; earlier, when the root offers one
    placement only, no playout is played."""
    late = played(seed=22, steps=48)
    assert len(late["pile"]) <= bots.LATE_PILE and not late["finished"]
    assert bots.playout_value(late, late) is None
    values = bots.playout(late, clone(late), random.Random(2))
    assert len(values) == 2 and all(0 <= v <= 1 for v in values)
    assert sum(values) == pytest.approx(1.0)
    early = played(seed=22, steps=4)
    assert len(bots.search_actions(early, early["active"])) == 1
    assert bots.playout(early, clone(early), random.Random(2)) == [0.5, 0.5]


def test_mcts_beats_random_in_short_games() -> None:
    """A smoke test of strength (the real measure is in docs/clients/bots.md)."""
    for seed in range(2):
        state = new(2, seed=seed, **SHORT)
        rng = random.Random(seed)
        while seats := GAME.to_act(state):
            seat = seats[0]
            policy = "mcts" if seat == seed % 2 else "random"
            action = choose_action(GAME, state, seat, policy, rng, budget_s=1, iterations=8)
            GAME.apply(state, seat, action)
        assert GAME.outcome(state)["winners"] == [seed % 2]


# -- the children's game -----------------------------------------------------


@pytest.mark.parametrize("policy", ["random", "greedy", "mcts"])
def test_the_bots_play_the_childrens_game_to_the_end(policy: str) -> None:
    """Every policy plays the children's game (RULES.md §3) by its rules: one
    tile at a time, a legal action each time, to an end with no winner."""
    state = new(3, seed=5, children=True, short_game=True)
    rng = random.Random(5)
    while seats := GAME.to_act(state):
        legal = GAME.legal_actions(state, seats[0])
        action = choose_action(GAME, state, seats[0], policy, rng, budget_s=1, iterations=6)
        assert action in legal
        GAME.apply(state, seats[0], action)
    result = GAME.outcome(state)
    assert result["winners"] == [] and result["tiles_laid"] == len(state["board"]) - 1


def test_a_child_bot_completes_an_animal_when_it_can_and_lays_on() -> None:
    """The children's bots complete the animal a tile closes, and never stop
    while a tile fits."""
    state = new(2, seed=7, children=True)
    state["board"] = [
        {"q": 0, "r": 0, "tile": "OGB"},
        {"q": 1, "r": 0, "tile": "OOO"},
    ]
    state["hands"][0] = ["OBB", "GGG", "BGB"]
    action = bots.greedy(state, 0, random.Random(1))
    assert action == {"type": "place", "tiles": [{"tile": "OBB", "q": 0, "r": 1}]}
    assert bots.search_actions(state, 0)[0] == action
    GAME.apply(state, 0, action)
    assert bots.greedy(state, 0, random.Random(1))["type"] == "place"
    assert bots.evaluate(state, 0) == bots.evaluate(state, 1) == pytest.approx(1 / 3)
