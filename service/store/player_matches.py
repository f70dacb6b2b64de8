"""Each player's live matches, indexed in Redis (issue 36, point 4).

``GET /v1/players/me/matches`` lists a player's waiting and active
matches (and finished ones not archived yet) from Redis, then its archived
ones from the archive (``match_players``). This is the index of the live
ones: one sorted set per player, ``player:{<id>}:matches`` (hash-tagged by
player: a slot of its own on Redis Cluster), every member scored 0 and
spelled ``<created ms, 13 digits>:<match id>`` (as the lobby's), so that
its lexical order is creation order and a member is a cursor that never
moves.

A match is the player's while one of its seats names the player
(``seat["player"]``): held, or reserved for it (a rematch seat it may take
again). The index follows commits (``indexing``, a commit subscriber): a
commit that gives out seats (``match_created``, ``seat_joined``) adds the
match for every player seated in it, a ``seat_left`` whose player is no
longer seated removes it; the archiver removes a match once archived
(``forget_match``). Like the lobby's, the index is a hint and the match the
truth: a page reads the listed matches (one pipelined round trip per batch)
and shows only those that still seat the player, removing the members it
found stale (a waiting match that expired, a match Redis forgot).

Nothing leaks: a set holds at most ``LIVE_MAX`` members (the oldest
created go first), and expires ``ttl`` seconds after it was last written
or read, or after a commit of one of its matches refreshed it (at most once
per ``ttl / 8`` per player and process, so that an action costs no extra
round trip as a rule). The application factory gives twice the idle TTL of
a match: an index outlives every match it lists.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterable
from typing import Any

import orjson

from service.domain.commits import Commit, Subscriber
from service.store.matches import Store, match_key

LIVE_MAX = 200  # members per player, newest created kept
SCAN_ROUNDS = 3  # batches a page reads at most
MEMBER = re.compile(r"^[0-9]{13}:[0-9a-f]{32}$")
GIVES_SEATS = frozenset({"match_created", "seat_joined"})
REFRESHED_MAX = 10_000  # players whose last refresh a process remembers


def index_key(player_id: str) -> str:
    return f"player:{{{player_id}}}:matches"


def member(match: dict[str, Any]) -> str:
    return f"{int(match['created_at'] * 1000):013d}:{match['id']}"


def seated(match: dict[str, Any]) -> dict[str, int]:
    """The players a match seats (held or reserved), each with its seat."""
    return {
        seat["player"]: n
        for n, seat in enumerate(match["seats"])
        if seat.get("player") is not None
    }


def add(pipe: Any, player_id: str, entry: str, ttl: int) -> None:
    key = index_key(player_id)
    pipe.zadd(key, {entry: 0})
    pipe.zremrangebyrank(key, 0, -LIVE_MAX - 1)  # the oldest created beyond the bound
    pipe.expire(key, ttl)


class Refreshed:
    """When this process last refreshed each player's index (bounded)."""

    def __init__(self, every_s: float) -> None:
        self.every_s = every_s
        self.lock = threading.Lock()
        self.at: dict[str, float] = {}

    def due(self, player_ids: Iterable[str]) -> list[str]:
        now = time.monotonic()
        with self.lock:
            if len(self.at) > REFRESHED_MAX:
                self.at.clear()
            due = [p for p in player_ids if now - self.at.get(p, -self.every_s) >= self.every_s]
            for player_id in due:
                self.at[player_id] = now
        return due

    def done(self, player_ids: Iterable[str]) -> None:
        now = time.monotonic()
        with self.lock:
            for player_id in player_ids:
                self.at[player_id] = now


def indexing(store: Store, ttl: int) -> Subscriber:
    """The commit subscriber that keeps each player's index."""
    refreshed = Refreshed(ttl / 8)

    def after(commit: Commit) -> None:
        if not commit.confirmed:
            return
        players = seated(commit.match)
        kinds = {event["type"] for event in commit.events}
        left = {
            event["player"]
            for event in commit.events
            if event["type"] == "seat_left" and event.get("player") not in (None, *players)
        }
        pipe = store.client.pipeline(transaction=False)
        if kinds & GIVES_SEATS:
            entry = member(commit.match)
            for player_id in players:
                add(pipe, player_id, entry, ttl)
            refreshed.done(players)
        else:
            for player_id in refreshed.due(players):
                pipe.expire(index_key(player_id), ttl)
        for player_id in left:
            pipe.zrem(index_key(player_id), member(commit.match))
        if len(pipe):
            pipe.execute()

    return after


def forget_match(client: Any, match: dict[str, Any]) -> None:
    """Take ``match`` (archived now) off the index of every player it seats."""
    players = seated(match)
    if players:
        pipe = client.pipeline(transaction=False)
        for player_id in players:
            pipe.zrem(index_key(player_id), member(match))
        pipe.execute()


def page(
    store: Store, player_id: str, limit: int, ttl: int, after: str | None = None
) -> tuple[list[tuple[dict[str, Any], int]], str | None]:
    """Up to ``limit`` of the player's live matches (each with its version),
    newest created first, after the member ``after``; and the member to
    continue from (None: the index is done)."""
    key = index_key(player_id)
    start = f"({after}" if after else "+"
    shown: list[tuple[dict[str, Any], int]] = []
    for _ in range(SCAN_ROUNDS):
        members = store.client.zrevrangebylex(key, start, "-", start=0, num=limit)
        pipe = store.client.pipeline(transaction=False)
        for found in members:
            pipe.hmget(match_key(found.decode().split(":")[1]), "v", "d")
        rows = pipe.execute() if members else []
        stale = []
        for found, (version, data) in zip(members, rows, strict=True):
            start = "(" + found.decode()
            match = orjson.loads(data) if data is not None and version is not None else None
            if match is None or player_id not in seated(match):
                stale.append(found)
                continue
            shown.append((match, int(version)))
            if len(shown) == limit:
                break
        if stale:
            store.client.zrem(key, *stale)
        if len(members) < limit:
            store.client.expire(key, ttl)  # read: kept as long as it is used
            return shown, None
        if len(shown) == limit:
            break
    return shown, start[1:]


def match_ids(client: Any, player_id: str) -> list[str]:
    """Every match in the player's index (at most ``LIVE_MAX``)."""
    return [found.decode().split(":")[1] for found in client.zrange(index_key(player_id), 0, -1)]


def drop(client: Any, player_id: str) -> None:
    """Forget the player's index (the player is deleted)."""
    client.delete(index_key(player_id))
