"""Ducale, the French rummy: rounds of melding until a total reaches the target.

RULES.md §4 is the reference; the meld rules themselves live in ``melds.py``.
A round: "Shuffle; deal 13 cards to each player; the rest is the face-down
stock; turn its top card face up to start the discard pile." A turn: "Draw the
top card of the stock, or the top card of the discard pile", then meld, lay off
and swap jokers, then "Discard one card face up; the turn ends."

The state is a plain dict. Hidden information sits in two fields only:
``hands`` (each seat sees its own) and ``stock`` (nobody sees it; its top is the
last card). ``discard`` (top last) and ``table`` are public.
``determinize(state, seat, rng)`` resamples exactly these (and the seed of later
deals) for the bots' search.

Both moves that carry an obligation discharge it inside the same action, so no
one can get stuck: ``take_discard`` puts the taken card on the table (new melds,
a lay-off, or new melds and then a lay-off: "a player who lays down for the
first time in it may lay off in it too"; or, with ``swap_joker``, in place of a
joker standing for it, the freed joker then melded or laid off) and
``swap_joker`` puts the recovered joker on the table. Nothing is ever left "to use later", so
``view["must_use"]`` is always null.

Decisions where RULES.md is silent:

- lay-offs and joker swaps need melds laid down *before* the action (in an
  earlier action of this turn or an earlier turn), except within a
  ``take_discard`` that also lays down melds: those melds come first (the
  taken card's swap for a joker then counts as made once laid down, and the
  freed joker may be in those melds). A ``swap_joker`` action cannot be a first
  lay-down, so with ``opening_minimum`` the opening is always a ``meld`` or a
  ``take_discard`` with melds, counted on its melds alone;
- a ``take_discard`` with both melds and a lay-off lays the cards off on a meld
  that was on the table before the action (a lay-off on one of its own new
  melds is the same as a larger meld);
- the card taken from the discard pile may replace a joker (« put in place of a
  joker »), in the same ``take_discard`` (``swap_joker``: the meld), by a seat
  that has laid down before or lays down melds in that action; the freed joker
  must go to the table in it, in its ``melds`` or its ``lay_off``, and a
  lay-off may go on the meld the card went into. The taken card is then
  placed by the swap alone (not also melded or laid off);
- going out needs no final discard: melding or laying off the last card ends
  the round, even within a ``take_discard``;
- the stock is rebuilt from the whole discard pile, its top card included
  (« on mélange la pile de défausse pour créer une nouvelle pioche »), when a
  player draws from an empty stock, as often as needed; the discard pile is
  then empty, and taking from it is not offered, until the next discard. The
  check that there is something to draw (stock, or one discard) is made when a
  turn begins, and fails the round with no winner; as every turn but the last
  ends with a discard, only an arranged table fails it. States stored before
  this rule, whose discard pile kept its top card at a rebuild, play on: the
  next rebuild takes that card with the rest;
- option ``max_stock_rebuilds`` (default null: no limit): once the stock has
  been rebuilt that many times in a round, a stock that runs out again ends the
  round with no winner, everyone scoring their hand; a blocked table (say,
  every meld a full set and one card in each hand) would otherwise never end,
  so ``ludotheque arena`` sets it (``ARENA_OPTIONS``). States stored before the
  option existed have no such key and play without limit;
- a joker may be discarded;
- meld ids restart at 0 each round;
- the cards left in the losers' hands are not shown at the end of a round (only
  the points they make), so that hands never leave their seat;
- at the end of the game the lowest total wins, ties are shared.

``legal_actions`` lists every action, each once and in one spelling (a meld's
cards in meld order, a lay-off's in the order they join the meld, a joker's
meaning always given, the melds of a combination in the order of
``melds.candidate_melds``): every single meld the hand can form (several at once
are accepted too, but are the same as melding them one by one) or, for an
opening under ``opening_minimum``, every combination of disjoint melds that
reaches the minimum (``melds.combinations``); every lay-off of one or several
cards on one meld (``melds.lay_offs``); every joker swap with each single meld or
lay-off that puts the joker back; every way to take the discard into a single
meld, an opening or a lay-off, and, for a seat that has not laid down, every way
to take it with new melds (any that reach the opening) that do not hold it and
then lay it off (a seat that has laid down reaches the same by a lay-off and
then melds, as with several melds at once); every way to take it into the place
of a joker standing for it with a single meld or an opening holding the joker,
or with a lay-off of the joker (after new melds of the hand, for a seat that has
not laid down); every distinct discard. Some 14-card hands with
jokers can open in 10,000 to 20,000 ways (``bench/ducale_legal.py``), so the
bots search among ``compact_actions``: for each state a turn can reach, one
action that reaches it (single melds, one-card lay-offs, the minimal openings
of ``opening_combinations`` and the minimal uses of the taken discard or the
recovered joker).

How aces and jokers are placed when a meld leaves it open is decided in
``melds.py``.
"""

from __future__ import annotations

import functools
import random
from collections import Counter
from collections.abc import Iterator
from typing import Any

import orjson

from engines.core import Action, Event, IllegalAction, Seat, State, seeded_rng
from engines.ducale import melds
from engines.ducale.melds import JOKER, MeldError, MeldOption

NAME = "ducale"
TITLE = "Ducale"
MIN_PLAYERS = 2
MAX_PLAYERS = 6
HAND_SIZE = 13
DEFAULT_OPTIONS = {"target_score": 500, "opening_minimum": 0, "max_stock_rebuilds": None}
# What ``ludotheque arena`` plays with unless told otherwise: matches between
# bots must end, and a blocked table never would without a bound.
ARENA_OPTIONS = {"max_stock_rebuilds": 3}
NOT_LAID_DOWN = 100
RAMI_SEC = 200
MAX_OPENING_POINTS = 14 * 11


# -- game --------------------------------------------------------------------


