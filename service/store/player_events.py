"""Each player's own events (``GET /v1/players/me/events``), and the app
webhook's owed calls (``service.background.app_webhooks``).

A player's events: ``ldq:events:{p-<player>}``, a Redis stream, capped at
about ``KEPT`` entries (``XADD ... MAXLEN ~``) and kept ``TTL_S`` after its
last event. Its hash tag is the push hub's name for the player
(``wake_id``): the wake-up channel ``m:{p-<player>}:wake`` shares its slot.
An event's ``index`` is its stream id ``<ms>-<seq>`` as one number,
``ms * 1000 + seq``: it only grows, even after the stream expired and
started again.

Events: ``ticket_matched`` {ticket, game, preset, match: {id, seat}}
(``service.store.queue.Queue.matched``), ``ticket_expired`` {ticket, game,
preset} (the queue's expiries), ``rated`` {game, match, before, after}
(``service.store.ratings.Ratings.apply``, only for a change that lands).

The types in ``HOOKED`` also owe a call to the player's app's webhook, if
it has one: a job in ``ldq:{apphooks}:due``, a sorted set (its own slot)
scored by when it is due, member the job as JSON (player, event, attempt).
A worker takes a due job by pushing its score past a lease, so that a dead
worker's job comes due again; ``ldq:{apphooks}:nudge`` wakes an idle one.
The set is capped at ``JOBS_KEPT`` jobs: past that a job is dropped (and
logged), not queued.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import orjson
from redis.cluster import RedisCluster

from service.store.wakeups import wake_channel

log = logging.getLogger(__name__)

PREFIX = "ldq"
KEPT = 100  # events kept per player, about (MAXLEN ~)
TTL_S = 7 * 24 * 3600  # a player's events live this long after the last one
HOOKED = ("ticket_matched", "rated")  # the events an app's webhook is called with
JOBS = f"{PREFIX}:{{apphooks}}:due"
NUDGE = f"{PREFIX}:{{apphooks}}:nudge"
NUDGES_KEPT = 16
JOBS_KEPT = 100_000

# KEYS: the jobs. ARGV: now, lease (s). The first job due by now, its
# score pushed past the lease; else false and the first score (or false).
TAKE = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1)
if #due == 0 then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {false, first[2] or false}
end
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), due[1])
return {due[1], false}
"""


def wake_id(player_id: str) -> str:
    """The push hub's name for a player's events: channel ``m:{p-<id>}:wake``."""
    return f"p-{player_id}"


def events_key(player_id: str) -> str:
    return f"{PREFIX}:events:{{{wake_id(player_id)}}}"


def index_of(stream_id: bytes | str) -> int:
    ms, _, seq = (stream_id.decode() if isinstance(stream_id, bytes) else stream_id).partition("-")
    return int(ms) * 1000 + int(seq)


def stream_id(index: int) -> str:
    return f"{index // 1000}-{index % 1000}"


class PlayerEvents:
    """Every player's events, in the Redis ``client``."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.sharded = isinstance(client, RedisCluster)
        self._take = client.register_script(TAKE)

    def append(self, player_id: str, event: dict[str, Any]) -> int:
        """Append ``event`` (its ``type`` included) to the player's events and
        wake its long polls; a hooked type also owes the app's webhook a
        call. Its index."""
        key = events_key(player_id)
        body = orjson.dumps(event)
        channel = wake_channel(wake_id(player_id))
        pipe = self.client.pipeline(transaction=False)
        pipe.xadd(key, {"e": body}, maxlen=KEPT, approximate=True)
        pipe.expire(key, TTL_S)
        if not self.sharded:
            pipe.publish(channel, 1)
        found = pipe.execute()[0]
        if self.sharded:  # the channel is in the stream's slot, on the node that holds it
            self.client.spublish(channel, 1)
        index = index_of(found)
        if event["type"] in HOOKED:
            self.owe(player_id, dict(event, index=index))
        return index

    def after(self, player_id: str, index: int, limit: int = KEPT) -> list[dict[str, Any]]:
        """The player's events after ``index``, oldest first, each with its ``index``."""
        found = self.client.xrange(
            events_key(player_id), min=f"({stream_id(index)}", max="+", count=limit
        )
        return [dict(orjson.loads(fields[b"e"]), index=index_of(i)) for i, fields in found]

    # -- the app webhook's owed calls ------------------------------------------------
    def owe(
        self, player_id: str, event: dict[str, Any], attempt: int = 0, when: float = 0
    ) -> None:
        """A call owed to the player's app's webhook (if it has one: the worker
        looks), due at ``when`` (0: now)."""
        job = orjson.dumps({"player": player_id, "event": event, "attempt": attempt})
        if self.client.zcard(JOBS) >= JOBS_KEPT:
            log.warning("app webhook jobs full: %s's %s dropped", player_id, event["type"])
            return
        pipe = self.client.pipeline(transaction=False)
        pipe.zadd(JOBS, {job: when or time.time()})
        pipe.lpush(NUDGE, 1)
        pipe.ltrim(NUDGE, 0, NUDGES_KEPT - 1)
        pipe.execute()

    def take(self, now: float, lease_s: float) -> tuple[bytes | None, float | None]:
        """A due job (leased for ``lease_s``), else None and when the first is due."""
        job, first = self._take(keys=[JOBS], args=[now, lease_s])
        return job, None if first is None else float(first)

    def done(self, job: bytes) -> None:
        self.client.zrem(JOBS, job)

    def again(self, job: bytes, when: float) -> None:
        """The job's call failed: its next attempt at ``when``."""
        found = orjson.loads(job)
        self.client.zrem(JOBS, job)
        self.owe(found["player"], found["event"], found["attempt"] + 1, when)

    def again_at(self, job: bytes, when: float) -> None:
        """The job, not tried yet, due again at ``when``."""
        self.client.zadd(JOBS, {job: when})

    def take_nudge(self, timeout_s: float) -> bool:
        return self.client.blpop([NUDGE], timeout=max(timeout_s, 0.01)) is not None

    def give_back(self) -> None:
        self.client.lpush(NUDGE, 1)
