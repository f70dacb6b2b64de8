"""Waiting for one's turn: a read of the match that answers as soon as the
caller's seat is to act (or the match is over), so that a client plays a
turn with one read and one write (docs/api.md)."""

from __future__ import annotations

import time

from engines.core import Game
from service import lifecycle
from service.matches import WAIT_SLICE_MS, Matches, status_of
from service.store import Loaded, log_key


def settled(game: Game, loaded: Loaded, seat: int) -> bool:
    """Whether ``seat`` has nothing to wait for: it is to act, or the match is over."""
    status = status_of(game, loaded.match)
    if status == "finished":
        return True
    return status == "active" and seat in game.to_act(loaded.match["state"])


def wait_for_turn(
    matches: Matches, game: Game, match_id: str, loaded: Loaded, seat: int, wait_s: float
) -> Loaded:
    """``loaded``, or the match once ``seat`` is to act or it is over, waiting
    at most ``wait_s`` seconds; the log's new entries wake the wait."""
    if wait_s <= 0 or settled(game, loaded, seat):
        return loaded
    deadline = time.monotonic() + wait_s
    # the log's end first, then the match: a write in between wakes the wait at once
    last = matches.store.client.xrevrange(log_key(match_id), "+", "-", count=1)
    cursor = int(last[0][0].split(b"-")[1]) if last else 0
    loaded = matches.load(game, match_id)
    while not settled(game, loaded, seat) and not lifecycle.stopping():
        remaining_ms = int((deadline - time.monotonic()) * 1000)
        if remaining_ms <= 0:
            break
        events = matches.store.events(match_id, cursor, 1000, min(remaining_ms, WAIT_SLICE_MS))
        if events:
            cursor = events[-1]["index"]
            loaded = matches.load(game, match_id)
    return loaded
