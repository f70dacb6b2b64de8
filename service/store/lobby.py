"""The lobby's index in Redis: each game's listed matches that have open
seats, newest first (what it shows: ``service.domain.lobby``).

The index is one sorted set per game, ``lobby:{G}``, in a cluster slot of its
own; every member scores 0 and is ``<created ms, 13 digits>:<match id>``, so
the set's lexical order is creation order and a member is a cursor that
never moves (``ZREVRANGEBYLEX`` from it continues exactly where a page
stopped, however many matches come and go meanwhile).

The index is a hint, the match is the truth. It is updated after the
match's own write (a match and the index live in different slots, so no
single script can do both on a cluster): a listed match is added when it is
created with open seats or a seat is left, removed when it fills, starts or
ends. A reader never trusts it: each page reads the listed matches
themselves (one pipelined round trip per batch) and shows only those still
waiting with an open seat, removing the stale members it met. So a match
that has just started, expired or been aborted is never shown, whatever
order concurrent writers updated the index in.

A page costs at most ``SCAN_ROUNDS`` batches, each one ``ZREVRANGEBYLEX``
plus one pipelined read of up to ``limit`` matches (plus one ``ZREM`` when it
met stale members): a bounded number of round trips whatever the number of
matches. When filters skip many matches, a page may hold fewer than
``limit`` of them while ``next`` still points further.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from engines.core import Event, Game
from service.domain import lobby as rules
from service.domain.commits import Commit, Subscriber
from service.store.matches import Store, match_key

SCAN_ROUNDS = 3
CURSOR = re.compile(r"^[0-9]{13}:[0-9a-f]{32}$")


def lobby_key(game_name: str) -> str:
    return f"lobby:{{{game_name}}}"


def member(match: dict[str, Any]) -> str:
    return f"{int(match['created_at'] * 1000):013d}:{match['id']}"


def sync(store: Store, game: Game, match: dict[str, Any], events: list[Event]) -> None:
    """After a listed match's write: list it or take it off the list."""
    listed = rules.listed_after(match, events)
    if listed is True:
        store.client.zadd(lobby_key(game.name), {member(match): 0})
    elif listed is False:
        store.client.zrem(lobby_key(game.name), member(match))


def page(
    store: Store,
    game: Game,
    limit: int,
    cursor: str | None = None,
    players: int | None = None,
    min_open: int = 1,
) -> dict[str, Any]:
    """Up to ``limit`` listed matches with at least ``min_open`` open seats
    (and exactly ``players`` seats, if given), newest first, after ``cursor``."""
    key = lobby_key(game.name)
    start = f"({cursor}" if cursor else "+"
    shown: list[dict[str, Any]] = []
    for _ in range(SCAN_ROUNDS):
        members = store.client.zrevrangebylex(key, start, "-", start=0, num=limit)
        pipe = store.client.pipeline(transaction=False)
        for found in members:
            pipe.hget(match_key(found.decode().split(":")[1]), "d")
        rows = pipe.execute() if members else []
        stale = []
        for found, data in zip(members, rows, strict=True):
            start = "(" + found.decode()
            match = orjson.loads(data) if data is not None else None
            seats_open = rules.still_open(match)
            if match is None or not seats_open:
                stale.append(found)
            elif rules.fits(match, seats_open, players, min_open):
                shown.append(rules.entry(match, seats_open))
                if len(shown) == limit:
                    break
        if stale:
            store.client.zrem(key, *stale)
        if len(members) < limit:
            return {"matches": shown, "next": None}
        if len(shown) == limit:
            break
    return {"matches": shown, "next": start[1:]}


def listing(store: Store) -> Subscriber:
    """The commit subscriber that keeps the index after each confirmed
    write of a listed match."""

    def after(commit: Commit) -> None:
        if commit.confirmed and commit.match.get("listed"):
            sync(store, commit.game, commit.match, commit.events)

    return after
