"""Pacal: build a pyramid of strictly decreasing cards (RULES.md §2).

Two modes. In the *match* (two players, first to ``manches_to_win`` manches)
each player owns a pyramid of 10 slots over 10 face-down foundation cards and
a secret hand of 15 cards; in turn the active player shows two hand cards,
the other takes one, and each places the card they got. In the *solitaire*
(one player) the player draws from a pile of 40 and places each card on an
empty slot or sets it aside.

Slots are numbered in reading order: 0 the top; 1, 2; 3, 4, 5; 6, 7, 8, 9 the
base. A slot holds 0, 1 or 2 face-up cards, bottom to top; its visible value
is its topmost card, and visible values strictly decrease with the slot
number.

Hidden information: ``hands`` (each seen by its owner only), ``foundations``
(only their first cards, the tops, are public, in ``foundation_tops``), the
solitaire's ``pile``, and ``rng``; ``determinize(state, seat, rng)``
resamples them for the bots' search, and ``state_from_view(view, seat,
rng)`` builds a whole state from a seat's view alone, for bots that play
through the API.

Decisions taken where RULES.md and the rulebook are silent:

- A stuck manche is decided when the offer is complete (RULES.md): when the
  chosen card is handed over, a player whose card fits nowhere is announced
  stuck (``stuck`` event) and keeps that card in ``to_place`` without being
  asked to act; the other player places their card, and only then does the
  stuck player lose the manche (reason ``stuck``, even when that placement
  completes the other pyramid: the winner is the same). Both stuck: a void
  manche at once, as no placement is left to make.
- During the last-card phase both players are asked (place or ``pass``) even
  when their card fits nowhere, so that no one learns that from the engine.
  A passed last card stays in its owner's hand and is never revealed.
- A void manche is re-dealt at once and counts as a manche played (the
  ``manche`` counter numbers the deals); it gives no one a point.
- When the cards run out, "larger spread" compares highest minus lowest
  visible value over the filled slots (0 with fewer than two).
- The option ``manches_to_win`` is ignored in solitaire.
- Solitaire: the first card is drawn at setup; after each placement or
  set-aside the next card is drawn. A drawn card that fits an empty slot
  must be placed (``discard`` is then refused); only one that fits none is
  set aside. The game ends when the pyramid is complete (won, ``winners:
  [0]``, only with 10 cards drawn; completed but not won with more) or when
  a card must be drawn and the pile is empty (lost). Set-aside cards are
  public (they have been seen). The foundation is never shown, not even its
  top card.
"""

from __future__ import annotations

import random
from typing import Any

import orjson

from engines.core import Action, Event, IllegalAction, Seat, State, seeded_rng

# --- Metadata -------------------------------------------------------------

NAME = "pacal"
TITLE = "Pacal"
MIN_PLAYERS = 1
MAX_PLAYERS = 2

N_CARDS = 50
N_SLOTS = 10
HAND_SIZE = 15
OFFERS_PER_MANCHE = 14  # each player offers 7 times, using 14 of 15 cards
MAX_FACE_UP = 2  # "une carte ne peut être couverte qu'une fois"

MODE_MATCH = "match"
MODE_SOLITAIRE = "solitaire"

# Match phases, and the solitaire's single playing phase.
OFFER = "offer"
CHOOSE = "choose"
PLACE = "place"
LAST_CARD = "last_card"
DRAW = "draw"
OVER = "over"

# --- The game: setup ------------------------------------------------------


def setup(options: dict[str, Any], n_players: int, seed: int) -> State:
    """A new match: "On mélange les 50 cartes ..."; the first manche is dealt."""
    mode = options.get("mode") or (MODE_SOLITAIRE if n_players == 1 else MODE_MATCH)
    expected = 1 if mode == MODE_SOLITAIRE else 2
    if n_players != expected:
        raise IllegalAction(
            "invalid_options",
            f"mode {mode!r} is for exactly {expected} player(s), not {n_players}",
        )
    state: State = {"mode": mode, "n_players": n_players, "rng": seed, "manche": 0}
    if mode == MODE_SOLITAIRE:
        _deal_solitaire(state)
    else:
        state["manches_to_win"] = options.get("manches_to_win", 3)
        state["manches_won"] = [0, 0]
        state["last_manche"] = None
        state["winners"] = None
        _deal_manche(state)
    return state


