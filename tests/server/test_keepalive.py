"""`ludotheque serve` keeps an idle connection for the client's next request
for ``LUDOTHEQUE_KEEPALIVE_S`` (5 by default): a person playing a turn every
few seconds keeps one connection, and each answer's head and body arrive
together (``service.server.wire``)."""

from __future__ import annotations

import http.client
import os
import socket
import time

import pytest

from service.store.embedded import free_port
from tests.support.servers import interrupt, start_serve


def ask(connection: socket.socket) -> http.client.HTTPResponse:
    """GET /v1/games on ``connection``, the answer read whole (raises
    ConnectionError if the server has closed the connection)."""
    connection.sendall(b"GET /v1/games HTTP/1.1\r\nHost: x\r\n\r\n")
    answer = http.client.HTTPResponse(connection)
    answer.begin()
    answer.read()
    return answer


@pytest.mark.parametrize(("keepalive", "pause", "kept"), [(None, 3.5, True), ("1", 2.5, False)])
def test_an_idle_connection_is_kept_for_the_keepalive(redis_url, tmp_path, keepalive, pause, kept):
    env = {**os.environ, "REDIS_URL": redis_url}
    if keepalive is not None:
        env["LUDOTHEQUE_KEEPALIVE_S"] = keepalive
    port = free_port()
    server = start_serve(tmp_path / "data", port, env, workers=1)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
            first = ask(connection)
            assert first.status == 200 and first.getheader("Connection") == "keep-alive"
            time.sleep(pause)
            try:
                again = ask(connection).status
            except ConnectionError:
                again = None
            assert (again == 200) == kept, again
    finally:
        interrupt(server)
