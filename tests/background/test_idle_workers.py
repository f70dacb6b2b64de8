"""An idle worker process costs next to nothing (issue 34): with nothing due,
its threads wait at a doorbell, for a nudge from Redis or for their queue's
next due time, instead of looking every 50 ms (19 ms of CPU per second per
worker process, and 11 of Redis, on an idle server); and what comes due is
still taken at once: a bot turn, a turn clock run out, a webhook delivery
and its retry, a dead worker's lease.

The workers here wait as long as they may (the default ``idle_s``, 5 s),
so anything taken sooner than that was taken because it was due, on a
Redis of their own whose calls the tests count."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import redis

from service.app import create_app
from service.background.scheduler import Doorbell
from service.background.webhooks import Deliverer, DeliverySettings
from service.background.worker import Worker
from service.store.deliveries import RETRY_KEY
from service.store.matches import match_key
from service.store.scheduling import LEASES
from tests.support.receivers import Quiet, Served
from tests.support.waiting import wait_until

GAME = "dekal"
PERSON = {"players": [{"name": "Ada"}, {"bot": "random"}]}  # the bot reveals first
PROMPT_S = 0.25  # "at once": the old poll was 50 ms, the new wait is 5 s


@pytest.fixture
def app(module_redis: str, private_redis: redis.Redis) -> Any:
    return create_app(
        {"REDIS_URL": module_redis, "RATELIMIT_ENABLED": False, "BOT_SEATS_PER_ADDRESS": 0}
    )


@contextmanager
def worker_process(app: Any, settings: DeliverySettings | None = None) -> Iterator[None]:
    """What `ludotheque worker` runs, in threads: a bot worker and a webhook
    deliverer, idle as long as they may; stopped on the way out, at once."""
    stopping = threading.Event()
    worker = Worker(app.extensions["ludotheque.turns"], budget_s=0.01, stopping=stopping)
    deliverer = Deliverer(app.extensions["ludotheque.matches"], settings or DeliverySettings())
    threads = [
        threading.Thread(target=worker.run, daemon=True),
        threading.Thread(target=deliverer.run, args=(stopping,), daemon=True),
    ]
    for thread in threads:
        thread.start()
    try:
        yield
    finally:
        stopping.set()
        stopped = time.monotonic()
        for thread in threads:
            thread.join(timeout=10)
        assert not any(thread.is_alive() for thread in threads)
        assert time.monotonic() - stopped < 1.0, "an idle worker stops at once"


def created(http: Any, body: dict) -> dict:
    answer = http.post(f"/v1/games/{GAME}/matches", json=body)
    assert answer.status_code == 201, answer.get_data(as_text=True)
    return answer.get_json()


def version_of(client: redis.Redis, match_id: str) -> int:
    return int(client.hget(match_key(match_id), "v"))


def when_version(client: redis.Redis, match_id: str, version: int, timeout: float = 10) -> float:
    """The ``time.time()`` at which ``match_id`` was seen at ``version`` (or later)."""
    deadline = time.monotonic() + timeout
    while version_of(client, match_id) < version:
        assert time.monotonic() < deadline, f"{match_id} never reached version {version}"
        time.sleep(0.002)
    return time.time()


class Receiver(Served):
    """A webhook receiver that answers the ``statuses`` given in turn (then
    200) and notes when each delivery arrived (``time.time()``)."""

    def __init__(self, statuses: tuple[int, ...] = ()) -> None:
        self.statuses = list(statuses)
        self.arrivals: list[float] = []
        receiver = self

        class Handler(Quiet):
            def do_POST(self) -> None:
                receiver.arrivals.append(time.time())
                self.read_body()
                self.answer(receiver.statuses.pop(0) if receiver.statuses else 200)

        super().__init__(Handler)


@pytest.fixture
def receiver(loopback_allowed: None) -> Iterator[Receiver]:
    served = Receiver((500,))
    yield served
    served.stop()


# -- what it costs ------------------------------------------------------------------
def test_an_idle_worker_makes_a_few_redis_calls_a_second(app, private_redis, monkeypatch):
    """Its bot worker, its two first-lane and its retry-lane webhook threads:
    before, each looked every 50 ms, 80 scripts a second. Counted as the
    threads call redis-py (a script is one call, a blocking pop another;
    a new connection's handshake is none), and as Redis runs them."""
    calls: list[str] = []
    original = redis.Redis.execute_command

    def execute_command(client: redis.Redis, *args: Any, **options: Any) -> Any:
        calls.append(f"{threading.current_thread().name}: {args[0]}")
        return original(client, *args, **options)

    with worker_process(app):
        time.sleep(1)  # started: scripts loaded, connections made
        private_redis.config_resetstat()
        monkeypatch.setattr(redis.Redis, "execute_command", execute_command)
        window_s = 6.0
        time.sleep(window_s)
        monkeypatch.undo()
        stats = private_redis.info("commandstats")
        clients = private_redis.info("clients")
    assert len(calls) / window_s <= 3, calls
    assert stats["cmdstat_evalsha"]["calls"] / window_s <= 1.5, stats
    # one connection waits for nudges per kind of thread (bots, first lane, retry lane)
    assert clients["blocked_clients"] <= 3, clients
    assert clients["connected_clients"] <= 9, clients  # this one, 4 threads, 3 listeners


# -- what comes due is still taken at once -------------------------------------------
def test_a_bot_turn_due_while_the_worker_waits_is_played_at_once(app, private_redis):
    http = app.test_client()
    delays = []
    with worker_process(app):
        for pause in (0.5, 0.3, 1.2, 0.2, 0.7):
            time.sleep(pause)  # the worker waits (nothing is due: for 5 s)
            match_id = created(http, PERSON)["id"]
            owed = time.time()  # the turn was queued, and nudged, as it was created
            delays.append(when_version(private_redis, match_id, 2) - owed)
    assert max(delays) < PROMPT_S, delays


def test_a_turn_clock_runs_out_on_time_while_the_worker_waits(app, private_redis):
    http = app.test_client()
    with worker_process(app):
        time.sleep(0.5)
        match = created(
            http,
            {"players": [{"name": "Ada"}, {"name": "Bob"}], "options": {"turn_timeout_s": 1}},
        )
        deadline = min(match["deadlines"])
        assert version_of(private_redis, match["id"]) == 1, "nobody plays before the clock"
        played = when_version(private_redis, match["id"], 2)
    assert 0 <= played - deadline < PROMPT_S, played - deadline


def test_a_dead_workers_turn_is_taken_over_when_its_lease_runs_out(app, private_redis):
    http = app.test_client()
    turns = app.extensions["ludotheque.turns"]
    match_id = created(http, PERSON)["id"]
    assert turns.scheduler.claim(time.time(), 1.0) == match_id  # then its worker dies
    leased_until = private_redis.zscore(LEASES, match_id)
    with worker_process(app):
        played = when_version(private_redis, match_id, 2)
    assert 0 <= played - leased_until < PROMPT_S, played - leased_until


def test_a_delivery_enqueued_while_the_lanes_wait_starts_at_once(app, receiver):
    receiver.statuses.clear()
    http = app.test_client()
    delays = []
    body = {"players": [{"name": "Ada"}, {"name": "Bob"}], "webhook": {"url": receiver.url}}
    with worker_process(app):
        for pause in (0.5, 1.0, 0.3):
            time.sleep(pause)  # the lanes wait (nothing is due: for 5 s)
            arrived = len(receiver.arrivals)
            created(http, body)
            enqueued = time.time()
            wait_until(lambda arrived=arrived: len(receiver.arrivals) > arrived, 10, 0.002)
            delays.append(receiver.arrivals[arrived] - enqueued)
    assert max(delays) < PROMPT_S, delays


def test_a_webhook_retry_comes_due_on_time_while_the_lanes_wait(app, private_redis, receiver):
    """The first delivery fails (500); its retry is due within a second,
    in the retry lane, whose thread waits for it and no longer."""
    http = app.test_client()
    settings = DeliverySettings(base_s=1.0, cap_s=1.0)
    body = {"players": [{"name": "Ada"}, {"name": "Bob"}], "webhook": {"url": receiver.url}}
    with worker_process(app, settings):
        time.sleep(0.5)
        match_id = created(http, body)["id"]
        wait_until(lambda: receiver.arrivals, 10, 0.002)
        retry_at = wait_until(lambda: private_redis.zscore(RETRY_KEY, match_id), 10, 0.002)
        wait_until(lambda: len(receiver.arrivals) > 1, 10, 0.002)
    assert retry_at - receiver.arrivals[0] <= 1.0
    assert 0 <= receiver.arrivals[1] - retry_at < PROMPT_S, receiver.arrivals[1] - retry_at


def test_an_idle_worker_on_a_cluster_is_nudged_through_the_node_of_its_queue(cluster_url):
    """The nudges live in their queue's slot; the blocking pop that waits for
    them goes to the node serving it."""
    app = create_app({"REDIS_URL": cluster_url, "REDIS_CLUSTER": True, "RATELIMIT_ENABLED": False})
    http = app.test_client()
    store = app.extensions["ludotheque.matches"].store
    delays = []
    with worker_process(app):
        for pause in (0.5, 0.8):
            time.sleep(pause)
            match_id = created(http, PERSON)["id"]
            owed = time.time()
            delays.append(when_version(store.client, match_id, 2) - owed)
    assert max(delays) < PROMPT_S, delays


# -- the doorbell itself --------------------------------------------------------------
class Nudges:
    """A nudge list in memory, as a doorbell's listener sees Redis's."""

    def __init__(self) -> None:
        self.entries: queue.Queue[int] = queue.Queue()
        self.given_back = 0

    def take(self, timeout_s: float) -> bool:
        try:
            self.entries.get(timeout=timeout_s)
        except queue.Empty:
            return False
        return True

    def give_back(self) -> None:
        self.given_back += 1
        self.entries.put(1)


def doorbell(nudges: Nudges, stopping: threading.Event, threads: int = 1) -> Doorbell:
    bell = Doorbell(nudges.take, nudges.give_back, threads, stopping, idle_s=5.0)
    bell.start()
    return bell


def waited(bell: Doorbell, until: float = float("inf")) -> float:
    started = time.monotonic()
    bell.wait(until)
    return time.monotonic() - started


def test_a_nudge_wakes_a_waiting_thread_and_no_nudge_waits_for_the_due_time():
    nudges, stopping = Nudges(), threading.Event()
    bell = doorbell(nudges, stopping)
    try:
        threading.Timer(0.2, nudges.entries.put, (1,)).start()
        assert 0.15 < waited(bell) < 0.5
        assert 0.25 < waited(bell, time.time() + 0.3) < 0.5  # unrung: until it is due
    finally:
        stopping.set()


def test_a_ring_before_the_wait_is_not_lost():
    """A call of the process finished while its threads were all busy: the
    next one to wait looks again at once."""
    stopping = threading.Event()
    bell = doorbell(Nudges(), stopping)
    try:
        bell.ring()
        assert waited(bell) < 0.05
        assert waited(bell, time.time() + 0.2) > 0.15, "one ring, one look"
    finally:
        stopping.set()


def test_a_nudge_taken_for_a_thread_gone_busy_is_given_back():
    """The listener took a nudge while the thread it waited for went busy
    (its due time came): another process's thread must get it."""
    nudges, stopping = Nudges(), threading.Event()
    bell = Doorbell(lambda timeout_s: time.sleep(0.3) or True, nudges.give_back, 1, stopping)
    bell.start()
    try:
        assert waited(bell, time.time() + 0.1) < 0.25  # gone before the nudge came
        wait_until(lambda: nudges.given_back, 5, 0.01)
    finally:
        stopping.set()


def test_stopping_wakes_the_waiting_threads_at_once():
    stopping = threading.Event()
    bell = doorbell(Nudges(), stopping, threads=2)
    spent: list[float] = []
    waiters = [threading.Thread(target=lambda: spent.append(waited(bell))) for _ in range(2)]
    for waiter in waiters:
        waiter.start()
    time.sleep(0.2)
    stopping.set()
    for waiter in waiters:
        waiter.join(timeout=5)
    assert len(spent) == 2 and max(spent) < 0.5, spent
