"""Ducale's own bot knowledge: an evaluation, a greedy policy, search hooks.

A round is a race to an empty hand, and the loser pays for the cards left.
The evaluation therefore reads a hand as a rummy player does (``shape``): the
melds it already holds (ready to lay down), the cards that can be laid off on
the table, the *partials* (two cards that one more card turns into a meld, with
the number of copies of that card still unseen, its *outs*) and the lone cards.
Its *needs*, the number of useful cards still to come before the hand can go
out, measure how far it is from the end; its points are what it pays if the
other goes out first. The chance of winning the round is a logistic of the
difference of needs, the opponent's being estimated from its hand size alone
(``evaluate`` reads only what the seat sees); the value is the expected margin
of totals after the round, plus the totals so far.

``greedy`` is one ply on ``evaluate`` (over ``compact_actions``, which reach
the same positions as the full listing). The search hooks: ``rollout_action``
plays a fast version of the same idea (take the discard when it goes to the
table, in a new meld, laid off or in place of a joker standing for it,
lay down every meld, lay off, discard the least connected card);
``search_actions`` narrows the tree to the few best ways to take the discard
or to place cards (``ranked_moves``: where the joker goes matters most), then
to the few best discards; ``playout`` plays the rest of the round out
(``simulate_round``: the rules on the state's lists, by the rollout policy's
ideas plus taking a joker back, several times faster than the engine) and
values it by the chance of winning the match once the round is scored
(``match_chances``): where ``evaluate`` weighs the points at stake, the
search knows that only the match counts (when the round decides it, only
going out first does).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from functools import lru_cache
from typing import Any, NamedTuple

import orjson

from engines.ai.policies import one_ply
from engines.core import Action, Game, Seat, State
from engines.ducale import melds
from engines.ducale.melds import JOKER, SUITS
from engines.ducale.rules import (
    NOT_LAID_DOWN,
    RAMI_SEC,
    compact_actions,
    outcome,
    round_scores,
)

# Needs of a card no partial holds, of a partial, of a partial no unseen card
# can complete (it is two lone cards in effect).
LONE_NEEDS = 2.0
PARTIAL_NEEDS = 1.0
DEAD_PARTIAL_NEEDS = 2.0
# An unseen completing card is worth this much of a need (capped per partial).
OUT_CREDIT = 0.05
MAX_OUT_CREDIT = 0.25
# The opponent's needs, from its hand size alone: NEEDS_PER_CARD per card.
NEEDS_PER_CARD = 0.8
# Difference of needs worth a logistic unit in the chance of winning the round,
# and the needs that being to act is worth (fitted on self-play rounds).
RACE_SCALE = 5.0
TEMPO = 0.75
# The search's values are sharper than estimated chances, so that UCB's
# exploration does not drown the small differences a few turns make.
SEARCH_RACE_SCALE = 2.0
# Points of an unseen card left in a hand, on average.
MEAN_CARD_POINTS = 7.0
# A finished match, in points.
MATCH_POINTS = 1000.0
# Worlds sampled by ``greedy`` to value a draw from the stock.
DRAW_SAMPLES = 6
# What the search considers: the best discards (``ranked_discards``), the
# moves placing the most cards, the ways to take the discard placing the most.
SEARCH_DISCARDS = 3
SEARCH_PLACINGS = 2
SEARCH_TAKES = 3
# A playout's round ends with no winner once the stock has been rebuilt this
# many more times than where it started (or at the table's own bound): a blocked
# table would otherwise play on forever, the rulebook setting no limit.
PLAYOUT_STOCK_REBUILDS = 3
# Discards valued in ``ranked_discards`` (the least worth keeping by
# ``keep_score``; the others follow in that order).
RANKED_DISCARDS = 5
# The gap of totals worth a logistic unit in ``match_chances``: a third of
# what remains to the target, and at least this.
MIN_MATCH_SCALE = 5.0

# Ladder positions of a card in a run: the ace is 1 and 14.
_POSITIONS = {
    card: (1, 14) if melds.rank_of(card) == 1 else (melds.rank_of(card),)
    for card in melds.REAL_CARDS
}


class Shape(NamedTuple):
    """How a hand stands: cards in melds, partials, lone cards, needs, points."""

    ready: int  # cards in melds the hand holds
    layable: int  # cards that fit a meld on the table
    partials: int
    lone: int
    needs: float
    points: int


# -- evaluation ------------------------------------------------------------


def evaluate(state: State, seat: Seat) -> float:
    """``seat``'s expected margin of totals (others' minus its own) after this
    round, from its own hand and what is public: larger is better.

    A finished match is worth ``MATCH_POINTS`` to its sole winner.
    """
    totals = state["totals"]
    others = [s for s in range(state["n_players"]) if s != seat]
    if state["phase"] == "over":
        winners = outcome(state)["winners"]
        margin = min(totals[s] for s in others) - totals[seat]
        if winners == [seat]:
            return MATCH_POINTS + margin
        return margin - (MATCH_POINTS if seat not in winners else 0.0)
    mine = hand_shape(state, seat)
    my_needs = mine.needs - (TEMPO if state["turn"] == seat else 0.0)
    closest = min(others, key=lambda s: estimated_needs(state, s))
    return _round_margin(
        state, seat, closest, my_needs, estimated_needs(state, closest), mine.points
    )


def hand_shape(state: State, seat: Seat) -> Shape:
    """``shape`` of ``seat``'s hand against the table, with the cards it has seen."""
    hand = state["hands"][seat]
    seen = Counter(hand)
    seen.update(state["discard"])
    for meld in state["table"]:
        seen.update(slot["card"] for slot in meld["cards"])
    fits = table_fits(state["table"])
    pending_discard = state["turn"] == seat and state["phase"] == "play"
    return shape(hand, seen, fits, state["laid_down"][seat], pending_discard)


