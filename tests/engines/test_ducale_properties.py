"""Ducale: random games, replays, invariants and hidden information.

RULES.md §4's invariants: the 108 cards are conserved, every meld on the table
is valid, every round ends when the table bounds the stock's rebuilds
(``max_stock_rebuilds``); without a bound (the rulebook's rule) a round that
does not end goes on only by rebuilding the stock (a blocked table). Hands
and the stock never reach another seat, a spectator, or the public events.
"""

from __future__ import annotations

import copy
import itertools
import random
from collections import Counter
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.core import redact_events
from engines.ducale import GAME, melds, rules
from engines.ducale.melds import JOKER
from tests.engines import conformance

CARD_SET = frozenset(melds.CARDS)
FULL_DECK = Counter({**{card: 2 for card in melds.REAL_CARDS}, JOKER: 4})
ONE_ROUND = {"target_score": 1}
ROUND_STEPS = 3_000


def all_cards(state: dict) -> Counter:
    cards = [*state["stock"], *state["discard"]]
    for hand in state["hands"]:
        cards += hand
    for meld in state["table"]:
        cards += [slot["card"] for slot in meld["cards"]]
    return Counter(cards)


def check_invariants(state: dict, checked: dict[int, dict] | None = None) -> None:
    """The invariants; ``checked`` remembers the melds already validated (the
    engine replaces a meld's dict whenever the meld changes)."""
    assert all_cards(state) == FULL_DECK, "the 108 cards are conserved"
    checked = {} if checked is None else checked
    for meld in state["table"]:
        if checked.get(id(meld)) is not meld:
            melds.validate_meld(meld)
            checked[id(meld)] = meld
    ids = [meld["id"] for meld in state["table"]]
    assert ids == sorted(set(ids)) and state["next_meld_id"] > max(ids, default=-1)
    if state["phase"] != "over":
        assert all(state["hands"]), "a round in play has no empty hand"
        assert state["stock"] or state["discard"] or state["phase"] == "play"


def eager_policy(rng: random.Random, actions: list[dict]) -> dict:
    """Random, but melds, lays off and swaps when it can, so that rounds are short."""
    placing = [a for a in actions if a["type"] not in ("draw", "discard")]
    if placing and rng.random() < 0.9:
        return rng.choice(placing)
    return rng.choice(actions)


def play_round(
    seed: int, n_players: int, options: dict[str, Any], check: bool = True
) -> dict | None:
    """Play one round with the eager policy, checking the invariants at each step;
    None when a round without a bound on the stock's rebuilds does not end (then
    it only goes on by rebuilding the stock, again and again)."""
    rng = random.Random(seed)
    state = conformance.new_match(GAME, n_players, seed, {**options, **ONE_ROUND})
    checked: dict[int, dict] = {}
    for _ in range(ROUND_STEPS):
        seats = GAME.to_act(state)
        if not seats:
            return state
        action = eager_policy(rng, GAME.legal_actions(state, seats[0]))
        GAME.apply(state, seats[0], action)
        if check:
            check_invariants(state, checked)
    if options.get("max_stock_rebuilds") is None and state["stock_rebuilds"] >= 10:
        return None
    raise AssertionError("the round did not end")


# -- conformance and replay ------------------------------------------------------------


@pytest.mark.parametrize("n_players", range(2, 7))
@pytest.mark.parametrize("opening_minimum", [0, 51])
def test_random_rounds_replay_exactly(n_players: int, opening_minimum: int) -> None:
    options = {**ONE_ROUND, "opening_minimum": opening_minimum}
    for seed in range(4):
        state, log = conformance.random_playout(
            GAME, n_players, seed, options, check_views=(seed == 0 and n_players <= 3)
        )
        assert conformance.replay(GAME, n_players, seed, log, options) == state
        check_invariants(state)


@pytest.mark.parametrize("n_players", range(2, 7))
def test_random_games_to_500_end_and_replay(n_players: int) -> None:
    options = {"opening_minimum": 51 if n_players % 2 else 0}
    state, log = conformance.random_playout(GAME, n_players, n_players, options, check_views=False)
    assert conformance.replay(GAME, n_players, n_players, log, options) == state
    assert max(state["totals"]) >= 500
    assert [entry["round"] for entry in state["history"]] == list(range(1, state["round"] + 1))
    outcome = GAME.outcome(state)
    assert outcome["scores"] == state["totals"]
    assert outcome["winners"] == [
        s for s, t in enumerate(state["totals"]) if t == min(state["totals"])
    ]
    assert sum(state["totals"]) == sum(sum(entry["scores"]) for entry in state["history"])


# -- invariants over many random rounds ----------------------------------------------------


