"""The Gaudí tile game over many random games: contract, replay, invariants, secrecy.

``conformance.random_playout`` lists every legal action at every step, which
costs milliseconds; the property tests instead pick a random legal action
directly (a random tile on a random hex next to the table, sometimes grown to
2 or 3 tiles when apply accepts it), so that thousands of games fit in a few
seconds. The invariants are those RULES.md §3 lists: every site monochrome,
every tile touching another, tile counts never above the box's, markers never
above the supply, and the game always ends.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.core import IllegalAction, redact_events
from engines.gaudi import GAME, rules
from engines.gaudi.geometry import ANIMALS, is_completed, neighbours, site_hexes, sites_of
from tests.engines import conformance

MAX_STEPS = 3000
FULL_LIST_SHARE = 0.03  # steps drawn from the complete legal list: mostly 2 or 3 tiles
OPTIONS = [
    {},
    {"short_game": True},
    {"beginner": True},
    {"short_game": True, "beginner": True, "first_player": "random"},
    {"children": True},
    {"children": True, "short_game": True, "first_player": "random"},
]
END_TURN_SHARE = 0.3  # the children's game: a child who may stop does, this often


# -- A fast random player ---------------------------------------------------------


def _fits_here(board: dict, hex_: tuple[int, int], tile: str) -> bool:
    """Straight from the geometry: every filled hex of each site agrees."""
    return all(
        board[other][animal] == tile[animal]
        for animal, anchor in enumerate(sites_of(hex_))
        for other in site_hexes(anchor)
        if other in board and other != hex_
    )


def _random_single(state: dict, seat: int, rng: random.Random) -> dict | None:
    """A random legal one-tile placement, or None when no hand tile fits.

    Walks the table's tiles and their neighbours in random order and stops at
    the first hex where a hand tile fits. Uses the engine's own colour check
    for speed; the invariants below check the result against the geometry.
    """
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
                return _one_tile(rng.choice(fitting), candidate)
    return None


def _one_tile(tile: str, hex_: tuple[int, int]) -> dict:
    return {"type": "place", "tiles": [{"tile": tile, "q": hex_[0], "r": hex_[1]}]}


def quick_step(state: dict, rng: random.Random) -> tuple[int, dict, list[dict]]:
    """Play one random legal action; return (seat, action, events)."""
    [seat] = GAME.to_act(state)
    if state.get("children") and state["laid_this_turn"] and rng.random() < END_TURN_SHARE:
        return seat, {"type": "end_turn"}, GAME.apply(state, seat, {"type": "end_turn"})
    action = None if rng.random() < FULL_LIST_SHARE else _random_single(state, seat, rng)
    if action is None:
        action = rng.choice(GAME.legal_actions(state, seat))
    elif rng.random() < 0.6:
        for grown in _grown(state, seat, action, rng):
            try:
                return seat, grown, GAME.apply(state, seat, grown)
            except IllegalAction:
                continue
    return seat, action, GAME.apply(state, seat, action)


def _grown(state: dict, seat: int, action: dict, rng: random.Random) -> list[dict]:
    """A few 2- and 3-tile extensions of a one-tile action, most likely illegal."""
    first = action["tiles"][0]
    rest = list(state["hands"][seat])
    rest.remove(first["tile"])
    tries = []
    for _ in range(2):
        if not rest:
            break
        tiles = [first]
        others = list(rest)
        for _ in range(rng.choice([1, 1, 2])):
            if not others:
                break
            anchor = rng.choice(tiles)
            hex_ = rng.choice(neighbours((anchor["q"], anchor["r"])))
            tile = others.pop(rng.randrange(len(others)))
            tiles.append({"tile": tile, "q": hex_[0], "r": hex_[1]})
        tries.append({"type": "place", "tiles": tiles})
    return tries


def quick_game(n_players: int, seed: int, options: dict, check=None) -> dict:
    """A random game to its end, calling ``check(state, events)`` after each action."""
    rng = random.Random(seed)
    state = conformance.new_match(GAME, n_players, seed, options)
    supply = state["markers"][0]
    total = _tile_total(state)
    for _ in range(MAX_STEPS):
        if not GAME.to_act(state):
            break
        assert GAME.outcome(state) is None
        _seat, _action, events = quick_step(state, rng)
        assert _tile_total(state) == total
        assert all(0 <= left <= supply for left in state["markers"])
        if check is not None:
            check(state, events)
    else:
        raise AssertionError("the game did not end")
    return state


def _tile_total(state: dict) -> int:
    return len(state["board"]) + len(state["pile"]) + sum(len(h) for h in state["hands"])


# -- Invariants -------------------------------------------------------------------------


def assert_invariants(state: dict, supply: int) -> None:
    board = {(b["q"], b["r"]): b["tile"] for b in state["board"]}
    assert len(board) == len(state["board"]), "one tile per hex"
    for hex_, tile in board.items():
        for animal, anchor in enumerate(sites_of(hex_)):
            for other in site_hexes(anchor):
                assert board.get(other, tile)[animal] == tile[animal], "every site monochrome"
        if len(board) > 1:
            assert any(n in board for n in neighbours(hex_)), "every tile touches another"
    tiles = Counter(board.values()) + Counter(state["pile"])
    for hand in state["hands"]:
        assert len(hand) <= rules.HAND_SIZE
        tiles += Counter(hand)
    assert all(count <= rules.BOX[kind] for kind, count in tiles.items()), "never above the box"
    assert sum(tiles.values()) == (rules.SHORT_GAME_TILES if state["short_game"] else 84)
    marked = Counter(a["marker"] for a in state["animals"] if a["marker"] is not None)
    for seat, left in enumerate(state["markers"]):
        assert left >= 0 and left + marked[seat] == supply, "markers never above the supply"
    sites = {a for h in board for a in sites_of(h) if is_completed(a, board)}
    assert sorted((a["q"], a["r"]) for a in state["animals"]) == sorted(sites)
    for animal in state["animals"]:
        anchor = (animal["q"], animal["r"])
        index = ANIMALS.index(animal["animal"])
        assert rules.COLOUR_NAMES[board[anchor][index]] == animal["colour"]
        if animal["marker"] is not None:
            objective = state["objectives"][animal["marker"]]
            assert objective["animal"] == animal["animal"] or (
                objective["colour"] == animal["colour"]
            )


def assert_finished(state: dict) -> None:
    assert state["finished"] and GAME.to_act(state) == []
    if state["end_reason"] == "hand_and_pile_empty":
        assert not state["pile"] and any(not hand for hand in state["hands"])
    else:
        board = rules._board_map(state)
        everything = [t for hand in state["hands"] for t in hand] + state["pile"]
        assert not any(
            _fits_here(board, n, t)
            for h in board
            for n in neighbours(h)
            if n not in board
            for t in set(everything)
        )
    result = GAME.outcome(state)
    assert GAME.outcome_schema().validate(result) == {}
    assert result["animals_completed"] == len(state["animals"])
    assert result["tiles_laid"] == len(state["board"]) - 1
    if state.get("children"):
        assert result["winners"] == [] and result["scores"] == [0] * state["players"]
        assert not state["objectives"] and all(a["marker"] is None for a in state["animals"])
        return
    scores = [0] * state["players"]
    for animal in state["animals"]:
        if animal["marker"] is not None:
            objective = state["objectives"][animal["marker"]]
            both = objective == {"animal": animal["animal"], "colour": animal["colour"]}
            scores[animal["marker"]] += 2 if both else 1
    assert result["scores"] == scores
    assert result["winners"] == [s for s, p in enumerate(scores) if p == max(scores)]


# -- Contract and replay --------------------------------------------------------------------


@pytest.mark.parametrize("n_players", range(2, 7))
def test_conformance_with_views_for_every_player_count(n_players):
    options = OPTIONS[n_players % len(OPTIONS)]
    state, log = conformance.random_playout(GAME, n_players, n_players, options)
    assert conformance.replay(GAME, n_players, n_players, log, options) == state
    assert_finished(state)


@pytest.mark.parametrize("n_players", range(2, 7))
@pytest.mark.parametrize("options", OPTIONS)
def test_random_playouts_replay_exactly(n_players, options):
    seed = 100 + n_players
    state, log = conformance.random_playout(GAME, n_players, seed, options, check_views=False)
    assert conformance.replay(GAME, n_players, seed, log, options) == state
    assert_finished(state)


@pytest.mark.parametrize("n_players", range(2, 7))
def test_quick_games_replay_exactly(n_players):
    for seed in range(10):
        log = []
        rng = random.Random(seed)
        state = conformance.new_match(GAME, n_players, seed)
        while GAME.to_act(state):
            seat, action, _ = quick_step(state, rng)
            log.append((seat, action))
        assert conformance.replay(GAME, n_players, seed, log) == state


# -- Property tests over thousands of games ------------------------------------------------------


@settings(max_examples=500, deadline=None, derandomize=True)
@given(
    n_players=st.integers(2, 6),
    seed=st.integers(0, 2**40),
    short_game=st.booleans(),
    beginner=st.booleans(),
)
def test_invariants_hold_and_every_game_ends(n_players, seed, short_game, beginner):
    options = {"short_game": short_game, "beginner": beginner}
    steps = []

    def check(state, _events):
        steps.append(1)
        if len(steps) % 15 == 0:
            assert_invariants(state, rules.MARKERS_BY_PLAYERS[n_players])

    state = quick_game(n_players, seed, options, check)
    assert_invariants(state, rules.MARKERS_BY_PLAYERS[n_players])
    assert_finished(state)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(n_players=st.integers(2, 6), seed=st.integers(0, 2**40), short_game=st.booleans())
def test_children_games_keep_the_invariants_and_end_with_no_winner(n_players, seed, short_game):
    """The children's game: every site monochrome, every tile touching, no
    marker ever laid (a supply of 0), and an end with no winner."""
    options = {"children": True, "short_game": short_game}
    steps = []

    def check(state, _events):
        steps.append(1)
        if len(steps) % 15 == 0:
            assert_invariants(state, 0)

    state = quick_game(n_players, seed, options, check)
    assert_invariants(state, 0)
    assert_finished(state)


@settings(max_examples=700, deadline=None, derandomize=True)
@given(n_players=st.integers(2, 6), seed=st.integers(0, 2**40), first=st.integers(0, 5))
def test_short_games_end_with_a_winner(n_players, seed, first):
    options = {"short_game": True, "first_player": first % n_players}
    state = quick_game(n_players, seed, options)
    assert_invariants(state, rules.MARKERS_BY_PLAYERS[n_players])
    assert_finished(state)


# -- Hidden information ---------------------------------------------------------------------------


def _resampled(state: dict, seat: int | None, rng: random.Random) -> dict:
    """The state with everything ``seat`` cannot see redrawn: the other hands and
    the pile shuffled together, the others' objectives redealt (while secret)."""
    other = dict(state)
    others = [s for s in range(state["players"]) if s != seat]
    pool = list(state["pile"]) + [t for s in others for t in state["hands"][s]]
    rng.shuffle(pool)
    hands = [list(h) for h in state["hands"]]
    for s in others:
        hands[s] = [pool.pop() for _ in state["hands"][s]]
    other["hands"], other["pile"] = hands, pool
    if not (state["beginner"] or state["finished"] or state.get("children")):
        objectives = [dict(o) for o in state["objectives"]]
        for s in others:
            objectives[s] = {
                "animal": rng.choice(ANIMALS),
                "colour": rng.choice(rules.COLOURS),
            }
        other["objectives"] = objectives
    return other


