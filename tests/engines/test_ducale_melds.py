"""Ducale meld validation (engines/ducale/melds.py), table-driven.

RULES.md §4, *Combinations* and *Rank order*.
"""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engines.ducale import melds
from engines.ducale.melds import JOKER, MeldError, build_meld, extend_meld


def shown(meld: dict) -> list[str]:
    """A meld written compactly: cards in meld order, a joker as ``*9H``."""
    return [f"*{s['as']}" if s["card"] == JOKER else s["card"] for s in meld["cards"]]


# -- building a meld -----------------------------------------------------------

VALID = [
    # (cards, joker_as, kind, cards in meld order, run start)
    ("7S 7H 7D", None, "set", "7S 7H 7D", None),
    ("7C 7S 7D 7H", None, "set", "7S 7H 7D 7C", None),
    ("AS AD AC", None, "set", "AS AD AC", None),
    ("7S 7H JOKER", "7C", "set", "7S 7H *7C", None),
    ("7S 7H 7D JOKER", None, "set", "7S 7H 7D *7C", None),
    ("3H 4H 5H", None, "run", "3H 4H 5H", 3),
    ("5H 3H 4H", None, "run", "3H 4H 5H", 3),
    ("AH 2H 3H", None, "run", "AH 2H 3H", 1),
    ("QH KH AH", None, "run", "QH KH AH", 12),
    ("10C JC QC KC AC", None, "run", "10C JC QC KC AC", 10),
    ("5H JOKER 7H", None, "run", "5H *6H 7H", 5),
    ("5H 6H JOKER", "7H", "run", "5H 6H *7H", 5),
    ("5H 6H JOKER", "4H", "run", "*4H 5H 6H", 4),
    ("2H 3H JOKER", "AH", "run", "*AH 2H 3H", 1),
    ("QH KH JOKER", "AH", "run", "QH KH *AH", 12),
    ("JOKER 2S 3S 4S", "5S", "run", "2S 3S 4S *5S", 2),
]


@pytest.mark.parametrize(("cards", "joker_as", "kind", "ordered", "start"), VALID)
def test_valid_melds(cards: str, joker_as: str | None, kind: str, ordered: str, start) -> None:
    meld = build_meld(cards.split(), joker_as)
    assert meld["kind"] == kind
    assert shown(meld) == ordered.split()
    assert meld.get("start") == start
    melds.validate_meld(meld)


INVALID = [
    # (cards, joker_as, part of the reason)
    ("7S 7H", None, "at least 3"),
    ("", None, "at least 3"),
    ("7S 7H 7S", None, "different suits"),  # identical twins never in a set
    ("7S 7H 7D 7C 7S", None, "at most 4"),
    ("7S 7H 8D", None, "neither"),
    ("3H 4H 5S", None, "neither"),
    ("3H 4H 6H", None, "consecutive"),
    ("KH AH 2H", None, "wraps"),  # no wrap
    ("QH KH AH 2H", None, "wraps"),
    ("5H 5H 6H 7H", None, "consecutive"),
    ("7S JOKER JOKER", "7H", "one joker"),
    ("5H JOKER 7H JOKER 9H", "6H", "one joker"),
    ("7S 7H JOKER", None, "say which card"),  # ambiguous: 7D or 7C
    ("5H 6H JOKER", None, "say which card"),  # ambiguous: 4H or 7H
    ("7S 7H JOKER", "8S", "neither"),
    ("7S 7H JOKER", "7S", "different suits"),
    ("5H 6H JOKER", "9H", "consecutive"),
    ("5H 6H 7H", "8H", "only for cards that include a joker"),
    ("5H 6H JOKER", "JOKER", "real card"),
    ("5H 6H JOKER", "1H", "real card"),
    ("1H 2H 3H", None, "not a card"),
    ("5H 9H JOKER", None, "cannot stand"),
    ("KS AS JOKER", "2S", "wraps"),
]


@pytest.mark.parametrize(("cards", "joker_as", "reason"), INVALID)
def test_invalid_melds(cards: str, joker_as: str | None, reason: str) -> None:
    with pytest.raises(MeldError, match=reason):
        build_meld(cards.split(), joker_as)


def test_ace_low_before_a_two_and_high_after_a_king() -> None:
    assert build_meld(["AD", "2D", "3D"])["start"] == melds.LOW_ACE
    assert build_meld(["QD", "KD", "AD"])["start"] == 12
    assert melds.run_positions(build_meld(["QD", "KD", "AD"]))[-1] == melds.HIGH_ACE


