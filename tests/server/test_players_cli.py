"""The operator's commands for apps and bot accounts, as an operator runs
them (`ludotheque apps ...`, `ludotheque players create --bot`), and a bot
account playing through `ludotheque bot` (issue 36, points 2, 3 and 6)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator

import pytest

from service.store.database import migrate
from tests.support import databases
from tests.support.servers import LUDOTHEQUE, LiveServer, bot_workers


@pytest.fixture
def server(redis_url: str, tmp_path) -> Iterator[LiveServer]:
    url = databases.sqlite_url(tmp_path)
    migrate(url)
    with LiveServer({"REDIS_URL": redis_url, "DATABASE_URL": url}) as live, bot_workers(live.app):
        yield live


def ludotheque(server: LiveServer, *args: str) -> subprocess.CompletedProcess:
    env = os.environ | {
        "LUDOTHEQUE_DATABASE_URL": server.app.config["DATABASE_URL"],
        "REDIS_URL": server.app.config["REDIS_URL"],
    }
    return subprocess.run(
        [LUDOTHEQUE, *args], env=env, capture_output=True, text=True, timeout=120
    )


def printed(run: subprocess.CompletedProcess) -> dict[str, str]:
    assert run.returncode == 0, run.stderr
    return dict(line.split(" ", 1) for line in run.stdout.splitlines())


def test_an_app_registered_rotated_and_revoked_from_the_command_line(server):
    made = printed(ludotheque(server, "apps", "create", "Acme", "--waiting", "3"))
    app_id, first = made["app"], made["key"]
    assert first.startswith("ldq_app_")
    listed = [json.loads(line) for line in ludotheque(server, "apps", "list").stdout.splitlines()]
    assert next(a for a in listed if a["id"] == app_id)["limits"] == {"waiting": 3}
    assert first not in str(listed)

    def calls(key: str) -> int:
        return server.http.post(
            f"{server.base}/v1/apps/me/players",
            json={"external_id": "u1", "name": "Una"},
            headers={"Authorization": f"Bearer {key}"},
        ).status_code

    assert calls(first) == 200
    second = printed(ludotheque(server, "apps", "key", app_id, "--slot", "2"))["key"]
    assert calls(first) == 200 and calls(second) == 200  # both slots work while rotating
    assert ludotheque(server, "apps", "revoke", app_id, "--slot", "1").returncode == 0
    assert calls(first) == 401 and calls(second) == 200
    limits = ludotheque(server, "apps", "limits", app_id, "--requests", "100/minute")
    assert json.loads(limits.stdout) == {"waiting": 3, "requests": "100/minute"}
    assert ludotheque(server, "apps", "limits", app_id, "--requests", "lots").returncode != 0
    assert ludotheque(server, "apps", "revoke", app_id).returncode == 0
    assert calls(second) == 401
    unknown = ludotheque(server, "apps", "revoke", "0" * 32)
    assert unknown.returncode != 0 and "no app" in unknown.stderr


def test_a_bot_account_plays_through_ludotheque_bot_and_shows_as_a_bot(server):
    made = printed(ludotheque(server, "players", "create", "Robo", "--bot"))
    player, token = made["player"], made["token"]
    assert token.startswith("ldq_player_")
    created = server.http.post(
        f"{server.base}/v1/games/dekal/matches", json={"players": [{"bot": "random"}, {}]}
    ).json()
    run = ludotheque(
        server,
        "bot",
        "--url",
        server.base,
        "--game",
        "dekal",
        "--match",
        created["id"],
        "--token",
        token,
        "--seat",
        "1",
        "--policy",
        "random",
        "--rematches",
        "1",
    )
    assert run.returncode == 0, run.stderr
    assert len(run.stdout.splitlines()) == 2  # the match and its rematch, to the end
    view = server.http.get(f"{server.base}/v1/games/dekal/matches/{created['id']}").json()
    assert view["status"] == "finished"
    assert (
        view["seats"][1].items() >= {"player": player, "bot_account": True, "name": "Robo"}.items()
    )
    profile = server.http.get(f"{server.base}/v1/players/{player}").json()
    assert profile["bot"] is True
