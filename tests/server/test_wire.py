"""gunicorn's answers with ``service.server.wire``: the head goes out with the first
body bytes, in one write, and the bytes on the wire are the same as before.

Each test parses a real request from a socket pair with gunicorn's own
parser and answers it with gunicorn's own response code, counting the
writes on the server's end and reading what the client's end received.
"""

from __future__ import annotations

import email.utils
import socket
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import gevent.monkey
import gevent.socket
import pytest
from gunicorn import http, util
from gunicorn.config import Config
from gunicorn.http import wsgi

from service.server import wire


class Counting(socket.socket):
    """A real socket that counts the writes made on it."""

    writes = 0

    def sendall(self, data, *args):
        self.writes += 1
        return super().sendall(data, *args)

    def sendfile(self, *args, **kwargs):
        self.writes += 1
        return super().sendfile(*args, **kwargs)


@pytest.fixture
def answer(monkeypatch):
    """The server's end and the client's end of one request."""
    monkeypatch.setattr(wsgi, "Response", wsgi.Response)  # undone after the test
    monkeypatch.setattr(wsgi, "create", wsgi.create)
    monkeypatch.setattr(util, "http_date", util.http_date)
    wire.install()
    near, far = socket.socketpair()
    server = Counting(fileno=near.detach())

    def make(request: bytes):
        far.sendall(request)
        cfg = Config()
        req = next(http.get_parser(cfg, server, ("127.0.0.1", 1)))
        resp, _ = wsgi.create(req, server, ("127.0.0.1", 1), ("127.0.0.1", 80), cfg)
        return resp

    yield make, server, far
    server.close()
    far.close()


def received(far: socket.socket) -> bytes:
    far.settimeout(2)
    data = b""
    far.shutdown(socket.SHUT_WR)
    while chunk := far.recv(65536):
        data += chunk
    return data