def test_full_ladder_with_both_aces_is_a_run_that_does_not_wrap() -> None:
    ladder = ["AS", *[melds.card_at(p, "S") for p in range(2, 14)], "AS"]
    meld = build_meld(ladder)
    assert meld["start"] == 1 and len(meld["cards"]) == 14
    with pytest.raises(MeldError):
        build_meld([*ladder, "2S"])


def test_ambiguous_ace_stands_high() -> None:
    """Decision: a run holding every rank 2..K takes its ace high (11 points)."""
    middle = [melds.card_at(p, "C") for p in range(2, 14)]
    assert build_meld(["AC", *middle])["start"] == 2
    with_joker = build_meld([JOKER, *middle], "AC")
    assert with_joker["start"] == 2 and with_joker["cards"][-1]["card"] == JOKER
    both = build_meld([JOKER, "AC", *middle], "AC")
    assert both["cards"][0] == {"card": "AC"} and both["cards"][-1]["card"] == JOKER


# -- lay-offs ------------------------------------------------------------------

EXTENSIONS = [
    # (meld, joker_as, laid off, joker_as, result, or None if refused)
    ("7S 7H 7D", None, "7C", None, "7S 7H 7D 7C"),
    ("7S 7H 7D", None, "7S", None, None),  # a twin cannot join a set
    ("7S 7H 7D 7C", None, "7S", None, None),  # at most 4
    ("7S 7H 7D", None, "8C", None, None),
    ("7S 7H 7D", None, "JOKER", None, "7S 7H 7D *7C"),
    ("7S 7H JOKER", "7D", "7C", None, "7S 7H *7D 7C"),
    ("7S 7H JOKER", "7D", "7D", None, None),  # the joker is the 7D: swap, not lay off
    ("7S 7H JOKER", "7D", "JOKER", "7C", None),  # one joker per meld
    ("4H 5H 6H", None, "7H", None, "4H 5H 6H 7H"),
    ("4H 5H 6H", None, "3H", None, "3H 4H 5H 6H"),
    ("4H 5H 6H", None, "2H 3H 7H", None, "2H 3H 4H 5H 6H 7H"),
    ("4H 5H 6H", None, "8H", None, None),  # a run grows at its ends only
    ("4H 5H 6H", None, "7S", None, None),
    ("4H 5H 6H", None, "JOKER 8H", None, "4H 5H 6H *7H 8H"),
    ("4H 5H 6H", None, "JOKER", "3H", "*3H 4H 5H 6H"),
    ("4H 5H 6H", None, "JOKER", None, None),  # 3H or 7H: say which
    ("AH 2H 3H", None, "KH", None, None),  # no wrap
    ("QH KH AH", None, "2H", None, None),
    ("QH KH AH", None, "JH", None, "JH QH KH AH"),
    ("2H 3H 4H", None, "AH", None, "AH 2H 3H 4H"),
]


@pytest.mark.parametrize(("base", "base_joker", "cards", "joker_as", "result"), EXTENSIONS)
def test_lay_offs(base: str, base_joker, cards: str, joker_as, result: str | None) -> None:
    meld = build_meld(base.split(), base_joker)
    if result is None:
        with pytest.raises(MeldError):
            extend_meld(meld, cards.split(), joker_as)
        return
    extended = extend_meld(meld, cards.split(), joker_as)
    assert shown(extended) == result.split()
    melds.validate_meld(extended)


def test_an_ace_laid_as_one_stays_a_one() -> None:
    """RULES: "An ace laid as 1 (before a 2) stays a 1"; the other ace may then
    close the full ladder."""
    run = build_meld(["AS", "2S", "3S"])
    run = extend_meld(run, [melds.card_at(p, "S") for p in range(4, 14)])
    assert run["start"] == 1 and shown(run)[0] == "AS" and len(run["cards"]) == 13
    run = extend_meld(run, ["AS"])
    assert run["start"] == 1 and len(run["cards"]) == 14
    with pytest.raises(MeldError):
        extend_meld(run, ["AS"])


def test_an_ace_laid_after_a_king_stays_high() -> None:
    run = build_meld(["QS", "KS", "AS"])
    with pytest.raises(MeldError):
        extend_meld(run, ["2S"])
    assert extend_meld(run, ["JS"])["start"] == 11


def test_layoff_cards_are_the_cards_that_fit_alone() -> None:
    assert melds.layoff_cards(build_meld(["7S", "7H", "7D"])) == ["7C"]
    assert melds.layoff_cards(build_meld(["7S", "7H", "7D", "7C"])) == []
    assert melds.layoff_cards(build_meld(["4H", "5H", "6H"])) == ["3H", "7H"]
    assert melds.layoff_cards(build_meld(["AH", "2H", "3H"])) == ["4H"]
    assert melds.layoff_cards(build_meld(["QH", "KH", "AH"])) == ["JH"]
    middle = [melds.card_at(p, "H") for p in range(2, 14)]
    assert melds.layoff_cards(build_meld(middle)) == ["AH"]


