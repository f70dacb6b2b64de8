"""The application factory: ``create_app(config) -> Flask``."""

from __future__ import annotations

import os
import types
import weakref
from collections.abc import Callable
from inspect import iscoroutinefunction
from typing import Any

import orjson
from flask import Flask
from flask.json.provider import JSONProvider
from werkzeug.middleware.proxy_fix import ProxyFix

from service.background import webhooks
from service.background.scheduler import BotLimits, Scheduler
from service.background.turns import ServerTurns, scheduling
from service.domain import lobby
from service.domain.commits import Settings
from service.domain.matches import Matches
from service.domain.signing import RecordKeys
from service.http.addresses import ClientKeys
from service.http.api import LudothequeApi, init_api
from service.http.caching import init_caching
from service.http.cors import init_cors
from service.http.docs import docs
from service.http.errors import register_error_handlers
from service.http.hardening import Routes, init_hardening
from service.http.health import health
from service.http.limits import init_limits, pending_counters
from service.http.play import play
from service.live.followers import Bounds
from service.live.following import Following, LiveSettings
from service.observability import init_observability
from service.store.matches import Store, connect, idempotency_key
from service.store.quotas import quotas_for


class OrjsonProvider(JSONProvider):
    """orjson for every JSON body: fast, and bounded nesting on input."""

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        return orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS).decode()

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        return orjson.loads(s)


class Ludotheque(Flask):
    """Flask, asking once per function whether it is a coroutine function.

    Flask asks (``ensure_sync``: ``inspect.iscoroutinefunction``, some 2 µs)
    on every call of a hook, a view and its wrappers, 16 times a request
    with this app's hooks; the answer for a function never changes.
    """

    url_map_class = Routes  # never a redirect naming the request's Host (service.http.hardening)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.is_async: weakref.WeakKeyDictionary[Callable, bool] = weakref.WeakKeyDictionary()

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        plain = getattr(func, "__func__", func)  # a view's method is bound anew each request
        if not isinstance(plain, types.FunctionType):
            return super().ensure_sync(func)
        is_async = self.is_async.get(plain)
        if is_async is None:
            is_async = self.is_async[plain] = iscoroutinefunction(func)
        return self.async_to_sync(func) if is_async else func


def _flag(value: str) -> bool:
    return value.strip().lower() in {"1", "true", "yes", "on"}


def _origins(value: str) -> list[str]:
    return [origin.strip() for origin in value.split(",") if origin.strip()]


