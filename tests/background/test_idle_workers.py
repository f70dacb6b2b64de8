"""An idle worker process costs next to nothing (issue 34): with nothing due,
its bot worker waits at a doorbell, for a nudge from Redis or for its
queue's next due time, instead of looking every 50 ms; and what comes due
is still taken at once: a bot turn, a turn clock run out, a dead worker's
lease.

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
from service.background.worker import Worker
from service.store.embedded import EmbeddedRedis
from service.store.matches import match_key
from service.store.scheduling import LEASES
from tests.support.waiting import wait_until

GAME = "dekal"
PERSON = {"players": [{"name": "Ada"}, {"bot": "random"}]}  # the bot reveals first
PROMPT_S = 0.25  # "at once": the old poll was 50 ms, the new wait is 5 s


@pytest.fixture(scope="module")
def module_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with EmbeddedRedis(tmp_path_factory.mktemp("idle"), persist=False) as url:
        yield url


@pytest.fixture
def private_redis(module_redis: str) -> Iterator[redis.Redis]:
    with redis.Redis.from_url(module_redis) as client:
        client.flushdb()
        yield client


@pytest.fixture
def app(module_redis: str, private_redis: redis.Redis) -> Any:
    return create_app(
        {"REDIS_URL": module_redis, "RATELIMIT_ENABLED": False, "BOT_SEATS_PER_ADDRESS": 0}
    )


@contextmanager
def worker_process(app: Any) -> Iterator[None]:
    """The bot worker `ludotheque worker` runs, in a thread, idle as long as
    it may; stopped on the way out, at once."""
    stopping = threading.Event()
    worker = Worker(app.extensions["ludotheque.turns"], budget_s=0.01, stopping=stopping)
    threads = [threading.Thread(target=worker.run, daemon=True)]
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


# -- what it costs ------------------------------------------------------------------
def test_an_idle_bot_worker_makes_about_one_redis_call_a_second(app, private_redis, monkeypatch):
    """Before, it looked every 50 ms: 20 scripts a second. Counted as the
    worker's threads call redis-py (a script is one call, a blocking pop
    another; a new connection's handshake is none), and as Redis runs them."""
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
    assert len(calls) / window_s <= 1, calls
    assert stats["cmdstat_evalsha"]["calls"] / window_s <= 0.5, stats
    # one connection waits for nudges
    assert clients["blocked_clients"] <= 1, clients
    assert clients["connected_clients"] <= 3, clients  # this one, the worker, its listener


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
