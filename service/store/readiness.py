"""A cheaper check that a pooled connection is ready for its next command.

redis-py's pool asks every connection it hands out whether it has data
waiting (it would mean an answer left unread): its hiredis parser makes a
``select.poll`` object each time to look. Under gevent that is gevent's
poll, written in Python over its event loop: a checkout cost 36 µs of CPU
against 10 with this check (4 to 5 % of an API worker under the peer
benchmark, issue 34).
Asked without waiting (``timeout`` 0, as the pool asks), the answer needs
no event loop: the system's ``poll`` with a zero timeout never blocks.
Anything else (a wait, buffered data, a socket that looks readable, which
may be a closed one) is left to redis-py.
"""

from __future__ import annotations

import select

from gevent.monkey import get_original
from redis._parsers import _HiredisParser

_poll = get_original("select", "poll")  # the system's, whether or not gevent patched it


class HiredisParser(_HiredisParser):
    """redis-py's hiredis parser, whose readiness check without waiting is
    one system call."""

    def can_read(self, timeout: float = 0) -> bool:
        sock, reader = self._sock, self._reader
        plain = sock is not None and not (hasattr(sock, "pending") and sock.pending())  # TLS
        if timeout == 0 and plain and reader is not None and not reader.has_data():
            poller = _poll()
            poller.register(sock, select.POLLIN)
            if not poller.poll(0):
                return False  # nothing to read, and not closed
        return super().can_read(timeout)
