"""Who a client is, for every count kept per address.

One IPv6 client commonly holds a whole /64 (an ISP's smallest delegation,
SLAAC's privacy addresses rotate through it), so counting IPv6 per address
gave it 2^64 fresh quotas. Every count per address (request rate limits,
match creations and waiting matches, bot seats, followers) counts the
client's *key* instead:

- an IPv4 address: itself (``203.0.113.7``);
- an IPv6 address: its /64 (``2001:db8:1:2::/64``);
- an IPv4-mapped IPv6 address (``::ffff:203.0.113.7``, what a dual-stack
  socket reports for an IPv4 client): the IPv4 address it carries;
- anything else (no address at all, a proxy's garbage): as it is, stripped.

The key is taken once per request, where the client's address becomes
known (``ClientKeys``, after ``X-Forwarded-For`` has been read), so that
every counter gets the same one.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Callable, Iterable
from typing import Any

IPV6_PREFIX = 64


# Cached: parsing costs tens of µs on every request, and a server sees the
# same addresses again and again (a client rotating through addresses only
# pays for its own misses).
@functools.lru_cache(maxsize=8192)
def client_key(address: str) -> str:
    """The key a client at ``address`` is counted by (see above)."""
    text = address.strip()
    try:
        if ":" not in text:
            return str(ipaddress.IPv4Address(text))
        parsed = ipaddress.IPv6Address(text)
    except ValueError:
        return text
    if parsed.ipv4_mapped is not None:
        return str(parsed.ipv4_mapped)
    network = parsed.packed[: IPV6_PREFIX // 8] + bytes(16 - IPV6_PREFIX // 8)
    return f"{ipaddress.IPv6Address(network)}/{IPV6_PREFIX}"


class ClientKeys:
    """WSGI middleware: the app sees ``REMOTE_ADDR`` as the client's key.

    It sits inside ``ProxyFix`` (which has put the client's address from
    ``X-Forwarded-For`` there) and hands the app a copy of the environ, so
    that the server's own access log keeps the full address."""

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        address = environ.get("REMOTE_ADDR")
        if address:
            environ = {**environ, "REMOTE_ADDR": client_key(address)}
        return self.app(environ, start_response)
