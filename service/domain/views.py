"""What a match looks like from outside: its status, its seats, and the
whole match as one viewer (a seat, or a spectator) may see it.

Whose secrets a view shows is decided in ``service.domain.access``; the
seed and salt, shown once the match is over, in ``service.domain.fairness``.
"""

from __future__ import annotations

from typing import Any

from engines.core import Game
from service.domain import access, endings, fairness, hooks


def status_of(game: Game, match: dict[str, Any]) -> str:
    if match.get("ended"):  # resigned or aborted: see service/domain/endings.py
        return "finished"
    if any(is_open(seat) or seat.get("awaits") for seat in match["seats"]):
        return "waiting"
    return "finished" if game.outcome(match["state"]) is not None else "active"


def present(
    game: Game, match: dict[str, Any], version: int, seat: int | None, legal: bool = False
) -> dict[str, Any]:
    """The match as ``seat`` (None: a spectator) may see it; with ``legal``,
    also the seat's legal actions (empty unless it is to act)."""
    state = match["state"]
    status = status_of(game, match)
    to_act = game.to_act(state) if status == "active" else []
    seen_as = access.sees_as(match, status, seat)
    answer = {
        "id": match["id"],
        "game": match["game"],
        "status": status,
        "version": version,
        "options": match["options"],
        "seats": public_seats(match),
        "to_act": to_act,
        "deadlines": match["deadlines"],
        "your_seat": seat,
        "view": game.view(state, seen_as),
        "outcome": fairness.revealed(match, endings.outcome_of(game, match)),
        **fairness.shown(match),
        "listed": bool(match.get("listed")),
        "rated": bool(match.get("rated")),
        "rematch": match.get("rematch"),
        "webhook": hooks.shown(match),
    }
    if legal:
        acts = access.acts_now(match, status, seat, to_act)
        answer["legal_actions"] = game.legal_actions(state, seat) if acts else []
    return answer


def is_open(seat: dict[str, Any]) -> bool:
    """Free for anyone to join (a rematch seat ``awaits`` its holder instead)."""
    return seat["token"] is None and not seat.get("bot") and not seat.get("awaits")


def public_seats(match: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"seat": i, "name": s["name"], "bot": s.get("bot"), "open": is_open(s)}
        | ({"reserved": True} if s.get("awaits") else {})
        | ({"player": s["player"]} if s.get("player") else {})
        | ({"bot_account": True} if s.get("bot_account") else {})
        for i, s in enumerate(match["seats"])
    ]
