"""Rate limits per client address and per seat token, counted in Redis so
that every worker and every pod counts together.

Fixed windows: a counter per (scope, client, window) that Redis expires with
its window. The limits are written as the ``limits`` library parses them
(``"1200/minute"``, ``"10/second;500/hour"``). flask-limiter would spend one
Redis round trip per limit on every request; here the counters of a request
that reads a match ride in the pipeline of that read (``Store.load``), or,
for an action on a match the process remembers, in the script of its write
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

import logging
import math
import time
from dataclasses import dataclass
from typing import Any

import redis
from flask import Flask, Response, g, has_request_context, request
from limits import RateLimitItem, parse_many

from service.domain.problems import Problem
from service.domain.tokens import token_hash
from service.http.errors import problem_response

log = logging.getLogger(__name__)

EXEMPT_PATHS = {"/healthz", "/readyz", "/metrics"}
PREFIX = "ludotheque:rl"

# Lua: one hit on a counter; its expiry is set on its window's first hit, so
# that no counter is ever left without one. Every script that counts starts
# with it (``INCREMENT`` here, the write's in ``service.store.matches``).
HIT = """
local function hit(counter, window)
  local hits = redis.call('INCR', counter)
  if hits == 1 then
    redis.call('EXPIRE', counter, window)
  end
  return hits
end
"""

# KEYS: a counter. ARGV: its window in seconds. The count: one command. EVAL
# rather than EVALSHA: redis-py checks a registered script's existence (one
# more round trip) on every pipeline that runs it; Redis caches the body.
INCREMENT = HIT + "return hit(KEYS[1], ARGV[1])\n"


@dataclass(frozen=True)
class Counter:
    """One request's hit on one limit: its key for the current window."""

    key: str
    limit: RateLimitItem
    retry_after: int


class RateLimits:
    """The limits of one app and the Redis client that counts them."""

    def __init__(self, client: Any, per_address: str, per_token: str) -> None:
        self.client = client
        self.per_address = parse_many(per_address)
        self.per_token = parse_many(per_token)

    def counters(self, address: str, token: str | None, now: float) -> list[Counter]:
        """The counters a request from ``address`` (with ``token``) hits."""
        scoped = [("address", address, limit) for limit in self.per_address]
        if token is not None:
            scoped += [("token", token_hash(token), limit) for limit in self.per_token]
        found = []
        for scope, who, limit in scoped:
            expiry = limit.get_expiry()
            window = int(now // expiry)
            found.append(
                Counter(
                    f"{PREFIX}:{scope}:{limit.amount}/{expiry}:{who}:{window}",
                    limit,
                    # ceil: a request made Retry-After seconds later is in the next window
                    max(1, math.ceil((window + 1) * expiry - now)),
                )
            )
        return found

    @staticmethod
    def count(pipe: Any, counters: list[Counter]) -> None:
        """Queue the increments of ``counters`` on ``pipe``: one command each
        (a script that increments and, on the window's first hit, sets the
        expiry), whose result is the count."""
        for counter in counters:
            # (the command itself: redis-py's cluster pipeline has no eval())
            pipe.execute_command("EVAL", INCREMENT, 1, counter.key, counter.limit.get_expiry())

    @staticmethod
    def check(counters: list[Counter], results: list[Any]) -> None:
        """Raise 429 when a count (one result per counter) is over its limit."""
        for counter, hits in zip(counters, results, strict=True):
            if int(hits) > counter.limit.amount:
                raise Problem(
                    429,
                    "too_many_requests",
                    f"rate limit reached: {counter.limit}",
                    headers={"Retry-After": str(counter.retry_after)},
                )

    def hit_now(self, counters: list[Counter]) -> None:
        """Count ``counters`` in one round trip and refuse when over."""
        pipe = self.client.pipeline(transaction=False)
        self.count(pipe, counters)
        try:
            results = pipe.execute()
        except redis.RedisError:
            log.warning("rate limits not counted: Redis failed", exc_info=True)
            return
        self.check(counters, results)


def pending_counters() -> list[Counter]:
    """The current request's counters not counted yet, which its match read
    takes over (and counts); empty outside a request or when limits are off."""
    if not has_request_context():
        return []
    return g.pop("rate_limit_counters", [])


def init_limits(app: Flask, client: Any) -> None:
    """Count every request against its limits (unless RATELIMIT_ENABLED is off)."""
    if not app.config["RATELIMIT_ENABLED"]:
        return
    limits = RateLimits(
        client, app.config["RATE_LIMIT_PER_ADDRESS"], app.config["RATE_LIMIT_PER_TOKEN"]
    )

    @app.before_request
    def before() -> None:
        if request.path in EXEMPT_PATHS:
            return
        header = request.headers.get("Authorization")
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
