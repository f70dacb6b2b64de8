"""Dékal's wire format: options, actions, view and outcome (marshmallow 4).

These schemas are the contract clients see in the OpenAPI document; every
key the engine emits is documented here, so ``validate`` on a real view or
outcome returns no errors.
"""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate

from engines.core import named
from engines.dekal.rules import (
    DIRECTIONS,
    FIRST_PLAYER_RULES,
    MAX_PLAYERS,
    MAX_TARGET_SCORE,
    PHASES,
    SIZE,
    VALUES,
)

_INDEX = validate.Range(min=0, max=SIZE - 1)
_VALUE = validate.Range(min=VALUES.start, max=VALUES.stop - 1)
_SEAT = validate.Range(min=0, max=MAX_PLAYERS - 1)
_FOUR = validate.Length(equal=SIZE)


def _int(**kwargs: Any) -> fields.Integer:
    return fields.Integer(strict=True, **kwargs)


def _value(**kwargs: Any) -> fields.Field:
    """A card's value, 1 to 10."""
    return named("DekalValue", _int(validate=_VALUE, **kwargs))


def _direction(**kwargs: Any) -> fields.Field:
    """The side a card enters a grid from."""
    return named("DekalDirection", fields.String(validate=validate.OneOf(DIRECTIONS), **kwargs))


# -- options ---------------------------------------------------------------


class DekalFirstPlayerField(fields.Field):
    """``"lowest_card"``, ``"random"`` or a seat number."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if value in FIRST_PLAYER_RULES:
            return value
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < MAX_PLAYERS:
            return value
        raise ValidationError(
            f"Must be one of {', '.join(FIRST_PLAYER_RULES)} or a seat 0..{MAX_PLAYERS - 1}."
        )


class DekalOptionsSchema(Schema):
    """Options of a Dékal match; unknown keys are refused."""

    target_score = _int(
        load_default=None,
        allow_none=True,
        validate=validate.Range(min=1, max=MAX_TARGET_SCORE),
        metadata={
            "description": "Play manches until a cumulative score reaches this; "
            "null: a single manche (the rulebook's multi-manche value is 100)."
        },
    )
    first_player = DekalFirstPlayerField(
        load_default="lowest_card",
        metadata={
            "description": "Who starts turn 1 of the first manche: the lowest revealed "
            "card (ties broken by reserve draws), a random seat, or a seat number "
            "(which must be below the number of players).",
            "oneOf": [
                {"type": "string", "enum": list(FIRST_PLAYER_RULES)},
                {"type": "integer", "minimum": 0, "maximum": MAX_PLAYERS - 1},
            ],
        },
    )


# -- actions ---------------------------------------------------------------


class DekalRevealActionSchema(Schema):
    """Reveal phase: secretly choose a face-down card of one's own grid."""

    type = fields.String(required=True, validate=validate.OneOf(["reveal"]))
    row = _int(required=True, validate=_INDEX)
    col = _int(required=True, validate=_INDEX)


class DekalTakeActionSchema(Schema):
    """Draft phase: take a card of that value from the centre and push it
    into one's grid from the given side of the hole's row or column."""

    type = fields.String(required=True, validate=validate.OneOf(["take"]))
    value = _value(required=True)
    from_ = _direction(
        required=True,
        data_key="from",
        attribute="from",
        metadata={"description": "The side the card enters from."},
    )


# -- view ------------------------------------------------------------------


class DekalPositionSchema(Schema):
    """A cell of a grid."""

    row = _int(required=True, validate=_INDEX)
    col = _int(required=True, validate=_INDEX)


class DekalCellSchema(Schema):
    """A card in a grid; ``value`` is null while the card is face down."""

    face_up = fields.Boolean(required=True)
    value = _value(required=True, allow_none=True)


class DekalPlayerSchema(Schema):
    """One seat's side of the table."""

    seat = _int(required=True, validate=_SEAT)
    grid = fields.List(
        fields.List(fields.Nested(DekalCellSchema, allow_none=True), validate=_FOUR),
        required=True,
        validate=_FOUR,
        metadata={"description": "4 rows of 4 cells; null is the hole."},
    )
    hole = fields.Nested(
        DekalPositionSchema,
        required=True,
        allow_none=True,
        metadata={"description": "The open hole, between the reveal and this seat's take."},
    )
    chosen = fields.Boolean(
        required=True,
        metadata={"description": "Reveal phase: this seat has chosen (not what)."},
    )
    total = _int(required=True, metadata={"description": "Cumulative score of past manches."})


class DekalReserveSchema(Schema):
    """The undealt cards, used only to break a tie for the first player."""

    count = _int(required=True, metadata={"description": "Face-down cards left."})
    drawn = fields.List(
        _value(),
        required=True,
        metadata={"description": "Cards drawn face up to break a tie, in draw order."},
    )


class DekalMancheResultSchema(Schema):
    """A scored manche."""

    manche = _int(required=True)
    first_player = _int(required=True, validate=_SEAT)
    scores = fields.List(_int(), required=True)
    cards_left = fields.List(_int(), required=True)
    cancelled = fields.List(
        fields.List(fields.Nested(DekalPositionSchema)),
        required=True,
        metadata={"description": "Per seat, the cells whose cards cancelled."},
    )
    totals = fields.List(_int(), required=True)