def shape(
    hand: list[str],
    seen: Counter[str],
    fits: set[str],
    laid_down: bool,
    pending_discard: bool = False,
) -> Shape:
    """Read ``hand``: the best arrangement of its melds (most cards, then most
    points kept off the hand), then lay-offs on the table (``fits``), partials
    by their outs (copies not in ``seen``), and the jokers, each completing a
    partial or else making one. ``pending_discard``: one card will still be
    discarded this turn, so the worst card needs nothing."""
    jokers = hand.count(JOKER)
    real = sorted((card for card in hand if card != JOKER), key=_order)
    ready, rest = _best_melds(real)
    can_lay = laid_down or ready > 0
    layable = [card for card in rest if card in fits] if can_lay else []
    loose = [card for card in rest if card not in fits] if can_lay else rest
    partials, lone = _partials(loose, seen)
    needs: list[float] = []
    for outs in partials:
        if jokers:
            jokers -= 1
            ready += 3
            continue
        if outs == 0:
            needs.append(DEAD_PARTIAL_NEEDS)
        else:
            needs.append(PARTIAL_NEEDS - min(MAX_OUT_CREDIT, OUT_CREDIT * outs))
    if jokers and not (can_lay and fits):
        pairs = min(jokers, len(lone))
        needs += [PARTIAL_NEEDS - MAX_OUT_CREDIT] * pairs
        lone = lone[pairs:]
        jokers -= pairs
        needs += [LONE_NEEDS] * jokers
    needs += [LONE_NEEDS] * len(lone)
    if pending_discard and needs:
        needs.remove(max(needs))
    if not can_lay and not ready and not needs:
        needs.append(LONE_NEEDS)
    points = sum(melds.card_points(card) for card in hand)
    return Shape(ready, len(layable), len(partials), len(lone), sum(needs), points)


def estimated_needs(state: State, seat: Seat) -> float:
    """Another seat's needs, from its hand size (what everyone sees), less
    the tempo when it is to act."""
    size = len(state["hands"][seat])
    tempo = TEMPO if state["turn"] == seat else 0.0
    return NEEDS_PER_CARD * size - tempo


def race_chance(my_needs: float, other_needs: float, scale: float = RACE_SCALE) -> float:
    """The chance of going out before the other, from both needs."""
    return 1.0 / (1.0 + math.exp(-(other_needs - my_needs) / scale))


def table_fits(table: list[melds.Meld]) -> set[str]:
    """The cards that can be laid off alone on some meld of the table."""
    fits: set[str] = set()
    for meld in table:
        fits.update(melds.layoff_cards(meld))
    return fits


def keep_score(card: str, hand: Counter[str], fits: set[str]) -> float:
    """How much ``card`` is worth keeping: its links to the rest of the hand
    (a pair, a neighbour in its suit), a joker most of all, less its points."""
    if card == JOKER:
        return 100.0
    if card in fits:
        return 50.0
    links = sum(weight for other, weight in _LINKS[card] if hand[other])
    return links - melds.card_points(card) / 2 + 0.5 * hand[JOKER] * (links > 0)


# -- policies --------------------------------------------------------------


def greedy(state: State, seat: Seat, rng: random.Random) -> Action:
    """One ply. In the draw phase, each way to take the discard against a draw
    from the stock, averaged over ``DRAW_SAMPLES`` sampled stocks; in the play
    phase, every legal action, kept by ``evaluate``."""
    samples = DRAW_SAMPLES if state["phase"] == "draw" else 1
    return one_ply(_CompactGame(), state, seat, rng, evaluate, samples)


def rollout_action(state: State, seat: Seat, rng: random.Random) -> Action:
    """Playouts, fast, without listing the legal actions: take the discard
    when two cards of the hand make a meld of it (or it fits the table), else
    draw; lay down every meld of the hand at once; lay off; complete a partial
    with a joker; lay off a joker when few cards are left; discard the card
    least worth keeping."""
    hand = state["hands"][seat]
    laid_down = state["laid_down"][seat]
    if state["options"]["opening_minimum"] and not laid_down:
        return _listed_rollout(state, seat, rng)
    if state["phase"] == "draw":
        return _rollout_draw(state, hand, laid_down)
    real = [card for card in hand if card != JOKER]
    found = _best_meld_options(real)
    if found:
        return {"type": "meld", "melds": [option.spec() for option in found]}
    if laid_down:
        for meld in state["table"]:
            fits = melds.layoff_cards(meld)
            for card in fits:
                if card in real:
                    return {"type": "lay_off", "meld": meld["id"], "cards": [card]}
    if JOKER in hand:
        with_joker = _joker_meld(real)
        if with_joker is not None:
            return {"type": "meld", "melds": [with_joker]}
        if laid_down and len(hand) <= 3:
            for meld in state["table"]:
                fits = melds.layoff_cards(meld)
                if fits and not melds.has_joker(meld):
                    fit = fits[0]
                    return {
                        "type": "lay_off",
                        "meld": meld["id"],
                        "cards": [JOKER],
                        "joker_as": fit,
                    }
    counts = Counter(hand)
    fits = table_fits(state["table"]) if laid_down else set()
    card = min(counts, key=lambda c: (_discard_key(c, counts, fits), rng.random()))
    return {"type": "discard", "card": card}


