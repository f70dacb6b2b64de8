"""The bot ladder (issue 37, point 5): two bot accounts, each run by
`ludotheque bot --queue`, meet in ranked matches through a real server, and
Ctrl-C takes a waiting bot out of the queue."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator

import pytest

from service.store.database import migrate
from tests.support import databases
from tests.support.queue import matchmaking
from tests.support.servers import LUDOTHEQUE, LiveServer, bot_workers

PRESET = f"duel{uuid.uuid4().hex[:8]}"


@pytest.fixture
def server(redis_url: str, tmp_path) -> Iterator[LiveServer]:
    url = databases.sqlite_url(tmp_path)
    migrate(url)
    config = {
        "REDIS_URL": redis_url,
        "DATABASE_URL": url,
        "QUEUE_PRESETS": {"dekal": {PRESET: {"players": 2, "turn_timeout_s": 30}}},
    }
    with (
        LiveServer(config) as live,
        bot_workers(live.app),
        matchmaking(live),
    ):
        yield live


def env(server: LiveServer) -> dict[str, str]:
    return os.environ | {
        "LUDOTHEQUE_DATABASE_URL": server.app.config["DATABASE_URL"],
        "REDIS_URL": server.app.config["REDIS_URL"],
    }


def bot_account(server: LiveServer, name: str) -> tuple[str, str]:
    run = subprocess.run(
        [LUDOTHEQUE, "players", "create", name, "--bot"],
        env=env(server),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    made = dict(line.split(" ", 1) for line in run.stdout.splitlines())
    return made["player"], made["token"]


def ladder(server: LiveServer, token: str, *more: str) -> subprocess.Popen:
    command = [LUDOTHEQUE, "bot", "--url", server.base, "--queue", "dekal", "--token", token]
    return subprocess.Popen(
        [*command, "--preset", PRESET, "--policy", "random", *more],
        env=env(server),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_two_bot_accounts_play_ranked_matches_through_ludotheque_bot_queue(server):
    accounts = [bot_account(server, "Robo"), bot_account(server, "Mecha")]
    runs = [ladder(server, token, "--matches", "2") for _, token in accounts]
    outputs = [run.communicate(timeout=120) for run in runs]
    for run, (out, err) in zip(runs, outputs, strict=True):
        assert run.returncode == 0, err
        assert len(out.splitlines()) == 2, (out, err)
        assert all("winners" in json.loads(line) for line in out.splitlines())
    # both played the same rated matches, as their bot accounts
    mine = server.http.get(
        server.url("/v1/players/me/matches"),
        headers={"Authorization": f"Bearer {accounts[0][1]}"},
    ).json()
    ranked = [m for m in mine["items"] if m["game"] == "dekal"]
    assert len(ranked) == 2
    for entry in ranked:
        match = server.matches.store.load(entry["id"]).match
        assert match["rated"] is True and match["creator"] is None
        assert {s.get("player") for s in match["seats"]} == {a for a, _ in accounts}
        assert all(s.get("bot_account") for s in match["seats"])


def test_ctrl_c_takes_a_waiting_bot_out_of_the_queue(server):
    _, token = bot_account(server, "Lonely")
    run = ladder(server, token)
    queue = server.app.extensions["ludotheque.queue"]
    deadline = time.monotonic() + 30
    while queue.count("dekal", PRESET) == 0 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert queue.count("dekal", PRESET) == 1
    run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=30)
    assert "left the queue" in err
    assert queue.count("dekal", PRESET) == 0
