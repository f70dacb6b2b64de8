"""Pacal's own bot knowledge: an evaluation, a greedy policy, search hooks.

A pyramid is judged by how many slots it fills and by how easily its empty
slots can still be filled: each run of ``k`` empty slots between two visible
values has ``room`` cards still unplaced that would fit between them, and
``log C(room, k)`` (the log of the number of ways to complete it) rewards
gaps whose room matches their size; a run with less room than slots is
dead until a cover frees it. A seat's value is its pyramid's score minus
the other's, plus the manches won, with the decision under way (the offer
to choose from, the cards to place) resolved by each side's best reply.

Only public information is read (pyramids, offer, cards to place, manches
won), except the seat's own last card: values are the same in every world
the seat cannot tell apart.

The search (``engines/ai/mcts.py``) considers the best few offers by that
evaluation and values a leaf by playing the rest of its manche to the end
in the sampled world (``simulate_manche``: the rules without the engine's
checks, a fast policy, several times faster than the engine), then turning
the manches won into a chance of winning the match. Playing the manche out
is what beats the greedy policy: a static evaluation a few offers ahead
did no better than greedy, however long the search.
"""

from __future__ import annotations

import math
import random
from functools import cache

from engines.ai.policies import one_ply
from engines.core import Action, Game, Seat, State
from engines.pacal.rules import (
    CHOOSE,
    LAST_CARD,
    MAX_FACE_UP,
    MODE_SOLITAIRE,
    N_CARDS,
    N_SLOTS,
    OFFER,
    OFFERS_PER_MANCHE,
    OVER,
    PLACE,
    filled_slots,
    outcome,
    spread,
)

FILL_WEIGHT = 4.0  # one more filled slot
DEAD_WEIGHT = 8.0  # per slot a run lacks room for
MANCHE_WEIGHT = 100.0  # one manche won
MATCH_WEIGHT = 1000.0  # the match
SEARCH_OFFERS = 6  # offers the search considers, the best by the evaluation

Pyramid = list[list[int]]
EMPTY_FIT, COVER_FIT = 2, 1
Prepared = tuple[float, list[tuple[int, int, int, int, int, float]]]


def _run_score(room: int, slots: int) -> float:
    """A run of ``slots`` empty slots with ``room`` cards that fit between its
    bounds: the log of the ways to fill it, or a penalty per missing card."""
    if room < slots:
        return -DEAD_WEIGHT * (slots - room)
    return math.lgamma(room + 1) - math.lgamma(slots + 1) - math.lgamma(room - slots + 1)


# RUN_SCORES[room][slots], for every room 0..50 and run 0..10.
RUN_SCORES = [[_run_score(room, k) for k in range(N_SLOTS + 1)] for room in range(N_CARDS + 1)]


# -- evaluation ------------------------------------------------------------


def evaluate(state: State, seat: Seat) -> float:
    """``seat``'s pyramid score minus the other's, plus manches won.

    In the choose phase the chooser takes the card best for them, and cards
    waiting to be placed go to their best slot; a card that fits nowhere
    loses the manche. Solitaire: the score of the pyramid.
    """
    if state["mode"] == MODE_SOLITAIRE:
        return _solitaire_value(state)
    if state["phase"] == OVER:
        return MATCH_WEIGHT if outcome(state)["winners"] == [seat] else -MATCH_WEIGHT
    won = state["manches_won"]
    value = MANCHE_WEIGHT * (won[seat] - won[1 - seat])
    available = _available_prefix(state["pyramids"])
    return value + _manche_value(state, seat, available)


def pyramid_score(pyramid: Pyramid, available: list[int]) -> float:
    """Filled slots, and ``log C(room, k)`` over each run of empty slots.

    ``available[x]`` counts the unplaced cards up to ``x``, so the room
    between visible values ``low < high`` is ``available[high - 1] -
    available[low]``.
    """
    score = 0.0
    run = 0
    high = N_CARDS + 1
    for stack in pyramid:
        if not stack:
            run += 1
            continue
        score += FILL_WEIGHT
        visible = stack[-1]
        if run:
            score += RUN_SCORES[available[high - 1] - available[visible]][run]
            run = 0
        high = visible
    if run:
        score += RUN_SCORES[available[high - 1]][run]
    return score


