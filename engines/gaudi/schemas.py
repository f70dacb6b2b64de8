"""Marshmallow schemas of the Gaudí tile game: options, actions, view, outcome.

Class names are prefixed with ``Gaudi`` because they become OpenAPI component
names. A tile is a 3-letter code: the colours (``O`` orange, ``G`` green,
``B`` blue) of its starfish, snail and jellyfish thirds, e.g. ``"OGB"``.
"""

from __future__ import annotations

from typing import Any

from marshmallow import RAISE, Schema, ValidationError, fields, validate

from engines.core import named
from engines.gaudi.geometry import ANIMALS
from engines.gaudi.rules import COLOURS, MAX_PLAYERS, MAX_TILES_PER_TURN, TILE_KINDS

TILE_DESCRIPTION = (
    "A tile: the colours (O orange, G green, B blue) of its starfish, snail and "
    'jellyfish thirds, in that order, e.g. "OGB".'
)
SEAT_OR_RANDOM = [
    {"type": "integer", "minimum": 0, "maximum": MAX_PLAYERS - 1},
    {"type": "string", "enum": ["random"]},
]


def _tile(metadata: dict[str, str] | None = None, **kwargs: Any) -> fields.Field:
    return named(
        "GaudiTile",
        fields.String(
            validate=validate.OneOf(TILE_KINDS),
            metadata={"description": TILE_DESCRIPTION, "example": "OGB", **(metadata or {})},
            **kwargs,
        ),
    )


class _Strict(Schema):
    class Meta:
        unknown = RAISE


# -- Options --------------------------------------------------------------------