def search_actions(state: State, seat: Seat) -> list[Action]:
    """What the tree considers. Draw phase: the draw and the
    ``SEARCH_TAKES`` best ways to take the discard; play phase: while cards
    can go to the table, the ``SEARCH_PLACINGS`` best moves placing some (a
    bot lays down before it discards), both by their value one ply ahead
    (``ranked_moves``); then the ``SEARCH_DISCARDS`` best discards
    (``ranked_discards``) and one lay-off of a joker. The listing is skipped
    where a quick look at the hand shows there is nothing to take or to
    place."""
    if state["phase"] == "draw":
        if not _may_take(state, seat):
            return [{"type": "draw"}]
        return [{"type": "draw"}, *_best_moves(state, seat, SEARCH_TAKES)]
    jokers: list[Action] = []
    if _may_place(state, seat):
        placing = _best_moves(state, seat, SEARCH_PLACINGS)
        if placing:
            return placing
        actions = compact_actions(state, seat)
        jokers = [action for action in actions if action["type"] == "lay_off"][:1]
    best = ranked_discards(state, seat)[:SEARCH_DISCARDS]
    return jokers + [{"type": "discard", "card": card} for card in best]


def _best_moves(state: State, seat: Seat, count: int) -> list[Action]:
    """The ``count`` best moves placing cards: where a joker may go to the
    table, by ``ranked_moves`` (where to put a joker is what matters, and
    what placing the most cards misses); else those placing the most."""
    moves = [action for action in compact_actions(state, seat) if _is_placing(action)]
    if len(moves) <= count:
        return moves
    if JOKER in state["hands"][seat] or any(
        action["type"] == "swap_joker" or "swap_joker" in action for action in moves
    ):
        return ranked_moves(state, seat)[:count]
    moves.sort(key=_placed, reverse=True)
    return moves[:count]


def _is_placing(action: Action) -> bool:
    return _placed(action) > 0 or action["type"] == "swap_joker"


def ranked_moves(state: State, seat: Seat) -> list[Action]:
    """``seat``'s moves that put cards on the table (in the draw phase, the
    ways to take the discard), best first by ``search_value`` (``evaluate``
    beyond two seats) one ply ahead, as greedy judges them; a move that goes
    out comes first. Only what the seat sees is read, so the ranking is
    cached on that."""
    seen = {
        key: state[key]
        for key in (
            "options",
            "n_players",
            "round",
            "first_player",
            "turn",
            "phase",
            "discard",
            "table",
            "next_meld_id",
            "stock_rebuilds",
            "laid_down",
            "totals",
        )
    }
    seen["hands"] = [
        sorted(hand, key=_order) if s == seat else [JOKER] * len(hand)
        for s, hand in enumerate(state["hands"])
    ]
    return orjson.loads(_ranked_moves(orjson.dumps(seen), seat))


@lru_cache(maxsize=4096)
def _ranked_moves(packed: bytes, seat: Seat) -> bytes:
    seen = orjson.loads(packed)
    state: State = {**seen, "rng": 0, "stock": [], "history": []}
    game = _game()
    ranked = []
    for index, action in enumerate(compact_actions(state, seat)):
        if not _is_placing(action):
            continue
        after = orjson.loads(packed)
        after.update(rng=0, stock=[], history=[])
        game.apply(after, seat, action)
        if after["round"] != state["round"] or after["phase"] == "over":
            value = math.inf
        elif state["n_players"] == 2:
            value = search_value(after, seat)
        else:
            value = evaluate(after, seat)
        ranked.append((-value, index, action))
    ranked.sort(key=lambda item: (item[0], item[1]))
    return orjson.dumps([action for _, _, action in ranked])


def _may_take(state: State, seat: Seat) -> bool:
    """Whether the top discard might go to the table with the hand's cards:
    a pair of the hand makes a meld of it, or a joker and one card do, or it
    may join a meld of the table. False means it cannot."""
    if not state["discard"]:
        return False
    top = state["discard"][-1]
    hand = state["hands"][seat]
    if top == JOKER or (state["options"]["opening_minimum"] and not state["laid_down"][seat]):
        return True
    if any(a in hand and b in hand for a, b in _PARTNERS[top]):
        return True
    if JOKER in hand and any((card, top) in _COMPLETING for card in hand if card != JOKER):
        return True
    if any((slot := melds.joker_slot(meld)) and slot["as"] == top for meld in state["table"]):
        return True  # in place of a joker standing for it
    if not state["laid_down"][seat] and not _may_place(state, seat):
        return False
    # Laid off: by a seat that has laid down, or that lays down in the same action.
    suit = melds.suit_of(top)
    return any(
        (meld["kind"] == "run" and melds.suit_of(melds.slot_card(meld["cards"][0])) == suit)
        or top in melds.layoff_cards(meld)
        for meld in state["table"]
    )