# --- State operations -----------------------------------------------------


def to_act(state: State) -> list[Seat]:
    """Who may act: the active player offers, the other chooses, then both
    place (in either order), then both decide on their last card."""
    phase = state["phase"]
    if phase == OFFER:
        return [state["active"]]
    if phase == CHOOSE:
        return [1 - state["active"]]
    if phase in (PLACE, LAST_CARD):
        return [seat for seat in range(2) if state["pending"][seat]]
    if phase == DRAW:
        return [0]
    return []


def legal_actions(state: State, seat: Seat) -> list[Action]:
    """Every legal action of ``seat``, computed directly from the state."""
    if seat not in to_act(state):
        return []
    phase = state["phase"]
    if phase == OFFER:
        hand = state["hands"][seat]
        return [
            {"type": "offer", "cards": [a, b]} for i, a in enumerate(hand) for b in hand[i + 1 :]
        ]
    if phase == CHOOSE:
        return [{"type": "choose", "card": card} for card in state["offer"]["cards"]]
    card = _card_to_place(state, seat)
    slots = fitting_slots(state["pyramids"][seat], card, covering=phase != DRAW)
    actions: list[Action] = [{"type": "place", "slot": slot} for slot in slots]
    if phase == LAST_CARD:
        actions.append({"type": "pass"})
    elif phase == DRAW and not slots:
        actions.append({"type": "discard"})
    return actions


def apply(state: State, seat: Seat, action: Action) -> list[Event]:
    """Check ``action`` completely, then play it; return the events."""
    if state["phase"] == OVER:
        raise IllegalAction("illegal_action", "the match is over")
    if seat not in to_act(state):
        raise IllegalAction("not_your_turn", f"seat {seat} is not to act now")
    kind = action.get("type")
    handler = _HANDLERS.get((state["phase"], kind))
    if handler is None:
        raise IllegalAction(
            "illegal_action", f"a {kind!r} action is not possible in phase {state['phase']!r}"
        )
    return handler(state, seat, action)


def _apply_offer(state: State, seat: Seat, action: Action) -> list[Event]:
    """ "Le joueur qui commence prend 2 cartes de sa main et les place face
    visible sur la table." """
    cards = action.get("cards")
    hand = state["hands"][seat]
    if (
        not isinstance(cards, list)
        or len(cards) != 2
        or not all(_is_int(card) for card in cards)
        or cards[0] == cards[1]
    ):
        raise IllegalAction("illegal_action", "an offer is two different cards")
    missing = [card for card in cards if card not in hand]
    if missing:
        raise IllegalAction("illegal_action", f"card(s) {missing} are not in your hand")
    offered = sorted(cards)
    for card in offered:
        hand.remove(card)
    state["offer"] = {"seat": seat, "cards": offered, "chosen": None}
    state["phase"] = CHOOSE
    return [{"type": "offered", "seat": seat, "cards": offered}]


def _apply_choose(state: State, seat: Seat, action: Action) -> list[Event]:
    """ "L'autre joueur prend une de ces 2 cartes et le joueur récupère
    l'autre." A player whose card fits nowhere is stuck: both stuck, the
    manche is void at once; one stuck, it is decided once the other player
    has placed (``_after_placements``)."""
    card = action.get("card")
    offer = state["offer"]
    if not _is_int(card) or card not in offer["cards"]:
        raise IllegalAction("illegal_action", f"card {card!r} is not one of the offered cards")
    left = offer["cards"][1] if card == offer["cards"][0] else offer["cards"][0]
    offer["chosen"] = card
    state["to_place"][seat] = card
    state["to_place"][offer["seat"]] = left
    events: list[Event] = [{"type": "chosen", "seat": seat, "card": card, "left": left}]
    stuck = [s for s in range(2) if not fitting_slots(state["pyramids"][s], state["to_place"][s])]
    for s in stuck:
        events.append({"type": "stuck", "seat": s, "card": state["to_place"][s]})
    if len(stuck) == 2:
        events += _end_manche(state, None, "both_stuck")
    else:
        # A stuck seat keeps its card in ``to_place`` and is not asked to act.
        state["phase"] = PLACE
        state["pending"] = [s not in stuck for s in range(2)]
    return events