# -- joker swaps ---------------------------------------------------------------


def test_swap_puts_the_real_card_in_the_jokers_place() -> None:
    run = build_meld(["5H", JOKER, "7H"])
    assert shown(melds.swap_joker(run, "6H")) == ["5H", "6H", "7H"]
    with pytest.raises(MeldError, match="stands for 6H"):
        melds.swap_joker(run, "6S")
    with pytest.raises(MeldError, match="no joker"):
        melds.swap_joker(build_meld(["5H", "6H", "7H"]), "6H")
    a_set = build_meld(["7S", "7H", JOKER], "7C")
    with pytest.raises(MeldError):
        melds.swap_joker(a_set, "7D")  # the player declared 7C
    assert shown(melds.swap_joker(a_set, "7C")) == ["7S", "7H", "7C"]


# -- counting ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "joker_as", "value"),
    [
        ("AH 2H 3H", None, 6),  # an ace as 1 in A-2-3
        ("QH KH AH", None, 31),  # and 11 otherwise
        ("AS AH AD", None, 33),
        ("JS QS KS", None, 30),
        ("8D 9D 10D", None, 27),
        ("5H JOKER 7H", None, 18),  # a joker as the card it stands for
        ("2H 3H JOKER", "AH", 6),
        ("QS QH JOKER", "QD", 30),
    ],
)
def test_classic_opening_count(cards: str, joker_as, value: int) -> None:
    assert melds.meld_value(build_meld(cards.split(), joker_as)) == value


def test_points_left_in_hand() -> None:
    """ "2..10 face value, J Q K 10, ace 11, joker 20"."""
    assert [melds.card_points(c) for c in ["2S", "10H", "JD", "QC", "KS", "AH", JOKER]] == [
        2,
        10,
        10,
        10,
        10,
        11,
        20,
    ]


def test_validate_meld_refuses_broken_melds() -> None:
    good = build_meld(["4H", "5H", "6H"])
    melds.validate_meld(good)
    for broken in [
        {**good, "start": 5},
        {**good, "cards": good["cards"][:2]},
        {**good, "kind": "set"},
        {"kind": "set", "cards": [{"card": "7H"}, {"card": "7S"}, {"card": "7D"}]},
        {"kind": "run", "start": 13, "cards": [{"card": c} for c in ["KH", "AH", "2H"]]},
        {"kind": "set", "cards": [{"card": JOKER}, {"card": "7S"}, {"card": "7D"}]},
    ]:
        with pytest.raises(MeldError):
            melds.validate_meld(broken)


# -- what a hand can lay down --------------------------------------------------


def brute_force(hand: list[str]) -> dict[tuple, dict]:
    """Every distinct meld of ``hand``: each sub-multiset, each joker meaning."""
    found = {}
    for size in range(3, len(hand) + 1):
        for cards in set(itertools.combinations(sorted(hand), size)):
            meanings = melds.REAL_CARDS if JOKER in cards else [None]
            for joker_as in meanings:
                try:
                    meld = build_meld(list(cards), joker_as)
                except MeldError:
                    continue
                found[(cards, joker_as)] = meld
    return found


def enumerated(hand: list[str]) -> dict[tuple, dict]:
    options = melds.candidate_melds(Counter(hand))
    keys = [(tuple(sorted(o.cards)), o.joker_as) for o in options]
    assert len(set(keys)) == len(keys), "candidate melds are distinct"
    for option in options:
        assert build_meld(list(option.cards), option.joker_as) == option.meld
        assert melds.meld_value(option.meld) == option.value
    return dict(zip(keys, (o.meld for o in options), strict=True))


@pytest.mark.parametrize(
    "hand",
    [
        "7S 7H 7D 7C 7S",
        "7S 7H JOKER 8S 9S",
        "AH 2H 3H QH KH JOKER",
        "AH AH 2H 3H 4H",
        "5D 6D 7D 8D 9D",
        "KC AC 2C 3C",
        "5H 6H 7H JOKER",  # a joker may stand for a card the hand also holds
    ],
)
def test_candidate_melds_are_every_meld_of_the_hand(hand: str) -> None:
    assert enumerated(hand.split()) == brute_force(hand.split())


