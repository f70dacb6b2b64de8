"""Ducale melds: cards, sets and runs, jokers, lay-offs and the classic count.

RULES.md §4, *Combinations*: "at least 3 cards. Set: 3 or 4 cards of the same
rank, all of different suits; never two identical cards in a set. Run: 3 or
more consecutive cards of one suit. Joker: stands for exactly one card of the
meld; at most one joker per meld." *Rank order*: "A 2 3 4 5 6 7 8 9 10 J Q K A:
the ace is low before a 2 and high after a king; a run never wraps."

A card is a string, rank then suit (``"10H"``, ``"QS"``), or ``"JOKER"``. A meld
is a plain dict ``{"kind": "set" | "run", "cards": [slot, ...]}``; a run also
keeps ``"start"``, the ladder position of its first card, where the ladder is
1 (low ace), 2..13 (2 to king), 14 (high ace). A slot is ``{"card": "9H"}`` or
``{"card": "JOKER", "as": "9H"}``. A run's slots are in ladder order, a set's in
suit order S H D C. Once laid, every card keeps its place: "an ace laid as 1
stays a 1" and a joker is "exactly equivalent to the card it replaces".

Decisions where RULES.md is silent:

- the full ladder A 2 .. K A (14 cards, both aces of one suit) is a run: it does
  not wrap;
- an ace that could stand at either end (the run already holds every rank from
  2 to K) stands high, as players would count it for its 11 points; when a run
  holds two aces and one is the joker, the joker is the high one;
- a joker may stand for a card that its player also holds;
- ``joker_as`` may be left out when only one card fits the joker's place.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

Meld = dict[str, Any]

RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = ("S", "H", "D", "C")
JOKER = "JOKER"
REAL_CARDS = tuple(rank + suit for suit in SUITS for rank in RANKS)
CARDS = (*REAL_CARDS, JOKER)
LOW_ACE = 1
HIGH_ACE = 14

_RANK = {rank + suit: index + 1 for suit in SUITS for index, rank in enumerate(RANKS)}
_SUIT = {rank + suit: suit for suit in SUITS for rank in RANKS}
_SUIT_ORDER = {suit: index for index, suit in enumerate(SUITS)}
_LADDER = {suit: ["", *(RANKS[p % 13] + suit for p in range(14))] for suit in SUITS}
_LADDER_VALUE = list(itertools.accumulate([0, 1, *range(2, 11), 10, 10, 10, 11]))
# The most a card can count in an opening (a joker standing for an ace, high).
_BEST_VALUE = {card: 11 if _RANK[card] == 1 else min(_RANK[card], 10) for card in _RANK}
_BEST_VALUE[JOKER] = 11


class MeldError(ValueError):
    """A meld or a lay-off that the rules refuse; the message says why."""


class MeldOption(NamedTuple):
    """One meld a hand can lay down: its cards in meld order, the joker's meaning."""

    cards: tuple[str, ...]
    joker_as: str | None
    meld: Meld
    value: int

    def spec(self) -> dict[str, Any]:
        """The meld as an action carries it: ``{"cards": [...], "joker_as"?: ...}``."""
        spec: dict[str, Any] = {"cards": list(self.cards)}
        if self.joker_as is not None:
            spec["joker_as"] = self.joker_as
        return spec


# -- cards -------------------------------------------------------------------


def rank_of(card: str) -> int:
    """1 (ace) to 13 (king)."""
    return _RANK[card]


def suit_of(card: str) -> str:
    return _SUIT[card]


def card_at(position: int, suit: str) -> str:
    """The card at a ladder position (1 and 14 are both the ace)."""
    return RANKS[0 if position == HIGH_ACE else position - 1] + suit


def card_points(card: str) -> int:
    """Points of a card left in hand: "2..10 face value, J Q K 10, ace 11, joker 20"."""
    if card == JOKER:
        return 20
    rank = _RANK[card]
    return 11 if rank == 1 else min(rank, 10)


