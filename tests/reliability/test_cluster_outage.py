"""A 3-master Redis Cluster stopped whole mid-play: every request answers
503 store_unavailable with Retry-After, a stream ends cleanly, the bot
worker backs off; started again, the service recovers by itself and the
match is intact."""

from __future__ import annotations

import random
import threading
import time

from redis.cluster import RedisCluster

from service.background.worker import Worker
from tests.conftest import LiveServer
from tests.http.test_api import assert_problem, replay_from_log
from tests.reliability.test_outages import GAME, play_some
from tests.support.client import ApiClient
from tests.support.clusters import Cluster


def test_a_stopped_cluster_means_503_then_the_service_recovers_by_itself(tmp_path):
    cluster = Cluster(tmp_path / "cluster", primaries=3).start()
    server = LiveServer({"REDIS_URL": cluster.url, "REDIS_CLUSTER": True})
    api = ApiClient(server.base)
    rng = random.Random(2)
    matches = server.app.extensions["ludotheque.matches"]
    worker = Worker(matches, budget_s=0.01, idle_s=0.01)
    worker_thread = threading.Thread(target=worker.run, daemon=True)
    try:
        created = api.create(GAME, {"players": [{"name": "A"}, {"name": "B"}], "seed": 4}).json()
        match_id, tokens = created["id"], [s["token"] for s in created["seats"]]
        play_some(api, match_id, tokens, 6, rng)
        match = api.get(GAME, match_id).json()
        version, seat = match["version"], match["to_act"][0]
        legal = api.legal(GAME, match_id, tokens[seat]).json()["actions"]
        stream_lines: list[str] = []

        def follow() -> None:
            with api.http.get(
                f"{api.base}/v1/games/{GAME}/matches/{match_id}/stream", stream=True, timeout=60
            ) as response:
                stream_lines.extend(response.iter_lines(decode_unicode=True))

        follower = threading.Thread(target=follow)
        follower.start()
        time.sleep(0.5)
        worker_thread.start()
        cluster.stop_all()

        calls = [
            lambda: api.get(GAME, match_id),
            lambda: api.legal(GAME, match_id, tokens[seat]),
            lambda: api.act(GAME, match_id, tokens[seat], legal[0], Idempotency_Key="down-1"),
            lambda: api.create(GAME, {"players": [{}, {}]}),
            lambda: api.events(GAME, match_id),
            lambda: api.http.get(f"{api.base}/v1/games/{GAME}/matches/{match_id}/stream"),
            lambda: api.http.get(f"{api.base}/readyz"),
        ]
        for call in calls:
            started = time.monotonic()
            answer = call()
            assert time.monotonic() - started < 20, "no hang"
            assert_problem(answer, 503, "store_unavailable")
            assert int(answer.headers["Retry-After"]) >= 1
        follower.join(timeout=60)
        assert not follower.is_alive()
        assert stream_lines[-2:] == [
            ": the store is unavailable; reconnect with Last-Event-ID",
            "",
        ], "the stream ends with a note, not a cut body"
        assert worker_thread.is_alive(), "the worker backs off instead of dying"

        cluster.start_all()
        cluster.wait_healthy()
        deadline = time.monotonic() + 60
        while api.http.get(f"{api.base}/readyz").status_code != 200:
            assert time.monotonic() < deadline, "the service did not recover"
            time.sleep(0.2)
        while api.get(GAME, match_id).status_code != 200:
            assert time.monotonic() < deadline, "the match did not come back"
            time.sleep(0.2)
        assert api.get(GAME, match_id).json()["version"] == version, "nothing half-applied"
        answer = api.act(GAME, match_id, tokens[seat], legal[0], Idempotency_Key="down-1")
        assert answer.status_code == 200, answer.text
        play_some(api, match_id, tokens, 6, rng)
        bots = api.create(GAME, {"players": [{"bot": "random"}, {"bot": "random"}]}).json()
        while api.get(GAME, bots["id"]).json()["status"] != "finished":
            assert time.monotonic() < deadline + 60, "the worker did not resume"
            time.sleep(0.2)
        client = RedisCluster.from_url(cluster.url)
        stored, state, _ = replay_from_log(client, match_id)
        assert state == stored["state"]
        client.close()
    finally:
        worker.stopping.set()
        server.stop()
        cluster.close()