def _apply_place(state: State, seat: Seat, action: Action) -> list[Event]:
    """ "La carte que chaque joueur vient de récupérer doit être placée sur une
    des 10 cases de sa pyramide", where the construction rule allows it."""
    card = _card_to_place(state, seat)
    pyramid = state["pyramids"][seat]
    slot = action.get("slot")
    covering = state["phase"] != DRAW
    if not _is_int(slot) or slot not in fitting_slots(pyramid, card, covering=covering):
        raise IllegalAction("illegal_action", _why_not(pyramid, card, slot, covering))
    covered = pyramid[slot][-1] if pyramid[slot] else None
    pyramid[slot].append(card)
    event: Event = {"type": "placed", "seat": seat, "slot": slot, "card": card}
    if state["phase"] == DRAW:
        state["drawn"] = None
        if filled_slots(pyramid) == N_SLOTS:
            return [event, *_end_solitaire(state)]
        return [event, *_draw(state)]
    event["covered"] = covered
    if state["phase"] == LAST_CARD:
        state["hands"][seat].remove(card)
    else:
        state["to_place"][seat] = None
    state["pending"][seat] = False
    return [event, *_after_placements(state)]


def _apply_pass(state: State, seat: Seat, action: Action) -> list[Event]:
    """The last card is optional: "il peut utiliser la dernière carte"."""
    state["pending"][seat] = False
    return [{"type": "passed", "seat": seat}, *_after_placements(state)]


def _apply_discard(state: State, seat: Seat, action: Action) -> list[Event]:
    """Solitaire: "on tire une carte et on doit la poser sur la pyramide";
    only a card that fits no empty slot is set aside."""
    card = state["drawn"]
    slots = fitting_slots(state["pyramids"][seat], card, covering=False)
    if slots:
        raise IllegalAction(
            "illegal_action",
            f"the drawn {card} fits slot(s) {slots}: it must be placed on one of them",
        )
    state["set_aside"].append(card)
    state["drawn"] = None
    return [{"type": "set_aside", "seat": seat, "card": card}, *_draw(state)]


_HANDLERS = {
    (OFFER, "offer"): _apply_offer,
    (CHOOSE, "choose"): _apply_choose,
    (PLACE, "place"): _apply_place,
    (LAST_CARD, "place"): _apply_place,
    (LAST_CARD, "pass"): _apply_pass,
    (DRAW, "place"): _apply_place,
    (DRAW, "discard"): _apply_discard,
}


def outcome(state: State) -> dict[str, Any] | None:
    """None while playing. Match: the winner and the manches won. Solitaire:
    completed or not, with the number of cards drawn; won only with a perfect
    pyramid of 10 cards ("il faut le faire en 10 cartes ... pour être le roi
    Pacal et gagner")."""
    if state["phase"] != OVER:
        return None
    if state["mode"] == MODE_SOLITAIRE:
        filled = filled_slots(state["pyramids"][0])
        completed = filled == N_SLOTS
        won = completed and state["cards_drawn"] == N_SLOTS
        return {
            "winners": [0] if won else [],
            "scores": [state["cards_drawn"]],
            "won": won,
            "completed": completed,
            "score": state["cards_drawn"] if completed else None,
            "cards_drawn": state["cards_drawn"],
            "filled": filled,
        }
    return {
        "winners": list(state["winners"]),
        "scores": list(state["manches_won"]),
        "manches_won": list(state["manches_won"]),
        "manches_played": state["manche"],
    }


# --- Observation ----------------------------------------------------------