def position_value(position: int) -> int:
    """What the card at a ladder position counts in an opening."""
    if position == LOW_ACE:
        return 1
    if position == HIGH_ACE:
        return 11
    return min(position, 10)


def is_real_card(card: Any) -> bool:
    return isinstance(card, str) and card in _RANK


# -- reading a meld ----------------------------------------------------------


def slot_card(slot: Mapping[str, str]) -> str:
    """The card a slot counts as: the card itself, or what its joker stands for."""
    return slot["as"] if slot["card"] == JOKER else slot["card"]


def meld_cards(meld: Meld) -> list[str]:
    """The physical cards of a meld, in meld order (a joker is ``"JOKER"``)."""
    return [slot["card"] for slot in meld["cards"]]


def joker_slot(meld: Meld) -> dict[str, str] | None:
    return next((slot for slot in meld["cards"] if slot["card"] == JOKER), None)


def has_joker(meld: Meld) -> bool:
    return joker_slot(meld) is not None


def meld_value(meld: Meld) -> int:
    """The classic opening count: "2..10 at face value, J Q K as 10, an ace as 1 in
    A-2-3 and 11 otherwise, and a joker as the card it stands for"."""
    if meld["kind"] == "set":
        rank = _RANK[slot_card(meld["cards"][0])]
        return len(meld["cards"]) * (11 if rank == 1 else min(rank, 10))
    start = meld["start"]
    return sum(position_value(p) for p in range(start, start + len(meld["cards"])))


def validate_meld(meld: Meld) -> None:
    """Raise MeldError unless ``meld`` is a well-formed, valid meld as stored."""
    slots = meld.get("cards")
    if not isinstance(slots, list) or len(slots) < 3:
        raise MeldError("a meld has at least 3 cards")
    for slot in slots:
        if slot["card"] == JOKER:
            if not is_real_card(slot.get("as")):
                raise MeldError("a joker must stand for a card")
        elif not is_real_card(slot["card"]) or "as" in slot:
            raise MeldError(f"not a card: {slot!r}")
    if sum(slot["card"] == JOKER for slot in slots) > 1:
        raise MeldError("at most one joker per meld")
    shown = [slot_card(slot) for slot in slots]
    if meld["kind"] == "set":
        if len(shown) > 4 or len({_RANK[c] for c in shown}) != 1:
            raise MeldError("a set is 3 or 4 cards of one rank")
        suits = [_SUIT[c] for c in shown]
        if len(set(suits)) != len(suits) or suits != sorted(suits, key=_SUIT_ORDER.get):
            raise MeldError("a set's suits are all different, in suit order")
    elif meld["kind"] == "run":
        start = meld["start"]
        suit = _SUIT[shown[0]]
        if start < LOW_ACE or start + len(shown) - 1 > HIGH_ACE:
            raise MeldError("a run stays between the low and the high ace")
        if shown != [card_at(start + i, suit) for i in range(len(shown))]:
            raise MeldError("a run is consecutive cards of one suit, in order")
    else:
        raise MeldError(f"unknown kind of meld: {meld['kind']!r}")


# -- making and growing melds ------------------------------------------------


def build_meld(cards: list[str], joker_as: str | None = None) -> Meld:
    """The meld these cards make, or MeldError saying why they make none."""
    if len(cards) < 3:
        raise MeldError("a meld has at least 3 cards")
    real, jokers = _split(cards)
    if jokers > 1:
        raise MeldError("at most one joker per meld")
    return _with_joker(jokers, joker_as, lambda meaning: _arrange(None, real, meaning))


def extend_meld(meld: Meld, cards: list[str], joker_as: str | None = None) -> Meld:
    """``meld`` with ``cards`` laid off on it: "keeping it valid (a set holds at most
    4 cards; a run grows at either end)"."""
    if not cards:
        raise MeldError("lay off at least one card")
    real, jokers = _split(cards)
    if jokers > 1 or (jokers and has_joker(meld)):
        raise MeldError("at most one joker per meld")
    return _with_joker(jokers, joker_as, lambda meaning: _arrange(meld, real, meaning))


