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
from tests.support.client import ApiClient
from tests.support.clusters import Cluster
from tests.support.matches import create_match, play_out, replay_from_log
from tests.support.problems import assert_problem

GAME = "dekal"


def test_a_stopped_cluster_means_503_then_the_service_recovers_by_itself(tmp_path, live_server):
    cluster = Cluster(tmp_path / "cluster", primaries=3).start()
    server = live_server(REDIS_URL=cluster.url, REDIS_CLUSTER=True)
    api = ApiClient(server.base)
    rng = random.Random(2)
    worker = Worker(server.app.extensions["ludotheque.turns"], budget_s=0.01, idle_s=0.01)
    worker_thread = threading.Thread(target=worker.run, daemon=True)
    try:
        match_id, tokens = create_match(api, GAME, seed=4)
        play_out(api, GAME, match_id, tokens, rng, moves=6)
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
        play_out(api, GAME, match_id, tokens, rng, moves=6)
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
        cluster.close()