def _may_place(state: State, seat: Seat) -> bool:
    """Whether the hand might put a card on the table: it holds a joker or a
    meld (every meld holds three cards that make one), or, once laid down,
    a card that fits the table or replaces a joker there. False means it
    cannot."""
    hand = state["hands"][seat]
    if JOKER in hand or any(a in hand and b in hand for card in hand for a, b in _PARTNERS[card]):
        return True
    if not state["laid_down"][seat]:
        return False
    for meld in state["table"]:
        slot = melds.joker_slot(meld)
        if (slot is not None and slot["as"] in hand) or any(
            card in hand for card in melds.layoff_cards(meld)
        ):
            return True
    return False


def ranked_discards(state: State, seat: Seat) -> list[str]:
    """The cards of ``seat``'s hand (in its play phase), best discard first by
    ``search_value`` (``evaluate`` beyond two seats) once the turn has passed,
    then by ``keep_score``; only the ``RANKED_DISCARDS`` least worth keeping
    are valued, the others follow by ``keep_score``. Only what
    the seat sees is read (the other hands by their sizes), so the ranking is
    cached on that."""
    seen = {
        "seat": seat,
        "hand": sorted(state["hands"][seat], key=_order),
        "sizes": [len(hand) for hand in state["hands"]],
        "discard": state["discard"],
        "table": state["table"],
        "laid_down": state["laid_down"],
        "totals": state["totals"],
        "options": state["options"],
    }
    return list(_ranked_discards(orjson.dumps(seen)))


@lru_cache(maxsize=4096)
def _ranked_discards(packed: bytes) -> tuple[str, ...]:
    seen = orjson.loads(packed)
    seat, hand, sizes = seen["seat"], seen["hand"], seen["sizes"]
    counts = Counter(hand)
    fits = table_fits(seen["table"]) if seen["laid_down"][seat] else set()
    after: State = {
        "n_players": len(sizes),
        "phase": "draw",
        "turn": (seat + 1) % len(sizes),
        "table": seen["table"],
        "laid_down": seen["laid_down"],
        "totals": seen["totals"],
        "options": seen["options"],
    }
    ranked = []
    shortlist = sorted(counts, key=lambda card: (_discard_key(card, counts, fits), _order(card)))
    for card in shortlist[:RANKED_DISCARDS]:
        rest = list(hand)
        rest.remove(card)
        after["hands"] = [rest if s == seat else [JOKER] * size for s, size in enumerate(sizes)]
        after["discard"] = [*seen["discard"], card]
        value = search_value(after, seat) if len(sizes) == 2 else evaluate(after, seat)
        ranked.append((-value, _discard_key(card, counts, fits), card))
    ranked.sort()
    return tuple(card for _, _, card in ranked) + tuple(shortlist[RANKED_DISCARDS:])


def least_useful_discards(
    state: State, seat: Seat, actions: list[Action], count: int
) -> list[Action]:
    """The ``count`` discards among ``actions`` with the lowest ``keep_score``."""
    hand = Counter(state["hands"][seat])
    fits = table_fits(state["table"]) if state["laid_down"][seat] else set()
    ranked = [
        (_discard_key(action["card"], hand, fits), action["card"], action)
        for action in actions
        if action["type"] == "discard"
    ]
    ranked.sort(key=lambda item: (item[0], item[1]))
    return [action for _, _, action in ranked[:count]]


def playout_value(start: State, state: State) -> list[float] | None:
    """Values at the end of the round under search (or of the match): each
    seat's chance of winning the match; None while the round goes on."""
    n = state["n_players"]
    if state["phase"] == "over":
        winners = outcome(state)["winners"]
        return [1.0 / len(winners) if s in winners else 0.0 for s in range(n)]
    if state["round"] != start["round"]:
        return match_chances(state, [float(total) for total in state["totals"]])
    return None


def search_value(state: State, seat: Seat) -> float:
    """``seat``'s chance of winning the match (two seats, mid-round): the
    chance of going out first (``seat``'s needs from its hand, the other's
    from its hand size, as in ``evaluate``, but sharper) weighs the match
    chances after each end of the round, with what the loser then pays.
    Where the round decides the match, only going out first counts."""
    other = 1 - seat
    mine = hand_shape(state, seat)
    my_needs = mine.needs - (TEMPO if state["turn"] == seat else 0.0)
    chance = race_chance(my_needs, estimated_needs(state, other), SEARCH_RACE_SCALE)
    totals = [float(total) for total in state["totals"]]
    if_first, if_second = list(totals), list(totals)
    if_first[other] += _stake(state, other, MEAN_CARD_POINTS * len(state["hands"][other]), seat)
    if_second[seat] += _stake(state, seat, mine.points, other)
    first, second = match_chances(state, if_first), match_chances(state, if_second)
    return chance * first[seat] + (1 - chance) * second[seat]


def match_chances(state: State, totals: list[float]) -> list[float]:
    """Each seat's chance of winning the match once the round ends with these
    totals: decided if one reaches the target (lowest wins, ties shared), else
    a logistic of the gap, measured against what remains to the target."""
    n = state["n_players"]
    target = state["options"]["target_score"]
    best = min(totals)
    if max(totals) >= target:
        winners = [s for s in range(n) if totals[s] == best]
        return [1.0 / len(winners) if s in winners else 0.0 for s in range(n)]
    scale = max(MIN_MATCH_SCALE, (target - max(totals)) / 3)
    weights = [math.exp(-(total - best) / scale) for total in totals]
    total_weight = sum(weights)
    return [weight / total_weight for weight in weights]