# config key, environment variable, parser
ENVIRONMENT: list[tuple[str, str, Callable[[str], Any]]] = [
    ("REDIS_URL", "REDIS_URL", str),
    ("REDIS_CLUSTER", "REDIS_CLUSTER", _flag),
    ("REDIS_MIN_REPLICAS", "LUDOTHEQUE_REDIS_MIN_REPLICAS", int),
    ("REDIS_REPLICAS_TIMEOUT_MS", "LUDOTHEQUE_REDIS_REPLICAS_TIMEOUT_MS", int),
    ("FINISHED_TTL", "LUDOTHEQUE_FINISHED_TTL", int),
    ("IDLE_TTL", "LUDOTHEQUE_IDLE_TTL", int),
    ("IDEMPOTENCY_TTL", "LUDOTHEQUE_IDEMPOTENCY_TTL", int),
    ("MAX_CONTENT_LENGTH", "LUDOTHEQUE_MAX_BODY_BYTES", int),
    ("SSE_KEEPALIVE_S", "LUDOTHEQUE_SSE_KEEPALIVE_S", float),
    ("RATELIMIT_ENABLED", "LUDOTHEQUE_RATE_LIMITS", _flag),
    ("RATE_LIMIT_PER_ADDRESS", "LUDOTHEQUE_RATE_LIMIT_PER_ADDRESS", str),
    ("RATE_LIMIT_PER_TOKEN", "LUDOTHEQUE_RATE_LIMIT_PER_TOKEN", str),
    ("CORS_ORIGINS", "LUDOTHEQUE_CORS_ORIGINS", _origins),
    ("TRUSTED_PROXIES", "LUDOTHEQUE_TRUSTED_PROXIES", int),
    ("WAITING_TTL", "LUDOTHEQUE_WAITING_TTL", int),
    ("MAX_WAITING_PER_ADDRESS", "LUDOTHEQUE_MAX_WAITING_PER_ADDRESS", int),
    ("RATE_LIMIT_CREATE", "LUDOTHEQUE_RATE_LIMIT_CREATE", str),
    ("METRICS_BIND", "LUDOTHEQUE_METRICS_BIND", str),
    ("BOT_SEATS_PER_ADDRESS", "LUDOTHEQUE_BOT_SEATS_PER_ADDRESS", int),
    ("BOT_MATCH_BUDGET_S", "LUDOTHEQUE_BOT_MATCH_BUDGET_S", float),
    ("FOLLOWERS_PER_ADDRESS", "LUDOTHEQUE_FOLLOWERS_PER_ADDRESS", int),
    ("FOLLOWERS_PER_TOKEN", "LUDOTHEQUE_FOLLOWERS_PER_TOKEN", int),
    ("FOLLOWERS_PER_PROCESS", "LUDOTHEQUE_FOLLOWERS_PER_PROCESS", int),
    ("STREAM_MAX_S", "LUDOTHEQUE_STREAM_MAX_S", float),
    ("REDIS_MAX_CONNECTIONS", "LUDOTHEQUE_REDIS_MAX_CONNECTIONS", int),
    ("STREAM_TICKET_TTL", "LUDOTHEQUE_STREAM_TICKET_TTL", int),
    ("RECORD_KEY_FILE", "LUDOTHEQUE_RECORD_KEY_FILE", str),
]


def settings_from_env() -> dict[str, Any]:
    return {key: parse(os.environ[name]) for key, name, parse in ENVIRONMENT if name in os.environ}


DEFAULTS: dict[str, Any] = {
    "FINISHED_TTL": 24 * 3600,
    "IDLE_TTL": 7 * 24 * 3600,
    "IDEMPOTENCY_TTL": 24 * 3600,
    "MAX_CONTENT_LENGTH": 64 * 1024,
    "SSE_KEEPALIVE_S": 10,
    "FOLLOWERS_PER_ADDRESS": Bounds.per_address,
    "FOLLOWERS_PER_TOKEN": Bounds.per_token,
    "FOLLOWERS_PER_PROCESS": Bounds.per_process,
    "STREAM_MAX_S": Bounds.stream_max_s,
    "STREAM_TICKET_TTL": 60,
    # per process (and per node of a cluster): requests wait for a free one
    "REDIS_MAX_CONNECTIONS": 16,
    "REDIS_CLUSTER": False,
    "REDIS_MIN_REPLICAS": 0,
    "REDIS_REPLICAS_TIMEOUT_MS": 1000,
    "RATELIMIT_ENABLED": True,
    "RATE_LIMIT_PER_ADDRESS": "30000/minute",
    # a bot playing a full match at full speed with the recommended loop (docs/api.md)
    "RATE_LIMIT_PER_TOKEN": "15000/minute",
    "CORS_ORIGINS": [],
    "TRUSTED_PROXIES": 0,
    "WAITING_TTL": 3600,
    "MAX_WAITING_PER_ADDRESS": 20,
    "RATE_LIMIT_CREATE": "60/minute;600/hour",
    "METRICS_BIND": "",
    "BOT_SEATS_PER_ADDRESS": 12,
    "BOT_MATCH_BUDGET_S": 600.0,
    "API_TITLE": "Ludotheque API",  # ASCII: generated clients take their package name from it
    "API_VERSION": "v1",
    "OPENAPI_VERSION": "3.1.0",
    "OPENAPI_URL_PREFIX": "/",
    "OPENAPI_JSON_PATH": "openapi.json",
    "API_SPEC_OPTIONS": {
        "info": {
            "description": "An open game server for Dékal, Pacal, the Gaudí tile game and "
            "Ducale rummy. Errors are application/problem+json with a stable `code`. "
            "CORS: every answer allows any origin (`Access-Control-Allow-Origin: *`; no "
            "cookie is ever used) and exposes ETag, Location, Retry-After, X-Request-ID and "
            "Idempotent-Replayed; preflights are never rate-limited and may be cached "
            "(`Access-Control-Max-Age: 86400`).",
            "license": {"name": "MIT", "identifier": "MIT"},
        },
    },
}


