"""The application factory: ``create_app(config) -> Flask``."""

from __future__ import annotations

import os
from typing import Any

import orjson
from flask import Flask
from flask.json.provider import JSONProvider

from service.api import LudothequeApi, init_api
from service.errors import register_error_handlers
from service.health import health
from service.matches import Matches, Settings
from service.store import Store, connect


class OrjsonProvider(JSONProvider):
    """orjson for every JSON body: fast, and bounded nesting on input."""

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        return orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS).decode()

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        return orjson.loads(s)


def settings_from_env() -> dict[str, Any]:
    env = os.environ
    config: dict[str, Any] = {}
    if "REDIS_URL" in env:
        config["REDIS_URL"] = env["REDIS_URL"]
    for key, name in [
        ("FINISHED_TTL", "LUDOTHEQUE_FINISHED_TTL"),
        ("IDLE_TTL", "LUDOTHEQUE_IDLE_TTL"),
        ("IDEMPOTENCY_TTL", "LUDOTHEQUE_IDEMPOTENCY_TTL"),
        ("MAX_CONTENT_LENGTH", "LUDOTHEQUE_MAX_BODY_BYTES"),
        ("SSE_KEEPALIVE_S", "LUDOTHEQUE_SSE_KEEPALIVE_S"),
    ]:
        if name in env:
            config[key] = int(env[name])
    return config


DEFAULTS: dict[str, Any] = {
    "FINISHED_TTL": 24 * 3600,
    "IDLE_TTL": 7 * 24 * 3600,
    "IDEMPOTENCY_TTL": 24 * 3600,
    "MAX_CONTENT_LENGTH": 64 * 1024,
    "SSE_KEEPALIVE_S": 10,
    "MAX_WAITING_READS": 5000,
    "API_TITLE": "Ludothèque",
    "API_VERSION": "v1",
    "OPENAPI_VERSION": "3.1.0",
    "OPENAPI_URL_PREFIX": "/",
    "OPENAPI_JSON_PATH": "openapi.json",
    "OPENAPI_SWAGGER_UI_PATH": "/docs",
    "OPENAPI_SWAGGER_UI_URL": "https://cdn.jsdelivr.net/npm/swagger-ui-dist/",
    "API_SPEC_OPTIONS": {
        "info": {
            "description": "An open game server for Dékal, Pacal, the Gaudí tile game and "
            "Ducale rummy. Errors are application/problem+json with a stable `code`.",
            "license": {"name": "MIT", "identifier": "MIT"},
        },
    },
}


def create_app(config: dict[str, Any] | None = None) -> Flask:
    """The Flask app; ``config`` overrides the environment, which overrides defaults."""
    app = Flask(__name__)
    app.json = OrjsonProvider(app)
    app.config.update(DEFAULTS)
    app.config.update(settings_from_env())
    app.config.update(config or {})
    if not app.config.get("REDIS_URL"):
        raise RuntimeError("REDIS_URL is not set (`ludotheque serve` starts a Redis for you)")

    url = app.config["REDIS_URL"]
    # Each open event stream or long poll holds one connection while it waits.
    blocking = connect(url, socket_timeout=60, max_connections=app.config["MAX_WAITING_READS"])
    store = Store(connect(url), app.config["IDEMPOTENCY_TTL"], blocking=blocking)
    settings = Settings(
        finished_ttl=app.config["FINISHED_TTL"],
        idle_ttl=app.config["IDLE_TTL"],
        keepalive_s=app.config["SSE_KEEPALIVE_S"],
    )
    app.extensions["ludotheque.matches"] = Matches(store, settings)

    api = LudothequeApi(app)
    app.extensions["ludotheque.api"] = api
    register_error_handlers(app)
    init_api(api)
    app.register_blueprint(health)
    return app
