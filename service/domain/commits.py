"""One way to write a match: read, decide, compare-and-set, and tell.

Every write of a match (a creation, a join, an action, a turn the server
plays, a seat left, a resignation, an abort, a rematch, a webhook given up
on) goes through ``Commits.change``: read the match, let a function decide
the change (or refuse it with a Problem), write it with a compare-and-set
on the version; a write that loses a race is decided again on the match as
the winning write left it, unless the client pinned a version with
If-Match (412), and at most ``max_attempts`` times (then 409 ``conflict``).

What must follow a commit (queueing the turn the server owes, the
webhook's deliveries, the lobby's index) is no business of the write: it
subscribes. The application factory gives the list of subscribers, called
in its order after each write that landed, each with a ``Commit``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from engines import GAMES
from engines.core import Event, Game
from service.domain import hooks
from service.domain.clocks import refresh_deadlines
from service.domain.ports import Loaded, MatchStore, NotReplicated, Written
from service.domain.problems import Problem
from service.domain.views import status_of
from service.metrics import CAS_RETRIES


@dataclass(frozen=True)
class Settings:
    finished_ttl: int = 24 * 3600  # seconds a finished match stays readable
    idle_ttl: int = 7 * 24 * 3600  # seconds an untouched match lives
    max_attempts: int = 50  # compare-and-set attempts before answering 409
    waiting_ttl: int = 3600  # seconds a match with an open seat lives after its last change


@dataclass
class Change:
    """What a decision writes, beside the match it changed in place."""

    events: list[Event]
    record: tuple[str, bytes] | None = None  # the idempotency record (key, answer) written along
    counters: Sequence[Any] = ()  # the request's rate-limit counters, counted by the write
    requeue: bool = False  # a turn the server just played: the match waits behind the others


@dataclass(frozen=True)
class Commit:
    """What a subscriber learns: ``match`` was written as ``version`` with
    ``events`` (the turn notices included). ``confirmed`` False: the store
    took the write but too few replicas confirmed it in time; it may yet
    survive a failover, so what must never be lost if it does (the turn
    the server owes) follows it all the same, and the rest waits for a
    confirmed one."""

    game: Game
    match: dict[str, Any]
    version: int
    events: list[Event]
    finished: bool
    requeue: bool = False
    confirmed: bool = True
    last: int = 0  # the index of the log's last event, when known


Subscriber = Callable[[Commit], None]


@dataclass
class Committed:
    """A change's end: the match as written (``loaded.version`` the new
    one), or as read when the decision wrote nothing; ``replay``: the
    idempotency record answered instead of writing."""

    loaded: Loaded
    replay: bytes | None = None


class Commits:
    def __init__(
        self,
        store: MatchStore,
        settings: Settings,
        subscribers: Sequence[Subscriber] = (),
        finishing: Callable[[str], None] | None = None,
        ending: Callable[[Game, dict[str, Any], list[Event]], list[Event]] | None = None,
    ) -> None:
        """``ending(game, match, events)``: the events of a write that leaves
        the match finished, amended (a rated match rated: ``service.domain.
        ratings.ending``), decided again with the write when it loses a race.
        ``finishing(match_id)``: called before a write that leaves the
        match finished (the archive's queue expects it), so that what must
        follow the end cannot be lost between the write and its subscribers;
        with it, a finished match is kept until archived (which then lets it
        expire ``finished_ttl`` later)."""
        self.store = store
        self.settings = settings
        self.subscribers = tuple(subscribers)
        self.finishing = finishing
        self.ending = ending

    def change(
        self,
        read: Callable[[], Loaded],
        decide: Callable[[Loaded], Change | None],
        *,
        start: Loaded | None = None,
        if_match: int | None = None,
        attempts: int | None = None,
    ) -> Committed:
        """Read the match (``read`` refuses with a Problem when it cannot),
        let ``decide`` change it in place and say what to write (None:
        nothing; a Problem: refused), then write it; while another write
        wins, decide again on the match as that write left it: with
        ``if_match`` (the version the client pinned) 412 instead, and 409
        ``conflict`` after ``attempts`` tries (the settings' ``max_attempts``).

        ``start``: the match as this process remembers it, perhaps no longer
        current: decided on first and written in one round trip, the
        compare-and-set catching a match that moved on. Only a match read
        now may refuse: a remembered one that ``decide`` refuses is read.
        """
        loaded, fresh = start, False
        for _ in range(attempts or self.settings.max_attempts):
            if loaded is None:
                loaded, fresh = read(), True
            try:
                change = decide(loaded)
            except Problem:
                if fresh:
                    raise
                loaded = None  # remembered, perhaps no longer current: read it
                continue
            if change is None:
                return Committed(loaded, loaded.replay)
            game = GAMES[loaded.match["game"]]
            written = self._write(game, loaded.match, loaded.version, change)
            if written.replay is not None:
                return Committed(loaded, written.replay)
            if written.version is not None:
                loaded.version = written.version
                return Committed(loaded)
            if if_match is not None:
                now_at = written.current.version if written.current else loaded.version + 1
                raise Problem(
                    412, "version_mismatch", "the match changed meanwhile", version=now_at
                )
            CAS_RETRIES.labels(game.name).inc()
            loaded, fresh = written.current, True  # as the write found it (None: gone)
        raise Problem(409, "conflict", "too many concurrent changes to this match; retry")

    def _write(self, game: Game, match: dict[str, Any], expected: int, change: Change) -> Written:
        """Write ``match`` as version ``expected + 1`` (its clocks, TTL and
        turn notices brought up to date), then tell the subscribers."""
        refresh_deadlines(game, match, time.time())
        status = status_of(game, match)
        ttl = self.settings.finished_ttl if status == "finished" else self.settings.idle_ttl
        if status == "waiting":
            ttl = self.settings.waiting_ttl
        version = expected + 1
        events = change.events
        if status == "active":
            events = events + hooks.turn_notices(match, game.to_act(match["state"]), events)
        finished = status == "finished"
        if finished:
            match.setdefault("ended_at", time.time())
            if self.ending is not None:
                events = self.ending(game, match, events)
        stamped = [{"version": version, **event} for event in events]
        if finished and self.finishing is not None:
            self.finishing(match["id"])
            ttl = 0  # kept until archived
        try:
            written = self.store.commit(
                match["id"], expected, match, stamped, ttl, change.record, change.counters
            )
        except NotReplicated as unconfirmed:
            if unconfirmed.applied:  # it may survive: tell those who must not miss it
                self._tell(Commit(game, match, version, events, finished, change.requeue, False))
            raise
        if written.version is not None:
            version, last = written.version, written.last
            self._tell(Commit(game, match, version, events, finished, change.requeue, last=last))
        return written

    def _tell(self, commit: Commit) -> None:
        for subscriber in self.subscribers:
            subscriber(commit)