def setup(options: dict[str, Any], n_players: int, seed: int) -> State:
    """A new match: round 1, seat 0 first."""
    if not MIN_PLAYERS <= n_players <= MAX_PLAYERS:
        raise ValueError(f"Ducale is for {MIN_PLAYERS} to {MAX_PLAYERS} players")
    state: State = {
        "options": {**DEFAULT_OPTIONS, **options},
        "n_players": n_players,
        "rng": seed,
        "round": 0,
        "first_player": 0,
        "turn": 0,
        "phase": "draw",
        "hands": [[] for _ in range(n_players)],
        "stock": [],
        "discard": [],
        "table": [],
        "next_meld_id": 0,
        "stock_rebuilds": 0,
        "laid_down": [False] * n_players,
        "totals": [0] * n_players,
        "history": [],
    }
    _deal(state)
    return state


def to_act(state: State) -> list[Seat]:
    return [] if state["phase"] == "over" else [state["turn"]]


def legal_actions(state: State, seat: Seat) -> list[Action]:
    """Every action ``seat`` may play now, each once (see the module docstring)."""
    if seat not in to_act(state):
        return []
    if state["phase"] == "draw":
        return [{"type": "draw"}, *_every_take(state, seat)]
    hand = Counter(state["hands"][seat])
    actions = [{"type": "meld", "melds": specs} for specs in _meld_lists(state, seat, hand)]
    if state["laid_down"][seat]:
        actions += [
            {"type": "lay_off", **lay_off} for lay_off in _every_lay_off(state["table"], hand)
        ]
        actions += _every_swap(state["table"], hand)
    actions += [{"type": "discard", "card": card} for card in sorted(hand, key=_card_order)]
    return actions


def compact_actions(state: State, seat: Seat) -> list[Action]:
    """A subset of the legal actions that reaches every position a turn can reach,
    for the bots' search: single melds, one-card lay-offs, and for an opening or
    the two moves with an obligation, every minimal way (the taken card with the
    cards that join it to a run, the recovered joker alone or in a new meld).
    Tens of actions where ``legal_actions`` may give thousands."""
    if seat not in to_act(state):
        return []
    if state["phase"] == "draw":
        return [{"type": "draw"}, *_take_discard_actions(state, seat)]
    hand = Counter(state["hands"][seat])
    actions = [{"type": "meld", "melds": specs} for specs in _meld_choices(state, seat, hand)]
    if state["laid_down"][seat]:
        actions += _lay_off_actions(state["table"], hand)
        actions += _swap_actions(state["table"], hand)
    actions += [{"type": "discard", "card": card} for card in sorted(hand, key=_card_order)]
    return actions


# -- state ops ---------------------------------------------------------------


def apply(state: State, seat: Seat, action: Action) -> list[Event]:
    """Check ``action`` completely, then play it. Refused actions change nothing."""
    if seat not in to_act(state):
        raise IllegalAction("not_your_turn", "it is not this seat's turn")
    kind = action.get("type")
    handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
    if handler is None:
        raise IllegalAction("illegal_action", f"unknown action type {kind!r}")
    phase, play = handler
    if state["phase"] != phase:
        if phase == "draw":
            raise IllegalAction("illegal_action", "you have already drawn this turn")
        raise IllegalAction("illegal_action", "draw first: from the stock or the discard pile")
    return play(state, seat, action)


def _apply_draw(state: State, seat: Seat, action: Action) -> list[Event]:
    """ "Draw the top card of the stock"; "when the stock is empty and a player must
    draw, the whole discard pile is shuffled to form the new stock"."""
    events: list[Event] = []
    if not state["stock"]:
        events.append(_reshuffle(state))
    card = state["stock"].pop()
    state["hands"][seat].append(card)
    state["phase"] = "play"
    events.append({"type": "drew", "seat": seat, "stock_size": len(state["stock"])})
    events.append({"type": "card_drawn", "seat": seat, "card": card, "to": [seat]})
    return events


def _apply_take_discard(state: State, seat: Seat, action: Action) -> list[Event]:
    """ "A card taken from the discard pile must go to the table (in a new meld,
    laid off, or put in place of a joker) in this turn; ... taking it and
    putting it on the table are one action." """
    if not state["discard"]:
        raise IllegalAction("illegal_action", "the discard pile is empty")
    if action.get("swap_joker") is not None:
        return _take_into_joker(state, seat, action)
    top = state["discard"][-1]
    hand = state["hands"][seat]
    use = _plan_use(state, seat, action, [*hand, top], state["table"], both=True)
    if use.hand.count(top) > hand.count(top):
        raise IllegalAction("illegal_action", f"the {top} taken from the discard must be played")
    state["discard"].pop()
    state["phase"] = "play"
    return [{"type": "took_discard", "seat": seat, "card": top}, *_commit(state, seat, use)]


def _take_into_joker(state: State, seat: Seat, action: Action) -> list[Event]:
    """The taken card "put in place of a joker": "once the player has laid down
    (earlier or in this action)", the top discard replaces the joker of meld
    ``swap_joker``, and the freed joker goes to the table in the same action,
    in new melds or laid off (new melds first, as in any ``take_discard``)."""
    if not state["laid_down"][seat] and action.get("melds") is None:
        raise IllegalAction(
            "illegal_action",
            "lay down melds of your own (before or in this action) to swap a joker",
        )
    top = state["discard"][-1]
    index = _meld_index(state["table"], action.get("swap_joker"))
    try:
        swapped = melds.swap_joker(state["table"][index], top)
    except MeldError as refused:
        raise IllegalAction("illegal_action", str(refused)) from None
    pool = [*state["hands"][seat], JOKER]
    table = [*state["table"][:index], swapped, *state["table"][index + 1 :]]
    use = _plan_use(state, seat, action, pool, table, both=True)
    if use.hand.count(JOKER) >= pool.count(JOKER):
        raise IllegalAction("illegal_action", "the recovered joker must go to the table")
    use.changed = {index: swapped, **use.changed}
    state["discard"].pop()
    state["phase"] = "play"
    return [
        {"type": "took_discard", "seat": seat, "card": top},
        {"type": "joker_swapped", "seat": seat, "meld": swapped["id"], "card": top},
        *_commit(state, seat, use),
    ]


