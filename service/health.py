"""Probes for orchestrators: liveness and readiness. Not part of API v1."""

from __future__ import annotations

from flask import Blueprint, Response, current_app

from service.errors import Problem

health = Blueprint("health", __name__)


@health.get("/healthz")
def healthz() -> Response:
    """The process answers (liveness): no dependency is checked."""
    return Response('{"status":"ok"}', mimetype="application/json")


@health.get("/readyz")
def readyz() -> Response:
    """Redis is reachable and the scripts are loaded (readiness)."""
    store = current_app.extensions["ludotheque.matches"].store
    try:
        store.ready()
    except Exception as unavailable:  # any failure means: send no traffic here
        raise Problem(
            503, "store_unavailable", f"not ready: {unavailable}", headers={"Retry-After": "1"}
        ) from None
    return Response('{"status":"ready"}', mimetype="application/json")
