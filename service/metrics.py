"""The service's own metrics (Prometheus), defined once for every layer.

Nothing here knows Flask: the domain counts its actions and lost races,
the worker its bots' thinking, the live layer its open streams, and the
HTTP layer (``service.observability``) its requests. Where they are served
from, and how several worker processes add up: ``service.observability``.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

REQUESTS = Histogram(
    "ludotheque_request_seconds",
    "HTTP requests by route, method, status and game, with their latency",
    ["route", "method", "status", "game"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10),
)
ACTIONS = Counter("ludotheque_actions_total", "Actions applied", ["game", "by"])
CAS_RETRIES = Counter(
    "ludotheque_cas_retries_total", "Writes re-evaluated after losing a race", ["game"]
)
BOT_MOVE = Histogram(
    "ludotheque_bot_move_seconds",
    "Time a server-side bot took to choose a move",
    ["game", "policy"],
    buckets=(0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10),
)
OPEN_STREAMS = Gauge(
    "ludotheque_open_streams", "Event streams open now", ["game"], multiprocess_mode="livesum"
)