def _apply_meld(state: State, seat: Seat, action: Action) -> list[Event]:
    """ "Lay down new melds from the hand, one or several in one action"."""
    use = _plan_melds(state, seat, action.get("melds"), state["hands"][seat])
    return _commit(state, seat, use)


def _apply_lay_off(state: State, seat: Seat, action: Action) -> list[Event]:
    """ "Once the player has laid down melds, add cards from the hand to any meld on
    the table, theirs or another player's, keeping it valid"."""
    _require_laid_down(state, seat, "lay off cards")
    use = _plan_lay_off(state["table"], action, state["hands"][seat])
    return _commit(state, seat, use)


def _apply_swap_joker(state: State, seat: Seat, action: Action) -> list[Event]:
    """ "Once the player has laid down, take a joker from any meld by putting in its
    place the real card it stands for from the hand; that joker must be melded or
    laid off in this same turn, again within the same action as the swap." """
    _require_laid_down(state, seat, "swap a joker")
    index = _meld_index(state["table"], action.get("meld"))
    card = action.get("card")
    pool = _without(state["hands"][seat], [card])
    try:
        swapped = melds.swap_joker(state["table"][index], card)
    except MeldError as refused:
        raise IllegalAction("illegal_action", str(refused)) from None
    pool.append(JOKER)
    table = [*state["table"][:index], swapped, *state["table"][index + 1 :]]
    use = _plan_use(state, seat, action, pool, table)
    if use.hand.count(JOKER) >= pool.count(JOKER):
        raise IllegalAction("illegal_action", "the recovered joker must go to the table")
    use.changed = {index: swapped, **use.changed}
    swap: Event = {"type": "joker_swapped", "seat": seat, "meld": swapped["id"], "card": card}
    return [swap, *_commit(state, seat, use)]


def _apply_discard(state: State, seat: Seat, action: Action) -> list[Event]:
    """ "Discard one card face up; the turn ends." Going out: "by discarding their
    last card"."""
    card = action.get("card")
    hand = state["hands"][seat]
    if not isinstance(card, str) or card not in hand:
        raise IllegalAction("illegal_action", f"{card!r} is not in your hand")
    hand.remove(card)
    state["discard"].append(card)
    events: list[Event] = [{"type": "discarded", "seat": seat, "card": card}]
    if not hand:
        return [*events, *_end_round(state, seat)]
    return events + _start_turn(state, (seat + 1) % state["n_players"])


_HANDLERS = {
    "draw": ("draw", _apply_draw),
    "take_discard": ("draw", _apply_take_discard),
    "meld": ("play", _apply_meld),
    "lay_off": ("play", _apply_lay_off),
    "swap_joker": ("play", _apply_swap_joker),
    "discard": ("play", _apply_discard),
}


def round_scores(state: State, went_out: Seat | None) -> list[int]:
    """ "The player who went out scores 0. Every other player scores the cards left
    in hand ...; except that a player who has not laid down any meld this round
    scores 100 instead. Rami sec: if the winner goes out while no other player has
    laid down anything this round, each other player scores 200." """
    if _is_rami_sec(state, went_out):
        return [0 if seat == went_out else RAMI_SEC for seat in range(state["n_players"])]
    return [
        0
        if seat == went_out
        else (hand_points(hand) if state["laid_down"][seat] else NOT_LAID_DOWN)
        for seat, hand in enumerate(state["hands"])
    ]


def hand_points(hand: list[str]) -> int:
    """ "2..10 face value, J Q K 10, ace 11, joker 20"."""
    return sum(melds.card_points(card) for card in hand)


# -- observation ---------------------------------------------------------------


def view(state: State, seat: Seat | None) -> dict[str, Any]:
    """What ``seat`` may see: its own hand, the table, the discard pile, the counts."""
    over = state["phase"] == "over"
    return {
        "round": state["round"],
        "phase": state["phase"],
        "turn": None if over else state["turn"],
        "first_player": state["first_player"],
        "hand": None if seat is None else sorted(state["hands"][seat], key=_card_order),
        "must_use": None,
        "stock_size": len(state["stock"]),
        "stock_rebuilds": state["stock_rebuilds"],
        "discard": list(state["discard"]),
        "table": [_public_meld(meld) for meld in state["table"]],
        "players": [
            {
                "seat": player,
                "hand_size": len(state["hands"][player]),
                "laid_down": state["laid_down"][player],
                "total": state["totals"][player],
            }
            for player in range(state["n_players"])
        ],
        "history": [_round_record(entry) for entry in state["history"]],
        # States stored before an option existed read as its default.
        "options": {**DEFAULT_OPTIONS, **state["options"]},
    }


def outcome(state: State) -> dict[str, Any] | None:
    """ "Lowest total wins; ties are shared." """
    if state["phase"] != "over":
        return None
    totals = state["totals"]
    best = min(totals)
    return {
        "winners": [seat for seat, total in enumerate(totals) if total == best],
        "scores": list(totals),
        "rounds": [_round_record(entry) for entry in state["history"]],
    }


def determinize(state: State, seat: Seat | None, rng: random.Random) -> State:
    """A new state that ``seat`` (None: a spectator) cannot tell from ``state``.

    The cards ``seat`` has not seen, the 108 less its own hand, the discard pile
    and the table, form one pool. Nothing public tells them apart: a card taken
    from the discard pile goes to the table in the same action, and the discard
    pile is public whole. The pool is shuffled from its sorted list (so that the
    result depends only on the view and on ``rng``) and dealt to the other hands,
    keeping their sizes, the rest becoming the stock; every hand is sorted, and
    the generator of later deals is reseeded. ``state`` is left untouched.
    """
    new: State = orjson.loads(orjson.dumps(state))
    hidden = [player for player in range(new["n_players"]) if player != seat]
    pool = [card for player in hidden for card in new["hands"][player]] + new["stock"]
    pool.sort(key=_card_order)
    rng.shuffle(pool)
    for player in hidden:
        size = len(new["hands"][player])
        new["hands"][player], pool = pool[:size], pool[size:]
    new["hands"] = [sorted(hand, key=_card_order) for hand in new["hands"]]
    new["stock"] = pool
    new["rng"] = rng.getrandbits(63)
    return new


