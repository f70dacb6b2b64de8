"""Ducale's wire format: options, actions, view and outcome (marshmallow 4).

These schemas are the contract clients see in the OpenAPI document; every key
the engine emits is documented here, so ``validate`` on a real view or outcome
returns no errors. A card is a string, rank then suit (``"10H"``, ``"QS"``), or
``"JOKER"``; in a meld a joker is ``{"card": "JOKER", "as": "9H"}``.
"""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from engines.core import named
from engines.ducale.melds import CARDS, REAL_CARDS
from engines.ducale.rules import MAX_PLAYERS

_SEAT = validate.Range(min=0, max=MAX_PLAYERS - 1)
_CARD = validate.OneOf(CARDS)
_REAL_CARD = validate.OneOf(REAL_CARDS)


def _int(**kwargs: Any) -> fields.Integer:
    return fields.Integer(strict=True, **kwargs)


def _card(**kwargs: Any) -> fields.Field:
    return named("DucaleCard", fields.String(validate=_CARD, **kwargs))


def _real_card(**kwargs: Any) -> fields.Field:
    """A card that is not a joker."""
    return named("DucaleRealCard", fields.String(validate=_REAL_CARD, **kwargs))


def _meld_id(**kwargs: Any) -> fields.Field:
    """A meld on the table, by its id (as the view's ``table`` shows it)."""
    return named("DucaleMeldId", _int(validate=validate.Range(min=0), **kwargs))


def _joker_as(**kwargs: Any) -> fields.Field:
    return _real_card(
        metadata={
            "description": "The card the joker stands for; needed when the cards hold "
            "a joker whose place is ambiguous (an end of a run, a set of 3)."
        },
        **kwargs,
    )


def _cards(minimum: int, **kwargs: Any) -> fields.List:
    return fields.List(_card(), validate=validate.Length(min=minimum, max=14), **kwargs)


def _type(name: str) -> fields.String:
    return fields.String(required=True, validate=validate.OneOf([name]))


# -- options -------------------------------------------------------------------


class DucaleOptionsSchema(Schema):
    """Options of a Ducale match; unknown keys are refused."""

    target_score = _int(
        load_default=500,
        validate=validate.Range(min=1, max=10_000),
        metadata={
            "description": "Rounds go on until a total reaches this (the rulebook "
            "suggests 1000 for a long game); the lowest total wins."
        },
    )
    opening_minimum = _int(
        load_default=0,
        validate=validate.OneOf([0, 51]),
        metadata={
            "description": "0: melds without minimum. 51: the classic rule, a first "
            "lay-down in one action worth at least 51 points."
        },
    )
    max_stock_rebuilds = _int(
        load_default=None,
        allow_none=True,
        validate=validate.Range(min=0, max=1000),
        metadata={
            "description": "null (the rulebook): the stock is rebuilt from the discard "
            "pile as often as needed. A number: once it has been rebuilt that many "
            "times in a round, a stock that runs out again ends the round with no "
            "winner, everyone scoring their hand (tables of bots that must stay bounded: "
            "a table of bots only that leaves it null gets 3)."
        },
    )


# -- actions -------------------------------------------------------------------


class DucaleMeldSpecSchema(Schema):
    """A new meld from the hand: its cards (any order) and the joker's meaning."""

    cards = _cards(3, required=True)
    joker_as = _joker_as()


class DucaleLayOffSpecSchema(Schema):
    """Cards from the hand added to a meld on the table."""

    meld = _meld_id(required=True)
    cards = _cards(1, required=True)
    joker_as = _joker_as()


def _melds(**kwargs: Any) -> fields.List:
    return fields.List(
        fields.Nested(DucaleMeldSpecSchema), validate=validate.Length(min=1, max=4), **kwargs
    )


class DucalePlacementBaseSchema(Schema):
    """Shared by the two moves that put a card on the table at once."""

    melds = _melds()
    lay_off = fields.Nested(DucaleLayOffSpecSchema)

    @validates_schema
    def _melds_or_lay_off(self, data: dict[str, Any], **kwargs: Any) -> None:
        if ("melds" in data) == ("lay_off" in data):
            raise ValidationError("Give either melds or lay_off.", "_schema")


class DucaleDrawActionSchema(Schema):
    """Draw the top card of the stock."""

    type = _type("draw")


