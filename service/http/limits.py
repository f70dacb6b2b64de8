"""Rate limits per client address and per seat token, counted in Redis so
that every worker and every pod counts together.

Fixed windows, counted in Redis by ``service.store.counters``. The limits
are written as the ``limits`` library parses them (``"1200/minute"``,
``"10/second;500/hour"``). flask-limiter would spend one Redis round trip
per limit on every request; here the counters of a request that reads a
match ride in the pipeline of that read (``Store.load``), or, for an action
on a match the process remembers, in the script of its write
(``Store.commit``), so limits cost no round trip of their own; the other
requests count both limits in one pipelined round trip before they run.

Over a limit: 429 problem+json with Retry-After (the seconds left in the
window). Probes and metrics are exempt. When Redis fails while counting
before a request, the request passes (the store's own errors answer 503).
A request to a match that its route refuses before reading the match (a
malformed id, a missing token) is counted once its answer is ready, and
that answer becomes the 429 when a limit is over: no request goes uncounted.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from flask import Flask, Response, g, has_request_context, request

from service.domain.problems import Problem
from service.http.caching import request_header
from service.http.errors import problem_response
from service.store.counters import Counter, RateLimits

EXEMPT_PATHS = {"/healthz", "/readyz", "/metrics"}


def pending_counters() -> list[Counter]:
    """The current request's counters not counted yet, which its match read
    takes over (and counts); empty outside a request or when limits are off."""
    if not has_request_context():
        return []
    return g.pop("rate_limit_counters", [])


def init_limits(
    app: Flask, client: Any, set_for: Callable[[str], dict[str, Any]] | None = None
) -> None:
    """Count every request against its limits (unless RATELIMIT_ENABLED is
    off); ``set_for``: the quotas an app has set (its client key's)."""
    if not app.config["RATELIMIT_ENABLED"]:
        return
    limits = RateLimits(
        client,
        app.config["RATE_LIMIT_PER_ADDRESS"],
        app.config["RATE_LIMIT_PER_TOKEN"],
        set_for,
    )

    @app.before_request
    def before() -> None:
        if request.path in EXEMPT_PATHS:
            return
        header = request_header("Authorization")
        token = header.partition(" ")[2].strip() if header else None
        counters = limits.counters(request.remote_addr or "unknown", token, time.time())
        if request.view_args and "match_id" in request.view_args:
            g.rate_limit_counters = counters  # counted by the match read
        else:
            limits.hit_now(counters)

    @app.after_request
    def after(response: Response) -> Response:
        leftover = pending_counters()
        if leftover:
            try:
                limits.hit_now(leftover)
            except Problem as over:
                return problem_response(over)
        return response