# -- private helpers -----------------------------------------------------------


class _Use:
    """What an action does to the hand and the table, computed before any change."""

    def __init__(self, hand: list[str]) -> None:
        self.hand = hand
        self.new_melds: list[melds.Meld] = []
        self.changed: dict[int, melds.Meld] = {}
        self.laid_off: tuple[int, list[dict[str, str]]] | None = None


def _plan_use(
    state: State,
    seat: Seat,
    action: Action,
    pool: list[str],
    table: list[melds.Meld],
    both: bool = False,
) -> _Use:
    """New melds or one lay-off, whichever ``action`` carries; with ``both``
    (``take_discard``), new melds and then a lay-off may come together: "a
    player who lays down for the first time in it may lay off in it too"."""
    has_melds = action.get("melds") is not None
    lay_off = action.get("lay_off")
    if not has_melds and lay_off is None:
        raise IllegalAction("illegal_action", "give melds or a lay_off")
    if has_melds and lay_off is not None and not both:
        raise IllegalAction("illegal_action", "give either melds or a lay_off")
    use = _plan_melds(state, seat, action["melds"], pool) if has_melds else _Use(pool)
    if lay_off is None:
        return use
    if not use.new_melds:
        _require_laid_down(state, seat, "lay off cards")
    if not isinstance(lay_off, dict):
        raise IllegalAction("illegal_action", "lay_off must be an object")
    # On a meld already on the table: the new melds have no id yet.
    laid = _plan_lay_off(table, lay_off, use.hand)
    laid.new_melds = use.new_melds
    return laid


def _plan_melds(state: State, seat: Seat, specs: Any, pool: list[str]) -> _Use:
    """Build every meld, check the cards come from ``pool`` and the opening minimum."""
    if not isinstance(specs, list) or not specs:
        raise IllegalAction("illegal_action", "give at least one meld")
    hand = list(pool)
    new_melds = []
    for spec in specs:
        if not isinstance(spec, dict):
            raise IllegalAction("illegal_action", "a meld is an object with cards")
        cards = _card_list(spec.get("cards"))
        hand = _without(hand, cards)
        try:
            new_melds.append(melds.build_meld(cards, spec.get("joker_as")))
        except MeldError as refused:
            raise IllegalAction("illegal_action", f"{' '.join(cards)}: {refused}") from None
    minimum = state["options"]["opening_minimum"]
    if minimum and not state["laid_down"][seat]:
        total = sum(melds.meld_value(meld) for meld in new_melds)
        if total < minimum:
            raise IllegalAction(
                "illegal_action",
                f"a first lay-down must total at least {minimum} points; these make {total}",
            )
    use = _Use(hand)
    use.new_melds = new_melds
    return use


def _plan_lay_off(table: list[melds.Meld], lay_off: dict[str, Any], pool: list[str]) -> _Use:
    index = _meld_index(table, lay_off.get("meld"))
    cards = _card_list(lay_off.get("cards"))
    hand = _without(pool, cards)
    try:
        extended = melds.extend_meld(table[index], cards, lay_off.get("joker_as"))
    except MeldError as refused:
        raise IllegalAction(
            "illegal_action", f"cannot lay off {' '.join(cards)}: {refused}"
        ) from None
    use = _Use(hand)
    use.changed = {index: extended}
    use.laid_off = (index, _added_slots(table[index], extended))
    return use


def _commit(state: State, seat: Seat, use: _Use) -> list[Event]:
    """Apply a checked plan; the round ends if the hand is now empty."""
    events: list[Event] = []
    state["hands"][seat] = use.hand
    for index, meld in use.changed.items():
        old = state["table"][index]
        state["table"][index] = {**meld, "id": old["id"], "owner": old["owner"]}
    if use.new_melds:
        laid = []
        for meld in use.new_melds:
            placed = {"id": state["next_meld_id"], "owner": seat, **meld}
            state["next_meld_id"] += 1
            state["table"].append(placed)
            laid.append(_public_meld(placed))
        state["laid_down"][seat] = True
        events.append({"type": "melded", "seat": seat, "melds": laid})
    if use.laid_off is not None:
        index, added = use.laid_off
        events.append(
            {
                "type": "laid_off",
                "seat": seat,
                "meld": state["table"][index]["id"],
                "cards": added,
                "result": _public_meld(state["table"][index]),
            }
        )
    if not use.hand:
        events += _end_round(state, seat)
    return events


def _added_slots(before: melds.Meld, after: melds.Meld) -> list[dict[str, str]]:
    """The slots of ``after`` that a lay-off added to ``before``, in meld order."""
    if after["kind"] == "run":
        old = melds.run_positions(before)
        return [
            dict(slot)
            for position, slot in zip(melds.run_positions(after), after["cards"], strict=True)
            if position not in old
        ]
    remaining = list(before["cards"])
    added = []
    for slot in after["cards"]:
        if slot in remaining:
            remaining.remove(slot)
        else:
            added.append(dict(slot))
    return added


def _start_turn(state: State, seat: Seat) -> list[Event]:
    """Pass the turn. "If that leaves nothing to draw (decision), the round ends with
    no winner"; so does a stock that runs out once it has been rebuilt
    ``max_stock_rebuilds`` times, when that option is set ("the rulebook sets no
    limit")."""
    if not state["stock"] and (
        not state["discard"] or _rebuilds_spent(state, state["stock_rebuilds"])
    ):
        return [{"type": "stock_exhausted"}, *_end_round(state, None)]
    state["turn"] = seat
    state["phase"] = "draw"
    return [{"type": "turn", "seat": seat}]


def _rebuilds_spent(state: State, rebuilds: int) -> bool:
    """Whether ``rebuilds`` reaches the table's ``max_stock_rebuilds`` (states
    stored before the option existed have no key: no limit)."""
    bound = state["options"].get("max_stock_rebuilds")
    return bound is not None and rebuilds >= bound


