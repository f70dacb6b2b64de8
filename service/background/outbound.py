"""Safe outbound calls: the only way Ludothèque calls another server.

Webhook receivers and HTTP bots are URLs strangers give us, so every call
is checked where it matters, at delivery time:

- https only, unless ``LUDOTHEQUE_OUTBOUND_ALLOW`` lists ``http``;
- the name is resolved once, every address it resolves to must be public
  unless it lies in a network the allow list names, and the connection
  goes to that very address (a name that rebinds between the check and the
  connection cannot slip through). What is not public is said in one
  table, ``RANGES``: every special-purpose range of IANA's registries and
  everything outside IPv6's global unicast space, each with what it is. An
  address that carries another one (IPv4-mapped, NAT64, 6to4, Teredo) is
  judged by the address it carries;
- one deadline for the whole call: resolving, connecting, the TLS
  handshake, sending, the status line, the headers and the body. Every
  blocking socket operation waits at most the time left, so an answer that
  trickles in one byte at a time ends at the deadline, socket closed (a
  timeout per read would let it run on for as long as each byte came in
  time). Calls are made by ``ludotheque worker`` processes, in threads
  (not gevent), where CPython bounds each socket and TLS operation by its
  timeout as a whole. An answer size limit; no redirect followed (a 3xx
  is a failure);
- at most ``LUDOTHEQUE_OUTBOUND_CONCURRENCY`` calls at once per process
  (each match has at most one call in flight: its deliveries are serial
  and its bot turns are leased one at a time).

Why a call failed (``Refused.reason`` and its detail) is for the log only:
what a match shows says that a call failed, never why, so that nobody
learns through it what answers, or what a name resolves to, on the
network the server sees (``PUBLIC_REASON``).

``LUDOTHEQUE_OUTBOUND_ALLOW``: comma-separated; ``http`` allows plain http,
any other item is an address or network (``127.0.0.0/8``, ``10.1.2.3``)
allowed although internal. Empty by default. The tests allow
``http,127.0.0.0/8,::1``. It is read with every other setting when a
process starts (``service.settings``: a malformed value stops the process,
naming it), and handed to this module with the cap on calls in flight by
the app factory (``configure``).
"""

from __future__ import annotations

import http.client
import ipaddress
import logging
import math
import socket
import ssl
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as NotYet
from dataclasses import dataclass
from typing import Any, NamedTuple
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

