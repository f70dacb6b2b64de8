"""Following several matches over one stream: ``/v1/stream-tickets`` and
``/v1/stream``; and what every stream route shares: the ticket's answer,
a stream opened with a ticket, the Server-Sent Events response
(``service/live/tickets.py`` keeps the tickets themselves)."""

from __future__ import annotations

from functools import partial
from typing import Any

import orjson
from flask import Response, current_app, request
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from engines import GAMES
from service.domain.matches import status_of
from service.domain.problems import Problem
from service.http.arguments import Blueprint
from service.http.credentials import as_identity, check_still_valid, revocation
from service.live.followers import Watch, parse_cursors
from service.live.tickets import MAX_MATCHES, check_holder, follows_of, redeem
from service.live.wsgi import ANSWER
from service.store.tickets import issue, keep_floor, release


class FollowSchema(Schema):
    game = fields.String(required=True, metadata={"example": "dekal"})
    match = fields.String(required=True, metadata={"description": "the match's id"})
    token = fields.String(
        metadata={
            "description": "a seat's token, or a player's, to follow as that seat (else as "
            "a spectator)"
        }
    )


class TicketRequestSchema(Schema):
    matches = fields.List(
        fields.Nested(FollowSchema),
        required=True,
        validate=validate.Length(min=1, max=MAX_MATCHES),
        metadata={"description": f"the matches to follow (1 to {MAX_MATCHES})"},
    )


class TicketSchema(Schema):
    ticket = fields.String(required=True, metadata={"description": "pass it as ?ticket="})
    expires_in = fields.Integer(
        required=True, metadata={"description": "seconds left to open the stream with it"}
    )
    stream = fields.String(required=True, metadata={"description": "the stream's URL path"})


class TicketQuerySchema(Schema):
    ticket = fields.String(required=True, validate=validate.Length(min=1, max=200))


def ticket_answer(ticket: str, path: str) -> Response:
    ttl = current_app.extensions["ludotheque.live"].settings.ticket_ttl
    body = {"ticket": ticket, "expires_in": ttl, "stream": f"{path}?ticket={ticket}"}
    return Response(orjson.dumps(body), status=201, mimetype="application/json")


def streams_blueprint(sse_response: dict[str, Any], problems: Any) -> Blueprint:
    """``POST /v1/stream-tickets`` and ``GET /v1/stream``: one stream, many matches."""
    blp = Blueprint("live", __name__, url_prefix="/v1", description="Follow several matches")

    @blp.route("/stream-tickets")
    class Tickets(MethodView):
        @blp.arguments(TicketRequestSchema)
        @blp.response(201, TicketSchema)
        @blp.doc(operationId="create_stream_ticket", **problems(400, 401, 403, 404, 413, 422, 503))
        def post(self, body: dict[str, Any]) -> Response:
            """A ticket for one stream that follows several matches, each as
            the seat its token holds (or as a spectator without a token).
            Tokens travel in this body, never in a URL."""
            live = current_app.extensions["ludotheque.live"]
            credentials = []
            for item in body["matches"]:  # a player token follows as its player's seat
                if item.get("token"):
                    item["token"], digest = as_identity(item["token"])
                    credentials.append(digest)
                else:
                    credentials.append(None)
            follows = follows_of(live, body["matches"])
            for follow, digest in zip(follows, credentials, strict=True):
                follow["credential"] = digest
            ticket = issue(live.store.client, follows, live.settings.ticket_ttl)
            return ticket_answer(ticket, "/v1/stream")

    @blp.route("/stream")
    class MultiStream(MethodView):
        @blp.arguments(TicketQuerySchema, location="query", as_kwargs=True)
        @blp.doc(
            operationId="stream_matches",
            parameters=[
                {
                    "in": "header",
                    "name": "Last-Event-ID",
                    "schema": {"type": "string"},
                    "description": "resume: the `id` of the last event received "
                    "(one cursor per match, in the ticket's order, joined by `.`)",
                }
            ],
            **problems(400, 401, 404, 429, 503, stream=sse_response),
        )
        @blp.alt_response(204, description="Every match followed is over and fully sent")
        def get(self, ticket: str) -> Response:
            """Follow every match of a ticket over one stream: each event's
            data carries its `match` and `game`; the stream ends when every
            match is over, or when a seat it follows as changes hands (the
            ticket is then refused). A reconnection resumes no earlier than
            what the ticket's stream has sent."""
            live = current_app.extensions["ludotheque.live"]
            resume = request.headers.get("Last-Event-ID")
            lease = live.settings.bounds.stream_max_s + 30
            client = live.store.client
            follows, holder, floor = redeem(client, ticket, resume is not None, lease)
            done = partial(release, client, ticket, holder)
            try:
                cursors = parse_cursors(resume, len(follows)) or [0] * len(follows)
                watches, finished = [], []
                for item, cursor, least in zip(follows, cursors, floor, strict=True):
                    game = GAMES[item["game"]]
                    loaded = live.matches.load(game, item["match"])
                    check_holder(item, loaded.match["seats"])
                    watch = ticket_watch(game, item, max(cursor, least))
                    watch.tagged, watch.since = True, loaded.version
                    watches.append(watch)
                    finished.append(status_of(game, loaded.match) == "finished")
                holders = [item["token"] for item in follows if item["token"]]
                kept = partial(keep_floor, client, ticket)
                opened = live.stream(watches, finished, address(), holders, answer(), done, kept)
            except BaseException:
                done()
                raise
            return stream_response(opened, done)

    return blp