def create_app(config: dict[str, Any] | None = None) -> Flask:
    """The Flask app; ``config`` overrides the environment, which overrides defaults."""
    app = Ludotheque(__name__)
    app.json = OrjsonProvider(app)
    app.config.update(DEFAULTS)
    app.config.update(settings_from_env())
    app.config.update(config or {})
    if not app.config.get("REDIS_URL"):
        raise RuntimeError("REDIS_URL is not set (`ludotheque serve` starts a Redis for you)")

    url, cluster = app.config["REDIS_URL"], app.config["REDIS_CLUSTER"]
    # Event streams and long polls wait on the process's push hub, not on Redis.
    client = connect(url, cluster, max_connections=app.config["REDIS_MAX_CONNECTIONS"])
    store = Store(
        client,
        app.config["IDEMPOTENCY_TTL"],
        min_replicas=app.config["REDIS_MIN_REPLICAS"],
        replicas_timeout_ms=app.config["REDIS_REPLICAS_TIMEOUT_MS"],
    )
    settings = Settings(
        finished_ttl=app.config["FINISHED_TTL"],
        idle_ttl=app.config["IDLE_TTL"],
        waiting_ttl=app.config["WAITING_TTL"],
    )
    limits = BotLimits(app.config["BOT_SEATS_PER_ADDRESS"], app.config["BOT_MATCH_BUDGET_S"])
    scheduler = Scheduler(store.client, limits)
    # What follows each commit, in this order: the turn the server owes
    # (even after a write the replicas did not confirm, which may survive),
    # the webhook's deliveries, the lobby's index.
    subscribers = [
        scheduling(store, scheduler),
        webhooks.delivering(store.client),
        lobby.listing(store),
    ]
    matches = Matches(
        store,
        settings,
        scheduler,
        idempotency_key,
        quotas=quotas_for(app, store),
        subscribers=subscribers,
        counters=pending_counters,  # the request's, which its match read or write counts
    )
    app.extensions["ludotheque.matches"] = matches
    app.extensions["ludotheque.turns"] = ServerTurns(matches, store, scheduler)
    live = LiveSettings(
        keepalive_s=app.config["SSE_KEEPALIVE_S"],
        bounds=Bounds(
            per_address=app.config["FOLLOWERS_PER_ADDRESS"],
            per_token=app.config["FOLLOWERS_PER_TOKEN"],
            per_process=app.config["FOLLOWERS_PER_PROCESS"],
            stream_max_s=app.config["STREAM_MAX_S"],
        ),
        ticket_ttl=app.config["STREAM_TICKET_TTL"],
    )
    app.extensions["ludotheque.live"] = Following(matches, store, live)

    # records' signing key: the deployment's file, else one kept in the store
    app.extensions["ludotheque.record_keys"] = RecordKeys(
        app.config.get("RECORD_KEY_FILE"), client
    )

    api = LudothequeApi(app)
    app.extensions["ludotheque.api"] = api
    register_error_handlers(app)
    init_api(api)
    app.register_blueprint(health)
    app.register_blueprint(docs)  # Swagger UI from the package's own files
    app.register_blueprint(play)  # the reference front end at /play
    init_hardening(app)
    init_observability(app)
    init_cors(app, app.config["CORS_ORIGINS"])  # before the limits: preflights are free
    init_limits(app, store.client)
    init_caching(app)
    # the client's key (an IPv6 client's /64) for every count per address
    app.wsgi_app = ClientKeys(app.wsgi_app)
    if app.config["TRUSTED_PROXIES"]:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=app.config["TRUSTED_PROXIES"])
    return app
