"""A real 3-master Redis Cluster on loopback ports: a match of every game
played through the API with REDIS_CLUSTER=1, bots and streams included."""

from __future__ import annotations

import random
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from engines import GAMES
from service.embedded import server_binary
from service.worker import Worker
from tests.api.client import ApiClient
from tests.api.test_play import play_random
from tests.conftest import LiveServer

SLOTS = 16384


def cluster_port() -> int:
    """A free port whose cluster bus port (the port + 10000) is free too;
    ephemeral ports are too high for that, so pick below them."""
    while True:
        port = random.randint(20000, 30000)
        try:
            with socket.socket() as node, socket.socket() as bus:
                node.bind(("127.0.0.1", port))
                bus.bind(("127.0.0.1", port + 10000))
        except OSError:
            continue
        return port


def start_node(folder: Path, port: int) -> subprocess.Popen:
    folder.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [
            server_binary(),
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            str(folder / "nodes.conf"),
            "--dir",
            str(folder),
            "--save",
            "",
            "--appendonly",
            "no",
            "--logfile",
            str(folder / "server.log"),
        ],
        start_new_session=True,
    )


def wait_ping(client: redis.Redis) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            client.ping()
            return
        except redis.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@pytest.fixture(scope="module")
def cluster_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Three masters, the slots split in three, met with CLUSTER MEET."""
    ports = [cluster_port() for _ in range(3)]
    root = tmp_path_factory.mktemp("cluster")
    nodes = [start_node(root / str(port), port) for port in ports]
    clients = [redis.Redis(port=port) for port in ports]
    try:
        bounds = [0, SLOTS // 3, 2 * SLOTS // 3, SLOTS]
        for i, client in enumerate(clients):
            wait_ping(client)
            client.execute_command("CLUSTER", "ADDSLOTSRANGE", bounds[i], bounds[i + 1] - 1)
        for port in ports[1:]:
            clients[0].execute_command("CLUSTER", "MEET", "127.0.0.1", port)
        deadline = time.monotonic() + 30
        while not all(
            c.execute_command("CLUSTER", "INFO").decode().startswith("cluster_state:ok")
            and int(
                c.execute_command("CLUSTER", "INFO")
                .decode()
                .split("cluster_known_nodes:")[1]
                .split()[0]
            )
            == 3
            for c in clients
        ):
            assert time.monotonic() < deadline, "the cluster did not form"
            time.sleep(0.1)
        yield f"redis://127.0.0.1:{ports[0]}/0"
    finally:
        for client in clients:
            client.close()
        for node in nodes:
            node.terminate()
            node.wait(timeout=15)


@pytest.fixture(scope="module")
def cluster_live(cluster_url: str) -> Iterator[LiveServer]:
    server = LiveServer({"REDIS_URL": cluster_url, "REDIS_CLUSTER": True})
    yield server
    server.stop()


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
    matches = cluster_live.app.extensions["ludotheque.matches"]
    worker = Worker(matches, budget_s=0.01, idle_s=0.01)
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    try:
        created = api.create("dekal", {"players": [{"bot": "random"}, {"bot": "greedy"}]}).json()
        stream = api.http.get(
            f"{api.base}/v1/games/dekal/matches/{created['id']}/stream", timeout=60
        )
        assert stream.text.rstrip().endswith("}") and '"match_over"' in stream.text
        assert api.get("dekal", created["id"]).json()["status"] == "finished"
    finally:
        worker.stopping.set()
        thread.join(timeout=10)


def test_rate_limits_count_on_the_cluster(cluster_url):
    server = LiveServer(
        {
            "REDIS_URL": cluster_url,
            "REDIS_CLUSTER": True,
            "RATELIMIT_ENABLED": True,
            "RATE_LIMIT_PER_TOKEN": "2/minute",
        }
    )
    try:
        api = ApiClient(server.base)
        created = api.create("dekal", {"players": [{"name": "A"}, {"name": "B"}]}).json()
        token = created["seats"][0]["token"]
        codes = [api.get("dekal", created["id"], token).status_code for _ in range(3)]
        assert codes == [200, 200, 429]
    finally:
        server.stop()