# -- playouts ----------------------------------------------------------------


def playout(start: State, state: State, rng: random.Random) -> list[float]:
    """The search's playout: the rest of the round by ``simulate_round``
    (after the openings, by the engine, under ``opening_minimum``), valued by
    each seat's chance of winning the match once the round is scored."""
    values = playout_value(start, state)
    if values is not None:
        return values
    if state["options"]["opening_minimum"]:
        game = _game()
        bound = playout_bound(state)
        while not all(state["laid_down"]) and state["round"] == start["round"]:
            if state["stock_rebuilds"] >= bound:
                return _no_winner(state)
            seat = game.to_act(state)[0]
            game.apply(state, seat, rollout_action(state, seat, rng))
            if state["phase"] == "over" or state["round"] != start["round"]:
                return playout_value(start, state) or []
    went_out = simulate_round(state, rng)
    scores = round_scores(state, went_out)
    totals = [float(total + score) for total, score in zip(state["totals"], scores, strict=True)]
    return match_chances(state, totals)


def playout_bound(state: State) -> int:
    """The rebuilds after which a playout's round ends with no winner: the
    table's ``max_stock_rebuilds``, or ``PLAYOUT_STOCK_REBUILDS`` more than now."""
    bound = state["options"].get("max_stock_rebuilds")
    own = state["stock_rebuilds"] + PLAYOUT_STOCK_REBUILDS
    return own if bound is None else min(bound, own)


def _no_winner(state: State) -> list[float]:
    """A playout's round that ends with nobody out: everyone scores their hand."""
    scores = round_scores(state, None)
    totals = [float(total + score) for total, score in zip(state["totals"], scores, strict=True)]
    return match_chances(state, totals)


def simulate_round(state: State, rng: random.Random) -> Seat | None:
    """Play the rest of the round by the rules, without the engine's checks
    and events, every seat by the rollout policy's ideas (``_sim_draw``,
    ``_sim_play``), several times faster than the engine; returns who went
    out (None: the stock ran out). Mutates ``state``'s hands, stock, discard,
    table and ``laid_down``, leaving its turn, phase and totals as they were
    (``round_scores`` then scores the round)."""
    sim = _Sim(state)
    seat = state["turn"]
    bound = playout_bound(state)
    if state["phase"] == "draw":
        _sim_draw(sim, seat, rng)
    while not _sim_play(sim, seat, rng):
        seat = (seat + 1) % state["n_players"]
        if not state["stock"] and (not state["discard"] or state["stock_rebuilds"] >= bound):
            return None
        _sim_draw(sim, seat, rng)
    return seat


class _Sim:
    """A round being simulated on a state's own lists, with what can be laid
    off on the table (``fits``: card -> index of a meld that takes it)."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.hands: list[list[str]] = state["hands"]
        self.table: list[melds.Meld] = state["table"]
        self.meld_fits = [melds.layoff_cards(meld) for meld in self.table]
        self.fits: dict[str, int] = {}
        self._index_fits()
        # The card each seat drew last, once its hand has been played here
        # (and so holds no meld): only that card can make a new one.
        self.drawn: dict[Seat, str | None] = {}

    def laid(self, seat: Seat) -> bool:
        return self.state["laid_down"][seat]

    def meld(self, seat: Seat, cards: list[str], joker_as: str | None = None) -> None:
        """Lay down ``cards`` (already out of the hand) as a new meld."""
        meld = {"id": self.state["next_meld_id"], "owner": seat}
        meld.update(melds.build_meld(cards, joker_as))
        self.state["next_meld_id"] += 1
        self.state["laid_down"][seat] = True
        self.table.append(meld)
        self.meld_fits.append(melds.layoff_cards(meld))
        self._index_fits()

    def lay_off(self, index: int, card: str, joker_as: str | None = None) -> None:
        """Lay off ``card`` (already out of the hand) on meld ``index``."""
        old = self.table[index]
        meld = {"id": old["id"], "owner": old["owner"]}
        meld.update(melds.extend_meld(old, [card], joker_as))
        self.table[index] = meld
        self.meld_fits[index] = melds.layoff_cards(meld)
        self._index_fits()

    def draw(self, rng: random.Random) -> str:
        """The top of the stock, rebuilt from the whole discard pile when empty."""
        state = self.state
        if not state["stock"]:
            rng.shuffle(state["discard"])
            state["stock"], state["discard"] = state["discard"], []
            state["stock_rebuilds"] += 1
        return state["stock"].pop()

    def _index_fits(self) -> None:
        self.fits = {}
        for index, fits in enumerate(self.meld_fits):
            for card in fits:
                self.fits.setdefault(card, index)


def _sim_draw(sim: _Sim, seat: Seat, rng: random.Random) -> None:
    """Take the discard into a meld of three, or lay it off; else draw."""
    hand = sim.hands[seat]
    discard = sim.state["discard"]
    top = discard[-1] if discard else JOKER
    if seat in sim.drawn:
        sim.drawn[seat] = None
    if top != JOKER:
        for a, b in _PARTNERS[top]:
            if a in hand and b in hand:
                hand.remove(a)
                hand.remove(b)
                sim.meld(seat, [a, b, discard.pop()])
                return
        if top in sim.fits and (sim.laid(seat) or _sim_lay_down(sim, seat, force=True)):
            sim.lay_off(sim.fits[top], discard.pop())
            return
        if _sim_take_with_joker(sim, seat, top) or _sim_take_into_joker(sim, seat, top):
            return
    hand.append(sim.draw(rng))
    if seat in sim.drawn:
        sim.drawn[seat] = hand[-1]


def _sim_take_with_joker(sim: _Sim, seat: Seat, top: str) -> bool:
    """Take the discard into a meld with a joker and one card of the hand."""
    hand = sim.hands[seat]
    if JOKER not in hand:
        return False
    for card in hand:
        completing = _COMPLETING.get((card, top))
        if completing:
            hand.remove(card)
            hand.remove(JOKER)
            sim.meld(seat, [card, sim.state["discard"].pop(), JOKER], completing[0])
            return True
    return False


def _swap_and_remeld(
    sim: _Sim, seat: Seat, index: int, card: str, with_joker: dict[str, Any]
) -> None:
    """Put ``card`` in the place of the joker of the table's meld ``index``,
    and the freed joker in a new meld with ``with_joker``'s cards of the hand."""
    hand = sim.hands[seat]
    sim.table[index] = melds.swap_joker(sim.table[index], card)
    hand.append(JOKER)
    for held in with_joker["cards"]:
        hand.remove(held)
    sim.meld(seat, with_joker["cards"], with_joker["joker_as"])


