"""An answer's head and the first bytes of its body in one write.

gunicorn writes an HTTP/1 answer's status line and headers with one
``sendall`` and its body with another: two ``send`` calls, two TCP segments
and two wake-ups of the client for every small JSON answer. On a worker
serving views and actions beside thousands of event streams, those extra
sends were 4 % of its time (py-spy, ``python -m bench.streams --streams
10000``). ``Response`` holds the head and sends it with the first body
bytes (or alone, when the answer has none, as it closes); an event stream's
head goes out with its first frame.

It also lets another greenlet write to an answer while the answer's own
waits (``send_now``): the push hub writes an event to an idle stream's
socket itself, instead of waking the stream's greenlet to do it
(``service.live.followers.Shortcut``). The answer is in the WSGI environ, under
``ANSWER``, where gevent runs the worker.

Each answer's ``Date`` header is written once per second it names
(``DateHeader``) rather than formatted anew for every answer.

``gunicorn_conf`` makes it the response class of gunicorn's HTTP/1 workers.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from typing import Any

from gevent import monkey
from gunicorn import util
from gunicorn.http import wsgi

from service.live.wsgi import ANSWER  # the environ's key for the answer being written


def chunk(data: bytes) -> bytes:
    """``data`` as one chunk of a chunked body (as gunicorn frames it)."""
    return b"%X\r\n%s\r\n" % (len(data), data)


class HeadWithBody:
    """The client's socket as one answer writes to it. gunicorn's answer
    writes its head first, always: that first write is held and sent with
    the next one (or by ``flush``)."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._head: bytes | None = None  # None: the head is not written yet

    def sendall(self, data: bytes) -> None:
        if self._head is None:
            self._head = bytes(data)
            return
        if self._head:
            data, self._head = self._head + data, b""
        self._sock.sendall(data)

    @property
    def pending_head(self) -> bool:
        return self._head != b""

    def sendfile(self, *args: Any, **kwargs: Any) -> int:
        self.flush()
        return self._sock.sendfile(*args, **kwargs)

    def flush(self) -> None:
        if self._head:
            head, self._head = self._head, b""
            self._sock.sendall(head)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class Response(wsgi.Response):
    """gunicorn's HTTP/1 answer, its head sent with its body's first bytes."""

    def __init__(self, req: Any, sock: socket.socket, cfg: Any, *args: Any) -> None:
        super().__init__(req, HeadWithBody(sock), cfg, *args)

    def close(self) -> None:
        super().close()
        self.sock.flush()  # an answer without a body: its head alone

    # -- writes from another greenlet, between this answer's own --------------
    @property
    def framing(self) -> Any:
        """How body bytes are framed on the wire (None: as they are)."""
        return chunk if self.chunked else None

    def send_now(self, data: bytes) -> int:
        """Send ``data`` (body bytes, framed) as far as the socket takes it
        without waiting; how many bytes it took. Raises OSError when it
        takes none or the client is gone. Only while the answer's own
        greenlet waits between two writes of its body."""
        if not self.headers_sent or self.sock.pending_head:
            raise BlockingIOError("the answer's head is not sent yet")
        if getattr(self, "_omits_body", False):  # a HEAD, a 204, a 304
            raise BlockingIOError("this answer has no body")
        return self.sock.send(data, 0, timeout=0.0)

    def client_gone(self) -> bool:
        """The client closed its end: an event stream's client sends nothing
        after its request, so its socket reads the end (looked at, not
        read, and without waiting)."""
        timeout = self.sock.gettimeout()
        self.sock.settimeout(0.0)
        try:
            return self.sock.recv(1, socket.MSG_PEEK) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True
        finally:
            self.sock.settimeout(timeout)

    def send_rest(self, data: bytes) -> None:
        """Send the rest of what ``send_now`` began (from the answer's greenlet)."""
        self.sock.sendall(data)


_create = wsgi.create


def create(*args: Any, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
    """gunicorn's request environ, with the answer under ``ANSWER`` where
    other greenlets may write to it."""
    response, environ = _create(*args, **kwargs)
    if isinstance(response, Response) and monkey.is_module_patched("socket"):
        environ[ANSWER] = response
    return response, environ


class DateHeader:
    """gunicorn's ``util.http_date`` (an answer's ``Date``: ``Fri, 27 Nov 2026
    21:43:46 GMT``), its text made once per second: it names whole seconds,
    and ``email.utils.formatdate`` took a few µs of every answer."""

    def __init__(self, http_date: Callable[..., str]) -> None:
        self.http_date = http_date
        self.last: tuple[int, str] = (-1, "")  # a second, and its text

    def __call__(self, timestamp: float | None = None) -> str:
        if timestamp is not None:
            return self.http_date(timestamp)
        now = time.time()
        if self.last[0] != int(now):
            self.last = (int(now), self.http_date(now))
        return self.last[1]


def install() -> None:
    """Make gunicorn's HTTP/1 workers answer with ``Response``, and date
    their answers with ``DateHeader``."""
    wsgi.Response = Response
    wsgi.create = create
    if not isinstance(util.http_date, DateHeader):
        util.http_date = DateHeader(util.http_date)