def view(state: State, seat: Seat | None) -> dict[str, Any]:
    """What ``seat`` (None: a spectator) may see: the pyramids, the offer,
    the public foundation tops, its own hand; never another hand, the
    foundation cards below the tops, nor the draw pile."""
    solitaire = state["mode"] == MODE_SOLITAIRE
    acting = to_act(state)
    players = [_player_view(state, s, seat, s in acting) for s in range(state["n_players"])]
    return {
        "mode": state["mode"],
        "phase": state["phase"],
        "manche": state["manche"],
        "manches_to_win": None if solitaire else state["manches_to_win"],
        "active": None if solitaire or state["phase"] == OVER else state["active"],
        "offers_made": None if solitaire else state["offers_made"],
        "offer": None if solitaire or state["offer"] is None else _copy_offer(state["offer"]),
        "players": players,
        "drawn": state["drawn"] if solitaire else None,
        "pile_size": len(state["pile"]) if solitaire else None,
        "cards_drawn": state["cards_drawn"] if solitaire else None,
        "set_aside": list(state["set_aside"]) if solitaire else None,
        "last_manche": None if solitaire else _copy_last_manche(state["last_manche"]),
        "winners": _winners(state),
    }


def _player_view(state: State, s: Seat, viewer: Seat | None, acting: bool) -> dict[str, Any]:
    pyramid = state["pyramids"][s]
    if state["mode"] == MODE_SOLITAIRE:
        hand, hand_size, to_place = None, 0, state["drawn"]
        manches_won, foundation_top = 0, None
    else:
        own = viewer == s
        hand = list(state["hands"][s]) if own else None
        hand_size = len(state["hands"][s])
        to_place = state["to_place"][s]
        if state["phase"] == LAST_CARD and state["pending"][s]:
            to_place = state["hands"][s][0] if own else None
        manches_won = state["manches_won"][s]
        foundation_top = state["foundation_tops"][s]
    return {
        "seat": s,
        "pyramid": [list(slot) for slot in pyramid],
        "hand": hand,
        "hand_size": hand_size,
        "to_place": to_place,
        "to_act": acting,
        "manches_won": manches_won,
        "foundation_top": foundation_top,
        "filled": filled_slots(pyramid),
        "spread": spread(pyramid),
    }


def determinize(state: State, seat: Seat | None, rng: random.Random) -> State:
    """A new state that ``seat`` (None: a spectator) cannot tell from ``state``.

    What nobody but their owner has seen (the other hand) and what nobody has
    seen (the foundations below their public tops, the solitaire's pile and
    whole foundation) form one pool, dealt anew from its sorted list so that
    the result depends only on what ``seat`` sees and on ``rng``. Hand sizes
    stay, hands stay sorted, and the generator of later deals is reseeded.
    ``state`` is left untouched.
    """
    new: State = orjson.loads(orjson.dumps(state))
    if new["mode"] == MODE_SOLITAIRE:
        pool = sorted(new["foundations"][0] + new["pile"])
        rng.shuffle(pool)
        new["foundations"] = [pool[:N_SLOTS]]
        new["pile"] = pool[N_SLOTS:]
    else:
        hidden = [s for s in range(2) if s != seat]
        pool = sorted(
            [card for s in hidden for card in new["hands"][s]]
            + [card for foundation in new["foundations"] for card in foundation[1:]]
        )
        rng.shuffle(pool)
        for s in hidden:
            size = len(new["hands"][s])
            new["hands"][s], pool = sorted(pool[:size]), pool[size:]
        for foundation in new["foundations"]:
            size = len(foundation) - 1
            foundation[1:], pool = pool[:size], pool[size:]
    new["rng"] = rng.getrandbits(63)
    return new