def _sim_take_into_joker(sim: _Sim, seat: Seat, top: str) -> bool:
    """Take the discard into the place of a joker standing for it, once laid
    down, when the hand can put the joker back at once in a new meld with a
    partial (as ``_sim_swap_joker`` does with a card of the hand)."""
    if not sim.laid(seat):
        return False
    hand = sim.hands[seat]
    for index, meld in enumerate(sim.table):
        slot = melds.joker_slot(meld)
        if slot is None or slot["as"] != top:
            continue
        with_joker = _joker_meld([card for card in hand if card != JOKER])
        if with_joker is None:
            return False
        _swap_and_remeld(sim, seat, index, sim.state["discard"].pop(), with_joker)
        return True
    return False


def _sim_play(sim: _Sim, seat: Seat, rng: random.Random) -> bool:
    """Lay down every meld, lay off, use a joker, then discard the card least
    worth keeping; True when the hand is empty (the seat went out)."""
    hand = sim.hands[seat]
    _sim_lay_down(sim, seat)
    while hand and (
        _sim_lay_off(sim, seat) or _sim_joker(sim, seat) or _sim_swap_joker(sim, seat)
    ):
        pass
    if not hand:
        return True
    sim.drawn[seat] = None
    card = _sim_discard(hand, sim.fits if sim.laid(seat) else {}, rng)
    hand.remove(card)
    sim.state["discard"].append(card)
    return not hand


def _sim_lay_down(sim: _Sim, seat: Seat, force: bool = False) -> bool:
    """Lay down the melds holding the most cards (``_best_meld_options``);
    whether any was. ``force``: look at the whole hand, even when the card
    drawn last cannot have made a new meld."""
    hand = sim.hands[seat]
    if seat in sim.drawn and not force:
        drawn = sim.drawn[seat]
        if drawn is None or not any(a in hand and b in hand for a, b in _PARTNERS.get(drawn, ())):
            return False
    found = _best_meld_options([card for card in hand if card != JOKER])
    for option in found:
        for card in option.cards:
            hand.remove(card)
        sim.meld(seat, list(option.cards))
    return bool(found)


def _sim_lay_off(sim: _Sim, seat: Seat) -> bool:
    """Lay off one card of the hand that fits the table, if any."""
    if not sim.laid(seat):
        return False
    hand = sim.hands[seat]
    for card in hand:
        if card in sim.fits:
            hand.remove(card)
            sim.lay_off(sim.fits[card], card)
            return True
    return False


def _sim_joker(sim: _Sim, seat: Seat) -> bool:
    """A joker completes a partial, or is laid off when few cards are left."""
    hand = sim.hands[seat]
    if JOKER not in hand:
        return False
    with_joker = _joker_meld([card for card in hand if card != JOKER])
    if with_joker is not None:
        for card in with_joker["cards"]:
            hand.remove(card)
        sim.meld(seat, with_joker["cards"], with_joker["joker_as"])
        return True
    if sim.laid(seat) and len(hand) <= 3:
        for index, meld in enumerate(sim.table):
            if sim.meld_fits[index] and not melds.has_joker(meld):
                hand.remove(JOKER)
                sim.lay_off(index, JOKER, sim.meld_fits[index][0])
                return True
    return False


def _sim_swap_joker(sim: _Sim, seat: Seat) -> bool:
    """Take back a joker of the table with the card it stands for, when the
    hand can put it back at once in a new meld with a partial."""
    if not sim.laid(seat):
        return False
    hand = sim.hands[seat]
    for index, meld in enumerate(sim.table):
        slot = melds.joker_slot(meld)
        if slot is None or slot["as"] not in hand:
            continue
        rest = [card for card in hand if card != JOKER]
        rest.remove(slot["as"])
        with_joker = _joker_meld(rest)
        if with_joker is None:
            continue
        hand.remove(slot["as"])
        _swap_and_remeld(sim, seat, index, slot["as"], with_joker)
        return True
    return False