DEFAULT_CONCURRENCY = 128  # the worker's HTTP bot turns and webhook calls, with room
MAX_ANSWER = 64 * 1024  # bytes read from an answer, at most
MAX_URL = 2048
USER_AGENT = "Ludotheque/1 (+docs/clients/webhooks.md)"
PUBLIC_REASON = "call_failed"  # all that a match's events say of a failed call

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class Refused(Exception):
    """The call was not made, or failed: ``reason`` is stable and short."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes


# -- what may be called -----------------------------------------------------------
class Range(NamedTuple):
    """A range that is not the open internet, what it is, and, for one that
    embeds another address, how to read the address it carries."""

    network: Network
    meaning: str
    carries: Callable[[Any], tuple[Address, ...]] | None = None


def _net(text: str) -> Network:
    return ipaddress.ip_network(text)


def _nat64(address: ipaddress.IPv6Address) -> tuple[Address, ...]:
    return (ipaddress.IPv4Address(int(address) & 0xFFFFFFFF),)  # RFC 6052: the last 32 bits


_OUTSIDE = "outside the global unicast space 2000::/3 (reserved by the IETF)"

# The one table of what is not public (IANA's IPv4 and IPv6 special-purpose
# registries, multicast, and IPv6 outside 2000::/3). An address is judged by
# the most specific range holding it; one in no range is public. The few
# globally reachable assignments inside a refused range (anycast PCP and
# TURN in 192.0.0.0/24 and 2001::/23, AMT, AS112, ORCHIDv2) are no web
# servers, and stay refused with it.
RANGES: tuple[Range, ...] = (
    Range(_net("0.0.0.0/8"), "this network"),
    Range(_net("10.0.0.0/8"), "private"),
    Range(_net("100.64.0.0/10"), "shared address space (carrier-grade NAT)"),
    Range(_net("127.0.0.0/8"), "loopback"),
    Range(_net("169.254.0.0/16"), "link-local (the cloud metadata address among them)"),
    Range(_net("172.16.0.0/12"), "private"),
    Range(_net("192.0.0.0/24"), "IETF protocol assignments"),
    Range(_net("192.0.2.0/24"), "documentation (TEST-NET-1)"),
    Range(_net("192.88.99.0/24"), "6to4 relay anycast (deprecated)"),
    Range(_net("192.168.0.0/16"), "private"),
    Range(_net("198.18.0.0/15"), "benchmarking"),
    Range(_net("198.51.100.0/24"), "documentation (TEST-NET-2)"),
    Range(_net("203.0.113.0/24"), "documentation (TEST-NET-3)"),
    Range(_net("224.0.0.0/4"), "multicast"),
    Range(_net("240.0.0.0/4"), "reserved"),
    Range(_net("255.255.255.255/32"), "limited broadcast"),
    Range(_net("::/3"), _OUTSIDE),
    Range(_net("4000::/2"), _OUTSIDE),
    Range(_net("8000::/1"), _OUTSIDE),
    Range(_net("::/128"), "unspecified"),
    Range(_net("::1/128"), "loopback"),
    Range(_net("::ffff:0:0/96"), "IPv4-mapped", lambda a: (a.ipv4_mapped,)),
    Range(_net("64:ff9b::/96"), "NAT64", _nat64),
    # where the IPv4 address lies in it depends on the operator's prefix length
    Range(_net("64:ff9b:1::/48"), "local-use NAT64 (a network's own translator)"),
    Range(_net("100::/64"), "discard-only"),
    Range(_net("2001::/23"), "IETF protocol assignments"),
    Range(_net("2001::/32"), "Teredo", lambda a: a.teredo),  # (server, client)
    Range(_net("2001:2::/48"), "benchmarking"),
    Range(_net("2001:db8::/32"), "documentation"),
    Range(_net("2002::/16"), "6to4", lambda a: (a.sixtofour,)),
    Range(_net("3fff::/20"), "documentation"),
    Range(_net("5f00::/16"), "segment routing (SRv6) identifiers"),
    Range(_net("fc00::/7"), "unique local"),
    Range(_net("fe80::/10"), "link-local"),
    Range(_net("fec0::/10"), "site-local (deprecated)"),
    Range(_net("ff00::/8"), "multicast"),
)


def range_of(address: Address) -> Range | None:
    """The most specific range of ``RANGES`` holding ``address`` (None: public)."""
    holding = [r for r in RANGES if address in r.network]
    return max(holding, key=lambda r: r.network.prefixlen, default=None)


def refusal(address: Address, allowed: tuple[Network, ...] = ()) -> str | None:
    """Why ``address`` may not be called (None: it may): what it is, or what
    the address it carries is. ``allowed``: networks called although internal."""
    if any(address in network for network in allowed):
        return None
    found = range_of(address)
    if found is None:
        return None
    if found.carries is None:
        return found.meaning
    for carried in found.carries(address):
        why = refusal(carried, allowed)
        if why is not None:
            return f"{found.meaning} carrying {carried}, {why}"
    return None


# -- settings -----------------------------------------------------------------------
class Allowed(NamedTuple):
    """What calls may reach beyond https URLs and public addresses."""

    http: bool = False  # plain http URLs
    networks: tuple[Network, ...] = ()  # networks called although internal


def parse_allow(value: str) -> Allowed:
    """``LUDOTHEQUE_OUTBOUND_ALLOW``'s allowances; ValueError saying which
    item is malformed (``service.settings`` names the variable)."""
    http_allowed, networks = False, []
    for item in (i.strip() for i in value.split(",")):
        if item == "http":
            http_allowed = True
        elif item:
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                raise ValueError(
                    f"{item!r} is neither http nor an address or network "
                    "(e.g. http,10.0.0.0/8,fd00::/8)"
                ) from None
    return Allowed(http_allowed, tuple(networks))


# This process's, from its settings (``configure``); until then https and
# public addresses only.
allowed = Allowed()
concurrency = DEFAULT_CONCURRENCY


def configure(allow: Allowed, calls: int) -> None:
    """Set this process's allowances and its cap on calls in flight (the
    cap takes effect if set before the first call, as the app factory does)."""
    global allowed, concurrency
    allowed, concurrency = allow, calls


def check_url(url: str) -> None:
    """Refuse a URL that can never be called (at creation): its form and scheme."""
    if len(url) > MAX_URL:
        raise Refused("bad_url", "too long")
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or (parts.scheme == "http" and not allowed.http):
        raise Refused("bad_url", "https URLs only")
    if not parts.hostname or parts.username or parts.password:
        raise Refused("bad_url", "a host and no credentials")
    try:
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        raise Refused("bad_url", "bad port") from None


def check_literal(url: str) -> None:
    """Refuse a URL whose host is an address the rules never call (at
    creation; a name is judged by what it resolves to, at each call)."""
    host = (urlsplit(url).hostname or "").split("%")[0].rstrip(".")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        try:  # what resolvers read as IPv4 too: 127.1, 2130706433, 0x7f000001, 0177.0.0.1
            address = ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return  # a name
    why = refusal(address, allowed.networks)
    if why is not None:
        raise Refused("internal_address", f"{address}: {why}")


def vetted_address(host: str, port: int, deadline: float = math.inf) -> tuple[int, str]:
    """The (family, address) to connect to: every address ``host`` resolves
    to (by ``deadline``, a ``time.monotonic()``) must be allowed, so a name
    with one internal address is refused."""
    infos = resolved(host, port, deadline)
    if not infos:
        raise Refused("dns", "no address")
    for info in infos:
        address = ipaddress.ip_address(info[4][0].split("%")[0])
        why = refusal(address, allowed.networks)
        if why is not None:
            raise Refused("internal_address", f"{host} resolves to {address}: {why}")
    return infos[0][0], infos[0][4][0]


def resolved(host: str, port: int, deadline: float) -> list[Any]:
    """``getaddrinfo`` within the deadline: a name server that is slow to
    answer (its owner's choice) cannot hold the call past it; the lookup
    ends on its own in the background."""
    try:
        left = None if deadline == math.inf else _left(deadline)
    except TimeoutError:  # a slot came only at the last moment
        raise Refused("timeout", "no time left to resolve") from None
    lookup = _resolver().submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
    try:
        return lookup.result(timeout=left)
    except NotYet:
        raise Refused("timeout", f"resolving {host} took too long") from None
    except (OSError, UnicodeError) as failure:
        raise Refused("dns", str(failure)) from None


# -- one deadline for the whole call ------------------------------------------------
def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("the call's deadline passed")
    return left


class _Deadline:
    """Every blocking operation of this socket waits at most until
    ``deadline`` (a ``time.monotonic()``): each gets the time left as its
    timeout, however many reads the answer takes."""

    deadline = math.inf

    def _arm(self) -> None:
        if self.deadline != math.inf:
            self.settimeout(_left(self.deadline))  # type: ignore[attr-defined]

    def connect(self, address: Any) -> None:
        self._arm()
        super().connect(address)  # type: ignore[misc]

    def send(self, data: Any, flags: int = 0) -> int:
        self._arm()
        return super().send(data, flags)  # type: ignore[misc]

    def sendall(self, data: Any, flags: int = 0) -> None:
        self._arm()
        super().sendall(data, flags)  # type: ignore[misc]

    def recv(self, size: int = 1024, flags: int = 0) -> bytes:
        self._arm()
        return super().recv(size, flags)  # type: ignore[misc]

    def recv_into(self, buffer: Any, size: int = 0, flags: int = 0) -> int:
        self._arm()
        return super().recv_into(buffer, size, flags)  # type: ignore[misc]

    def do_handshake(self, *args: Any) -> None:
        self._arm()
        super().do_handshake(*args)  # type: ignore[misc]


class _DeadlineSocket(_Deadline, socket.socket):
    pass


class _DeadlineTLSSocket(_Deadline, ssl.SSLSocket):
    pass


class _Pinned(http.client.HTTPConnection):
    """Connects to the vetted address, whatever the name resolves to now,
    with a socket that keeps the call's deadline."""

    def __init__(
        self, host: str, port: int, address: tuple[int, str], deadline: float, connect_s: float
    ) -> None:
        super().__init__(host, port)
        self._address = address
        self._deadline = deadline
        self._connect_s = connect_s

    def connect(self) -> None:
        family, ip = self._address
        sock = _DeadlineSocket(family, socket.SOCK_STREAM)
        self.sock = sock
        sock.deadline = min(self._deadline, time.monotonic() + self._connect_s)
        sock.connect((ip, self.port))
        sock.deadline = self._deadline


class _PinnedTLS(_Pinned):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._context = ssl.create_default_context()
        self._context.sslsocket_class = _DeadlineTLSSocket

    def connect(self) -> None:
        super().connect()
        tls = self._context.wrap_socket(
            self.sock, server_hostname=self.host, do_handshake_on_connect=False
        )
        self.sock = tls
        tls.deadline = self._deadline
        tls.do_handshake()


_slots: threading.BoundedSemaphore | None = None
_lookups: ThreadPoolExecutor | None = None
_slots_lock = threading.Lock()


def slots() -> threading.BoundedSemaphore:
    """This process's cap on outbound calls in flight."""
    global _slots
    with _slots_lock:
        if _slots is None:
            _slots = threading.BoundedSemaphore(concurrency)
        return _slots


def _resolver() -> ThreadPoolExecutor:
    """Threads that only resolve names, one per call in flight at most."""
    global _lookups
    with _slots_lock:
        if _lookups is None:
            _lookups = ThreadPoolExecutor(concurrency, "outbound-dns")
        return _lookups


def post(
    url: str,
    body: bytes,
    headers: dict[str, str],
    timeout_s: float,
    connect_timeout_s: float = 2.0,
) -> Answer:
    """POST ``body`` to ``url`` under every rule above, within ``timeout_s``
    in all, from the call to the answer's last byte (the socket is closed
    then); raise Refused (``reason``: bad_url, dns, internal_address, busy,
    timeout, connection, too_large) when no complete answer came."""
    check_url(url)
    deadline = time.monotonic() + timeout_s
    parts = urlsplit(url)
    tls = parts.scheme == "https"
    port = parts.port or (443 if tls else 80)
    if not slots().acquire(timeout=timeout_s):
        raise Refused("busy", "too many outbound calls in flight")
    try:
        address = vetted_address(parts.hostname or "", port, deadline)
        kind = _PinnedTLS if tls else _Pinned
        connection = kind(parts.hostname or "", port, address, deadline, connect_timeout_s)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        response = None
        try:
            connection.connect()
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
            # the answer holds the socket once the connection handed it over
            if response is not None:
                response.close()
            connection.close()
    finally:
        slots().release()
