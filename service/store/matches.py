"""Match state in Redis: load, compare-and-set, event log, idempotency.

One match is a hash ``m:{id}`` with its version ``v`` and its JSON ``d``,
plus a stream ``m:{id}:log`` whose entry ``0-n`` is event number n (from 1),
plus idempotency records ``m:{id}:idem:...``. Every key of a match shares the
hash tag ``{id}``, so a match lives in one Redis Cluster slot and every write
is one Lua script: the version check, the new state, the events, the TTLs and
the idempotency record land together or not at all.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import orjson
import redis
from redis.backoff import ExponentialBackoff
from redis.cluster import RedisCluster
from redis.retry import Retry

from service.domain.ports import Loaded, NotReplicated, Written
from service.store.counters import HIT, Counter, RateLimits
from service.store.readiness import HiredisParser
from service.store.sentinel import SENTINEL_SCHEMES, sentinel_client

# KEYS: match hash, log stream, then the idempotency record (if ARGV[6] is
# 1), then the rate-limit counters (ARGV[7] of them).
# ARGV: expected version, new JSON, ttl, idempotency record, idempotency ttl,
# has record, counters, each counter's window in seconds, then the events.
# In order: count the request against its limits ({3, i, hits}: counter i is
# over, nothing written); answer an existing idempotency record ({2, it});
# on another version, answer it with its JSON ({0, version, json}), so that
# the caller can try again without reading; else write ({1, version, n}).
COMMIT = (
    HIT
    + """
local has_record = ARGV[6] == '1'
local counters = tonumber(ARGV[7])
local first_counter = has_record and 4 or 3
for i = 0, counters - 1 do
  local hits = hit(KEYS[first_counter + i], ARGV[8 + i])
  if hits > tonumber(ARGV[8 + counters + i]) then
    return {3, i, hits}
  end
end
if has_record then
  local replay = redis.call('GET', KEYS[3])
  if replay then
    return {2, replay}
  end
end
local current = redis.call('HGET', KEYS[1], 'v') or '0'
if current ~= ARGV[1] then
  return {0, tonumber(current), redis.call('HGET', KEYS[1], 'd') or ''}
end
local version = tonumber(current) + 1
redis.call('HSET', KEYS[1], 'v', version, 'd', ARGV[2])
local n = redis.call('XLEN', KEYS[2])
for i = 8 + 2 * counters, #ARGV do
  n = n + 1
  redis.call('XADD', KEYS[2], '0-' .. n, 'e', ARGV[i])
end
local ttl = tonumber(ARGV[3])
if ttl > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
  if n > 0 then
    redis.call('EXPIRE', KEYS[2], ttl)
  end
else
  -- 0: kept until archived (service.store.archiving), which sets its TTL then
  redis.call('PERSIST', KEYS[1])
  redis.call('PERSIST', KEYS[2])
end
if has_record then
  redis.call('SET', KEYS[3], ARGV[4], 'EX', tonumber(ARGV[5]))
end
if #ARGV >= 8 + 2 * counters then
  -- the push hubs' wake-up (service.store.wakeups): the match's new last index
  redis.call('PUBLISH', KEYS[1] .. ':wake', n)
