"""The queue of bot turns the server owes, in Redis (the policy that
drives it: ``service.background.scheduler``; docs/operators/bot-scheduling.md).

Its keys share the hash tag ``{bots}`` (one Redis Cluster slot), so that
every worker process on every machine draws from the same queue:

- ``ready:people`` and ``ready:bots``: the matches owed a turn now, in two
  sorted sets. A worker takes from ``ready:bots`` only when
  ``ready:people`` has nothing it may take.
- In each set a match is scored by a *tag* (start-time fair queueing with a
  unit cost per turn): a match queued by address A gets
  ``max(V, tail[A])`` and moves ``tail[A]`` one on, where ``V`` is the tag
  last taken (``clock``; ``tails`` holds each address's tail). An address
  with thirty matches queued holds thirty consecutive tags, an address with
  one match one tag at the front: the addresses take turns, and within one
  address its matches take turns. A match played is queued again behind
  the others (``requeue``).
- ``timers``: the matches owed a turn later (a turn clock), by time; a claim
  moves those that came due into their ready set.
- ``meta``: for each queued match, its queue, the match version its turn was
  computed from, and its creating address. A schedule older than the one
  queued does not unqueue it: "nothing owed" from version 7 must not
  unqueue the turn that version 8 (a person's move) owes the bot.
- ``leases``: the matches a worker is playing, by the time its lease ends.
  A leased match is never taken by another worker; when a lease runs out its
  worker is taken for dead and the next claim takes the turn over.
- ``live:<address>``: the bot seats charged to an address, one member
  ``<match id>/<seat>`` per seat, scored by when it stops counting (its
  match over, or not moved for ``LIVE_WINDOW_S``).
- ``nudge``: a short list that wakes idle workers (``take_nudge``, one entry
  for one worker). A script pushes an entry when a turn may be taken sooner
  than a waiting worker can know: a turn owed now of a match nobody leases,
  a leased match released with its next turn ready, a timer that is now the
  earliest, a claim that leaves another turn to take. A worker that found
  nothing waits for an entry, or for the next timer or lease to end
  (``take`` tells when), whichever comes first. An entry pushed while every
  worker is busy stays until one waits: no wake-up is lost.
"""

from __future__ import annotations

import time
from typing import Any

PREFIX = "ludotheque:{bots}"
READY_PEOPLE = f"{PREFIX}:ready:people"
READY_BOTS = f"{PREFIX}:ready:bots"
TIMERS = f"{PREFIX}:timers"
LEASES = f"{PREFIX}:leases"
META = f"{PREFIX}:meta"  # match -> "<class> <version> <address>" while queued
CLOCK = f"{PREFIX}:clock"  # V, the tag last taken
TAILS = f"{PREFIX}:tails"  # address -> the tag its next queued match gets
NUDGE = f"{PREFIX}:nudge"  # an entry per wake-up owed to an idle worker

LIVE_WINDOW_S = 900  # a bot seat whose match has not moved for this long stops counting
SCAN = 64  # ready matches a claim looks at past leased ones (at most one per worker)
GONE = 2**52  # the version of a match that no longer exists: later than any
# Wake-ups kept for idle workers at most: more than that many turns coming
# due at once are taken by the workers woken, each taking turns until none is left.
NUDGES = 32

# Shared by the scripts: queue match ``id`` of ``address`` in ``ready`` behind
# that address's other matches (KEYS[5] is the clock, KEYS[6] the tails); wake
# an idle worker (KEYS[8] is the nudge list).
TAG = f"""
local function tag(ready, id, address)
  local v = tonumber(redis.call('GET', KEYS[5]) or '0')
  local t = math.max(v, tonumber(redis.call('HGET', KEYS[6], address) or '0'))
  redis.call('HSET', KEYS[6], address, t + 1)
  redis.call('ZADD', ready, t, id)
end
local function nudge()
  redis.call('LPUSH', KEYS[8], 1)
  redis.call('LTRIM', KEYS[8], 0, {NUDGES - 1})
end
"""

