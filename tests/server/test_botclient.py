"""`ludotheque bot`: an external process plays a seat through HTTP only,
against a server-side bot, through a server restart, to the end."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from service.background.worker import Worker
from service.store.embedded import free_port
from tests.conftest import LiveServer
from tests.support.client import ApiClient

LUDOTHEQUE = str(Path(sys.executable).with_name("ludotheque"))


def external_bot(base: str, game: str, match_id: str, token: str, policy: str):
    return subprocess.Popen(
        [
            LUDOTHEQUE,
            "bot",
            "--url",
            base,
            "--game",
            game,
            "--match",
            match_id,
            "--token",
            token,
            "--policy",
            policy,
            "--budget-ms",
            "20",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def server_bots(server: LiveServer) -> tuple[Worker, threading.Thread]:
    worker = Worker(server.app.extensions["ludotheque.matches"], budget_s=0.02, idle_s=0.01)
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    return worker, thread


@pytest.mark.parametrize("policy", ["random", "mcts"])
def test_an_external_bot_plays_a_server_bot_through_a_restart(redis_url, policy):
    port = free_port()
    server = LiveServer({"REDIS_URL": redis_url}, port=port)
    api = ApiClient(server.base)
    created = api.create(
        "dekal", {"players": [{"name": "outside"}, {"bot": "mcts"}], "seed": 13}
    ).json()
    match_id, token = created["id"], created["seats"][0]["token"]
    worker, thread = server_bots(server)
    process = external_bot(server.base, "dekal", match_id, token, policy)
    try:
        # let a few turns go, then restart the server under the bot's feet
        deadline = time.monotonic() + 30
        while api.get("dekal", match_id).json()["version"] < 12:
            assert time.monotonic() < deadline, process.stderr and process.poll()
            time.sleep(0.05)
        worker.stopping.set()
        thread.join(timeout=10)
        server.stop()
        time.sleep(1.0)
        server = LiveServer({"REDIS_URL": redis_url}, port=port)
        worker, thread = server_bots(server)
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        assert "retrying" in err, "the bot saw the server go away"
        final = ApiClient(server.base).get("dekal", match_id).json()
        assert final["status"] == "finished"
        assert final["outcome"]["winners"]
        assert '"winners"' in out
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        worker.stopping.set()
        thread.join(timeout=10)
        server.stop()


SHORT_MATCHES = {
    "dekal": {},
    "pacal": {},
    "gaudi": {"short_game": True},
    "ducale": {"target_score": 1},
}


@pytest.mark.parametrize("game", sorted(SHORT_MATCHES))
def test_an_external_mcts_bot_finishes_a_match_of_every_game(live, game):
    api = ApiClient(live.base)
    body = {"players": [{"name": "outside"}, {"bot": "random"}], "options": SHORT_MATCHES[game]}
    created = api.create(game, body).json()
    worker, thread = server_bots(live)
    process = external_bot(live.base, game, created["id"], created["seats"][0]["token"], "mcts")
    try:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        assert api.get(game, created["id"]).json()["status"] == "finished"
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        worker.stopping.set()
        thread.join(timeout=10)
