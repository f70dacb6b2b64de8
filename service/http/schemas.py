"""The generic parts of API v1; each game adds its options, actions and view."""

from __future__ import annotations

import unicodedata

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from service.domain.replays import PAGE_DEFAULT, PAGE_LIMIT
from service.http import calls_schemas

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


def no_newline(text: str) -> None:
    """What a pattern's ``$`` lets through at the end: a newline."""
    if text.endswith("\n"):
        raise ValidationError("no newline")


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


PLAYER_ID = fields.String(
    validate=[validate.Regexp(r"^([0-9a-f]{32}|me)$"), no_newline],
    metadata={
        "description": "a player holds this seat: `me` with a player token (your player), "
        "or, with an app key, the id of one of the app's players. No seat token is "
        "given: the player's own tokens act for it"
    },
)


class PlayerSchema(Schema):
    """A seat at creation: ``{"name": ..}`` takes it now (and gets a token),
    ``{"player": "me"}`` gives it to your player, ``{"bot": "mcts"}`` to a
    bot, ``{}`` leaves it open."""

    name = fields.String(validate=valid_name, metadata={"example": "Ada"})
    player = PLAYER_ID
    bot = BOT
    bot_url = calls_schemas.BOT_URL

    @validates_schema
    def one_of_name_or_bot(self, data: dict, **kwargs: object) -> None:
        if len(data.keys() & {"name", "player", "bot", "bot_url"}) > 1:
            raise ValidationError("a seat takes a name, a player, a bot or a bot_url, one at most")


class CreateMatchSchema(Schema):
    players = fields.List(
        fields.Nested(PlayerSchema), required=True, validate=validate.Length(min=1, max=16)
    )
    seed = fields.Integer(
        strict=True,
        validate=validate.Range(min=0, max=MAX_SEED, max_inclusive=True),
        metadata={
            "description": "fixes the shuffles, for practice only: allowed only when every "
            "seat is named now or a bot (else 422 seed_not_allowed), and the match then says "
            '"seeded": true everywhere. Absent: the server draws the seed '
            "(see docs/clients/fairness.md)"
        },
    )
    listed = fields.Boolean(
        load_default=False,
        metadata={
            "description": "show the match in the lobby (GET .../matches) while it has open seats"
        },
    )
    webhook = calls_schemas.WEBHOOK
    bot_deadline_s = calls_schemas.BOT_DEADLINE


class JoinSchema(Schema):
    """Take an open seat: ``{"name": ..}`` for a person, ``{"bot": ..}`` for
    a bot; with a player token, ``{}`` for your player."""

    name = fields.String(validate=valid_name, metadata={"example": "Grace"})
    bot = BOT

    @validates_schema
    def at_most_one_of_name_or_bot(self, data: dict, **kwargs: object) -> None:
        if "name" in data and "bot" in data:
            raise ValidationError("give one of name or bot (or neither, with a player token)")


class SeatSchema(Schema):
    seat = fields.Integer(required=True)
    name = fields.String(allow_none=True, required=True)
    bot = fields.String(allow_none=True, required=True, metadata={"description": "its bot"})
    open = fields.Boolean(required=True, metadata={"description": "nobody holds this seat yet"})
    token = fields.String(
        metadata={"description": "the seat's bearer token: only in the answer that gives the seat"}
    )
    reserved = fields.Boolean(
        metadata={"description": "a rematch seat kept for its holder (present only when true)"}
    )
    player = fields.String(
        metadata={
            "description": "the player holding this seat (its public profile: "
            "GET /v1/players/{id}); absent for a seat token's holder or a server bot"
        }
    )
    bot_account = fields.Boolean(
        metadata={"description": "the player is a bot account (present only when true)"}
    )


SEEDED = fields.Boolean(
    allow_none=True,
    required=True,
    metadata={
        "description": "true when the creator chose the seed (practice, not a fair deal); "
        "null for a match stored before commitments existed"
    },
)
SEED_COMMITMENT = fields.String(
    allow_none=True,
    required=True,
    metadata={
        "description": "SHA-256 (hex) over the seed (8 bytes, big-endian) then the salt "
        "(32 bytes), fixed at creation; the outcome reveals both (docs/clients/fairness.md). "
        "Null for a match stored before commitments existed"
    },
)


class RevealedSchema(Schema):
    """What an outcome adds to the game's own: the match's randomness, revealed."""

    seeded = SEEDED
    seed = fields.Integer(required=True, metadata={"description": "the match's seed"})
    salt = fields.String(
        allow_none=True,
        required=True,
        metadata={"description": "the salt (64 hex digits) of the seed commitment"},
    )


class RecordSeatSchema(Schema):
    seat = fields.Integer(required=True)
    name = fields.String(allow_none=True, required=True)
    bot = fields.String(allow_none=True, required=True)


