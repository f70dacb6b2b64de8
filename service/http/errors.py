"""Errors as RFC 9457 ``application/problem+json``, each with a stable ``code``.

Every error the service answers goes through :func:`problem_response`; this
is the one place where engine, store and HTTP errors become HTTP answers.
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

import orjson
from flask import Flask, Response
from marshmallow import Schema, fields, validate
from redis.exceptions import RedisClusterException, RedisError
from sqlalchemy.exc import DBAPIError, OperationalError
from werkzeug.exceptions import HTTPException

from engines.core import IllegalAction
from service.domain.ports import NotReplicated
from service.domain.problems import Problem, from_illegal_action
from service.store.outages import is_store_trouble

log = logging.getLogger(__name__)

PROBLEM_TYPE = "https://ludotheque.dev/problems/"


HTTP_CODES = {
    400: "invalid_request",
    401: "token_required",
    403: "invalid_token",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "conflict",
    412: "version_mismatch",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
    429: "too_many_requests",
    503: "store_unavailable",
}

# Every code the server answers with (a test checks the source for others).
CODES = [
    "invalid_request",
    "illegal_action",
    "invalid_options",
    "token_required",
    "invalid_token",
    "not_found",
    "game_not_found",
    "match_not_found",
    "seat_not_found",
    "method_not_allowed",
    "not_acceptable",
    "not_your_turn",
    "match_not_started",
    "match_over",
    "seat_taken",
    "conflict",
    "version_mismatch",
    "idempotency_key_reused",
    "payload_too_large",
    "unsupported_media_type",
    "too_many_requests",
    "seed_not_allowed",
    "match_not_over",
    "replay_too_long",
    "too_many_matches_created",
    "too_many_waiting_matches",
    "bot_seats_exceeded",
    "not_your_seat",
    "not_creator",
    "match_started",
    "seeded_match",
    "seat_resigned",
    "abort_too_late",
    "rematch_already_accepted",
    "seat_reserved",
    "too_many_followers",
    "invalid_ticket",
    "token_in_url",
    "store_unavailable",
    "archive_unavailable",
    "too_many_exports",
    "players_unavailable",
    "player_not_found",
    "already_seated",
    "wrong_token_kind",
    "bot_accounts_by_apps",
    "rated_match",
    "not_on_leaderboard",
    # the ranked queue (docs/clients/queue.md)
    "unknown_preset",
    "already_queued",
    "in_ranked_match",
    "ticket_not_found",
    "ticket_matched",
    "bot_accounts_only",
    "internal_error",
]


class ProblemSchema(Schema):
    """RFC 9457 problem details, with Ludothèque's stable ``code``."""

    type = fields.String(required=True, metadata={"description": "URI of the problem type"})
    title = fields.String(
        required=True, metadata={"description": "short summary of the problem type"}
    )
    status = fields.Integer(required=True)
    detail = fields.String(required=True, metadata={"description": "what went wrong this time"})
    code = fields.String(
        required=True,
        validate=validate.OneOf(CODES),
        metadata={"description": "stable machine-readable code (see docs/clients/api.md)"},
    )
    errors = fields.Dict(metadata={"description": "per-field validation errors"})
    version = fields.Integer(
        metadata={"description": "on 412 (version_mismatch), always: the match version now"}
    )
    max_waiting = fields.Integer(
        metadata={"description": "on too_many_waiting_matches: the cap of waiting matches"}
    )
    held = fields.Integer(
        metadata={"description": "on bot_seats_exceeded: the live bot seats the address holds"}
    )
    cap = fields.Integer(
        metadata={"description": "on bot_seats_exceeded: the cap of live bot seats per address"}
    )


def problem_response(problem: Problem) -> Response:
    body = {
        "type": PROBLEM_TYPE + problem.code,
        "title": _phrase(problem.status),
        "status": problem.status,
        "detail": problem.detail,
        "code": problem.code,
        **problem.extra,
    }
    response = Response(
        orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS),
        status=problem.status,
        mimetype="application/problem+json",
    )
    response.headers.update(problem.headers)
    return response


def from_http_exception(error: HTTPException) -> Problem:
    status = error.code or 500
    code = HTTP_CODES.get(status, "internal_error" if status >= 500 else "invalid_request")
    data = getattr(error, "data", None) or {}
    extra = {}
    messages = data.get("messages") or data.get("errors")
    if messages:
        extra["errors"] = _flatten_locations(messages)
    detail = data.get("message") or error.description or _phrase(status)
    if messages and status in (400, 422):
        detail = "the request does not match the documented schema"
    headers = dict(data.get("headers") or {})
    if status == 405 and error.get_response().headers.get("Allow"):
        headers["Allow"] = error.get_response().headers["Allow"]
    return Problem(status, code, detail, headers=headers, **extra)


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "error"


def _flatten_locations(messages: dict[str, Any]) -> dict[str, Any]:
    """webargs nests errors under their location ("json"); clients want the fields."""
    if set(messages) <= {"json", "query", "headers", "path", "view_args"}:
        merged: dict[str, Any] = {}
        for per_location in messages.values():
            if isinstance(per_location, dict):
                merged.update(per_location)
        return merged
    return messages


def register_error_handlers(app: Flask) -> None:
    @app.errorhandler(Problem)
    def _problem(problem: Problem) -> Response:
        return problem_response(problem)

    @app.errorhandler(IllegalAction)
    def _illegal(refused: IllegalAction) -> Response:
        return problem_response(from_illegal_action(refused))

    @app.errorhandler(RedisError)
    @app.errorhandler(RedisClusterException)
    @app.errorhandler(NotReplicated)
    def _store(error: Exception) -> Response:
        if not is_store_trouble(error):
            return _unexpected(error)
        log.warning("store unavailable: %s", error)
        return problem_response(
            Problem(
                503,
                "store_unavailable",
                "the game store is unavailable; retry later",
                headers={"Retry-After": "1"},
            )
        )

    @app.errorhandler(DBAPIError)
    def _archive(error: DBAPIError) -> Response:
        if not (error.connection_invalidated or isinstance(error, OperationalError)):
            return _unexpected(error)
        log.warning("archive unavailable: %s", error)
        return problem_response(
            Problem(
                503,
                "archive_unavailable",
                "the archive of finished matches is unavailable; retry later",
                headers={"Retry-After": "5"},
            )
        )

    # orjson.JSONEncodeError is TypeError itself: only orjson's complaint
    # about text is the client's fault; any other TypeError is a bug (500).
    @app.errorhandler(orjson.JSONEncodeError)
    def _not_unicode(error: TypeError) -> Response:
        if "not valid UTF-8" not in str(error):
            return _unexpected(error)
        # e.g. a lone surrogate that a lenient JSON parser let through
        return problem_response(
            Problem(400, "invalid_request", "the body holds text that is not valid Unicode")
        )

    @app.errorhandler(RecursionError)
    def _too_deep(error: RecursionError) -> Response:
        return problem_response(Problem(400, "invalid_request", "the body is nested too deeply"))

    @app.errorhandler(Exception)
    def _unexpected(error: Exception) -> Response:
        log.exception("unexpected error")
        return problem_response(Problem(500, "internal_error", "an unexpected error occurred"))