def openings(pyramid: Pyramid, covering: bool = True) -> list[tuple[int, int, int]]:
    """``(slot, low, high)`` for each slot that may take a card ``low < card
    < high``: ``rules.fitting_slots`` for every card at once."""
    return [opening[:3] for opening in prepare(pyramid, [0] * (N_CARDS + 1), covering)[1]]


def prepare(pyramid: Pyramid, available: list[int], covering: bool = True) -> Prepared:
    """The pyramid's score and, for each slot that may take a card, what
    ``best_slot`` needs to score a card there without rescoring the pyramid:
    ``(slot, low, high, above, below, constant)``, where a card ``low < c <
    high`` leaves the score plus ``constant + RUN_SCORES[room(high, c)][above]
    + RUN_SCORES[room(c, low)][below]`` (``above``, ``below``: the empty
    slots on each side up to the next visible card)."""
    afters = [N_SLOTS] * N_SLOTS  # the nearest filled slot below each slot
    after = N_SLOTS
    for slot in range(N_SLOTS - 1, -1, -1):
        afters[slot] = after
        if pyramid[slot]:
            after = slot
    opened = []
    before, high = -1, N_CARDS + 1  # the nearest filled slot above, its value
    for slot, stack in enumerate(pyramid):
        after = afters[slot]
        low = pyramid[after][-1] if after < N_SLOTS else 0
        above, below = slot - before - 1, after - slot - 1
        if not stack:
            constant = (
                FILL_WEIGHT - RUN_SCORES[available[high - 1] - available[low]][above + below + 1]
            )
            opened.append((slot, low, high, above, below, constant))
            continue
        if covering and len(stack) < MAX_FACE_UP:
            old = stack[-1]
            constant = -(
                RUN_SCORES[available[high - 1] - available[old]][above]
                + RUN_SCORES[available[old - 1] - available[low]][below]
            )
            opened.append((slot, low, high, above, below, constant))
        before, high = slot, stack[-1]
    return pyramid_score(pyramid, available), opened


def best_slot(
    pyramid: Pyramid,
    card: int,
    available: list[int],
    prepared: Prepared | None = None,
) -> tuple[int | None, float]:
    """The slot where ``card`` leaves the best pyramid, and that score
    (None and minus infinity when it fits nowhere). ``prepared``: the
    pyramid's ``prepare``, when already known."""
    base, opened = prepared if prepared is not None else prepare(pyramid, available)
    best: tuple[int | None, float] = (None, -math.inf)
    for slot, low, high, above, below, constant in opened:
        if not low < card < high:
            continue
        score = (
            base
            + constant
            + RUN_SCORES[available[high - 1] - available[card]][above]
            + RUN_SCORES[available[card - 1] - available[low]][below]
        )
        if score > best[1]:
            best = (slot, score)
    return best


# -- policies --------------------------------------------------------------


def greedy(state: State, seat: Seat, rng: random.Random) -> Action:
    """One ply: each legal action on a determinized copy, kept by ``evaluate``
    (which resolves the other side's reply to an offer, the placements)."""
    return one_ply(_game(), state, seat, rng, evaluate)


def ranked_offers(state: State, seat: Seat) -> list[tuple[float, Action]]:
    """Every offer of ``seat``'s hand with its value for ``seat`` once the
    other side takes the card best for them and both place at their best
    slot (what ``evaluate`` makes of the offer, less the constant part),
    best first."""
    pyramids = state["pyramids"]
    available = _available_prefix(pyramids)
    hand = state["hands"][seat]
    mine_ready = prepare(pyramids[seat], available)
    theirs_ready = prepare(pyramids[1 - seat], available)
    mine = [best_slot(pyramids[seat], card, available, mine_ready)[1] for card in hand]
    theirs = [best_slot(pyramids[1 - seat], card, available, theirs_ready)[1] for card in hand]
    ranked = [
        (
            min(_split(mine[j], theirs[i]), _split(mine[i], theirs[j])),
            {"type": "offer", "cards": [hand[i], hand[j]]},
        )
        for i in range(len(hand))
        for j in range(i + 1, len(hand))
    ]
    ranked.sort(key=lambda pair: -pair[0])
    return ranked


