"""Dékal's bots: determinize resamples exactly the hidden cards and choices;
the grid estimate, the greedy policy and the search hooks behave as their
docstrings say."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.ai import choose_action
from engines.core import State, clone
from engines.dekal import GAME, bots
from engines.dekal.rules import DIRECTIONS, _push, legal_directions, score_grid
from tests.engines import conformance
from tests.engines.test_dekal import WORKED_EXAMPLE, reveal, set_grid, take


def new(n: int = 2, seed: int = 7, **options: object) -> State:
    return conformance.new_match(GAME, n, seed, options)


def face_down_values(state: State) -> list[int]:
    return [
        state["grids"][s][r][c]
        for s in range(state["n_players"])
        for r in range(4)
        for c in range(4)
        if state["grids"][s][r][c] is not None and not state["face_up"][s][r][c]
    ]


def cards(state: State) -> Counter:
    values = [v for grid in state["grids"] for row in grid for v in row if v is not None]
    return Counter(values + state["centre"] + state["reserve"] + state["reserve_drawn"])


def after_turns(turns: int, n: int = 2, seed: int = 3) -> State:
    """A match after ``turns`` whole turns of random play."""
    state = new(n, seed)
    rng = random.Random(seed)
    while state["turn"] <= turns and GAME.to_act(state):
        seat = GAME.to_act(state)[0]
        GAME.apply(state, seat, rng.choice(GAME.legal_actions(state, seat)))
    return state


# -- determinize ----------------------------------------------------------


def test_determinize_deals_the_face_down_cards_and_the_reserve_anew() -> None:
    state = after_turns(5)
    world = GAME.determinize(state, 0, random.Random(1))
    assert face_down_values(world) != face_down_values(state), "it resamples, not copies"
    assert world["reserve"] != state["reserve"]
    assert len(world["reserve"]) == len(state["reserve"])
    assert cards(world) == cards(state) == Counter({v: 10 for v in range(1, 11)})
    assert world["face_up"] == state["face_up"]
    assert world["rng"] != state["rng"]


def test_determinize_resamples_the_face_down_cards_of_the_seat_itself() -> None:
    """Nobody has seen a face-down card, its owner included."""
    state = after_turns(2)
    own = [GAME.determinize(state, 0, random.Random(k))["grids"][0] for k in range(5)]
    assert any(grid != state["grids"][0] for grid in own)


def test_determinize_keeps_the_seat_own_choice_and_resamples_the_others() -> None:
    state = after_turns(3, n=3)
    GAME.apply(state, 0, reveal(0, *_face_down_cell(state, 0)))
    GAME.apply(state, 1, reveal(1, *_face_down_cell(state, 1)))
    seen = set()
    for k in range(20):
        world = GAME.determinize(state, 0, random.Random(k))
        assert world["choices"][0] == state["choices"][0]
        assert world["choices"][2] is None
        choice = world["choices"][1]
        assert not world["face_up"][1][choice["row"]][choice["col"]]
        seen.add((choice["row"], choice["col"]))
    assert len(seen) > 1


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31), turns=st.integers(0, 15), seat=st.sampled_from([0, 1, None]))
def test_determinize_preserves_the_hundred_cards_and_the_view(
    seed: int, turns: int, seat: int | None
) -> None:
    state = after_turns(turns, seed=seed % 1000)
    world = GAME.determinize(state, seat, random.Random(seed))
    assert cards(world) == cards(state)
    assert GAME.view(world, seat) == GAME.view(state, seat)


def _face_down_cell(state: State, seat: int) -> tuple[int, int]:
    return next((r, c) for r in range(4) for c in range(4) if not state["face_up"][seat][r][c])


# -- evaluation ------------------------------------------------------------


def test_a_finished_grid_is_estimated_at_its_exact_score() -> None:
    """The rulebook's example: 5 + 5 + 3 + 4 + 7 = 24."""
    known = [v for row in WORKED_EXAMPLE for v in row]
    assert bots.estimate(known) == score_grid(WORKED_EXAMPLE)["score"] == 24


@settings(max_examples=50, deadline=None)
@given(values=st.lists(st.integers(1, 10), min_size=16, max_size=16))
def test_the_estimate_of_any_full_face_up_grid_is_its_score(values: list[int]) -> None:
    grid = [values[4 * r : 4 * r + 4] for r in range(4)]
    assert bots.estimate(values) == pytest.approx(score_grid(grid)["score"])


def test_unknown_cells_cost_the_expected_card_and_open_sides_discount() -> None:
    assert bots.estimate([0] * 16) == 16 * bots.UNKNOWN_COST
    lone = [0] * 16
    lone[5] = 8  # an inner cell: four face-down neighbours
    assert bots.estimate(lone) == pytest.approx(
        15 * bots.UNKNOWN_COST + 8 * (1 - bots.PAIR_CHANCE) ** 4
    )
    paired = list(lone)
    paired[6] = 8  # two equal face-up cards side by side cancel
    assert bots.estimate(paired) == pytest.approx(14 * bots.UNKNOWN_COST)


