"""Probes for orchestrators: liveness and readiness. Not part of API v1."""

from __future__ import annotations

import logging

from flask import Blueprint, Response, current_app

from service.domain.problems import Problem

health = Blueprint("health", __name__)
log = logging.getLogger(__name__)


@health.get("/healthz")
def healthz() -> Response:
    """The process answers (liveness): no dependency is checked."""
    return Response('{"status":"ok"}', mimetype="application/json")


@health.get("/readyz")
def readyz() -> Response:
    """Redis is reachable and the scripts are loaded (readiness). The answer
    says only whether: why not goes to the log, never to the caller (it can
    name hosts, ports, versions)."""
    store = current_app.extensions["ludotheque.matches"].store
    try:
        store.ready()
    except Exception:  # any failure means: send no traffic here
        log.warning("not ready", exc_info=True)
        retry = {"Retry-After": "1"}
        raise Problem(503, "store_unavailable", "not ready", headers=retry) from None
    return Response('{"status":"ready"}', mimetype="application/json")
