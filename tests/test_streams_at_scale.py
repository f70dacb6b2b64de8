"""200 event streams held open on a 2-worker `ludotheque serve` while a match
is played: every stream receives every event it may see, in order, once."""

from __future__ import annotations

import os
import threading
import time

from service.embedded import free_port
from tests.api.client import ApiClient
from tests.api.test_live import all_events, play_to_the_end, sse_events
from tests.test_cli import interrupt, start

STREAMS = 200
PLAYERS = 4


def test_two_hundred_streams_on_two_workers(tmp_path, redis_url):
    port = free_port()
    server = start(tmp_path, port, {**os.environ, "REDIS_URL": redis_url}, workers=2)
    try:
        api = ApiClient(f"http://127.0.0.1:{port}")
        created = api.create(
            "dekal", {"players": [{"name": f"P{i}"} for i in range(PLAYERS)], "seed": 21}
        ).json()
        match_id, tokens = created["id"], [s["token"] for s in created["seats"]]
        url = f"{api.base}/v1/games/dekal/matches/{match_id}/stream"
        viewers = [None if i % 5 == 4 else tokens[i % PLAYERS] for i in range(STREAMS)]
        received: list[list | None] = [None] * STREAMS
        opened = threading.Semaphore(0)

        def follow(i: int) -> None:
            client = ApiClient(api.base)
            headers = {"Authorization": f"Bearer {viewers[i]}"} if viewers[i] else {}
            with client.http.get(url, headers=headers, stream=True, timeout=120) as response:
                opened.release()
                received[i] = sse_events(response)

        followers = [threading.Thread(target=follow, args=(i,)) for i in range(STREAMS)]
        for follower in followers:
            follower.start()
        for _ in range(STREAMS):
            assert opened.acquire(timeout=60), "a stream did not open"
        time.sleep(0.5)
        play_to_the_end(api, match_id, tokens, 21, PLAYERS)
        for follower in followers:
            follower.join(timeout=120)
        expected = {who: all_events(api, match_id, who) for who in {*viewers}}
        for i, got in enumerate(received):
            assert got is not None, f"stream {i} did not end"
            want = expected[viewers[i]]
            assert [data for _, data in got] == want, f"stream {i} differs"
            assert [index for index, _ in got] == [e["index"] for e in want]
    finally:
        log = interrupt(server)
    assert "Traceback" not in log, log