class RecordEndingSchema(Schema):
    """A seat's resignation or abort, after that many of the record's actions."""

    type = fields.String(required=True, validate=validate.OneOf(["resigned", "aborted"]))
    seat = fields.Integer(required=True)
    after = fields.Integer(
        required=True, metadata={"description": "how many of the record's actions came before"}
    )


class RecordSignatureSchema(Schema):
    """The server's signature of the record (docs/clients/fairness.md)."""

    algorithm = fields.String(required=True, validate=validate.OneOf(["Ed25519"]))
    key_id = fields.String(
        required=True,
        metadata={"description": "the signing key's id, as GET /v1/record-key names it"},
    )
    value = fields.String(
        required=True,
        metadata={
            "description": "the 64-byte Ed25519 signature, in 128 lowercase hex digits, of the "
            "record less `signature` as canonical JSON (keys sorted, no spaces, UTF-8)"
        },
    )


class RecordKeySchema(Schema):
    """The public half of the key that signs every record."""

    algorithm = fields.String(required=True, validate=validate.OneOf(["Ed25519"]))
    key_id = fields.String(
        required=True,
        metadata={"description": "the first 16 hex digits of the SHA-256 of the public key"},
    )
    public_key = fields.String(
        required=True,
        metadata={"description": "the 32-byte Ed25519 public key, in 64 lowercase hex digits"},
    )


class RecordSchema(Schema):
    """A finished match's whole record, signed by the server; each game sets
    ``options``, ``actions``, ``outcome`` and ``final_view``."""

    format = fields.String(
        required=True, metadata={"description": "ludotheque-record/1: the shape of this record"}
    )
    id = fields.String(required=True)
    game = fields.String(required=True)
    seats = fields.List(fields.Nested(RecordSeatSchema), required=True)
    seeded = SEEDED
    seed = fields.Integer(required=True, metadata={"description": "the seed the match used"})
    salt = fields.String(allow_none=True, required=True)
    seed_commitment = SEED_COMMITMENT
    endings = fields.List(
        fields.Nested(RecordEndingSchema),
        required=True,
        metadata={"description": "resignations and an abort, in order (docs/clients/lobby.md)"},
    )
    signature = fields.Nested(RecordSignatureSchema, required=True)


class ReplayQuerySchema(Schema):
    start = fields.Integer(
        data_key="from",
        load_default=0,
        validate=validate.Range(min=0, max=MAX_INDEX),
        metadata={"description": "the first step of the page (0: the start); a page's `next`"},
    )
    limit = fields.Integer(
        load_default=PAGE_DEFAULT,
        validate=validate.Range(min=1, max=PAGE_LIMIT),
        metadata={"description": "how many steps, at most"},
    )


class ReplaySchema(Schema):
    """A page of a finished match step by step, from its record; each game
    sets ``steps``, ``hands`` and ``outcome``."""

    id = fields.String(required=True)
    game = fields.String(required=True)
    seats = fields.List(fields.Nested(RecordSeatSchema), required=True)
    seeded = SEEDED
    endings = fields.List(
        fields.Nested(RecordEndingSchema),
        required=True,
        metadata={"description": "resignations and an abort, each after that many actions"},
    )
    steps_total = fields.Integer(
        required=True,
        metadata={"description": "how many steps the whole replay has: its actions, plus 1"},
    )
    start = fields.Integer(
        data_key="from",
        required=True,
        metadata={"description": "the index of this page's first step"},
    )
    next = fields.Integer(
        allow_none=True,
        required=True,
        metadata={"description": "pass it as ?from= for the next page; null on the last page"},
    )


class MatchSchema(Schema):
    """A match as one caller may see it; each game sets ``options``, ``view``, ``outcome``."""

    id = fields.String(required=True)
    game = fields.String(required=True)
    status = fields.String(
        required=True, validate=validate.OneOf(["waiting", "active", "finished"])
    )
    version = fields.Integer(required=True, metadata={"description": "named by the ETag"})
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
    seeded = SEEDED
    seed_commitment = SEED_COMMITMENT
    listed = fields.Boolean(required=True, metadata={"description": "shown in the lobby"})
    rated = fields.Boolean(
        required=True,
        metadata={
            "description": "made by the ranked queue: its players' ratings change when it ends"
        },
    )
    rematch = fields.Nested(
        "RematchOfferSchema",
        allow_none=True,
        required=True,
        metadata={"description": "the rematch on offer, once a seat has asked for one"},
    )
    webhook = calls_schemas.WEBHOOK_STATE
    secret = calls_schemas.SECRET


class JoinedSchema(Schema):
    seat = fields.Integer(required=True)
    name = fields.String(allow_none=True, required=True)
    bot = fields.String(allow_none=True, required=True)
    token = fields.String(
        metadata={"description": "a person's seat token: keep it, it is shown once"}
    )
    player = fields.String(
        metadata={"description": "your player, who holds the seat with its own tokens"}
    )


class ActionQuerySchema(Schema):
    legal_actions = fields.Boolean(
        load_default=False,
        metadata={
            "description": "true: the answer also carries the caller's legal actions "
            "(`legal_actions`), so that a turn costs one read and one write"
        },
    )


