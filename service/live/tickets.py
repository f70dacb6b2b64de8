"""Stream tickets: how a browser's ``EventSource`` follows as a seat, and
how one stream follows several matches.

``EventSource`` cannot send an ``Authorization`` header, and a token must
never travel in a URL (logs, history, referrers keep URLs). So the holder
of a token exchanges it (in a header or a body) for a ticket: random, short
lived (``ticket_ttl``, 60 s by default, to be used), and single-use: the
first ``GET`` that presents it opens the stream; from then on it is good
only for that stream's own reconnections (``EventSource`` sends
``Last-Event-ID``), while a connection holds it and for a while after the
last one closed. A reconnection takes the ticket over from the connection
that holds it, which may be dead without the server knowing (a client that
changed networks sent no reset): refusing it would stop the EventSource for
good. Only the ticket's SHA-256 is stored, with what it follows: each
match, its game and the seat it follows as (the tokens' hashes count the
stream against their allowance).

A ticket follows as a seat only while the token it was made with holds it
(issue 31): once the seat changed hands, the ticket, used or not, is
refused, and its stream ends (``service.live.followers``). A used ticket is a bearer
credential anyone holding its URL may present, so it never replays the
past: it keeps a floor, the cursors its stream had written after its first
write and after each write of an event private to a followed seat, and a
reconnection's ``Last-Event-ID`` (or ``?after=``) below it is raised to it.
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
from typing import Any

import orjson
import redis

from engines import GAMES
from service.domain import tokens as auth
from service.domain.access import may_follow_as
from service.domain.problems import Problem

MAX_MATCHES = 32  # matches one ticket may follow

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


# a 401 names the scheme to use, as every 401 of the service does
TICKET_REALM = {"WWW-Authenticate": 'Bearer realm="ludotheque"'}


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


def redeem(
    client: Any, ticket: str, resuming: bool, lease_s: float
) -> tuple[list[dict[str, Any]], str, list[int]]:
    """What ``ticket`` follows, the connection id that now holds it (to
    ``release``), and the cursors it may not resume before (one per match
    followed); 401 when it is unknown, expired, or used and this is not a
    reconnection."""
    key = ticket_key(ticket)
    holder = secrets.token_hex(8)
    answer = client.eval(
        REDEEM, 2, key, key + ":open", int(resuming), holder, int(lease_s), RESUME_S
    )
    kind = int(answer[0])
    if kind == 0:
        raise Problem(
            401, "invalid_ticket", "this stream ticket is unknown or expired", headers=TICKET_REALM
        )
    if kind == 1:
        raise Problem(
            401,
            "invalid_ticket",
            "this stream ticket was used; take a new one",
            headers=TICKET_REALM,
        )
    follows = orjson.loads(answer[1])
    raw = answer[2].decode() if isinstance(answer[2], bytes) else answer[2]
    floor = [int(n) for n in raw.split(".")] if raw else []
    return follows, holder, floor + [0] * (len(follows) - len(floor))


def keep_floor(client: Any, ticket: str, cursors: list[int]) -> None:
    """The ticket's stream has written up to ``cursors``: its reconnections
    resume no earlier (the stream's greenlet calls this after the write)."""
    with contextlib.suppress(redis.RedisError):  # then only the older floor holds
        client.eval(FLOOR, 1, ticket_key(ticket), ".".join(str(c) for c in cursors))


def check_holder(follow: dict[str, Any], seats: list[dict[str, Any]]) -> None:
    """401 unless the ticket's token still holds the seat it follows as."""
    if not may_follow_as(seats, follow["seat"], follow["token"]):
        raise Problem(
            401,
            "invalid_ticket",
            f"seat {follow['seat']} changed hands since this ticket was taken; take a new one",
            headers=TICKET_REALM,
        )


def release(client: Any, ticket: str, holder: str) -> None:
    """The connection ``holder`` closed: its reconnection may come for
    ``RESUME_S``, unless a newer connection holds the ticket."""
    key = ticket_key(ticket)
    with contextlib.suppress(redis.RedisError):  # else the holder's lease runs out
        client.eval(RELEASE, 2, key, key + ":open", holder, RESUME_S)


def follows_of(matches: Any, wanted: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Check each wanted match and token: what a ticket for them follows."""
    follows = []
    named = [(item["game"], item["match"]) for item in wanted]
    if len(set(named)) < len(named):
        # one follower per match and stream: a second would be fed nothing
        raise Problem(
            422,
            "invalid_request",
            "a ticket follows each match once; to follow two seats of one match, "
            "take a ticket for each",
        )
    for item in wanted:
        game = GAMES.get(item["game"])
        if game is None:
            raise Problem(404, "game_not_found", f"no game {item['game']!r}; see /v1/games")
        token = item.get("token")
        watch, _ = matches.watch(game, item["match"], token, 0)
        follows.append(
            {
                "game": game.name,
                "match": item["match"],
                "seat": watch.seat,
                "token": auth.token_hash(token) if token else None,
            }
        )
    return follows
