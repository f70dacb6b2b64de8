"""The generic parts of API v1; each game adds its options, actions and view."""

from __future__ import annotations

import unicodedata

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

# Unicode categories a name may not hold: controls (C0 and C1), format
# characters (bidi overrides, invisible marks; the joiner of emoji sequences
# excepted), surrogates, private use, unassigned, line and paragraph breaks.
FORBIDDEN_IN_NAMES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
ZERO_WIDTH_JOINER = "\u200d"


def printable_name(name: str) -> bool:
    """1 to 40 characters, something visible, no blank at either end, and
    nothing that could hide or disguise the name where it is shown."""
    return (
        1 <= len(name) <= 40
        and name == name.strip()
        and all(
            ch == ZERO_WIDTH_JOINER or unicodedata.category(ch) not in FORBIDDEN_IN_NAMES
            for ch in name
        )
        and any(unicodedata.category(ch)[0] in "LNPS" for ch in name)
    )


def valid_name(name: str) -> None:
    if not printable_name(name):
        raise ValidationError(
            "names are 1 to 40 printable characters, without controls, invisible or "
            "direction-changing characters, and without blanks at either end"
        )


MAX_SEED = 2**63 - 1
MAX_INDEX = 2**53  # event indexes: far beyond any match, well within Redis stream ids
TURN_TIMEOUT = fields.Integer(
    strict=True,
    allow_none=True,
    load_default=None,
    validate=validate.Range(min=1, max=7 * 24 * 3600),
    metadata={
        "description": "seconds a seat has to act before the server plays a random "
        "legal move for it (all games); absent or null: no clock"
    },
)


BOT = fields.String(
    validate=validate.OneOf(["random", "greedy", "mcts"]),
    metadata={
        "description": "a server-side bot plays this seat (see GET /v1/games for the "
        "bots each game offers)"
    },
)


class PlayerSchema(Schema):
    """A seat at creation: ``{"name": ..}`` takes it now (and gets a token),
    ``{"bot": "mcts"}`` gives it to a bot, ``{}`` leaves it open."""

    name = fields.String(validate=valid_name, metadata={"example": "Ada"})
    bot = BOT

    @validates_schema
    def one_of_name_or_bot(self, data: dict, **kwargs: object) -> None:
        if "name" in data and "bot" in data:
            raise ValidationError("a seat takes a name or a bot, not both")


class CreateMatchSchema(Schema):
    players = fields.List(
        fields.Nested(PlayerSchema), required=True, validate=validate.Length(min=1, max=16)
    )
    seed = fields.Integer(
        strict=True,
        validate=validate.Range(min=0, max=MAX_SEED, max_inclusive=True),
        metadata={"description": "fixes the shuffles (tests, replays); random when absent"},
    )


class JoinSchema(Schema):
    """Take an open seat: ``{"name": ..}`` for a person, ``{"bot": ..}`` for a bot."""

    name = fields.String(validate=valid_name, metadata={"example": "Grace"})
    bot = BOT

    @validates_schema
    def exactly_one_of_name_or_bot(self, data: dict, **kwargs: object) -> None:
        if ("name" in data) == ("bot" in data):
            raise ValidationError("give exactly one of name or bot")


class SeatSchema(Schema):
    seat = fields.Integer(required=True)
    name = fields.String(allow_none=True, required=True)
    bot = fields.String(allow_none=True, required=True, metadata={"description": "its bot"})
    open = fields.Boolean(required=True, metadata={"description": "nobody holds this seat yet"})
    token = fields.String(
        metadata={"description": "the seat's bearer token: only in the answer that gives the seat"}
    )


class MatchSchema(Schema):
    """A match as one caller may see it; each game sets ``options``, ``view``, ``outcome``."""

    id = fields.String(required=True)
    game = fields.String(required=True)
    status = fields.String(
        required=True, validate=validate.OneOf(["waiting", "active", "finished"])
    )
    version = fields.Integer(required=True, metadata={"description": "also the ETag"})
    seats = fields.List(fields.Nested(SeatSchema), required=True)
    to_act = fields.List(fields.Integer(), required=True, metadata={"description": "seats to act"})
    deadlines = fields.List(
        fields.Float(allow_none=True),
        required=True,
        metadata={
            "description": "per seat, when its turn clock runs out (Unix time, seconds) "
            "if the match has a turn_timeout_s and the seat is to act; else null"
        },
    )
    your_seat = fields.Integer(allow_none=True, required=True)


class JoinedSchema(Schema):
    seat = fields.Integer(required=True)
    name = fields.String(allow_none=True, required=True)
    bot = fields.String(allow_none=True, required=True)
    token = fields.String(
        metadata={"description": "a person's seat token: keep it, it is shown once"}
    )


class EventSchema(Schema):
    index = fields.Integer(required=True, metadata={"description": "1, 2, ... in log order"})
    version = fields.Integer(required=True, metadata={"description": "match version it led to"})
    type = fields.String(required=True)

    class Meta:
        unknown = "include"


class EventsSchema(Schema):
    events = fields.List(fields.Nested(EventSchema), required=True)
    next = fields.Integer(
        required=True,
        metadata={
            "description": "pass it as ?after= to continue (events hidden from you "
            "are skipped, so it may exceed the last index shown)"
        },
    )


class EventsQuerySchema(Schema):
    after = fields.Integer(load_default=0, validate=validate.Range(min=0, max=MAX_INDEX))
    limit = fields.Integer(load_default=500, validate=validate.Range(min=1, max=1000))
    wait = fields.Float(
        load_default=0,
        validate=validate.Range(min=0, max=30),
        metadata={
            "description": "long-poll: wait up to this many seconds (at most 30) for "
            "an event you may see; answers as soon as one exists"
        },
    )


class StreamQuerySchema(Schema):
    after = fields.Integer(
        load_default=0,
        validate=validate.Range(min=0, max=MAX_INDEX),
        metadata={"description": "start after this event index (Last-Event-ID wins)"},
    )
    ticket = fields.String(
        validate=validate.Length(min=1, max=200),
        metadata={
            "description": "a stream ticket (POST .../stream-tickets): follow as its seat; "
            "for a browser's EventSource, which cannot send Authorization"
        },
    )


class GameSchema(Schema):
    name = fields.String(required=True)
    title = fields.String(required=True)
    min_players = fields.Integer(required=True)
    max_players = fields.Integer(required=True)
    options = fields.Dict(required=True, metadata={"description": "JSON Schema of the options"})
    actions = fields.List(fields.String(), required=True, metadata={"description": "action types"})
    bots = fields.List(fields.String(), required=True, metadata={"description": "bot policies"})


class GamesSchema(Schema):
    games = fields.List(fields.Nested(GameSchema), required=True)
