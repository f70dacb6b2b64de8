"""The archive's queue in Redis: the finished matches not archived yet.

A match that a write is about to finish is ``expect``-ed first, due a few
seconds later (``GRACE_S``); once the write has landed it is ``ready``, due
at once, and a nudge wakes an idle archiver. So a finished match is always
queued, even when the process that finished it dies between its write and
what follows (the expected entry comes due by itself), and an archiver
that finds a match not finished after all (the write lost a race, or was
refused) looks at it again later, until it is finished or gone.

An archiver ``take``-s the earliest due match and leases it (its score
moves ``lease_s`` ahead): if the archiver dies, the lease runs out and
another takes it over; archiving is idempotent by match id
(``service.store.archive``). ``done`` unqueues it only if no later write
queued it again meanwhile.

All keys share the hash tag ``{archive}``: one slot on a Redis Cluster.
"""

from __future__ import annotations

import redis

PREFIX = "ludotheque:{archive}"
DUE = f"{PREFIX}:due"  # sorted set: match id -> when it is due (or its lease ends)
NUDGE = f"{PREFIX}:nudge"  # an entry per wake-up owed to an idle archiver
NUDGES = 32
GRACE_S = 2.0  # an expected match whose write was not heard of comes due then

# KEYS: due, nudge. ARGV: match id, now.
READY = f"""
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('LPUSH', KEYS[2], 1)
redis.call('LTRIM', KEYS[2], 0, {NUDGES - 1})
"""

# KEYS: due. ARGV: now, lease_s. The earliest due match, leased; else the
# score of the next one (when to look again), or nothing.
TAKE = """
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #first == 0 then
  return {false, false}
end
if tonumber(first[2]) > tonumber(ARGV[1]) then
  return {false, first[2]}
end
local lease = tostring(tonumber(ARGV[1]) + tonumber(ARGV[2]))
redis.call('ZADD', KEYS[1], lease, first[1])
-- as ZSCORE writes it, for DONE to compare with
return {first[1], redis.call('ZSCORE', KEYS[1], first[1])}
"""

# KEYS: due. ARGV: match id, the lease taken. Unqueue unless queued anew.
DONE = """
if redis.call('ZSCORE', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 1
end
return 0
"""


class ArchiveQueue:
    def __init__(self, client: redis.Redis) -> None:
        self.client = client
        self._ready = client.register_script(READY)
        self._take = client.register_script(TAKE)
        self._done = client.register_script(DONE)

    def expect(self, match_id: str, now: float) -> None:
        """A write is about to finish ``match_id``: queue it, due ``GRACE_S``
        from now unless it is queued already."""
        self.client.zadd(DUE, {match_id: now + GRACE_S}, nx=True)

    def ready(self, match_id: str, now: float) -> None:
        """``match_id`` was written finished: due now, and an archiver nudged."""
        self._ready(keys=[DUE, NUDGE], args=[match_id, repr(now)])

    def take(self, now: float, lease_s: float) -> tuple[str | None, str | float | None]:
        """The earliest match due, leased for ``lease_s`` seconds, and the
        lease (to give to ``done``); or, when none is due, None and when the
        next one is (None: the queue is empty)."""
        taken, score = self._take(keys=[DUE], args=[repr(now), lease_s])
        if taken:
            return taken.decode(), score.decode()
        return None, float(score) if score else None

    def done(self, match_id: str, lease: str) -> bool:
        """Unqueue ``match_id``, archived under ``lease``, unless a write
        queued it again since (then it is archived again)."""
        return bool(self._done(keys=[DUE], args=[match_id, lease]))

    def later(self, match_id: str, at: float) -> None:
        """Look at ``match_id`` again at ``at`` (it is still queued)."""
        self.client.zadd(DUE, {match_id: at}, xx=True)

    def waiting(self) -> int:
        return self.client.zcard(DUE)

    def take_nudge(self, timeout_s: float) -> bool:
        return self.client.blpop([NUDGE], timeout_s) is not None

    def nudge(self) -> None:
        self.client.lpush(NUDGE, 1)
