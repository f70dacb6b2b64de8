"""An answer's head and the first bytes of its body in one write.

gunicorn writes an HTTP/1 answer's status line and headers with one
``sendall`` and its body with another: two ``send`` calls, two TCP segments
and two wake-ups of the client for every small JSON answer. On a worker
serving views and actions beside thousands of event streams, those extra
sends were 4 % of its time (py-spy, ``python -m bench.streams --streams
10000``). ``Response`` holds the head and sends it with the first body
bytes (or alone, when the answer has none, as it closes); an event stream's
head goes out with its first frame.

``gunicorn_conf`` makes it the response class of gunicorn's HTTP/1 workers.
"""

from __future__ import annotations

import socket
from typing import Any

from gunicorn.http import wsgi


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


def install() -> None:
    """Make gunicorn's HTTP/1 workers answer with ``Response``."""
    wsgi.Response = Response
