"""Ducale: the legal actions are complete and each is listed once.

The listing is checked against a brute force that tries card lists through
``apply``: every sub-multiset of the hand (with the taken discard, or with the
recovered joker), each meaning of a joker, as a new meld or on every table meld;
for an opening under ``opening_minimum``, every multiset of melds. Whatever
``apply`` accepts, in any spelling, must be listed exactly once, in the spelling
the table keeps (a meld's cards in meld order, a lay-off's in the order they
join the meld), and only single melds outside an opening. A ``take_discard``
with both melds and a lay-off is tried where it is the only way: by a seat that
has not laid down, with melds that leave the taken card to the lay-off (the
others are the same as a take and then a lay-off or melds, as several melds at
once are the same as one by one).
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.core import IllegalAction
from engines.ducale import GAME, melds, rules
from engines.ducale.melds import JOKER, MeldError, build_meld
from tests.engines import conformance

Key = tuple[Any, ...]


def position(
    hand: str,
    table: list[tuple[str, str | None]],
    *,
    phase: str = "play",
    discard: str = "2C",
    laid_down: bool = True,
    opening: int = 0,
) -> dict:
    """Seat 0 to play with ``hand``; the table's melds belong to seat 1."""
    state = conformance.new_match(GAME, 2, 0, {"opening_minimum": opening})
    state["hands"] = [hand.split(), ["2D", "3D"]]
    state["table"] = [
        {"id": i, "owner": 1, **build_meld(cards.split(), joker_as)}
        for i, (cards, joker_as) in enumerate(table)
    ]
    state["next_meld_id"] = len(table)
    state["discard"] = discard.split()
    state["stock"] = ["4C", "5C", "6C"]
    state["phase"] = phase
    state["turn"] = 0
    state["laid_down"] = [laid_down, True]
    return state


# -- the brute force ---------------------------------------------------------------


def key(action: dict) -> Key:
    """What an action does, whatever its spelling: card lists sorted, the melds of
    a combination sorted."""

    def cards(part: dict) -> Key:
        return (part.get("meld"), tuple(sorted(part["cards"])), part.get("joker_as"))

    parts = [cards(action[field]) for field in ("lay_off",) if field in action]
    parts += sorted(cards(spec) for spec in action.get("melds", []))
    if "cards" in action:
        parts.append(cards(action))
    return (
        action["type"],
        action.get("meld"),
        action.get("card"),
        action.get("swap_joker"),
        tuple(parts),
    )


def sub_multisets(counts: Counter[str], smallest: int) -> Iterator[tuple[str, ...]]:
    items = sorted(counts.items())
    for picks in itertools.product(*(range(n + 1) for _, n in items)):
        cards = tuple(card for (card, _), k in zip(items, picks, strict=True) for _ in range(k))
        if len(cards) >= smallest:
            yield cards


def meanings(cards: tuple[str, ...], target: dict | None = None) -> list[str | None]:
    """What a joker among ``cards`` may be said to stand for: any card that shares
    a suit or a rank with the other cards or the target meld (none else can make
    a set or a run with them)."""
    if JOKER not in cards:
        return [None]
    real = [card for card in cards if card != JOKER]
    if target is not None:
        real += [melds.slot_card(slot) for slot in target["cards"]]
    suits = {melds.suit_of(card) for card in real}
    ranks = {melds.rank_of(card) for card in real}
    return [
        card
        for card in melds.REAL_CARDS
        if not real or melds.suit_of(card) in suits or melds.rank_of(card) in ranks
    ]


def spelled(cards: tuple[str, ...], joker_as: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"cards": list(cards)}
    if joker_as is not None:
        spec["joker_as"] = joker_as
    return spec


def valid_melds(pool: Counter[str]) -> list[dict[str, Any]]:
    found = []
    for cards in sub_multisets(pool, 3):
        for joker_as in meanings(cards):
            try:
                build_meld(list(cards), joker_as)
            except MeldError:
                continue
            found.append(spelled(cards, joker_as))
    return found


def meld_lists(pool: Counter[str], opening: bool) -> Iterator[list[dict[str, Any]]]:
    """Single melds; for an opening, every multiset of melds the pool can hold."""
    singles = valid_melds(pool)

    def grow(combo: list[dict[str, Any]], first: int, left: Counter[str]) -> Iterator[list]:
        for index in range(first, len(singles)):
            need = Counter(singles[index]["cards"])
            if all(left[card] >= n for card, n in need.items()):
                yield [*combo, singles[index]]
                if opening:
                    yield from grow([*combo, singles[index]], index, left - need)

    yield from grow([], 0, pool)


