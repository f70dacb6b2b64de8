"""A player's own events: ``GET /v1/players/me/events`` (its tickets
matched or expired, its ratings changed), oldest first, by cursor, with a
long poll woken by the push hub as a ticket's is (``service.http.queue.woken``).
The events: ``service.store.player_events``; for client builders:
docs/clients/players.md. Who may call it, what it reveals and costs:
docs/operators/security.md."""

from __future__ import annotations

from flask import Response, current_app
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from service.http.answers import json_response, problems
from service.http.arguments import Blueprint
from service.http.credentials import required_credential
from service.http.players import PLAYER_TOKEN, PRIVATE_ANSWER
from service.http.queue import woken
from service.store.player_events import KEPT, PlayerEvents, wake_id

MAX_INDEX = 2**53 - 1  # an index is a JSON number any client reads exactly


def player_events() -> PlayerEvents:
    return current_app.extensions["ludotheque.player_events"]


class PlayerEventsQuerySchema(Schema):
    after = fields.Integer(
        load_default=0,
        validate=validate.Range(min=0, max=MAX_INDEX),
        metadata={"description": "the last index you have seen (0: from the oldest kept)"},
    )
    wait = fields.Float(
        load_default=0,
        validate=validate.Range(min=0, max=30),
        metadata={
            "description": "long poll: answer as soon as an event is newer than `after`, "
            "waiting at most this many seconds (at most 30)"
        },
    )


class PlayerEventsSchema(Schema):
    events = fields.List(
        fields.Dict(),
        required=True,
        metadata={
            "description": "oldest first, each with its `index` and `type`: `ticket_matched` "
            "{ticket, game, preset, match: {id, seat}}, `ticket_expired` {ticket, game, "
            "preset}, `rated` {game, match, before, after}"
        },
    )
    next = fields.Integer(required=True, metadata={"description": "pass it as `after` to read on"})


def player_events_blueprint() -> Blueprint:
    blp = Blueprint(
        "player_events",
        __name__,
        url_prefix="/v1",
        description="A player's own events: its tickets matched or expired, its ratings",
    )

    @blp.route("/players/me/events")
    class MyEvents(MethodView):
        @blp.arguments(PlayerEventsQuerySchema(), location="query", as_kwargs=True)
        @blp.response(200, PlayerEventsSchema)
        @blp.doc(
            operationId="get_my_events",
            security=PLAYER_TOKEN,
            **problems(401, 403, 429, 503),
        )
        def get(self, after: int, wait: float) -> Response:
            """Your events after index `after`, oldest first (the last
            ~100 are kept, for a week); with `wait`, a long poll that
            answers as soon as there is one."""
            player = required_credential("player").id
            found = player_events().after(player, after, KEPT)
            if not found and wait > 0:
                found = woken(
                    wake_id(player), wait, lambda: player_events().after(player, after), bool
                )
            last = found[-1]["index"] if found else after
            return json_response({"events": found, "next": last}, 200, PRIVATE_ANSWER)

    return blp
