"""The application factory: ``create_app(config) -> Flask``."""

from __future__ import annotations

import time
import types
import weakref
from collections.abc import Callable
from inspect import iscoroutinefunction
from typing import Any

import orjson
from flask import Flask
from flask.json.provider import JSONProvider
from werkzeug.middleware.proxy_fix import ProxyFix

from service.background import outbound, webhooks
from service.background.archiver import queueing
from service.background.matchmaker import equal_strength
from service.background.scheduler import BotLimits, Scheduler
from service.background.turns import ServerTurns, scheduling
from service.domain import signing
from service.domain.commits import Settings as MatchSettings
from service.domain.matches import Matches
from service.http.addresses import ClientKeys
from service.http.api import LudothequeApi, init_api
from service.http.caching import init_caching
from service.http.cors import init_cors
from service.http.credentials import AppLimits, init_credentials, init_refusals
from service.http.docs import docs
from service.http.errors import register_error_handlers
from service.http.hardening import Routes, init_hardening
from service.http.health import health
from service.http.limits import init_limits, pending_counters
from service.http.play import play
from service.http.player_events import player_events_blueprint
from service.http.queue import presets_of, queue_blueprint
from service.live.followers import Bounds
from service.live.following import Following, LiveSettings
from service.live.hub import Hub
from service.observability import init_observability
from service.settings import Malformed, Settings, load
from service.settings.presets import presets_in
from service.store import lobby, player_matches, renamed_records
from service.store.archive import Archive
from service.store.archiving import ArchiveQueue
from service.store.database import engine_for
from service.store.matches import Store, connect, idempotency_key
from service.store.player_events import PlayerEvents
from service.store.players import Players
from service.store.queue import IDLE_S, Queue
from service.store.quotas import Quotas
from service.store.ratings import Ratings, applying
from service.store.record_keys import RecordKeys


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