@settings(max_examples=1000, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    n_players=st.integers(2, 6),
    opening_minimum=st.sampled_from([0, 51]),
    max_stock_rebuilds=st.sampled_from([None, 3]),
)
def test_invariants_hold_in_random_rounds(
    seed: int, n_players: int, opening_minimum: int, max_stock_rebuilds: int | None
) -> None:
    """108 cards conserved, every meld valid, the round ends (with a bound on the
    stock's rebuilds), scores as the rules say."""
    options = {"opening_minimum": opening_minimum, "max_stock_rebuilds": max_stock_rebuilds}
    state = play_round(seed, n_players, options)
    if state is None:
        return
    entry = state["history"][-1]
    went_out = entry["went_out"]
    if went_out is not None:
        assert entry["scores"][went_out] == 0 and not state["hands"][went_out]
    for seat, score in enumerate(entry["scores"]):
        if seat == went_out:
            continue
        if entry["rami_sec"]:
            assert score == 200
        elif not state["laid_down"][seat]:
            assert score == 100
        else:
            assert score == rules.hand_points(state["hands"][seat])


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), n_players=st.integers(2, 6))
def test_every_legal_action_is_accepted_and_loads_unchanged(seed: int, n_players: int) -> None:
    """Soundness: at sampled steps, each listed action applies to a copy."""
    rng = random.Random(seed)
    options = {"opening_minimum": rng.choice([0, 51])}
    state = conformance.new_match(GAME, n_players, seed, {**options, **ONE_ROUND})
    for step in range(ROUND_STEPS):
        seats = GAME.to_act(state)
        if not seats:
            break
        actions = GAME.legal_actions(state, seats[0])
        keys = [orjson.dumps(a, option=orjson.OPT_SORT_KEYS) for a in actions]
        assert len(set(keys)) == len(keys), "no action is listed twice"
        if step % 7 == 0:
            for action in actions:
                assert GAME.action_schemas[action["type"]]().load(action) == action
                GAME.apply(copy.deepcopy(state), seats[0], action)
        GAME.apply(state, seats[0], eager_policy(rng, actions))


# -- hidden information ---------------------------------------------------------------------


def cards_in(value: Any) -> Counter:
    """Every card string anywhere in a JSON value."""
    found: list[str] = []
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if item in CARD_SET:
                found.append(item)
        elif isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return Counter(found)


def public_cards(state: dict) -> Counter:
    seen = Counter(state["discard"])
    for meld in state["table"]:
        seen.update(melds.meld_cards(meld))
        seen.update(slot["as"] for slot in meld["cards"] if slot["card"] == JOKER)
    return seen


def resample_hidden(state: dict, seat: int, rng: random.Random) -> dict:
    """The same state with every card ``seat`` cannot see dealt anew."""
    other = orjson.loads(orjson.dumps(state))
    pool = list(other["stock"])
    for player, hand in enumerate(other["hands"]):
        if player != seat:
            pool += hand
    rng.shuffle(pool)
    other["stock"] = [pool.pop() for _ in other["stock"]]
    for player, hand in enumerate(other["hands"]):
        if player != seat:
            other["hands"][player] = [pool.pop() for _ in hand]
    return other


def without_scores(events: list[dict]) -> list[dict]:
    """Round scores depend on hidden hands; they are public once the round ends."""
    hidden_keys = {"scores", "totals", "winners", "rounds"}
    return [{k: v for k, v in event.items() if k not in hidden_keys} for event in events]


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32), n_players=st.integers(2, 6))
def test_views_and_events_never_show_hidden_cards(seed: int, n_players: int) -> None:
    """Every view of every seat and of a spectator holds only the seat's own hand
    and public cards; views do not change when the hidden cards are dealt anew;
    public events are the same whatever the hidden cards are."""
    rng = random.Random(seed)
    state = conformance.new_match(GAME, n_players, seed, ONE_ROUND)
    for step in range(ROUND_STEPS):
        visible = public_cards(state)
        for viewer in [None, *range(n_players)]:
            view = GAME.view(state, viewer)
            own = Counter(state["hands"][viewer]) if viewer is not None else Counter()
            assert cards_in(view) == own + visible
        if step % 5 == 0:
            for viewer in [None, *range(n_players)]:
                other = resample_hidden(state, viewer if viewer is not None else -1, rng)
                assert GAME.view(other, viewer) == GAME.view(state, viewer)
        seats = GAME.to_act(state)
        if not seats:
            break
        actor = seats[0]
        action = eager_policy(rng, GAME.legal_actions(state, actor))
        twin = resample_hidden(state, actor, rng)
        events = GAME.apply(state, actor, action)
        twin_events = GAME.apply(twin, actor, action)
        for watcher in [None, *(s for s in range(n_players) if s != actor)]:
            mine = redact_events(events, watcher)
            assert without_scores(mine) == without_scores(redact_events(twin_events, watcher))
        for event in redact_events(events, None):
            assert event["type"] not in ("card_drawn", "dealt")
        assert orjson.loads(orjson.dumps(events)) == events