class DekalViewSchema(Schema):
    """What a seat (or a spectator) sees of a Dékal match."""

    seat = _int(required=True, allow_none=True, metadata={"description": "null: a spectator."})
    n_players = _int(required=True)
    target_score = _int(required=True, allow_none=True)
    manche = _int(required=True, metadata={"description": "Counts from 1."})
    turn = _int(required=True, validate=validate.Range(min=1, max=16))
    phase = fields.String(required=True, validate=validate.OneOf(PHASES))
    first_player = _int(
        required=True,
        allow_none=True,
        validate=_SEAT,
        metadata={"description": "This turn's first player; null until turn 1's reveal."},
    )
    current = _int(
        required=True,
        allow_none=True,
        validate=_SEAT,
        metadata={"description": "Draft phase: the seat taking a card."},
    )
    centre = fields.List(_value(), required=True, metadata={"description": "Sorted values."})
    reserve = fields.Nested(DekalReserveSchema, required=True)
    players = fields.List(fields.Nested(DekalPlayerSchema), required=True)
    manches = fields.List(fields.Nested(DekalMancheResultSchema), required=True)
    my_choice = fields.Nested(
        DekalPositionSchema,
        allow_none=True,
        metadata={"description": "Only in a seat's own view: its secret reveal choice."},
    )


class DekalOutcomeSchema(Schema):
    """The result of a finished match."""

    winners = fields.List(_int(validate=_SEAT), required=True)
    scores = fields.List(
        _int(), required=True, metadata={"description": "Cumulative score per seat."}
    )
    cards_left = fields.List(
        _int(), required=True, metadata={"description": "Cards left per grid, last manche."}
    )
    manche_scores = fields.List(
        fields.List(_int()),
        required=True,
        metadata={"description": "Per manche, the score of each seat."},
    )
    manches = _int(required=True, metadata={"description": "Manches played."})


# -- events ----------------------------------------------------------------
# One schema per event type the engine emits (``rules.py``); the service adds
# ``index`` and ``version``, and strips ``to`` before anyone sees an event.


def _event(name: str) -> fields.String:
    return fields.String(required=True, validate=validate.OneOf([name]))


class DekalChosenEventSchema(Schema):
    """A seat has chosen its card to reveal (not which)."""

    type = _event("chosen")
    seat = _int(required=True, validate=_SEAT)


class DekalRevealedCardSchema(Schema):
    """A card turned face up into the centre, and where it came from."""

    seat = _int(required=True, validate=_SEAT)
    row = _int(required=True, validate=_INDEX)
    col = _int(required=True, validate=_INDEX)
    value = _value(required=True)


class DekalRevealedEventSchema(Schema):
    """Every seat had chosen: the chosen cards are face up in the centre."""

    type = _event("revealed")
    manche = _int(required=True)
    turn = _int(required=True, validate=validate.Range(min=1, max=16))
    cards = fields.List(fields.Nested(DekalRevealedCardSchema), required=True)


class DekalReserveDrawSchema(Schema):
    """A tied seat's draw from the reserve."""

    seat = _int(required=True, validate=_SEAT)
    value = _value(required=True)


class DekalReserveDrawnEventSchema(Schema):
    """Tied seats drew from the reserve to decide the first player."""

    type = _event("reserve_drawn")
    draws = fields.List(fields.Nested(DekalReserveDrawSchema), required=True)


class DekalFirstPlayerEventSchema(Schema):
    """The first player of the manche, and how it was decided."""

    type = _event("first_player")
    seat = _int(required=True, validate=_SEAT)
    by = fields.String(
        required=True, validate=validate.OneOf(["lowest_card", "reserve", "random"])
    )


class DekalTakenEventSchema(Schema):
    """A seat took a card from the centre and pushed it into its grid."""

    type = _event("taken")
    seat = _int(required=True, validate=_SEAT)
    value = _value(required=True)
    from_ = _direction(required=True, data_key="from", attribute="from")
    hole = fields.Nested(DekalPositionSchema, required=True)


class DekalTurnStartedEventSchema(Schema):
    """A new turn's reveal phase begins."""

    type = _event("turn_started")
    manche = _int(required=True)
    turn = _int(required=True, validate=validate.Range(min=1, max=16))
    first_player = _int(required=True, validate=_SEAT)


class DekalMancheScoredEventSchema(DekalMancheResultSchema):
    """A manche is over: every grid face up, and its scores."""

    type = _event("manche_scored")
    grids = fields.List(
        fields.List(fields.List(_value(), validate=_FOUR), validate=_FOUR),
        required=True,
        metadata={"description": "Per seat, 4 rows of 4 values."},
    )


class DekalMancheStartedEventSchema(Schema):
    """A new manche is dealt."""

    type = _event("manche_started")
    manche = _int(required=True)
    first_player = _int(required=True, validate=_SEAT)


class DekalMatchOverEventSchema(DekalOutcomeSchema):
    """The match is over: its outcome."""

    type = _event("match_over")


EVENT_SCHEMAS: dict[str, type[Schema]] = {
    "chosen": DekalChosenEventSchema,
    "revealed": DekalRevealedEventSchema,
    "reserve_drawn": DekalReserveDrawnEventSchema,
    "first_player": DekalFirstPlayerEventSchema,
    "taken": DekalTakenEventSchema,
    "turn_started": DekalTurnStartedEventSchema,
    "manche_scored": DekalMancheScoredEventSchema,
    "manche_started": DekalMancheStartedEventSchema,
    "match_over": DekalMatchOverEventSchema,
}
