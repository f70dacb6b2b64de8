"""Ducale's wire format: options, actions, view and outcome (marshmallow 4).

These schemas are the contract clients see in the OpenAPI document; every key
the engine emits is documented here, so ``validate`` on a real view or outcome
returns no errors. A card is a string, rank then suit (``"10H"``, ``"QS"``), or
``"JOKER"``; in a meld a joker is ``{"card": "JOKER", "as": "9H"}``.
"""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from engines.ducale.melds import CARDS, REAL_CARDS
from engines.ducale.rules import MAX_PLAYERS

_SEAT = validate.Range(min=0, max=MAX_PLAYERS - 1)
_CARD = validate.OneOf(CARDS)
_REAL_CARD = validate.OneOf(REAL_CARDS)


def _int(**kwargs: Any) -> fields.Integer:
    return fields.Integer(strict=True, **kwargs)


def _card(**kwargs: Any) -> fields.String:
    return fields.String(validate=_CARD, **kwargs)


def _joker_as(**kwargs: Any) -> fields.String:
    return fields.String(
        validate=_REAL_CARD,
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
            "winner, everyone scoring their hand (tables of bots that must stay bounded)."
        },
    )


# -- actions -------------------------------------------------------------------


class DucaleMeldSpecSchema(Schema):
    """A new meld from the hand: its cards (any order) and the joker's meaning."""

    cards = _cards(3, required=True)
    joker_as = _joker_as()


class DucaleLayOffSpecSchema(Schema):
    """Cards from the hand added to a meld on the table."""

    meld = _int(required=True, validate=validate.Range(min=0))
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
    first lay-down under ``opening_minimum`` is counted on the melds alone."""

    type = _type("take_discard")

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
    meld = _int(required=True, validate=validate.Range(min=0))
    cards = _cards(1, required=True)
    joker_as = _joker_as()


class DucaleSwapJokerActionSchema(DucalePlacementBaseSchema):
    """Replace a joker on the table by the card it stands for (``card``, from the
    hand), and put that joker on the table at once: in new melds or laid off."""

    type = _type("swap_joker")
    meld = _int(required=True, validate=validate.Range(min=0))
    card = fields.String(required=True, validate=_REAL_CARD)


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
    as_ = fields.String(
        data_key="as",
        attribute="as",
        validate=_REAL_CARD,
        metadata={"description": "Only on a joker: the card it stands for."},
    )


class DucaleMeldSchema(Schema):
    """A meld on the table; a run's cards are in order, low to high."""

    id = _int(required=True, validate=validate.Range(min=0))
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
