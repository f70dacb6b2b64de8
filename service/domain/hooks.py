"""What a match calls outside: its webhook and its HTTP bots (docs/clients/webhooks.md).

A match created with ``{"webhook": {"url": .., "events": [..]}}`` keeps the
webhook in the match (``webhook``: its URL, the event types chosen, whether
it was given up on, and which seats were last told it is their turn); a
seat created as ``{"bot_url": URL}`` is a bot seat whose ``bot`` is
``"http"``. Either way the match gets a secret, shown once, that signs
every call. Here is what the match itself holds and shows of them;
delivering and calling are the background's work
(``service.background.webhooks``, ``service.background.httpbots``).
"""

from __future__ import annotations

import base64
import secrets
from typing import Any

from engines.core import redact_events
from service.domain import access

ALL = "all"
YOUR_TURN = "your_turn"
HTTP_BOT = "http"


def as_seat(player: dict[str, Any]) -> dict[str, Any]:
    """A creation body's player with ``bot_url`` as a bot seat (still held by
    its bot account, if the ranked queue seated one: it is rated)."""
    if "bot_url" in player:
        held = {"player": player["player"]} if "player" in player else {}
        return {"bot": HTTP_BOT, "bot_url": player["bot_url"], **held}
    return player


def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


# -- at creation and on every commit --------------------------------------------
def configure(
    match: dict[str, Any], players: list[dict[str, Any]], calls: dict[str, Any]
) -> str | None:
    """Give a new ``match`` its webhook and bot deadline from ``calls`` (the
    creation body's ``webhook`` and ``bot_deadline_s``); return its secret
    (shown once) when it calls anyone: a webhook or a ``bot_url`` seat."""
    webhook = calls.get("webhook")
    if webhook is not None:
        match["webhook"] = {
            "url": webhook["url"],
            "events": webhook["events"],
            "given_up": False,
            "notified": [],
        }
    if calls.get("bot_deadline_s") is not None:
        match["bot_deadline_s"] = calls["bot_deadline_s"]
    if webhook is None and not any("bot_url" in p for p in players):
        return None
    match["secret"] = new_secret()
    return match["secret"]


def carried(old: dict[str, Any]) -> dict[str, Any]:
    """What a rematch keeps of ``old``'s calls: its webhook (afresh), bot
    deadline and secret, which the creator already holds."""
    kept: dict[str, Any] = {k: old[k] for k in ("secret", "bot_deadline_s") if k in old}
    if "webhook" in old:
        kept["webhook"] = old["webhook"] | {"given_up": False, "notified": []}
    return kept


def shown(match: dict[str, Any]) -> dict[str, Any] | None:
    """What anyone may know of a match's webhook (never its URL or secret)."""
    hook = match.get("webhook")
    if hook is None:
        return None
    return {"events": hook["events"], "given_up": hook["given_up"]}


def wants(hook: dict[str, Any], kind: str) -> bool:
    return ALL in hook["events"] or kind in hook["events"]


def turn_notices(
    match: dict[str, Any], to_act: list[int], events: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """A ``your_turn`` log entry for each person's seat that has just come to
    act (it was not to act before this write's ``events``, or it acted in
    them), if the webhook wants them; shown to nobody (``to: []``) but the
    webhook, which sends only the seat number."""
    hook = match.get("webhook")
    if hook is None or not wants(hook, YOUR_TURN):
        return []
    acted = {e["seat"] for e in events if e["type"] == "action"}
    before = set(hook["notified"]) - acted
    fresh = [s for s in to_act if s not in before and not match["seats"][s].get("bot")]
    hook["notified"] = list(to_act)
    return [{"type": YOUR_TURN, "seat": seat, "to": []} for seat in fresh]


def calling(match: dict[str, Any]) -> bool:
    """Whether ``match`` has a webhook still called."""
    return "webhook" in match and not match["webhook"]["given_up"]


def chosen(hook: dict[str, Any], events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries a delivery carries: what a spectator sees, of the chosen
    types, and the turn notices with their seat number only."""
    carried = []
    for event in events:
        if event["type"] == YOUR_TURN:
            if wants(hook, YOUR_TURN):
                carried.append({k: event[k] for k in ("index", "version", "type", "seat")})
        elif wants(hook, event["type"]):
            carried += redact_events([event], access.OUTSIDE_READER)
    return carried