def _sim_discard(hand: list[str], fits: dict[str, int], rng: random.Random) -> str:
    """The card least worth keeping by ``keep_score`` (ties at random), the
    fast way: a card's links never count the card itself."""
    held = set(hand)
    jokers = hand.count(JOKER)
    best: list[str] = []
    best_score = math.inf
    for card in held:
        if card == JOKER:
            score = 100.0
        elif card in fits:
            score = 50.0
        else:
            links = sum(weight for other, weight in _LINKS[card] if other in held)
            score = links - _POINTS[card] / 2 + (0.5 * jokers if links else 0.0)
        if score < best_score:
            best, best_score = [card], score
        elif score == best_score:
            best.append(card)
    return best[0] if len(best) == 1 else rng.choice(sorted(best, key=_order))


# -- private helpers -------------------------------------------------------


def _round_margin(
    state: State, seat: Seat, other: Seat, my_needs: float, other_needs: float, points: int
) -> float:
    """Totals margin after the round: ``other`` pays its estimated stake when
    ``seat`` goes out first, ``seat`` pays its hand otherwise."""
    chance = race_chance(my_needs, other_needs)
    other_stake = _stake(state, other, MEAN_CARD_POINTS * len(state["hands"][other]), seat)
    my_stake = _stake(state, seat, points, other)
    margin = state["totals"][other] - state["totals"][seat]
    return margin + chance * other_stake - (1 - chance) * my_stake


def _stake(state: State, seat: Seat, points: float, winner: Seat) -> float:
    """What ``seat`` pays if ``winner`` goes out: its points; 100 if it has
    laid nothing down; rami sec, 200, if no seat but the winner has laid down
    either (counted as 150 while a third seat still may: the winner's own
    melds do not matter)."""
    if state["laid_down"][seat]:
        return points
    if any(laid for s, laid in enumerate(state["laid_down"]) if s != winner):
        return NOT_LAID_DOWN
    if state["n_players"] == 2:
        return RAMI_SEC
    return (NOT_LAID_DOWN + RAMI_SEC) / 2


def _placed(action: Action) -> int:
    """How many cards an action puts on the table (a joker counts less)."""
    if action["type"] in ("draw", "discard"):
        return 0
    if action["type"] == "lay_off":
        return 1 if action["cards"] != [JOKER] else 0
    count = 0
    for meld in action.get("melds") or []:
        count += len(meld["cards"])
    if action.get("lay_off"):
        count += len(action["lay_off"]["cards"])
    return count


def _discard_key(card: str, hand: Counter[str], fits: set[str]) -> float:
    """``keep_score`` of ``card`` among the rest of ``hand``."""
    hand[card] -= 1
    score = keep_score(card, hand, fits)
    hand[card] += 1
    return score


def _listed_rollout(state: State, seat: Seat, rng: random.Random) -> Action:
    """The rollout policy among the legal actions (for an opening under
    ``opening_minimum``): the move placing the most cards, else the draw or
    the least useful discard."""
    actions = compact_actions(state, seat)
    placing = [action for action in actions if _placed(action) > 0]
    if placing:
        return max(placing, key=lambda action: (_placed(action), rng.random()))
    if state["phase"] == "draw":
        return actions[0]
    return least_useful_discards(state, seat, actions, 1)[0]


def _rollout_draw(state: State, hand: list[str], laid_down: bool) -> Action:
    """Take the discard into a meld of three, or lay it off; else draw."""
    top = state["discard"][-1] if state["discard"] else None
    if top is None or top == JOKER:
        return {"type": "draw"}
    counts = Counter(hand)
    for a, b in _PARTNERS[top]:
        if counts[a] and counts[b]:
            return {"type": "take_discard", "melds": [{"cards": [a, b, top]}]}
    real = [card for card in hand if card != JOKER]
    if laid_down:
        # The discard in place of a joker standing for it, the joker in a new meld.
        with_joker = _joker_meld(real)
        for meld in state["table"] if with_joker else ():
            slot = melds.joker_slot(meld)
            if slot is not None and slot["as"] == top:
                return {"type": "take_discard", "swap_joker": meld["id"], "melds": [with_joker]}
    target = next((m["id"] for m in state["table"] if top in melds.layoff_cards(m)), None)
    if target is None:
        return {"type": "draw"}
    if laid_down:
        return {"type": "take_discard", "lay_off": {"meld": target, "cards": [top]}}
    # Lay down the hand's melds and lay the card off, in the same action.
    found = _best_meld_options(real)
    if not found:
        return {"type": "draw"}
    return {
        "type": "take_discard",
        "melds": [option.spec() for option in found],
        "lay_off": {"meld": target, "cards": [top]},
    }


def _joker_meld(real: list[str]) -> dict[str, object] | None:
    """A joker with a partial of the hand, as a meld spec."""
    for i, a in enumerate(real):
        for b in real[i + 1 :]:
            completing = _COMPLETING.get((a, b))
            if completing:
                return {"cards": [a, b, JOKER], "joker_as": completing[0]}
    return None