def lay_offs(pool: Counter[str], table: list[dict]) -> Iterator[dict[str, Any]]:
    for meld in table:
        for cards in sub_multisets(pool, 1):
            for joker_as in meanings(cards, meld):
                yield {"meld": meld["id"], **spelled(cards, joker_as)}


class Tries:
    """Actions tried through ``apply`` on the state itself (a refused action
    changes nothing; an accepted one is undone from a snapshot)."""

    def __init__(self, state: dict) -> None:
        self.state = state
        self.snapshot = orjson.dumps(state)
        self.accepted: set[Key] = set()

    def attempt(self, action: dict) -> None:
        try:
            GAME.apply(self.state, 0, action)
        except IllegalAction:
            return
        self.accepted.add(key(action))
        self.state.clear()
        self.state.update(orjson.loads(self.snapshot))


def brute_force(state: dict) -> set[Key]:
    hand = Counter(state["hands"][0])
    laid_down = state["laid_down"][0]
    opening = not laid_down and bool(state["options"]["opening_minimum"])
    tries = Tries(state)
    if state["phase"] == "draw":
        tries.attempt({"type": "draw"})
        pool = hand + Counter(state["discard"][-1:])
        for specs in meld_lists(pool, opening):
            tries.attempt({"type": "take_discard", "melds": specs})
        for lay_off in lay_offs(pool, state["table"]) if laid_down else ():
            tries.attempt({"type": "take_discard", "lay_off": lay_off})
        top = state["discard"][-1]
        without = Counter({card: n for card, n in hand.items() if card != top})
        for specs in meld_lists(without, opening) if not laid_down else ():
            left = pool - Counter(card for spec in specs for card in spec["cards"])
            for lay_off in lay_offs(left, state["table"]):
                if top in lay_off["cards"]:
                    tries.attempt({"type": "take_discard", "melds": specs, "lay_off": lay_off})
        take_into_joker(tries, hand, top, laid_down, opening)
        return tries.accepted
    for specs in meld_lists(hand, opening):
        tries.attempt({"type": "meld", "melds": specs})
    for lay_off in lay_offs(hand, state["table"]) if laid_down else ():
        tries.attempt({"type": "lay_off", **lay_off})
    for meld in state["table"] if laid_down else ():
        for card in hand:
            swap = {"type": "swap_joker", "meld": meld["id"], "card": card}
            pool = hand - Counter([card]) + Counter([JOKER])
            for specs in meld_lists(pool, False):
                tries.attempt({**swap, "melds": specs})
            for lay_off in lay_offs(pool, state["table"]):
                tries.attempt({**swap, "lay_off": lay_off})
    for card in hand:
        tries.attempt({"type": "discard", "card": card})
    return tries.accepted


def take_into_joker(
    tries: Tries, hand: Counter[str], top: str, laid_down: bool, opening: bool
) -> None:
    """The taken card in place of a joker of each meld, the joker then melded or
    laid off; melds and then the joker laid off where it is the only way (a seat
    that has not laid down)."""
    table = tries.state["table"]
    pool = hand + Counter([JOKER])
    for index, meld in enumerate(table):
        take = {"type": "take_discard", "swap_joker": meld["id"]}
        try:
            swapped = [*table[:index], melds.swap_joker(meld, top), *table[index + 1 :]]
        except MeldError:
            swapped = table
        for specs in meld_lists(pool, opening):
            tries.attempt({**take, "melds": specs})
        for lay_off in lay_offs(pool, swapped) if laid_down else ():
            tries.attempt({**take, "lay_off": lay_off})
        for specs in meld_lists(hand, opening) if not laid_down else ():
            left = pool - Counter(card for spec in specs for card in spec["cards"])
            for lay_off in lay_offs(left, swapped):
                if JOKER in lay_off["cards"]:
                    tries.attempt({**take, "melds": specs, "lay_off": lay_off})


# -- the checks ----------------------------------------------------------------------