class DucaleTakeDiscardActionSchema(DucalePlacementBaseSchema):
    """Take the top card of the discard pile and put it on the table in the same
    action: in new melds (``melds``), laid off (``lay_off``), or both: the melds
    are laid down first, so a player who had not laid down may then lay the card
    off on a meld that was on the table (``melds`` and ``lay_off`` together). A
    first lay-down under ``opening_minimum`` is counted on the melds alone.

    With ``swap_joker``, the card goes in place of that meld's joker (which must
    stand for it) and ``melds`` and ``lay_off`` put the freed joker on the table
    instead, once the player has laid down (before, or by the ``melds`` of this
    action)."""

    type = _type("take_discard")
    swap_joker = _meld_id(
        metadata={
            "description": "A meld on the table whose joker stands for the taken card: "
            "the card replaces the joker, which melds or lay_off must then place."
        }
    )

    @validates_schema
    def _melds_or_lay_off(self, data: dict[str, Any], **kwargs: Any) -> None:
        if "melds" not in data and "lay_off" not in data:
            raise ValidationError("Give melds, lay_off or both.", "_schema")


class DucaleMeldActionSchema(Schema):
    """Lay down one or more new melds from the hand."""

    type = _type("meld")
    melds = _melds(required=True)


class DucaleLayOffActionSchema(Schema):
    """Add cards from the hand to a meld on the table (once laid down)."""

    type = _type("lay_off")
    meld = _meld_id(required=True)
    cards = _cards(1, required=True)
    joker_as = _joker_as()


class DucaleSwapJokerActionSchema(DucalePlacementBaseSchema):
    """Replace a joker on the table by the card it stands for (``card``, from the
    hand), and put that joker on the table at once: in new melds or laid off."""

    type = _type("swap_joker")
    meld = _meld_id(required=True)
    card = _real_card(required=True)


class DucaleDiscardActionSchema(Schema):
    """Discard a card face up; the turn ends."""

    type = _type("discard")
    card = _card(required=True)


ACTION_SCHEMAS: dict[str, type[Schema]] = {
    "draw": DucaleDrawActionSchema,
    "take_discard": DucaleTakeDiscardActionSchema,
    "meld": DucaleMeldActionSchema,
    "lay_off": DucaleLayOffActionSchema,
    "swap_joker": DucaleSwapJokerActionSchema,
    "discard": DucaleDiscardActionSchema,
}


# -- view ----------------------------------------------------------------------


class DucaleMeldCardSchema(Schema):
    """A card of a meld; a joker carries the card it stands for in ``as``."""

    card = _card(required=True)
    as_ = _real_card(
        data_key="as",
        attribute="as",
        metadata={"description": "Only on a joker: the card it stands for."},
    )


class DucaleMeldSchema(Schema):
    """A meld on the table; a run's cards are in order, low to high."""

    id = _meld_id(required=True)
    owner = _int(required=True, validate=_SEAT)
    kind = fields.String(required=True, validate=validate.OneOf(["set", "run"]))
    cards = fields.List(fields.Nested(DucaleMeldCardSchema), required=True)


class DucalePlayerSchema(Schema):
    """What everyone knows of a seat."""

    seat = _int(required=True, validate=_SEAT)
    hand_size = _int(required=True, validate=validate.Range(min=0))
    laid_down = fields.Boolean(
        required=True, metadata={"description": "Whether the seat has melded this round."}
    )
    total = _int(required=True, metadata={"description": "Score over the past rounds."})


class DucaleRoundSchema(Schema):
    """A scored round."""

    round = _int(required=True, validate=validate.Range(min=1))
    went_out = _int(
        required=True,
        allow_none=True,
        validate=_SEAT,
        metadata={"description": "Who emptied their hand; null when the stock ran out."},
    )
    rami_sec = fields.Boolean(
        required=True,
        metadata={"description": "The winner went out while nobody else had laid down."},
    )
    scores = fields.List(_int(), required=True, metadata={"description": "This round, per seat."})
    totals = fields.List(_int(), required=True, metadata={"description": "After this round."})


class DucaleViewSchema(Schema):
    """A Ducale match as one seat (or a spectator) sees it."""

    round = _int(required=True, validate=validate.Range(min=1))
    phase = fields.String(
        required=True,
        validate=validate.OneOf(["draw", "play", "over"]),
        metadata={
            "description": "draw: the player to act must draw; play: meld, lay off, "
            "swap, then discard; over: the game has ended."
        },
    )
    turn = _int(required=True, allow_none=True, validate=_SEAT)
    first_player = _int(required=True, validate=_SEAT)
    hand = fields.List(
        _card(),
        required=True,
        allow_none=True,
        metadata={"description": "The seat's own cards; null for a spectator."},
    )
    must_use = _card(
        required=True,
        allow_none=True,
        metadata={
            "description": "A card the seat must still put on the table this turn. Always "
            "null: take_discard and swap_joker place their card within the same action."
        },
    )
    stock_size = _int(required=True, validate=validate.Range(min=0))
    stock_rebuilds = _int(
        required=True,
        validate=validate.Range(min=0),
        metadata={
            "description": "Times the discard pile became the stock this round (no limit "
            "unless the option max_stock_rebuilds sets one)."
        },
    )
    discard = fields.List(_card(), required=True, metadata={"description": "Top card last."})
    table = fields.List(fields.Nested(DucaleMeldSchema), required=True)
    players = fields.List(fields.Nested(DucalePlayerSchema), required=True)
    history = fields.List(fields.Nested(DucaleRoundSchema), required=True)
    options = fields.Nested(DucaleOptionsSchema, required=True)


