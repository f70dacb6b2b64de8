"""Webhooks: a match calls a URL with its events (docs/clients/webhooks.md).

A match created with ``{"webhook": {"url": .., "events": [..]}}`` gets a
secret (shown once, in the creation answer). Its log, the match's single
source of truth, is delivered in order: each delivery is a POST of
``{"match_id", "game", "first", "last", "events"}`` where ``events`` are
the log entries ``first..last`` a spectator may see, of the chosen types,
each with its ``index``, plus the ``your_turn`` notices (``{"seat": n}``
only). It is signed the Standard Webhooks way (``webhook-id``,
``webhook-timestamp``, ``webhook-signature``: HMAC-SHA256 over
``id.timestamp.body``).

Where the work is: Redis (``service.store.deliveries``). The first lane
names the matches with something to deliver, by when their next delivery
is due; each match has a cursor (the last index its receiver acknowledged)
and a failure count. A worker leases a match from the lane (so that a dead
worker's match comes due again), delivers from the cursor, moves the cursor
only after a 2xx, and so delivers every event at least once and in order;
one delivery at a time per match, any number of workers. A receiver that
fails is retried with exponential backoff and jitter in a second lane,
the retry lane, served by threads of its own, and its other matches join it
there while it is marked as failing (its down key), so that it slows nobody
else's deliveries; failing for ``give_up_s`` in a row it is given up on: the match
says so (``webhook.given_up``, a ``webhook_given_up`` event whose reason
is ``call_failed``: why is for the log, never for the match's readers) and
so do the metrics.

A lane's thread never waits on a receiver for long: each call is made by a
small pool of threads that only do HTTP, and a call not answered within
``patience_s`` goes on there while the lane's thread moves on. Its receiver
is marked as failing meanwhile (its other matches wait in the retry lane),
its match stays leased in the retry lane, and the call's outcome is settled
by whichever lane thread looks next. At most ``in_flight`` calls per
process, one per receiver in the background: a receiver that never answers
costs each lane a patience per ``down_s``, not a delivery timeout.

A lane's thread waits the patience only for a receiver known to answer
within it (it is marked as known: it did lately). A first contact goes to the
background at once, its match leased where it is and its receiver's other
matches postponed until it is settled: answered in time, the receiver is
known and its match goes on in the first lane; late, it is slow, as
above. So new receivers that drip, however many, cost the lanes nothing:
waiting a patience for each, 16 of them held both first-lane threads for
2 s (issue 31).

A lane's thread with nothing due waits at its lane's doorbell
(``service.background.scheduler.Doorbell``) until the lane's first match
comes due (a retry, a lease running out), or a nudge says one came due
sooner (enqueued, moved there), or a call of this process finished in the
background, at most ``idle_s``: idle, the lanes make a few Redis calls a
second, not one per thread every 50 ms.
"""

from __future__ import annotations

import logging
import math
import queue
import random
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as NotYet
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any

import orjson
from prometheus_client import Counter
from standardwebhooks.webhooks import Webhook

from service.background import outbound
from service.background.scheduler import IDLE_S, Doorbell
from service.domain.commits import Change, Commit, Subscriber
from service.domain.hooks import calling, chosen
from service.domain.ports import Loaded
from service.domain.problems import Problem
from service.store.deliveries import QUEUE_KEY, RETRY_KEY, Deliveries, down_key, enqueue
from service.store.outages import StoreBackoff, is_store_trouble

log = logging.getLogger(__name__)

BATCH = 100  # log entries per delivery, at most
AFTER_FAILURE_S = 0.05  # a delivery that failed (not the store): the next is looked for then

DELIVERIES = Counter(
    "ludotheque_webhook_deliveries_total",
    "Webhook delivery attempts by result (delivered, failed and why)",
    ["result"],
)
GIVEN_UP = Counter(
    "ludotheque_webhooks_given_up_total", "Webhook receivers given up on after failing too long"
)
SLOW = Counter(
    "ludotheque_webhook_calls_backgrounded_total",
    "Webhook calls not answered within the patience, finished in the background",
)