def search_actions(state: State, seat: Seat) -> list[Action]:
    """The actions the search considers: the ``SEARCH_OFFERS`` best offers
    (of up to 105), every action otherwise."""
    if state["mode"] != MODE_SOLITAIRE and state["phase"] == OFFER:
        return [action for _, action in ranked_offers(state, seat)[:SEARCH_OFFERS]]
    return _game().legal_actions(state, seat)


def rollout_action(state: State, seat: Seat, rng: random.Random) -> Action:
    """Playouts, fast: one of the two best offers; the card whose split is
    better; the best slot; the last card if it fits."""
    phase = state["phase"]
    pyramids = state["pyramids"]
    if state["mode"] == MODE_SOLITAIRE:
        return _solitaire_rollout(state, _available_prefix(pyramids))
    if phase == OFFER:
        return rng.choice(ranked_offers(state, seat)[:2])[1]
    available = _available_prefix(pyramids)
    if phase == CHOOSE:
        a, b = state["offer"]["cards"]
        take_a = _split_value(pyramids, seat, a, b, seat, available)
        take_b = _split_value(pyramids, seat, b, a, seat, available)
        return {"type": "choose", "card": a if take_a >= take_b else b}
    card = state["to_place"][seat] if phase == PLACE else state["hands"][seat][0]
    slot, _ = best_slot(pyramids[seat], card, available)
    if slot is None:
        return {"type": "pass"}
    return {"type": "place", "slot": slot}


def playout_value(start: State, state: State) -> list[float] | None:
    """The value of a decided manche: each seat's chance of winning the match
    from the manches won (1 or 0 once it is over); None while the manche
    under search goes on."""
    if state["mode"] == MODE_SOLITAIRE:
        if state["phase"] != OVER:
            return None
        return [max(0.0, _solitaire_result(state))]
    if state["phase"] == OVER:
        winner = outcome(state)["winners"][0]
        return [1.0 if s == winner else 0.0 for s in range(2)]
    if state["manche"] == start["manche"]:
        return None
    return _match_values(state["manches_to_win"], state["manches_won"], None)


def playout(start: State, state: State, rng: random.Random) -> list[float]:
    """A whole playout from a search leaf: finish the offer under way with
    the engine, then play the rest of the manche fast (``simulate_manche``)
    and value the result as the chance of winning the match."""
    game = _game()
    if state["mode"] == MODE_SOLITAIRE:
        while state["phase"] != OVER:
            game.apply(state, 0, rollout_action(state, 0, rng))
        return playout_value(start, state) or []
    while state["phase"] not in (OFFER, OVER) and state["manche"] == start["manche"]:
        seat = game.to_act(state)[0]
        game.apply(state, seat, rollout_action(state, seat, rng))
    if state["phase"] == OVER or state["manche"] != start["manche"]:
        return playout_value(start, state) or []
    winner = simulate_manche(state, rng)
    return _match_values(state["manches_to_win"], state["manches_won"], winner)


def simulate_manche(state: State, rng: random.Random) -> Seat | None:
    """Play the rest of a manche from an offer phase, by the rules but
    without the engine's checks and events, with a fast policy: offer two
    cards that fill an empty slot of one's own and as few of the other's as
    possible; take the card that leaves the offerer stuck, else the one that
    fills an empty slot, else the best fit; place at the best slot; play the
    last card if it fills a slot. Mutates ``state``'s pyramids and hands;
    returns the manche's winner (None: void)."""
    pyramids, hands = state["pyramids"], state["hands"]
    active = state["active"]
    for _ in range(state["offers_made"], OFFERS_PER_MANCHE):
        chooser = 1 - active
        tables = [_fit_levels(pyramid) for pyramid in pyramids]
        taken, left = _sim_offer_and_choose(tables, hands[active], active, rng)
        cards = [0, 0]
        cards[chooser], cards[active] = taken, left
        fit = [tables[s][cards[s]] for s in range(2)]
        if not fit[0] or not fit[1]:
            return None if fit[0] == fit[1] else (0 if fit[0] else 1)
        available = _available_prefix(pyramids)
        for s in range(2):
            slot, _ = best_slot(pyramids[s], cards[s], available)
            pyramids[s][slot].append(cards[s])
        decided, winner = _sim_completed(pyramids)
        if decided:
            return winner
        active = chooser
    available = _available_prefix(pyramids)
    for s in range(2):
        if hands[s] and _fit_level(pyramids[s], hands[s][0]) == EMPTY_FIT:
            slot, _ = best_slot(pyramids[s], hands[s][0], available)
            pyramids[s][slot].append(hands[s].pop())
    decided, winner = _sim_completed(pyramids)
    if decided:
        return winner
    filled = [filled_slots(pyramid) for pyramid in pyramids]
    if filled[0] != filled[1]:
        return 0 if filled[0] > filled[1] else 1
    return _by_spread(pyramids)


