"""The ranked queue's scripts (service/store/queue.py), on a real Redis and
on a real Redis Cluster."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
import redis
from redis.cluster import RedisCluster, key_slot

from service.store import queue as keys
from service.store.queue import AlreadyQueued, Queue, now_ms
from service.store.wakeups import wake_channel

# The tickets' idle time in the expiry tests: short, with room for a machine
# so loaded that a step of the test takes a few tenths of a second.
IDLE_S = 1.5


@pytest.fixture(params=["redis", "cluster"])
def client(request: pytest.FixtureRequest) -> Iterator[Any]:
    if request.param == "redis":
        found = redis.Redis.from_url(request.getfixturevalue("redis_url"))
    else:
        found = RedisCluster.from_url(request.getfixturevalue("cluster_url"))
    yield found
    found.close()


def seat(player_id: str) -> dict[str, str]:
    player = {"id": player_id, "name": "P", "bot": False, "holder": "h"}
    return {"seat_player": orjson.dumps(player).decode()}


def joined(queue: Queue, preset: str, n: int) -> list[str]:
    return [queue.join("dekal", preset, uuid.uuid4().hex, seat("x"))["id"] for _ in range(n)]


def test_every_key_of_one_queue_shares_a_slot():
    base = keys.tag("dekal", "2p")
    names = [f"{base}:waiting", f"{base}:polled", f"{base}:claimed", f"{base}:lease"]
    names.append(keys.ticket_key("dekal", "2p", uuid.uuid4().hex))
    assert len({key_slot(name.encode()) for name in names}) == 1


def test_a_claim_takes_every_ticket_or_none(client):
    queue, preset = Queue(client), uuid.uuid4().hex[:8]
    a, b, c = joined(queue, preset, 3)
    assert queue.leave("dekal", preset, c)
    assert not queue.claim("dekal", preset, [a, b, c]), "c left: none is claimed"
    assert {t["id"] for t in queue.waiting("dekal", preset)} == {a, b}
    assert queue.claim("dekal", preset, [a, b])
    assert not queue.claim("dekal", preset, [a]), "claimed once"
    assert queue.waiting("dekal", preset) == []
    assert queue.poll(a, preset, "dekal")["status"] == "claimed"


def test_a_claim_given_back_waits_again_from_when_it_joined(client):
    queue, preset = Queue(client), uuid.uuid4().hex[:8]
    a, b = joined(queue, preset, 2)
    before = {t["id"]: t["joined"] for t in queue.waiting("dekal", preset)}
    assert queue.claim("dekal", preset, [a, b])
    queue.unclaim("dekal", preset, [a, b])
    after = {t["id"]: t["joined"] for t in queue.waiting("dekal", preset)}
    assert after == before


def test_matched_tickets_say_their_match_and_seat_and_wake_their_long_polls(client):
    queue, preset = Queue(client), uuid.uuid4().hex[:8]
    a, b = joined(queue, preset, 2)
    node = client.get_node_from_key(wake_channel(keys.wake_id(a))) if queue.sharded else None
    listener = client.get_redis_connection(node).pubsub() if node is not None else client.pubsub()
    (listener.ssubscribe if queue.sharded else listener.subscribe)(wake_channel(keys.wake_id(a)))
    listener.get_message(timeout=1)  # the subscription's confirmation
    assert queue.claim("dekal", preset, [a, b])
    queue.matched("dekal", preset, "m1", {a: 1, b: 0})
    message = listener.get_message(timeout=2)
    listener.close()
    assert message is not None and message["type"] in ("message", "smessage")
    found = queue.poll(a, preset, "dekal")
    assert (found["status"], found["match"], found["seat"]) == ("matched", "m1", "1")
    assert not queue.leave("dekal", preset, a), "a matched ticket is not left"


def test_a_ticket_nobody_asks_for_expires_and_is_never_claimed(client):
    queue, preset = Queue(client, idle_s=IDLE_S), uuid.uuid4().hex[:8]
    a, b = joined(queue, preset, 2)
    time.sleep(0.6 * IDLE_S)
    queue.poll(b, preset, "dekal")  # b is asked for; a is not
    time.sleep(0.6 * IDLE_S)
    assert not queue.claim("dekal", preset, [a, b])
    assert queue.expire_idle("dekal", preset) == 1
    assert queue.poll(a, preset, "dekal", renew=False)["status"] == "expired"
    assert [t["id"] for t in queue.waiting("dekal", preset)] == [b]


def test_one_waiting_ticket_per_player_and_game_even_when_joining_at_once(client):
    queue, preset = Queue(client), uuid.uuid4().hex[:8]
    player = uuid.uuid4().hex
    made, refused = [], []

    def join() -> None:
        try:
            made.append(queue.join("dekal", preset, player, seat(player))["id"])
        except AlreadyQueued as queued:
            refused.append(queued.ticket_id)

    threads = [threading.Thread(target=join) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(made) == 1
    assert len(queue.waiting("dekal", preset)) == 1
    # left, the player may join again; another game is another queue
    assert queue.leave("dekal", preset, made[0])
    queue.join("dekal", preset, player, seat(player))
    queue.join("pacal", preset, player, seat(player))


def test_one_matchmaker_holds_a_queue_at_a_time(client):
    queue, preset = Queue(client), uuid.uuid4().hex[:8]
    assert queue.lease("dekal", preset, "one", 5)
    assert not queue.lease("dekal", preset, "two", 5)
    queue.release("dekal", preset, "two")  # not its own: nothing happens
    assert not queue.lease("dekal", preset, "two", 5)
    queue.release("dekal", preset, "one")
    assert queue.lease("dekal", preset, "two", 5)


def test_players_remember_their_last_opponents(client):
    queue = Queue(client)
    ada, bob, cy = (uuid.uuid4().hex for _ in range(3))
    queue.met("dekal", [ada, bob, cy])
    assert queue.recent("dekal", [ada])[ada] == {bob, cy}
    for _ in range(keys.RECENT + 2):
        queue.met("dekal", [ada, uuid.uuid4().hex])
    assert len(queue.recent("dekal", [ada])[ada]) == keys.RECENT


def test_a_claimed_ticket_is_not_expired_under_its_matchmaker(client):
    """Claimed just before it would have expired, it is the matchmaker's:
    the expiry of idle tickets leaves it, and the match settles it."""
    queue, preset = Queue(client, idle_s=IDLE_S), uuid.uuid4().hex[:8]
    a, b = joined(queue, preset, 2)
    time.sleep(0.6 * IDLE_S)
    assert queue.claim("dekal", preset, [a, b])
    later = now_ms() + int(0.6 * IDLE_S * 1000)  # asked for longer ago than idle_s
    assert queue.expire_idle("dekal", preset, now=later) == 0
    queue.matched("dekal", preset, "m2", {a: 0, b: 1})
    assert {queue.poll(t, preset, "dekal")["status"] for t in (a, b)} == {"matched"}
