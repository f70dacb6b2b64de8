"""The contract's parts for calls Ludothèque makes: webhooks and HTTP bots."""

from __future__ import annotations

import re

from marshmallow import Schema, ValidationError, fields, validate

from service.background import httpbots, outbound

EVENT_TYPE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")


def outbound_url(url: str) -> None:
    try:
        outbound.check_url(url)
    except outbound.Refused as refused:
        raise ValidationError(str(refused)) from None


def event_type(kind: str) -> None:
    if not EVENT_TYPE.match(kind):
        raise ValidationError("an event type of the log, your_turn or all")


URL = fields.String(
    required=True,
    validate=outbound_url,
    metadata={
        "description": "https only (internal addresses are refused when called, see "
        "docs/clients/webhooks.md)",
        "example": "https://example.com/ludotheque",
    },
)


class WebhookSchema(Schema):
    url = URL
    events = fields.List(
        fields.String(validate=event_type),
        load_default=lambda: ["all"],
        validate=validate.Length(min=1, max=32),
        metadata={
            "description": "the log's event types to deliver (as a spectator sees them), "
            '"your_turn" for a notice with the seat number when a person\'s seat comes to '
            'act, or "all" (the default) for every one'
        },
    )


class WebhookStateSchema(Schema):
    events = fields.List(fields.String(), required=True)
    given_up = fields.Boolean(
        required=True,
        metadata={"description": "the receiver failed too long and is no longer called"},
    )


WEBHOOK = fields.Nested(
    WebhookSchema,
    metadata={
        "description": "call this URL with the match's events, signed with the match's "
        "secret (docs/clients/webhooks.md)"
    },
)


class StrictFloat(fields.Float):
    """A JSON number, never a string holding one."""

    def _deserialize(self, value, attr, data, **kwargs):  # type: ignore[no-untyped-def]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValidationError("a number")
        return super()._deserialize(value, attr, data, **kwargs)


BOT_DEADLINE = StrictFloat(
    validate=validate.Range(min=httpbots.MIN_DEADLINE_S, max=httpbots.MAX_DEADLINE_S),
    metadata={
        "description": f"seconds a bot_url seat has to answer (default "
        f"{httpbots.DEFAULT_DEADLINE_S:g})"
    },
)
BOT_URL = fields.String(
    validate=outbound_url,
    metadata={
        "description": "an HTTP bot plays this seat: its server is called with the view and "
        "the legal actions (docs/clients/webhooks.md)",
        "example": "https://bots.example.com/dekal",
    },
)
WEBHOOK_STATE = fields.Nested(
    WebhookStateSchema,
    allow_none=True,
    required=True,
    metadata={"description": "the match's webhook (null: none)"},
)
SECRET = fields.String(
    metadata={
        "description": "the match's signing secret (whsec_...), only in the creation answer "
        "of a match with a webhook or a bot_url seat: keep it, it is shown once"
    }
)


class BotTimeoutEventSchema(Schema):
    """An HTTP bot gave no usable answer in time (late, unreachable, refused,
    closed, a non-2xx): the server plays a random legal move for its seat."""

    seat = fields.Integer(required=True)
    reason = fields.String(
        required=True,
        validate=validate.OneOf([outbound.PUBLIC_REASON]),
        metadata={
            "description": "always call_failed: why the call failed is in the server's log, "
            "not in the match"
        },
    )


class BotIllegalActionEventSchema(Schema):
    """An HTTP bot answered something that is not one of its legal actions:
    the server plays a random legal move for its seat."""

    seat = fields.Integer(required=True)
    reason = fields.String(required=True, metadata={"description": "illegal, not_json_action"})


class WebhookGivenUpEventSchema(Schema):
    """The match's webhook failed too long: it is no longer called."""

    reason = fields.String(
        required=True,
        validate=validate.OneOf([outbound.PUBLIC_REASON]),
        metadata={
            "description": "always call_failed: why its deliveries failed is in the server's "
            "log, not in the match"
        },
    )


# The events of calls out, in the log of any game's match (docs/clients/webhooks.md).
CALL_EVENTS: dict[str, type[Schema]] = {
    "bot_timeout": BotTimeoutEventSchema,
    "bot_illegal_action": BotIllegalActionEventSchema,
    "webhook_given_up": WebhookGivenUpEventSchema,
}
