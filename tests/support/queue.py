"""The ranked queue's test helpers: a matchmaker beside a test server, and
a player's calls (tests/http/test_queue.py, tests/attacks/test_hostile_queue.py)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from service.background.matchmaker import Matchmaker
from tests.support.servers import LiveServer


@contextmanager
def queue_server(
    redis_url: str, db_url: str, presets: dict[str, Any], **config: Any
) -> Iterator[LiveServer]:
    """A test server with the queue's ``presets`` (``config``: more settings)."""
    settings = {"REDIS_URL": redis_url, "DATABASE_URL": db_url, "QUEUE_PRESETS": presets}
    with LiveServer(settings | config) as live:
        yield live


@contextmanager
def matchmaking(server: LiveServer, idle_s: float = 0.1) -> Iterator[Matchmaker]:
    """A matchmaker in a thread, as ``ludotheque worker`` runs one."""
    extensions = server.app.extensions
    stopping = threading.Event()
    found = Matchmaker(
        extensions["ludotheque.matches"],
        extensions["ludotheque.queue"],
        extensions["ludotheque.queue_presets"],
        extensions["ludotheque.strength"],
        extensions["ludotheque.players"],
        stopping=stopping,
        idle_s=idle_s,
    )
    thread = threading.Thread(target=found.run, daemon=True)
    thread.start()
    try:
        yield found
    finally:
        stopping.set()
        thread.join(timeout=10)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def guest(server: LiveServer, name: str = "Ada") -> str:
    answer = server.http.post(server.url("/v1/players"), json={"name": name})
    assert answer.status_code == 201, answer.text
    return answer.json()["token"]


def join(server: LiveServer, token: str, preset: str, game: str = "dekal", **body: Any):
    return server.http.post(
        server.url(f"/v1/games/{game}/queue"),
        json={"preset": preset, **body},
        headers=bearer(token),
    )


def ticket(server: LiveServer, token: str, ticket_id: str, wait: float = 0):
    return server.http.get(
        server.url(f"/v1/queue/tickets/{ticket_id}"),
        params={"wait": wait},
        headers=bearer(token),
    )


def long_poll_all(server: LiveServer, pairs: list[tuple[str, str]], wait: float = 10) -> list:
    """Each (token, ticket id)'s long poll, all at once: their answers."""
    answers: list[Any] = [None] * len(pairs)

    def poll(n: int) -> None:
        answers[n] = ticket(server, pairs[n][0], pairs[n][1], wait)

    threads = [threading.Thread(target=poll, args=(n,)) for n in range(len(pairs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers
