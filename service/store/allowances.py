"""Who holds how many followers (event streams and long polls), in Redis,
so that every worker and every pod counts together (the bounds and their
answers: ``service.live.followers``).

Each holder (a client address, a seat token's hash) has a sorted set
``ludotheque:followers:<scope>:<who>`` of the followers it holds, each
scored by when its lease ends; a follower that ends removes itself, and
one whose process died is forgotten when its lease has run out.
"""

from __future__ import annotations

import time
from typing import Any

import redis

from service.domain.problems import Problem

PREFIX = "ludotheque:followers"

# KEYS: one holder's set of open followers. ARGV: now, this follower's lease
# end, its id, the cap. Forgets expired leases, then adds this one if the
# holder is under its cap: 1 held, 0 refused.
HOLD = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
redis.call('EXPIRE', KEYS[1], math.ceil(ARGV[2] - ARGV[1]) + 1)
return 1
"""


def holder_key(scope: str, who: str) -> str:
    """The followers held by ``who`` (an address, a token's hash) in ``scope``."""
    return f"{PREFIX}:{scope}:{who}"


def scope_of(key: str) -> str:
    return key.split(":")[2]


def hold(client: Any, held: list[tuple[str, int]], member: str, lease_s: float) -> list[bool]:
    """Hold follower ``member`` for up to ``lease_s`` in each holder's set of
    ``held`` (key, cap), in one round trip: whether each was under its cap
    (and now holds it); 503 when the store fails."""
    now = time.time()
    pipe = client.pipeline(transaction=False)
    for key, cap in held:
        pipe.execute_command("EVAL", HOLD, 1, key, now, now + lease_s, member, cap)
    try:
        answers = pipe.execute()
    except redis.RedisError:
        raise Problem(503, "store_unavailable", "the store is unavailable") from None
    return [bool(int(answer)) for answer in answers]


def release(client: Any, keys: list[str], member: str) -> None:
    """Follower ``member`` ended: its holders hold it no more."""
    try:
        pipe = client.pipeline(transaction=False)
        for key in keys:
            pipe.zrem(key, member)
        pipe.execute()
    except redis.RedisError:
        pass  # the lease runs out on its own


def renew(client: Any, keys: list[str], member: str, lease_s: float) -> None:
    """``member``, still held, holds on for ``lease_s`` more."""
    until = time.time() + lease_s
    try:
        pipe = client.pipeline(transaction=False)
        for key in keys:
            pipe.zadd(key, {member: until}, xx=True)
            pipe.expire(key, int(lease_s) + 1)
        pipe.execute()
    except redis.RedisError:
        pass  # held until the lease runs out; the next renewal may reach it
