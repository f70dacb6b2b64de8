"""The embedded Redis keeps what it confirmed: `ludotheque serve` without
REDIS_URL, its Redis killed with SIGKILL while clients play, then `serve`
started again on the same data folder: with the default
LUDOTHEQUE_APPENDFSYNC=always every action answered 200 is still there."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import orjson
import pytest
import redis
import requests

from bench.failover import logged_actions, replays
from service.settings import Settings
from service.store.embedded import free_port
from tests.support.client import ApiClient
from tests.support.servers import start_serve

GAME = "dekal"


def embedded_redis(serve: subprocess.Popen) -> tuple[int, int]:
    """The pid and port of the Redis that ``serve`` started (its child, whose
    process title Redis sets to ``redis-server 127.0.0.1:<port>``)."""
    for entry in Path("/proc").iterdir():
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            title = (entry / "cmdline").read_bytes().split(b"\0")[0].decode()
        except (OSError, ValueError, IndexError):
            continue
        if parent == serve.pid and "-server" in title and "127.0.0.1:" in title:
            return int(entry.name), int(title.rsplit(":", 1)[1].split()[0])
    raise AssertionError("no embedded Redis found")


def play(api: ApiClient, confirmed: list, stopping: threading.Event) -> None:
    """Play as fast as it goes, noting every action answered 200, until the
    store fails (or ``stopping``)."""
    try:
        created = api.create(GAME, {"players": [{"name": "A"}, {"name": "B"}]}).json()
        match_id, tokens = created["id"], [seat["token"] for seat in created["seats"]]
        while not stopping.is_set():
            match = api.get(GAME, match_id)
            if match.status_code != 200 or match.json()["status"] != "active":
                return
            seat = match.json()["to_act"][0]
            legal = api.legal(GAME, match_id, tokens[seat])
            if legal.status_code != 200:
                return
            action = legal.json()["actions"][0]
            answer = api.act(GAME, match_id, tokens[seat], action)
            if answer.status_code != 200:
                return
            confirmed.append((match_id, answer.json()["version"], seat, action))
    except requests.RequestException:
        return


def test_the_default_fsync_policy_is_always():
    assert Settings().appendfsync == "always"


@pytest.mark.skipif(
    os.environ.get("LUDOTHEQUE_APPENDFSYNC", "always") != "always",
    reason="the promise tested is the one of appendfsync always",
)
def test_an_embedded_redis_killed_mid_play_keeps_every_confirmed_action(tmp_path):
    data_dir, port = tmp_path / "data", free_port()
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    server = start_serve(data_dir, port, env, workers=1)
    confirmed: list = []
    stopping = threading.Event()
    try:
        players = [
            threading.Thread(
                target=play, args=(ApiClient(f"http://127.0.0.1:{port}"), confirmed, stopping)
            )
            for _ in range(4)
        ]
        for player in players:
            player.start()
        deadline = time.monotonic() + 30
        while len(confirmed) < 100:
            assert time.monotonic() < deadline, "too slow to play"
            time.sleep(0.05)
        os.kill(embedded_redis(server)[0], signal.SIGKILL)
        for player in players:
            player.join(timeout=30)
        stopping.set()
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert len(confirmed) >= 100

    server = start_serve(data_dir, port, env, workers=1)
    try:
        store = redis.Redis(port=embedded_redis(server)[1])
        logs: dict[str, set] = {}
        for match_id, version, seat, action in confirmed:
            if match_id not in logs:
                logs[match_id] = {orjson.dumps(a) for a in logged_actions(store, match_id)}
            assert orjson.dumps((version, seat, action)) in logs[match_id], (
                "a confirmed action lost"
            )
        for match_id in logs:
            assert replays(store, match_id), "the state is the replay of its log"
        store.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
