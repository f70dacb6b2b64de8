"""The bots, generically: every registered game that can ``determinize``
keeps each seat's view, gets legal and information-fair decisions from
every policy, within the time budget; the arena counts and rotates."""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines import GAMES
from engines.ai import POLICIES, arena, choose_action, mcts, policies
from engines.core import Game, State, clone
from tests.engines import conformance

BOT_GAMES = [game for game in GAMES.values() if hasattr(game, "determinize")]
CASES = [
    (game, n)
    for game in BOT_GAMES
    for n in range(game.min_players, game.max_players + 1)
    if n <= 3
]
IDS = [f"{game.name}-{n}p" for game, n in CASES]


MAX_STEPS = 240  # random play long enough to reach every phase, short for slow games


def random_states(game: Game, n: int, seed: int, every: int = 1) -> Iterator[State]:
    """The states of a random match, every ``every`` steps, for at most
    ``MAX_STEPS`` steps or to the end."""
    rng = random.Random(seed)
    state = conformance.new_match(game, n, seed)
    for step in range(MAX_STEPS):
        seats = game.to_act(state)
        if step % every == 0 or not seats:
            yield state
        if not seats:
            return
        seat = rng.choice(seats)
        game.apply(state, seat, rng.choice(game.legal_actions(state, seat)))


def some_states(game: Game, n: int, seed: int, count: int) -> list[State]:
    """``count`` states still in play, spread over a random match, copied."""
    states = [clone(state) for state in random_states(game, n, seed) if game.to_act(state)]
    stride = max(1, len(states) // count)
    return states[::stride][:count]


def test_the_policies_are_random_greedy_and_mcts() -> None:
    assert POLICIES == ("random", "greedy", "mcts")


def test_the_bot_games_include_dekal_and_pacal() -> None:
    assert {"dekal", "pacal"} <= {game.name for game in BOT_GAMES}
    for game in BOT_GAMES:
        assert policies.supported(game) == POLICIES


# -- determinize ----------------------------------------------------------


@pytest.mark.parametrize(("game", "n"), CASES, ids=IDS)
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**31), sampler=st.integers(0, 2**31))
def test_determinize_gives_every_seat_exactly_the_view_it_had(
    game: Game, n: int, seed: int, sampler: int
) -> None:
    rng = random.Random(sampler)
    for state in random_states(game, n, seed, every=5):
        before = clone(state)
        for seat in [None, *range(n)]:
            world = game.determinize(state, seat, rng)
            assert game.view(world, seat) == game.view(state, seat)
            assert world is not state
            if seat is not None and seat in game.to_act(state):
                assert game.legal_actions(world, seat) == game.legal_actions(state, seat)
        assert state == before, "determinize must leave its input untouched"


@pytest.mark.parametrize(("game", "n"), CASES, ids=IDS)
def test_determinize_depends_only_on_the_seat_view(game: Game, n: int) -> None:
    """Two states a seat cannot tell apart give the same sampled world."""
    for state in some_states(game, n, seed=5, count=8):
        for seat in range(n):
            twin = game.determinize(state, seat, random.Random(99))
            assert game.view(twin, seat) == game.view(state, seat)
            first = game.determinize(state, seat, random.Random(1))
            second = game.determinize(twin, seat, random.Random(1))
            assert first == second


@pytest.mark.parametrize(("game", "n"), CASES, ids=IDS)
def test_determinized_worlds_play_on_by_the_rules(game: Game, n: int) -> None:
    state = some_states(game, n, seed=8, count=3)[1]
    world = game.determinize(state, game.to_act(state)[0], random.Random(2))
    rng = random.Random(3)
    for _ in range(MAX_STEPS):
        seats = game.to_act(world)
        if not seats:
            assert game.outcome(world) is not None
            break
        assert game.outcome(world) is None
        game.apply(world, seats[0], rng.choice(game.legal_actions(world, seats[0])))


# -- policies ---------------------------------------------------------------


@pytest.mark.parametrize(("game", "n"), CASES, ids=IDS)
@pytest.mark.parametrize("policy", POLICIES)
def test_every_policy_chooses_a_legal_action_without_touching_the_state(
    game: Game, n: int, policy: str
) -> None:
    rng = random.Random(4)
    for state in some_states(game, n, seed=11, count=4):
        before = clone(state)
        seat = game.to_act(state)[-1]
        action = choose_action(game, state, seat, policy, rng, budget_s=0.5, iterations=12)
        assert action in game.legal_actions(state, seat)
        assert state == before


@pytest.mark.parametrize(("game", "n"), CASES, ids=IDS)
@pytest.mark.parametrize("policy", ["greedy", "mcts"])
def test_decisions_do_not_depend_on_hidden_information(game: Game, n: int, policy: str) -> None:
    """Same rng seed, two states with the same view of the seat: same action."""
    for state in some_states(game, n, seed=13, count=4):
        seat = game.to_act(state)[0]
        twin = game.determinize(state, seat, random.Random(7))
        assert twin != state
        actions = [
            choose_action(game, s, seat, policy, random.Random(3), budget_s=5, iterations=15)
            for s in (state, twin)
        ]
        assert actions[0] == actions[1]


@pytest.mark.parametrize("game", BOT_GAMES, ids=[game.name for game in BOT_GAMES])
def test_mcts_stops_when_its_budget_is_spent(game: Game) -> None:
    state = some_states(game, 2, seed=17, count=3)[1]
    seat = game.to_act(state)[0]
    started = time.perf_counter()
    action = choose_action(game, state, seat, "mcts", random.Random(1), budget_s=0.05)
    assert time.perf_counter() - started < 0.05 + 0.5  # a loaded 2-core CI machine stalls
    assert action in game.legal_actions(state, seat)


