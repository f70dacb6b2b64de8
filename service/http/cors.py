"""CORS for a bearer-token API.

No cookie or other ambient credential is ever used (a seat's token travels
in ``Authorization``, or as a stream ticket), so any origin may call: every
answer, errors and 429s included, says ``Access-Control-Allow-Origin: *``
unless ``CORS_ORIGINS`` narrows it to a list. Preflights are answered here,
before the rate limits (which never count them), with every header the API
takes, and may be cached for a day (Chromium keeps them 2 hours, its most):
as a browser caches a preflight per URL, a page playing a match needs one
per operation it uses, not one per request (issue 17).
"""

from __future__ import annotations

from flask import Flask, Response, request

from service.domain.problems import Problem
from service.http.caching import add_vary, put_headers, request_header

REQUEST_HEADERS = [
    "Authorization",
    "Content-Type",
    "If-Match",
    "If-None-Match",
    "Idempotency-Key",
    "Last-Event-ID",
    "X-Request-ID",
]
RESPONSE_HEADERS = [
    "ETag",
    "Location",
    "Retry-After",
    "X-Request-ID",
    "Idempotent-Replayed",
]  # (no X-RateLimit-* header is sent: a 429's Retry-After says when to come back)
METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
MAX_AGE_S = 86400  # Firefox's most; Chromium caps it at 7200
# Every answer carries these: joined once, not once per answer.
EXPOSED = ", ".join(RESPONSE_HEADERS)
PREFLIGHT = {
    "Access-Control-Allow-Methods": METHODS,
    "Access-Control-Allow-Headers": ", ".join(REQUEST_HEADERS),
    "Access-Control-Max-Age": str(MAX_AGE_S),
}


def init_cors(app: Flask, origins: list[str]) -> None:
    """Answer preflights and mark every answer; register before anything
    that may refuse a request, so that its refusals carry CORS headers too."""
    allowed = set(origins)

    def allow_origin() -> str | None:
        origin = request_header("Origin")
        if origin is None:
            return "*" if not allowed else None
        if not allowed:
            return "*"
        return origin if origin in allowed else None

    @app.before_request
    def preflight() -> Response | None:
        if request.method != "OPTIONS" or "Access-Control-Request-Method" not in request.headers:
            return None
        return Response(status=204)

    @app.after_request
    def mark(response: Response) -> Response:
        origin = allow_origin()
        if allowed:
            add_vary(response, "Origin")
        if origin is None:
            return response
        marks = {"Access-Control-Allow-Origin": origin, "Access-Control-Expose-Headers": EXPOSED}
        if request.method == "OPTIONS" and "Access-Control-Request-Method" in request.headers:
            marks |= PREFLIGHT
        put_headers(response, marks)
        return response


def body_version() -> int | None:
    """``if_version`` taken out of a JSON action body: the version an action
    is conditional on, as ``If-Match`` says it. A browser sends a request
    with ``If-Match`` (any ``If-*`` header) past its preflight cache, so a
    page that plays conditionally would need a preflight per action; in the
    body, the version costs none."""
    body = request.get_json(force=True, silent=True)
    if not isinstance(body, dict) or "if_version" not in body:
        return None
    version = body.pop("if_version")
    if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version < 10**18:
        raise Problem(400, "invalid_request", "if_version must be a version number, like 7")
    return version