def spelled_as_kept(state: dict, action: dict) -> None:
    """``action`` is accepted, and its card lists are in the order the table keeps."""
    copy = orjson.loads(orjson.dumps(state))
    events = GAME.apply(copy, 0, action)
    for event in events:
        if event["type"] == "melded":
            specs = action["melds"]
            assert [spelled_slots(m["cards"]) for m in event["melds"]] == specs
        if event["type"] == "laid_off":
            lay_off = action.get("lay_off", action)
            expected = {"cards": lay_off["cards"], "joker_as": lay_off.get("joker_as")}
            assert spelled_slots(event["cards"]) == {k: v for k, v in expected.items() if v}


def spelled_slots(slots: list[dict[str, str]]) -> dict[str, Any]:
    jokers = [slot["as"] for slot in slots if slot["card"] == JOKER]
    return spelled(tuple(slot["card"] for slot in slots), jokers[0] if jokers else None)


def check_listing(state: dict) -> list[dict]:
    listed = GAME.legal_actions(state, 0)
    keys = [key(action) for action in listed]
    assert len(set(keys)) == len(keys), "no action is listed twice"
    expected = brute_force(state)
    assert set(keys) - expected == set(), "every listed action is accepted"
    assert expected - set(keys) == set(), "every accepted action is listed"
    for action in listed:
        spelled_as_kept(state, action)
    return listed


HAND_MADE = {
    "a run grows at either end or both": position(
        "3H 4H 8H 9H JOKER 2C", [("5H 6H 7H", None), ("9S 9H 9D", None)]
    ),
    "both aces, or an ace and the joker": position(
        "AH AH JOKER 5C", [(" ".join(melds.card_at(p, "H") for p in range(2, 14)), None)]
    ),
    "one ace that may go low or high": position(
        "AH 2H JOKER", [(" ".join(melds.card_at(p, "H") for p in range(3, 14)), None)]
    ),
    "no joker on a meld that holds one": position(
        "3H 7H 8H JOKER 9C", [("4H JOKER 6H", None), ("KC KD JOKER", "KH")]
    ),
    "a joker won back goes on the table": position(
        "5H 7H 8H 8S 9S JOKER", [("4H JOKER 6H", None), ("9D 9C JOKER", "9S")]
    ),
    "an opening of twin melds": position("QH KH AH QH KH AH 2C", [], laid_down=False, opening=51),
    "an opening with a joker": position(
        "QH KH AH JD QD JOKER 5S", [], laid_down=False, opening=51
    ),
    "an opening that takes the discard": position(
        "QH KH 9D 10D JD JOKER", [], phase="draw", discard="AH", laid_down=False, opening=51
    ),
    "the discard joins a run through the joker": position(
        "7H JOKER 9C 3H", [("4H 5H 6H", None)], phase="draw", discard="8H"
    ),
    "the discard in a new meld": position("7S 7H JOKER 8S 9S", [], phase="draw", discard="7D"),
    "the taken discard in place of a joker": position(
        "9S 9D 9C 8H JOKER KS",
        [("7S 7H JOKER", "7D"), ("4H 5H 6H", None), ("4D JOKER 6D", None)],
        phase="draw",
        discard="7D",
    ),
    "a first lay-down, then the taken discard in place of a joker": position(
        "9S 9D 9C 8H KS",
        [("7S 7H JOKER", "7D"), ("4H 5H 6H", None)],
        phase="draw",
        discard="7D",
        laid_down=False,
    ),
    "an opening holding the joker the taken discard frees": position(
        "QH KH JD QD KD 5S",
        [("7S 7H JOKER", "7D")],
        phase="draw",
        discard="7D",
        laid_down=False,
        opening=51,
    ),
    "the rulebook's take, lay down and lay off": position(
        "8S 8D 8C KS", [("4H 5H 6H", None)], phase="draw", discard="7H", laid_down=False
    ),
    "an opening, then the discard laid off": position(
        "QS QD QC KS KD KC 2C",
        [("4H 5H 6H", None)],
        phase="draw",
        discard="7H",
        laid_down=False,
        opening=51,
    ),
    "a first lay-down, then the discard laid off with a joker": position(
        "9S 9D 9C JOKER 7H", [("4H 5H 6H", None)], phase="draw", discard="8H", laid_down=False
    ),
}