def swap_joker(meld: Meld, card: str) -> Meld:
    """``meld`` with its joker replaced by "the real card it stands for"."""
    slot = joker_slot(meld)
    if slot is None:
        raise MeldError("this meld holds no joker")
    if card != slot["as"]:
        raise MeldError(f"the joker stands for {slot['as']}: only that card can replace it")
    return {**meld, "cards": [{"card": card} if s is slot else dict(s) for s in meld["cards"]]}


def layoff_cards(meld: Meld) -> list[str]:
    """The cards that can be laid off alone on ``meld`` (a lone joker can stand for
    any of them if the meld holds no joker)."""
    if meld["kind"] == "set":
        if len(meld["cards"]) >= 4:
            return []
        shown = [slot_card(slot) for slot in meld["cards"]]
        rank = RANKS[_RANK[shown[0]] - 1]
        used = {_SUIT[c] for c in shown}
        return [rank + suit for suit in SUITS if suit not in used]
    start, end = meld["start"], meld["start"] + len(meld["cards"]) - 1
    suit = _SUIT[slot_card(meld["cards"][0])]
    ends = [card_at(p, suit) for p in (start - 1, end + 1) if LOW_ACE <= p <= HIGH_ACE]
    return list(dict.fromkeys(ends))


def run_positions(meld: Meld) -> range:
    return range(meld["start"], meld["start"] + len(meld["cards"]))


def lay_offs(meld: Meld, counts: Mapping[str, int]) -> list[tuple[tuple[str, ...], str | None]]:
    """Every lay-off of cards from ``counts`` on ``meld`` in one action, each once,
    as ``(cards in meld order, joker_as)``. A set of 3 takes its missing suit; a
    run grows at either end or both, through at most one joker (none if the meld
    holds one), which stands in turn for each card of the extension."""
    joker = counts.get(JOKER, 0) > 0 and not has_joker(meld)
    if meld["kind"] == "set":
        fits = layoff_cards(meld)
        held = [((fit,), None) for fit in fits if counts.get(fit, 0)]
        return held + [((JOKER,), fit) for fit in fits if joker]
    return _run_lay_offs(meld, counts, joker)


def _run_lay_offs(
    meld: Meld, counts: Mapping[str, int], joker: bool
) -> list[tuple[tuple[str, ...], str | None]]:
    """Each extension of a run, ``low`` cards below it and ``high`` above, with at
    most one card not held, which the joker fills.

    The two aces of an extension to the full ladder need two aces, or an ace and
    the joker, and the joker then stands high (see ``_arrange``). An extension
    ending at the king with the low ace is the same cards as the one ending at
    the high ace, where ``_arrange`` puts that ace: only the latter is listed."""
    start, end = meld["start"], meld["start"] + len(meld["cards"]) - 1
    ladder = _LADDER[_SUIT[slot_card(meld["cards"][0])]]
    below = ladder[start - 1 : 0 : -1]  # nearest first
    above = ladder[end + 1 :]
    missing_below = _missing_prefixes(below, counts)
    missing_above = _missing_prefixes(above, counts)
    one_ace = counts.get(ladder[LOW_ACE], 0) == 1
    allowed = 1 if joker else 0
    found: list[tuple[tuple[str, ...], str | None]] = []
    for low, missed_low in enumerate(missing_below):
        if missed_low > allowed:
            break
        for high, missed_high in enumerate(missing_above):
            both_aces = 0 < low == len(below) and 0 < high == len(above)
            missing = missed_low + missed_high + (both_aces and one_ace)
            if missing > allowed:
                break
            if (not low and not high) or (low and start - low == LOW_ACE and end + high == 13):
                continue
            cards = [*reversed(below[:low]), *above[:high]]
            # With both aces, the joker standing for the low one is the same lay-off
            # as the joker standing for the high one.
            places = range(1 if both_aces else 0, len(cards)) if joker else range(0)
            found += _joker_placings(cards, counts, missing, places)
    return found