def _reshuffle(state: State) -> Event:
    """ "the whole discard pile is shuffled to form the new stock", its top card
    included; the discard pile is then empty until the next discard."""
    stock = state["discard"]
    with seeded_rng(state) as rng:
        rng.shuffle(stock)
    state["stock"] = stock
    state["discard"] = []
    state["stock_rebuilds"] += 1
    return {"type": "stock_rebuilt", "stock_size": len(stock), "rebuilds": state["stock_rebuilds"]}


def _is_rami_sec(state: State, went_out: Seat | None) -> bool:
    if went_out is None:
        return False
    return not any(laid for seat, laid in enumerate(state["laid_down"]) if seat != went_out)


def _end_round(state: State, went_out: Seat | None) -> list[Event]:
    """Score the round; then the next round, or the end: "Rounds go on until a
    player's total reaches the target at the end of a round"."""
    scores = round_scores(state, went_out)
    state["totals"] = [total + score for total, score in zip(state["totals"], scores, strict=True)]
    entry = {
        "round": state["round"],
        "went_out": went_out,
        "rami_sec": _is_rami_sec(state, went_out),
        "scores": scores,
        "totals": list(state["totals"]),
    }
    state["history"].append(entry)
    events: list[Event] = []
    if went_out is not None:
        events.append({"type": "went_out", "seat": went_out})
    events.append({"type": "round_scored", **_round_record(entry)})
    if max(state["totals"]) >= state["options"]["target_score"]:
        state["phase"] = "over"
        result = outcome(state)
        assert result is not None
        events.append({"type": "match_over", **result})
        return events
    return events + _deal(state)


def _deal(state: State) -> list[Event]:
    """ "Shuffle; deal 13 cards to each player; the rest is the face-down stock;
    turn its top card face up to start the discard pile. The first player of round
    1 is seat 0; it moves one seat clockwise each round." """
    n = state["n_players"]
    deck = [*melds.REAL_CARDS, *melds.REAL_CARDS, *[JOKER] * 4]
    with seeded_rng(state) as rng:
        rng.shuffle(deck)
    state["round"] += 1
    first = (state["round"] - 1) % n
    state["hands"] = [deck[seat * HAND_SIZE : (seat + 1) * HAND_SIZE] for seat in range(n)]
    state["stock"] = deck[n * HAND_SIZE :]
    state["discard"] = [state["stock"].pop()]
    state["table"] = []
    state["next_meld_id"] = 0
    state["stock_rebuilds"] = 0
    state["laid_down"] = [False] * n
    state["first_player"] = first
    state["turn"] = first
    state["phase"] = "draw"
    events: list[Event] = [
        {
            "type": "round_started",
            "round": state["round"],
            "first_player": first,
            "discard": state["discard"][-1],
            "stock_size": len(state["stock"]),
        }
    ]
    events += [
        {"type": "dealt", "seat": seat, "cards": list(state["hands"][seat]), "to": [seat]}
        for seat in range(n)
    ]
    return events


def _every_take(state: State, seat: Seat) -> list[Action]:
    """Every way to take the top discard and put it on the table in the same action."""
    if not state["discard"]:
        return []
    top = state["discard"][-1]
    pool = Counter(state["hands"][seat]) + Counter([top])
    actions = [
        {"type": "take_discard", "melds": specs}
        for specs in _meld_lists(state, seat, pool, must=top)
    ]
    if state["laid_down"][seat]:
        actions += [
            {"type": "take_discard", "lay_off": lay_off}
            for lay_off in _every_lay_off(state["table"], pool, must=top)
        ]
    else:
        actions += _every_lay_down_and_lay_off(state, seat, top)
    return actions + _every_take_into_joker(state, seat, top)


def _every_take_into_joker(state: State, seat: Seat, top: str) -> list[Action]:
    """Every way to put ``top`` in place of a joker on the table and the joker back
    on the table: in a single meld (or an opening holding it), laid off, or, for a
    seat that has not laid down, laid off after melds of the hand."""
    hand = Counter(state["hands"][seat])
    pool = hand + Counter([JOKER])
    actions: list[Action] = []
    for index, meld, swapped in _jokers_standing_for(state["table"], top):
        take = {"type": "take_discard", "swap_joker": meld["id"]}
        table = [*state["table"][:index], swapped, *state["table"][index + 1 :]]
        actions += [{**take, "melds": specs} for specs in _meld_lists(state, seat, pool, JOKER)]
        if state["laid_down"][seat]:
            actions += [
                {**take, "lay_off": lay_off} for lay_off in _every_lay_off(table, pool, JOKER)
            ]
            continue
        for specs in _meld_lists(state, seat, hand):
            left = pool - Counter(card for spec in specs for card in spec["cards"])
            actions += [
                {**take, "melds": specs, "lay_off": lay_off}
                for lay_off in _every_lay_off(table, left, JOKER)
            ]
    return actions


def _jokers_standing_for(
    table: list[melds.Meld], card: str
) -> Iterator[tuple[int, melds.Meld, melds.Meld]]:
    """Each table meld (index, meld) whose joker stands for ``card``, and the meld
    with ``card`` in the joker's place."""
    for index, meld in enumerate(table):
        slot = melds.joker_slot(meld)
        if slot is not None and slot["as"] == card:
            yield index, meld, melds.swap_joker(meld, card)


def _every_lay_down_and_lay_off(state: State, seat: Seat, top: str) -> list[Action]:
    """For a seat that has not laid down: every way to take ``top``, lay down
    melds of the hand that do not hold it (a single meld, or every opening under
    ``opening_minimum``) and lay it off on a meld of the table."""
    hand = Counter(state["hands"][seat])
    pool = hand + Counter([top])
    # Only the melds of the table that take ``top`` with the whole pool can take
    # it with what the new melds leave.
    targets = [meld for meld in state["table"] if _every_lay_off([meld], pool, must=top)]
    if not targets:
        return []
    without = Counter({card: count for card, count in hand.items() if card != top})
    actions: list[Action] = []
    for specs in _meld_lists(state, seat, without):
        left = pool - Counter(card for spec in specs for card in spec["cards"])
        actions += [
            {"type": "take_discard", "melds": specs, "lay_off": lay_off}
            for lay_off in _every_lay_off(targets, left, must=top)
        ]
    return actions


