"""Stream tickets: how a browser's ``EventSource`` follows as a seat, and
how one stream follows several matches.

``EventSource`` cannot send an ``Authorization`` header, and a token must
never travel in a URL (logs, history, referrers keep URLs). So the holder
of a token exchanges it (in a header or a body) for a ticket: random, short
lived (``ticket_ttl``, 60 s by default, to be used), and single-use: the
first ``GET`` that presents it opens the stream; from then on it is good
only for that stream's own reconnections (``EventSource`` sends
``Last-Event-ID``), while a connection holds it and for a while after the
last one closed. A reconnection takes the ticket over from the connection
that holds it, which may be dead without the server knowing (a client that
changed networks sent no reset): refusing it would stop the EventSource for
good. Only the ticket's SHA-256 is stored, with what it follows: each
match, its game and the seat it follows as (the tokens' hashes count the
stream against their allowance).

A ticket follows as a seat only while the token it was made with holds it
(issue 31): once the seat changed hands, the ticket, used or not, is
refused, and its stream ends (``service.live.followers``). A used ticket is a bearer
credential anyone holding its URL may present, so it never replays the
past: it keeps a floor, the cursors its stream had written after its first
write and after each write of an event private to a followed seat, and a
reconnection's ``Last-Event-ID`` (or ``?after=``) below it is raised to it.
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
from functools import partial
from typing import Any

import orjson
import redis
from flask import Response, current_app, request
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from engines import GAMES
from service.domain import tokens as auth
from service.domain.access import may_follow_as
from service.domain.matches import status_of
from service.domain.problems import Problem
from service.http.arguments import Blueprint
from service.live.followers import Watch, parse_cursors
from service.server import wire

MAX_MATCHES = 32  # matches one ticket may follow

# KEYS: the ticket, its holder (the connection that holds it). ARGV: resuming
# (1/0), the connection, the holder's lease, how long a used ticket stays good
# for its reconnections. {0}: unknown or expired; {1}: used, and this is not a
# reconnection; {2, what it follows, its floor}: go, this connection holds it.
REDEEM = """
local follows = redis.call('HGET', KEYS[1], 'follows')
if not follows then
  return {0}
end
if redis.call('HGET', KEYS[1], 'used') == '1' and ARGV[1] ~= '1' then
  return {1}
end
redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])
redis.call('HSET', KEYS[1], 'used', '1')
redis.call('EXPIRE', KEYS[1], ARGV[3] + ARGV[4])
return {2, follows, redis.call('HGET', KEYS[1], 'floor') or ''}
"""

# KEYS: the ticket. ARGV: the cursors its stream has written, joined by '.'.
# Raises the ticket's floor to them, cursor by cursor (never lowers it).
FLOOR = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
local old = {}
for n in string.gmatch(redis.call('HGET', KEYS[1], 'floor') or '', '%d+') do
  old[#old + 1] = tonumber(n)
end
local new = {}
for n in string.gmatch(ARGV[1], '%d+') do
  local cursor = tonumber(n)
  local was = old[#new + 1]
  if was and was > cursor then
    cursor = was
  end
  new[#new + 1] = string.format('%d', cursor)
end
redis.call('HSET', KEYS[1], 'floor', table.concat(new, '.'))
return 1
"""

# KEYS: the ticket, its holder. ARGV: the connection that closed, how long the
# ticket stays good for its reconnections. A connection taken over leaves the
# ticket to the newer one.
RELEASE = """
if redis.call('GET', KEYS[2]) == ARGV[1] then
  redis.call('DEL', KEYS[2])
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
"""

RESUME_S = 300  # a used ticket stays good this long after its stream closed


# a 401 names the scheme to use, as every 401 of the service does
TICKET_REALM = {"WWW-Authenticate": 'Bearer realm="ludotheque"'}


def ticket_key(ticket: str) -> str:
    digest = hashlib.sha256(ticket.encode("utf-8", "surrogatepass")).hexdigest()
    return f"ludotheque:ticket:{{{digest}}}"


def issue(client: Any, follows: list[dict[str, Any]], ttl: int) -> str:
    """A new ticket for ``follows`` (game, match, seat, token hash each)."""
    ticket = secrets.token_urlsafe(32)
    key = ticket_key(ticket)
    pipe = client.pipeline(transaction=False)
    pipe.hset(key, mapping={"follows": orjson.dumps(follows), "used": "0"})
    pipe.expire(key, ttl)
    pipe.execute()
    return ticket


