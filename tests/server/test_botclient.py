"""`ludotheque bot`: an external process plays a seat through HTTP only,
against a server-side bot, through a server restart, to the end."""

from __future__ import annotations

import subprocess
import time

import pytest

from service.store.embedded import free_port
from tests.support.client import ApiClient
from tests.support.servers import LUDOTHEQUE, bot_workers


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


@pytest.mark.parametrize("policy", ["random", "mcts"])
def test_an_external_bot_plays_a_server_bot_through_a_restart(live_server, policy):
    port = free_port()
    server = live_server(port=port)
    api = ApiClient(server.base)
    created = api.create(
        "dekal", {"players": [{"name": "outside"}, {"bot": "mcts"}], "seed": 13}
    ).json()
    match_id, token = created["id"], created["seats"][0]["token"]
    process = external_bot(server.base, "dekal", match_id, token, policy)
    try:
        with bot_workers(server.app, budget_s=0.02):
            # let a few turns go, then restart the server under the bot's feet
            deadline = time.monotonic() + 30
            while api.get("dekal", match_id).json()["version"] < 12:
                assert time.monotonic() < deadline, process.stderr and process.poll()
                time.sleep(0.05)
        server.stop()
        time.sleep(1.0)
        server = live_server(port=port)
        with bot_workers(server.app, budget_s=0.02):
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


SHORT_MATCHES = {
    "dekal": {},
    "pacal": {},
    "gaudi": {"short_game": True},
    "ducale": {"target_score": 1},
}


@pytest.mark.parametrize("game", sorted(SHORT_MATCHES))
def test_an_external_mcts_bot_finishes_a_match_of_every_game(live, live_bots, game):
    api = ApiClient(live.base)
    body = {"players": [{"name": "outside"}, {"bot": "random"}], "options": SHORT_MATCHES[game]}
    created = api.create(game, body).json()
    process = external_bot(live.base, game, created["id"], created["seats"][0]["token"], "mcts")
    try:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        assert api.get(game, created["id"]).json()["status"] == "finished"
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