def _missing_prefixes(cards: list[str], counts: Mapping[str, int]) -> list[int]:
    """How many of the first k ``cards`` the hand lacks, for k = 0 .. len(cards)."""
    return list(itertools.accumulate((not counts.get(card, 0) for card in cards), initial=0))


def _joker_placings(
    cards: list[str], counts: Mapping[str, int], missing: int, places: range
) -> list[tuple[tuple[str, ...], str | None]]:
    """``cards`` as lay-offs: all held, and with the joker in each of ``places``; or
    with the joker in the one place the hand cannot fill (the last, the high ace,
    when the hand holds one ace for both ends)."""
    if missing:
        gap = next((i for i, card in enumerate(cards) if not counts.get(card, 0)), len(cards) - 1)
        return [((*cards[:gap], JOKER, *cards[gap + 1 :]), cards[gap])]
    placings: list[tuple[tuple[str, ...], str | None]] = [(tuple(cards), None)]
    return placings + [((*cards[:i], JOKER, *cards[i + 1 :]), cards[i]) for i in places]


# -- what a hand can lay down ------------------------------------------------


def candidate_melds(counts: Mapping[str, int], must: str | None = None) -> list[MeldOption]:
    """Every distinct meld that the cards in ``counts`` can make, each meaning of a
    joker apart; only those holding ``must`` if it is given."""
    jokers = counts.get(JOKER, 0)
    options = [*_candidate_sets(counts, jokers), *_candidate_runs(counts, jokers)]
    if must is None:
        return options
    return [option for option in options if must in option.cards]


def _candidate_sets(counts: Mapping[str, int], jokers: int) -> Iterable[MeldOption]:
    suits_of: dict[int, list[str]] = {}
    for card, count in counts.items():
        if count and card != JOKER:
            suits_of.setdefault(_RANK[card], []).append(_SUIT[card])
    for rank_index in sorted(suits_of):
        held = sorted(suits_of[rank_index], key=_SUIT_ORDER.__getitem__)
        if len(held) < (2 if jokers else 3):
            continue
        rank = RANKS[rank_index - 1]
        for size in (3, 4):
            for suits in itertools.combinations(held, size):
                yield _set_option(rank, suits, None)
        if not jokers:
            continue
        for size in (2, 3):
            for suits in itertools.combinations(held, size):
                for joker_suit in SUITS:
                    if joker_suit not in suits:
                        yield _set_option(rank, suits, joker_suit)


def _set_option(rank: str, suits: tuple[str, ...], joker_suit: str | None) -> MeldOption:
    slots = [
        {"card": JOKER, "as": rank + suit} if suit == joker_suit else {"card": rank + suit}
        for suit in SUITS
        if suit in suits or suit == joker_suit
    ]
    meld = {"kind": "set", "cards": slots}
    joker_as = None if joker_suit is None else rank + joker_suit
    return MeldOption(tuple(s["card"] for s in slots), joker_as, meld, meld_value(meld))


def _candidate_runs(counts: Mapping[str, int], jokers: int) -> Iterable[MeldOption]:
    holes_allowed = 1 if jokers else 0
    ranks_of: dict[str, list[int]] = {}
    for card, count in counts.items():
        if count and card != JOKER:
            ranks_of.setdefault(_SUIT[card], []).append(_RANK[card])
    for suit in SUITS:
        ranks = ranks_of.get(suit, ())
        if len(ranks) < 3 - holes_allowed:
            continue
        held = [False] * (HIGH_ACE + 1)
        for rank in ranks:
            held[rank] = True
        held[HIGH_ACE] = held[LOW_ACE]
        aces = counts.get(_LADDER[suit][LOW_ACE], 0)
        for start in range(LOW_ACE, HIGH_ACE - 1):
            holes: list[int] = []
            for end in range(start, HIGH_ACE + 1):
                both_aces = start == LOW_ACE and end == HIGH_ACE
                if not held[end] or (both_aces and aces < 2):
                    holes.append(end)
                    if len(holes) > holes_allowed:
                        break
                # A..K is the same cards as 2..K-A, which stands high (see above).
                if end - start < 2 or (start, end) == (LOW_ACE, 13):
                    continue
                if holes:
                    yield _run_option(suit, start, end, holes[0])
                    continue
                yield _run_option(suit, start, end, None)
                if jokers:
                    for joker_at in range(start, end + 1):
                        if not (both_aces and joker_at == LOW_ACE):
                            yield _run_option(suit, start, end, joker_at)