@cache
def match_chance(need: int, other_needs: int) -> float:
    """The chance of winning ``need`` manches before the other wins
    ``other_needs``, each manche won with probability 1/2."""
    if need <= 0:
        return 1.0
    if other_needs <= 0:
        return 0.0
    return 0.5 * (match_chance(need - 1, other_needs) + match_chance(need, other_needs - 1))


# -- private helpers -------------------------------------------------------


def _available_prefix(pyramids: list[Pyramid]) -> list[int]:
    """``prefix[x]``: how many cards 1..x lie in no pyramid."""
    placed = [False] * (N_CARDS + 1)
    for pyramid in pyramids:
        for stack in pyramid:
            for card in stack:
                placed[card] = True
    prefix = [0] * (N_CARDS + 1)
    for x in range(1, N_CARDS + 1):
        prefix[x] = prefix[x - 1] + (not placed[x])
    return prefix


def _manche_value(state: State, seat: Seat, available: list[int]) -> float:
    """The pyramid difference once the decision under way is resolved."""
    pyramids = state["pyramids"]
    phase = state["phase"]
    if phase == CHOOSE:
        chooser = 1 - state["active"]
        a, b = state["offer"]["cards"]
        splits = [
            _split_value(pyramids, chooser, mine, other, seat, available)
            for mine, other in ((a, b), (b, a))
        ]
        return max(splits) if chooser == seat else min(splits)
    scores = []
    for s in range(2):
        card = None
        if phase == PLACE and state["pending"][s]:
            card = state["to_place"][s]
        elif phase == LAST_CARD and state["pending"][s] and s == seat:
            card = state["hands"][s][0]
        elif phase == PLACE:
            # A stuck seat keeps its card, which fits nowhere: it loses the
            # manche once the other has placed.
            card = state["to_place"][s]
        scores.append(_placed_score(pyramids[s], card, available, optional=phase == LAST_CARD))
    return _split(scores[seat], scores[1 - seat])


def _split_value(
    pyramids: list[Pyramid],
    chooser: Seat,
    taken: int,
    left: int,
    seat: Seat,
    available: list[int],
) -> float:
    """``seat``'s value when ``chooser`` takes ``taken`` and the offerer gets ``left``."""
    cards = [0, 0]
    cards[chooser], cards[1 - chooser] = taken, left
    scores = [best_slot(pyramids[s], cards[s], available)[1] for s in range(2)]
    return _split(scores[seat], scores[1 - seat])


def _split(mine: float, theirs: float) -> float:
    """The value of both placements' best scores: a card that fits nowhere
    (minus infinity) loses the manche; both stuck: a void manche."""
    if mine == -math.inf:
        return 0.0 if theirs == -math.inf else -MANCHE_WEIGHT
    if theirs == -math.inf:
        return MANCHE_WEIGHT
    return mine - theirs


def _placed_score(
    pyramid: Pyramid, card: int | None, available: list[int], optional: bool
) -> float:
    score = pyramid_score(pyramid, available)
    if card is None:
        return score
    placed = best_slot(pyramid, card, available)[1]
    return max(score, placed) if optional else placed