# KEYS: ready:people, ready:bots, timers, meta, clock, tails, leases, nudge,
# then the live:<address> sets of the addresses its bot seats are charged to.
# ARGV: id, when ('' for no turn owed), class, address, now, requeue ('1':
# behind the others even if queued), live ('refresh', 'release' or ''),
# live window, the match version, then for each bot seat the index in KEYS
# of its live set and its member.
SCHEDULE = (
    TAG
    + """
local id, when, now, version = ARGV[1], ARGV[2], tonumber(ARGV[5]), tonumber(ARGV[9])
local meta = redis.call('HGET', KEYS[4], id)
local queued = meta and tonumber(string.match(meta, '^%S+ (%S+)')) or -1
if when == '' then
  if version >= queued then
    redis.call('ZREM', KEYS[1], id)
    redis.call('ZREM', KEYS[2], id)
    redis.call('ZREM', KEYS[3], id)
    redis.call('HDEL', KEYS[4], id)
  end
else
  local ready = ARGV[3] == 'people' and KEYS[1] or KEYS[2]
  local queue = ARGV[3] .. ' ' .. math.max(version, queued) .. ' ' .. ARGV[4]
  redis.call('HSET', KEYS[4], id, queue)
  if tonumber(when) > now then
    redis.call('ZREM', ready, id)
    redis.call('ZADD', KEYS[3], when, id)
    if redis.call('ZRANGE', KEYS[3], 0, 0)[1] == id then
      nudge()  -- the earliest timer now: a waiting worker may mean to wake later
    end
  else
    redis.call('ZREM', KEYS[3], id)
    if ARGV[6] == '1' or not redis.call('ZSCORE', ready, id) then
      tag(ready, id, ARGV[4])
      if not redis.call('ZSCORE', KEYS[7], id) then
        nudge()  -- (a leased match: when its worker releases it)
      end
    end
  end
end
local window = tonumber(ARGV[8])
for i = 10, #ARGV, 2 do
  local live = KEYS[tonumber(ARGV[i])]
  if ARGV[7] == 'release' then
    redis.call('ZREM', live, ARGV[i + 1])
  elseif ARGV[7] == 'refresh' then
    redis.call('ZADD', live, now + window, ARGV[i + 1])
    redis.call('EXPIRE', live, window)
  end
end
return 1
"""
)

# KEYS: ready:people, ready:bots, timers, meta, clock, tails, leases, nudge.
# ARGV: now, lease seconds, how many ready matches to look at.
# A lease run out first (its worker died), then the timers come due, then
# the first match not leased: people's before bots' (and a nudge when another
# could be taken too). {id, false} when one is claimed; else {false, when the
# next timer or lease ends (false: none)}.
CLAIM = (
    TAG
    + """
local now = tonumber(ARGV[1])
local leased_until = now + tonumber(ARGV[2])
local lost = redis.call('ZRANGEBYSCORE', KEYS[7], '-inf', now, 'LIMIT', 0, 1)
if #lost > 0 then
  redis.call('ZADD', KEYS[7], leased_until, lost[1])
  redis.call('ZREM', KEYS[1], lost[1])
  redis.call('ZREM', KEYS[2], lost[1])
  return {lost[1], false}
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, 100)) do
  redis.call('ZREM', KEYS[3], id)
  local meta = redis.call('HGET', KEYS[4], id) or ''
  local class, address = string.match(meta, '^(%S+) %S+ (.*)$')
  local ready = class == 'bots' and KEYS[2] or KEYS[1]
  if not redis.call('ZSCORE', ready, id) then
    tag(ready, id, address or '')
  end
end
local claimed = false
for _, ready in ipairs({KEYS[1], KEYS[2]}) do
  local head = redis.call('ZRANGE', ready, 0, tonumber(ARGV[3]) - 1, 'WITHSCORES')
  for i = 1, #head, 2 do
    local id = head[i]
    if not redis.call('ZSCORE', KEYS[7], id) then
      if claimed then
        nudge()  -- another turn may be taken now: by another worker, if one is idle
        return {claimed, false}
      end
      claimed = id
      redis.call('ZREM', ready, id)
      redis.call('ZADD', KEYS[7], leased_until, id)
      if tonumber(head[i + 1]) > tonumber(redis.call('GET', KEYS[5]) or '0') then
        redis.call('SET', KEYS[5], head[i + 1])
      end
    end
  end
end
if claimed then
  return {claimed, false}
end
local queued = redis.call('ZCARD', KEYS[1]) + redis.call('ZCARD', KEYS[2])
if queued + redis.call('ZCARD', KEYS[7]) == 0 then
  -- nothing queued: no address is behind or ahead of another any more
  redis.call('DEL', KEYS[6])
end
-- scores as Redis wrote them: a number returned would lose its fraction
local due = false
for _, set in ipairs({KEYS[3], KEYS[7]}) do
  local first = redis.call('ZRANGE', set, 0, 0, 'WITHSCORES')
  if #first > 0 and (not due or tonumber(first[2]) < tonumber(due)) then
    due = first[2]
  end
end
return {false, due}
"""
)

# KEYS: ready:people, ready:bots, timers, meta, clock, tails, leases, nudge.
# ARGV: the match. Its worker is done with it; were its next turn ready
# meanwhile (no nudge then: it was leased), an idle worker may take it.
RELEASE = (
    TAG  # for nudge()
    + """
redis.call('ZREM', KEYS[7], ARGV[1])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  nudge()
end
return 1
"""
)

