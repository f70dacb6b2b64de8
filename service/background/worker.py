"""`ludotheque worker`: plays the turns the server owes — bots' moves and the
random move of a seat whose turn clock ran out.

Work comes from Redis (the queue of ``service.background.scheduler``: people waiting
first, then the creating addresses and their matches in turn), so any
number of workers on any number of machines share it. A claimed match is
leased: if its worker dies mid-turn the lease runs out and another worker
takes it.
Every move is a compare-and-set on the match version, so each bot turn is
played exactly once.
With nothing to play, a worker waits at its doorbell
(``service.background.scheduler.Doorbell``) until the queue's next timer or
lease ends, or a nudge says a turn came due, at most ``idle_s``: an idle
worker makes a few Redis calls a second, not one every 50 ms.
"""

from __future__ import annotations

import logging
import math
import random
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from service.background import webhooks
from service.background.app_webhooks import AppWebhooks
from service.background.archiver import Archiver
from service.background.matchmaker import Matchmaker
from service.background.scheduler import IDLE_S
from service.background.turns import ServerTurns
from service.domain.ports import Loaded
from service.store.outages import StoreBackoff, is_store_trouble

STOP_S = 10.0  # once stopping, how long a worker waits for its other threads

log = logging.getLogger(__name__)

# HTTP bots' turns in flight per worker process: threads that wait on bots'
# servers, each for at most its bot's deadline. Enough that the bots of a few
# slow servers (18 seen in issue 31) leave room for everyone else's.
HTTP_TURNS = 64
LATER_S = 0.1  # an HTTP bot's turn finding every such thread taken comes due again then
AFTER_FAILURE_S = 0.05  # a turn that failed (not the store): the next one is looked for then


class Worker:
    def __init__(
        self,
        turns: ServerTurns,
        budget_s: float,
        idle_s: float = IDLE_S,
        stopping: threading.Event | None = None,
    ) -> None:
        """``idle_s``: with no turn due, look at the queue again at least
        this often (a nudge, or the next turn coming due, wakes it sooner)."""
        self.turns = turns
        self.budget_s = budget_s
        self.idle_s = idle_s
        self.lease_s = budget_s + 30
        self.rng = random.Random()
        self.stopping = stopping or threading.Event()
        self.doorbell = turns.scheduler.doorbell(self.stopping, idle_s)
        # HTTP bots' turns in flight at once (their calls also count against
        # the process's cap on outbound calls); more wait for the worker's thread
        self._calls = ThreadPoolExecutor(HTTP_TURNS, "http-bot")
        self._room = threading.BoundedSemaphore(HTTP_TURNS)

    def run_once(self) -> float | None:
        """Play one due turn: None. When none was due: when the next one may
        be (a timer or a lease ends; ``math.inf``: none is queued). An HTTP
        bot's turn goes to the threads that wait on the network, so that a
        bot server that is slow to answer holds up no other bot; with none
        free, it comes due again shortly."""
        match_id, due = self.turns.scheduler.take(time.time(), self.lease_s)
        if match_id is None:
            return math.inf if due is None else due
        loaded = self.turns.store.load(match_id)
        if not self.turns.calls_out(loaded):
            self.play(match_id, loaded)
        elif self._room.acquire(blocking=False):
            self._calls.submit(self.play, match_id, loaded, True)
        else:
            # never on this thread: a slow bot would hold every other turn
            assert loaded is not None
            self.turns.scheduler.schedule(loaded.match, loaded.version, time.time() + LATER_S)
            self.turns.scheduler.release(match_id)
        return None

    def play(self, match_id: str, loaded: Loaded | None, called: bool = False) -> None:
        """Play ``match_id``'s due turn and release its lease (its next turn,
        if any, is queued already)."""
        started = time.perf_counter()
        try:
            if self.turns.play(match_id, self.budget_s, self.rng, loaded):
                log.info("played a turn in %s in %.3f s", match_id, time.perf_counter() - started)
        except Exception:
            if not called:
                raise
            log.exception("an HTTP bot's turn failed")  # its lease runs out: tried again
            return
        finally:
            if called:
                self._room.release()
        self.turns.scheduler.release(match_id)

    def run(self) -> None:
        log.info("worker ready (budget %.3f s per bot move)", self.budget_s)
        self.doorbell.start()
        outage = StoreBackoff()
        while not self.stopping.is_set():
            try:
                due = self.run_once()
                outage.over()
            except Exception as error:
                if is_store_trouble(error):
                    # the store is down or failing over: wait, longer each time
                    self.stopping.wait(outage.next_wait(error))
                    continue
                # One bad match must not stop the others; its lease expires
                # and it is tried again later.
                log.exception("a server turn failed")
                due = time.time() + AFTER_FAILURE_S
            if due is not None:
                self.doorbell.wait(due)
        self._calls.shutdown(wait=True)  # the HTTP bots' turns at hand end within their deadline
        log.info("worker stopped")


def run_worker(
    budget_s: float, start: Callable[[], Any], delivery: webhooks.DeliverySettings
) -> None:
    """Run until SIGTERM or SIGINT, finishing the turn at hand, on the app
    ``start`` gives (``service.app``'s, as the settings say: it wires the
    matches, their commit subscribers and the server's turns). The signals
    are caught first thing, so that even a stop during start-up is clean."""
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    app = start()
    matches = app.extensions["ludotheque.matches"]
    deliverer = webhooks.Deliverer(matches, delivery)
    delivering = threading.Thread(target=deliverer.run, args=(stopping,), daemon=True)
    delivering.start()
    archiving = None
    if (archive := app.extensions["ludotheque.archive"]) is not None:
        archiver = Archiver(
            matches,
            app.extensions["ludotheque.archive_queue"],
            archive,
            app.extensions["ludotheque.record_keys"],
            app.config["FINISHED_TTL"],
            stopping,
            lease_s=app.config["ARCHIVE_LEASE_S"],
        )
        archiving = threading.Thread(target=archiver.run, name="archiver", daemon=True)
        archiving.start()
    # the ranked queue's matchmaker (service.background.matchmaker)
    matchmaker = Matchmaker(
        matches,
        app.extensions["ludotheque.queue"],
        app.extensions["ludotheque.queue_presets"],
        app.extensions["ludotheque.strength"],
        app.extensions["ludotheque.players"],
        stopping=stopping,
    )
    matchmaking = threading.Thread(target=matchmaker.run, name="matchmaker", daemon=True)
    matchmaking.start()
    # the apps' webhooks: their players' events (service.background.app_webhooks)
    if (players := app.extensions["ludotheque.players"]) is not None:
        hooks = AppWebhooks(app.extensions["ludotheque.player_events"], players)
        threading.Thread(
            target=hooks.run, args=(stopping,), name="app-webhooks", daemon=True
        ).start()
    Worker(app.extensions["ludotheque.turns"], budget_s, stopping=stopping).run()
    # the other threads finish what they hold within STOP_S in all (the
    # threads are daemons: past it, the process ends without them, and the
    # leases they held bring their work back to another worker)
    deadline = time.monotonic() + STOP_S
    for thread in (delivering, matchmaking, archiving):
        if thread is not None:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
