"""Webhook deliveries in Redis: the two lanes of matches with something to
deliver, each match's cursor, and what is known of each receiver (the
delivering itself: ``service.background.webhooks``; docs/clients/webhooks.md).

- The first lane ``ludotheque:{hooks}:due`` and the retry lane
  ``ludotheque:{hooks}:retry``: sorted sets in a slot of their own, scored by
  when a match's next delivery is due. A worker leases a match from a lane
  by pushing its score past the lease, so that a dead worker's match comes
  due again.
- ``m:{id}:hook``, in the match's own slot: its cursor (every log entry up
  to it is handled), ``sent`` (the last entry of the last delivery
  acknowledged), its failures in a row and since when it has been failing.
- Per receiver (scheme, host and port), by a digest of it: ``down`` while it
  is failing lately, ``known`` while it is known to answer within the
  patience.
- Per lane, a short list of nudges (``nudge_key``) that wakes a worker's
  idle threads of that lane, one entry for one thread: the scripts push an
  entry when a match comes due in a lane sooner than its idle threads can
  know (queued there due now, or due before every other), and when a claim
  leaves another match due. An idle thread
  waits for one, or for the lane's first score (``take`` tells it), which
  ends a lease or a wait for a retry. An entry pushed while every thread is
  busy stays until one waits: no wake-up is lost.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any
from urllib.parse import urlsplit

from service.store.matches import log_key

# Two lanes in one slot: matches whose receiver answered its last delivery
# (or has had none yet), and matches waiting to retry one that failed.
QUEUE_KEY = "ludotheque:{hooks}:due"
RETRY_KEY = "ludotheque:{hooks}:retry"
# Nudges kept per lane at most: more matches than that coming due at once are
# taken by the threads woken, each taking matches until none is due.
NUDGES = 32

# Shared by the scripts: wake an idle thread of a lane (by its nudge list)
# when ``id`` is first in ``lane``: due before what its threads wait for.
NUDGE = f"""
local function nudge_if_first(lane, id, nudges)
  if redis.call('ZRANGE', lane, 0, 0)[1] == id then
    redis.call('LPUSH', nudges, 1)
    redis.call('LTRIM', nudges, 0, {NUDGES - 1})
  end
end
"""

# KEYS: the lane, its nudges. ARGV: now, lease seconds. Takes the first
# match due by now and pushes it back by the lease, so that if its taker dies
# the match comes due again. {id, false} when one is taken; else {false, the
# lane's first score (false: the lane is empty)}: when to look again unless
# nudged.
CLAIM = f"""
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 2)
if #due == 0 then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {{false, first[2] or false}}
end
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), due[1])
if #due > 1 then
  -- another match is due: for another thread, if one is idle
  redis.call('LPUSH', KEYS[2], 1)
  redis.call('LTRIM', KEYS[2], 0, {NUDGES - 1})
end
return {{due[1], false}}
"""

# KEYS: the first lane, the retry lane, the first lane's nudges. ARGV: now,
# the match. Queue the match in the first lane, due now, unless it is in
# either lane already (leased, or waiting for a retry: its time and lane stand).
ENQUEUE = (
    NUDGE
    + """
