"""Rate limits per seat token and per client address, kept in Redis
(flask-limiter), so that every worker and every pod counts together.

Over a limit: 429 problem+json with Retry-After (the window's length, an
upper bound that costs no Redis call). Probes and metrics are exempt. When
the limiter's storage fails, requests pass (the store's own errors answer
503 anyway).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Flask, request
from flask_limiter import ApplicationLimit, Limiter, RateLimitExceeded
from flask_limiter.util import get_remote_address

from service.auth import token_hash

EXEMPT_PATHS = {"/healthz", "/readyz", "/metrics"}


def _token_key() -> str:
    header = request.headers.get("Authorization", "")
    return token_hash(header.partition(" ")[2].strip())


def _no_token() -> bool:
    return not request.headers.get("Authorization")


def storage_uri(redis_url: str, cluster: bool) -> str:
    if not cluster:
        return redis_url
    return f"redis+cluster://{urlsplit(redis_url).netloc}"


def init_limits(app: Flask) -> Limiter:
    config = app.config
    exempt = lambda: request.path in EXEMPT_PATHS  # noqa: E731
    limiter = Limiter(
        key_func=get_remote_address,
        application_limits=[
            ApplicationLimit(
                config["RATE_LIMIT_PER_ADDRESS"],
                key_function=get_remote_address,
                scope="address",
                exempt_when=exempt,
            ),
            ApplicationLimit(
                config["RATE_LIMIT_PER_TOKEN"],
                key_function=_token_key,
                scope="token",
                exempt_when=lambda: exempt() or _no_token(),
            ),
        ],
        storage_uri=storage_uri(config["REDIS_URL"], config["REDIS_CLUSTER"]),
        storage_options={"socket_timeout": 2, "socket_connect_timeout": 2},
        # One round trip per limit; the headers would cost one more per request.
        strategy="fixed-window",
        headers_enabled=False,
        swallow_errors=True,
        key_prefix="ludotheque",
        enabled=config["RATELIMIT_ENABLED"],
    )
    limiter.init_app(app)
    return limiter


def retry_after(error: RateLimitExceeded) -> str:
    return str(max(1, int(error.limit.limit.get_expiry())))