def _best_meld_options(cards: list[str]) -> list[melds.MeldOption]:
    """The disjoint melds of real ``cards`` that hold the most cards (then points)."""
    options = melds.candidate_melds(Counter(cards))
    if not options:
        return []
    return _choose_melds(options, cards)


def _best_melds(cards: list[str]) -> tuple[int, list[str]]:
    """The most cards that disjoint melds of real ``cards`` hold, and the cards
    left over."""
    found = _best_meld_options(cards)
    left = Counter(cards)
    for option in found:
        left.subtract(option.cards)
    held = sum(len(option.cards) for option in found)
    return held, sorted(left.elements(), key=_order)


def _choose_melds(options: list[melds.MeldOption], cards: list[str]) -> list[melds.MeldOption]:
    needs = [Counter(option.cards) for option in options]
    best: tuple[int, int, list[int]] = (0, 0, [])
    remaining = Counter(cards)
    chosen: list[int] = []

    def search(start: int, held: int, points: int) -> None:
        nonlocal best
        if (held, points) > best[:2]:
            best = (held, points, list(chosen))
        for index in range(start, len(options)):
            need = needs[index]
            if any(remaining[card] < count for card, count in need.items()):
                continue
            remaining.subtract(need)
            chosen.append(index)
            search(index + 1, held + len(options[index].cards), points + options[index].value)
            chosen.pop()
            remaining.update(need)

    search(0, 0, 0)
    return [options[index] for index in best[2]]


def _partials(cards: list[str], seen: Counter[str]) -> tuple[list[int], list[str]]:
    """Disjoint partials among ``cards`` (the most outs first) as their outs,
    and the lone cards left."""
    found: list[tuple[int, str, str]] = []
    for i, a in enumerate(cards):
        for b in cards[i + 1 :]:
            completing = _COMPLETING.get((a, b))
            if completing:
                outs = sum(2 - seen[card] for card in completing)
                found.append((outs, a, b))
    found.sort(key=lambda item: -item[0])
    left = Counter(cards)
    outs_list = []
    for outs, a, b in found:
        if left[a] and left[b] and (a != b):
            left[a] -= 1
            left[b] -= 1
            outs_list.append(max(0, outs))
    return outs_list, sorted(left.elements(), key=_order)


def _completing(a: str, b: str) -> list[str]:
    """The cards that make a meld of three with ``a`` and ``b`` (none if they
    are not a partial)."""
    rank_a, rank_b = melds.rank_of(a), melds.rank_of(b)
    suit_a, suit_b = melds.suit_of(a), melds.suit_of(b)
    if rank_a == rank_b:
        if suit_a == suit_b:
            return []
        return [melds.RANKS[rank_a - 1] + s for s in SUITS if s not in (suit_a, suit_b)]
    if suit_a != suit_b:
        return []
    for pa in _POSITIONS[a]:
        for pb in _POSITIONS[b]:
            low, high = min(pa, pb), max(pa, pb)
            if high - low == 1:
                ends = [p for p in (low - 1, high + 1) if 1 <= p <= 14]
                return [melds.card_at(p, suit_a) for p in ends]
            if high - low == 2:
                return [melds.card_at(low + 1, suit_a)]
    return []


def _order(card: str) -> tuple[int, int]:
    if card == JOKER:
        return (len(SUITS), 0)
    return (SUITS.index(melds.suit_of(card)), melds.rank_of(card))


def _links(card: str) -> list[tuple[str, float]]:
    rank, suit = melds.rank_of(card), melds.suit_of(card)
    links = [(melds.RANKS[rank - 1] + other, 10.0) for other in SUITS if other != suit]
    for position in _POSITIONS[card]:
        for step, weight in ((1, 10.0), (2, 6.0)):
            for near in (position - step, position + step):
                if 1 <= near <= 14 and melds.card_at(near, suit) != card:
                    links.append((melds.card_at(near, suit), weight))
    return links


def _partners_table() -> dict[str, list[tuple[str, str]]]:
    """For each card, the pairs of cards that make a meld of three with it."""
    partners: dict[str, list[tuple[str, str]]] = {card: [] for card in melds.REAL_CARDS}
    for (a, b), completing in _COMPLETING.items():
        if _order(a) < _order(b):
            for card in completing:
                partners[card].append((a, b))
    return partners


_COMPLETING = {
    (a, b): completing
    for a in melds.REAL_CARDS
    for b in melds.REAL_CARDS
    if (completing := _completing(a, b))
}
_LINKS = {card: tuple(_links(card)) for card in melds.REAL_CARDS}
_POINTS = {card: melds.card_points(card) for card in melds.CARDS}
_PARTNERS = _partners_table()


class _CompactGame:
    """The engine object listing ``compact_actions`` as the legal actions:
    for ``one_ply``, the same positions as the full listing, far fewer moves
    to try."""

    legal_actions = staticmethod(compact_actions)

    def __getattr__(self, name: str) -> object:
        return getattr(_game(), name)


def _game() -> Game:
    """The engine object (imported late: ``engines.ducale`` imports this module)."""
    from engines.ducale import GAME

    return GAME


__all__ = [
    "evaluate",
    "greedy",
    "playout_value",
    "rollout_action",
    "search_actions",
]