end
return {1, version, n}
"""
)


# How many matches a process remembers (the JSON it last read or wrote):
# a few MB at most, for one round trip less per action on each of them.
REMEMBERED = 1024


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
    ``cluster``, redis-py's cluster client, ``url`` naming any node; with
    a ``redis+sentinel://`` URL, the primary the Sentinels name.
    """
    common: dict[str, Any] = {
        "retry": Retry(ExponentialBackoff(cap=0.5, base=0.01), retries=3),
        "socket_timeout": socket_timeout,
        "socket_connect_timeout": 2,
        "parser_class": HiredisParser,
    }
    if cluster:
        return RedisCluster.from_url(url, max_connections=max_connections, **common)
    if url.startswith(SENTINEL_SCHEMES):
        return sentinel_client(url, max_connections, **common)
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
        min_replicas: int = 0,
        replicas_timeout_ms: int = 1000,
    ) -> None:
        self.client = client
        # A write is confirmed once this many replicas have it (WAIT).
        self.min_replicas = min_replicas
        self.replicas_timeout_ms = replicas_timeout_ms
        self.idempotency_ttl = idempotency_ttl
        # a match's wake-up channel shares its slot: sharded pub/sub on a cluster
        sharded = isinstance(client, RedisCluster)
        self._commit = client.register_script(
            COMMIT.replace("'PUBLISH'", "'SPUBLISH'") if sharded else COMMIT
        )
        # The match JSON this process last read or wrote, by id: a write can
        # start from it and skip its read, the compare-and-set guarding it.
        # Not on a cluster, where the rate-limit counters live in other slots
        # than the match and so cannot be counted by the write's script.
        self.remembers = not isinstance(client, RedisCluster)
        self._remembered: OrderedDict[str, tuple[int, bytes]] = OrderedDict()
        self._remembering = threading.Lock()

    def _remember(self, match_id: str, version: int, data: bytes) -> None:
        if self.remembers:
            with self._remembering:  # threads share a store (tests, the bot worker)
                self._remembered[match_id] = (version, data)
                self._remembered.move_to_end(match_id)
                if len(self._remembered) > REMEMBERED:
                    self._remembered.popitem(last=False)

    def remembered(self, match_id: str) -> Loaded | None:
        """The match as this process last read or wrote it, if it remembers;
        perhaps no longer current (a write from it will tell)."""
        found = self._remembered.get(match_id)
        if found is None:
            return None
        return Loaded(found[0], orjson.loads(found[1]), None)

    def written(self, match_id: str, version: int) -> tuple[int, bytes] | None:
        """The match's JSON at ``version``, if that is what this process
        remembers of it (as it has just written it); no read, no copy."""
        found = self._remembered.get(match_id)
        return found if found is not None and found[0] == version else None

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
        if replay is not None and self.min_replicas:
            key = match_key(match_id)
            self.replicate(key, lambda pipe: pipe.expire(replay_key, self.idempotency_ttl))
        if version is None or data is None:
            return None
        self._remember(match_id, int(version), data)
        return Loaded(int(version), orjson.loads(data), replay)

    def commit(
        self,
        match_id: str,
        expected_version: int,
        match: dict[str, Any],
        events: list[dict[str, Any]],
        ttl: int,
        replay: tuple[str, bytes] | None = None,
        counters: Sequence[Counter] = (),
    ) -> Written:
        """Write ``match`` as version ``expected_version + 1`` with its events
        (``expected_version`` 0 creates it), in one round trip.

        First count ``counters`` (429 when one is over: nothing written;
        only where the store ``remembers``), then answer the idempotency
        record ``replay`` names if it exists; else write ``match`` and
        ``replay``'s record, unless the stored version is no longer
        ``expected_version``: then nothing is written and the match comes
        back as it is now (another write won).
        """
        data = orjson.dumps(match)
        keys = [match_key(match_id), log_key(match_id)]
        args: list[Any] = [expected_version, data, ttl, b"", self.idempotency_ttl]
        if replay is not None:
            keys.append(replay[0])
            args[3] = replay[1]
        keys += [counter.key for counter in counters]
        args += [1 if replay is not None else 0, len(counters)]
        args += [counter.limit.get_expiry() for counter in counters]
        args += [counter.limit.amount for counter in counters]
        args.extend(orjson.dumps(event) for event in events)
        if self.min_replicas:
            answer = self._commit_replicated(keys, args)
        else:
            answer = self._run_commit(keys, args)
        kind = int(answer[0])
        if kind == 3:
            RateLimits.check([counters[int(answer[1])]], [answer[2]])  # raises the 429
            raise AssertionError("a counter over its limit answers 429")
        if kind == 2:
            return Written(replay=answer[1])
        if kind == 0:
            version, current = int(answer[1]), answer[2]
            if not current:  # the match is gone (or, at version 0, not made yet)
                with self._remembering:
                    self._remembered.pop(match_id, None)
                return Written()
            self._remember(match_id, version, current)
            return Written(current=Loaded(version, orjson.loads(current), None))
        version = int(answer[1])
        self._remember(match_id, version, data)
        return Written(version=version, last=int(answer[2]))

    def _run_commit(self, keys: list[Any], args: list[Any]) -> Any:
        """The commit script's answer: ``EVALSHA``, loading the script when
        Redis lacks it, as ``Script.__call__`` does, without its per-call
        import and its ``isinstance`` check of a Protocol (1 % of an API
        worker's CPU under bench.peer)."""
        script = self._commit
        try:
            return self.client.evalsha(script.sha, len(keys), *keys, *args)
        except redis.exceptions.NoScriptError:  # a new primary, or a flushed cache
            script.sha = self.client.script_load(script.script)
            return self.client.evalsha(script.sha, len(keys), *keys, *args)

    def _commit_replicated(self, keys: list[Any], args: list[Any]) -> Any:
        """The commit script's answer, once ``min_replicas`` replicas have
        its write; NotReplicated (503) when they do not say so in time."""

        def queue(pipe: redis.client.Pipeline) -> None:
            pipe.evalsha(self._commit.sha, len(keys), *keys, *args)

        try:
            (answer,) = self.replicate(keys[0], queue)
        except redis.exceptions.NoScriptError:  # a new primary, or a flushed cache
            self._primary(keys[0]).script_load(self._commit.script)
            (answer,) = self.replicate(keys[0], queue)
        if int(answer[0]) == 2:
            # the record answered may be one an earlier try left unconfirmed
            self.replicate(keys[0], lambda pipe: pipe.expire(keys[2], self.idempotency_ttl))
        return answer

    def replicate(self, key: str, queue: Callable[[Any], None]) -> list[Any]:
        """Run what ``queue`` puts in a pipeline on the primary holding
        ``key``, then WAIT on that same connection (WAIT counts the
        replicas that have this connection's writes)."""
        primary = self._primary(key)
        pipe = primary.pipeline(transaction=False)
        queue(pipe)
        pipe.execute_command("WAIT", self.min_replicas, self.replicas_timeout_ms)
        try:
            *results, copies = pipe.execute()
        except (redis.ConnectionError, redis.TimeoutError, redis.exceptions.MovedError):
            if isinstance(self.client, RedisCluster):
                self._refresh_topology()
            raise
        if int(copies) < self.min_replicas:
            applied = bool(results) and isinstance(results[0], list) and int(results[0][0]) == 1
            raise NotReplicated(
                f"{copies} of {self.min_replicas} replicas confirmed the write "
                f"within {self.replicas_timeout_ms} ms",
                applied=applied,
            )
        return results

    def _primary(self, key: str) -> redis.Redis:
        """A client of the primary that holds ``key``: on a cluster, the
        node serving its slot; elsewhere the client itself."""
        if isinstance(self.client, RedisCluster):
            node = self.client.get_node_from_key(key)
            return self.client.get_redis_connection(node)
        return self.client

    def _refresh_topology(self) -> None:
        """Learn the cluster's slots again (a primary died or moved)."""
        # still failing over: the next request tries again
        with contextlib.suppress(redis.RedisError, redis.exceptions.RedisClusterException):
            self.client.nodes_manager.initialize()

    def log_end(self, match_id: str) -> int:
        """The index of the match's last event (0: none)."""
        last = self.client.xrevrange(log_key(match_id), "+", "-", count=1)
        return int(last[0][0].split(b"-")[1]) if last else 0

    def forget_in(self, match_id: str, ttl: int) -> None:
        """Let ``match_id`` (its hash and its log) expire in ``ttl`` seconds:
        it is archived."""
        pipe = self.client.pipeline(transaction=False)
        pipe.expire(match_key(match_id), ttl)
        pipe.expire(log_key(match_id), ttl)
        pipe.execute()

    def events(self, match_id: str, after: int, limit: int) -> list[dict[str, Any]]:
        """Events number ``after + 1`` on, at most ``limit``, each with its
        ``index``. (Nothing here waits: followers wait on the push hub.)"""
        entries = self.client.xrange(log_key(match_id), f"0-{after + 1}", "+", count=limit)
        return [logged(entry_id, fields) for entry_id, fields in entries]

    def events_after(self, starts: dict[str, int], limit: int) -> dict[str, list[dict[str, Any]]]:
        """For each match of ``starts``, its events after the index given
        there, at most ``limit``: one pipelined round trip for them all."""
        pipe = self.client.pipeline(transaction=False)
        for match_id, after in starts.items():
            pipe.xrange(log_key(match_id), f"0-{after + 1}", "+", count=limit)
        return {
            match_id: [logged(entry_id, fields) for entry_id, fields in entries]
            for match_id, entries in zip(starts, pipe.execute(), strict=True)
        }

    def log_lengths(self, match_ids: list[str]) -> list[int]:
        """How many entries each match's log holds (0: none, or gone), in
        one pipelined round trip."""
        pipe = self.client.pipeline(transaction=False)
        for match_id in match_ids:
            pipe.xlen(log_key(match_id))
        return [int(length) for length in pipe.execute()]

    def exists(self, match_id: str) -> bool:
        return bool(self.client.exists(match_key(match_id)))

    def ready(self) -> bool:
        """Redis answers and the commit script is loaded (loading it if not)."""
        for script in (self._commit,):
            if not self.client.script_exists(script.sha)[0]:
                self.client.script_load(script.script)
        return True


# Events logged before failed outside calls stopped saying why (issue 31,
# point 11) carried the reason ('dns', 'internal_address', ...): read back,
# they say what the events written since say.
PUBLIC_REASON = "call_failed"  # all that a match's events say of a failed call
WHY_NOT_SHOWN = {"bot_timeout", "webhook_given_up"}


def logged(entry_id: bytes, fields: dict[bytes, bytes]) -> dict[str, Any]:
    """Log entry ``entry_id`` as an event, with its ``index``."""
    event = {"index": int(entry_id.split(b"-")[1]), **orjson.loads(fields[b"e"])}
    if event["type"] in WHY_NOT_SHOWN and event.get("reason") != PUBLIC_REASON:
        event["reason"] = PUBLIC_REASON
    return event
