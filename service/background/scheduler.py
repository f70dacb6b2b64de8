"""Which bot turn the workers play next, so that no client can delay
another's bots (docs/operators/bot-scheduling.md).

The server owes a match a turn when one of its bots is to act, or when a
seat's turn clock has run out. Those turns wait in one queue in Redis
(``service.store.scheduling``), shared by every worker process on every
machine:

- A match with a person in it (a seat that has a token) waits in the
  ``people`` queue, a match of bots only in the ``bots`` queue, and a worker
  takes a bots' turn only when no people's turn may be taken: whoever waits
  for a bot goes first.
- Within a queue the creating addresses take turns, and within one address
  its matches take turns, whatever the order in which their turns came
  due (start-time fair queueing). A match played keeps its place no more:
  it is queued again behind the others (``requeue``).
- A turn owed later (a turn clock) waits for its time, then joins its queue.
- A write schedules after it has committed, in a round trip of its own, so
  two schedules can arrive in the other order than their writes: a schedule
  older than the one queued does not unqueue it.
- A worker leases the match it plays; a leased match is never taken by
  another worker; when a lease runs out its worker is taken for dead and the
  next claim takes the turn over. Every move is a compare-and-set on the
  match version, so a turn is played once.

Bot seats are counted per paying address (the creator pays, unless a
joiner seated the bot, see ``service.domain.access.payer_of``): creating a
match or giving a seat to a bot past ``bot_seats_per_address`` live bot
seats is refused (429 ``bot_seats_exceeded``). A bot seat counts until its
match is over, or until its match has not moved for
``service.store.scheduling.LIVE_WINDOW_S``; every turn owed refreshes it, in
the same round trip as the scheduling.

Each match also has a bot time budget: the thinking time its bots spent so
far is kept in the match (``bot_time_s``); past ``match_budget_s`` its bots
play ``random`` moves, which cost next to nothing.

Idle, a worker costs next to nothing (issue 34: polling every 50 ms cost
each worker process 19 ms of CPU per second, Redis 11): a thread that found
nothing to take waits at a ``Doorbell`` until its queue's next due time
(a timer, a retry, a lease running out), at most ``IDLE_S``, or until
rung; the queue's scripts push a nudge when work comes due sooner than that
(``service.store.scheduling``, ``service.store.deliveries``), and one
listener thread per doorbell takes nudges for the waiting threads.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from service.domain import access
from service.domain.problems import Problem
from service.store.outages import StoreBackoff, is_store_trouble
from service.store.scheduling import QUEUE_KEYS, TurnQueue

# QUEUE_KEYS: the queue's slot, where service.domain.matches waits for replicas
__all__ = ["IDLE_S", "QUEUE_KEYS", "BotLimits", "Doorbell", "Scheduler"]

log = logging.getLogger(__name__)

CAP_RETRY_AFTER_S = 60
# An idle thread looks at its queue at least this often, even unrung: in
# case a nudge was lost (its taker died with it, or a failover lost it).
IDLE_S = 5.0
# A listener's wait for a nudge, at most: within the store's socket timeout
# (5 s, service.store.matches.connect), which a longer wait would trip.
LISTEN_S = 4.0


class Doorbell:
    """Where the idle threads of one kind in a process wait (the bot worker;
    the webhooks' first lane; their retry lane): each until its queue's next
    due time, at most ``idle_s``, or until rung.

    One listener thread takes the kind's nudges from Redis (``take_nudge``,
    a blocking pop: one pooled connection, held only while a thread waits)
    and rings one waiting thread per nudge. A nudge is a list entry: one
    pushed while no thread here waits stays there for whichever process
    waits first, and one taken when the thread it was for has just gone
    busy is given back (``give_back``) for another process; so a wake-up is
    never lost and a busy process never holds one. A process may also
    ``ring`` for something of its own (a call finished in the background).
    ``stopping`` set, every thread waiting here returns at once.
    """

    def __init__(
        self,
        take_nudge: Callable[[float], bool],
        give_back: Callable[[], None],
        threads: int,
        stopping: threading.Event,
        idle_s: float = IDLE_S,
        name: str = "doorbell",
    ) -> None:
        self.take_nudge = take_nudge
        self.give_back = give_back
        self.threads = threads
        self.stopping = stopping
        self.idle_s = idle_s
        self.name = name
        lock = threading.Lock()
        self._rung = threading.Condition(lock)  # the waiting threads wait on it
        self._waited = threading.Condition(lock)  # the listener waits on it
        self._waiting = 0  # threads waiting here
        self._rings = 0  # rings not yet answered (at most one per thread)
        self._started = False

    def start(self) -> None:
        """Start the listener (once), and what wakes everyone on ``stopping``."""
        with self._rung:
            if self._started:
                return
            self._started = True
        for target, role in ((self._listen, "listener"), (self._on_stop, "stop")):
            threading.Thread(target=target, name=f"{self.name}-{role}", daemon=True).start()

    def ring(self) -> None:
        """Wake one waiting thread, or the next one to wait."""
        with self._rung:
            self._rings = min(self._rings + 1, self.threads)
            self._rung.notify()

    def wait(self, until: float) -> None:
        """Wait until ``until`` (``time.time()``; ``math.inf``: nothing is
        due), at most ``idle_s``, or until rung (at once if rung since)."""
        timeout = min(self.idle_s, until - time.time())
        with self._rung:
            if not self._rings and timeout > 0 and not self.stopping.is_set():
                self._waiting += 1
                self._waited.notify()
                self._rung.wait_for(lambda: self._rings or self.stopping.is_set(), timeout)
                self._waiting -= 1
            if self._rings:
                self._rings -= 1

    def _listen(self) -> None:
        outage = StoreBackoff()
        while True:
            with self._waited:
                self._waited.wait_for(
                    lambda: self._waiting > self._rings or self.stopping.is_set()
                )
            if self.stopping.is_set():
                return
            try:
                nudged = self.take_nudge(min(self.idle_s, LISTEN_S))
                outage.over()
            except Exception as error:
                if self.stopping.is_set():
                    return
                if not is_store_trouble(error):
                    log.exception("%s: waiting for a nudge failed", self.name)
                # the waiting threads still look on their own, every idle_s
                self.stopping.wait(outage.next_wait(error))
                continue
            if nudged and not self._answer():
                try:
                    self.give_back()
                except Exception as error:  # a waiting thread elsewhere looks within idle_s
                    log.warning("%s: a nudge could not be given back: %s", self.name, error)

    def _answer(self) -> bool:
        """Ring a waiting thread not rung yet, if there is one."""
        with self._rung:
            if self._waiting <= self._rings or self.stopping.is_set():
                return False
            self._rings += 1
            self._rung.notify()
            return True

    def _on_stop(self) -> None:
        self.stopping.wait()
        with self._rung:
            self._rung.notify_all()
            self._waited.notify_all()


def class_of(match: dict[str, Any]) -> str:
    """``people`` when a person sits in ``match`` (a seat with a token), else ``bots``."""
    return "people" if any(seat.get("token") for seat in match["seats"]) else "bots"


def bot_seats(match: dict[str, Any]) -> list[tuple[str, int]]:
    """The bot seats of ``match`` that someone pays for: (the address they are
    charged to, the seat)."""
    return [
        (payer, i)
        for i, seat in enumerate(match["seats"])
        if seat.get("bot") and (payer := access.payer_of(match, i))
    ]


@dataclass(frozen=True)
class BotLimits:
    bot_seats_per_address: int = 12  # live bot seats per creating address; 0: no cap
    match_budget_s: float = 600.0  # thinking time a match's bots get, then `random`
    # the quotas an app set (its client key's, service.http.credentials): its
    # ``bot_seats`` replace ``bot_seats_per_address``
    set_for: Callable[[str], dict[str, Any]] | None = None

    def bot_seats_of(self, address: str) -> int:
        if self.set_for is None:
            return self.bot_seats_per_address
        return self.set_for(address).get("bot_seats", self.bot_seats_per_address)


class Scheduler:
    """The queue of turns the server owes, shared through Redis."""

    def __init__(self, client: Any, limits: BotLimits | None = None) -> None:
        self.queue = TurnQueue(client)
        self.limits = limits or BotLimits()

    def schedule(
        self,
        match: dict[str, Any],
        version: int,
        when: float | None,
        finished: bool = False,
        requeue: bool = False,
        client: Any = None,
    ) -> None:
        """The server owes ``match`` (at ``version``) a turn at ``when``
        (None: none now; ignored when a later version's turn is queued).

        ``requeue``: the match was just served, so it goes behind the others
        even if its next turn is already queued. ``finished``: its bot seats
        stop counting against its creator's cap; else they count on.
        ``client``: a pipeline that waits for replicas, when they are required.
        """
        address = match.get("creator") or ""
        charged = bot_seats(match)
        self.queue.schedule(
            match["id"],
            version,
            when,
            class_of(match),
            address,
            charged,
            finished,
            requeue,
            client,
        )

    def unschedule(self, match_id: str) -> None:
        """``match_id`` is gone: it is owed nothing."""
        self.queue.unschedule(match_id)

    def claim(self, now: float, lease_s: float) -> str | None:
        """The match whose turn is next, leased for ``lease_s`` seconds."""
        return self.queue.claim(now, lease_s)

    def take(self, now: float, lease_s: float) -> tuple[str | None, float | None]:
        """As ``claim``, and when no turn is due: when one may be next (a
        timer or a lease ends; None: none is queued)."""
        return self.queue.take(now, lease_s)

    def doorbell(self, stopping: threading.Event, idle_s: float = IDLE_S) -> Doorbell:
        """Where a worker waits when no turn is due: woken by the queue's nudges."""
        queue = self.queue
        return Doorbell(queue.take_nudge, queue.nudge, 1, stopping, idle_s, "bots")

    def release(self, match_id: str) -> None:
        """The worker is done with ``match_id`` (its next turn is queued already)."""
        self.queue.release(match_id)

    def reserve(self, match: dict[str, Any], seats: list[int], force: bool = False) -> bool:
        """Count the bot ``seats`` of ``match`` (all charged to one address:
        the creator's, or the joiner's who seated them) against that
        address's cap, or answer 429 ``bot_seats_exceeded`` when they would
        pass it (never naming the address). With ``force`` (a resignation,
        which is never refused) they count even past the cap. True when
        they are within it."""
        address = access.payer_of(match, seats[0]) if seats else ""
        if not address:
            return True
        cap = self.limits.bot_seats_of(address)
        within, held = self.queue.reserve(address, match["id"], seats, cap, force)
        if not within and not force:
            raise Problem(
                429,
                "bot_seats_exceeded",
                f"you (your address, or your app) already have {held} bot seats in matches "
                f"being played, and {len(seats)} more would pass your cap of {cap}; "
                "retry when one of those matches is over",
                headers={"Retry-After": str(CAP_RETRY_AFTER_S)},
                held=held,
                cap=cap,
            )
        return within

    def bot_move(self, match: dict[str, Any], policy: str, budget_s: float) -> tuple[str, float]:
        """The policy and thinking time of ``match``'s next bot move: its own,
        within what is left of the match's budget; ``random`` once spent."""
        left = self.limits.match_budget_s - match.get("bot_time_s", 0.0)
        if policy == "random" or left <= 0:
            return "random", budget_s
        return policy, min(budget_s, left)

    @staticmethod
    def charge(match: dict[str, Any], seconds: float) -> None:
        """Count ``seconds`` of thinking against ``match``'s bot budget."""
        match["bot_time_s"] = round(match.get("bot_time_s", 0.0) + seconds, 6)
