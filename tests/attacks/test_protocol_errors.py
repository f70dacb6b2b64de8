"""Hostile requests that gunicorn itself refuses, before the app sees them
(a request line or headers past its limits): under `ludotheque serve`, the
production configuration, they too must be 4xx application/problem+json."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator

import pytest
import requests

from service.store.embedded import free_port
from tests.support.servers import interrupt, start_serve


@pytest.fixture(scope="module")
def served(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env = {**os.environ, "REDIS_URL": redis_url, "LUDOTHEQUE_RATE_LIMITS": "0"}
    port = free_port()
    process = start_serve(tmp_path_factory.mktemp("serve") / "data", port, env, workers=1)
    yield f"http://127.0.0.1:{port}"
    interrupt(process)


def raw(base: str, request: bytes) -> bytes:
    """Send bytes as they are (a client library would refuse some) and read the answer."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    return answer


def test_requests_gunicorn_refuses_are_problem_json_too(served):
    url = f"{served}/v1/games/dekal/matches/{'0' * 32}"
    answers = [
        requests.get(url, headers={"Authorization": "Bearer " + "A" * 10_000}, timeout=10),
        requests.get(url, headers={f"X-Pad-{i}": "x" for i in range(120)}, timeout=10),
        requests.get(f"{served}/v1/games/dekal/matches/{'a' * 9000}", timeout=10),
    ]
    for answer in answers:
        assert 400 <= answer.status_code < 500
        assert answer.headers["Content-Type"] == "application/problem+json", answer.text[:100]
    malformed = raw(served, b"GET /v1/games HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n")
    assert malformed.startswith(b"HTTP/1.1 400")
    assert b"Content-Type: application/problem+json" in malformed
