"""API v1: one blueprint per registered game, built from the registry.

Nothing here names a game: each game brings its options, action and view
schemas, and this module turns them into routes and OpenAPI components.
"""

from __future__ import annotations

import functools
import http
import re
from typing import Any

import orjson
from flask import Response, current_app, request
from flask.views import MethodView
from flask_smorest import Api
from flask_smorest.utils import prepare_response
from marshmallow import Schema, ValidationError, fields, validate

from engines import GAMES
from engines.ai.policies import supported
from engines.core import Game
from service.domain import lobby, signing
from service.domain import tokens as auth
from service.domain.matches import Matches, present
from service.domain.problems import Problem
from service.http import lifecycle as lifecycle_api
from service.http.arguments import Blueprint
from service.http.bearer import bearer_token
from service.http.caching import (
    VIEWER_HEADERS,
    if_match_version,
    names_etag,
    request_header,
    viewer_etag,
)
from service.http.contract import (
    OPTIONAL_TOKEN,
    REF,
    complete,
    event_components,
    header_parameters,
    header_ref,
)
from service.http.cors import body_version
from service.http.errors import ProblemSchema, from_http_exception, problem_response
from service.http.schemas import (
    TURN_TIMEOUT,
    ActionQuerySchema,
    CreateMatchSchema,
    EventsQuerySchema,
    GamesSchema,
    JoinedSchema,
    JoinSchema,
    LobbyQuerySchema,
    LobbySchema,
    MatchQuerySchema,
    MatchSchema,
    RecordKeySchema,
    RecordSchema,
    StreamQuerySchema,
)
from service.live.following import Following
from service.live.tickets import (
    TicketSchema,
    address,
    answer,
    follows_of,
    issue,
    stream_response,
    streams_blueprint,
    ticket_answer,
    ticket_stream,
)
from service.live.turns import settled, wait_for_turn


class LudothequeApi(Api):
    """flask-smorest's Api, answering every HTTP error as problem+json."""

    ERROR_SCHEMA = ProblemSchema

    def _register_responses(self) -> None:
        """flask-smorest's shared error responses, documented as the
        problem+json they are (its default says application/json)."""
        for status in http.HTTPStatus:
            response: dict[str, Any] = {"description": status.phrase}
            if not (100 <= status < 200) and status not in (204, 304):
                response["schema"] = self.ERROR_SCHEMA
            prepare_response(response, self.spec, PROBLEM_JSON)
            self.spec.components.response(status.name, response, lazy=True)
        response = {"description": "Default error response", "schema": self.ERROR_SCHEMA}
        prepare_response(response, self.spec, PROBLEM_JSON)
        self.spec.components.response("DEFAULT_ERROR", response, lazy=True)

    def handle_http_exception(self, error):
        unknown = UNKNOWN_GAME.match(request.path)
        if error.code == 404 and unknown and unknown["name"] not in GAMES:
            error = Problem(404, "game_not_found", f"no game {unknown['name']!r}; see /v1/games")
            return problem_response(error)
        return problem_response(from_http_exception(error))


UNKNOWN_GAME = re.compile(r"^/v1/games/(?P<name>[^/]+)")