def _match_values(target: int, won: list[int], winner: Seat | None) -> list[float]:
    """Each seat's chance of winning the match once ``winner`` (None: nobody)
    wins the manche under way, every later manche a coin toss."""
    need = [target - count for count in won]
    if winner is not None:
        need[winner] -= 1
    first = match_chance(need[0], need[1])
    return [first, 1.0 - first]


def _fit_levels(pyramid: Pyramid) -> list[int]:
    """For each card 0..50: ``EMPTY_FIT`` if it can fill an empty slot,
    ``COVER_FIT`` if it can only cover a card, 0 if it fits nowhere."""
    highs = [0] * N_SLOTS
    high = N_CARDS + 1
    for slot, stack in enumerate(pyramid):
        highs[slot] = high
        if stack:
            high = stack[-1]
    levels = [0] * (N_CARDS + 1)
    empty = []
    low = 0
    for slot in range(N_SLOTS - 1, -1, -1):
        stack = pyramid[slot]
        high = highs[slot]
        if not stack:
            empty.append((low, high))
            continue
        if len(stack) < MAX_FACE_UP:
            levels[low + 1 : high] = [COVER_FIT] * (high - low - 1)
        low = stack[-1]
    for low, high in empty:
        levels[low + 1 : high] = [EMPTY_FIT] * (high - low - 1)
    return levels


def _fit_level(pyramid: Pyramid, card: int) -> int:
    """How ``card`` fits ``pyramid`` (see ``_fit_levels``)."""
    return _fit_levels(pyramid)[card]


def _sim_offer_and_choose(
    tables: list[list[int]], hand: list[int], active: Seat, rng: random.Random
) -> tuple[int, int]:
    """The simulated offer from ``hand`` and the chooser's reply: (taken, left).
    Both offered cards leave the hand."""
    mine, theirs = tables[active], tables[1 - active]
    keyed = sorted((-mine[card], theirs[card], rng.random(), card) for card in hand)
    (mine_a, theirs_a, _, a), (mine_b, theirs_b, _, b) = keyed[0], keyed[1]
    hand.remove(a)
    hand.remove(b)
    options = [
        (theirs_a > 0 and mine_b == 0, theirs_a, mine_b, rng.random(), a, b),
        (theirs_b > 0 and mine_a == 0, theirs_b, mine_a, rng.random(), b, a),
    ]
    best = max(options)
    return best[4], best[5]


def _sim_completed(pyramids: list[Pyramid]) -> tuple[bool, Seat | None]:
    """Whether a pyramid is complete, and the manche's winner then."""
    complete = [filled_slots(pyramid) == N_SLOTS for pyramid in pyramids]
    if complete[0] and complete[1]:
        return True, _by_spread(pyramids)
    if complete[0] or complete[1]:
        return True, 0 if complete[0] else 1
    return False, None


def _by_spread(pyramids: list[Pyramid]) -> Seat | None:
    spreads = [spread(pyramid) for pyramid in pyramids]
    if spreads[0] == spreads[1]:
        return None
    return 0 if spreads[0] > spreads[1] else 1


def _solitaire_value(state: State) -> float:
    if state["phase"] == OVER:
        return MATCH_WEIGHT * _solitaire_result(state)
    pyramid = state["pyramids"][0]
    return pyramid_score(pyramid, _available_prefix([pyramid])) - N_SLOTS


def _solitaire_result(state: State) -> float:
    """A finished solitaire: 1 won (10 cards), a completed pyramid less a
    sixtieth per card drawn beyond 10 (0.5 at 40), -1 lost."""
    result = outcome(state)
    if not result["completed"]:
        return -1.0
    return 1.0 - (result["cards_drawn"] - N_SLOTS) / 60


def _solitaire_rollout(state: State, available: list[int]) -> Action:
    """Place the drawn card where it leaves the best pyramid; a card that
    fits no empty slot is set aside (the only choice the rules leave)."""
    pyramid = state["pyramids"][0]
    prepared = prepare(pyramid, available, covering=False)
    slot, _ = best_slot(pyramid, state["drawn"], available, prepared)
    if slot is None:
        return {"type": "discard"}
    return {"type": "place", "slot": slot}


def _game() -> Game:
    """The engine object (imported late: ``engines.pacal`` imports this module)."""
    from engines.pacal import GAME

    return GAME