def _meld_lists(
    state: State, seat: Seat, counts: Counter[str], must: str | None = None
) -> list[list[dict[str, Any]]]:
    """The ``melds`` lists a seat may lay down from ``counts`` (holding ``must``):
    every single meld; for an opening under ``opening_minimum``, every combination
    of disjoint melds that reaches it. The lists share their meld dicts."""
    options = _hand_melds(tuple(sorted(counts.elements())))
    minimum = state["options"]["opening_minimum"]
    if state["laid_down"][seat] or not minimum:
        return [[option.spec()] for option in options if must is None or must in option.cards]
    specs = [option.spec() for option in options]
    combos = melds.combinations(options, counts, minimum, must)
    return [[specs[i] for i in combo] for combo in combos]


@functools.lru_cache(maxsize=64)
def _hand_melds(cards: tuple[str, ...]) -> tuple[MeldOption, ...]:
    """Every meld a hand can make, computed once per hand (the same hand is listed
    again and again: each request for the legal actions, each turn it waits)."""
    return tuple(melds.candidate_melds(Counter(cards)))


def _every_lay_off(
    table: list[melds.Meld], counts: Counter[str], must: str | None = None
) -> list[dict[str, Any]]:
    """Every lay-off of cards from ``counts`` (holding ``must``) on a table meld."""
    found = []
    for meld in table:
        for cards, joker_as in melds.lay_offs(meld, counts):
            if must is not None and must not in cards:
                continue
            lay_off: dict[str, Any] = {"meld": meld["id"], "cards": list(cards)}
            if joker_as is not None:
                lay_off["joker_as"] = joker_as
            found.append(lay_off)
    return found


def _every_swap(table: list[melds.Meld], hand: Counter[str]) -> list[Action]:
    """Each joker the hand can win back, with every single meld and every lay-off
    that puts it back on the table."""
    actions: list[Action] = []
    for index, card, pool in _winnable_jokers(table, hand):
        meld = table[index]
        swap = {"type": "swap_joker", "meld": meld["id"], "card": card}
        options = _hand_melds(tuple(sorted(pool.elements())))
        actions += [
            {**swap, "melds": [option.spec()]} for option in options if JOKER in option.cards
        ]
        swapped = [*table[:index], melds.swap_joker(meld, card), *table[index + 1 :]]
        actions += [
            {**swap, "lay_off": lay_off} for lay_off in _every_lay_off(swapped, pool, JOKER)
        ]
    return actions


def _take_discard_actions(state: State, seat: Seat) -> list[Action]:
    """Every minimal way to take the top discard and put it on the table at once."""
    if not state["discard"]:
        return []
    top = state["discard"][-1]
    hand = Counter(state["hands"][seat])
    pool = hand + Counter([top])
    actions = [
        {"type": "take_discard", "melds": specs}
        for specs in _meld_choices(state, seat, pool, must=top)
    ]
    joins = [
        {"meld": meld["id"], **lay_off}
        for meld in state["table"]
        for lay_off in _joining_lay_offs(meld, top, hand)
    ]
    actions += _take_into_joker_actions(state, seat, top)
    if state["laid_down"][seat]:
        return actions + [{"type": "take_discard", "lay_off": lay_off} for lay_off in joins]
    if not joins:
        return actions
    # Lay down first, then lay the taken card off: melds that leave it alone.
    without = Counter({card: count for card, count in hand.items() if card != top})
    for specs in _meld_choices(state, seat, without):
        left = pool - Counter(card for spec in specs for card in spec["cards"])
        actions += [
            {"type": "take_discard", "melds": specs, "lay_off": lay_off}
            for lay_off in joins
            if not Counter(lay_off["cards"]) - left
        ]
    return actions


def _take_into_joker_actions(state: State, seat: Seat, top: str) -> list[Action]:
    """Every minimal way to put ``top`` in place of a joker standing for it: the
    freed joker in a new meld (an opening holding it), or laid off alone, after
    an opening of the hand for a seat that has not laid down."""
    hand = Counter(state["hands"][seat])
    pool = hand + Counter([JOKER])
    actions: list[Action] = []
    for index, meld, swapped in _jokers_standing_for(state["table"], top):
        take = {"type": "take_discard", "swap_joker": meld["id"]}
        actions += [
            {**take, "melds": specs} for specs in _meld_choices(state, seat, pool, must=JOKER)
        ]
        lay_offs = [
            {"meld": target["id"], "cards": [JOKER], "joker_as": fit}
            for target in [*state["table"][:index], swapped, *state["table"][index + 1 :]]
            if not melds.has_joker(target)
            for fit in melds.layoff_cards(target)
        ]
        if state["laid_down"][seat]:
            actions += [{**take, "lay_off": lay_off} for lay_off in lay_offs]
            continue
        for specs in _meld_choices(state, seat, hand) if lay_offs else ():
            actions += [{**take, "melds": specs, "lay_off": lay_off} for lay_off in lay_offs]
    return actions


def _meld_choices(
    state: State, seat: Seat, counts: Counter[str], must: str | None = None
) -> list[list[dict[str, Any]]]:
    """The ``melds`` lists a seat may lay down from ``counts``: single melds, or,
    for an opening under ``opening_minimum``, every combination that reaches it."""
    minimum = state["options"]["opening_minimum"]
    if state["laid_down"][seat] or not minimum:
        return [[option.spec()] for option in melds.candidate_melds(counts, must)]
    options = melds.candidate_melds(counts)
    order = {id(option): index for index, option in enumerate(options)}
    combos = opening_combinations(options, counts, minimum, must)
    # The melds in the order legal_actions gives them, so that the same opening
    # is the same action in both listings.
    return [
        [option.spec() for option in sorted(combo, key=lambda option: order[id(option)])]
        for combo in combos
    ]


