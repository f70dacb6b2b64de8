"""Player tokens and app keys: resolved once per request, here.

A request whose bearer is an ``ldq_player_`` token or an ``ldq_app_`` key
is resolved first (one Redis round trip: ``service.store.players``), before
anything else reads the request. From then on:

- its bearer is the *identity* the token stands for
  (``service.domain.tokens``): a player's holds every seat the player
  holds, on every device; an app's holds no seat. So every check made on a
  seat token (who acts, follows, leaves; idempotency; the per-token limit)
  is made the same way on a player;
- its client key, which every count kept per address counts, is its app's
  (``app:<id>``) when the token is an app's key or a token of one of its
  players: an app that calls from its own servers, for all its users, has
  its own quotas (``ludotheque apps limits``), never its address's.

An unknown, revoked or expired token is refused with 401 ``invalid_token``,
after the rate limits have counted the request (a client spraying made-up
tokens pays for each). Seat tokens, and requests without a token, are left
as they are.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from flask import Flask, current_app, g, request

from service.domain import tokens as auth
from service.domain.problems import Problem
from service.http.caching import request_header
from service.store.players import Credential, Players, TokenCache

APP_KEY = "app:"  # a client key that is an app's, not an address
LIMITS_TTL_S = 5.0  # how long a process trusts an app's quotas it has read


def unknown_token() -> Problem:
    return Problem(
        401,
        "invalid_token",
        "this token is unknown, revoked or expired",
        headers={"WWW-Authenticate": 'Bearer realm="ludotheque", error="invalid_token"'},
    )


def credential() -> Credential | None:
    """The player or app the current request speaks for (None: a seat
    token, or no token)."""
    return g.get("credential")


def required_credential(kind: str | None = None) -> Credential:
    """The request's player token (``kind="player"``) or app key
    (``"app"``), or either; 401 without one, 403 with the other kind."""
    found = credential()
    if found is None:
        what = {"player": "a player token", "app": "an app key"}.get(
            kind or "", "a player token or an app key"
        )
        raise Problem(
            401,
            "token_required",
            f"use 'Authorization: Bearer <{what}>'",
            headers={"WWW-Authenticate": 'Bearer realm="ludotheque"'},
        )
    if kind is not None and found.kind != kind:
        raise Problem(403, "wrong_token_kind", f"this operation takes a {kind} token")
    return found


class AppLimits:
    """Each app's quotas as this process last read them (at most
    ``LIMITS_TTL_S`` ago): a change is seen within seconds, and a request
    pays no round trip for them."""

    def __init__(self, players: Players) -> None:
        self.players = players
        self.read: dict[str, tuple[float, dict[str, Any]]] = {}

    def of(self, client_key: str) -> dict[str, Any]:
        """The quotas set for the app whose client key is ``client_key``
        ({}: an address, or an app that set none)."""
        if not client_key.startswith(APP_KEY):
            return {}
        app_id = client_key[len(APP_KEY) :]
        now = time.monotonic()
        kept = self.read.get(app_id)
        if kept is None or now - kept[0] > LIMITS_TTL_S:
            if len(self.read) > 10_000:
                self.read.clear()
            kept = self.read[app_id] = (now, self.players.app_limits(app_id))
        return kept[1]


def as_identity(token: str) -> tuple[str, str | None]:
    """``token`` as the request's bearer would stand for it, with the hash
    of the player token or app key it was (None for a seat token, taken as
    it is): for tokens a body carries, as ``POST /v1/stream-tickets`` takes
    them. 401 for an unknown player token or app key, 503 without players."""
    if auth.is_identity(token):
        raise unknown_token()
    if not token.startswith((auth.PLAYER, auth.APP)):
        return token, None
    found = token_cache().resolve(token)
    if found is None:
        raise unknown_token()
    return found.identity, found.digest


def token_cache() -> TokenCache:
    tokens = current_app.extensions.get("ludotheque.tokens")
    if tokens is None:
        raise no_players()
    return tokens


# -- followers opened with a player token end with it ----------------------------
def revocation(digest: str | None = None) -> Callable[[], bool] | None:
    """For a follower opened with the player token ``digest`` (else the
    request's, if any): whether that token was revoked since (None: no
    player token, nothing to watch). Checked before each delivery."""
    if digest is None:
        found = credential()
        digest = None if found is None else found.digest
    if digest is None:
        return None
    tokens = token_cache()
    return lambda: tokens.revoked(digest)


def check_still_valid(digest: str | None = None) -> None:
    """401 when the player token ``digest`` (else the request's) has ended
    since the request began: what a long poll checks before it answers, and
    a stream ticket when it is redeemed."""
    if digest is None:
        found = credential()
        digest = None if found is None else found.digest
    if digest is None:
        return
    tokens = token_cache()
    if tokens.revoked(digest) or tokens.players.resolve_digest(digest) is None:
        raise unknown_token()


def no_players() -> Problem:
    return Problem(
        503,
        "players_unavailable",
        "this server keeps no players: it has no database (LUDOTHEQUE_DATABASE_URL)",
        headers={"Retry-After": "3600"},  # a configuration changes in hours, if ever
    )


def init_credentials(app: Flask, players: Players | None) -> None:
    """Resolve player tokens and app keys before the rate limits count the
    request (``resolve``); refuse unknown ones once they have (``refuse``)."""
    tokens = None if players is None else TokenCache(players)
    app.extensions["ludotheque.tokens"] = tokens

    @app.before_request
    def resolve() -> None:
        header = request_header("Authorization")
        if header is None:
            return
        scheme, _, token = header.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer":
            return  # refused by whoever reads the token (401 token_required)
        if auth.is_identity(token):
            g.refused = unknown_token()
            return
        if not token.startswith((auth.PLAYER, auth.APP)):
            return
        if tokens is None:
            g.refused = no_players()
            return
        found = tokens.resolve(token)
        if found is None:
            g.refused = unknown_token()
            return
        g.credential = found
        request.environ["HTTP_AUTHORIZATION"] = "Bearer " + found.identity
        if found.app is not None:  # (werkzeug reads the environ's once, into the request)
            request.environ["REMOTE_ADDR"] = request.remote_addr = APP_KEY + found.app


def init_refusals(app: Flask) -> None:
    """After the rate limits: refuse a request whose token was refused."""

    @app.before_request
    def refuse() -> None:
        refused = g.pop("refused", None)
        if refused is not None:
            raise refused
