"""The ranked queue's keys and scripts in Redis (the queue itself:
``service.background.matchmaker``; its routes: ``service.http.queue``).

Every key of one queue (a game's preset) shares the hash tag
``{queue:<game>:<preset>}``, so that each script below touches one slot
and runs unchanged on Redis Cluster:

- ``ldq:{queue:G:P}:waiting``: a sorted set, ticket id -> when it joined (ms);
- ``ldq:{queue:G:P}:polled``: a sorted set, ticket id -> when its player last
  asked for it (ms): a waiting ticket not asked for ``IDLE_S`` expires;
- ``ldq:{queue:G:P}:claimed``: a sorted set of the tickets a matchmaker has
  claimed and not yet settled, by the time of the claim;
- ``ldq:{queue:G:P}:t:<id>``: a hash, the ticket itself (``status``,
  ``player``, ``seat_player`` (JSON), ``joined``, ``bot_url``, ``match``, ``seat``);
- ``ldq:{queue:G:P}:lease``: which matchmaker works on the queue now.

A player's own index, ``ldq:queue:mine:{<player>}``, a hash game ->
``<preset> <ticket id>``, lives in the player's slot: joining is two steps,
each single-slot (``Queue.join``). Where a ticket lives, by its id alone:
``ldq:queue:where:{<id>}`` -> ``<game> <preset>``. Each player's last few
opponents per game: ``ldq:queue:recent:{<player>}:<game>``, a list.
``ldq:queue:nudge``: a short list that wakes an idle matchmaker (as the bot
worker's doorbell does, ``service.background.scheduler.Doorbell``). A
matched ticket wakes its long polls on ``m:{q-<id>}:wake``, a channel of
the push hub (``service.live.hub``). A matched or expired ticket is also
an event of its player's (``service.store.player_events``), written right
after the script that settled it (another slot): a process that dies in
between loses that event, not the ticket's state.
"""

from __future__ import annotations

import math
import secrets
import time
from typing import Any

import orjson
from redis.cluster import RedisCluster

from service.store.player_events import PlayerEvents
from service.store.wakeups import wake_channel

PREFIX = "ldq"
NUDGE = f"{PREFIX}:queue:nudge"
NUDGES_KEPT = 16
IDLE_S = 60  # a waiting ticket nobody asked for this long expires
KEPT_S = 600  # a settled ticket (matched, expired, left) stays readable this long
CLAIM_S = 60  # a claim no matchmaker settled within this long (it died): expired
RECENT = 5  # opponents remembered per player and game
RECENT_TTL_S = 24 * 3600
MINE_TTL_S = 7 * 24 * 3600

# KEYS: the ticket, waiting, polled. ARGV: id, now (ms), ttl (s), fields
# (JSON object). Makes the ticket, not yet in the queue (``ENTER`` puts it
# there once its player's index names it).
MAKE = """
local fields = cjson.decode(ARGV[4])
for name, value in pairs(fields) do
  redis.call('HSET', KEYS[1], name, value)
end
redis.call('HSET', KEYS[1], 'status', 'waiting', 'joined', ARGV[2], 'polled', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
"""

# KEYS: the ticket, waiting, polled. ARGV: id, joined (ms).
ENTER = """
if redis.call('HGET', KEYS[1], 'status') ~= 'waiting' then
  return 0
end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
return 1
"""

# KEYS: the ticket, waiting, polled. ARGV: id, now (ms), idle (ms), ttl of
# a waiting ticket (s), kept (s). The ticket as its player asks for it: a
# waiting one renewed, or expired when nobody asked for too long. {} if
# unknown, else the hash's fields and values.
POLL = """
local status = redis.call('HGET', KEYS[1], 'status')
if not status then
  return {}
end
local now = tonumber(ARGV[2])
if status == 'claimed' then
  redis.call('HSET', KEYS[1], 'polled', ARGV[2])
  if redis.call('ZSCORE', KEYS[3], ARGV[1]) then
    redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
  end
elseif status == 'waiting' then
  local polled = tonumber(redis.call('HGET', KEYS[1], 'polled'))
  if now - polled > tonumber(ARGV[3]) then
    redis.call('HSET', KEYS[1], 'status', 'expired', 'settled', ARGV[2])
    redis.call('ZREM', KEYS[2], ARGV[1])
    redis.call('ZREM', KEYS[3], ARGV[1])
    redis.call('EXPIRE', KEYS[1], ARGV[5])
  else
    redis.call('HSET', KEYS[1], 'polled', ARGV[2])
    if redis.call('ZSCORE', KEYS[3], ARGV[1]) then
      redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
    end
    redis.call('EXPIRE', KEYS[1], ARGV[4])
  end
end
return redis.call('HGETALL', KEYS[1])
"""

