"""Following a match: ``/v1/games/G/matches/{id}/events`` (the log, or a
long poll), ``.../stream`` (Server-Sent Events) and ``.../stream-tickets``."""

from __future__ import annotations

from flask import Response
from flask.views import MethodView

from service.domain import tokens as auth
from service.http.answers import (
    OPTIONAL_SEAT_TOKEN,
    following,
    header_number,
    json_response,
    problems,
    sse_response,
)
from service.http.arguments import Blueprint
from service.http.bearer import bearer_token
from service.http.caching import VIEWER_HEADERS
from service.http.contract import header_parameters
from service.http.credentials import check_still_valid, credential, revocation
from service.http.game_schemas import GameContract
from service.http.schemas import EventsQuerySchema, StreamQuerySchema
from service.http.streams import (
    TicketSchema,
    address,
    answer,
    stream_response,
    ticket_answer,
    ticket_stream,
)
from service.live.tickets import follows_of
from service.store.tickets import issue


def add_routes(blp: Blueprint, contract: GameContract) -> None:
    game = contract.game
    name = game.name

    @blp.route("/matches/<match_id>/events")
    class Events(MethodView):
        @blp.arguments(EventsQuerySchema(), location="query", as_kwargs=True)
        @blp.response(200, contract.ref["events"], headers=VIEWER_HEADERS)
        @blp.doc(
            operationId=f"{name}_events",
            security=OPTIONAL_SEAT_TOKEN,
            **header_parameters(
                {
                    "in": "header",
                    "name": "Last-Event-ID",
                    "schema": {"type": "string"},
                    "description": "the cursor, instead of `after` (which it overrides): a "
                    "page's long polls then keep one URL and one cached CORS preflight",
                }
            ),
            **problems(400, 401, 403, 404, 429, 503),
        )
        def get(self, match_id: str, after: int, limit: int, wait: float) -> Response:
            """The event log from `after` on, redacted for the caller; with
            `wait`, a long poll that answers as soon as an event exists.
            `Last-Event-ID: N` may stand for `after=N`, so that a page's
            long polls keep one URL (and one cached CORS preflight)."""
            token = bearer_token()
            cursor = header_number("Last-Event-ID")
            after = after if cursor is None else cursor
            body = following().events(
                game, match_id, token, after, limit, wait, address(), revocation()
            )
            if wait:
                check_still_valid()  # a player token revoked while it waited
            return json_response(body)

    @blp.route("/matches/<match_id>/stream")
    class Stream(MethodView):
        @blp.arguments(StreamQuerySchema(), location="query", as_kwargs=True)
        @blp.doc(
            operationId=f"{name}_stream",
            security=OPTIONAL_SEAT_TOKEN,
            **header_parameters(
                {
                    "in": "header",
                    "name": "Last-Event-ID",
                    "schema": {"type": "string"},
                    "description": "resume after this event index",
                }
            ),
            **problems(400, 401, 403, 404, 429, 503, stream=sse_response(contract.names["event"])),
        )
        @blp.alt_response(204, description="The match is over and every event was sent")
        def get(self, match_id: str, after: int, ticket: str | None = None) -> Response:
            """Follow the match live, as Server-Sent Events: as the seat of
            the bearer token, or of a stream ticket (`?ticket=`, for a
            browser's EventSource), else as a spectator. A reconnection
            after the end answers 204, which stops an EventSource. A stream
            as a seat ends when the seat changes hands (its ticket is then
            refused); a used ticket resumes no earlier than what its stream
            has sent (a lower `Last-Event-ID` or `after` is raised). A token in
            the URL (`?token=`, on any operation) is refused: 400
            `token_in_url`."""
            resume = header_number("Last-Event-ID")
            after = after if resume is None else resume
            if ticket is None:
                token = bearer_token()
                watch, finished = following().watch(game, match_id, token, after, revocation())
                holders = [auth.token_hash(token)] if token else []
                opened = following().stream([watch], [finished], address(), holders, answer())
                return stream_response(opened)
            return ticket_stream(game, match_id, ticket, after, resume is not None)

    @blp.route("/matches/<match_id>/stream-tickets")
    class StreamTickets(MethodView):
        @blp.response(201, TicketSchema)
        @blp.doc(
            operationId=f"{name}_stream_ticket",
            security=OPTIONAL_SEAT_TOKEN,
            **problems(401, 403, 404, 503),
        )
        def post(self, match_id: str) -> Response:
            """A short-lived, single-use ticket to follow this match as the
            bearer token's seat with `GET .../stream?ticket=` (an
            EventSource cannot send the token, and a token never goes in a URL)."""
            token = bearer_token()
            follows = follows_of(following(), [{"game": name, "match": match_id, "token": token}])
            found = credential()
            follows[0]["credential"] = None if found is None else found.digest
            ticket = issue(following().store.client, follows, following().settings.ticket_ttl)
            return ticket_answer(ticket, f"/v1/games/{name}/matches/{match_id}/stream")
