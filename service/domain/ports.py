"""What the domain needs from the outside world, stated here, met elsewhere.

The domain reads and writes matches, counts bot seats and creations, and
nothing more; how (Redis keys, Lua scripts, replicas) is the store's
business (``service.store``), and the application factory (``service.app``)
hands the domain the objects that do it. So the domain imports neither a
Redis client nor Flask, and a reader learns here, in a page, every promise
the store keeps for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from service.domain.ratings import Rating


@dataclass
class Loaded:
    version: int
    match: dict[str, Any]
    replay: bytes | None  # the idempotency record asked for, if it exists


@dataclass
class Written:
    """What a write came to: the new version; or, when the match had moved
    on, the match as it is now; or the idempotency record already there."""

    version: int | None = None
    current: Loaded | None = None
    replay: bytes | None = None
    last: int = 0  # written: the index of the log's last event


class NotReplicated(Exception):
    """A write reached fewer replicas than LUDOTHEQUE_REDIS_MIN_REPLICAS in
    the time allowed: it may survive or vanish in a failover, so it is not
    confirmed (the Idempotency-Key retry tells which). The store answers
    503 for it, as for any store trouble (``service.store.outages``)."""

    def __init__(self, message: str, applied: bool = False) -> None:
        super().__init__(message)
        self.applied = applied  # the primary took the write (it may yet lose it)


class MatchStore(Protocol):
    """Matches and their logs (``service.store.matches.Store``).

    ``counters`` are the request's rate-limit counters, opaque here: a read
    or a write that is given them counts them in its own round trip (and
    answers 429, writing nothing, when one is over its limit)."""

    def load(
        self, match_id: str, replay_key: str | None = None, counters: Sequence[Any] = ()
    ) -> Loaded | None:
        """The match and its version, None when unknown; with ``replay_key``,
        also the idempotency record kept there, if any."""
        ...

    def remembered(self, match_id: str) -> Loaded | None:
        """The match as this process last read or wrote it, perhaps no
        longer current (a write from it will tell)."""
        ...

    def commit(
        self,
        match_id: str,
        expected_version: int,
        match: dict[str, Any],
        events: list[dict[str, Any]],
        ttl: int,
        replay: tuple[str, bytes] | None = None,
        counters: Sequence[Any] = (),
    ) -> Written:
        """Write ``match`` as version ``expected_version + 1`` (0 creates it)
        with its events, unless the stored version is another: then the match
        as it is now. NotReplicated when too few replicas confirm it."""
        ...

    def events(self, match_id: str, after: int, limit: int) -> list[dict[str, Any]]:
        """Events number ``after + 1`` on, at most ``limit``, each with its ``index``."""
        ...


class BotSeats(Protocol):
    """The cap on live bot seats per paying address
    (``service.background.scheduler.Scheduler``)."""

    def reserve(self, match: dict[str, Any], seats: list[int], force: bool = False) -> bool:
        """Count ``seats`` of ``match`` against their payer's cap: 429
        ``bot_seats_exceeded`` past it, unless ``force`` (then False)."""
        ...


class CreationQuotas(Protocol):
    """What one address may create (``service.store.quotas.Quotas``)."""

    def admit(self, address: str, match_id: str | None, now: float) -> None:
        """Count a creation, and ``match_id`` among the address's waiting
        matches (None: it starts at once); 429 past a limit."""
        ...

    def joined(self, address: str, match_id: str, waiting: bool, now: float) -> None:
        """A seat of the address's match was taken: it waits on, or started."""
        ...


class ArchivedMatches(Protocol):
    """Finished matches kept for good, once Redis has forgotten them
    (``service.store.archive.Archive``)."""

    def final(self, game: str, match_id: str) -> dict[str, Any] | None:
        """The match as a spectator saw it at the end; None when not archived."""
        ...

    def record(self, game: str, match_id: str) -> dict[str, Any] | None:
        """Its signed record; None when not archived."""
        ...

    def record_text(self, game: str, match_id: str) -> bytes | None:
        """Its signed record as kept (JSON); None when not archived, or when
        the archive cannot answer now (then the record is built from Redis,
        if Redis still has the match)."""
        ...


class CurrentRatings(Protocol):
    """The players' ratings now (``service.store.ratings.Ratings``)."""

    def current(self, game: str, player_ids: list[str]) -> dict[str, Rating]:
        """Each player's rating for ``game``; a player never rated is missing."""
        ...
