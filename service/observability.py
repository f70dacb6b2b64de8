"""Metrics (Prometheus) served, structured JSON logs and request ids.

The metrics themselves are defined in ``service.metrics`` (no Flask there,
so that every layer counts its own).

Metrics live in prometheus-client's default registry; under gunicorn with
several workers, set PROMETHEUS_MULTIPROC_DIR (``ludotheque serve`` and the
container do) so that ``/metrics`` adds up every worker process.
Logs are one JSON object per line; a request's lines carry its id, taken
from ``X-Request-ID`` when the client sends a sane one and echoed back.
Nothing here ever logs a header or a body, so tokens never reach the logs.

With LUDOTHEQUE_METRICS_BIND (``host:port``), ``/metrics`` leaves the API:
gunicorn's master serves the metrics on that address alone (``serve_metrics_on``),
so that the public port never shows request counts, routes and latencies,
and a scraper reaches them on an address the Ingress does not route.
"""

from __future__ import annotations

import logging
import os
import re
import time
from typing import Any

from flask import Blueprint, Flask, Response, current_app, g, has_request_context, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    generate_latest,
    multiprocess,
    start_http_server,
)
from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.orjson import OrjsonFormatter

from engines import GAMES
from service.metrics import REQUESTS

log = logging.getLogger("ludotheque.access")

SANE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")

metrics = Blueprint("metrics", __name__)


def collected(shared_dir: str | None) -> CollectorRegistry:
    """The registry to expose: every worker's, under gunicorn (``shared_dir``:
    PROMETHEUS_MULTIPROC_DIR, where they write their metrics)."""
    if not shared_dir:
        return REGISTRY
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, shared_dir)
    return registry


@metrics.get("/metrics")
def serve_metrics() -> Response:
    registry = collected(current_app.config.get("PROMETHEUS_MULTIPROC_DIR"))
    return Response(generate_latest(registry), mimetype=CONTENT_TYPE_LATEST)


def serve_metrics_on(bind: str, shared_dir: str | None) -> None:
    """Serve the metrics on ``bind`` (``host:port``, ``[::1]:9100``) from a
    thread of this process: gunicorn's master, which outlives its workers."""
    host, _, port = bind.rpartition(":")
    registry = collected(shared_dir)
    start_http_server(int(port), host.strip("[]") or "0.0.0.0", registry=registry)


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = g.get("request_id") if has_request_context() else None
        return True


class JsonLines(OrjsonFormatter):
    """python-json-logger's orjson lines (the time, level, logger, message and
    request id, then any exception, then the record's extra fields), laid
    out with less work: the access log writes one per request.

    A record whose message is a string (every line this service writes) is
    laid out here, in python-json-logger's keys, order and encoding; the
    time's text is made once per second it names. Any other record (a dict
    as its message) goes through python-json-logger itself."""

    FIELDS = ("asctime", "levelname", "name", "message", "request_id")

    def __init__(self) -> None:
        super().__init__(" ".join(f"%({field})s" for field in self.FIELDS))
        self.not_extra = frozenset(RESERVED_ATTRS).union(self.FIELDS)
        self.second: tuple[int, str] = (-1, "")  # a second, and its text

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        if datefmt:
            return super().formatTime(record, datefmt)
        second = int(record.created)
        if self.second[0] != second:
            text = time.strftime(self.default_time_format, self.converter(record.created))
            self.second = (second, text)
        return self.default_msec_format % (self.second[1], record.msecs)

    def format(self, record: logging.LogRecord) -> str:
        if isinstance(record.msg, dict):
            return super().format(record)
        record.message = record.getMessage()
        record.asctime = self.formatTime(record)
        fields = record.__dict__
        line: dict[Any, Any] = {field: fields.get(field) for field in self.FIELDS}
        if record.exc_info:
            line["exc_info"] = self.formatException(record.exc_info)
        if not line.get("exc_info") and record.exc_text:
            line["exc_info"] = record.exc_text
        if record.stack_info:
            line["stack_info"] = self.formatStack(record.stack_info)
        for key, value in fields.items():
            if key not in self.not_extra and not (isinstance(key, str) and key[:1] == "_"):
                line[key] = value
        return self.serialize_log_record(self.process_log_record(line))


def configure_logging(level: str = "INFO") -> None:
    """JSON lines on stderr for every logger, each with the request id
    (written by orjson: the access log writes one per request)."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonLines())
    handler.addFilter(RequestIdFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # What no line shows, a record need not find (the logging HOWTO's
    # "Optimization"): its thread, its multiprocessing name, the caller's
    # file and line (a walk up the stack per record). The process id stays:
    # gunicorn's own lines show it.
    logging.logThreads = False
    logging.logMultiprocessing = False
    logging._srcfile = None


def new_request_id() -> str:
    """A random request id: ``uuid.uuid4().hex``'s 32 hex digits (version 4,
    RFC 4122 variant), without building a UUID object per request."""
    number = int.from_bytes(os.urandom(16), "big")
    number = (number & ~(0xF000 << 64) | (4 << 76)) & ~(0xC000 << 48) | (0x8000 << 48)
    return f"{number:032x}"


def init_observability(app: Flask) -> None:
    if not app.config.get("METRICS_BIND"):  # else served apart (serve_metrics_on)
        app.register_blueprint(metrics)

    # The histogram's child for each set of labels met, bound once (``labels``
    # takes a lock and builds the label values on every call).
    observed: dict[tuple[str, str, int, str], Any] = {}

    @app.before_request
    def start() -> None:
        g.started = time.perf_counter()
        given = request.environ.get("HTTP_X_REQUEST_ID", "")
        g.request_id = given if SANE_REQUEST_ID.match(given) else new_request_id()

    @app.after_request
    def finish(response: Response) -> Response:
        finished = time.perf_counter()
        response.headers["X-Request-ID"] = g.get("request_id", "")
        elapsed = finished - g.get("started", finished)
        rule = request.url_rule
        route = rule.rule if rule else "unmatched"
        method = request.method
        blueprint = request.blueprint
        game = blueprint if blueprint in GAMES else ""
        status = response.status_code
        labels = (route, method, status, game)
        histogram = observed.get(labels)
        if histogram is None:
            histogram = observed[labels] = REQUESTS.labels(route, method, str(status), game)
        histogram.observe(elapsed)
        log.info(
            "request",
            extra={
                "method": method,
                "route": route,
                "status": status,
                "game": game,
                "ms": round(elapsed * 1000, 2),
            },
        )
        return response
