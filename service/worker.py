"""`ludotheque worker`: plays the turns the server owes — bots' moves and the
random move of a seat whose turn clock ran out.

Work comes from Redis (the due set, see ``Store.claim``), so any number of
workers on any number of machines share it. A claimed match is leased: if
its worker dies mid-turn the lease runs out and another worker takes it.
Every move is a compare-and-set on the match version, so each bot turn is
played exactly once.
"""

from __future__ import annotations

import logging
import random
import signal
import threading
import time

from service import webhooks
from service.matches import Matches

log = logging.getLogger(__name__)


class Worker:
    def __init__(
        self,
        matches: Matches,
        budget_s: float,
        idle_s: float = 0.05,
        stopping: threading.Event | None = None,
    ) -> None:
        self.matches = matches
        self.budget_s = budget_s
        self.idle_s = idle_s
        self.lease_s = budget_s + 30
        self.rng = random.Random()
        self.stopping = stopping or threading.Event()

    def run_once(self) -> bool:
        """Play one due turn; False when nothing was due."""
        match_id = self.matches.store.claim(time.time(), self.lease_s)
        if match_id is None:
            return False
        started = time.perf_counter()
        played = self.matches.play_server_turn(match_id, self.budget_s, self.rng)
        if played:
            log.info("played a turn in %s in %.3f s", match_id, time.perf_counter() - started)
        return True

    def run(self) -> None:
        log.info("worker ready (budget %.3f s per bot move)", self.budget_s)
        while not self.stopping.is_set():
            try:
                busy = self.run_once()
            except Exception:
                # One bad match must not stop the others; its lease expires
                # and it is tried again later.
                log.exception("a server turn failed")
                busy = False
            if not busy:
                self.stopping.wait(self.idle_s)
        log.info("worker stopped")


def run_worker(budget_s: float) -> None:
    """Run until SIGTERM or SIGINT, finishing the turn at hand. The signals
    are caught first thing, so that even a stop during start-up is clean."""
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    from service.app import create_app

    app = create_app()
    matches = app.extensions["ludotheque.matches"]
    deliverer = webhooks.Deliverer(matches, webhooks.DeliverySettings.from_env())
    delivering = threading.Thread(target=deliverer.run, args=(stopping,), daemon=True)
    delivering.start()
    Worker(matches, budget_s, stopping=stopping).run()
    delivering.join(timeout=10)