def _run_option(suit: str, start: int, end: int, joker_at: int | None) -> MeldOption:
    ladder = _LADDER[suit]
    slots = [{"card": ladder[p]} for p in range(start, end + 1)]
    joker_as = None
    if joker_at is not None:
        joker_as = ladder[joker_at]
        slots[joker_at - start] = {"card": JOKER, "as": joker_as}
    meld = {"kind": "run", "start": start, "cards": slots}
    value = _LADDER_VALUE[end] - _LADDER_VALUE[start - 1]
    return MeldOption(tuple(s["card"] for s in slots), joker_as, meld, value)


def combinations(
    options: Sequence[MeldOption], counts: Mapping[str, int], minimum: int, must: str | None = None
) -> list[tuple[int, ...]]:
    """Every multiset of ``options`` that the cards in ``counts`` make at once, worth
    ``minimum`` or more in all and holding ``must`` if given: indices into
    ``options``, in increasing order, each multiset once.

    A depth-first search over increasing indices; the cards left are counts packed
    in 4-bit fields of an int, with a guard bit that a subtraction clears when a
    meld needs a card no longer there. A branch stops when even every card left,
    at its best value, could not bring the total to ``minimum``."""
    shift = {card: 4 * i for i, card in enumerate(counts)}
    guard = sum(8 << at for at in shift.values())
    needs = [sum(1 << shift[card] for card in option.cards) for option in options]
    costs = [sum(_BEST_VALUE[card] for card in option.cards) for option in options]
    values = [option.value for option in options]
    later = compatible_later(options, counts)
    must_at = shift.get(must, 0) if must else 0
    must_held = counts.get(must, 0) if must else 0
    found: list[tuple[int, ...]] = []

    def extend(
        chosen: tuple[int, ...], candidates: int, left: int, total: int, spare: int
    ) -> None:
        while candidates:
            low = candidates & -candidates
            candidates ^= low
            index = low.bit_length() - 1
            rest = left - needs[index]
            value = total + values[index]
            if rest & guard != guard or value + spare - costs[index] < minimum:
                continue
            combo = (*chosen, index)
            if value >= minimum and (must is None or (rest >> must_at) & 7 < must_held):
                found.append(combo)
            following = (candidates | low) & later[index]
            if following:
                extend(combo, following, rest, value, spare - costs[index])

    cards = guard + sum(count << shift[card] for card, count in counts.items())
    spare = sum(_BEST_VALUE[card] * count for card, count in counts.items())
    extend((), (1 << len(options)) - 1, cards, 0, spare)
    return found


def compatible_later(options: Sequence[MeldOption], counts: Mapping[str, int]) -> list[int]:
    """For each option, a bit mask of the later options that fit beside it, and of
    itself if the cards are there twice (checked two at a time: three melds may
    still want more copies of a card than there are)."""
    needs = [Counter(option.cards) for option in options]
    at_least: dict[tuple[str, int], int] = {}  # (card, n) -> options using n+ of it
    for index, need in enumerate(needs):
        for card, count in need.items():
            for n in range(1, count + 1):
                at_least[card, n] = at_least.get((card, n), 0) | 1 << index
    everything = (1 << len(needs)) - 1
    masks = []
    for index, need in enumerate(needs):
        clash = 0
        for card, count in need.items():
            clash |= at_least.get((card, counts.get(card, 0) - count + 1), 0)
        masks.append(everything & ~clash & ~((1 << index) - 1))
    return masks


