"""Turn clocks and bots: when the server owes a match a turn.

A match created with the option ``turn_timeout_s`` gives each seat that
long to act once it comes to act; a seat whose clock runs out has a random
move played for it. A bot's seat is played by the server as soon as it is
to act. Playing those turns is the background's work
(``service.background.turns``); here is only when they are owed.
"""

from __future__ import annotations

import time
from typing import Any

from engines.core import Game
from service.domain.views import status_of

CLOCK_OPTION = "turn_timeout_s"


def engine_options(options: dict[str, Any]) -> dict[str, Any]:
    """A match's options less the service's own (the clock): the game's."""
    return {k: v for k, v in options.items() if k != CLOCK_OPTION}


def refresh_deadlines(game: Game, match: dict[str, Any], now: float) -> None:
    """A seat's clock starts when it comes to act and stops when it has acted."""
    timeout = match["options"].get(CLOCK_OPTION)
    active = status_of(game, match) == "active"
    to_act = set(game.to_act(match["state"])) if active and timeout else set()
    match["deadlines"] = [
        (deadline or now + timeout) if seat in to_act else None
        for seat, deadline in enumerate(match["deadlines"])
    ]


def server_turn(game: Game, match: dict[str, Any], now: float) -> tuple[int, str, bool] | None:
    """(seat, policy, timed out) of a turn the server must play now, if any."""
    if status_of(game, match) != "active":
        return None
    for seat in game.to_act(match["state"]):
        bot = match["seats"][seat].get("bot")
        if bot:
            return seat, bot, False
        deadline = match["deadlines"][seat]
        if deadline is not None and deadline <= now:
            return seat, "random", True
    return None


def owes_turns(match: dict[str, Any]) -> bool:
    """Whether the server may ever play in ``match`` (bots or a clock); a
    plain match never enters the due set, saving a round trip per write."""
    return bool(match["options"].get(CLOCK_OPTION)) or any(s.get("bot") for s in match["seats"])


def due_at(game: Game, match: dict[str, Any]) -> float | None:
    """When the server owes ``match`` a turn: now for a bot, else the first
    deadline; None when it owes nothing."""
    if status_of(game, match) != "active":
        return None
    to_act = game.to_act(match["state"])
    if any(match["seats"][seat].get("bot") for seat in to_act):
        return time.time()
    deadlines = [match["deadlines"][seat] for seat in to_act if match["deadlines"][seat]]
    return min(deadlines, default=None)