def test_evaluate_is_the_best_opponent_estimate_minus_the_seat_own() -> None:
    state = new(3)
    set_grid(state, 0, [[1] * 4] * 4, face_up=True)
    set_grid(state, 1, [[1, 2, 1, 2], [2, 1, 2, 1]] * 2, face_up=True)
    set_grid(state, 2, [[3, 4, 3, 4], [4, 3, 4, 3]] * 2, face_up=True)
    estimates = bots.estimated_totals(state)
    assert estimates == [0, 24, 56]
    assert bots.evaluate(state, 0) == 24
    assert bots.evaluate(state, 1) == -24
    assert bots.evaluate(state, 2) == -56


def test_evaluate_reads_only_what_is_face_up() -> None:
    state = after_turns(6)
    for seat in range(2):
        world = GAME.determinize(state, seat, random.Random(5))
        assert bots.evaluate(world, seat) == bots.evaluate(state, seat)


def test_evaluate_of_a_finished_match_rewards_the_winner() -> None:
    state = after_turns(16)
    assert GAME.outcome(state) is not None
    winners = GAME.outcome(state)["winners"]
    for seat in range(2):
        value = bots.evaluate(state, seat)
        assert (value > 0) == (winners == [seat])


@pytest.mark.parametrize("hole", range(16))
def test_a_push_on_the_flat_grid_matches_the_rules(hole: int) -> None:
    rng = random.Random(hole)
    row, col = divmod(hole, 4)
    for direction in legal_directions({"row": row, "col": col}):
        grid = [[rng.randint(1, 10) for _ in range(4)] for _ in range(4)]
        grid[row][col] = None
        face_up = [[True] * 4 for _ in range(4)]
        known = [v for line in grid for v in line]
        _push(grid, face_up, {"row": row, "col": col}, direction, 11)
        assert bots.pushed(known, hole, direction, 11) == [v for line in grid for v in line]
    assert set(bots.LINES[hole]) == set(DIRECTIONS)


# -- policies --------------------------------------------------------------


def draft_state() -> State:
    """Seat 0 takes; its hole is in the corner (0, 0), so a card enters
    from the right (row 0 becomes [9, 5, 3, new]) or from the bottom
    (column 0 becomes [2, 4, 6, new]); the centre holds 7 and 9. Only the 7
    from the bottom meets its twin, at (3, 1): both cancel.
    """
    state = new()
    GAME.apply(state, 0, reveal(0, 0, 0))
    GAME.apply(state, 1, reveal(1, 0, 0))
    up = [[True] * 4 for _ in range(4)]
    state["grids"][0] = [[None, 9, 5, 3], [2, 8, 1, 6], [4, 10, 2, 8], [6, 7, 3, 1]]
    state["face_up"][0] = up
    state["centre"] = [7, 9]
    state["current"] = 0
    return state


def test_greedy_takes_the_card_that_cancels_a_pair() -> None:
    state = draft_state()
    assert bots.greedy(state, 0, random.Random(1)) == take(7, "bottom")


def test_greedy_reveals_a_face_down_card_of_its_own() -> None:
    state = after_turns(4)
    action = bots.greedy(state, 1, random.Random(2))
    assert action in GAME.legal_actions(state, 1)


def test_the_rollout_policy_plays_legal_moves_to_the_end() -> None:
    state = new(4, seed=21)
    rng = random.Random(1)
    while seats := GAME.to_act(state):
        action = bots.rollout_action(state, seats[0], rng)
        assert action in GAME.legal_actions(state, seats[0])
        GAME.apply(state, seats[0], action)
    assert GAME.outcome(state) is not None


def test_playouts_stop_after_the_horizon_with_values_in_the_unit_interval() -> None:
    start = after_turns(3)
    assert bots.playout_value(start, start) is None
    later = clone(start)
    rng = random.Random(4)
    while later["turn"] < start["turn"] + bots.HORIZON_TURNS:
        assert bots.playout_value(start, later) is None
        seat = GAME.to_act(later)[0]
        GAME.apply(later, seat, rng.choice(GAME.legal_actions(later, seat)))
    values = bots.playout_value(start, later)
    assert values is not None and all(0 < v < 1 for v in values)
    assert sum(values) == pytest.approx(1.0)


def test_mcts_beats_random_in_a_few_short_matches() -> None:
    """A smoke test of strength (the real measure is in docs/clients/bots.md)."""
    wins = 0
    for seed in range(3):
        state = new(2, seed=seed)
        rng = random.Random(seed)
        while seats := GAME.to_act(state):
            seat = seats[0]
            policy = "mcts" if seat == seed % 2 else "random"
            action = choose_action(GAME, state, seat, policy, rng, budget_s=1, iterations=40)
            GAME.apply(state, seat, action)
        wins += GAME.outcome(state)["winners"] == [seed % 2]
    assert wins == 3