# the app's own config, beside its settings (service.settings)
DEFAULTS: dict[str, Any] = {
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


def quotas_for(
    app: Flask, store: Store, set_for: Callable[[str], dict[str, Any]]
) -> Quotas | None:
    """The app's quotas: off with the rate limits (LUDOTHEQUE_RATE_LIMITS)."""
    if not app.config["RATELIMIT_ENABLED"]:
        return None
    return Quotas.of(
        store.client,
        app.config["MAX_WAITING_PER_ADDRESS"],
        app.config["WAITING_TTL"],
        app.config["RATE_LIMIT_CREATE"],
        set_for,
    )


def no_limits_set(_client_key: str) -> dict[str, Any]:
    return {}


def archive_for(database_url: str | None) -> Archive | None:
    """The archive in the database at ``database_url`` (None: no archive).
    Not touched now: a process starts while the database is down (matches
    wait in Redis meanwhile), and the archiver checks the schema is
    migrated before it writes (``ludotheque migrate``)."""
    if not database_url:
        return None
    return Archive(engine_for(database_url))


def queue_presets(listed: str | dict[str, Any] | None) -> Any:
    """The queue's presets from the setting (JSON text; a dict in a test's
    config; None: the defaults)."""
    if isinstance(listed, dict):
        listed = orjson.dumps(listed).decode()
    try:
        return presets_of(None if listed is None else presets_in(listed))
    except ValueError as why:
        raise Malformed([f"LUDOTHEQUE_QUEUE_PRESETS: {why}"]) from None


def create_app(config: dict[str, Any] | None = None, settings: Settings | None = None) -> Flask:
    """The Flask app, configured by ``settings`` (else the environment's, read
    now: ``service.settings.Malformed`` names what is malformed), over which
    ``config`` sets any of the app's config keys."""
    app = Ludotheque(__name__)
    app.json = OrjsonProvider(app)
    app.config.update(DEFAULTS)
    app.config.update((settings or load()).flask_config())
    app.config.update(config or {})
    if not app.config.get("REDIS_URL"):
        raise RuntimeError("REDIS_URL is not set (`ludotheque serve` starts a Redis for you)")
    # this process's outbound calls (creations check their URLs, workers call them)
    outbound.configure(app.config["OUTBOUND_ALLOW"], app.config["OUTBOUND_CONCURRENCY"])

    url, cluster = app.config["REDIS_URL"], app.config["REDIS_CLUSTER"]
    # Event streams and long polls wait on the process's push hub, not on Redis.
    client = connect(url, cluster, max_connections=app.config["REDIS_MAX_CONNECTIONS"])
    store = Store(
        client,
        app.config["IDEMPOTENCY_TTL"],
        min_replicas=app.config["REDIS_MIN_REPLICAS"],
        replicas_timeout_ms=app.config["REDIS_REPLICAS_TIMEOUT_MS"],
    )
    # the archive of finished matches: none without a database
    archive = archive_for(app.config.get("DATABASE_URL"))
    # players, apps and their tokens live beside it: none without a database
    players = (
        None
        if archive is None
        else Players(archive.engine, store.client, app.config["PLAYER_TOKEN_TTL"])
    )
    set_for = no_limits_set if players is None else AppLimits(players).of
    archive_queue = ArchiveQueue(store.client)
    match_settings = MatchSettings(
        finished_ttl=app.config["FINISHED_TTL"],
        idle_ttl=app.config["IDLE_TTL"],
        waiting_ttl=app.config["WAITING_TTL"],
    )
    limits = BotLimits(
        app.config["BOT_SEATS_PER_ADDRESS"], app.config["BOT_MATCH_BUDGET_S"], set_for
    )
    scheduler = Scheduler(store.client, limits)
    # What follows each commit, in this order: this process's followers,
    # woken at once (no trip round Redis; it cannot fail), the turn the
    # server owes (even after a write the replicas did not confirm, which
    # may survive), the webhook's deliveries, the lobby's index.
    hub = Hub(store)
    subscribers = [
        hub.committed,
        scheduling(store, scheduler),
        webhooks.delivering(store.client),
        lobby.listing(store),
    ]
    if archive is not None:
        subscribers.append(queueing(archive_queue))
    # each player's live matches (``GET /v1/players/me/matches``): an index
    # that outlives every match it lists
    index_ttl = 2 * max(match_settings.idle_ttl, match_settings.waiting_ttl)
    app.extensions["ludotheque.player_matches_ttl"] = index_ttl
    if players is not None:
        subscribers.append(player_matches.indexing(store, index_ttl))
    # ranked play's ratings (issue 37): computed in the write that ends a rated
    # match, applied to Redis after it and to SQL with its archiving
    ratings = None
    if archive is not None:
        ratings = Ratings(archive.engine, store.client, app.config["LEADERBOARD_MIN_MATCHES"])
        archive.ratings = ratings
        subscribers.append(applying(ratings))
    app.extensions["ludotheque.ratings"] = ratings
    matches = Matches(
        store,
        match_settings,
        scheduler,
        idempotency_key,
        quotas=quotas_for(app, store, set_for),
        subscribers=subscribers,
        counters=pending_counters,  # the request's, which its match read or write counts
        archive=archive,
        # queued before the write that ends a match, so that no end goes unarchived
        finishing=None
        if archive is None
        else lambda match_id: archive_queue.expect(match_id, time.time()),
        ratings=ratings,
    )
    app.extensions["ludotheque.archive"] = archive
    app.extensions["ludotheque.players"] = players
    app.extensions["ludotheque.archive_queue"] = archive_queue
    app.extensions["ludotheque.matches"] = matches
    app.extensions["ludotheque.turns"] = ServerTurns(matches, store, scheduler)
    live = LiveSettings(
        keepalive_s=app.config["SSE_KEEPALIVE_S"],
        bounds=Bounds(
            per_address=app.config["FOLLOWERS_PER_ADDRESS"],
            per_token=app.config["FOLLOWERS_PER_TOKEN"],
            per_process=app.config["FOLLOWERS_PER_PROCESS"],
            stream_max_s=app.config["STREAM_MAX_S"],
            set_for=set_for,
        ),
        ticket_ttl=app.config["STREAM_TICKET_TTL"],
    )
    app.extensions["ludotheque.live"] = Following(matches, store, live, hub)

    # records' signing key: the deployment's file, else one kept in the store
    record_keys = app.extensions["ludotheque.record_keys"] = RecordKeys(
        app.config.get("RECORD_KEY_FILE"), client
    )
    # records changed since signed (a deleted player's name): every process drops its copy
    app.extensions["ludotheque.renamed_records"] = renamed_records.Renamed(client)
    if archive is not None:  # a deleted player's name out of a record: signed again
        archive.signer = lambda record: signing.sign(record, record_keys.get())

    api = LudothequeApi(app)
    app.extensions["ludotheque.api"] = api
    register_error_handlers(app)
    # the ranked queue (issue 37): its tickets and presets; its matchmaker runs
    # in `ludotheque worker`, each player's strength from "ludotheque.strength"
    app.extensions["ludotheque.queue"] = Queue(client, app.config.get("QUEUE_IDLE_S", IDLE_S))
    app.extensions["ludotheque.queue_presets"] = queue_presets(app.config.get("QUEUE_PRESETS"))
    app.extensions.setdefault(
        "ludotheque.strength", equal_strength if ratings is None else ratings.strengths
    )
    api.register_blueprint(queue_blueprint())  # before init_api, which completes every operation
    # each player's own events (issue 37): tickets matched or expired, ratings
    app.extensions["ludotheque.player_events"] = PlayerEvents(client)
    api.register_blueprint(player_events_blueprint())
    init_api(api)
    app.register_blueprint(health)
    app.register_blueprint(docs)  # Swagger UI from the package's own files
    app.register_blueprint(play)  # the reference front end at /play
    init_hardening(app)
    init_observability(app)
    init_cors(app, app.config["CORS_ORIGINS"])  # before the limits: preflights are free
    init_credentials(app, players)  # before the limits: an app's requests count as its own
    init_limits(app, store.client, set_for)
    init_refusals(app)
    init_caching(app)
    # the client's key (an IPv6 client's /64) for every count per address
    app.wsgi_app = ClientKeys(app.wsgi_app)
    if app.config["TRUSTED_PROXIES"]:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=app.config["TRUSTED_PROXIES"])
    return app
