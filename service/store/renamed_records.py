"""Records that changed after they were signed, as every process learns of
them (issue 36, point 7).

A finished match's record never changes, so each server process keeps the
records (and replays) it served in memory (``service.domain.records``).
When a player leaves for good, its name is taken out of its matches'
records, which are signed again: every process must then drop what it
keeps of them. The deleting process notes them here, in one sorted set
(``ludotheque:{records}:renamed``: ``<game>:<match id>`` scored by when),
and every process reads what was noted since it last looked, at most once
per ``POLL_S`` and only when it serves a record or a replay
(``Renamed.check``), then drops those from its memory. Notes are kept
``RETENTION_S``; a process that has not looked for longer drops all it
keeps.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

KEY = "ludotheque:{records}:renamed"
RETENTION_S = 2 * 24 * 3600
POLL_S = 2.0
SLACK_S = 60.0  # how far two hosts' clocks may disagree


def note(client: Any, matches: list[tuple[str, str]]) -> None:
    """``matches`` (game, id) have new records: every process is to drop its copy."""
    if not matches:
        return
    now = time.time()
    pipe = client.pipeline(transaction=False)
    pipe.zadd(KEY, {f"{game}:{match_id}": now for game, match_id in matches})
    pipe.zremrangebyscore(KEY, "-inf", now - RETENTION_S)
    pipe.expire(KEY, RETENTION_S)
    pipe.execute()


def since(client: Any, moment: float) -> list[tuple[str, str]]:
    """The matches noted at or after ``moment``."""
    found = client.zrangebyscore(KEY, moment, "+inf")
    return [tuple(member.decode().split(":", 1)) for member in found]  # type: ignore[misc]


class Renamed:
    """This process's view of the notes: ``check`` drops, from each cache
    registered (``watch(forget, clear)``), the matches noted since it last
    looked."""

    def __init__(self, client: Any, poll_s: float = POLL_S) -> None:
        self.client = client
        self.poll_s = poll_s
        self.lock = threading.Lock()
        self.looked = time.time()
        self.caches: list[tuple[Callable[[str, str], None], Callable[[], None]]] = []

    def watch(self, forget: Callable[[str, str], None], clear: Callable[[], None]) -> None:
        self.caches.append((forget, clear))

    def check(self) -> None:
        now = time.time()
        if now - self.looked < self.poll_s:
            return
        with self.lock:
            if now - self.looked < self.poll_s:
                return
            start = self.looked - SLACK_S
            try:
                found = since(self.client, start)
            except Exception as error:  # the store: records are still served, checked later
                log.warning("could not read the renamed records: %s", error)
                return
            self.looked = now
        for forget, clear in self.caches:
            if now - start > RETENTION_S:
                clear()
                continue
            for game, match_id in found:
                forget(game, match_id)
