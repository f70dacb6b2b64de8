"""Stream tickets in Redis (what they are for: ``service.live.tickets``).

A ticket is stored by its SHA-256 only, as the hash
``ludotheque:ticket:{digest}``: what it follows (``follows``, JSON), whether
it was ``used``, and its ``floor`` (the cursors its stream had written,
joined by ``.``); beside it, in its slot, ``...:open`` names the connection
that holds it. A ticket lives ``ticket_ttl`` seconds to be used; once used,
as long as a connection holds it (its lease) and ``RESUME_S`` after.
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
from typing import Any, NamedTuple

import orjson
import redis

# KEYS: the ticket, its holder (the connection that holds it). ARGV: resuming
# (1/0), the connection, the holder's lease, how long a used ticket stays good
# for its reconnections. {0}: unknown or expired; {1}: used, and this is not a
# reconnection; {2, what it follows, its floor}: go, this connection holds it.
REDEEM = """
local follows = redis.call('HGET', KEYS[1], 'follows')
if not follows then
  return {0}
end
if redis.call('HGET', KEYS[1], 'used') == '1' and ARGV[1] ~= '1' then
  return {1}
end
redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])
redis.call('HSET', KEYS[1], 'used', '1')
redis.call('EXPIRE', KEYS[1], ARGV[3] + ARGV[4])
return {2, follows, redis.call('HGET', KEYS[1], 'floor') or ''}
"""

# KEYS: the ticket. ARGV: the cursors its stream has written, joined by '.'.
# Raises the ticket's floor to them, cursor by cursor (never lowers it).
FLOOR = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
local old = {}
for n in string.gmatch(redis.call('HGET', KEYS[1], 'floor') or '', '%d+') do
  old[#old + 1] = tonumber(n)
end
local new = {}
for n in string.gmatch(ARGV[1], '%d+') do
  local cursor = tonumber(n)
  local was = old[#new + 1]
  if was and was > cursor then
    cursor = was
  end
  new[#new + 1] = string.format('%d', cursor)
end
redis.call('HSET', KEYS[1], 'floor', table.concat(new, '.'))
return 1
"""

# KEYS: the ticket, its holder. ARGV: the connection that closed, how long the
# ticket stays good for its reconnections. A connection taken over leaves the
# ticket to the newer one.
RELEASE = """
if redis.call('GET', KEYS[2]) == ARGV[1] then
  redis.call('DEL', KEYS[2])
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
"""

RESUME_S = 300  # a used ticket stays good this long after its stream closed


class Refused(Exception):
    """The ticket is unknown or expired, or (``used``) used, and this is not
    a reconnection."""

    def __init__(self, used: bool) -> None:
        super().__init__("used" if used else "unknown")
        self.used = used


class Redeemed(NamedTuple):
    """What a ticket follows, the connection that now holds it (to
    ``release``), and the cursors it may not resume before (one per match
    followed)."""

    follows: list[dict[str, Any]]
    holder: str
    floor: list[int]


def ticket_key(ticket: str) -> str:
    digest = hashlib.sha256(ticket.encode("utf-8", "surrogatepass")).hexdigest()
    return f"ludotheque:ticket:{{{digest}}}"


def issue(client: Any, follows: list[dict[str, Any]], ttl: int) -> str:
    """A new ticket for ``follows`` (game, match, seat, token hash each)."""
    ticket = secrets.token_urlsafe(32)
    key = ticket_key(ticket)
    pipe = client.pipeline(transaction=False)
    pipe.hset(key, mapping={"follows": orjson.dumps(follows), "used": "0"})
    pipe.expire(key, ttl)
    pipe.execute()
    return ticket


def redeem(client: Any, ticket: str, resuming: bool, lease_s: float) -> Redeemed:
    """Take ``ticket`` for a new connection, leased for ``lease_s``; Refused
    when it is unknown, expired, or used and this is not a reconnection."""
    key = ticket_key(ticket)
    holder = secrets.token_hex(8)
    answer = client.eval(
        REDEEM, 2, key, key + ":open", int(resuming), holder, int(lease_s), RESUME_S
    )
    kind = int(answer[0])
    if kind in (0, 1):
        raise Refused(used=kind == 1)
    follows = orjson.loads(answer[1])
    raw = answer[2].decode() if isinstance(answer[2], bytes) else answer[2]
    floor = [int(n) for n in raw.split(".")] if raw else []
    return Redeemed(follows, holder, floor + [0] * (len(follows) - len(floor)))


def keep_floor(client: Any, ticket: str, cursors: list[int]) -> None:
    """The ticket's stream has written up to ``cursors``: its reconnections
    resume no earlier (the stream's greenlet calls this after the write)."""
    with contextlib.suppress(redis.RedisError):  # then only the older floor holds
        client.eval(FLOOR, 1, ticket_key(ticket), ".".join(str(c) for c in cursors))


def release(client: Any, ticket: str, holder: str) -> None:
    """The connection ``holder`` closed: its reconnection may come for
    ``RESUME_S``, unless a newer connection holds the ticket."""
    key = ticket_key(ticket)
    with contextlib.suppress(redis.RedisError):  # else the holder's lease runs out
        client.eval(RELEASE, 2, key, key + ":open", holder, RESUME_S)