# -- opening combinations ----------------------------------------------------------------------


def all_openings(options: list, counts: Counter, minimum: int, must: str | None) -> list[tuple]:
    """Brute force: every set of disjoint melds worth ``minimum`` holding ``must``
    (the same meld twice when the cards are there twice)."""
    found = []
    for size in range(1, sum(counts.values()) // 3 + 1):
        for combo in itertools.combinations_with_replacement(range(len(options)), size):
            used = Counter()
            for index in combo:
                used.update(options[index].cards)
            if any(used[c] > counts[c] for c in used):
                continue
            if sum(options[i].value for i in combo) >= minimum and (not must or used[must]):
                found.append(combo)
    return found


def is_minimal(options: list, combo: tuple, minimum: int, must: str | None) -> bool:
    total = sum(options[i].value for i in combo)
    held = sum(options[i].cards.count(must) for i in combo) if must else 0
    for index in combo:
        for loss, removed in rules._cuts(options[index]):
            if total - loss >= minimum and (not must or held > removed.count(must)):
                return False
    return True


def part_of(small: dict, big: dict) -> bool:
    """Whether ``small`` is ``big`` with some cards trimmed off (see rules._cuts)."""
    if small["kind"] != big["kind"]:
        return False
    if small["kind"] == "set":
        return all(slot in big["cards"] for slot in small["cards"])
    spots = dict(zip(melds.run_positions(big), big["cards"], strict=True))
    return all(
        spots.get(p) == slot
        for p, slot in zip(melds.run_positions(small), small["cards"], strict=True)
    )


def inside(minimal: list, combo: list) -> bool:
    """Each meld of ``minimal`` is part of a different meld of ``combo``."""
    if not minimal:
        return True
    first, rest = minimal[0], minimal[1:]
    return any(
        part_of(first.meld, big.meld) and inside(rest, combo[:i] + combo[i + 1 :])
        for i, big in enumerate(combo)
    )


NEAR_HIGH = [c for c in melds.CARDS if c == JOKER or melds.rank_of(c) in (1, 8, 9, 10, 11, 12, 13)]


@settings(max_examples=60, deadline=None)
@given(
    hand=st.lists(st.sampled_from([*NEAR_HIGH, *NEAR_HIGH]), min_size=6, max_size=10),
    must_index=st.integers(-1, 9),
)
def test_openings_are_the_minimal_ones_and_reach_every_opening(
    hand: list[str], must_index: int
) -> None:
    counts = Counter(hand)
    if counts[JOKER] > 2 or any(n > 2 for n in counts.values()):
        return
    must = hand[must_index] if 0 <= must_index < len(hand) else None
    options = melds.candidate_melds(counts)
    listed = rules.opening_combinations(options, counts, 51, must)
    index = {id(option): i for i, option in enumerate(options)}
    listed_keys = {tuple(sorted(index[id(o)] for o in combo)) for combo in listed}
    brute = all_openings(options, counts, 51, must)
    assert listed_keys == {combo for combo in brute if is_minimal(options, combo, 51, must)}
    for combo in brute:
        melds_of = [options[i] for i in combo]
        assert any(inside(minimal, melds_of) for minimal in listed), "every opening is reachable"


def test_an_opening_may_use_the_same_meld_twice_from_twins() -> None:
    hand = Counter(["QH", "KH", "AH", "QH", "KH", "AH", "2C"])
    options = melds.candidate_melds(hand)
    listed = rules.opening_combinations(options, hand, 51)
    assert [[list(o.cards) for o in combo] for combo in listed] == [
        [["QH", "KH", "AH"], ["QH", "KH", "AH"]]
    ]


def test_opening_combinations_with_twins_and_jokers() -> None:
    hand = Counter(["AH", "AH", "KH", "QH", "JH", "10H", "KS", "KD", "KC", "JOKER"])
    options = melds.candidate_melds(hand)
    listed = rules.opening_combinations(options, hand, 51)
    brute = all_openings(options, hand, 51, None)
    index = {id(option): i for i, option in enumerate(options)}
    assert {tuple(sorted(index[id(o)] for o in c)) for c in listed} == {
        c for c in brute if is_minimal(options, c, 51, None)
    }