PUBLIC_EVENT_KEYS = {
    "tile_placed": {"type", "seat", "q", "r", "tile"},
    "animal_completed": {"type", "seat", "q", "r", "animal", "colour", "marker"},
    "refill": {"type", "seat", "count"},
    "exchange": {"type", "seat"},
    "pass": {"type", "seat"},
    "end_turn": {"type", "seat"},
    "turn": {"type", "seat", "turn"},
    "match_over": {
        "type",
        "winners",
        "scores",
        "marked",
        "objectives",
        "reason",
        "animals_completed",
        "tiles_laid",
    },
}


def _check_events(state: dict, events: list[dict]) -> None:
    for event in events:
        if "to" in event:
            assert event["to"] == [event["seat"]], "private events go to the actor alone"
            assert event["type"] in {"drew", "exchanged"}
        else:
            assert set(event) == PUBLIC_EVENT_KEYS[event["type"]], event
    for viewer in [None, *range(state["players"])]:
        for event in redact_events(events, viewer):
            if event["type"] in {"drew", "exchanged"}:
                assert viewer == event["seat"]


@pytest.mark.parametrize("options", OPTIONS)
def test_views_and_events_never_reveal_hidden_information(options):
    """A seat's (or a spectator's) view does not change when what it may not see is
    redrawn; public events carry no hand, pile or secret objective."""
    rng = random.Random(1)

    def check(state, events):
        _check_events(state, events)
        for viewer in [None, *range(state["players"])]:
            view = GAME.view(state, viewer)
            assert view == GAME.view(_resampled(state, viewer, rng), viewer)
            if not (state["finished"] or state["beginner"]):
                assert all(
                    p["objectives"] is None and p["points"] is None
                    for p in view["players"]
                    if p["seat"] != viewer
                )

    for seed in range(12):
        quick_game(2 + seed % 5, seed, options, check)


def test_legal_actions_reveal_nothing_but_the_exchange_rule():
    """Legal placements depend only on the board and the seat's own hand."""
    rng = random.Random(3)
    for seed in range(6):
        state = conformance.new_match(GAME, 3, seed)
        for _ in range(12):
            if not GAME.to_act(state):
                break
            seat = state["active"]
            actions = GAME.legal_actions(state, seat)
            if actions[0]["type"] == "place":
                assert GAME.legal_actions(_resampled(state, seat, rng), seat) == actions
            quick_step(state, rng)
