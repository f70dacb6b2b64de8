"""Under ``ludotheque serve`` (gevent), the push hub writes an event to an
idle one-match stream's socket itself (``service.live.followers.Shortcut``), and the
stream's greenlet only sends what the socket did not take, gaps, the end
and keep-alives. Whatever the client's pace, every stream still gets every
event it may see, in order, once, and ends after ``match_over``."""

from __future__ import annotations

import http.client
import os
import socket
import threading
import time
from pathlib import Path

import orjson
import pytest

from service.store.embedded import free_port
from tests.support.client import ApiClient
from tests.support.matches import create_match, events_of, play_out
from tests.support.servers import interrupt, start_serve
from tests.support.streams import text_events

GAME = "dekal"


@pytest.fixture(scope="module")
def served(redis_url, tmp_path_factory):
    """``ludotheque serve`` with one worker, its keep-alive comments every 0.5 s
    (one for the module: each test follows matches of its own)."""
    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_url, "LUDOTHEQUE_SSE_KEEPALIVE_S": "0.5"}
    server = start_serve(tmp_path_factory.mktemp("served") / "data", port, env, workers=1)
    yield ApiClient(f"http://127.0.0.1:{port}"), port
    log = interrupt(server)
    assert "Traceback" not in log, log


def open_stream(port: int, match_id: str, token: str | None, receive_buffer: int = 0):
    """A raw connection asking for the match's stream (as ``token``'s seat)."""
    connection = socket.socket()
    if receive_buffer:  # a small window: the server's writes stop being taken
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    connection.settimeout(30)
    connection.connect(("127.0.0.1", port))
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    path = f"/v1/games/{GAME}/matches/{match_id}/stream"
    connection.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n{auth}\r\n".encode())
    answer = http.client.HTTPResponse(connection)
    answer.begin()
    assert answer.status == 200 and answer.getheader("Transfer-Encoding") == "chunked"
    return connection, answer


def frames(body: bytes) -> list[tuple[int | None, dict | None]]:
    """(id, data) of each event, (None, None) for each comment."""
    return text_events(body.decode(), comments=True)


def unsent(port: int, client_port: int) -> int:
    """Bytes the server's end of a connection holds, not yet taken by the
    client (``/proc/net/tcp``: its send queue)."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote = fields[1].split(":")[1], fields[2].split(":")[1]
        if int(local, 16) == port and int(remote, 16) == client_port:
            return int(fields[4].split(":")[0], 16)
    return 0


def test_streams_whose_clients_stop_reading_get_every_event_once_in_order(served):
    api, port = served
    match_id, tokens = create_match(api, GAME, 4, seed=11)
    viewers = [None, tokens[0], tokens[3]]
    streams = [open_stream(port, match_id, who, receive_buffer=1024) for who in viewers]
    play_out(api, GAME, match_id, tokens, 11)  # nobody reads meanwhile
    time.sleep(0.5)
    # the server could not put it all on the wire: the clients' windows are full
    assert all(unsent(port, connection.getsockname()[1]) > 0 for connection, _ in streams)
    for who, (connection, answer) in zip(viewers, streams, strict=True):
        got = [event for event in frames(answer.read()) if event[0] is not None]
        connection.close()
        expected = events_of(api, GAME, match_id, who)
        assert [data for _, data in got] == expected
        assert [index for index, _ in got] == [event["index"] for event in expected]
        assert expected[-1]["type"] == "match_over"


def test_keep_alives_come_after_a_quiet_keep_alive_period_only(served):
    api, port = served
    match_id, tokens = create_match(api, GAME, seed=12)
    connection, answer = open_stream(port, match_id, tokens[1])
    body: list[bytes] = []
    reader = threading.Thread(target=lambda: body.append(answer.read()))
    reader.start()
    time.sleep(1.3)  # quiet: two keep-alives
    play_out(api, GAME, match_id, tokens, 12)  # one action every few ms
    reader.join(30)
    connection.close()
    got = frames(body[0])
    first = next(i for i, (index, _) in enumerate(got) if index is not None and i > 1)
    assert got[1:first].count((None, None)) in (2, 3)  # 0.5 s apart while quiet
    # none between the events of the match played at full speed
    assert (None, None) not in got[first:]
    expected = events_of(api, GAME, match_id, tokens[1])
    assert [data for _, data in got if data is not None] == expected


def test_a_head_of_a_stream_is_its_head_alone_and_the_connection_goes_on(served):
    api, port = served
    match_id, tokens = create_match(api, GAME, seed=13)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        path = f"/v1/games/{GAME}/matches/{match_id}/stream"
        connection.sendall(f"HEAD {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        head = http.client.HTTPResponse(connection, method="HEAD")
        head.begin()
        assert head.status == 200 and head.read() == b""
        play_out(api, GAME, match_id, tokens, 13)  # no event goes to that connection
        connection.sendall(b"GET /v1/games HTTP/1.1\r\nHost: x\r\n\r\n")
        after = http.client.HTTPResponse(connection)
        after.begin()
        assert after.status == 200
        assert GAME in {game["name"] for game in orjson.loads(after.read())["games"]}
