"""Waiting for one's turn: a read of the match that answers as soon as the
caller's seat is to act (or the match is over), so that a client plays a
turn with one read and one write (docs/clients/api.md)."""

from __future__ import annotations

import time

from engines.core import Game
from service.domain.access import may_follow_as
from service.domain.ports import Loaded
from service.domain.views import status_of
from service.live import shutdown as lifecycle
from service.live.following import Following
from service.live.hub import Follower


def settled(game: Game, loaded: Loaded, seat: int) -> bool:
    """Whether ``seat`` has nothing to wait for: it is to act, or the match is over."""
    status = status_of(game, loaded.match)
    if status == "finished":
        return True
    return status == "active" and seat in game.to_act(loaded.match["state"])


def wait_for_turn(
    live: Following,
    game: Game,
    match_id: str,
    loaded: Loaded,
    seat: int,
    wait_s: float,
    holder: str | None = None,
) -> Loaded:
    """``loaded``, or the match once ``seat`` is to act or it is over, waiting
    at most ``wait_s`` seconds: the process's push hub wakes the wait when the
    log grows (no Redis connection is held). With ``holder`` (the token's
    hash), it ends as soon as the seat is no longer that token's. The caller
    holds it against the follower caps, as a stream (``service.http.api``)."""
    if wait_s <= 0 or settled(game, loaded, seat):
        return loaded
    deadline = time.monotonic() + wait_s
    follower = Follower([match_id])
    live.hub.follow(follower)
    try:
        # followed first, then read: a write in between wakes the wait at once
        loaded = live.matches.load(game, match_id)
        while not (
            settled(game, loaded, seat)
            or (holder is not None and not may_follow_as(loaded.match["seats"], seat, holder))
            or lifecycle.stopping()
            or live.hub.stopped
        ):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            if follower.take(min(remaining, 1.0)):
                loaded = live.matches.load(game, match_id)
    finally:
        live.hub.unfollow(follower)
    return loaded
