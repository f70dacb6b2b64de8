"""HTTP bots: a seat played by someone else's server (docs/clients/webhooks.md).

A seat created as ``{"bot_url": URL}`` is a bot seat (its ``bot`` is
``"http"``). When it is to act, a worker POSTs
``{"match_id", "game", "seat", "version", "deadline_ms", "view",
"legal_actions"}`` there, signed like a webhook with the match's secret,
and plays ``{"action": ..}`` from the answer if it is one of the legal
actions and came within the match's ``bot_deadline_s``. Otherwise it plays
the ``random`` policy's move, after a logged ``bot_timeout`` (no usable
answer in time: late, refused, unreachable, connection closed, a non-2xx)
or ``bot_illegal_action`` (a 2xx answer, but not a legal action), each with
the seat and a short ``reason``, as the turn clock logs its ``timeout``.
A ``bot_timeout``'s reason is always ``call_failed``: the match's events
are public, and why a call failed (a name that did not resolve, an
internal address, a refused connection) would tell anyone what the
server's network holds; the server's log says why.
"""

from __future__ import annotations

import logging
import random
import uuid
from typing import Any

import orjson
from prometheus_client import Counter

from engines.ai import choose_action
from engines.core import Game
from service.background import outbound, webhooks

log = logging.getLogger(__name__)

DEFAULT_DEADLINE_S = 2.0
MIN_DEADLINE_S = 0.2
MAX_DEADLINE_S = 10.0

CALLS = Counter("ludotheque_http_bot_calls_total", "HTTP bot turns by result", ["result"])


def decide(
    game: Game, match: dict[str, Any], version: int, seat: int, rng: random.Random, budget_s: float
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The action to play for the HTTP bot at ``seat`` and the events that
    say why it is not the bot's own (none when it is)."""
    state = match["state"]
    legal = game.legal_actions(state, seat)
    deadline_s = match.get("bot_deadline_s", DEFAULT_DEADLINE_S)
    body = orjson.dumps(
        {
            "match_id": match["id"],
            "game": match["game"],
            "seat": seat,
            "version": version,
            "deadline_ms": int(deadline_s * 1000),
            "view": game.view(state, seat),
            "legal_actions": legal,
        }
    )
    headers = webhooks.signed_headers(match["secret"], f"turn_{uuid.uuid4().hex}", body)
    url = match["seats"][seat]["bot_url"]
    try:
        answer = outbound.post(url, body, headers, deadline_s)
    except outbound.Refused as refused:
        log.info("HTTP bot of %s seat %d: no answer (%s)", match["id"], seat, refused)
        return fallback(game, state, seat, rng, budget_s, "bot_timeout", refused.reason)
    if not 200 <= answer.status < 300:
        log.info("HTTP bot of %s seat %d answered %d", match["id"], seat, answer.status)
        return fallback(game, state, seat, rng, budget_s, "bot_timeout", f"http_{answer.status}")
    try:
        action = orjson.loads(answer.body)["action"]
    except (orjson.JSONDecodeError, TypeError, KeyError):
        return fallback(game, state, seat, rng, budget_s, "bot_illegal_action", "not_json_action")
    if action not in legal:
        return fallback(game, state, seat, rng, budget_s, "bot_illegal_action", "illegal")
    CALLS.labels("played").inc()
    return action, []


def fallback(
    game: Game,
    state: dict[str, Any],
    seat: int,
    rng: random.Random,
    budget_s: float,
    kind: str,
    reason: str,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The random move for ``seat`` and the event that says why; a failed
    call's ``reason`` is counted, and shown only as ``call_failed``."""
    CALLS.labels(kind).inc()
    action = choose_action(game, state, seat, "random", rng, budget_s)
    shown = outbound.PUBLIC_REASON if kind == "bot_timeout" else reason
    return action, [{"type": kind, "seat": seat, "reason": shown}]
