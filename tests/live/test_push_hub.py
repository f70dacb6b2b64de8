"""Issue 17, point 1: one push hub per process. A write publishes a wake-up
in the match's own slot (sharded pub/sub on a cluster); a wake-up is only a
hint, so a lost one loses no event; Redis connections do not grow with
followers."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import redis
import requests

from service.app import create_app
from service.live.hub import Follower, Hub, Listener
from service.store.matches import Store
from service.store.wakeups import wake_channel
from tests.support.client import ApiClient
from tests.support.matches import create_match, events_of, play_out
from tests.support.streams import sse_events
from tests.support.waiting import wait_until

GAME = "dekal"


def test_a_write_publishes_a_wake_up_in_the_matchs_slot_on_a_cluster(cluster_url, live_server):
    server = live_server(REDIS_URL=cluster_url, REDIS_CLUSTER=True)
    api = ApiClient(server.base)
    match_id, tokens = create_match(api, GAME, seed=8)
    cluster = redis.RedisCluster.from_url(cluster_url)
    node = cluster.get_node_from_key(wake_channel(match_id))
    subscriber = redis.Redis(host=node.host, port=node.port).pubsub()
    subscriber.ssubscribe(wake_channel(match_id))
    subscriber.get_message(timeout=1)  # the subscription's confirmation
    count = len(events_of(api, GAME, match_id, None))
    play_out(api, GAME, match_id, tokens, 8)
    message = subscriber.get_message(timeout=2)
    assert message is not None and message["type"] == "smessage"
    assert int(message["data"]) > count  # the log's new last index
    subscriber.close()
    cluster.close()


def test_streams_share_one_subscriber_and_lose_nothing_when_wake_ups_are_lost(
    live_server, redis_client
):
    server = live_server()
    api = ApiClient(server.base)
    match_id, tokens = create_match(api, GAME, 3, seed=13)
    url = server.url(f"/v1/games/dekal/matches/{match_id}/stream")
    viewers = [tokens[i % 3] if i % 4 else None for i in range(24)]
    received: list[list | None] = [None] * len(viewers)

    def follow(i: int) -> None:
        headers = {"Authorization": f"Bearer {viewers[i]}"} if viewers[i] else {}
        with ApiClient(server.base).http.get(url, headers=headers, stream=True) as r:
            received[i] = sse_events(r)

    followers = [threading.Thread(target=follow, args=(i,)) for i in range(len(viewers))]
    for follower in followers:
        follower.start()
    hub = server.app.extensions["ludotheque.live"].hub
    wait_until(lambda: hub.count() == len(viewers), timeout=10)
    assert len(hub._listeners) == 1  # one subscriber connection for them all

    # kill the hub's subscriber connections again and again while the
    # match is played: wake-ups are lost, events are not
    with subscribers_killed(redis_client, every_s=0.05):
        play_out(api, GAME, match_id, tokens, 13)
    for follower in followers:
        follower.join(timeout=60)
    for viewer, got in zip(viewers, received, strict=True):
        want = events_of(api, GAME, match_id, viewer)
        assert got is not None
        assert [data for _, data in got] == want


def test_a_follower_gets_an_event_another_caller_read_first_when_its_wake_up_was_lost(
    live_server, redis_client
):
    """A seat waits on a long poll; an action lands while the hub's
    subscriber connection is down (its wake-up lost) and another caller
    reads the log at once. The hub's periodic check must still hand the
    action to the waiting seat: another caller's read says nothing of what
    this one has. (Seen in the browser suite: after a rematch, the offering
    page never saw its opponent sit down.)"""
    server = live_server()
    hub = server.app.extensions["ludotheque.live"].hub
    api = ApiClient(server.base)
    with subscribers_killed(redis_client, every_s=0.01):  # wake-ups lost nearly always
        for seed in range(5):
            match_id, tokens = create_match(api, GAME, seed=seed)
            seat = api.get(GAME, match_id).json()["to_act"][0]
            after = events_of(api, GAME, match_id, tokens[seat])[-1]["index"]
            action = api.legal(GAME, match_id, tokens[seat]).json()["actions"][0]
            answer: dict = {}
            url = server.url(f"/v1/games/{GAME}/matches/{match_id}/events")
            waiting = threading.Thread(target=long_poll, args=(url, tokens[seat], after, answer))
            waiting.start()
            deadline = time.monotonic() + 5
            while hub.count() < 1 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert hub.count() == 1, "the long poll never began to wait"
            assert api.act(GAME, match_id, tokens[seat], action).status_code == 200
            # another caller reads the log at once
            assert api.events(GAME, match_id).status_code == 200
            waiting.join(timeout=30)
            assert answer["events"], f"round {seed}: nothing after {answer['took']:.1f} s"
            assert answer["took"] < 4, answer


def test_a_wake_up_published_as_soon_as_a_follow_returns_reaches_the_follower(redis_url):
    """Issue 34, point 4: a long poll follows its match, reads it, and waits;
    the other seat's move may be published a moment after the read. The hub
    must hold the match's channel when ``follow`` returns: a listener that
    subscribes on its next turn (it waited up to 0.1 s for a message on the
    channels it already held) lost those wake-ups, and the seat learnt of
    its turn only from the periodic check (p99 0.7-0.93 s)."""
    client = redis.Redis.from_url(redis_url)
    hub = Hub(Store(client), check_s=60)  # no periodic check to hide a loss
    steady = Follower(["steady"])  # the listener is busy listening to another match
    hub.follow(steady)
    try:
        for i in range(20):
            follower = Follower([f"fresh-{i}"])
            hub.follow(follower)
            try:
                client.publish(wake_channel(f"fresh-{i}"), 7)
                assert follower.take(2.0), f"follow {i}: the wake-up was lost"
            finally:
                hub.unfollow(follower)
    finally:
        hub.unfollow(steady)
        stopped(hub)
        client.close()


def test_a_write_wakes_this_processs_followers_without_its_wake_up(redis_url, monkeypatch):
    """Issue 34, point 4: the process that commits a move wakes its own
    followers at once (a commit subscriber), not when its wake-up has gone
    round Redis and back. Here no wake-up from Redis ever arrives, and the
    periodic check is off."""
    real = Listener._handle

    def deaf(listener: Listener, message: dict) -> None:
        if message["type"] not in ("message", "smessage"):
            real(listener, message)

    monkeypatch.setattr(Listener, "_handle", deaf)
    app = create_app({"REDIS_URL": redis_url})
    hub = app.extensions["ludotheque.live"].hub
    hub.check_s = 60
    http = app.test_client()
    body = {"players": [{"name": "Ada"}, {"name": "Bob"}], "seed": 4}
    match = http.post("/v1/games/dekal/matches", json=body).get_json()
    url = f"/v1/games/dekal/matches/{match['id']}"
    follower = Follower([match["id"]])
    hub.follow(follower)
    try:
        seat = http.get(url).get_json()["to_act"][0]
        headers = {"Authorization": f"Bearer {match['seats'][seat]['token']}"}
        action = http.get(url + "/legal-actions", headers=headers).get_json()["actions"][0]
        assert http.post(url + "/actions", json=action, headers=headers).status_code == 200
        assert follower.take(2.0), "the follower was not woken"
    finally:
        hub.unfollow(follower)
        stopped(hub)


def test_a_wake_up_already_handed_out_does_not_wake_the_next_follower(redis_url):
    """The seat that made a move long-polls at once; the move's wake-up may
    come back from Redis after that follow. The hub handed that index out
    already (the commit woke it here): the new follower must not be woken
    for it (a read and a hold for nothing, two round trips a move)."""
    client = redis.Redis.from_url(redis_url)
    hub = Hub(Store(client), check_s=60)
    try:
        first = Follower(["m1"])
        hub.follow(first)
        hub.wake("m1", 5)  # the commit's own wake-up
        assert first.take(2.0)
        hub.unfollow(first)
        second = Follower(["m1"])
        hub.follow(second)
        hub.wake("m1", 5)  # the same move's wake-up, back from Redis
        assert not second.take(0.3)
        hub.wake("m1", 6)  # the next move's
        assert second.take(2.0)
        hub.unfollow(second)
    finally:
        stopped(hub)
        client.close()


def test_a_long_poll_on_a_match_that_does_not_exist_holds_no_channel(redis_url):
    """Adversary, issue 34: a long poll follows its match before reading it;
    on a made-up id it answered 404 and left the channel subscribed for the
    30 s a channel lingers: 3,306 such requests in 25 s held 3,307 channels
    (Redis 2.7 to 16.5 MB), beyond every follower cap. A match that does
    not exist is let go at once."""
    app = create_app({"REDIS_URL": redis_url, "RATELIMIT_ENABLED": False})
    http = app.test_client()
    hub = app.extensions["ludotheque.live"].hub
    client = redis.Redis.from_url(redis_url)
    made_up = [f"{i:032x}" for i in range(20)]
    try:
        for match_id in made_up:
            answer = http.get(
                f"/v1/games/dekal/matches/{match_id}?wait=30",
                headers={"Authorization": "Bearer made-up-token"},
            )
            assert answer.status_code == 404
        held = {wake_channel(m).encode() for m in made_up}
        wait_until(lambda: not held & set(client.pubsub_channels()), timeout=5)
    finally:
        stopped(hub)
        client.close()


def stopped(hub: Hub) -> None:
    """Stop ``hub`` and wait for its listeners to close their connections."""
    hub.stop()
    for listener in list(hub._listeners.values()):
        listener.thread.join(timeout=5)


def long_poll(url: str, token: str, after: int, answer: dict) -> None:
    """Wait up to 5 s for the events after ``after``; put them and the time in ``answer``."""
    started = time.monotonic()
    polled = requests.get(
        url,
        params={"after": after, "wait": 5},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    answer.update(events=polled.json()["events"], took=time.monotonic() - started)


@contextmanager
def subscribers_killed(redis_client, every_s: float) -> Iterator[None]:
    """Kill every pub/sub connection to Redis again and again meanwhile."""
    stop = threading.Event()

    def kill() -> None:
        while not stop.is_set():
            redis_client.execute_command("CLIENT", "KILL", "TYPE", "pubsub")
            time.sleep(every_s)

    killer = threading.Thread(target=kill)
    killer.start()
    try:
        yield
    finally:
        stop.set()
        killer.join()


def test_a_stopped_hub_ends_its_streams_and_answers_its_long_polls(live_server):
    server = live_server()
    api = ApiClient(server.base)
    match_id, _ = create_match(api, GAME, seed=9)
    last = events_of(api, GAME, match_id, None)[-1]["index"]
    base = f"{server.base}/v1/games/{GAME}/matches/{match_id}"
    answers: dict[str, object] = {}

    def stream() -> None:
        answers["stream"] = requests.get(f"{base}/stream", timeout=30).text

    def poll() -> None:
        answers["poll"] = requests.get(
            f"{base}/events", params={"after": last, "wait": 25}, timeout=30
        ).json()

    followers = [threading.Thread(target=stream), threading.Thread(target=poll)]
    for follower in followers:
        follower.start()
    deadline = time.monotonic() + 10
    while server.app.extensions["ludotheque.live"].hub.count() < 2:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    started = time.monotonic()
    server.app.extensions["ludotheque.live"].hub.stop()
    for follower in followers:
        follower.join(10)
    assert time.monotonic() - started < 3  # not the poll's 25 s
    ending = ": this stream ends here; reconnect with Last-Event-ID\n\n"
    assert answers["stream"].endswith(ending)
    assert answers["poll"] == {"events": [], "next": last}


def test_a_long_poll_of_a_turn_is_woken_without_waiting_for_the_hubs_log_reads(
    redis_url, monkeypatch
):
    """Issue 34, point 4, at 64 clients: the handoff's p99 was three times
    the floor's. A seat's long poll (``?wait=``) reads the match itself once
    woken, yet its wake-up went through the hub's read loop: its turn, then
    a round trip reading the log for the streams, then the follower's turn.
    Under load each of those waits for every ready greenlet of the process.
    Here the read loop is stalled 3 s (a slow read, a busy process): the
    long poll must still answer at once, with its turn, and read no log."""
    real = Hub._fan_out

    def stalled(hub: Hub, woken: dict, starts: dict) -> None:
        time.sleep(3)
        real(hub, woken, starts)

    monkeypatch.setattr(Hub, "_fan_out", stalled)
    app = create_app({"REDIS_URL": redis_url, "RATELIMIT_ENABLED": False})
    hub = app.extensions["ludotheque.live"].hub
    hub.check_s = 60  # no periodic check either
    reads: list[dict] = []
    events_after = hub.store.events_after

    def counted(starts: dict, limit: int) -> dict:
        reads.append(starts)
        return events_after(starts, limit)

    monkeypatch.setattr(hub.store, "events_after", counted)
    http = app.test_client()
    body = {"players": [{"name": "Ada"}, {"name": "Bob"}], "seed": 4}
    match = http.post("/v1/games/dekal/matches", json=body).get_json()
    url = f"/v1/games/dekal/matches/{match['id']}"
    headers = [{"Authorization": f"Bearer {seat['token']}"} for seat in match["seats"]]
    # both seats reveal at once: seat 0 reveals, then waits for seat 1's reveal
    reveals = [
        http.get(url + "/legal-actions", headers=headers[seat]).get_json()["actions"][0]
        for seat in (0, 1)
    ]
    answer: dict = {}

    def wait() -> None:
        polled = app.test_client().get(url + "?wait=10", headers=headers[0])
        answer.update(view=polled.get_json(), at=time.monotonic())

    try:
        assert http.post(url + "/actions", json=reveals[0], headers=headers[0]).status_code == 200
        waiting = threading.Thread(target=wait)
        waiting.start()
        wait_until(lambda: hub.count() == 1, timeout=5)
        assert http.post(url + "/actions", json=reveals[1], headers=headers[1]).status_code == 200
        moved = time.monotonic()
        waiting.join(timeout=15)
        assert answer["view"]["to_act"] == [0]
        assert answer["at"] - moved < 1.0, f"woken {answer['at'] - moved:.2f} s after the move"
        assert reads == [], "a long poll of a turn needs no log read"
    finally:
        stopped(hub)


def test_a_long_poll_woken_by_this_processs_move_takes_the_match_as_written(
    redis_url, monkeypatch
):
    """Issue 34, point 2: once woken, a long poll read the match again, a
    round trip on the handoff's path. When the move that woke it was made
    by this process, the hub hands over the match as that commit wrote it
    (current when it woke the wait): the long poll reads the match once,
    before it waits, and answers the version the move made. (The wake-up
    back from Redis is not heard here: it would race the commit's own.)"""
    real_handle = Listener._handle

    def deaf(listener: Listener, message: dict) -> None:
        if message["type"] not in ("message", "smessage"):
            real_handle(listener, message)

    monkeypatch.setattr(Listener, "_handle", deaf)
    app = create_app({"REDIS_URL": redis_url, "RATELIMIT_ENABLED": False})
    hub = app.extensions["ludotheque.live"].hub
    hub.check_s = 60
    loads: list[int] = []  # the threads that read the match
    real = Store.load

    def load(store: Store, *args, **kwargs):
        loads.append(threading.get_ident())
        return real(store, *args, **kwargs)

    monkeypatch.setattr(Store, "load", load)
    http = app.test_client()
    body = {"players": [{"name": "Ada"}, {"name": "Bob"}], "seed": 4}
    match = http.post("/v1/games/dekal/matches", json=body).get_json()
    url = f"/v1/games/dekal/matches/{match['id']}"
    headers = [{"Authorization": f"Bearer {seat['token']}"} for seat in match["seats"]]
    reveals = [
        http.get(url + "/legal-actions", headers=headers[seat]).get_json()["actions"][0]
        for seat in (0, 1)
    ]
    answer: dict = {}

    def wait() -> None:
        answer["view"] = app.test_client().get(url + "?wait=10", headers=headers[0]).get_json()
        answer["thread"] = threading.get_ident()

    try:
        assert http.post(url + "/actions", json=reveals[0], headers=headers[0]).status_code == 200
        waiting = threading.Thread(target=wait)
        waiting.start()
        wait_until(lambda: hub.count() == 1, timeout=5)
        moved = http.post(url + "/actions", json=reveals[1], headers=headers[1]).get_json()
        waiting.join(timeout=15)
        assert answer["view"]["to_act"] == [0]
        assert answer["view"]["version"] == moved["version"]
        assert loads.count(answer["thread"]) == 1, "read again once woken"
    finally:
        stopped(hub)