@pytest.mark.parametrize("name", HAND_MADE)
def test_listing_matches_the_brute_force_on_hand_made_positions(name: str) -> None:
    check_listing(HAND_MADE[name])


def test_a_run_takes_several_cards_at_once() -> None:
    listed = check_listing(HAND_MADE["a run grows at either end or both"])
    lay_offs = [a for a in listed if a["type"] == "lay_off" and a["meld"] == 0]
    assert {"type": "lay_off", "meld": 0, "cards": ["8H", "9H"]} in lay_offs
    assert {"type": "lay_off", "meld": 0, "cards": ["3H", "4H", "8H", "9H"]} in lay_offs
    with_joker = {"type": "lay_off", "meld": 0, "cards": ["4H", "8H", JOKER], "joker_as": "9H"}
    assert with_joker in lay_offs


def test_an_opening_lists_every_combination_that_reaches_the_minimum() -> None:
    listed = check_listing(HAND_MADE["an opening of twin melds"])
    openings = [[m["cards"] for m in a["melds"]] for a in listed if a["type"] == "meld"]
    assert [["QH", "KH", "AH"], ["QH", "KH", "AH"]] in openings  # 31 + 31
    assert [["QH", "KH", "AH"]] not in openings  # 31 alone does not open


def card_pool(rng: random.Random, high: bool) -> list[str]:
    """Cards of one or two suits over six ranks, twice, and two jokers: hands where
    melds overlap; the highest ranks if ``high``, so that openings at 51 happen."""
    suits = rng.sample(melds.SUITS, rng.choice([1, 2, 2]))
    low = rng.choice([8, 9, 9] if high else [1, 2, 6, 9])
    ranks = range(low, min(low + 5, melds.HIGH_ACE) + 1)
    return [melds.card_at(p, s) for s in suits for p in ranks] * 2 + [JOKER, JOKER]


def random_meld(rng: random.Random, pool: list[str]) -> tuple[str, str | None]:
    """A run or a set around the pool's cards, perhaps with a joker."""
    base = rng.choice([card for card in pool if card != JOKER])
    if rng.random() < 0.6:
        start = min(melds.rank_of(base), melds.HIGH_ACE - 3)
        cards = [melds.card_at(p, melds.suit_of(base)) for p in range(start, start + 3)]
    else:
        suits = rng.sample(melds.SUITS, 3)
        cards = [melds.RANKS[melds.rank_of(base) - 1] + suit for suit in suits]
    joker_as = None
    if rng.random() < 0.3:
        joker_as = cards[1]
        cards[1] = JOKER
    return " ".join(cards), joker_as


def random_position(seed: int) -> dict:
    rng = random.Random(seed)
    opening = rng.choice([0, 51])
    pool = card_pool(rng, high=opening > 0)
    hand = rng.sample(pool, rng.randint(6, 8) if opening else rng.randint(3, 7))
    table = [random_meld(rng, pool) for _ in range(rng.randint(0, 3))]
    # Now and then the card a joker of the table stands for, to take in its place.
    stood_for = [joker_as for _, joker_as in table if joker_as]
    discard = rng.choice(stood_for) if stood_for and rng.random() < 0.5 else rng.choice(pool)
    return position(
        " ".join(hand),
        table,
        phase=rng.choice(["play", "play", "draw"]),
        discard=discard,
        laid_down=rng.random() < (0.3 if opening else 0.6),
        opening=opening,
    )


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_listing_matches_the_brute_force_on_random_positions(seed: int) -> None:
    check_listing(random_position(seed))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32), n_players=st.integers(2, 4))
def test_the_compact_listing_is_part_of_the_legal_actions(seed: int, n_players: int) -> None:
    """The bots' ``compact_actions`` picks among the legal actions, spelled alike."""
    rng = random.Random(seed)
    # random play can block a table: bound the stock's rebuilds (RULES.md sets no limit)
    options = {"opening_minimum": rng.choice([0, 51]), "target_score": 1, "max_stock_rebuilds": 3}
    state = conformance.new_match(GAME, n_players, seed, options)
    while seats := GAME.to_act(state):
        legal = GAME.legal_actions(state, seats[0])
        compact = rules.compact_actions(state, seats[0])
        assert compact and all(action in legal for action in compact)
        placing = [a for a in compact if a["type"] not in ("draw", "discard")]
        GAME.apply(state, seats[0], rng.choice(placing or compact))
