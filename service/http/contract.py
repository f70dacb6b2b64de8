"""What the contract says beyond each route's own schemas: the events of
each game, the named value types, and every answer, header and problem an
operation can send.

``complete(spec)`` runs once every route is registered. Nothing here names
a game: the engines declare their events and mark their value types
(``engines.core.named``); this module turns them into components.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from apispec import APISpec
from marshmallow import Schema, fields

from engines.core import VALUE_TYPE, Game
from service.http.calls_schemas import CALL_EVENTS
from service.http.rating_schemas import RATINGS
from service.http.schemas import (
    LIFECYCLE_EVENTS,
    MAX_INDEX,
    RANKING,
    RESIGNED,
    SEED_COMMITMENT,
    SEEDED,
    EndedEarlyOutcomeSchema,
    RevealedSchema,
    SeatSchema,
)

# A field marked with this metadata becomes a $ref to the component it names
# (one registered elsewhere, such as a game's action union).
REF = "x-ref"

METHODS = {"get", "put", "post", "delete", "patch", "head", "options"}

PROBLEM = {"$ref": "#/components/schemas/Problem"}
OPTIONAL_TOKEN: list[dict[str, list[str]]] = [{}, {"seatToken": []}]

HEADERS: dict[str, str] = {
    "X-Request-ID": "This request's id (the client's own X-Request-ID when it sent a sane "
    "one): quote it when reporting a problem.",
    "ETag": 'The match version as this viewer sees it, quoted ("7-s0": seat 0; '
    '"7-spectator"): send it back as If-None-Match, or as If-Match (the bare version '
    '"7" is taken too).',
    "Location": "The URL of the match just created.",
    "Idempotent-Replayed": '"true" when this answer is the stored answer to an earlier '
    "request with the same Idempotency-Key (the action was not played again).",
    "Retry-After": "Seconds to wait: a request made that many seconds later is accepted "
    "(as far as this limit goes).",
    "Allow": "The methods this path takes.",
    "WWW-Authenticate": 'The scheme to use: Bearer realm="ludotheque".',
    "Cache-Control": "`private, no-cache` on every answer that depends on the caller's token "
    "(a shared cache never keeps it, a browser revalidates it); `no-store` on answers that hand "
    "out a token; `no-cache` on an event stream; `public` on a finished match's record; "
    "`public, max-age=5` on a page of finished matches; `no-store` on an export.",
    "Vary": "`Authorization` on every answer that depends on the caller's token: each viewer "
    "has a view of its own.",
    "Access-Control-Allow-Origin": "`*` (or the caller's origin when LUDOTHEQUE_CORS_ORIGINS "
    "narrows it): any page may read the answer, since no ambient credential is ever used.",
    "Access-Control-Expose-Headers": "The headers a page may read (those of this contract).",
    "X-Accel-Buffering": "no: tells a proxy in front not to buffer the stream.",
}

# Headers sent only sometimes where they are documented (the others always).
OCCASIONAL_HEADERS = {"Idempotent-Replayed"}

# Headers any answer may carry, documented on every one of them.
ANY_ANSWER_HEADERS = [
    "Cache-Control",
    "Vary",
    "Access-Control-Allow-Origin",
    "Access-Control-Expose-Headers",
]

# Headers added to every answer of a status, whatever the operation.
STATUS_HEADERS: dict[str, list[str]] = {
    "401": ["WWW-Authenticate"],
    "405": ["Allow"],
    "429": ["Retry-After"],
    "503": ["Retry-After"],
}

EVERY_OPERATION = {
    "405": "Another method on this path (method_not_allowed); Allow lists the methods.",
    "429": "Too many requests from this address or token (too_many_requests): "
    "retry after Retry-After seconds.",
    "503": "The store is unavailable (store_unavailable): retry after Retry-After seconds.",
}


# flask-smorest lets a route's own parameters replace those its arguments
# declare: header parameters wait under this key, and join them in ``complete``.
HEADER_PARAMETERS = "x-header-parameters"


def header_parameters(*parameters: dict[str, Any]) -> dict[str, Any]:
    """``@blp.doc`` keywords documenting header ``parameters`` of an operation."""
    return {HEADER_PARAMETERS: list(parameters)}


def header_ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/headers/{name}"}


def problem_answer(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/problem+json": {"schema": PROBLEM}},
    }


# -- events ----------------------------------------------------------------------


class EventEnvelopeSchema(Schema):
    """What the service adds to every event in the log."""

    index = fields.Integer(
        required=True,
        validate=lambda n: 1 <= n <= MAX_INDEX,
        metadata={"description": "1, 2, ... in log order", "minimum": 1},
    )
    version = fields.Integer(
        required=True, metadata={"description": "the match version the event led to"}
    )


def _event(name: str) -> fields.String:
    return fields.String(required=True, metadata={"enum": [name]})


class MatchCreatedEventSchema(EventEnvelopeSchema):
    """The match was created with these seats."""

    type = _event("match_created")
    seats = fields.List(fields.Nested(SeatSchema), required=True)
    seeded = SEEDED
    seed_commitment = SEED_COMMITMENT
    rematch_of = fields.String(
        metadata={"description": "the match this one is the rematch of, if any"}
    )


class SeatJoinedEventSchema(EventEnvelopeSchema):
    """An open seat was taken, by a person (``name``) or a bot."""

    type = _event("seat_joined")
    seat = fields.Integer(required=True)
    name = fields.String(required=True, allow_none=True)
    bot = fields.String(required=True, allow_none=True)


class MatchStartedEventSchema(EventEnvelopeSchema):
    """Every seat is taken: the match is on."""

    type = _event("match_started")


class TimeoutEventSchema(EventEnvelopeSchema):
    """The seat's turn clock ran out: the server plays a random legal move for it."""

    type = _event("timeout")
    seat = fields.Integer(required=True)


