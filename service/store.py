"""Match state in Redis: load, compare-and-set, event log, idempotency.

One match is a hash ``m:{id}`` with its version ``v`` and its JSON ``d``,
plus a stream ``m:{id}:log`` whose entry ``0-n`` is event number n (from 1),
plus idempotency records ``m:{id}:idem:...``. Every key of a match shares the
hash tag ``{id}``, so a match lives in one Redis Cluster slot and every write
is one Lua script: the version check, the new state, the events, the TTLs and
the idempotency record land together or not at all.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson
import redis
from redis.backoff import ExponentialBackoff
from redis.cluster import RedisCluster
from redis.retry import Retry

from service.limits import Counter, RateLimits

# KEYS: match hash, log stream[, idempotency record]
# ARGV: expected version, new JSON, ttl, idempotency record, idempotency ttl, events...
# Returns the new version and the index of the last event, or {0, current version}.
COMMIT = """
local current = redis.call('HGET', KEYS[1], 'v') or '0'
if current ~= ARGV[1] then
  return {0, tonumber(current)}
end
local version = tonumber(current) + 1
redis.call('HSET', KEYS[1], 'v', version, 'd', ARGV[2])
local n = redis.call('XLEN', KEYS[2])
for i = 6, #ARGV do
  n = n + 1
  redis.call('XADD', KEYS[2], '0-' .. n, 'e', ARGV[i])
end
local ttl = tonumber(ARGV[3])
redis.call('EXPIRE', KEYS[1], ttl)
if n > 0 then
  redis.call('EXPIRE', KEYS[2], ttl)
end
if #KEYS >= 3 then
  redis.call('SET', KEYS[3], ARGV[4], 'EX', tonumber(ARGV[5]))
end
return {version, n}
"""


# KEYS: the due set. ARGV: now, lease seconds. Takes the first match due by
# now and pushes it back by the lease, so that if its taker dies the match
# comes due again; the taker's commit then reschedules it for real.
CLAIM = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1)
if #due == 0 then
  return false
end
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), due[1])
return due[1]
"""

# Matches the server owes a turn (a bot's, or a clock's), scored by when.
DUE_KEY = "ludotheque:due"


@dataclass
class Loaded:
    version: int
    match: dict[str, Any]
    replay: bytes | None  # the idempotency record asked for, if it exists


def match_key(match_id: str) -> str:
    return f"m:{{{match_id}}}"


def log_key(match_id: str) -> str:
    return f"m:{{{match_id}}}:log"


def idempotency_key(match_id: str, owner: str, key: str) -> str:
    """Where the first answer to (``owner``'s) ``Idempotency-Key`` is kept."""
    digest = hashlib.sha256(f"{owner}\0{key}".encode("utf-8", "surrogatepass")).hexdigest()
    return f"m:{{{match_id}}}:idem:{digest}"


def connect(
    url: str, cluster: bool = False, socket_timeout: float = 5, max_connections: int = 200
) -> redis.Redis | RedisCluster:
    """A client with bounded retries on connection errors and timeouts.

    Its pool is bounded and blocking: past ``max_connections`` a request
    waits (up to 5 s) for a free connection instead of failing. With
    ``cluster``, redis-py's cluster client, ``url`` naming any node.
    """
    common: dict[str, Any] = {
        "retry": Retry(ExponentialBackoff(cap=0.5, base=0.01), retries=3),
        "socket_timeout": socket_timeout,
        "socket_connect_timeout": 2,
    }
    if cluster:
        return RedisCluster.from_url(url, max_connections=max_connections, **common)
    pool = redis.BlockingConnectionPool.from_url(
        url,
        max_connections=max_connections,
        timeout=5,
        retry_on_error=[redis.ConnectionError, redis.TimeoutError],
        health_check_interval=30,
        **common,
    )
    return redis.Redis(connection_pool=pool)


class Store:
    def __init__(
        self,
        client: redis.Redis,
        idempotency_ttl: int = 24 * 3600,
        blocking: redis.Redis | None = None,
    ) -> None:
        self.client = client
        # Blocking reads wait longer than the normal socket timeout allows.
        self.blocking = blocking or client
        self.idempotency_ttl = idempotency_ttl
        self._commit = client.register_script(COMMIT)
        self._claim = client.register_script(CLAIM)

    def load(
        self,
        match_id: str,
        replay_key: str | None = None,
        counters: Sequence[Counter] = (),
    ) -> Loaded | None:
        """The match and its version (one round trip), None when unknown.

        ``counters``: the request's rate-limit counters, counted in the same
        round trip (429 when one is over its limit, before anything else).
        """
        if replay_key is None and not counters:
            version, data = self.client.hmget(match_key(match_id), "v", "d")
            replay = None
        else:
            pipe = self.client.pipeline(transaction=False)
            pipe.hmget(match_key(match_id), "v", "d")
            if replay_key is not None:
                pipe.get(replay_key)
            RateLimits.count(pipe, list(counters))
            results = pipe.execute()
            RateLimits.check(list(counters), results[2 if replay_key is not None else 1 :])
            version, data = results[0]
            replay = results[1] if replay_key is not None else None
        if version is None or data is None:
            return None
        return Loaded(int(version), orjson.loads(data), replay)

    def commit(
        self,
        match_id: str,
        expected_version: int,
        match: dict[str, Any],
        events: list[dict[str, Any]],
        ttl: int,
        replay: tuple[str, bytes] | None = None,
    ) -> int | None:
        """Write ``match`` as version ``expected_version + 1`` with its events.

        Returns the new version, or None when the stored version is no longer
        ``expected_version`` (another write won; nothing was written).
        ``expected_version`` 0 creates the match.
        """
        keys = [match_key(match_id), log_key(match_id)]
        args: list[Any] = [expected_version, orjson.dumps(match), ttl, b"", self.idempotency_ttl]
        if replay is not None:
            keys.append(replay[0])
            args[3] = replay[1]
        args.extend(orjson.dumps(event) for event in events)
        version, _ = self._commit(keys=keys, args=args)
        return int(version) or None

    def events(
        self, match_id: str, after: int, limit: int, block_ms: int = 0
    ) -> list[dict[str, Any]]:
        """Events number ``after + 1`` on, at most ``limit``, each with its ``index``.

        With ``block_ms``, wait up to that long for the first one to exist.
        """
        if block_ms <= 0:
            entries = self.client.xrange(log_key(match_id), f"0-{after + 1}", "+", count=limit)
        else:
            found = self.blocking.xread(
                {log_key(match_id): f"0-{after}"}, count=limit, block=block_ms
            )
            entries = found[0][1] if found else []
        return [
            {"index": int(entry_id.split(b"-")[1]), **orjson.loads(fields[b"e"])}
            for entry_id, fields in entries
        ]

    def schedule(self, match_id: str, when: float | None) -> None:
        """The server owes ``match_id`` a turn at ``when`` (None: no longer)."""
        if when is None:
            self.client.zrem(DUE_KEY, match_id)
        else:
            self.client.zadd(DUE_KEY, {match_id: when})

    def claim(self, now: float, lease_s: float) -> str | None:
        """A match whose server turn is due, leased for ``lease_s`` seconds."""
        claimed = self._claim(keys=[DUE_KEY], args=[now, lease_s])
        return claimed.decode() if claimed else None

    def exists(self, match_id: str) -> bool:
        return bool(self.client.exists(match_key(match_id)))

    def ready(self) -> bool:
        """Redis answers and the commit script is loaded (loading it if not)."""
        for script in (self._commit, self._claim):
            if not self.client.script_exists(script.sha)[0]:
                self.client.script_load(script.script)
        return True
