"""Outages: Redis stopped and restarted mid-match, and a graceful SIGTERM."""

from __future__ import annotations

import os
import random
import signal
import threading
import time

import redis

from engines import GAMES
from service.store.embedded import EmbeddedRedis, free_port
from tests.support.client import ApiClient
from tests.support.matches import create_match, play_out, replay_from_log
from tests.support.problems import assert_problem
from tests.support.servers import start_serve
from tests.support.streams import sse_events

GAME = "dekal"


def test_redis_down_means_503_then_the_service_recovers_by_itself(tmp_path, live_server):
    backend = EmbeddedRedis(tmp_path / "redis", persist=True)
    url = backend.start()
    server = live_server(REDIS_URL=url)
    api = ApiClient(server.base)
    rng = random.Random(1)
    try:
        match_id, tokens = create_match(api, GAME, seed=4)
        play_out(api, GAME, match_id, tokens, rng, moves=5)
        match = api.get(GAME, match_id).json()
        version, seat = match["version"], match["to_act"][0]
        legal = api.legal(GAME, match_id, tokens[seat]).json()["actions"]
        backend.stop()

        calls = [
            lambda: api.get(GAME, match_id),
            lambda: api.legal(GAME, match_id, tokens[seat]),
            lambda: api.act(GAME, match_id, tokens[seat], legal[0]),
            lambda: api.create(GAME, {"players": [{}, {}]}),
            lambda: api.events(GAME, match_id),
            lambda: api.http.get(f"{api.base}/readyz"),
        ]
        for call in calls:
            started = time.monotonic()
            answer = call()
            assert time.monotonic() - started < 10, "no hang"
            assert assert_problem(answer, 503, "store_unavailable")["detail"]
            assert int(answer.headers["Retry-After"]) >= 1
        assert api.http.get(f"{api.base}/healthz").status_code == 200

        backend = EmbeddedRedis(tmp_path / "redis", persist=True, port=backend.port)
        backend.start()
        deadline = time.monotonic() + 20
        while api.http.get(f"{api.base}/readyz").status_code != 200:
            assert time.monotonic() < deadline, "the service did not recover"
            time.sleep(0.2)
        assert api.get(GAME, match_id).json()["version"] == version, "nothing half-applied"
        play_out(api, GAME, match_id, tokens, rng, moves=5)
        client = redis.Redis.from_url(url)
        stored, state, _ = replay_from_log(client, match_id)
        assert state == stored["state"]
        client.close()
    finally:
        backend.stop()


def test_sigterm_finishes_in_flight_requests_and_ends_streams_cleanly(tmp_path, redis_url):
    port = free_port()
    server = start_serve(
        tmp_path / "serve", port, {**os.environ, "REDIS_URL": redis_url}, workers=1
    )
    api = ApiClient(f"http://127.0.0.1:{port}")
    created = api.create(GAME, {"players": [{"name": "A"}, {"name": "B"}]}).json()
    match_id = created["id"]
    results: dict[str, object] = {}

    def follow() -> None:
        with api.http.get(
            f"{api.base}/v1/games/{GAME}/matches/{match_id}/stream", stream=True, timeout=30
        ) as response:
            results["stream"] = sse_events(response)  # raises if the body is cut

    def long_poll() -> None:
        results["poll"] = ApiClient(api.base).http.get(
            f"{api.base}/v1/games/{GAME}/matches/{match_id}/events",
            params={"after": 99, "wait": 25},
            timeout=30,
        )

    threads = [threading.Thread(target=follow), threading.Thread(target=long_poll)]
    for thread in threads:
        thread.start()
    time.sleep(1.0)
    started = time.monotonic()
    os.kill(server.pid, signal.SIGTERM)
    for thread in threads:
        thread.join(timeout=30)
    assert server.wait(timeout=30) == 0
    assert time.monotonic() - started < 15
    assert results["poll"].status_code == 200 and results["poll"].json()["events"] == []
    assert [e["type"] for _, e in results["stream"]] == ["match_created", "match_started"]
    log = server.log_path.read_text()
    assert "Traceback" not in log, log
    assert len(GAMES) == 4