# The service's own events, whatever the game (``action`` is per game: it
# carries that game's action).
SERVICE_EVENTS: dict[str, type[Schema]] = {
    "match_created": MatchCreatedEventSchema,
    "seat_joined": SeatJoinedEventSchema,
    "match_started": MatchStartedEventSchema,
    "timeout": TimeoutEventSchema,
    **{
        kind: type(schema.__name__, (EventEnvelopeSchema, schema), {"type": _event(kind)})
        for kind, schema in (LIFECYCLE_EVENTS | CALL_EVENTS).items()
    },
}


def match_over_schema(game: Game, schema: type[Schema]) -> type[Schema]:
    """``game``'s match_over event as clients see it: the seed and salt
    revealed, and resigned seats ranked last (docs/clients/lobby.md), or, for a match
    that ended by resignation or abort, the service's outcome (no scores)."""
    return type(
        schema.__name__.replace("EventSchema", "ByRulesEventSchema"),
        (EventEnvelopeSchema, schema, RevealedSchema),
        {"resigned": RESIGNED, "ranking": RANKING, "ratings": RATINGS},
    )


def event_components(spec: APISpec, game: Game, action: str) -> str:
    """Register ``game``'s events and their union ``<Game>Event``; return its name."""
    prefix = game.name.capitalize()
    refs: dict[str, str] = {}
    for kind, schema in SERVICE_EVENTS.items():
        name = schema.__name__.removesuffix("Schema")
        if name not in spec.components.schemas:
            spec.components.schema(name, schema=schema)
        refs[kind] = f"#/components/schemas/{name}"
    action_event = f"{prefix}ActionEvent"
    spec.components.schema(
        action_event,
        {
            "type": "object",
            "description": "A seat's accepted action; only that seat sees it (a move can "
            "carry secrets), so that a match replays from its log.",
            "additionalProperties": False,
            "required": ["index", "version", "type", "seat", "action"],
            "properties": {
                "index": {"type": "integer", "minimum": 1},
                "version": {"type": "integer"},
                "type": {"type": "string", "enum": ["action"]},
                "seat": {"type": "integer"},
                "action": {"$ref": f"#/components/schemas/{action}"},
            },
        },
    )
    refs["action"] = f"#/components/schemas/{action_event}"
    for kind, schema in sorted(game.event_schemas.items()):
        if kind in refs:
            raise ValueError(f"{game.name} emits {kind!r}, a type the service emits itself")
        name = schema.__name__.removesuffix("Schema")
        if kind == "match_over":
            by_rules = name.replace("Event", "ByRulesEvent")
            spec.components.schema(by_rules, schema=match_over_schema(game, schema))
            spec.components.schema(
                name,
                {
                    "description": "The match is over, by its rules or by resignation or "
                    "abort; the seed and salt are revealed (docs/clients/fairness.md).",
                    "oneOf": [
                        {"$ref": f"#/components/schemas/{by_rules}"},
                        {"$ref": "#/components/schemas/MatchOverEarlyEvent"},
                    ],
                },
            )
        else:
            spec.components.schema(name, schema=type(name, (EventEnvelopeSchema, schema), {}))
        refs[kind] = f"#/components/schemas/{name}"
    if "MatchOverEarlyEvent" not in spec.components.schemas:
        spec.components.schema(
            "MatchOverEarlyEvent",
            schema=type(
                "MatchOverEarlyEventSchema",
                (EventEnvelopeSchema, EndedEarlyOutcomeSchema),
                {"type": _event("match_over"), "ratings": RATINGS},
            ),
        )
    union = f"{prefix}Event"
    spec.components.schema(
        union,
        {
            "description": f"An event of a {game.title} match, as its viewer may see it.",
            "oneOf": [{"$ref": ref} for ref in refs.values()],
            "discriminator": {"propertyName": "type", "mapping": refs},
        },
    )
    spec.components.schema(
        f"{prefix}Events",
        {
            "type": "object",
            "additionalProperties": False,
            "required": ["events", "next"],
            "properties": {
                "events": {"type": "array", "items": {"$ref": f"#/components/schemas/{union}"}},
                "next": {
                    "type": "integer",
                    "description": "pass it as ?after= to continue (events hidden from you "
                    "are skipped, so it may exceed the last index shown)",
                },
            },
        },
    )
    return union