def test_a_json_answer_is_one_write(answer):
    make, server, far = answer
    resp = make(b"GET /v1/games HTTP/1.1\r\nHost: h\r\n\r\n")
    assert isinstance(resp, wire.Response)
    resp.start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", "2")])
    resp.write(b"{}")
    resp.close()
    server.shutdown(socket.SHUT_WR)
    assert server.writes == 1
    head, body = received(far).split(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n") and b"Content-Length: 2" in head
    assert body == b"{}"


def test_an_answer_is_dated_as_gunicorn_dates_it(answer):
    make, server, far = answer
    resp = make(b"GET /v1/games HTTP/1.1\r\nHost: h\r\n\r\n")
    resp.start_response("200 OK", [("Content-Length", "2")])
    resp.write(b"{}")
    resp.close()
    server.shutdown(socket.SHUT_WR)
    date = received(far).split(b"\r\nDate: ")[1].split(b"\r\n")[0].decode()
    assert abs(email.utils.parsedate_to_datetime(date).timestamp() - time.time()) < 2
    assert isinstance(util.http_date, wire.DateHeader)
    for _ in range(3):
        before = time.time()
        ours, theirs = util.http_date(), email.utils.formatdate(time.time(), usegmt=True)
        if int(before) == int(time.time()):  # not across a second's end
            assert ours == theirs
    assert util.http_date(0) == "Thu, 01 Jan 1970 00:00:00 GMT"


def test_a_stream_sends_its_head_with_its_first_frame_then_one_write_a_frame(answer):
    make, server, far = answer
    resp = make(b"GET /stream HTTP/1.1\r\nHost: h\r\n\r\n")
    resp.start_response("200 OK", [("Content-Type", "text/event-stream")])
    for frame in (b"retry: 1000\n\n", b"id: 1\ndata: {}\n\n", b"id: 2\ndata: {}\n\n"):
        resp.write(frame)
    resp.close()
    server.shutdown(socket.SHUT_WR)
    assert server.writes == 4  # head and first frame, two frames, the last chunk
    head, body = received(far).split(b"\r\n\r\n", 1)
    assert b"Transfer-Encoding: chunked" in head
    assert body == (
        b"D\r\nretry: 1000\n\n\r\n"
        b"10\r\nid: 1\ndata: {}\n\n\r\n"
        b"10\r\nid: 2\ndata: {}\n\n\r\n"
        b"0\r\n\r\n"
    )


def test_an_answer_without_a_body_sends_its_head_as_it_closes(answer):
    make, server, far = answer
    resp = make(b"GET /stream HTTP/1.1\r\nHost: h\r\n\r\n")
    resp.start_response("204 No Content", [])
    resp.write(b"")
    assert server.writes == 0
    resp.close()
    server.shutdown(socket.SHUT_WR)
    assert server.writes == 1
    assert received(far).startswith(b"HTTP/1.1 204 No Content\r\n")


def test_a_file_goes_after_the_head(answer):
    make, server, far = answer
    resp = make(b"GET /play/app.js HTTP/1.1\r\nHost: h\r\n\r\n")
    with tempfile.TemporaryFile() as file:
        file.write(b"console.log(1)")
        file.seek(0)
        resp.start_response("200 OK", [("Content-Length", "14")])
        resp.write_file(wsgi.FileWrapper(file))
        resp.close()
    server.shutdown(socket.SHUT_WR)
    head, body = received(far).split(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK") and body == b"console.log(1)"


@pytest.fixture
def stream(monkeypatch):
    """A stream's answer on a gevent socket (as in the workers), its head and
    first frame sent, and the client's end."""
    monkeypatch.setattr(wsgi, "Response", wsgi.Response)
    monkeypatch.setattr(wsgi, "create", wsgi.create)
    monkeypatch.setattr(util, "http_date", util.http_date)
    wire.install()
    near, far = socket.socketpair()
    server = gevent.socket.socket(fileno=near.detach())
    server.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    far.sendall(b"GET /stream HTTP/1.1\r\nHost: h\r\n\r\n")
    cfg = Config()
    req = next(http.get_parser(cfg, server, ("127.0.0.1", 1)))
    resp, _ = wsgi.create(req, server, ("127.0.0.1", 1), ("127.0.0.1", 80), cfg)
    resp.start_response("200 OK", [("Content-Type", "text/event-stream")])
    yield resp, far
    server.close()
    far.close()


def test_another_greenlet_sends_what_the_socket_takes_and_the_answer_the_rest(stream):
    resp, far = stream
    frame = b"id: 1\ndata: " + b"x" * 1_000_000 + b"\n\n"
    with pytest.raises(BlockingIOError):  # nothing before the answer's head
        resp.send_now(resp.framing(frame))
    resp.write(b"retry: 1000\n\n")
    data = resp.framing(frame)
    sent = resp.send_now(data)  # the client reads nothing meanwhile
    assert 0 < sent < len(data)
    with pytest.raises(BlockingIOError):  # full: it does not wait
        resp.send_now(data[sent:])
    reader = ThreadPoolExecutor(1).submit(received, far)
    resp.send_rest(data[sent:])  # waits as long as it must
    resp.write(b"id: 2\ndata: {}\n\n")
    resp.close()
    resp.sock.shutdown(socket.SHUT_WR)
    head, body = reader.result(timeout=30).split(b"\r\n\r\n", 1)
    assert b"Transfer-Encoding: chunked" in head
    assert body == b"D\r\nretry: 1000\n\n\r\n" + data + b"10\r\nid: 2\ndata: {}\n\n\r\n0\r\n\r\n"


def test_a_stream_sees_its_client_gone_without_reading_or_waiting(stream):
    resp, far = stream
    resp.write(b"retry: 1000\n\n")
    assert not resp.client_gone()
    far.close()
    assert resp.client_gone()


def test_the_answer_is_handed_to_the_app_only_where_gevent_runs(answer, monkeypatch):
    near, client = socket.socketpair()
    client.sendall(b"GET /stream HTTP/1.1\r\nHost: h\r\n\r\n")
    cfg = Config()
    req = next(http.get_parser(cfg, near, ("127.0.0.1", 1)))
    for patched in (False, True):
        monkeypatch.setattr(gevent.monkey, "is_module_patched", lambda name, p=patched: p)
        resp, environ = wsgi.create(req, near, ("127.0.0.1", 1), ("127.0.0.1", 80), cfg)
        # threads (the test server) must not write to each other's answers
        assert environ.get(wire.ANSWER) is (resp if patched else None)
    near.close()
    client.close()