def state_from_view(seen: dict[str, Any], seat: Seat | None, rng: random.Random) -> State:
    """A complete state consistent with ``seen``, ``view(state, seat)``
    after a JSON round trip, for a bot that only has its seat's view.

    Everything in the view is kept; the hidden cards (the other hand, the
    foundations below their tops, the solitaire's pile and foundation) are
    the 50 cards minus every card the view shows, which ``determinize`` then
    deals at random, along with the seed of later deals. So
    ``view(state_from_view(view(s, seat), seat, rng), seat) == view(s, seat)``.
    Raises ValueError when the view cannot come from a real state.
    """
    players = seen["players"]
    pyramids = [[list(stack) for stack in player["pyramid"]] for player in players]
    shown = [card for pyramid in pyramids for stack in pyramid for card in stack]
    if seen["mode"] == MODE_SOLITAIRE:
        shown += seen["set_aside"] + ([seen["drawn"]] if seen["drawn"] is not None else [])
        hidden = _unseen(set(shown), N_SLOTS + seen["pile_size"])
        skeleton: State = {
            "mode": MODE_SOLITAIRE,
            "n_players": 1,
            "rng": 0,
            "manche": seen["manche"],
            "foundations": [hidden[:N_SLOTS]],
            "pile": hidden[N_SLOTS:],
            "pyramids": pyramids,
            "set_aside": list(seen["set_aside"]),
            "cards_drawn": seen["cards_drawn"],
            "drawn": seen["drawn"],
            "phase": seen["phase"],
        }
        return determinize(skeleton, seat, rng)
    phase = seen["phase"]
    offer = seen["offer"]
    own = [player["hand"] or [] for player in players if player["seat"] == seat]
    tops = [player["foundation_top"] for player in players]
    # In the last-card phase the view's to_place is the owner's last hand
    # card, still in the hand; otherwise it is a card in flight.
    to_place = [None, None] if phase == LAST_CARD else [p["to_place"] for p in players]
    shown += tops + [card for hand in own for card in hand]
    shown += [card for card in (offer["cards"] if offer else []) + to_place if card is not None]
    hidden_hands = [s for s in range(2) if s != seat]
    sizes = [players[s]["hand_size"] for s in hidden_hands]
    hidden = _unseen(set(shown), sum(sizes) + 2 * (N_SLOTS - 1))
    hands = [list(players[s]["hand"]) if s == seat else [] for s in range(2)]
    for s, size in zip(hidden_hands, sizes, strict=True):
        hands[s], hidden = hidden[:size], hidden[size:]
    skeleton = {
        "mode": MODE_MATCH,
        "n_players": 2,
        "rng": 0,
        "manche": seen["manche"],
        "manches_to_win": seen["manches_to_win"],
        "manches_won": [player["manches_won"] for player in players],
        "last_manche": _copy_last_manche(seen["last_manche"]),
        "winners": None if seen["winners"] is None else list(seen["winners"]),
        "foundations": [[tops[s], *hidden[9 * s : 9 * (s + 1)]] for s in range(2)],
        "hands": hands,
        "foundation_tops": tops,
        "pyramids": pyramids,
        # Once the match is over nothing reads the active seat any more.
        "active": 0 if seen["active"] is None else seen["active"],
        "offers_made": seen["offers_made"],
        "offer": None if offer is None else _copy_offer(offer),
        "to_place": to_place,
        "pending": [player["to_act"] and phase in (PLACE, LAST_CARD) for player in players],
        "phase": phase,
    }
    return determinize(skeleton, seat, rng)


# --- Construction rule (public helpers) -----------------------------------


def fitting_slots(pyramid: list[list[int]], card: int, covering: bool = True) -> list[int]:
    """The slots where ``card`` may go: an empty slot, or (``covering``) a
    face-up card that covers nothing, and only where the visible values still
    strictly decrease in slot order once it lands."""
    below = [0] * N_SLOTS  # the highest visible value after each slot
    highest = 0
    for slot in range(N_SLOTS - 1, -1, -1):
        below[slot] = highest
        if pyramid[slot]:
            highest = max(highest, pyramid[slot][-1])
    above = N_CARDS + 1  # the lowest visible value before the slot
    fits = []
    for slot in range(N_SLOTS):
        stack = pyramid[slot]
        room = len(stack) == 0 or (covering and len(stack) < MAX_FACE_UP)
        if room and below[slot] < card < above:
            fits.append(slot)
        if stack:
            above = min(above, stack[-1])
    return fits


def visible_values(pyramid: list[list[int]]) -> list[int | None]:
    """The visible value of each slot (its topmost face-up card), or None."""
    return [stack[-1] if stack else None for stack in pyramid]


def filled_slots(pyramid: list[list[int]]) -> int:
    """How many slots show a face-up card."""
    return sum(1 for stack in pyramid if stack)


def spread(pyramid: list[list[int]]) -> int:
    """Highest minus lowest visible value ("la plus grande différence entre sa
    carte la plus forte et la plus faible"); 0 with fewer than two cards."""
    values = [stack[-1] for stack in pyramid if stack]
    return max(values) - min(values) if len(values) > 1 else 0