def opening_combinations(
    options: list[MeldOption], counts: Counter[str], minimum: int, must: str | None = None
) -> list[list[MeldOption]]:
    """Every minimal set of disjoint melds (among ``options``, the same one twice
    when the hand holds its cards twice) worth ``minimum`` or more, holding
    ``must`` if given.

    Minimal: no meld can be left out and no card trimmed off a meld (an end of a
    run, one card of a set of 4) without falling below ``minimum`` or leaving
    ``must`` in hand. Any larger opening is a minimal one followed, in the same
    turn, by single melds and lay-offs that lead to the very same table.

    The search tries melds by increasing ``kept``: what a meld is still worth
    after its best cut that leaves ``must`` alone. Once ``total + kept`` reaches
    the minimum, that meld and every later one would make a cuttable opening.
    """
    kept = {id(option): _kept_after_cut(option, must) for option in options}
    options = sorted(options, key=lambda option: kept[id(option)])
    keeps = [kept[id(option)] for option in options]
    needs = [Counter(option.cards) for option in options]
    cuts = [_cuts(option) for option in options]
    remaining = dict(counts)
    later = melds.compatible_later(options, counts)
    found: list[list[MeldOption]] = []
    chosen: list[int] = []

    def minimal(total: int) -> bool:
        held = sum(needs[index][must] for index in chosen) if must else 0
        for index in chosen:
            for loss, removed in cuts[index]:
                if total - loss >= minimum and (not must or held > removed.count(must)):
                    return False
        return True

    def extend(candidates: int, total: int) -> None:
        while candidates:
            index = (candidates & -candidates).bit_length() - 1
            candidates &= candidates - 1
            if total + keeps[index] >= minimum:
                return
            need = needs[index]
            if any(remaining[card] < count for card, count in need.items()):
                continue
            chosen.append(index)
            value = total + options[index].value
            if value >= minimum and (not must or any(must in needs[i] for i in chosen)):
                if minimal(value):
                    found.append([options[i] for i in chosen])
            else:
                for card, count in need.items():
                    remaining[card] -= count
                # ``later`` holds the meld itself when its cards are there twice
                extend((candidates | 1 << index) & later[index], value)
                for card, count in need.items():
                    remaining[card] += count
            chosen.pop()

    extend((1 << len(options)) - 1, 0)
    return found


def _kept_after_cut(option: MeldOption, must: str | None) -> int:
    """The most a meld keeps after a cut that leaves ``must`` on the table."""
    kept = [option.value - loss for loss, removed in _cuts(option) if must not in removed]
    return max(kept, default=-MAX_OPENING_POINTS)


def _cuts(option: MeldOption) -> list[tuple[int, list[str]]]:
    """Ways to shrink a meld and keep a meld (or nothing): (points lost, cards)."""
    cards = list(option.cards)
    cuts = [(option.value, cards)]
    if len(cards) > 3 and option.meld["kind"] == "set":
        each = option.value // len(cards)
        cuts += [(each, [card]) for card in cards]
    elif len(cards) > 3:
        first, last = option.meld["start"], option.meld["start"] + len(cards) - 1
        cuts += [
            (melds.position_value(first), cards[:1]),
            (melds.position_value(last), cards[-1:]),
        ]
    return cuts


def _lay_off_actions(table: list[melds.Meld], hand: Counter[str]) -> list[Action]:
    actions: list[Action] = []
    for meld in table:
        fits = melds.layoff_cards(meld)
        actions += [
            {"type": "lay_off", "meld": meld["id"], "cards": [card]} for card in fits if hand[card]
        ]
        if hand[JOKER] and not melds.has_joker(meld):
            actions += [
                {"type": "lay_off", "meld": meld["id"], "cards": [JOKER], "joker_as": card}
                for card in fits
            ]
    return actions


def _swap_actions(table: list[melds.Meld], hand: Counter[str]) -> list[Action]:
    """Each joker the hand can recover, with each way to put it back on the table:
    in a new meld, or laid off alone (a joker fits any end of a run)."""
    actions: list[Action] = []
    for index, card, pool in _winnable_jokers(table, hand):
        meld = table[index]
        swap = {"type": "swap_joker", "meld": meld["id"], "card": card}
        actions += [
            {**swap, "melds": [option.spec()]} for option in melds.candidate_melds(pool, JOKER)
        ]
        swapped = melds.swap_joker(meld, card)
        for target in [*table[:index], swapped, *table[index + 1 :]]:
            if melds.has_joker(target):
                continue
            actions += [
                {**swap, "lay_off": {"meld": target["id"], "cards": [JOKER], "joker_as": fit}}
                for fit in melds.layoff_cards(target)
            ]
    return actions


def _winnable_jokers(
    table: list[melds.Meld], hand: Counter[str]
) -> Iterator[tuple[int, str, Counter[str]]]:
    """Each table meld (by index) whose joker the hand can win back, the card that
    replaces it, and the hand then, the joker in it."""
    for index, meld in enumerate(table):
        slot = melds.joker_slot(meld)
        if slot is not None and hand[slot["as"]]:
            yield index, slot["as"], hand - Counter([slot["as"]]) + Counter([JOKER])