# KEYS: the ticket, waiting, polled. ARGV: id, now (ms), kept (s). Leave:
# a waiting ticket only (1); else 0.
LEAVE = """
if redis.call('HGET', KEYS[1], 'status') ~= 'waiting' then
  return 0
end
redis.call('HSET', KEYS[1], 'status', 'left', 'settled', ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
"""

# KEYS: waiting, polled, claimed. ARGV: prefix of a ticket's key, now (ms),
# idle before (ms), claims before (ms), kept (s). Expires the waiting tickets
# nobody asked for since ``idle before``, and the claims no matchmaker
# settled since ``claims before``; each ticket expired and its player, in turn.
EXPIRE = """
local expired = {}
local function expire(id, from)
  local key = ARGV[1] .. id
  if redis.call('HGET', key, 'status') == from then
    redis.call('HSET', key, 'status', 'expired', 'settled', ARGV[2])
    redis.call('EXPIRE', key, ARGV[5])
    table.insert(expired, id)
    table.insert(expired, redis.call('HGET', key, 'player'))
  end
  redis.call('ZREM', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
  redis.call('ZREM', KEYS[3], id)
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[3])) do
  -- a claimed ticket is the matchmaker's until it settles it (or its claim is stale)
  if redis.call('HGET', ARGV[1] .. id, 'status') ~= 'claimed' then
    expire(id, 'waiting')
  end
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', '(' .. ARGV[4])) do
  expire(id, 'claimed')
end
return expired
"""

# KEYS: waiting, claimed. ARGV: prefix of a ticket's key, now (ms), idle
# before (ms), then ids. Claims every ticket named, all still waiting (and
# asked for since ``idle before``), or none: 1 / 0.
CLAIM = """
for i = 4, #ARGV do
  local key = ARGV[1] .. ARGV[i]
  if not redis.call('ZSCORE', KEYS[1], ARGV[i]) or redis.call('HGET', key, 'status') ~= 'waiting'
     or tonumber(redis.call('HGET', key, 'polled')) < tonumber(ARGV[3]) then
    return 0
  end
end
for i = 4, #ARGV do
  redis.call('ZREM', KEYS[1], ARGV[i])
  redis.call('ZADD', KEYS[2], ARGV[2], ARGV[i])
  redis.call('HSET', ARGV[1] .. ARGV[i], 'status', 'claimed')
end
return 1
"""

# KEYS: waiting, claimed. ARGV: prefix of a ticket's key, then ids. A claim
# given back (the match could not be made): each ticket waits again, from
# when it joined.
UNCLAIM = """
for i = 2, #ARGV do
  local key = ARGV[1] .. ARGV[i]
  if redis.call('HGET', key, 'status') == 'claimed' then
    redis.call('HSET', key, 'status', 'waiting')
    redis.call('ZADD', KEYS[1], tonumber(redis.call('HGET', key, 'joined')), ARGV[i])
  end
  redis.call('ZREM', KEYS[2], ARGV[i])
end
return 1
"""

# KEYS: polled, claimed. ARGV: prefix of a ticket's key, now (ms), kept (s),
# match id, then (id, seat) pairs. The claimed tickets matched.
MATCHED = """
for i = 5, #ARGV, 2 do
  local key = ARGV[1] .. ARGV[i]
  if redis.call('HGET', key, 'status') == 'claimed' then
    redis.call('HSET', key, 'status', 'matched', 'match', ARGV[4], 'seat', ARGV[i + 1],
      'settled', ARGV[2])
    redis.call('EXPIRE', key, ARGV[3])
  end
  redis.call('ZREM', KEYS[1], ARGV[i])
  redis.call('ZREM', KEYS[2], ARGV[i])
end
return 1
"""