@pytest.mark.parametrize("game", BOT_GAMES, ids=[game.name for game in BOT_GAMES])
def test_mcts_with_no_budget_still_answers_a_legal_action(game: Game) -> None:
    state = some_states(game, 2, seed=19, count=3)[1]
    seat = game.to_act(state)[0]
    action = choose_action(game, state, seat, "mcts", random.Random(1), budget_s=0.0)
    assert action in game.legal_actions(state, seat)


def test_an_unknown_policy_or_a_seat_not_to_act_is_refused() -> None:
    game = GAMES["dekal"]
    state = conformance.new_match(game, 2, 1)
    with pytest.raises(ValueError, match="unknown policy"):
        choose_action(game, state, 0, "oracle", random.Random(1))
    game.apply(state, 0, game.legal_actions(state, 0)[0])
    with pytest.raises(ValueError, match="not to act"):
        choose_action(game, state, 0, "random", random.Random(1))


def test_a_game_without_bots_offers_random_only() -> None:
    class Bare:
        name = "bare"

    assert policies.supported(Bare()) == ("random",)
    with pytest.raises(ValueError, match="its bots"):
        policies.greedy_action(Bare(), {}, 0, random.Random(1))


def test_outcome_values_share_one_among_the_winners() -> None:
    class Shared:
        def outcome(self, state: State) -> dict:
            return {"winners": [0, 2], "scores": [1, 5, 1]}

    assert mcts.outcome_values(Shared(), {}) == [0.5, 0.0, 0.5]


# -- arena ------------------------------------------------------------------


def test_the_arena_counts_every_match_and_rotates_seats() -> None:
    result = arena.run("dekal", ["greedy", "random"], games=4, budget_ms=10, seed=3)
    assert result["games"] == 4
    assert sum(result["wins"].values()) + result["draws"] + result["no_winner"] == 4
    assert result["moves"]["greedy"] == result["moves"]["random"] == 4 * 32


def test_the_arena_rotation_gives_each_policy_the_first_seat(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    orders = []
    real = arena.play_match

    def spy(
        game: Game,
        state: State,
        order: list[str],
        rng: random.Random,
        budget_s: float,
        iterations: int | None = None,
    ) -> dict:
        orders.append(list(order))
        return real(game, state, order, rng, budget_s, iterations)

    monkeypatch.setattr(arena, "play_match", spy)
    arena.run("pacal", ["random", "greedy"], games=4, budget_ms=1, seed=1)
    assert orders == [["random", "greedy"], ["greedy", "random"]] * 2


def test_the_arena_replays_from_its_seed() -> None:
    first = arena.run("pacal", ["random", "greedy"], games=3, budget_ms=1, seed=9)
    second = arena.run("pacal", ["random", "greedy"], games=3, budget_ms=1, seed=9)
    assert (first["wins"], first["draws"]) == (second["wins"], second["draws"])


def test_the_arena_gives_the_same_counts_in_parallel_with_fixed_iterations() -> None:
    kwargs = {"games": 4, "budget_ms": 60_000, "seed": 5, "iterations": 8}
    alone = arena.run("dekal", ["mcts", "greedy"], **kwargs)
    shared = arena.run("dekal", ["mcts", "greedy"], jobs=2, **kwargs)
    assert (alone["wins"], alone["draws"], alone["moves"]) == (
        shared["wins"],
        shared["draws"],
        shared["moves"],
    )


def test_the_arena_logs_each_match_as_it_ends(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=arena.__name__)
    arena.run("dekal", ["greedy", "random"], games=3, budget_ms=1, seed=4, jobs=2)
    lines = [record.getMessage() for record in caplog.records if record.name == arena.__name__]
    assert [line.split(":")[0] for line in lines] == ["match 1/3", "match 2/3", "match 3/3"]
    assert "wins so far {'greedy': " in lines[-1]


def test_the_arena_plays_a_solitaire_and_counts_losses_apart() -> None:
    result = arena.run("pacal", ["greedy"], games=3, budget_ms=1, seed=2)
    assert result["wins"]["greedy"] + result["no_winner"] == 3


def test_the_arena_refuses_unknown_policies_and_seat_counts() -> None:
    with pytest.raises(ValueError, match="unknown policies"):
        arena.run("dekal", ["mcts", "oracle"], games=1, budget_ms=1, seed=0)
    with pytest.raises(ValueError, match="seats"):
        arena.run("dekal", ["mcts"], games=1, budget_ms=1, seed=0)


def test_the_arena_command_prints_json_counts(capsys: pytest.CaptureFixture) -> None:
    code = arena.main(["--game", "dekal", "--seats", "greedy,random", "--games", "2", "--json"])
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["games"] == 2
    assert set(printed["wins"]) == {"greedy", "random"}
    assert sum(printed["wins"].values()) + printed["draws"] <= 2


def test_the_arena_command_prints_win_rates_with_intervals(capsys: pytest.CaptureFixture) -> None:
    arena.main(["--game", "dekal", "--seats", "greedy,random", "--games", "2"])
    out = capsys.readouterr().out
    assert "95% CI" in out and "greedy" in out and "draws" in out


def test_wilson_intervals_match_known_values() -> None:
    low, high = arena.wilson(180, 200)
    assert low == pytest.approx(0.8506, abs=1e-3)
    assert high == pytest.approx(0.9343, abs=1e-3)
    assert arena.wilson(0, 0) == (0.0, 1.0)
    assert arena.wilson(0, 10)[0] == 0.0
