"""An app's webhook: its players' ``ticket_matched`` and ``rated`` events,
POSTed to the URL its operator set (``ludotheque apps webhook``), signed
the Standard Webhooks way with the app's secret (``signed_headers``, as a
match's webhook is), from ``ludotheque worker`` (docs/clients/webhooks.md).

A small lane of its own, not the match webhooks' deliverer: those follow a
match's log from a cursor kept in the match's slot, in order, for a day;
these are single events, each a job (``service.store.player_events``),
delivered at least once, in no promised order, tried ``ATTEMPTS`` times
with backoff and then dropped with a log line.

One thread takes due jobs; it never waits on a receiver: each call goes to
a pool of threads that only do HTTP, through the outbound rules
(``service.background.outbound``: allow-list, one deadline, the process's
cap), at most ``PER_APP`` at once per app (more wait 0.2 s), and the
call's outcome settles its job (done, or due again later). So an app
server that is slow or failing holds its own calls only: not the lane, not
the matchmaker (which only wrote the event), not another app's calls.
"""

from __future__ import annotations

import logging
import math
import random
import threading
import time
from collections import Counter as Tally
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import orjson
from prometheus_client import Counter

from service.background import outbound
from service.background.scheduler import IDLE_S, Doorbell
from service.background.webhooks import signed_headers
from service.store.outages import StoreBackoff, is_store_trouble
from service.store.player_events import PlayerEvents

log = logging.getLogger(__name__)

ATTEMPTS = 5  # then the event is dropped: 1, 2, 4, 8 s apart (with jitter)
BASE_S = 1.0
TIMEOUT_S = 5.0  # per call, everything included
LEASE_S = 30.0  # a job taken comes due again after this long (its worker died)
PER_APP = 4  # calls in flight per app
CALLS = 16  # calls in flight per worker process

CALLED = Counter("ludotheque_app_webhook_calls_total", "App webhook calls by result", ["result"])


class AppWebhooks:
    def __init__(
        self,
        events: PlayerEvents,
        players: Any,
        base_s: float = BASE_S,
        timeout_s: float = TIMEOUT_S,
        attempts: int = ATTEMPTS,
    ) -> None:
        """``players``: where each player's app and its webhook are read
        (``service.store.players.Players.webhook_of``)."""
        self.events = events
        self.players = players
        self.base_s = base_s
        self.timeout_s = timeout_s
        self.attempts = attempts
        self._calls = ThreadPoolExecutor(CALLS, "app-webhook")
        self._lock = threading.Lock()
        self._busy: Tally[str] = Tally()  # calls in flight per app

    def run(self, stopping: threading.Event) -> None:
        """Until ``stopping``: idle, it waits at a doorbell (a job owed rings
        it) until the first job is due, at most ``IDLE_S``, as the other
        lanes do."""
        log.info("app webhooks ready")
        doorbell = Doorbell(
            self.events.take_nudge, self.events.give_back, 1, stopping, IDLE_S, "app-webhooks"
        )
        doorbell.start()
        outage = StoreBackoff()
        while not stopping.is_set():
            try:
                due = self.run_once()
                outage.over()
            except Exception as error:
                if is_store_trouble(error):
                    stopping.wait(outage.next_wait(error))
                    continue
                log.exception("an app webhook job failed")
                due = time.time() + 0.1
            if due is not None:
                doorbell.wait(due)
        self._calls.shutdown(wait=True)
        log.info("app webhooks stopped")

    def run_once(self) -> float | None:
        """Start every call due now; None when more may be due at once, else
        when to look again."""
        job, first = self.events.take(time.time(), LEASE_S)
        if job is None:
            return math.inf if first is None else first
        self.start(job)
        return None

    def start(self, job: bytes) -> None:
        found = orjson.loads(job)
        hook = self.webhook_of(found["player"])
        if hook is None:  # a guest, or an app without a webhook
            self.events.done(job)
            return
        app_id, url, secret = hook
        with self._lock:
            if self._busy[app_id] >= PER_APP:
                self.events.again_at(job, time.time() + 0.2)
                return
            self._busy[app_id] += 1
        event = found["event"]
        body = orjson.dumps({"type": event["type"], "player": found["player"]} | event)
        message_id = f"evt_{found['player']}_{event['index']}"
        headers = signed_headers(secret, message_id, body)
        call = self._calls.submit(outbound.post, url, body, headers, self.timeout_s)
        call.add_done_callback(lambda done: self.settle(job, found, app_id, done))

    def settle(self, job: bytes, found: dict[str, Any], app_id: str, call: Future) -> None:
        with self._lock:
            self._busy[app_id] -= 1
        try:
            status = call.result().status
            result = "delivered" if 200 <= status < 300 else f"http_{status // 100}xx"
        except outbound.Refused as refused:
            result = refused.reason
        except Exception:
            log.exception("app webhook call failed")
            result = "error"
        CALLED.labels(result).inc()
        try:
            if result == "delivered":
                self.events.done(job)
            elif found["attempt"] + 1 >= self.attempts:
                self.events.done(job)
                log.warning(
                    "app %s webhook: %s of player %s dropped after %d attempts (%s)",
                    app_id,
                    found["event"]["type"],
                    found["player"],
                    found["attempt"] + 1,
                    result,
                )
            else:
                wait = self.base_s * 2 ** found["attempt"]
                self.events.again(job, time.time() + random.uniform(wait / 2, wait))
        except Exception:  # the store: the job's lease runs out, it comes again
            log.warning("app webhook job not settled", exc_info=True)

    def webhook_of(self, player_id: str) -> tuple[str, str, str] | None:
        """The player's app's webhook as the database has it now, read for
        each call (not kept): a new URL, its secret, ``--off``, a revoked
        app or a deleted player count from the next call on."""
        return self.players.webhook_of(player_id)
