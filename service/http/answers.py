"""What every route answers with: JSON and problem documentation, ETags,
the numbers in headers, the token a route requires, the app's services."""

from __future__ import annotations

import re
from typing import Any

import orjson
from flask import Response, current_app, request

from engines import GAMES
from service.domain.matches import Matches
from service.domain.problems import Problem
from service.domain.records import Records
from service.domain.replays import Replays
from service.http.bearer import bearer_token
from service.http.caching import names_etag, request_header, viewer_etag
from service.http.contract import OPTIONAL_TOKEN, header_ref
from service.live.following import Following
from service.store.record_keys import RecordKeys

PROBLEM_JSON = "application/problem+json"
PROBLEMS = {
    400: "Malformed request (invalid_request)",
    401: "Token or stream ticket missing, malformed or used, or the ticket's seat changed hands "
    "(token_required, invalid_ticket); a player token or app key unknown, revoked or expired "
    "(invalid_token)",
    403: "Token holds no seat here (invalid_token); a token of another kind than the operation "
    "takes (wrong_token_kind); a bot account asked for without an app key "
    "(bot_accounts_by_apps)",
    404: "Unknown game, match, seat or player (player_not_found)",
    409: "Not now: not_your_turn, match_not_started, match_over, match_not_over, seat_taken, "
    "conflict; already_seated: a player holds one seat of a match at most",
    412: "If-Match names another version (version_mismatch)",
    413: "Body too large (payload_too_large)",
    422: "Schema-invalid body (invalid_request, invalid_options), illegal move "
    "(illegal_action, with the reason), a chosen seed where others play (seed_not_allowed), "
    "or a replay of a match too long to replay (replay_too_long)",
    429: "Over a limit, with Retry-After: too_many_requests; too many open streams and long "
    "polls (too_many_followers); on creation also too_many_matches_created, "
    "too_many_waiting_matches; bot_seats_exceeded: the creating address holds its cap of live "
    "bot seats",
    503: "The store is unavailable (store_unavailable), or this process follows all the "
    "streams it can (too_many_followers); players_unavailable: this deployment keeps no "
    "players (no database, Retry-After: 3600); archive_unavailable: the database is down",
}


def sse_response(event: str) -> dict[str, Any]:
    """The stream's 200 answer: Server-Sent Events whose data are ``event``s."""
    return {
        "description": "Server-Sent Events: each event's `id:` is its index and its `data:` "
        f"the event as in the log, one JSON `{event}` (redacted for the caller); comment "
        "lines keep the connection alive; the stream ends after `match_over`, or after the "
        "`seat_left` (or `seat_joined`) of the seat it follows as, once that seat changed "
        "hands.",
        "headers": {
            "Cache-Control": header_ref("Cache-Control"),
            "X-Accel-Buffering": header_ref("X-Accel-Buffering"),
        },
        "content": {
            "text/event-stream": {
                "schema": {"type": "string"},
                "x-event-data": {"$ref": f"#/components/schemas/{event}"},
            }
        },
    }


MULTI_SSE_RESPONSE = {
    "description": "Server-Sent Events of several matches: each event's `data:` is one JSON "
    "event of its game (`DekalEvent`, `PacalEvent`, `GaudiEvent` or `DucaleEvent`, redacted "
    "for the ticket's seat in that match) with two more members, `match` (its id) and `game`; "
    "each `id:` holds every match's cursor, in the ticket's order, joined by `.`.",
    "headers": {
        "Cache-Control": header_ref("Cache-Control"),
        "X-Accel-Buffering": header_ref("X-Accel-Buffering"),
    },
    "content": {"text/event-stream": {"schema": {"type": "string"}}},
}


def problems(*statuses: int, stream: dict[str, Any] | None = None) -> dict[str, Any]:
    """The documented error answers (and, for a stream, its 200 answer)."""
    extra = {"200": stream} if stream else {}
    return {
        "responses": extra
        | {
            str(status): {
                "description": PROBLEMS[status],
                "content": {
                    "application/problem+json": {
                        "schema": {"$ref": "#/components/schemas/Problem"}
                    }
                },
            }
            for status in statuses
        }
    }


