"""The archiver: every finished match into the SQL archive, once.

It runs in each ``ludotheque worker`` process, beside the bot turns and
the webhooks. It takes the earliest match due from the archive's queue
(``service.store.archiving``: leased, so that a dead worker's match is
taken over), reads it from Redis, and if it is finished writes it to the
archive in one transaction (``service.store.archive.Archive.put``,
idempotent by match id): its signed record, what a spectator sees of it at
the end, and the columns searches use. Only then does Redis let it expire
(``LUDOTHEQUE_FINISHED_TTL`` later) and the queue forget it. So a worker
killed anywhere loses nothing (the lease runs out; the next one archives
it, or finds it archived), and while the database is down matches wait in
Redis and the queue, and are archived when it is back.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from engines import GAMES
from engines.core import Game
from service.background.scheduler import IDLE_S, Doorbell
from service.domain import fairness, signing
from service.domain.commits import Commit
from service.domain.endings import outcome_of
from service.domain.matches import Matches
from service.domain.ports import Loaded
from service.domain.views import present, status_of
from service.store import player_matches
from service.store.archive import Archive, Archived
from service.store.archiving import ArchiveQueue
from service.store.database import NotMigrated, check_migrated
from service.store.outages import StoreBackoff, is_store_trouble
from service.store.record_keys import RecordKeys

log = logging.getLogger(__name__)

LEASE_S = 30.0  # a match taken and not archived by then is taken over (by default)
NOT_FINISHED_S = 30.0  # a match queued but not finished (its write failed) is looked at then


def queueing(queue: ArchiveQueue) -> Callable[[Commit], None]:
    """The commit subscriber: a match written finished is due for archiving now."""

    def ready(commit: Commit) -> None:
        if commit.finished:
            queue.ready(commit.match["id"], time.time())

    return ready


def seated(recorded: list[dict[str, Any]], seats: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The record's seats, each with the player who held it (its public id,
    and whether it is a bot account) if a player did."""
    return [
        shown
        | ({"player": held["player"]} if held.get("player") else {})
        | ({"bot_account": True} if held.get("bot_account") else {})
        for shown, held in zip(recorded, seats, strict=True)
    ]


class Archiver:
    def __init__(
        self,
        matches: Matches,
        queue: ArchiveQueue,
        archive: Archive,
        record_keys: RecordKeys,
        finished_ttl: int,
        stopping: threading.Event | None = None,
        idle_s: float = IDLE_S,
        lease_s: float | None = None,
    ) -> None:
        self.matches = matches
        self.lease_s = LEASE_S if lease_s is None else lease_s
        self.queue = queue
        self.archive = archive
        self.record_keys = record_keys
        self.finished_ttl = finished_ttl
        self.stopping = stopping or threading.Event()
        self.doorbell = Doorbell(
            queue.take_nudge, queue.nudge, 1, self.stopping, idle_s, name="archiver"
        )
        self.database = StoreBackoff(first_s=0.2, cap_s=5.0, what="the archive's database")
        self.migrated = False  # the database's schema is the code's (checked once)

    def run_once(self) -> float | None:
        """Archive the earliest match due: None. When none is due: when the
        next one is (``math.inf``: none is queued)."""
        if not self.migrated:
            try:
                check_migrated(self.archive.engine)
            except (SQLAlchemyError, NotMigrated) as error:
                return time.time() + self.database.next_wait(error)
            self.migrated = True
        now = time.time()
        match_id, lease = self.queue.take(now, self.lease_s)
        if match_id is None:
            return math.inf if lease is None else float(lease)
        assert isinstance(lease, str)
        loaded = self.matches.store.load(match_id)
        if loaded is None:
            # gone from Redis: archived before and expired since, or never finished
            if not self.archive.has(match_id):
                log.warning("match %s left Redis before it was archived", match_id)
            self.queue.done(match_id, lease)
            return None
        game = GAMES[loaded.match["game"]]
        if status_of(game, loaded.match) != "finished":
            self.queue.later(match_id, now + NOT_FINISHED_S)  # its finishing write failed
            return None
        archived = self.archived(game, loaded)
        try:
            new = self.archive.put(archived)
        except SQLAlchemyError as error:
            wait = self.database.next_wait(error)
            self.queue.later(match_id, time.time() + wait)
            return time.time() + wait
        self.database.over()
        if archived.ratings and self.archive.ratings is not None:  # again: idempotent
            self.archive.ratings.apply(game.name, archived.ratings, match_id)
        player_matches.forget_match(self.matches.store.client, loaded.match)  # archived: listed so
        self.matches.store.forget_in(match_id, self.finished_ttl)
        self.queue.done(match_id, lease)
        delay = archived.archived_ms / 1000 - loaded.match.get("ended_at", now)
        log.info(
            "archived %s match %s (%s) %.3f s after its end",
            game.name,
            match_id,
            "new" if new else "again",
            delay,
        )
        return None

    def archived(self, game: Game, loaded: Loaded) -> Archived:
        """``loaded``, a finished match, as the archive keeps it."""
        match = loaded.match
        record = signing.sign(self.matches.record_of(game, loaded), self.record_keys.get())
        final = present(game, match, loaded.version, None)
        ended = match.get("ended_at") or time.time()
        return Archived(
            id=match["id"],
            game=game.name,
            created_ms=int(match["created_at"] * 1000),
            ended_ms=int(ended * 1000),
            archived_ms=int(time.time() * 1000),
            version=loaded.version,
            seeded=bool(match.get("seeded")),
            seats=seated(record["seats"], match["seats"]),
            outcome=fairness.revealed(match, outcome_of(game, match)) or {},
            final=final,
            record=record,
            ratings=match.get("ratings") or [],
        )

    def run(self) -> None:
        log.info("archiver ready")
        self.doorbell.start()
        outage = StoreBackoff()
        while not self.stopping.is_set():
            try:
                due = self.run_once()
                outage.over()
            except SQLAlchemyError as error:  # the database, once the match was taken
                due = time.time() + self.database.next_wait(error)  # its lease runs out
            except Exception as error:
                if is_store_trouble(error):
                    self.stopping.wait(outage.next_wait(error))
                    continue
                log.exception("archiving a match failed")  # its lease runs out: tried again
                due = time.time() + 1
            if due is not None:
                self.doorbell.wait(due)
        log.info("archiver stopped")
