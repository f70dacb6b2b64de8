"""Waiting for one's turn: a read of the match that answers as soon as the
caller's seat is to act (or the match is over), so that a client plays a
turn with one read and one write (docs/clients/api.md)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import orjson

from engines.core import Game
from service.domain.access import may_follow_as
from service.domain.ports import Loaded
from service.domain.problems import Problem
from service.domain.tokens import token_hash
from service.domain.views import status_of
from service.live import shutdown as lifecycle
from service.live.following import Following
from service.live.hub import Batch, Follower


def settled(game: Game, loaded: Loaded, seat: int) -> bool:
    """Whether ``seat`` has nothing to wait for: it is to act, or the match is over."""
    status = status_of(game, loaded.match)
    if status == "finished":
        return True
    return status == "active" and seat in game.to_act(loaded.match["state"])


@contextmanager
def turn_of(
    live: Following,
    game: Game,
    match_id: str,
    token: str,
    wait_s: float,
    address: str,
) -> Iterator[tuple[Loaded, int | None]]:
    """The match and ``token``'s seat (403 when it holds none), once the seat
    is to act or the match is over, waiting at most ``wait_s`` seconds: a
    long poll. The process's push hub wakes the wait when the log grows (no
    Redis connection is held); it ends as soon as the seat is no longer the
    token's. A wait that waits is held against the follower caps, as a
    stream is (429 ``too_many_followers``).

    A context manager: the caller lays out its answer inside it. The
    follower's release is sent when the wait ends and its answer read when
    the context closes, so that the round trip runs while the answer is
    laid out instead of on the handoff's path; the release is done before
    the answer leaves.

    The match is followed before it is read, so that a move made after the
    read wakes the wait, and the read that decides whether to wait is the
    only one before it: four round trips for a long poll woken once (the
    read, the follower's hold, the read once woken, the release), three
    when this process made the move that woke it (the hub hands over the
    match as written). A match that does not exist is not followed a
    moment longer (its channel would linger otherwise, for any id a client
    makes up)."""
    follower = Follower([match_id], reads_itself=True)
    live.hub.follow(follower)
    linger = True
    finish = None
    try:
        try:
            loaded = live.matches.load(game, match_id)
        except Problem as refused:
            linger = refused.status != 404
            raise
        seat = live.matches.seat_for(loaded, token)
        if seat is not None and not settled(game, loaded, seat):
            holder = token_hash(token)
            held = live.allowances.hold(address, [holder], wait_s + 30, following=1)
            try:
                loaded = _wait(live, game, match_id, loaded, seat, wait_s, holder, follower)
            except BaseException:
                live.allowances.release(held)
                raise
            finish = live.allowances.releasing(held)
    finally:
        live.hub.unfollow(follower, linger)
    try:
        if finish is None:
            yield loaded, seat
        else:  # 403 if the seat changed hands
            yield loaded, live.matches.seat_for(loaded, token)
    finally:
        if finish is not None:
            finish()


def _wait(
    live: Following,
    game: Game,
    match_id: str,
    loaded: Loaded,
    seat: int,
    wait_s: float,
    holder: str,
    follower: Follower,
) -> Loaded:
    deadline = time.monotonic() + wait_s
    while not (
        settled(game, loaded, seat)
        or not may_follow_as(loaded.match["seats"], seat, holder)
        or lifecycle.stopping()
        or live.hub.stopped
    ):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        batches = follower.take(min(remaining, 1.0))
        if batches:
            loaded = woken_to(batches[-1], loaded) or live.matches.load(game, match_id)
    return loaded


def woken_to(batch: Batch, loaded: Loaded) -> Loaded | None:
    """The match as the commit that woke the wait wrote it, when that commit
    was this process's and its wake-up the last one taken (no read needed:
    it was current when it woke the wait; ``loaded`` when that is as new);
    else None (read it)."""
    state = batch.state
    if state is None:
        return None
    if state[0] <= loaded.version:
        return loaded
    return Loaded(state[0], orjson.loads(state[1]), None)