SEAT_TOKEN = [{"seatToken": []}]
OPTIONAL_SEAT_TOKEN = OPTIONAL_TOKEN


def json_response(
    payload: Any, status: int = 200, headers: dict[str, str] | None = None
) -> Response:
    body = payload if isinstance(payload, bytes) else orjson.dumps(payload)
    return Response(body, status=status, mimetype="application/json", headers=headers)


def matches() -> Matches:
    return current_app.extensions["ludotheque.matches"]


def following() -> Following:
    return current_app.extensions["ludotheque.live"]


def record_keys() -> RecordKeys:
    return current_app.extensions["ludotheque.record_keys"]


def records() -> Records:
    """The app's cache of signed records, made on its first use; records
    changed since (``service.store.renamed_records``) dropped from it."""
    extensions = current_app.extensions
    renamed = extensions["ludotheque.renamed_records"]
    if (found := extensions.get("ludotheque.records")) is None:
        made = Records(matches().record, record_keys().get, matches().stored_record)
        found = extensions.setdefault("ludotheque.records", made)
        if found is made:
            renamed.watch(lambda g, m: made.forget(GAMES[g], m), made.kept.clear)
    renamed.check()
    return found


def replays() -> Replays:
    """The app's cache of what replays are made of, made on its first use
    (an app that never serves a replay holds none), from the cached records."""
    extensions = current_app.extensions
    if (found := extensions.get("ludotheque.replays")) is None:
        signed = records()
        made = Replays(lambda game, match_id: orjson.loads(signed.encoded(game, match_id)))
        found = extensions.setdefault("ludotheque.replays", made)
        if found is made:
            forget = made.forget
            extensions["ludotheque.renamed_records"].watch(
                lambda g, m: forget(GAMES[g], m), made.kept.clear
            )
    extensions["ludotheque.renamed_records"].check()
    return found


def etag(version: int, seat: int | None = None) -> str:
    """The version as ``seat`` (None: a spectator) sees it (service.http.caching)."""
    return viewer_etag(version, seat)


# ``present`` writes a match's answer as id, game, status, version, ...,
# your_seat, ...: an action's ETag reads its two numbers from the bytes just
# written rather than parsing kilobytes again. The key ``your_seat`` is read
# only when the answer writes it once (a key's quotes are never escaped, so
# a string cannot hold it); anything else is parsed.
ANSWER_VERSION = re.compile(
    rb'\{"id":"[0-9a-f]{32}","game":"[a-z]+","status":"[a-z]+","version":([0-9]+),'
)
ANSWER_SEAT = re.compile(rb',"your_seat":(null|[0-9]+),')


def answer_etag(body: bytes) -> str:
    """The ETag of a match's answer (``present``'s JSON): its version, as its seat sees it."""
    version = ANSWER_VERSION.match(body)
    seat = ANSWER_SEAT.search(body) if body.count(b',"your_seat":') == 1 else None
    if version is None or seat is None:
        answer = orjson.loads(body)
        return etag(answer["version"], answer["your_seat"])
    return etag(int(version[1]), None if seat[1] == b"null" else int(seat[1]))


def header_number(name: str) -> int | None:
    """The number a header names (``If-Match``, ``Last-Event-ID``): ``"7"``, ``7``, ``W/"7"``."""
    raw = request.headers.get(name)
    if raw is None:
        return None
    tag = raw.strip().removeprefix("W/").strip('"')
    if not (tag.isascii() and tag.isdigit()) or len(tag) > 18:
        raise Problem(400, "invalid_request", f'{name} must be a number, like "7"')
    return int(tag)


def none_match(tag: str) -> bool:
    """Whether ``If-None-Match`` already names ``tag``."""
    return names_etag(request_header("If-None-Match"), tag)


def required_token() -> str:
    token = bearer_token()
    if token is None:
        raise Problem(
            401,
            "token_required",
            "this needs a seat's token",
            headers={"WWW-Authenticate": 'Bearer realm="ludotheque"'},
        )
    return token
