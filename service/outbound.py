"""Safe outbound calls: the only way Ludothèque calls another server.

Webhook receivers and HTTP bots are URLs strangers give us, so every call
is checked where it matters, at delivery time:

- https only, unless ``LUDOTHEQUE_OUTBOUND_ALLOW`` lists ``http``;
- the name is resolved once, every address it resolves to must be public
  (not loopback, private, link-local, multicast, reserved, shared or
  otherwise internal) unless it lies in a network the allow list names,
  and the connection goes to that very address (a name that rebinds
  between the check and the connection cannot slip through);
- connect and read timeouts, a deadline for the whole call, an answer
  size limit, no redirect followed (a 3xx is a failure);
- at most ``LUDOTHEQUE_OUTBOUND_CONCURRENCY`` calls at once per process
  (each match has at most one call in flight: its deliveries are serial
  and its bot turns are leased one at a time).

``LUDOTHEQUE_OUTBOUND_ALLOW``: comma-separated; ``http`` allows plain http,
any other item is an address or network (``127.0.0.0/8``, ``10.1.2.3``)
allowed although internal. Empty by default. The tests set
``http,127.0.0.0/8,::1``.
"""

from __future__ import annotations

import http.client
import ipaddress
import os
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

ALLOW_ENV = "LUDOTHEQUE_OUTBOUND_ALLOW"
CONCURRENCY_ENV = "LUDOTHEQUE_OUTBOUND_CONCURRENCY"
MAX_ANSWER = 64 * 1024  # bytes read from an answer, at most
MAX_URL = 2048
USER_AGENT = "Ludotheque/1 (+docs/webhooks.md)"


class Refused(Exception):
    """The call was not made, or failed: ``reason`` is stable and short."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes


def allowances() -> tuple[bool, list[ipaddress.IPv4Network | ipaddress.IPv6Network]]:
    """(plain http allowed, networks allowed although internal), read now."""
    items = [i.strip() for i in os.environ.get(ALLOW_ENV, "").split(",") if i.strip()]
    networks = [ipaddress.ip_network(i, strict=False) for i in items if i != "http"]
    return "http" in items, networks


def check_url(url: str) -> None:
    """Refuse a URL that can never be called (at creation): its form and scheme."""
    if len(url) > MAX_URL:
        raise Refused("bad_url", "too long")
    parts = urlsplit(url)
    http_allowed, _ = allowances()
    if parts.scheme not in ("https", "http") or (parts.scheme == "http" and not http_allowed):
        raise Refused("bad_url", "https URLs only")
    if not parts.hostname or parts.username or parts.password:
        raise Refused("bad_url", "a host and no credentials")
    try:
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        raise Refused("bad_url", "bad port") from None


def internal(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    return (
        address.is_loopback
        or address.is_private
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or not address.is_global
    )


def vetted_address(host: str, port: int) -> tuple[int, str]:
    """The (family, address) to connect to: every address ``host`` resolves
    to must be allowed, so a name with one internal address is refused."""
    _, networks = allowances()
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as failure:
        raise Refused("dns", str(failure)) from None
    if not infos:
        raise Refused("dns", "no address")
    for info in infos:
        address = ipaddress.ip_address(info[4][0].split("%")[0])
        if internal(address) and not any(address in net for net in networks):
            raise Refused("internal_address", f"{host} resolves to {address}")
    return infos[0][0], infos[0][4][0]


class _Pinned(http.client.HTTPConnection):
    """Connects to the vetted address, whatever the name resolves to now."""

    def __init__(self, host: str, port: int, address: tuple[int, str], timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        family, ip = self._address
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect((ip, self.port))


class _PinnedTLS(_Pinned):
    def __init__(self, host: str, port: int, address: tuple[int, str], timeout: float) -> None:
        super().__init__(host, port, address, timeout)
        self._context = ssl.create_default_context()

    def connect(self) -> None:
        super().connect()
        self.sock = self._context.wrap_socket(self.sock, server_hostname=self.host)


_slots: threading.BoundedSemaphore | None = None
_slots_lock = threading.Lock()


def slots() -> threading.BoundedSemaphore:
    """This process's cap on outbound calls in flight."""
    global _slots
    with _slots_lock:
        if _slots is None:
            _slots = threading.BoundedSemaphore(int(os.environ.get(CONCURRENCY_ENV, "32")))
        return _slots


def post(
    url: str,
    body: bytes,
    headers: dict[str, str],
    timeout_s: float,
    connect_timeout_s: float = 2.0,
) -> Answer:
    """POST ``body`` to ``url`` under every rule above, within ``timeout_s``
    in all; raise Refused (``reason``: bad_url, dns, internal_address, busy,
    timeout, connection, too_large) when no complete answer came."""
    check_url(url)
    started = time.monotonic()
    parts = urlsplit(url)
    tls = parts.scheme == "https"
    port = parts.port or (443 if tls else 80)
    if not slots().acquire(timeout=timeout_s):
        raise Refused("busy", "too many outbound calls in flight")
    try:
        address = vetted_address(parts.hostname or "", port)
        kind = _PinnedTLS if tls else _Pinned
        connection = kind(parts.hostname or "", port, address, min(connect_timeout_s, timeout_s))
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        try:
            connection.connect()
            sock = connection.sock  # http.client drops it once the answer says close
            left = timeout_s - (time.monotonic() - started)
            if left <= 0:
                raise Refused("timeout", "no time left after connecting")
            sock.settimeout(left)
            connection.request(
                "POST",
                path,
                body,
                {
                    **headers,
                    "Content-Type": "application/json",
                    "User-Agent": USER_AGENT,
                    "Connection": "close",
                },
            )
            response = connection.getresponse()
            data = b""
            while len(data) <= MAX_ANSWER:
                left = timeout_s - (time.monotonic() - started)
                if left <= 0:
                    raise Refused("timeout", "the answer came too slowly")
                sock.settimeout(left)
                chunk = response.read1(MAX_ANSWER + 1 - len(data))
                if not chunk:
                    break
                data += chunk
            if len(data) > MAX_ANSWER:
                raise Refused("too_large", f"answer over {MAX_ANSWER} bytes")
            return Answer(response.status, data)
        except TimeoutError:
            raise Refused("timeout", f"no answer within {timeout_s:g} s") from None
        except (OSError, ValueError, http.client.HTTPException) as failure:
            raise Refused("connection", type(failure).__name__) from None
        finally:
            connection.close()
    finally:
        slots().release()