# KEYS: a player's index. ARGV: game, what it names now ('' for none),
# what it shall name. Compare and set: 1, else 0.
SWAP = """
local now = redis.call('HGET', KEYS[1], ARGV[1]) or ''
if now ~= ARGV[2] then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
"""

# KEYS: the lease. ARGV: its owner. Released if still held by the owner.
RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


def ranked_field(game: str) -> str:
    """The field of a player's index that names its live rated match of
    ``game`` (or a matchmaker's claim on the player, ``claim:<ms>:<nonce>``)."""
    return f"ranked:{game}"


def tag(game: str, preset: str) -> str:
    return f"{PREFIX}:{{queue:{game}:{preset}}}"


def ticket_key(game: str, preset: str, ticket_id: str) -> str:
    return f"{tag(game, preset)}:t:{ticket_id}"


def mine_key(player_id: str) -> str:
    return f"{PREFIX}:queue:mine:{{{player_id}}}"


def where_key(ticket_id: str) -> str:
    return f"{PREFIX}:queue:where:{{{ticket_id}}}"


def recent_key(player_id: str, game: str) -> str:
    return f"{PREFIX}:queue:recent:{{{player_id}}}:{game}"


def wake_id(ticket_id: str) -> str:
    """The push hub's name for a ticket (``service.live.hub`` follows it as
    it follows a match: its channel is ``m:{q-<id>}:wake``)."""
    return f"q-{ticket_id}"