class MatchQuerySchema(ActionQuerySchema):
    wait = fields.Float(
        load_default=0,
        validate=validate.Range(min=0, max=30),
        metadata={
            "description": "with a seat's token: answer as soon as the seat is to act or "
            "the match is over, waiting at most this many seconds (at most 30)"
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


# -- lobby and match lifecycle (docs/clients/lobby.md) ------------------------------------
class LobbyQuerySchema(Schema):
    players = fields.Integer(
        validate=validate.Range(min=1, max=16),
        metadata={"description": "only matches with exactly this many seats"},
    )
    open_seats = fields.Integer(
        load_default=1,
        validate=validate.Range(min=1, max=16),
        metadata={"description": "only matches with at least this many open seats"},
    )
    cursor = fields.String(
        validate=validate.Regexp(r"^[0-9]{13}:[0-9a-f]{32}$"),
        metadata={"description": "the `next` of the previous page"},
    )
    limit = fields.Integer(load_default=20, validate=validate.Range(min=1, max=50))


class LobbyMatchSchema(Schema):
    id = fields.String(required=True)
    players = fields.Integer(required=True, metadata={"description": "number of seats"})
    open_seats = fields.List(
        fields.Integer(), required=True, metadata={"description": "the seats one may join"}
    )
    options = fields.Dict(required=True)
    created_at = fields.Float(required=True, metadata={"description": "Unix time, seconds"})
    seats = fields.List(fields.Nested(SeatSchema), required=True)


class LobbySchema(Schema):
    matches = fields.List(
        fields.Nested(LobbyMatchSchema), required=True, metadata={"description": "newest first"}
    )
    next = fields.String(
        allow_none=True,
        required=True,
        metadata={
            "description": "pass it as ?cursor= for the next page; null at the end (a page may "
            "be short while next is not null, when filters skipped many matches)"
        },
    )


class RematchOfferSchema(Schema):
    id = fields.String(required=True, metadata={"description": "the new match's id"})
    offered_by = fields.Integer(required=True, metadata={"description": "the seat that asked"})


class RematchSchema(Schema):
    """Your seat in the rematch: keep the token, it is shown once."""

    id = fields.String(required=True, metadata={"description": "the new match's id"})
    game = fields.String(required=True)
    seat = fields.Integer(required=True, metadata={"description": "your seat in the new match"})
    name = fields.String(allow_none=True, required=True)
    token = fields.String(
        metadata={"description": "your new seat's token (absent when your player holds it)"}
    )
    player = fields.String(metadata={"description": "your player, who holds the new seat"})
    status = fields.String(
        required=True,
        validate=validate.OneOf(["waiting", "active"]),
        metadata={"description": "active once every seat has accepted"},
    )


RANKING = fields.List(
    fields.List(fields.Integer()),
    metadata={"description": "seats best first, tied seats together; resigned seats last"},
)
RESIGNED = fields.List(fields.Integer(), metadata={"description": "seats that resigned, in order"})


class EndedEarlyOutcomeSchema(RevealedSchema):
    """The outcome of a match that ended by resignation (one seat or none
    left in) or by an abort (no winner); it has no game scores."""

    winners = fields.List(fields.Integer(), required=True)
    ranking = fields.List(fields.List(fields.Integer()), required=True)
    resigned = fields.List(fields.Integer(), required=True)
    ended_by = fields.String(required=True, validate=validate.OneOf(["resignation", "abort"]))
    by = fields.Integer(
        required=True, metadata={"description": "the seat that resigned or aborted"}
    )


class SeatLeftEventSchema(Schema):
    """A seat's holder gave it back before the start: it is open again (a
    rematch seat: reserved for its player again)."""

    seat = fields.Integer(required=True)
    player = fields.String(
        metadata={"description": "the player who held the seat, when a player did"}
    )


class SeatRenamedEventSchema(Schema):
    """The player holding the seat (or for whom it is reserved) left for
    good: its name is now ``name`` ("deleted player"). Earlier events keep
    the name they had."""

    seat = fields.Integer(required=True)
    name = fields.String(required=True)


class ResignedEventSchema(Schema):
    """A seat resigned; ``bot`` plays it from now on when the match goes on."""

    seat = fields.Integer(required=True)
    bot = fields.String(metadata={"description": "absent when the resignation ended the match"})


class AbortedEventSchema(Schema):
    """A seat called the match off before anyone but bots acted."""

    seat = fields.Integer(required=True)


class RematchOfferedEventSchema(Schema):
    """A seat asked for a rematch: ``match`` is the new match's id."""

    seat = fields.Integer(required=True)
    match = fields.String(required=True)


LIFECYCLE_EVENTS = {
    "seat_left": SeatLeftEventSchema,
    "seat_renamed": SeatRenamedEventSchema,
    "resigned": ResignedEventSchema,
    "aborted": AbortedEventSchema,
    "rematch_offered": RematchOfferedEventSchema,
}