# --- Private helpers ------------------------------------------------------


def _deal_manche(state: State) -> list[Event]:
    """Shuffle all 50 cards: 10 face-down foundation cards and 15 hand cards
    each. The higher foundation card under slot 0 starts."""
    with seeded_rng(state) as rng:
        deck = list(range(1, N_CARDS + 1))
        rng.shuffle(deck)
    foundations = [deck[0:10], deck[10:20]]
    state["manche"] += 1
    state["foundations"] = foundations
    state["hands"] = [sorted(deck[20:35]), sorted(deck[35:50])]
    state["foundation_tops"] = [foundations[0][0], foundations[1][0]]
    state["pyramids"] = [[[] for _ in range(N_SLOTS)] for _ in range(2)]
    starter = 0 if foundations[0][0] > foundations[1][0] else 1
    state["active"] = starter
    state["offers_made"] = 0
    state["offer"] = None
    state["to_place"] = [None, None]
    state["pending"] = [False, False]
    state["phase"] = OFFER
    events: list[Event] = [
        {
            "type": "manche_dealt",
            "manche": state["manche"],
            "foundation_tops": list(state["foundation_tops"]),
            "starter": starter,
        }
    ]
    events += [
        {"type": "hand_dealt", "seat": s, "hand": list(state["hands"][s]), "to": [s]}
        for s in range(2)
    ]
    return events


def _after_placements(state: State) -> list[Event]:
    """Once both players have placed (or passed), decide the manche or go on:
    a stuck player (whose card is still to place) loses; a completed pyramid
    wins; both complete: the larger spread wins."""
    if any(state["pending"]):
        return []
    if state["phase"] == PLACE:
        stuck = [s for s in range(2) if state["to_place"][s] is not None]
        if stuck:
            return _end_manche(state, 1 - stuck[0], "stuck")
    state["offer"] = None
    complete = [s for s in range(2) if filled_slots(state["pyramids"][s]) == N_SLOTS]
    if len(complete) == 1:
        return _end_manche(state, complete[0], "completed")
    if len(complete) == 2:
        return _decide_by_spread(state, "spread", "equal_spread")
    if state["phase"] == LAST_CARD:
        return _decide_exhausted(state)
    state["offers_made"] += 1
    if state["offers_made"] == OFFERS_PER_MANCHE:
        state["phase"] = LAST_CARD
        state["pending"] = [True, True]
        return [{"type": "last_card"}]
    state["active"] = 1 - state["active"]
    state["phase"] = OFFER
    return [{"type": "next_offer", "seat": state["active"]}]


def _decide_exhausted(state: State) -> list[Event]:
    """Cards exhausted, nobody complete: more filled slots wins, then the
    larger spread, else the manche is void."""
    filled = [filled_slots(pyramid) for pyramid in state["pyramids"]]
    if filled[0] != filled[1]:
        return _end_manche(state, 0 if filled[0] > filled[1] else 1, "exhausted")
    return _decide_by_spread(state, "exhausted_spread", "exhausted_tie")


def _decide_by_spread(state: State, reason: str, void_reason: str) -> list[Event]:
    spreads = [spread(pyramid) for pyramid in state["pyramids"]]
    if spreads[0] == spreads[1]:
        return _end_manche(state, None, void_reason)
    return _end_manche(state, 0 if spreads[0] > spreads[1] else 1, reason)


def _end_manche(state: State, winner: Seat | None, reason: str) -> list[Event]:
    """Score the manche (a void one scores nothing), then end the match at
    ``manches_to_win`` or deal the next manche with all 50 cards."""
    pyramids = state["pyramids"]
    state["pending"] = [False, False]
    state["last_manche"] = {
        "manche": state["manche"],
        "winner": winner,
        "reason": reason,
        "pyramids": [[list(stack) for stack in pyramid] for pyramid in pyramids],
        "filled": [filled_slots(pyramid) for pyramid in pyramids],
        "spreads": [spread(pyramid) for pyramid in pyramids],
    }
    if winner is None:
        events: list[Event] = [
            {"type": "manche_void", "manche": state["manche"], "reason": reason}
        ]
    else:
        state["manches_won"][winner] += 1
        events = [
            {
                "type": "manche_won",
                "manche": state["manche"],
                "seat": winner,
                "reason": reason,
                "manches_won": list(state["manches_won"]),
            }
        ]
    if winner is not None and state["manches_won"][winner] >= state["manches_to_win"]:
        state["phase"] = OVER
        state["winners"] = [winner]
        return [*events, {"type": "match_over", **outcome(state)}]
    return events + _deal_manche(state)