# -- private helpers ---------------------------------------------------------


def _split(cards: list[str]) -> tuple[list[str], int]:
    real = [card for card in cards if card != JOKER]
    for card in real:
        if not is_real_card(card):
            raise MeldError(f"not a card: {card!r}")
    return real, len(cards) - len(real)


def _with_joker(jokers: int, joker_as: str | None, arrange: Callable[[str | None], Meld]) -> Meld:
    """Arrange with the joker's declared meaning, or its only possible one."""
    if not jokers:
        if joker_as is not None:
            raise MeldError("joker_as is only for cards that include a joker")
        return arrange(None)
    if joker_as is not None:
        if not is_real_card(joker_as):
            raise MeldError(f"a joker stands for a real card, not {joker_as!r}")
        return arrange(joker_as)
    fits = []
    for meaning in REAL_CARDS:
        try:
            fits.append(arrange(meaning))
        except MeldError:
            continue
    if len(fits) != 1:
        if fits:
            raise MeldError("say which card the joker stands for (joker_as)")
        raise MeldError("the joker cannot stand for any card here")
    return fits[0]


def _arrange(base: Meld | None, real: list[str], joker_as: str | None) -> Meld:
    """Place ``real`` cards (and a joker standing for ``joker_as``) in a new meld, or
    around the fixed cards of ``base``."""
    items = [(card, False) for card in real]
    if joker_as is not None:
        items.insert(0, (joker_as, True))  # first to take the high ace when in doubt
    shown = [card for card, _ in items]
    if base is not None:
        shown += [slot_card(slot) for slot in base["cards"]]
    if base is None or base["kind"] == "set":
        if len({_RANK[card] for card in shown}) == 1:
            return _arrange_set(base, items, len(shown))
        if base is not None:
            raise MeldError("a set holds cards of one rank only")
    if len({_SUIT[card] for card in shown}) == 1:
        return _arrange_run(base, items)
    if base is not None:
        raise MeldError("a run holds cards of one suit only")
    raise MeldError("neither a set (one rank, different suits) nor a run (one suit, in sequence)")


def _arrange_set(base: Meld | None, items: list[tuple[str, bool]], size: int) -> Meld:
    if size > 4:
        raise MeldError("a set holds at most 4 cards")
    slots = [] if base is None else [dict(slot) for slot in base["cards"]]
    slots += [{"card": JOKER, "as": card} if joker else {"card": card} for card, joker in items]
    suits = [_SUIT[slot_card(slot)] for slot in slots]
    if len(set(suits)) != len(suits):
        raise MeldError("a set's cards are all of different suits")
    slots.sort(key=lambda slot: _SUIT_ORDER[_SUIT[slot_card(slot)]])
    return {"kind": "set", "cards": slots}


def _arrange_run(base: Meld | None, items: list[tuple[str, bool]]) -> Meld:
    fixed: dict[int, dict[str, str]] = {}
    if base is not None:
        fixed = {base["start"] + i: dict(slot) for i, slot in enumerate(base["cards"])}
    choices = [(HIGH_ACE, LOW_ACE) if _RANK[card] == 1 else (_RANK[card],) for card, _ in items]
    for positions in itertools.product(*choices):
        placed = dict(fixed)
        for position, (card, joker) in zip(positions, items, strict=True):
            if position in placed:
                break
            placed[position] = {"card": JOKER, "as": card} if joker else {"card": card}
        else:
            low, high = min(placed), max(placed)
            if high - low + 1 == len(placed):
                return {
                    "kind": "run",
                    "start": low,
                    "cards": [placed[p] for p in range(low, high + 1)],
                }
    raise MeldError("a run is consecutive cards of one suit, and never wraps (K-A-2)")