def now_ms() -> int:
    return int(time.time() * 1000)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def decoded(fields: list[Any] | dict[Any, Any]) -> dict[str, str]:
    """A ticket's hash, its names and values as text."""
    pairs = (
        fields.items() if isinstance(fields, dict) else zip(fields[::2], fields[1::2], strict=True)
    )
    return {
        (k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
        for k, v in pairs
    }


class AlreadyQueued(Exception):
    """The player holds a live ticket for the game already."""

    def __init__(self, ticket_id: str) -> None:
        super().__init__(ticket_id)
        self.ticket_id = ticket_id


class Queue:
    """The queues of every game and preset, in the Redis ``client``."""

    def __init__(self, client: Any, idle_s: float = IDLE_S) -> None:
        """``idle_s``: a waiting ticket nobody asked for this long expires."""
        self.client = client
        self.idle_s = idle_s
        self.sharded = isinstance(client, RedisCluster)
        self._make = client.register_script(MAKE)
        self._enter = client.register_script(ENTER)
        self._poll = client.register_script(POLL)
        self._leave = client.register_script(LEAVE)
        self._expire = client.register_script(EXPIRE)
        self._claim = client.register_script(CLAIM)
        self._unclaim = client.register_script(UNCLAIM)
        self._matched = client.register_script(MATCHED)
        self._swap = client.register_script(SWAP)
        self._release = client.register_script(RELEASE)
        self.events = PlayerEvents(client)

    def _keys(self, game: str, preset: str) -> tuple[str, str, str]:
        base = tag(game, preset)
        return f"{base}:waiting", f"{base}:polled", f"{base}:claimed"

    # -- a player's tickets ---------------------------------------------------------
    def join(
        self,
        game: str,
        preset: str,
        player_id: str,
        fields: dict[str, str],
    ) -> dict[str, str]:
        """A new waiting ticket of ``player_id`` in ``game``'s ``preset``
        (``fields``: more of its fields). Raises ``AlreadyQueued`` naming the
        player's ticket of the game that is still waiting.

        Two steps, each in one slot: the ticket is made (not yet waiting),
        then the player's index is swapped from what it named (a ticket no
        longer live, or nothing) to it, then it enters the queue. Two joins at
        once: one swap wins, the other's ticket is dropped. A process dying
        between the steps leaves a ticket nobody asks for: it counts as live
        until ``idle_s`` passes, then expires."""
        ticket_id = secrets.token_hex(16)
        now = now_ms()
        key = ticket_key(game, preset, ticket_id)
        waiting, polled, _ = self._keys(game, preset)
        body = dict(fields, id=ticket_id, game=game, preset=preset, player=player_id)
        self._make(
            keys=[key, waiting, polled],
            args=[ticket_id, now, math.ceil(self.idle_s) + KEPT_S, orjson.dumps(body)],
        )
        self.client.set(
            where_key(ticket_id), f"{game} {preset}", ex=math.ceil(self.idle_s) + KEPT_S
        )
        for _ in range(3):
            named = self.client.hget(mine_key(player_id), game)
            named = named.decode() if isinstance(named, bytes) else (named or "")
            if named:
                other_preset, _, other_id = named.partition(" ")
                other = self.poll(other_id, other_preset, game, renew=False)
                if other is not None and other["status"] in ("waiting", "claimed"):
                    self.drop(game, preset, ticket_id)
                    raise AlreadyQueued(other_id)
            swapped = self._swap(
                keys=[mine_key(player_id)],
                args=[game, named, f"{preset} {ticket_id}", MINE_TTL_S],
            )
            if swapped:
                break
        else:  # the index changed under us three times: another join won
            self.drop(game, preset, ticket_id)
            named = self.client.hget(mine_key(player_id), game) or b""
            raise AlreadyQueued(
                (named.decode() if isinstance(named, bytes) else named).partition(" ")[2]
            )
        self._enter(keys=[key, waiting, polled], args=[ticket_id, now])
        self.nudge()
        return self.poll(ticket_id, preset, game, renew=False) or {}

    def drop(self, game: str, preset: str, ticket_id: str) -> None:
        self.client.delete(ticket_key(game, preset, ticket_id))
        self.client.delete(where_key(ticket_id))

    def locate(self, ticket_id: str) -> tuple[str, str] | None:
        """The game and preset of ticket ``ticket_id`` (None: unknown)."""
        found = self.client.get(where_key(ticket_id))
        if found is None:
            return None
        game, _, preset = (found.decode() if isinstance(found, bytes) else found).partition(" ")
        return game, preset

    def poll(
        self, ticket_id: str, preset: str, game: str, renew: bool = True
    ) -> dict[str, str] | None:
        """The ticket (None: unknown); with ``renew``, its player asking for
        it: a waiting ticket is kept for ``idle_s`` more (or expires, not
        asked for since)."""
        waiting, polled, _ = self._keys(game, preset)
        key = ticket_key(game, preset, ticket_id)
        if not renew:
            found = self.client.hgetall(key)
            ticket = decoded(found) if found else None
            stale = ticket and now_ms() - int(ticket["polled"]) > int(self.idle_s * 1000)
            if ticket and ticket["status"] == "waiting" and stale:
                ticket["status"] = "expired"
            return ticket
        now = now_ms()
        found = self._poll(
            keys=[key, waiting, polled],
            args=[
                ticket_id,
                now,
                int(self.idle_s * 1000),
                math.ceil(self.idle_s) + KEPT_S,
                KEPT_S,
            ],
        )
        if not found:
            return None
        self.client.expire(where_key(ticket_id), math.ceil(self.idle_s) + KEPT_S)
        ticket = decoded(found)
        if ticket["status"] == "expired" and ticket.get("settled") == str(now):  # by this ask
            self.expired(game, preset, ticket_id, ticket["player"])
        return ticket

    def leave(self, game: str, preset: str, ticket_id: str) -> bool:
        waiting, polled, _ = self._keys(game, preset)
        return bool(
            self._leave(
                keys=[ticket_key(game, preset, ticket_id), waiting, polled],
                args=[ticket_id, now_ms(), KEPT_S],
            )
        )

    def leave_all(self, player_id: str) -> int:
        """Leave every waiting ticket of ``player_id`` (it leaves for good):
        how many were left."""
        named = self.client.hgetall(mine_key(player_id))
        left = 0
        for field, value in named.items():
            game = field.decode() if isinstance(field, bytes) else field
            text = value.decode() if isinstance(value, bytes) else value
            if game.startswith("ranked:") or " " not in text:
                continue
            preset, _, ticket_id = text.partition(" ")
            left += self.leave(game, preset, ticket_id)
        return left

    # -- one live rated match per player and game ------------------------------------
    def ranked(self, player_id: str, game: str) -> str:
        """What the player's index names for ``game``'s rated play: a match
        id, a matchmaker's claim, or ''."""
        named = self.client.hget(mine_key(player_id), ranked_field(game))
        return named.decode() if isinstance(named, bytes) else (named or "")

    def swap_ranked(self, player_id: str, game: str, seen: str, new: str) -> bool:
        """Compare and set the player's rated match of ``game`` from ``seen``
        to ``new``: whether it was still ``seen``."""
        args = [ranked_field(game), seen, new, MINE_TTL_S]
        return bool(self._swap(keys=[mine_key(player_id)], args=args))

    def count(self, game: str, preset: str) -> int:
        return int(self.client.zcard(self._keys(game, preset)[0]))

    def counts(self, queues: list[tuple[str, str]]) -> list[tuple[int, int]]:
        """Each queue's waiting and claimed tickets: one pipelined round trip."""
        pipe = self.client.pipeline(transaction=False)
        for game, preset in queues:
            waiting, _, claimed = self._keys(game, preset)
            pipe.zcard(waiting)
            pipe.zcard(claimed)
        found = [int(n) for n in pipe.execute()]
        return list(zip(found[::2], found[1::2], strict=True))

    # -- the matchmaker ---------------------------------------------------------------
    def lease(self, game: str, preset: str, owner: str, lease_s: float) -> bool:
        """Hold the queue for ``lease_s`` (True), unless another holds it."""
        key = f"{tag(game, preset)}:lease"
        return bool(self.client.set(key, owner, nx=True, px=int(lease_s * 1000)))

    def release(self, game: str, preset: str, owner: str) -> None:
        self._release(keys=[f"{tag(game, preset)}:lease"], args=[owner])

    def expire_idle(self, game: str, preset: str, now: int | None = None) -> int:
        """Expire the tickets nobody asked for in ``idle_s``, and claims no
        matchmaker settled in ``CLAIM_S`` (each an event of its player's); how many."""
        now = now_ms() if now is None else now
        waiting, polled, claimed = self._keys(game, preset)
        expired = self._expire(
            keys=[waiting, polled, claimed],
            args=[
                ticket_key(game, preset, ""),
                now,
                now - int(self.idle_s * 1000),
                now - CLAIM_S * 1000,
                KEPT_S,
            ],
        )
        for ticket_id, player in zip(expired[::2], expired[1::2], strict=True):
            self.expired(game, preset, _text(ticket_id), _text(player))
        return len(expired) // 2

    def expired(self, game: str, preset: str, ticket_id: str, player_id: str) -> None:
        event = {"type": "ticket_expired", "ticket": ticket_id, "game": game, "preset": preset}
        self.events.append(player_id, event)

    def waiting(self, game: str, preset: str) -> list[dict[str, Any]]:
        """The waiting tickets, oldest first: ``id``, ``player``, ``joined``
        (seconds), ``seat_player`` (dict), ``bot_url`` (or None)."""
        waiting, _, _ = self._keys(game, preset)
        ids = [
            i.decode() if isinstance(i, bytes) else i for i in self.client.zrange(waiting, 0, -1)
        ]
        if not ids:
            return []
        pipe = self.client.pipeline(transaction=False)
        for ticket_id in ids:
            pipe.hmget(
                ticket_key(game, preset, ticket_id), "player", "joined", "seat_player", "bot_url"
            )
        found = []
        for ticket_id, values in zip(ids, pipe.execute(), strict=True):
            player, joined, seat_player, bot_url = (
                v.decode() if isinstance(v, bytes) else v for v in values
            )
            if player is None:
                continue
            found.append(
                {
                    "id": ticket_id,
                    "player": player,
                    "joined": int(joined) / 1000,
                    "seat_player": orjson.loads(seat_player),
                    "bot_url": bot_url or None,
                }
            )
        return found

    def claim(self, game: str, preset: str, ticket_ids: list[str]) -> bool:
        """Claim every ticket named (all still waiting) or none."""
        waiting, _, claimed = self._keys(game, preset)
        now = now_ms()
        return bool(
            self._claim(
                keys=[waiting, claimed],
                args=[
                    ticket_key(game, preset, ""),
                    now,
                    now - int(self.idle_s * 1000),
                    *ticket_ids,
                ],
            )
        )

    def unclaim(self, game: str, preset: str, ticket_ids: list[str]) -> None:
        waiting, _, claimed = self._keys(game, preset)
        self._unclaim(keys=[waiting, claimed], args=[ticket_key(game, preset, ""), *ticket_ids])

    def matched(
        self,
        game: str,
        preset: str,
        match_id: str,
        seats: dict[str, int],
        players: dict[str, str] | None = None,
    ) -> None:
        """The claimed tickets ``seats`` (ticket id -> seat) matched in
        ``match_id``; their long polls woken (one round trip on one Redis),
        then each an event of its player's (``players``: ticket id -> player)."""
        self._settle_matched(game, preset, match_id, seats)
        for ticket_id, player_id in (players or {}).items():
            event = {"type": "ticket_matched", "ticket": ticket_id, "game": game}
            match = {"id": match_id, "seat": seats[ticket_id]}
            self.events.append(player_id, event | {"preset": preset, "match": match})

    def _settle_matched(
        self, game: str, preset: str, match_id: str, seats: dict[str, int]
    ) -> None:
        _, polled, claimed = self._keys(game, preset)
        pairs = [x for ticket_id, seat in seats.items() for x in (ticket_id, seat)]
        args = [ticket_key(game, preset, ""), now_ms(), KEPT_S, match_id, *pairs]
        if self.sharded:  # each wake-up's channel is in its ticket's own slot
            self._matched(keys=[polled, claimed], args=args)
            for ticket_id in seats:
                self.wake(ticket_id)
            return
        pipe = self.client.pipeline(transaction=False)
        self._matched(keys=[polled, claimed], args=args, client=pipe)
        for ticket_id in seats:
            pipe.publish(wake_channel(wake_id(ticket_id)), 1)
        pipe.execute()

    def wake(self, ticket_id: str) -> None:
        channel = wake_channel(wake_id(ticket_id))
        if self.sharded:
            self.client.spublish(channel, 1)
        else:
            self.client.publish(channel, 1)

    # -- opponents, and the doorbell ---------------------------------------------------
    def recent(self, game: str, player_ids: list[str]) -> dict[str, set[str]]:
        """Each player's last few opponents in ``game``."""
        if not player_ids:
            return {}
        pipe = self.client.pipeline(transaction=False)
        for player_id in player_ids:
            pipe.lrange(recent_key(player_id, game), 0, -1)
        return {
            player_id: {o.decode() if isinstance(o, bytes) else o for o in found}
            for player_id, found in zip(player_ids, pipe.execute(), strict=True)
        }

    def met(self, game: str, player_ids: list[str]) -> None:
        """``player_ids`` played one match together: each remembers the others."""
        pipe = self.client.pipeline(transaction=False)
        for player_id in player_ids:
            key = recent_key(player_id, game)
            others = [o for o in player_ids if o != player_id]
            if not others:
                continue
            pipe.lpush(key, *others)
            pipe.ltrim(key, 0, RECENT - 1)
            pipe.expire(key, RECENT_TTL_S)
        pipe.execute()

    def nudge(self) -> None:
        """Wake an idle matchmaker: a ticket arrived."""
        pipe = self.client.pipeline(transaction=False)
        pipe.lpush(NUDGE, 1)
        pipe.ltrim(NUDGE, 0, NUDGES_KEPT - 1)
        pipe.execute()

    def take_nudge(self, timeout: float) -> bool:
        return self.client.blpop([NUDGE], timeout=max(timeout, 0.01)) is not None

    def give_back(self) -> None:
        self.client.lpush(NUDGE, 1)

    # -- house bots ------------------------------------------------------------------
    def house_bots(self) -> dict[str, dict[str, Any]]:
        """The house bot accounts: ``<kind>:<n>`` -> the seat player."""
        found = self.client.hgetall(f"{PREFIX}:queue:house-bots")
        return {
            (k.decode() if isinstance(k, bytes) else k): orjson.loads(v) for k, v in found.items()
        }

    def keep_house_bot(self, name: str, player: dict[str, Any]) -> dict[str, Any]:
        """Keep ``player`` as house bot ``name``, unless one is kept already
        (that one is returned)."""
        key = f"{PREFIX}:queue:house-bots"
        if self.client.hsetnx(key, name, orjson.dumps(player)):
            return player
        return orjson.loads(self.client.hget(key, name))