def _joining_lay_offs(meld: melds.Meld, card: str, hand: Counter[str]) -> list[dict[str, Any]]:
    """The smallest lay-offs that put ``card`` on ``meld``: alone, or in a run with
    the hand's cards (one of them perhaps a joker) that join it to an end."""
    fits = melds.layoff_cards(meld)
    if card == JOKER:
        if melds.has_joker(meld):
            return []
        return [{"cards": [JOKER], "joker_as": fit} for fit in fits]
    if card in fits:
        return [{"cards": [card]}]
    if meld["kind"] != "run" or melds.suit_of(card) != melds.suit_of(
        melds.slot_card(meld["cards"][0])
    ):
        return []
    held = melds.run_positions(meld)
    rank = melds.rank_of(card)
    targets = (melds.LOW_ACE, melds.HIGH_ACE) if rank == 1 else (rank,)
    suit = melds.suit_of(card)
    found: dict[tuple[tuple[str, ...], str | None], dict[str, Any]] = {}
    for target in targets:
        if target in held:
            continue
        gap = range(target + 1, held.start) if target < held.start else range(held.stop, target)
        between = [melds.card_at(p, suit) for p in gap]
        cards = [card, *between] if target < held.start else [*between, card]
        ways = []
        if all(hand[c] for c in between):
            ways.append((cards, None))
        if hand[JOKER] and not melds.has_joker(meld):
            for filler in between:
                others = [c for c in between if c != filler]
                if all(hand[c] for c in others):
                    ways.append(([JOKER if c == filler else c for c in cards], filler))
        for way_cards, joker_as in ways:
            lay_off: dict[str, Any] = {"cards": way_cards}
            if joker_as is not None:
                lay_off["joker_as"] = joker_as
            found[(tuple(way_cards), joker_as)] = lay_off
    return list(found.values())


def _round_record(entry: dict[str, Any]) -> dict[str, Any]:
    """A copy of a round's record, sharing no list with the state."""
    return {**entry, "scores": list(entry["scores"]), "totals": list(entry["totals"])}


def _public_meld(meld: melds.Meld) -> dict[str, Any]:
    return {
        "id": meld["id"],
        "owner": meld["owner"],
        "kind": meld["kind"],
        "cards": [dict(slot) for slot in meld["cards"]],
    }


def _require_laid_down(state: State, seat: Seat, what: str) -> None:
    if not state["laid_down"][seat]:
        raise IllegalAction("illegal_action", f"lay down melds of your own before you {what}")


def _meld_index(table: list[melds.Meld], meld_id: Any) -> int:
    for index, meld in enumerate(table):
        if meld["id"] == meld_id and isinstance(meld_id, int) and not isinstance(meld_id, bool):
            return index
    raise IllegalAction("illegal_action", f"there is no meld {meld_id!r} on the table")


def _card_list(cards: Any) -> list[str]:
    if not isinstance(cards, list) or not all(isinstance(card, str) for card in cards):
        raise IllegalAction("illegal_action", "cards must be a list of card names")
    return cards


def _without(hand: list[str], cards: list[Any]) -> list[str]:
    """``hand`` less ``cards`` (a new list), refusing cards the hand lacks."""
    rest = list(hand)
    for card in cards:
        if not isinstance(card, str) or card not in rest:
            raise IllegalAction("illegal_action", f"{card!r} is not in your hand")
        rest.remove(card)
    return rest


def _card_order(card: str) -> tuple[int, int]:
    if card == JOKER:
        return (len(melds.SUITS), 0)
    return (melds.SUITS.index(melds.suit_of(card)), melds.rank_of(card))


def state_from_view(seen: dict[str, Any], seat: Seat | None, rng: random.Random) -> State:
    """A complete state consistent with ``seen``, ``view(state, seat)`` after a
    JSON round trip, for a bot that only has its seat's view.

    Everything in the view is kept; the hidden cards (the other hands and the
    stock) are the 108 cards less the seat's hand, the discard pile and the
    table, which ``determinize`` then deals at random, along with the seed of
    later deals. So ``view(state_from_view(view(s, seat), seat, rng), seat) ==
    view(s, seat)``. Raises ValueError when the view cannot come from a real
    state.
    """
    players = seen["players"]
    n = len(players)
    own = list(seen["hand"] or [])
    table = [_meld_from_view(meld) for meld in seen["table"]]
    unseen = Counter([*melds.REAL_CARDS, *melds.REAL_CARDS, *[JOKER] * 4])
    unseen.subtract(own)
    unseen.subtract(seen["discard"])
    unseen.subtract(slot["card"] for meld in table for slot in meld["cards"])
    if any(count < 0 for count in unseen.values()):
        raise ValueError("the view shows more copies of a card than the deck holds")
    # Placeholders for the hidden cards: the right multiset in sorted order,
    # which determinize then shuffles.
    hidden = sorted(unseen.elements(), key=_card_order)
    hands = []
    for player in players:
        if player["seat"] == seat:
            hands.append(own)
            continue
        size = player["hand_size"]
        hands.append(hidden[:size])
        hidden = hidden[size:]
    if len(hidden) != seen["stock_size"] or any(
        len(hand) != player["hand_size"] for hand, player in zip(hands, players, strict=True)
    ):
        raise ValueError("the view's card counts do not add up to 108")
    skeleton: State = {
        "options": dict(seen["options"]),
        "n_players": n,
        "rng": 0,
        "round": seen["round"],
        "first_player": seen["first_player"],
        # Once the match is over nothing reads the turn any more.
        "turn": seen["first_player"] if seen["turn"] is None else seen["turn"],
        "phase": seen["phase"],
        "hands": hands,
        "stock": hidden,
        "discard": list(seen["discard"]),
        "table": table,
        # Meld ids restart at 0 each round and melds never leave the table.
        "next_meld_id": len(table),
        "stock_rebuilds": seen["stock_rebuilds"],
        "laid_down": [player["laid_down"] for player in players],
        "totals": [player["total"] for player in players],
        "history": [_round_record(entry) for entry in seen["history"]],
    }
    return determinize(skeleton, seat, rng)


def _meld_from_view(meld: dict[str, Any]) -> melds.Meld:
    """A table meld as the state keeps it. A run's ``start`` is the ladder position
    of its first card: an ace first is the low ace, as a run of 3 or more cards
    cannot start at the high ace."""
    slots = [dict(slot) for slot in meld["cards"]]
    rebuilt: melds.Meld = {"id": meld["id"], "owner": meld["owner"], "kind": meld["kind"]}
    if meld["kind"] == "run":
        rebuilt["start"] = melds.rank_of(melds.slot_card(slots[0]))
    rebuilt["cards"] = slots
    return rebuilt
