"""`ludotheque serve` keeps an idle connection for the client's next request
for ``LUDOTHEQUE_KEEPALIVE_S`` (5 by default): a person playing a turn every
few seconds keeps one connection, and each answer's head and body arrive
together (``service.wire``)."""

from __future__ import annotations

import os
import socket
import time

import pytest

from service.embedded import free_port
from tests.test_cli import interrupt, start


def ask(connection: socket.socket) -> bytes:
    """GET /v1/games on ``connection``; the answer ('' if the server closed it)."""
    connection.sendall(b"GET /v1/games HTTP/1.1\r\nHost: x\r\n\r\n")
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = connection.recv(65536)
        if not chunk:
            return answer
        answer += chunk
    head, body = answer.split(b"\r\n\r\n", 1)
    length = int(
        next(
            line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
        ).split(b":")[1]
    )
    while len(body) < length:
        body += connection.recv(65536)
    return head + b"\r\n\r\n" + body


@pytest.mark.parametrize(("keepalive", "pause", "kept"), [(None, 3.5, True), ("1", 2.5, False)])
def test_an_idle_connection_is_kept_for_the_keepalive(redis_url, tmp_path, keepalive, pause, kept):
    env = {**os.environ, "REDIS_URL": redis_url}
    if keepalive is not None:
        env["LUDOTHEQUE_KEEPALIVE_S"] = keepalive
    port = free_port()
    server = start(tmp_path / "data", port, env, workers=1)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
            first = ask(connection)
            assert first.startswith(b"HTTP/1.1 200") and b"Connection: keep-alive" in first
            time.sleep(pause)
            try:
                again = ask(connection)
            except ConnectionError:
                again = b""
            assert again.startswith(b"HTTP/1.1 200") == kept, again[:100]
    finally:
        interrupt(server)
