"""A real 3-master Redis Cluster on loopback ports: a match of every game
played through the API with REDIS_CLUSTER=1, bots and streams included."""

from __future__ import annotations

import socket

import pytest
import redis

from engines import GAMES
from tests.http.test_play import play_random
from tests.support.client import ApiClient
from tests.support.clusters import SLOTS, Cluster
from tests.support.servers import bot_workers


def test_the_cluster_spreads_matches_over_its_masters(cluster_live):
    api = ApiClient(cluster_live.base)
    store = cluster_live.app.extensions["ludotheque.matches"].store
    slots = set()
    for _ in range(12):
        match_id = api.create("dekal", {"players": [{}, {}]}).json()["id"]
        slots.add(store.client.keyslot(f"m:{{{match_id}}}") * 3 // SLOTS)
    assert len(slots) > 1, "matches land on several masters"
    assert cluster_live.http.get(cluster_live.url("/readyz")).status_code == 200


@pytest.mark.parametrize("name", sorted(GAMES))
def test_a_match_of_every_game_on_the_cluster(cluster_live, name):
    game = GAMES[name]
    play_random(ApiClient(cluster_live.base), game, game.max_players, seed=5, check_every=20)


def test_bots_and_streams_on_the_cluster(cluster_live):
    api = ApiClient(cluster_live.base)
    with bot_workers(cluster_live.app):
        created = api.create("dekal", {"players": [{"bot": "random"}, {"bot": "greedy"}]}).json()
        stream = api.http.get(
            f"{api.base}/v1/games/dekal/matches/{created['id']}/stream", timeout=60
        )
    assert stream.text.rstrip().endswith("}") and '"match_over"' in stream.text
    assert api.get("dekal", created["id"]).json()["status"] == "finished"


def test_rate_limits_count_on_the_cluster(cluster_url, live_server):
    server = live_server(
        REDIS_URL=cluster_url,
        REDIS_CLUSTER=True,
        RATELIMIT_ENABLED=True,
        RATE_LIMIT_PER_TOKEN="2/minute",
    )
    api = ApiClient(server.base)
    created = api.create("dekal", {"players": [{"name": "A"}, {"name": "B"}]}).json()
    token = created["seats"][0]["token"]
    codes = [api.get("dekal", created["id"], token).status_code for _ in range(3)]
    assert codes == [200, 200, 429]


def test_a_node_whose_port_was_taken_starts_on_another(tmp_path):
    """A port is picked free, then another process may take it before the
    node binds it (a full run saw a node refuse every connection for 30 s)."""
    cluster = Cluster(tmp_path, primaries=1)
    with socket.socket() as taker:
        taker.bind(("127.0.0.1", cluster.ports[0]))
        taken = cluster.ports[0]
        try:
            cluster.start()
            assert cluster.ports[0] != taken
            with redis.Redis(port=cluster.ports[0]) as node:
                assert node.execute_command("CLUSTER", "INFO").decode().count("cluster_state:ok")
        finally:
            cluster.close()