# -- completing the spec ---------------------------------------------------------


def complete(spec: APISpec) -> None:
    """Name the value types; make every operation's answers explicit."""
    for name, text in HEADERS.items():
        spec.components.header(
            name,
            {
                "description": text,
                "required": name not in OCCASIONAL_HEADERS and name not in ANY_ANSWER_HEADERS,
                "schema": {"type": "string"},
            },
        )
    problem = spec.components.schemas["Problem"]
    spec.components.schema(
        "VersionMismatchProblem",
        {**problem, "required": [*problem.get("required", []), "version"]},
    )
    schemas = spec.components.schemas
    for body in list(schemas.values()):
        _name_values(body, schemas)
    # A token is optional wherever an operation says nothing (OpenAPI's way to
    # say it: the global requirement, which generators render as optional).
    spec.options["security"] = OPTIONAL_TOKEN
    for item in spec._paths.values():
        for method, operation in item.items():
            if method in METHODS:
                _name_values(operation, schemas)
                _complete_answers(operation)
                headers = operation.pop(HEADER_PARAMETERS, [])
                operation["parameters"] = [*operation.get("parameters", []), *headers]
                security = operation.get("security")
                if security == OPTIONAL_TOKEN:
                    del operation["security"]
                elif security is None:
                    operation["security"] = []  # no token is ever read here


def _complete_answers(operation: dict[str, Any]) -> None:
    responses = operation["responses"]
    responses.pop("default", None)  # every status is named: nothing falls to a default
    for status, text in EVERY_OPERATION.items():
        responses.setdefault(status, problem_answer(text))
    for status, answer in list(responses.items()):
        if isinstance(answer, str) or "$ref" in answer:
            # flask-smorest's shared answers: inline them, to give them headers
            answer = problem_answer(HTTPStatus(int(status)).phrase)
            responses[status] = answer
        if status == "412":
            answer["content"]["application/problem+json"]["schema"] = {
                "$ref": "#/components/schemas/VersionMismatchProblem"
            }
        headers = answer.setdefault("headers", {})
        for name in ["X-Request-ID", *STATUS_HEADERS.get(status, []), *ANY_ANSWER_HEADERS]:
            headers[name] = header_ref(name)
        for name in list(headers):
            if name in HEADERS:
                headers[name] = header_ref(name)


def _name_values(node: Any, schemas: dict[str, Any]) -> None:
    """Replace, in place and recursively, each property marked as a value type
    by a $ref to its one component (``anyOf`` with null when nullable)."""
    if isinstance(node, list):
        for item in node:
            _name_values(item, schemas)
        return
    if not isinstance(node, dict):
        return
    for key, value in list(node.items()):
        if isinstance(value, dict) and (VALUE_TYPE in value or REF in value):
            node[key] = _reference(value, schemas)
        else:
            _name_values(value, schemas)


def _reference(prop: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    body = {k: v for k, v in prop.items() if k not in {VALUE_TYPE, REF, "description"}}
    nullable = False
    kind = body.get("type")
    if isinstance(kind, list) and "null" in kind:
        nullable = True
        rest = [t for t in kind if t != "null"]
        body["type"] = rest[0] if len(rest) == 1 else rest
        if "enum" in body:
            body["enum"] = [v for v in body["enum"] if v is not None]
    if REF in prop:
        name = prop[REF]
    else:
        name = prop[VALUE_TYPE]
        if name not in schemas:
            schemas[name] = body
        elif schemas[name] != body:
            raise ValueError(f"value type {name} is declared two ways: {schemas[name]} {body}")
    ref: dict[str, Any] = {"$ref": f"#/components/schemas/{name}"}
    answer = {"anyOf": [ref, {"type": "null"}]} if nullable else ref
    if "description" in prop:
        answer = {**answer, "description": prop["description"]}
    return answer