def redeem(
    client: Any, ticket: str, resuming: bool, lease_s: float
) -> tuple[list[dict[str, Any]], str, list[int]]:
    """What ``ticket`` follows, the connection id that now holds it (to
    ``release``), and the cursors it may not resume before (one per match
    followed); 401 when it is unknown, expired, or used and this is not a
    reconnection."""
    key = ticket_key(ticket)
    holder = secrets.token_hex(8)
    answer = client.eval(
        REDEEM, 2, key, key + ":open", int(resuming), holder, int(lease_s), RESUME_S
    )
    kind = int(answer[0])
    if kind == 0:
        raise Problem(
            401, "invalid_ticket", "this stream ticket is unknown or expired", headers=TICKET_REALM
        )
    if kind == 1:
        raise Problem(
            401,
            "invalid_ticket",
            "this stream ticket was used; take a new one",
            headers=TICKET_REALM,
        )
    follows = orjson.loads(answer[1])
    raw = answer[2].decode() if isinstance(answer[2], bytes) else answer[2]
    floor = [int(n) for n in raw.split(".")] if raw else []
    return follows, holder, floor + [0] * (len(follows) - len(floor))


def keep_floor(client: Any, ticket: str, cursors: list[int]) -> None:
    """The ticket's stream has written up to ``cursors``: its reconnections
    resume no earlier (the stream's greenlet calls this after the write)."""
    with contextlib.suppress(redis.RedisError):  # then only the older floor holds
        client.eval(FLOOR, 1, ticket_key(ticket), ".".join(str(c) for c in cursors))


def check_holder(follow: dict[str, Any], seats: list[dict[str, Any]]) -> None:
    """401 unless the ticket's token still holds the seat it follows as."""
    if not may_follow_as(seats, follow["seat"], follow["token"]):
        raise Problem(
            401,
            "invalid_ticket",
            f"seat {follow['seat']} changed hands since this ticket was taken; take a new one",
            headers=TICKET_REALM,
        )


def release(client: Any, ticket: str, holder: str) -> None:
    """The connection ``holder`` closed: its reconnection may come for
    ``RESUME_S``, unless a newer connection holds the ticket."""
    key = ticket_key(ticket)
    with contextlib.suppress(redis.RedisError):  # else the holder's lease runs out
        client.eval(RELEASE, 2, key, key + ":open", holder, RESUME_S)


def follows_of(live: Any, wanted: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Check each wanted match and token: what a ticket for them follows."""
    follows = []
    named = [(item["game"], item["match"]) for item in wanted]
    if len(set(named)) < len(named):
        # one follower per match and stream: a second would be fed nothing
        raise Problem(
            422,
            "invalid_request",
            "a ticket follows each match once; to follow two seats of one match, "
            "take a ticket for each",
        )
    for item in wanted:
        game = GAMES.get(item["game"])
        if game is None:
            raise Problem(404, "game_not_found", f"no game {item['game']!r}; see /v1/games")
        token = item.get("token")
        watch, _ = live.watch(game, item["match"], token, 0)
        follows.append(
            {
                "game": game.name,
                "match": item["match"],
                "seat": watch.seat,
                "token": auth.token_hash(token) if token else None,
            }
        )
    return follows


class FollowSchema(Schema):
    game = fields.String(required=True, metadata={"example": "dekal"})
    match = fields.String(required=True, metadata={"description": "the match's id"})
    token = fields.String(
        metadata={"description": "a seat's token, to follow as that seat (else as a spectator)"}
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
        @blp.doc(operationId="create_stream_ticket", **problems(400, 403, 404, 413, 422, 503))
        def post(self, body: dict[str, Any]) -> Response:
            """A ticket for one stream that follows several matches, each as
            the seat its token holds (or as a spectator without a token).
            Tokens travel in this body, never in a URL."""
            live = current_app.extensions["ludotheque.live"]
            follows = follows_of(live, body["matches"])
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
                    watch = Watch(game, item["match"], item["seat"], max(cursor, least))
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
        watch = Watch(game, match_id, follows[0]["seat"], max(after, floor[0]))
        watch.since = loaded.version
        finished = status_of(game, loaded.match) == "finished"
        holders = [f["token"] for f in follows if f["token"]]
        kept = partial(keep_floor, client, ticket)
        opened = live.stream([watch], [finished], address(), holders, answer(), done, kept)
    except BaseException:
        done()
        raise
    return stream_response(opened, done)


def address() -> str:
    return request.remote_addr or "unknown"


def answer() -> Any:
    """The answer this request writes to, where the push hub may write to it
    too (``service.server.wire``); None elsewhere."""
    return request.environ.get(wire.ANSWER)


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