def ticket_stream(game: Any, match_id: str, ticket: str, after: int, resuming: bool) -> Response:
    """``GET .../matches/{id}/stream?ticket=``: this one match, as the
    ticket's seat, events untagged (as with a token)."""
    live = current_app.extensions["ludotheque.live"]
    client = live.store.client
    lease = live.settings.bounds.stream_max_s + 30
    follows, holder, floor = redeem(client, ticket, resuming, lease)
    done = partial(release, client, ticket, holder)
    try:
        if [(f["game"], f["match"]) for f in follows] != [(game.name, match_id)]:
            raise Problem(403, "invalid_ticket", "this ticket follows other matches")
        loaded = live.matches.load(game, match_id)
        check_holder(follows[0], loaded.match["seats"])
        watch = ticket_watch(game, follows[0], max(after, floor[0]))
        watch.since = loaded.version
        finished = status_of(game, loaded.match) == "finished"
        holders = [f["token"] for f in follows if f["token"]]
        kept = partial(keep_floor, client, ticket)
        opened = live.stream([watch], [finished], address(), holders, answer(), done, kept)
    except BaseException:
        done()
        raise
    return stream_response(opened, done)


def ticket_watch(game: Any, follow: dict[str, Any], cursor: int) -> Watch:
    """The watch a ticket's ``follow`` opens: 401 when the player token it
    was taken with has ended since (the follower ends if it ends later)."""
    digest = follow.get("credential")
    if digest:
        check_still_valid(digest)
    return Watch(
        game,
        follow["match"],
        follow["seat"],
        cursor,
        revoked=revocation(digest) if digest else None,
    )


def address() -> str:
    return request.remote_addr or "unknown"


def answer() -> Any:
    """The answer this request writes to, where the push hub may write to it
    too (``service/server/wire.py``); None elsewhere."""
    return request.environ.get(ANSWER)


def stream_response(opened: Any, on_close: Any = None) -> Response:
    """The stream's answer: 204 when there is nothing left to follow (then
    ``on_close`` runs now; else the stream runs it, see ``open_stream``)."""
    if opened is None:
        if on_close is not None:
            on_close()
        return Response(status=204)
    events, release_stream = opened
    response = Response(
        events,
        mimetype="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
    response.call_on_close(release_stream)  # a stream closed before it began
    return response