class GaudiFirstPlayerField(fields.Field):
    """A seat number, or ``"random"``."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if value == "random":
            return value
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            if value >= MAX_PLAYERS:
                raise ValidationError(f"a seat number is below {MAX_PLAYERS}")
            return value
        raise ValidationError('a seat number (0 or more) or "random"')


class GaudiOptionsSchema(_Strict):
    short_game = fields.Boolean(
        load_default=False,
        truthy={True},
        falsy={False},
        metadata={"description": "Play with 50 tiles: the start tile and 49 random ones."},
    )
    beginner = fields.Boolean(
        load_default=False,
        truthy={True},
        falsy={False},
        metadata={
            "description": "Beginner rules: no animal to complete with 2 or 3 tiles, "
            "compact blocks allowed, objective cards public."
        },
    )
    children = fields.Boolean(
        load_default=False,
        truthy={True},
        falsy={False},
        metadata={
            "description": "The children's game: tiles only touch and match colours, laid "
            "one at a time, as many as the child likes in a turn (end_turn stops); no "
            "objectives, no markers, one shared pavement; the game ends with no winner "
            "and counts the completed animals and the tiles laid. Overrides beginner."
        },
    )
    first_player = GaudiFirstPlayerField(
        load_default=0,
        metadata={
            "description": 'The first seat: a seat number (default 0) or "random".',
            "oneOf": SEAT_OR_RANDOM,
        },
    )


# -- Actions ----------------------------------------------------------------------


class GaudiPlacedTileSchema(_Strict):
    tile = _tile(required=True)
    q = fields.Integer(strict=True, required=True, metadata={"description": "Axial column."})
    r = fields.Integer(strict=True, required=True, metadata={"description": "Axial row."})


class GaudiPlaceActionSchema(_Strict):
    type = fields.String(required=True, validate=validate.OneOf(["place"]))
    tiles = fields.List(
        fields.Nested(GaudiPlacedTileSchema),
        required=True,
        validate=validate.Length(min=1, max=MAX_TILES_PER_TURN),
        metadata={
            "description": "1 to 3 tiles from the hand, in placement order; in the "
            "children's game, one tile (the turn goes on until end_turn)."
        },
    )


class GaudiExchangeActionSchema(_Strict):
    type = fields.String(required=True, validate=validate.OneOf(["exchange"]))
    tile = _tile(required=True, metadata={"description": "The hand tile to return."})


class GaudiPassActionSchema(_Strict):
    type = fields.String(required=True, validate=validate.OneOf(["pass"]))


class GaudiEndTurnActionSchema(_Strict):
    """The children's game: stop laying tiles (after one at least); the hand is
    refilled and play passes on."""

    type = fields.String(required=True, validate=validate.OneOf(["end_turn"]))


# -- View -----------------------------------------------------------------------


class GaudiObjectivesSchema(_Strict):
    animal = fields.String(required=True, validate=validate.OneOf(ANIMALS))
    colour = fields.String(required=True, validate=validate.OneOf(COLOURS))


class GaudiBoardTileSchema(_Strict):
    q = fields.Integer(strict=True, required=True)
    r = fields.Integer(strict=True, required=True)
    tile = _tile(required=True)


class GaudiAnimalSchema(_Strict):
    q = fields.Integer(strict=True, required=True, metadata={"description": "Site anchor."})
    r = fields.Integer(strict=True, required=True, metadata={"description": "Site anchor."})
    animal = fields.String(required=True, validate=validate.OneOf(ANIMALS))
    colour = fields.String(required=True, validate=validate.OneOf(COLOURS))
    marker = fields.Integer(
        strict=True,
        required=True,
        allow_none=True,
        metadata={"description": "The seat whose marker is on it, or null."},
    )


class GaudiPlayerSchema(_Strict):
    seat = fields.Integer(strict=True, required=True)
    markers_left = fields.Integer(strict=True, required=True)
    hand_size = fields.Integer(strict=True, required=True)
    points = fields.Integer(
        strict=True,
        required=True,
        allow_none=True,
        metadata={"description": "Shown to the seat itself, and to everyone at the end."},
    )
    objectives = fields.Nested(
        GaudiObjectivesSchema,
        required=True,
        allow_none=True,
        metadata={
            "description": "Shown to the seat itself, to everyone at the end or "
            "with beginner rules."
        },
    )


class GaudiViewSchema(_Strict):
    board = fields.List(
        fields.Nested(GaudiBoardTileSchema),
        required=True,
        metadata={"description": "The placed tiles, in placement order."},
    )
    animals = fields.List(
        fields.Nested(GaudiAnimalSchema),
        required=True,
        metadata={"description": "Every completed animal, in completion order."},
    )
    hand = fields.List(
        _tile(),
        required=True,
        allow_none=True,
        metadata={"description": "The viewer's own tiles; null for a spectator."},
    )
    players = fields.List(fields.Nested(GaudiPlayerSchema), required=True)
    pile_size = fields.Integer(strict=True, required=True)
    pile_fits = fields.Boolean(
        required=True,
        allow_none=True,
        metadata={
            "description": "For the seat to play when no tile of its hand fits: whether a "
            "tile of the pile would (exchange) or not (pass), as its legal actions say; "
            "null otherwise."
        },
    )
    active = fields.Integer(
        strict=True,
        required=True,
        allow_none=True,
        metadata={"description": "The seat to play; null once the game is over."},
    )
    turn = fields.Integer(strict=True, required=True)
    finished = fields.Boolean(required=True)
    end_reason = fields.String(
        required=True,
        allow_none=True,
        validate=validate.OneOf(["hand_and_pile_empty", "blocked"]),
    )
    short_game = fields.Boolean(required=True)
    beginner = fields.Boolean(required=True)
    children = fields.Boolean(
        required=True,
        metadata={"description": "The children's game: no objectives, markers nor points."},
    )
    laid_this_turn = fields.Integer(
        strict=True,
        required=True,
        metadata={
            "description": "Tiles the seat to play has laid this turn (the children's game "
            "lays them one by one; 0 otherwise)."
        },
    )


# -- Outcome ----------------------------------------------------------------------


class GaudiOutcomeSchema(_Strict):
    winners = fields.List(fields.Integer(strict=True), required=True)
    scores = fields.List(
        fields.Integer(strict=True),
        required=True,
        metadata={"description": "Points per seat."},
    )
    marked = fields.List(
        fields.Integer(strict=True),
        required=True,
        metadata={"description": "Marked animals per seat."},
    )
    objectives = fields.List(fields.Nested(GaudiObjectivesSchema), required=True)
    reason = fields.String(
        required=True,
        validate=validate.OneOf(["hand_and_pile_empty", "blocked"]),
        metadata={"description": "hand_and_pile_empty, or blocked: nobody can place."},
    )
    # Not required: outcomes recorded before these counts (match_over events,
    # match records) lack them; the engine always gives them now.
    animals_completed = fields.Integer(
        strict=True,
        metadata={"description": "Animals completed on the pavement, marked or not."},
    )
    tiles_laid = fields.Integer(
        strict=True,
        metadata={
            "description": "Tiles the players laid (the start tile apart). With winners "
            "[] (the children's game), what the table built together."
        },
    )


ACTION_SCHEMAS: dict[str, type[Schema]] = {
    "place": GaudiPlaceActionSchema,
    "exchange": GaudiExchangeActionSchema,
    "pass": GaudiPassActionSchema,
    "end_turn": GaudiEndTurnActionSchema,
}


# -- Events -----------------------------------------------------------------------
# One schema per event type the engine emits (``rules.py``); the service adds
# ``index`` and ``version``, and strips ``to`` before anyone sees an event.


def _event(name: str) -> fields.String:
    return fields.String(required=True, validate=validate.OneOf([name]))


def _seat() -> fields.Integer:
    return fields.Integer(
        strict=True, required=True, validate=validate.Range(min=0, max=MAX_PLAYERS - 1)
    )


class GaudiTilePlacedEventSchema(GaudiBoardTileSchema):
    type = _event("tile_placed")
    seat = _seat()


class GaudiAnimalCompletedEventSchema(GaudiAnimalSchema):
    type = _event("animal_completed")
    seat = _seat()


class GaudiRefillEventSchema(_Strict):
    type = _event("refill")
    seat = _seat()
    count = fields.Integer(strict=True, required=True, metadata={"description": "Tiles drawn."})


class GaudiDrewEventSchema(_Strict):
    """Only the drawer sees it: the tiles drawn."""

    type = _event("drew")
    seat = _seat()
    tiles = fields.List(_tile(), required=True)


class GaudiExchangeEventSchema(_Strict):
    type = _event("exchange")
    seat = _seat()


class GaudiExchangedEventSchema(_Strict):
    """Only the exchanger sees it: the tile returned and the tile drawn."""

    type = _event("exchanged")
    seat = _seat()
    returned = _tile(required=True)
    drew = _tile(required=True)


class GaudiPassEventSchema(_Strict):
    type = _event("pass")
    seat = _seat()


class GaudiEndTurnEventSchema(_Strict):
    """The children's game: the seat stopped laying tiles."""

    type = _event("end_turn")
    seat = _seat()


class GaudiTurnEventSchema(_Strict):
    type = _event("turn")
    seat = _seat()
    turn = fields.Integer(strict=True, required=True)


class GaudiMatchOverEventSchema(GaudiOutcomeSchema):
    type = _event("match_over")


EVENT_SCHEMAS: dict[str, type[Schema]] = {
    "tile_placed": GaudiTilePlacedEventSchema,
    "animal_completed": GaudiAnimalCompletedEventSchema,
    "refill": GaudiRefillEventSchema,
    "drew": GaudiDrewEventSchema,
    "exchange": GaudiExchangeEventSchema,
    "exchanged": GaudiExchangedEventSchema,
    "pass": GaudiPassEventSchema,
    "end_turn": GaudiEndTurnEventSchema,
    "turn": GaudiTurnEventSchema,
    "match_over": GaudiMatchOverEventSchema,
}
