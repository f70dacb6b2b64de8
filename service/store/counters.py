"""Rate-limit counters in Redis: fixed windows, counted by every worker and
every pod together (``service.http.limits`` decides which requests count).

A counter per (scope, client, window) that Redis expires with its window.
The limits are written as the ``limits`` library parses them
(``"1200/minute"``, ``"10/second;500/hour"``). A request's counters ride in
the pipeline of its match read (``Store.load``), or in the script of its
write (``Store.commit``), or are counted on their own in one pipelined round
trip (``RateLimits.hit_now``).
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable
from typing import Any, NamedTuple

import redis
from limits import RateLimitItem, parse_many

from service.domain.problems import Problem
from service.domain.tokens import token_hash

log = logging.getLogger(__name__)

PREFIX = "ludotheque:rl"

# Lua: one hit on a counter; its expiry is set on its window's first hit, so
# that no counter is ever left without one. Every script that counts starts
# with it (``INCREMENT`` here, the write's in ``service.store.matches``, the
# creation quotas' in ``service.store.quotas``).
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


class Counter(NamedTuple):
    """One request's hit on one limit: its key for the current window (a
    tuple: a request makes two or more, and a frozen dataclass took a
    microsecond each)."""

    key: str
    limit: RateLimitItem
    retry_after: int


def key_start(scope: str, limit: RateLimitItem) -> str:
    """What the keys of ``limit``'s counters in ``scope`` start with."""
    return f"{PREFIX}:{scope}:{limit.amount}/{limit.get_expiry()}:"


@functools.lru_cache(maxsize=256)
def parsed(limits: str) -> tuple[RateLimitItem, ...]:
    return tuple(parse_many(limits))


@functools.lru_cache(maxsize=256)
def scoped_limits(
    scope: str, limits: tuple[RateLimitItem, ...]
) -> list[tuple[str, RateLimitItem, int]]:
    return [(key_start(scope, limit), limit, limit.get_expiry()) for limit in limits]


class RateLimits:
    """The limits of one app and the Redis client that counts them."""

    def __init__(
        self,
        client: Any,
        per_address: str,
        per_token: str,
        set_for: Callable[[str], dict[str, Any]] | None = None,
    ) -> None:
        """``set_for(address)``: the quotas set for an app's client key
        (``service.http.credentials.AppLimits``): its ``requests`` replace
        the limits per address."""
        self.client = client
        self.per_address = parsed(per_address)
        self.per_token = parsed(per_token)
        self.set_for = set_for
        # each limit with the start of its counters' keys and its window, once
        self.scoped = {
            scope: scoped_limits(scope, limits)
            for scope, limits in (("address", self.per_address), ("token", self.per_token))
        }

    def counters(self, address: str, token: str | None, now: float) -> list[Counter]:
        """The counters a request from ``address`` (with ``token``) hits."""
        per_address = self.scoped["address"]
        if self.set_for is not None:
            requests = self.set_for(address).get("requests")
            if requests is not None:
                per_address = scoped_limits("address", parsed(requests))
        scoped = [(address, limit) for limit in per_address]
        if token is not None:
            holder = token_hash(token)
            scoped += [(holder, limit) for limit in self.scoped["token"]]
        found = []
        for who, (prefix, limit, expiry) in scoped:
            window = int(now // expiry)
            # ceil: a request made Retry-After seconds later is in the next window
            retry_after = max(1, math.ceil((window + 1) * expiry - now))
            found.append(Counter(f"{prefix}{who}:{window}", limit, retry_after))
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
        """Count ``counters`` in one round trip and refuse when over; when
        Redis fails, let the request pass (the store's own errors answer 503)."""
        pipe = self.client.pipeline(transaction=False)
        self.count(pipe, counters)
        try:
            results = pipe.execute()
        except redis.RedisError:
            log.warning("rate limits not counted: Redis failed", exc_info=True)
            return
        self.check(counters, results)