class DucaleOutcomeSchema(Schema):
    """The end of the game: the lowest total wins, ties are shared."""

    winners = fields.List(_int(validate=_SEAT), required=True)
    scores = fields.List(_int(), required=True, metadata={"description": "Final totals."})
    rounds = fields.List(fields.Nested(DucaleRoundSchema), required=True)


# -- events --------------------------------------------------------------------
# One schema per event type the engine emits (``rules.py``); the service adds
# ``index`` and ``version``, and strips ``to`` before anyone sees an event.


def _event(name: str) -> fields.String:
    return fields.String(required=True, validate=validate.OneOf([name]))


def _seat() -> fields.Integer:
    return _int(required=True, validate=_SEAT)


class DucaleDrewEventSchema(Schema):
    """A seat drew from the stock (everyone sees that, not the card)."""

    type = _event("drew")
    seat = _seat()
    stock_size = _int(required=True, validate=validate.Range(min=0))


class DucaleCardDrawnEventSchema(Schema):
    """Only the drawer sees it: the card drawn."""

    type = _event("card_drawn")
    seat = _seat()
    card = _card(required=True)


class DucaleStockRebuiltEventSchema(Schema):
    """The whole discard pile became the stock; the pile is empty until the next
    discard."""

    type = _event("stock_rebuilt")
    stock_size = _int(required=True, validate=validate.Range(min=0))
    rebuilds = _int(required=True, validate=validate.Range(min=1))


class DucaleStockExhaustedEventSchema(Schema):
    """The stock ran out for good: the round ends with nobody out."""

    type = _event("stock_exhausted")


class DucaleTookDiscardEventSchema(Schema):
    type = _event("took_discard")
    seat = _seat()
    card = _card(required=True)


class DucaleJokerSwappedEventSchema(Schema):
    type = _event("joker_swapped")
    seat = _seat()
    meld = _meld_id(required=True)
    card = _real_card(required=True, metadata={"description": "The card that took its place."})


class DucaleDiscardedEventSchema(Schema):
    type = _event("discarded")
    seat = _seat()
    card = _card(required=True)


class DucaleLaidOffEventSchema(Schema):
    type = _event("laid_off")
    seat = _seat()
    meld = _meld_id(required=True)
    cards = fields.List(
        fields.Nested(DucaleMeldCardSchema),
        required=True,
        metadata={"description": "The cards added."},
    )
    result = fields.Nested(
        DucaleMeldSchema, required=True, metadata={"description": "The meld now."}
    )


class DucaleMeldedEventSchema(Schema):
    type = _event("melded")
    seat = _seat()
    melds = fields.List(fields.Nested(DucaleMeldSchema), required=True)


class DucaleTurnEventSchema(Schema):
    type = _event("turn")
    seat = _seat()


class DucaleWentOutEventSchema(Schema):
    type = _event("went_out")
    seat = _seat()


class DucaleRoundScoredEventSchema(DucaleRoundSchema):
    type = _event("round_scored")


class DucaleRoundStartedEventSchema(Schema):
    type = _event("round_started")
    round = _int(required=True, validate=validate.Range(min=1))
    first_player = _seat()
    discard = _card(required=True, metadata={"description": "The discard pile's first card."})
    stock_size = _int(required=True, validate=validate.Range(min=0))


class DucaleDealtEventSchema(Schema):
    """Only its seat sees it: the hand dealt."""

    type = _event("dealt")
    seat = _seat()
    cards = fields.List(_card(), required=True)


class DucaleMatchOverEventSchema(DucaleOutcomeSchema):
    type = _event("match_over")


EVENT_SCHEMAS: dict[str, type[Schema]] = {
    "drew": DucaleDrewEventSchema,
    "card_drawn": DucaleCardDrawnEventSchema,
    "stock_rebuilt": DucaleStockRebuiltEventSchema,
    "stock_exhausted": DucaleStockExhaustedEventSchema,
    "took_discard": DucaleTookDiscardEventSchema,
    "joker_swapped": DucaleJokerSwappedEventSchema,
    "discarded": DucaleDiscardedEventSchema,
    "laid_off": DucaleLaidOffEventSchema,
    "melded": DucaleMeldedEventSchema,
    "turn": DucaleTurnEventSchema,
    "went_out": DucaleWentOutEventSchema,
    "round_scored": DucaleRoundScoredEventSchema,
    "round_started": DucaleRoundStartedEventSchema,
    "dealt": DucaleDealtEventSchema,
    "match_over": DucaleMatchOverEventSchema,
}