def test_candidate_melds_of_a_long_run_with_both_aces() -> None:
    hand = ["AH", "AH", *[melds.card_at(p, "H") for p in range(2, 14)], JOKER]
    options = enumerated(hand)
    assert any(len(meld["cards"]) == 14 for meld in options.values())
    starts = {meld["start"] for meld in options.values() if len(meld["cards"]) == 13}
    assert starts == {2}  # 13 cards from A to K could also be 2..K-A: the ace stands high


DECK = [*melds.REAL_CARDS, *melds.REAL_CARDS, JOKER, JOKER]
NEAR = [c for c in DECK if c == JOKER or melds.rank_of(c) in (1, 2, 3, 12, 13)]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(NEAR), min_size=3, max_size=7))
def test_candidate_melds_match_brute_force(hand: list[str]) -> None:
    """Hands around the aces, where runs and sets overlap the most."""
    assert enumerated(hand) == brute_force(hand)


# -- lay-offs of several cards ---------------------------------------------------------


def added_cards(before: dict, after: dict) -> list[str]:
    """The cards a lay-off added to a run, in ladder order, a joker as ``*9H``."""
    old = melds.run_positions(before)
    new = zip(melds.run_positions(after), shown(after), strict=True)
    return [card for position, card in new if position not in old]


def lay_offs_by_brute_force(meld: dict, hand: list[str]) -> dict[tuple, list[str]]:
    """Every sub-multiset of ``hand`` with each meaning of a joker, through
    ``extend_meld``: (sorted cards, joker_as) -> the cards added, in meld order."""
    found = {}
    counts = sorted(Counter(hand).items())
    for picks in itertools.product(*(range(n + 1) for _, n in counts)):
        cards = [card for (card, _), k in zip(counts, picks, strict=True) for _ in range(k)]
        for joker_as in melds.REAL_CARDS if JOKER in cards else [None]:
            try:
                after = extend_meld(meld, cards, joker_as)
            except MeldError:
                continue
            found[tuple(sorted(cards)), joker_as] = added_cards(meld, after)
    return found


HEARTS = [melds.card_at(p, "H") for p in range(1, 14)]


@settings(max_examples=100, deadline=None)
@given(
    start=st.sampled_from([1, 2, 2, 3, 4, 7, 10]),
    end=st.sampled_from([4, 9, 11, 12, 13, 13, 14]),
    joker_at=st.integers(-1, 12),
    hand=st.lists(
        st.sampled_from([*HEARTS, *HEARTS, *["AH"] * 6, JOKER, JOKER, "5S"]), max_size=8
    ),
)
@example(start=2, end=13, joker_at=-1, hand=["AH", JOKER])
@example(start=2, end=13, joker_at=-1, hand=["AH", "AH", JOKER])
@example(start=3, end=13, joker_at=-1, hand=["AH", "2H", JOKER])
@example(start=2, end=12, joker_at=-1, hand=["AH", "KH", "AH", JOKER])
@example(start=3, end=12, joker_at=4, hand=["AH", "2H", "KH", "AH", JOKER])
def test_lay_offs_are_every_extension_of_a_run(
    start: int, end: int, joker_at: int, hand: list[str]
) -> None:
    """Runs of any length, near the aces or not: one end, the other, or both, each
    meaning of the joker, both aces; each lay-off once, its cards in meld order."""
    if end - start < 2:
        return
    cards = [melds.card_at(p, "H") for p in range(start, end + 1)]
    joker_as = None
    if 0 <= joker_at < len(cards):
        joker_as, cards[joker_at] = cards[joker_at], JOKER
    meld = build_meld(cards, joker_as)
    if meld["start"] != start:
        return  # A..K is laid as 2..K-A
    listed = melds.lay_offs(meld, Counter(hand))
    keys = [(tuple(sorted(cards)), joker_as) for cards, joker_as in listed]
    assert len(set(keys)) == len(keys)
    brute = lay_offs_by_brute_force(meld, hand)
    assert set(keys) == set(brute)
    for key, (cards, joker_as) in zip(keys, listed, strict=True):
        assert brute[key] == [f"*{joker_as}" if c == JOKER else c for c in cards]


def test_lay_offs_on_a_set_fill_its_missing_suit() -> None:
    meld = build_meld(["7S", "7H", "7D"])
    assert melds.lay_offs(meld, Counter(["7C", JOKER, "7S"])) == [
        (("7C",), None),
        ((JOKER,), "7C"),
    ]
    assert melds.lay_offs(build_meld(["7S", "7H", "7D", "7C"]), Counter(["7C", JOKER])) == []
    with_joker = build_meld(["7S", JOKER, "7D"], "7H")
    assert melds.lay_offs(with_joker, Counter(["7C", JOKER])) == [(("7C",), None)]