@dataclass(frozen=True)
class DeliverySettings:
    """How deliveries are made; a worker's come from its settings
    (``service.cli.delivery_settings``: ``LUDOTHEQUE_WEBHOOK_*``)."""

    base_s: float = 1.0  # first retry within this long; doubling on each failure
    cap_s: float = 600.0  # a retry waits at most this long
    give_up_s: float = 24 * 3600.0  # failing this long in a row: given up
    timeout_s: float = 5.0  # per delivery, connecting included
    lease_s: float = 60.0  # a claimed match comes due again after this long (> 2 timeouts)
    # deliveries in flight per worker process, first lane, and retries: each busy
    # thread may hold a pooled Redis connection, and a deployment counts them all
    # (idle, a lane's threads hold one between them: its doorbell's)
    threads: int = 2
    retry_threads: int = 1
    down_s: float = 30  # a receiver that failed: its other matches wait with the retries
    patience_s: float = 0.25  # a call not answered by then goes on in the background
    known_s: float = 24 * 3600.0  # a receiver that answered within the patience is waited for
    # calls per process at once (threads that only do HTTP): enough that the
    # receivers that are slow to answer (one call each) leave room for the others
    in_flight: int = 64


@dataclass(frozen=True)
class Background:
    """A delivery going on in the background: its match, its receiver's
    down key, the range it carries, the call, and whether it is a first
    contact (``probe``: the receiver was not known to answer in time)
    started at ``started`` (``time.monotonic()``)."""

    match: dict[str, Any]
    receiver: str
    first: int
    last: int
    call: Future[outbound.Answer]
    probe: bool = False
    started: float = 0.0
    ended: list[float] = field(default_factory=list)  # when the call ended, once it has

    def took_s(self) -> float:
        return (self.ended[0] if self.ended else time.monotonic()) - self.started


def signed_headers(secret: str, message_id: str, body: bytes) -> dict[str, str]:
    """The Standard Webhooks headers for ``body``, signed now."""
    now = datetime.now(tz=UTC)
    signature = Webhook(secret).sign(message_id, now, body.decode())
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": signature,
    }


# -- on every commit --------------------------------------------------------------
def delivering(client: Any) -> Subscriber:
    """The commit subscriber that queues a match's new events for its
    webhook (a confirmed write only: an unconfirmed one may vanish)."""

    def after(commit: Commit) -> None:
        if commit.confirmed and calling(commit.match):
            enqueue(client, commit.match["id"])

    return after