if redis.call('ZSCORE', KEYS[1], ARGV[2]) or redis.call('ZSCORE', KEYS[2], ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
nudge_if_first(KEYS[1], ARGV[2], KEYS[3])
return 1
"""
)

# KEYS: one lane, the other, the other's nudges. ARGV: when, the match. Move
# the match to the other lane, due at ``when`` (a retry, or its lease there).
TO_RETRY = (
    NUDGE
    + """
redis.call('ZREM', KEYS[1], ARGV[2])
local added = redis.call('ZADD', KEYS[2], ARGV[1], ARGV[2])
nudge_if_first(KEYS[2], ARGV[2], KEYS[3])
return added
"""
)

# KEYS: the first lane, the retry lane, their nudges. ARGV: when, the match.
# The match comes due again at ``when``, in whichever lane holds it.
POSTPONE = (
    NUDGE
    + """
for i = 1, 2 do
  if redis.call('ZADD', KEYS[i], 'XX', 'CH', ARGV[1], ARGV[2]) == 1 then
    nudge_if_first(KEYS[i], ARGV[2], KEYS[i + 2])
  end
end
return 1
"""
)


def nudge_key(lane: str) -> str:
    """The list that wakes the idle threads of ``lane`` (in its slot)."""
    return f"{lane}:nudge"


LANES_KEYS = [QUEUE_KEY, RETRY_KEY, nudge_key(QUEUE_KEY), nudge_key(RETRY_KEY)]


def hook_key(match_id: str) -> str:
    return f"m:{{{match_id}}}:hook"


def known_key(receiver: str) -> str:
    """Where a receiver (by its down key) is marked as known to answer within
    the patience: only such a receiver is waited for in the first lane."""
    return receiver.replace(":down:", ":known:", 1)


def down_key(url: str) -> str:
    """Where a receiver (scheme, host and port) is marked as failing lately;
    also what names the receiver."""
    parts = urlsplit(url)
    receiver = f"{parts.scheme}://{(parts.hostname or '').lower()}:{parts.port or ''}"
    return "ludotheque:{hooks}:down:" + hashlib.sha256(receiver.encode()).hexdigest()[:32]


def enqueue(client: Any, match_id: str) -> None:
    """Something new to deliver in ``match_id``: due now in the first lane,
    unless it is queued already (leased, or waiting for a retry: its time
    and lane stand)."""
    client.register_script(ENQUEUE)(keys=LANES_KEYS[:3], args=[time.time(), match_id])


class Deliveries:
    """The lanes, the cursors and the receivers' marks of one Redis."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self._claim = client.register_script(CLAIM)
        self._to_retry = client.register_script(TO_RETRY)
        self._enqueue = client.register_script(ENQUEUE)
        self._postpone = client.register_script(POSTPONE)

    # -- the lanes ------------------------------------------------------------------
    def claim(self, lane: str, now: float, lease_s: float) -> str | None:
        """The first match due by ``now`` in ``lane``, leased for ``lease_s``."""
        return self.take(lane, now, lease_s)[0]

    def take(self, lane: str, now: float, lease_s: float) -> tuple[str | None, float | None]:
        """As ``claim``, and when none is due: when the first match of
        ``lane`` comes due, or its lease ends (None: the lane is empty), the
        time to look again unless nudged."""
        claimed, due = self._claim(keys=[lane, nudge_key(lane)], args=[now, lease_s])
        if claimed:
            return claimed.decode(), None
        return None, float(due) if due else None

    def take_nudge(self, lane: str, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` (more than 0; under the client's socket
        timeout) for a nudge of ``lane``, and take it: whether one came. The
        connection is held meanwhile (on a cluster, one to the node serving
        ``{hooks}``)."""
        return self.client.blpop([nudge_key(lane)], timeout_s) is not None

    def nudge(self, lane: str) -> None:
        """Give back a nudge of ``lane`` taken that nobody here can answer."""
        self.client.lpush(nudge_key(lane), 1)

    def enqueue(self, match_id: str) -> None:
        """As ``enqueue``, with the script registered once."""
        self._enqueue(keys=LANES_KEYS[:3], args=[time.time(), match_id])

    def to_retry(self, match_id: str, when: float) -> None:
        """Move ``match_id`` to the retry lane, due at ``when``."""
        keys = [QUEUE_KEY, RETRY_KEY, nudge_key(RETRY_KEY)]
        self._to_retry(keys=keys, args=[when, match_id])

    def to_first(self, match_id: str, when: float) -> None:
        """Move ``match_id`` to the first lane, due at ``when``."""
        keys = [RETRY_KEY, QUEUE_KEY, nudge_key(QUEUE_KEY)]
        self._to_retry(keys=keys, args=[when, match_id])

    def postpone(self, match_id: str, when: float) -> None:
        """``match_id`` comes due again at ``when``, in whichever lane holds it."""
        self._postpone(keys=LANES_KEYS, args=[when, match_id])

    def unqueue(self, match_id: str) -> None:
        pipe = self.client.pipeline(transaction=False)
        pipe.zrem(QUEUE_KEY, match_id)
        pipe.zrem(RETRY_KEY, match_id)
        pipe.execute()

    # -- a match's cursor -------------------------------------------------------------
    def cursor(self, match_id: str) -> tuple[int, int]:
        """``match_id``'s cursor and the last entry acknowledged (0: none)."""
        cursor, sent = self.client.hmget(hook_key(match_id), "cursor", "sent")
        return int(cursor or 0), int(sent or 0)

    def behind(self, match_id: str, cursor: int) -> bool:
        """Whether ``match_id``'s log has entries past ``cursor``."""
        return self.client.xlen(log_key(match_id)) > cursor

    def handled(self, match_id: str, cursor: int, sent: int, ttl: int) -> None:
        """Every entry up to ``cursor`` handled, up to ``sent`` delivered;
        no failure since."""
        pipe = self.client.pipeline(transaction=False)
        pipe.hset(hook_key(match_id), mapping={"cursor": cursor, "sent": sent, "failures": 0})
        pipe.hdel(hook_key(match_id), "since")
        pipe.expire(hook_key(match_id), ttl)
        pipe.execute()

    def failed(
        self, match_id: str, receiver: str, reason: str, now: float, ttl: int, down_s: float
    ) -> tuple[int, float]:
        """A delivery of ``match_id`` failed at ``now``, its ``receiver``
        (by its down key) marked as failing for ``down_s``: the failures in
        a row, and since when it has been failing."""
        key = hook_key(match_id)
        pipe = self.client.pipeline(transaction=False)
        pipe.hincrby(key, "failures", 1)
        pipe.hsetnx(key, "since", now)
        pipe.hget(key, "since")
        pipe.expire(key, ttl)
        pipe.set(receiver, reason, ex=int(down_s))
        failures, _, since, _, _ = pipe.execute()
        return int(failures), float(since)

    # -- receivers, by their down key ---------------------------------------------------
    def receiver(self, receiver: str) -> tuple[bool, bool]:
        """Whether ``receiver`` is failing lately, and whether it is known to
        answer within the patience."""
        pipe = self.client.pipeline(transaction=False)
        pipe.exists(receiver)
        pipe.exists(known_key(receiver))
        failing, known = pipe.execute()
        return bool(failing), bool(known)

    def back(self, receiver: str) -> None:
        """``receiver`` answered again: no longer failing."""
        self.client.delete(receiver)

    def slow(self, receiver: str, down_s: float) -> None:
        """``receiver`` did not answer within the patience: failing for
        ``down_s``, and no longer known to answer in time."""
        pipe = self.client.pipeline(transaction=False)
        pipe.set(receiver, "slow", ex=int(down_s))
        pipe.delete(known_key(receiver))
        pipe.execute()

    def known(self, receiver: str, known_s: float) -> None:
        """``receiver`` answered within the patience: waited for, for ``known_s``."""
        self.client.set(known_key(receiver), "1", ex=int(known_s))