def _deal_solitaire(state: State) -> None:
    """ "On construit une pyramide avec 10 cartes face cachée. Les 40 cartes
    restantes forment une pioche cachée." The first card is drawn at once."""
    with seeded_rng(state) as rng:
        deck = list(range(1, N_CARDS + 1))
        rng.shuffle(deck)
    state["manche"] = 1
    state["foundations"] = [deck[:10]]
    state["pile"] = deck[10:]
    state["pyramids"] = [[[] for _ in range(N_SLOTS)]]
    state["set_aside"] = []
    state["cards_drawn"] = 0
    state["drawn"] = None
    state["phase"] = DRAW
    _draw(state)


def _draw(state: State) -> list[Event]:
    """Draw the next card; an empty pile loses the solitaire."""
    if not state["pile"]:
        return _end_solitaire(state)
    state["drawn"] = state["pile"].pop()
    state["cards_drawn"] += 1
    return [
        {
            "type": "drawn",
            "card": state["drawn"],
            "cards_drawn": state["cards_drawn"],
            "pile_size": len(state["pile"]),
        }
    ]


def _end_solitaire(state: State) -> list[Event]:
    """A perfect pyramid is won; one finished with more cards is completed; an
    unfinished one is lost."""
    state["phase"] = OVER
    result = outcome(state)
    assert result is not None
    if result["won"]:
        event = {"type": "solitaire_won", "score": result["score"]}
    elif result["completed"]:
        event = {"type": "solitaire_completed", "score": result["score"]}
    else:
        event = {"type": "solitaire_lost", "filled": result["filled"]}
    return [event, {"type": "match_over", **result}]


def _card_to_place(state: State, seat: Seat) -> int:
    if state["phase"] == DRAW:
        return state["drawn"]
    if state["phase"] == LAST_CARD:
        return state["hands"][seat][0]
    return state["to_place"][seat]


def _why_not(pyramid: list[list[int]], card: int, slot: Any, covering: bool) -> str:
    if not _is_int(slot) or not 0 <= slot < N_SLOTS:
        return f"slot {slot!r} does not exist (0..9)"
    stack = pyramid[slot]
    if stack and not covering:
        return f"slot {slot} is taken; covering a card is not allowed in solitaire"
    if len(stack) >= MAX_FACE_UP:
        return f"slot {slot} already holds two cards: a card can be covered only once"
    return f"{card} on slot {slot} would break the strictly decreasing order"


def _winners(state: State) -> list[Seat] | None:
    if state["phase"] != OVER:
        return None
    result = outcome(state)
    return result["winners"] if result else None


def _copy_offer(offer: dict[str, Any]) -> dict[str, Any]:
    return {"seat": offer["seat"], "cards": list(offer["cards"]), "chosen": offer["chosen"]}


def _copy_last_manche(last: dict[str, Any] | None) -> dict[str, Any] | None:
    if last is None:
        return None
    return {
        **last,
        "pyramids": [[list(stack) for stack in pyramid] for pyramid in last["pyramids"]],
        "filled": list(last["filled"]),
        "spreads": list(last["spreads"]),
    }


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _unseen(shown: set[int], count: int) -> list[int]:
    """The cards not in ``shown``, sorted; there must be ``count`` of them."""
    if not shown <= set(range(1, N_CARDS + 1)):
        raise ValueError("the view shows a card that does not exist")
    hidden = [card for card in range(1, N_CARDS + 1) if card not in shown]
    if len(hidden) != count:
        raise ValueError(f"{len(hidden)} unseen cards where the view hides {count}")
    return hidden