PROBLEM_JSON = "application/problem+json"
PROBLEMS = {
    400: "Malformed request (invalid_request)",
    401: "Token or stream ticket missing, malformed or used, or the ticket's seat changed hands "
    "(token_required, invalid_ticket)",
    403: "Token holds no seat here (invalid_token)",
    404: "Unknown game, match or seat",
    409: "Not now: not_your_turn, match_not_started, match_over, match_not_over, seat_taken, "
    "conflict",
    412: "If-Match names another version (version_mismatch)",
    413: "Body too large (payload_too_large)",
    422: "Schema-invalid body (invalid_request, invalid_options), illegal move "
    "(illegal_action, with the reason) or a chosen seed where others play (seed_not_allowed)",
    429: "Over a limit, with Retry-After: too_many_requests; too many open streams and long "
    "polls (too_many_followers); on creation also too_many_matches_created, "
    "too_many_waiting_matches; bot_seats_exceeded: the creating address holds its cap of live "
    "bot seats",
    503: "The store is unavailable (store_unavailable), or this process follows all the "
    "streams it can (too_many_followers)",
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


def record_keys() -> signing.RecordKeys:
    return current_app.extensions["ludotheque.record_keys"]


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


def schema_name(schema: type[Schema]) -> str:
    return schema.__name__.removesuffix("Schema")


def load_action(loaders: dict[str, Schema]) -> dict[str, Any]:
    """The request body as one of a game's actions, loaded by its schema
    (``loaders``: one schema instance per action type, built once)."""
    body = request.get_json(force=True)
    if not isinstance(body, dict):
        raise Problem(400, "invalid_request", "the body must be a JSON object")
    kind = body.get("type")
    schema = loaders.get(kind) if isinstance(kind, str) else None
    if schema is None:
        raise Problem(
            422,
            "invalid_request",
            f"'type' must be one of {sorted(loaders)}",
            errors={"type": [f"one of {sorted(loaders)}"]},
        )
    try:
        return schema.load(body)
    except ValidationError as invalid:
        raise Problem(
            422, "invalid_request", "the action does not match its schema", errors=invalid.messages
        ) from None


def game_components(api: Api, game: Game) -> dict[str, str]:
    """Register ``game``'s schemas in the spec; return the names of its components."""
    prefix = game.name.capitalize()
    spec = api.spec
    action_refs = {}
    for kind, schema in sorted(game.action_schemas.items()):
        name = schema_name(schema)
        if name not in spec.components.schemas:
            spec.components.schema(name, schema=schema)
        action_refs[kind] = f"#/components/schemas/{name}"
    action = f"{prefix}Action"
    spec.components.schema(
        action,
        {
            "oneOf": [{"$ref": ref} for ref in action_refs.values()],
            "discriminator": {"propertyName": "type", "mapping": action_refs},
        },
    )
    spec.components.schema(
        f"{prefix}LegalActions",
        {
            "type": "object",
            "required": ["version", "seat", "actions"],
            "properties": {
                "version": {"type": "integer"},
                "seat": {"type": "integer"},
                "actions": {"type": "array", "items": {"$ref": f"#/components/schemas/{action}"}},
            },
        },
    )
    events = event_components(spec, game, action)
    return {
        "action": action,
        "legal_actions": f"{prefix}LegalActions",
        "event": events,
        "events": f"{events}s",
    }


@functools.cache
def game_schemas(game: Game) -> tuple[type[Schema], type[Schema], type[Schema]]:
    """The match options, create-body and match schemas of ``game``, named after it."""
    prefix = game.name.capitalize()
    options = type(
        f"{prefix}MatchOptionsSchema", (game.options_schema,), {"turn_timeout_s": TURN_TIMEOUT}
    )
    players = CreateMatchSchema._declared_fields["players"]
    create = type(
        f"{prefix}CreateMatchSchema",
        (CreateMatchSchema,),
        {
            "options": fields.Nested(options),
            "players": fields.List(
                players.inner,
                required=True,
                validate=validate.Length(min=game.min_players, max=game.max_players),
                metadata=players.metadata,
            ),
        },
    )
    match = type(
        f"{prefix}MatchSchema",
        (MatchSchema,),
        {
            "options": fields.Nested(options, required=True),
            "view": fields.Nested(game.view_schema, required=True),
            "outcome": lifecycle_api.outcome_field(game),
            "legal_actions": fields.List(
                fields.Raw(metadata={REF: f"{prefix}Action"}),
                metadata={
                    "description": "Only with ?legal_actions=true: every action the caller's "
                    "seat may play now, each exactly as POST .../actions takes it (empty when "
                    "it is not to act, and for a spectator)."
                },
            ),
        },
    )
    return options, create, match


@functools.cache
@functools.cache
def record_schema(game: Game) -> type[Schema]:
    """The record of a finished ``game`` match, its actions typed as the game's."""
    prefix = game.name.capitalize()
    action = {"allOf": [{"$ref": f"#/components/schemas/{prefix}Action"}]}
    step = type(
        f"{prefix}RecordActionSchema",
        (Schema,),
        {
            "seat": fields.Integer(required=True),
            "action": fields.Raw(required=True, metadata=action),
            "timed_out": fields.Boolean(
                required=True,
                metadata={
                    "description": "the seat's turn clock ran out: the server played this "
                    "action for it"
                },
            ),
            "events": fields.List(
                fields.Dict(),
                required=True,
                metadata={"description": "the public events the action caused, as in the log"},
            ),
        },
    )
    return type(
        f"{prefix}RecordSchema",
        (RecordSchema,),
        {
            "options": fields.Nested(game.options_schema, required=True),
            "actions": fields.List(
                fields.Nested(step),
                required=True,
                metadata={"description": "every accepted action, in order, with its seat"},
            ),
            "outcome": lifecycle_api.outcome_field(game, required_value=True),
            "final_view": fields.Nested(
                game.view_schema,
                required=True,
                metadata={"description": "what a spectator sees at the end"},
            ),
        },
    )


def game_blueprint(api: Api, game: Game) -> Blueprint:
    name = game.name
    blp = Blueprint(
        name,
        __name__,
        url_prefix=f"/v1/games/{name}",
        description=f"{game.title}: create, join, watch and play matches",
    )
    names = game_components(api, game)
    options_schema, create_schema, match_schema = game_schemas(game)
    loaders = {kind: schema() for kind, schema in game.action_schemas.items()}
    ref = {k: {"$ref": f"#/components/schemas/{v}"} for k, v in names.items()}

    @blp.route("/matches")
    class MatchCollection(MethodView):
        @blp.arguments(create_schema())
        @blp.response(
            201,
            match_schema,
            headers={"ETag": header_ref("ETag"), "Location": header_ref("Location")},
        )
        @blp.doc(operationId=f"{name}_create_match", **problems(400, 413, 422, 429, 503))
        def post(self, body: dict[str, Any]) -> Response:
            """Create a match.

            Each `{"name": ..}` seat is taken now and gets its token in this
            answer only; each `{}` seat stays open for someone to join.
            """
            options = body.get("options") or options_schema().load({})
            answer = matches().create(
                game,
                body["players"],
                options,
                body.get("seed"),
                body["listed"],
                creator=request.remote_addr,
                calls={k: body.get(k) for k in ("webhook", "bot_deadline_s")},
            )
            location = f"/v1/games/{name}/matches/{answer['id']}"
            return json_response(
                answer, 201, {"Location": location, "ETag": etag(answer["version"])}
            )

        @blp.arguments(LobbyQuerySchema(), location="query")
        @blp.response(200, LobbySchema)
        @blp.doc(operationId=f"{name}_lobby", **problems(422, 503))
        def get(self, query: dict[str, Any]) -> Response:
            """The lobby: listed matches with open seats, newest first (no tokens)."""
            store = matches().store
            return json_response(
                lobby.page(
                    store,
                    game,
                    query["limit"],
                    query.get("cursor"),
                    query.get("players"),
                    query["open_seats"],
                )
            )

    @blp.route("/matches/<match_id>")
    class MatchResource(MethodView):
        @blp.arguments(MatchQuerySchema(), location="query", as_kwargs=True)
        @blp.response(200, match_schema, headers={"ETag": header_ref("ETag")} | VIEWER_HEADERS)
        @blp.doc(
            operationId=f"{name}_get_match",
            security=OPTIONAL_SEAT_TOKEN,
            **header_parameters(
                {"in": "header", "name": "If-None-Match", "schema": {"type": "string"}}
            ),
            **problems(401, 403, 404, 429, 503),
        )
        @blp.alt_response(
            304,
            description="Not modified: your view of this version is the one you named",
            headers={"ETag": header_ref("ETag")} | VIEWER_HEADERS,
        )
        def get(self, match_id: str, legal_actions: bool, wait: float) -> Response:
            """The match as the caller may see it: a seat's view with its token,
            a spectator's without. `ETag` names the version and the viewer; the
            token is checked before `If-None-Match` is. A `wait` that waits is a
            long poll: it counts against the follower caps (429
            `too_many_followers`), and ends at once with 403 `invalid_token` if
            the token's seat changes hands meanwhile."""
            token = bearer_token()
            loaded = matches().load(game, match_id)
            seat = matches().seat_for(loaded, token)
            if wait and seat is not None and not settled(game, loaded, seat):
                # first the turn, then whether the version is news; a long
                # poll, held against the follower caps as a stream is
                holder = auth.token_hash(token)
                allowances = following().allowances
                held = allowances.hold(address(), [holder], wait + 30)
                try:
                    loaded = wait_for_turn(following(), game, match_id, loaded, seat, wait, holder)
                finally:
                    allowances.release(held)
                seat = matches().seat_for(loaded, token)  # 403 if the seat changed hands
            tag = etag(loaded.version, seat)
            if none_match(tag):
                return Response(status=304, headers={"ETag": tag})
            payload = present(game, loaded.match, loaded.version, seat, legal_actions)
            return json_response(payload, headers={"ETag": tag})

    @blp.route("/matches/<match_id>/record")
    class Record(MethodView):
        @blp.response(200, record_schema(game))
        @blp.doc(operationId=f"{name}_match_record", **problems(404, 409, 503))
        def get(self, match_id: str) -> Response:
            """The whole record of a finished match, for anyone: options, seed,
            salt, seats, every action in order with its seat, the outcome,
            signed by the server's record key (`GET /v1/record-key`). Check it
            with `ludotheque verify` (docs/fairness.md); before the end, 409
            match_not_over."""
            record = signing.sign(matches().record(game, match_id), record_keys().get())
            # A finished match never changes: its record may be cached by anyone.
            return json_response(record, headers={"Cache-Control": "public, max-age=86400"})

    @blp.route("/matches/<match_id>/seats/<int:seat>")
    class SeatResource(MethodView):
        @blp.arguments(JoinSchema())
        @blp.response(201, JoinedSchema)
        @blp.doc(operationId=f"{name}_join_match", **problems(400, 404, 409, 413, 422, 429, 503))
        def post(self, body: dict[str, Any], match_id: str, seat: int) -> Response:
            """Take an open seat, for yourself (the answer holds its token,
            shown once) or for a bot. The match starts when every seat is taken."""
            taken = matches().join(
                game, match_id, seat, body.get("name"), body.get("bot"), request.remote_addr
            )
            return json_response(taken, 201)

    @blp.route("/matches/<match_id>/legal-actions")
    class LegalActions(MethodView):
        @blp.response(200, ref["legal_actions"], headers=VIEWER_HEADERS)
        @blp.doc(
            operationId=f"{name}_legal_actions",
            security=SEAT_TOKEN,
            **problems(401, 403, 404, 503),
        )
        def get(self, match_id: str) -> Response:
            """Every action the caller's seat may play now, each exactly as
            `POST .../actions` takes it (empty when it is not the seat's turn)."""
            return json_response(matches().legal_actions(game, match_id, required_token()))

    @blp.route("/matches/<match_id>/actions")
    class Actions(MethodView):
        @blp.arguments(ActionQuerySchema(), location="query", as_kwargs=True)
        @blp.response(
            200,
            match_schema,
            headers={
                "ETag": header_ref("ETag"),
                "Idempotent-Replayed": header_ref("Idempotent-Replayed"),
            }
            | VIEWER_HEADERS,
        )
        @blp.doc(
            operationId=f"{name}_play_action",
            security=SEAT_TOKEN,
            requestBody={
                "required": True,
                "description": "the action; it may also carry `if_version` (an integer): "
                "play only if the match is still at this version, as `If-Match` says it, "
                "without the header that makes a browser send a CORS preflight per action",
                "content": {"application/json": {"schema": ref["action"]}},
            },
            **header_parameters(
                {
                    "in": "header",
                    "name": "If-Match",
                    "schema": {"type": "string"},
                    "description": "play only if the match is still at this version (else "
                    '412): `"7"`, or the `ETag` of a view of it, `"7-s0"`',
                },
                {
                    "in": "header",
                    "name": "Idempotency-Key",
                    "schema": {"type": "string", "maxLength": 200},
                    "description": "a retried request with the same key returns the first answer",
                },
            ),
            **problems(400, 401, 403, 404, 409, 412, 413, 422, 503),
        )
        def post(self, match_id: str, legal_actions: bool) -> Response:
            """Play one action; the answer is the match as the caller sees it after it
            (with `?legal_actions=true`, and the seat's legal actions then)."""
            token = required_token()
            if_match = if_match_version()
            if_version = body_version()  # If-Match, for a page: no preflight per action
            if_match = if_version if if_match is None else if_match
            key = request_header("Idempotency-Key")
            if key is not None and not 1 <= len(key) <= 200:
                raise Problem(400, "invalid_request", "Idempotency-Key takes 1 to 200 characters")
            action = load_action(loaders)
            body, replayed = matches().play(
                game, match_id, token, action, if_match, key, legal_actions
            )
            headers = {"ETag": answer_etag(body)}
            if replayed:
                headers["Idempotent-Replayed"] = "true"
            return json_response(body, headers=headers)

    @blp.route("/matches/<match_id>/events")
    class Events(MethodView):
        @blp.arguments(EventsQuerySchema(), location="query", as_kwargs=True)
        @blp.response(200, ref["events"], headers=VIEWER_HEADERS)
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
            body = following().events(game, match_id, token, after, limit, wait, address())
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
            **problems(400, 401, 403, 404, 429, 503, stream=sse_response(names["event"])),
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
                watch, finished = following().watch(game, match_id, token, after)
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
            ticket = issue(following().store.client, follows, following().settings.ticket_ttl)
            return ticket_answer(ticket, f"/v1/games/{name}/matches/{match_id}/stream")

    lifecycle_api.add_routes(api, blp, game, match_schema)
    return blp


def games_blueprint(api: Api) -> Blueprint:
    blp = Blueprint("games", __name__, url_prefix="/v1", description="The games on offer")
    converter = api.ma_plugin.converter
    games = orjson.dumps(
        {
            "games": [
                {
                    "name": g.name,
                    "title": g.title,
                    "min_players": g.min_players,
                    "max_players": g.max_players,
                    "options": converter.schema2jsonschema(game_schemas(g)[0]),
                    "actions": sorted(g.action_schemas),
                    "bots": list(supported(g)),
                }
                for g in GAMES.values()
            ]
        }
    )

    @blp.route("/games")
    class GameList(MethodView):
        @blp.response(200, GamesSchema)
        @blp.doc(operationId="list_games")
        def get(self) -> Response:
            """The games: name, title, player counts, options schema, action types, bots."""
            return json_response(games)

    return blp


def record_key_blueprint() -> Blueprint:
    blp = Blueprint("record-key", __name__, url_prefix="/v1", description="Signed records")

    @blp.route("/record-key")
    class RecordKey(MethodView):
        @blp.response(200, RecordKeySchema)
        @blp.doc(operationId="record_key", **problems(503))
        def get(self) -> Response:
            """The public half of the Ed25519 key that signs every match's
            record: check a record with `ludotheque verify --key` offline
            (docs/fairness.md). It changes only when the deployment's key does."""
            published = record_keys().get().published()
            return json_response(published, headers={"Cache-Control": "public, max-age=3600"})

    return blp


def init_api(api: Api) -> None:
    api.spec.components.security_scheme(
        "seatToken", {"type": "http", "scheme": "bearer", "description": "a seat's token"}
    )
    lifecycle_api.register_components(api)
    api.register_blueprint(games_blueprint(api))
    api.register_blueprint(record_key_blueprint())
    api.register_blueprint(streams_blueprint(MULTI_SSE_RESPONSE, problems))
    for game in GAMES.values():
        api.register_blueprint(game_blueprint(api, game))
    complete(api.spec)
