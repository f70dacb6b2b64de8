"""What one address may create: matches per unit of time, and waiting matches.

A waiting match (a seat still open) costs the server memory until it starts
or expires, and one client could otherwise fill Redis with them. So each
creating address may have at most ``max_waiting`` waiting matches at once,
and may create matches at most as often as its creation limits allow
(beside the limits on every request, ``service.http.limits``). A waiting match
expires ``waiting_ttl`` seconds after its last change (the store's TTL);
once every seat is taken it lives as long as any active match.

Per address, Redis holds a sorted set of its waiting matches, each scored by
when it expires, and the creation counters; they share the address's hash
tag, so that one script checks and counts them together, in one round trip,
on Redis Cluster too. A match that starts (or gets a new player) updates
its entry in one more round trip, on that join only.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from limits import RateLimitItem

from service.domain.problems import Problem
from service.store.counters import HIT, parsed

PREFIX = "ludotheque:q"

# KEYS: the address's waiting set, then its creation counters.
# ARGV: now, the new match's id ('' when it starts at once), when it would
# expire, the cap, the set's ttl, then each counter's window, then each
# counter's limit. Answers {0} (admitted), {1, i} (counter i over its limit)
# or {2, when the address's first waiting match expires} (at the cap).
ADMIT = (
    HIT
    + """
local counters = #KEYS - 1
for i = 1, counters do
  if hit(KEYS[1 + i], ARGV[5 + i]) > tonumber(ARGV[5 + counters + i]) then
    return {1, i - 1}
  end
end
if ARGV[2] ~= '' then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
  if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then
    return {2, redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2]}
  end
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
  redis.call('EXPIRE', KEYS[1], ARGV[5])
end
return {0}
"""
)

# KEYS: the waiting set. ARGV: match id, when it now expires ('' once it
# started: it no longer counts), the set's ttl.
JOINED = """
if ARGV[2] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
elseif redis.call('ZADD', KEYS[1], 'XX', 'CH', ARGV[2], ARGV[1]) == 1 then
  redis.call('EXPIRE', KEYS[1], ARGV[3])
end
return 0
"""


def tag(address: str) -> str:
    """The address as a hash tag (braces would end the tag early)."""
    return "{" + address.replace("{", "(").replace("}", ")") + "}"


@dataclass(frozen=True)
class Quotas:
    client: object
    max_waiting: int  # waiting matches per address at once
    waiting_ttl: int  # seconds a waiting match lives after its last change
    per_address: tuple[RateLimitItem, ...]  # creations per address
    # the quotas set for an app's client key (service.http.credentials.AppLimits):
    # its ``creations`` and ``waiting`` replace the per-address ones
    set_for: Callable[[str], dict[str, Any]] | None = None

    @classmethod
    def of(
        cls,
        client: object,
        max_waiting: int,
        waiting_ttl: int,
        creations: str,
        set_for: Callable[[str], dict[str, Any]] | None = None,
    ) -> Quotas:
        return cls(client, max_waiting, waiting_ttl, parsed(creations), set_for)

    def admit(self, address: str, match_id: str | None, now: float) -> None:
        """Count a creation by ``address``, and ``match_id`` among its waiting
        matches (None: it starts at once); 429 when over a limit or the cap."""
        per_address, max_waiting = self.per_address, self.max_waiting
        if self.set_for is not None:
            set_ = self.set_for(address)
            max_waiting = set_.get("waiting", max_waiting)
            if "creations" in set_:
                per_address = parsed(set_["creations"])
        keys = [f"{PREFIX}:waiting:{tag(address)}"]
        windows = []
        for limit in per_address:
            expiry = limit.get_expiry()
            window = int(now // expiry)
            keys.append(f"{PREFIX}:create:{tag(address)}:{limit.amount}/{expiry}:{window}")
            windows.append(expiry)
        args = [now, match_id or "", now + self.waiting_ttl, max_waiting, self.waiting_ttl]
        args += windows + [limit.amount for limit in per_address]
        answer = self.client.eval(ADMIT, len(keys), *keys, *args)
        if int(answer[0]) == 1:
            limit = per_address[int(answer[1])]
            window = limit.get_expiry()
            retry = max(1, math.ceil((now // window + 1) * window - now))
            raise Problem(
                429,
                "too_many_matches_created",
                f"match creation limit reached: {limit}",
                headers={"Retry-After": str(retry)},
            )
        if int(answer[0]) == 2:
            retry = max(1, math.ceil(float(answer[1]) - now))
            raise Problem(
                429,
                "too_many_waiting_matches",
                f"this client already has {max_waiting} matches waiting for players; "
                "one must start or expire first",
                headers={"Retry-After": str(retry)},
                max_waiting=max_waiting,
            )

    def joined(self, address: str, match_id: str, waiting: bool, now: float) -> None:
        """A seat of ``address``'s match was taken: it waits on (until ``now``
        plus the waiting TTL) or, when ``waiting`` is False, has started."""
        expires = now + self.waiting_ttl if waiting else ""
        key = f"{PREFIX}:waiting:{tag(address)}"
        self.client.eval(JOINED, 1, key, match_id, expires, self.waiting_ttl)