# -- delivering -----------------------------------------------------------------
class Deliverer:
    """Delivers every match's webhook from Redis; run by each worker process."""

    def __init__(
        self,
        matches: Any,
        settings: DeliverySettings | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.matches = matches
        self.store = matches.store
        self.deliveries = Deliveries(matches.store.client)
        self.settings = settings or DeliverySettings()
        self.rng = rng or random.Random()
        self._calls = ThreadPoolExecutor(self.settings.in_flight, "webhook-call")
        self._room = threading.BoundedSemaphore(self.settings.in_flight)
        self._lock = threading.Lock()
        self._backgrounded: set[str] = set()  # receivers (down keys) with a call in the background
        self._settled: queue.SimpleQueue[Background] = queue.SimpleQueue()
        self._doorbells: dict[str, Doorbell] = {}  # by lane, while ``run`` runs

    def run_once(self, lane: str = QUEUE_KEY) -> float | None:
        """Settle the calls finished in the background, then deliver what
        one match due in ``lane`` owes: None. When none was due: when the
        lane's first match comes due (``math.inf``: the lane is empty)."""
        self.settle()
        claimed, due = self.deliveries.take(lane, time.time(), self.settings.lease_s)
        if claimed is None:
            return math.inf if due is None else due
        self.deliver(claimed, lane)
        return None

    def deliver(self, match_id: str, lane: str = QUEUE_KEY) -> None:
        leased_until = time.monotonic() + self.settings.lease_s / 2
        loaded = self.store.load(match_id)
        hook = loaded.match.get("webhook") if loaded else None
        if loaded is None or hook is None or hook["given_up"]:
            self.unqueue(match_id)
            return
        down = down_key(hook["url"])
        failing, known = self.deliveries.receiver(down)
        if lane == QUEUE_KEY and failing:
            # its receiver failed lately: wait with the retries, not here
            self.deliveries.to_retry(match_id, time.time())
            return
        # cursor: every entry up to it is handled (delivered, or chosen by
        # nobody); sent: the last entry of the last delivery acknowledged, so
        # that each delivery covers the range right after the one before.
        cursor, sent = self.deliveries.cursor(match_id)
        while time.monotonic() < leased_until:
            events = self.store.events(match_id, cursor, BATCH)
            if not events:
                break
            carried = chosen(hook, events)
            cursor = events[-1]["index"]
            patient = lane == RETRY_KEY or known
            if carried and not self.post(loaded.match, hook, sent + 1, cursor, carried, patient):
                return  # failed, or going on in the background
            if carried:
                sent = cursor
                if lane == RETRY_KEY:
                    self.deliveries.back(down)  # the receiver is back
            self.handled(match_id, cursor, sent)
        # Done for now: leave the queue, then look again, so that an event
        # committed meanwhile (whose enqueue found this match still queued)
        # is not left behind.
        self.unqueue(match_id)
        if self.deliveries.behind(match_id, cursor):
            self.deliveries.enqueue(match_id)

    def handled(self, match_id: str, cursor: int, sent: int) -> None:
        """Every entry up to ``cursor`` handled, up to ``sent`` delivered."""
        self.deliveries.handled(match_id, cursor, sent, self.matches.settings.idle_ttl)

    def unqueue(self, match_id: str) -> None:
        self.deliveries.unqueue(match_id)

    def post(
        self,
        match: dict[str, Any],
        hook: dict[str, Any],
        first: int,
        last: int,
        carried: list[dict[str, Any]],
        patient: bool = True,
    ) -> bool:
        """One delivery: True when it was delivered. False when it failed
        (the retry is scheduled, or the receiver given up on), or goes on
        in the background (settled later by ``settle``). Not ``patient``
        (a first-lane receiver not known to answer in time): the call goes
        to the background at once, so that a lane's thread waits for no
        receiver it does not know; were it to wait the patience for each,
        many new receivers that drip would hold the lane for a patience
        each, everyone else's deliveries behind them."""
        body = orjson.dumps(
            {
                "match_id": match["id"],
                "game": match["game"],
                "first": first,
                "last": last,
                "events": carried,
            }
        )
        message_id = f"msg_{match['id']}_{first}_{last}"
        headers = signed_headers(match["secret"], message_id, body)
        receiver = down_key(hook["url"])
        with self._lock:
            free = receiver not in self._backgrounded and self._room.acquire(blocking=False)
        if not free:  # this process's own bounds, not the receiver's fault: soon again
            self.postpone(match["id"])
            return False
        timeout = self.settings.timeout_s
        call = self._calls.submit(outbound.post, hook["url"], body, headers, timeout)
        call.add_done_callback(lambda _: self._room.release())
        if not patient:
            probe = Background(match, receiver, first, last, call, True, time.monotonic())
            self.background(probe)
            return False
        try:
            call.result(timeout=self.settings.patience_s)
        except NotYet:
            self.background(Background(match, receiver, first, last, call))
            return False
        except outbound.Refused:
            pass
        return self.outcome(match, call)

    def outcome(self, match: dict[str, Any], call: Future[outbound.Answer]) -> bool:
        """Count a finished call; on failure schedule the retry (or give up)."""
        try:
            status = call.result().status
            result = "delivered" if 200 <= status < 300 else f"http_{status // 100}xx"
        except outbound.Refused as refused:
            result = refused.reason
        DELIVERIES.labels(result).inc()
        if result == "delivered":
            return True
        if result == "busy":  # the process's outbound cap (shared with HTTP bots): soon again
            self.postpone(match["id"])
            return False
        self.failed(match, result)
        return False

    def postpone(self, match_id: str) -> None:
        self.deliveries.postpone(match_id, time.time() + 0.2)

    def background(self, slow: Background) -> None:
        """Let a call that is taking long (or a first contact) go on without
        this thread until it is settled: a slow receiver's match stays leased
        in the retry lane, and its other matches wait with the retries
        meanwhile; a first contact's match stays leased where it is (by its
        claim), and its receiver's other matches are postponed meanwhile."""
        match_id = slow.match["id"]
        with self._lock:
            self._backgrounded.add(slow.receiver)
        if not slow.probe:
            self.slow(slow.receiver)
            self.deliveries.to_retry(match_id, time.time() + self.settings.lease_s)
            log.info("webhook of %s is slow to answer: going on in the background", match_id)
        slow.call.add_done_callback(lambda _: self._ended(slow))

    def _ended(self, slow: Background) -> None:
        slow.ended.append(time.monotonic())
        self._settled.put(slow)
        # for a first-lane thread to settle it now, should they all be idle
        doorbell = self._doorbells.get(QUEUE_KEY)
        if doorbell is not None:
            doorbell.ring()

    def slow(self, receiver: str) -> None:
        """``receiver`` did not answer within the patience: failing for now,
        and no longer known to answer in time."""
        SLOW.inc()
        self.deliveries.slow(receiver, self.settings.down_s)

    def settle(self) -> None:
        """Settle the calls that went on in the background and have finished:
        a delivered one moves its match's cursor, and the match goes on in
        the retry lane (its receiver is slow); a failed one is retried."""
        while True:
            try:
                slow = self._settled.get_nowait()
            except queue.Empty:
                return
            with self._lock:
                self._backgrounded.discard(slow.receiver)
            match_id = slow.match["id"]
            # a first contact answered within the patience: known, and its match
            # goes on in the first lane; one that took longer: slow, as above
            prompt = slow.probe and slow.took_s() <= self.settings.patience_s
            if slow.probe and not prompt:
                self.slow(slow.receiver)
            if self.outcome(slow.match, slow.call):
                self.handled(match_id, slow.last, slow.last)
                if prompt:
                    self.deliveries.known(slow.receiver, self.settings.known_s)
                    self.deliveries.to_first(match_id, time.time())
                else:
                    self.deliveries.to_retry(match_id, time.time())

    def failed(self, match: dict[str, Any], reason: str) -> None:
        now, receiver = time.time(), down_key(match["webhook"]["url"])
        ttl, down_s = self.matches.settings.idle_ttl, self.settings.down_s
        failures, since = self.deliveries.failed(match["id"], receiver, reason, now, ttl, down_s)
        if now - since >= self.settings.give_up_s:
            self.give_up(match["id"], reason)
            return
        delay = min(self.settings.cap_s, self.settings.base_s * 2 ** (failures - 1))
        retry_at = now + self.rng.uniform(delay / 2, delay)  # jitter: retries spread out
        self.deliveries.to_retry(match["id"], retry_at)
        log.info("webhook of %s failed (%s); retry in %.1f s", match["id"], reason, retry_at - now)

    def give_up(self, match_id: str, reason: str) -> None:
        """Mark the match's webhook given up, in the match and its log."""
        GIVEN_UP.inc()
        log.warning("webhook of %s given up on (%s)", match_id, reason)
        self.unqueue(match_id)

        def read() -> Loaded:
            loaded = self.store.load(match_id)
            if loaded is None:
                raise Problem(404, "match_not_found", f"no match {match_id!r}")
            return loaded

        def decide(loaded: Loaded) -> Change | None:
            hook = loaded.match["webhook"]
            if hook["given_up"]:
                return None
            hook["given_up"] = True
            # why it failed is for the log: the match's events are public
            return Change([{"type": "webhook_given_up", "reason": outbound.PUBLIC_REASON}])

        try:
            self.matches.commits.change(read, decide)
        except Problem as refused:  # gone meanwhile, or other writes kept winning
            log.info("webhook of %s: given up in the log only (%s)", match_id, refused.code)

    def run(self, stopping: threading.Event, idle_s: float = IDLE_S) -> None:
        """Deliver until ``stopping`` is set, ``settings.threads`` at a time
        in the first lane and ``settings.retry_threads`` in the retry lane;
        with nothing due, a lane's threads look again at least every
        ``idle_s`` (a nudge, or the lane's first match coming due, wakes
        them sooner)."""

        def loop(lane: str) -> None:
            doorbell = self._doorbells[lane]
            outage = StoreBackoff()
            while not stopping.is_set():
                try:
                    due = self.run_once(lane)
                    outage.over()
                except Exception as error:
                    if is_store_trouble(error):  # down or failing over: wait, longer each time
                        stopping.wait(outage.next_wait(error))
                        continue
                    # a bad match must not stop the others; its lease runs out
                    log.exception("a webhook delivery failed")
                    due = time.time() + AFTER_FAILURE_S
                if due is not None:
                    doorbell.wait(due)

        threads = {QUEUE_KEY: self.settings.threads, RETRY_KEY: self.settings.retry_threads}
        for lane, count in threads.items():
            if count:
                self._doorbells[lane] = doorbell = Doorbell(
                    partial(self.deliveries.take_nudge, lane),
                    partial(self.deliveries.nudge, lane),
                    count,
                    stopping,
                    idle_s,
                    f"webhooks-{lane.rsplit(':', 1)[-1]}",
                )
                doorbell.start()
        lanes = [QUEUE_KEY] * self.settings.threads + [RETRY_KEY] * self.settings.retry_threads
        threads = [
            threading.Thread(target=loop, args=(lane,), name=f"webhooks-{i}", daemon=True)
            for i, lane in enumerate(lanes)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        # calls still in the background end within their timeout; their
        # matches' leases bring them back to whoever delivers next
        self._calls.shutdown(wait=False, cancel_futures=True)