# KEYS: live:<address>. ARGV: now, window, cap (0: none), force ('1': count
# them even past the cap), then the members. {1, held} when the members now
# count within the cap, {0, held} when they would pass it (counted all the
# same when forced).
RESERVE = """
local now, window, cap = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZCARD', KEYS[1])
local adding = 0
for i = 5, #ARGV do
  if not redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    adding = adding + 1
  end
end
local within = 1
if cap > 0 and held + adding > cap then
  if ARGV[4] ~= '1' then
    return {0, held}
  end
  within = 0
end
for i = 5, #ARGV do
  redis.call('ZADD', KEYS[1], now + window, ARGV[i])
end
redis.call('EXPIRE', KEYS[1], window)
return {within, held + adding}
"""

QUEUE_KEYS = [READY_PEOPLE, READY_BOTS, TIMERS, META, CLOCK, TAILS, LEASES, NUDGE]


def live_key(address: str) -> str:
    return f"{PREFIX}:live:{address}"


def seat_member(match_id: str, seat: int) -> str:
    """A bot seat in its payer's live set."""
    return f"{match_id}/{seat}"


class TurnQueue:
    """The turns owed, the workers' leases and the live bot seats, in Redis."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self._schedule = client.register_script(SCHEDULE)
        self._claim = client.register_script(CLAIM)
        self._release = client.register_script(RELEASE)
        self._reserve = client.register_script(RESERVE)

    def schedule(
        self,
        match_id: str,
        version: int,
        when: float | None,
        queue: str,
        address: str,
        charged: list[tuple[str, int]],
        finished: bool = False,
        requeue: bool = False,
        client: Any = None,
    ) -> None:
        """Queue ``match_id`` (at ``version``) in ``queue`` (``people`` or
        ``bots``) for a turn at ``when`` (None: none now), on behalf of
        ``address``; refresh its ``charged`` bot seats (payer, seat), or,
        when ``finished``, release them. ``client``: a pipeline that waits
        for replicas, when they are required."""
        live = "release" if finished else "refresh"
        payers: dict[str, int] = {}  # live set -> its index in KEYS
        seats: list[Any] = []
        for payer, seat in charged:
            index = payers.setdefault(live_key(payer), len(QUEUE_KEYS) + 1 + len(payers))
            seats += [index, seat_member(match_id, seat)]
        self._schedule(
            keys=[*QUEUE_KEYS, *payers],
            args=[
                match_id,
                "" if when is None else repr(when),
                queue,
                address,
                repr(time.time()),
                1 if requeue else 0,
                live if seats else "",
                LIVE_WINDOW_S,
                version,
                *seats,
            ],
            client=client,
        )

    def unschedule(self, match_id: str) -> None:
        """``match_id`` is gone: it is owed nothing."""
        args = [match_id, "", "", "", 0, 0, "", 0, GONE]
        self._schedule(keys=QUEUE_KEYS, args=args)

    def claim(self, now: float, lease_s: float) -> str | None:
        """The match whose turn is next, leased for ``lease_s`` seconds."""
        return self.take(now, lease_s)[0]

    def take(self, now: float, lease_s: float) -> tuple[str | None, float | None]:
        """As ``claim``, and when none is due: when a timer or a lease ends
        next (None: neither is queued), the time to look again unless nudged."""
        claimed, due = self._claim(keys=QUEUE_KEYS, args=[repr(now), lease_s, SCAN])
        if claimed:
            return claimed.decode(), None
        return None, float(due) if due else None

    def release(self, match_id: str) -> None:
        """The worker is done with ``match_id``."""
        self._release(keys=QUEUE_KEYS, args=[match_id])

    def take_nudge(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` (more than 0; under the client's socket
        timeout) for a nudge, and take it: whether one came. The connection
        is held meanwhile (on a cluster, one to the node serving ``{bots}``)."""
        return self.client.blpop([NUDGE], timeout_s) is not None

    def nudge(self) -> None:
        """Give back a nudge taken that nobody here can answer."""
        self.client.lpush(NUDGE, 1)

    def reserve(
        self, address: str, match_id: str, seats: list[int], cap: int, force: bool
    ) -> tuple[bool, int]:
        """Count the bot ``seats`` of ``match_id`` among ``address``'s live
        ones, unless they would pass ``cap`` (0: none) and not ``force``:
        whether they are within it, and how many the address then holds
        (or held, when refused)."""
        members = [seat_member(match_id, seat) for seat in seats]
        now = repr(time.time())
        within, held = self._reserve(
            keys=[live_key(address)], args=[now, LIVE_WINDOW_S, cap, int(force), *members]
        )
        return bool(within), int(held)
