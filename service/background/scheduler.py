"""Which bot turn the workers play next, so that no client can delay
another's bots (docs/operators/bot-scheduling.md).

The server owes a match a turn when one of its bots is to act, or when a
seat's turn clock has run out. Those turns wait in one queue in Redis
(``service.store.scheduling``), shared by every worker process on every
machine:

- A match with a person in it (a seat that has a token) waits in the
  ``people`` queue, a match of bots only in the ``bots`` queue, and a worker
  takes a bots' turn only when no people's turn may be taken: whoever waits
  for a bot goes first.
- Within a queue the creating addresses take turns, and within one address
  its matches take turns, whatever the order in which their turns came
  due (start-time fair queueing). A match played keeps its place no more:
  it is queued again behind the others (``requeue``).
- A turn owed later (a turn clock) waits for its time, then joins its queue.
- A write schedules after it has committed, in a round trip of its own, so
  two schedules can arrive in the other order than their writes: a schedule
  older than the one queued does not unqueue it.
- A worker leases the match it plays; a leased match is never taken by
  another worker; when a lease runs out its worker is taken for dead and the
  next claim takes the turn over. Every move is a compare-and-set on the
  match version, so a turn is played once.

Bot seats are counted per paying address (the creator pays, unless a
joiner seated the bot, see ``service.domain.access.payer_of``): creating a
match or giving a seat to a bot past ``bot_seats_per_address`` live bot
seats is refused (429 ``bot_seats_exceeded``). A bot seat counts until its
match is over, or until its match has not moved for
``service.store.scheduling.LIVE_WINDOW_S``; every turn owed refreshes it, in
the same round trip as the scheduling.

Each match also has a bot time budget: the thinking time its bots spent so
far is kept in the match (``bot_time_s``); past ``match_budget_s`` its bots
play ``random`` moves, which cost next to nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from service.domain import access
from service.domain.problems import Problem
from service.store.scheduling import QUEUE_KEYS, TurnQueue

# QUEUE_KEYS: the queue's slot, where service.domain.matches waits for replicas
__all__ = ["QUEUE_KEYS", "BotLimits", "Scheduler"]

CAP_RETRY_AFTER_S = 60


def class_of(match: dict[str, Any]) -> str:
    """``people`` when a person sits in ``match`` (a seat with a token), else ``bots``."""
    return "people" if any(seat.get("token") for seat in match["seats"]) else "bots"


def bot_seats(match: dict[str, Any]) -> list[tuple[str, int]]:
    """The bot seats of ``match`` that someone pays for: (the address they are
    charged to, the seat)."""
    return [
        (payer, i)
        for i, seat in enumerate(match["seats"])
        if seat.get("bot") and (payer := access.payer_of(match, i))
    ]


@dataclass(frozen=True)
class BotLimits:
    bot_seats_per_address: int = 12  # live bot seats per creating address; 0: no cap
    match_budget_s: float = 600.0  # thinking time a match's bots get, then `random`


class Scheduler:
    """The queue of turns the server owes, shared through Redis."""

    def __init__(self, client: Any, limits: BotLimits | None = None) -> None:
        self.queue = TurnQueue(client)
        self.limits = limits or BotLimits()

    def schedule(
        self,
        match: dict[str, Any],
        version: int,
        when: float | None,
        finished: bool = False,
        requeue: bool = False,
        client: Any = None,
    ) -> None:
        """The server owes ``match`` (at ``version``) a turn at ``when``
        (None: none now; ignored when a later version's turn is queued).

        ``requeue``: the match was just served, so it goes behind the others
        even if its next turn is already queued. ``finished``: its bot seats
        stop counting against its creator's cap; else they count on.
        ``client``: a pipeline that waits for replicas, when they are required.
        """
        address = match.get("creator") or ""
        charged = bot_seats(match)
        self.queue.schedule(
            match["id"],
            version,
            when,
            class_of(match),
            address,
            charged,
            finished,
            requeue,
            client,
        )

    def unschedule(self, match_id: str) -> None:
        """``match_id`` is gone: it is owed nothing."""
        self.queue.unschedule(match_id)

    def claim(self, now: float, lease_s: float) -> str | None:
        """The match whose turn is next, leased for ``lease_s`` seconds."""
        return self.queue.claim(now, lease_s)

    def release(self, match_id: str) -> None:
        """The worker is done with ``match_id`` (its next turn is queued already)."""
        self.queue.release(match_id)

    def reserve(self, match: dict[str, Any], seats: list[int], force: bool = False) -> bool:
        """Count the bot ``seats`` of ``match`` (all charged to one address:
        the creator's, or the joiner's who seated them) against that
        address's cap, or answer 429 ``bot_seats_exceeded`` when they would
        pass it (never naming the address). With ``force`` (a resignation,
        which is never refused) they count even past the cap. True when
        they are within it."""
        address = access.payer_of(match, seats[0]) if seats else ""
        if not address:
            return True
        cap = self.limits.bot_seats_per_address
        within, held = self.queue.reserve(address, match["id"], seats, cap, force)
        if not within and not force:
            raise Problem(
                429,
                "bot_seats_exceeded",
                f"your address already has {held} bot seats in matches being played, and "
                f"{len(seats)} more would pass the cap of {cap} per address; "
                "retry when one of those matches is over",
                headers={"Retry-After": str(CAP_RETRY_AFTER_S)},
                held=held,
                cap=cap,
            )
        return within

    def bot_move(self, match: dict[str, Any], policy: str, budget_s: float) -> tuple[str, float]:
        """The policy and thinking time of ``match``'s next bot move: its own,
        within what is left of the match's budget; ``random`` once spent."""
        left = self.limits.match_budget_s - match.get("bot_time_s", 0.0)
        if policy == "random" or left <= 0:
            return "random", budget_s
        return policy, min(budget_s, left)

    @staticmethod
    def charge(match: dict[str, Any], seconds: float) -> None:
        """Count ``seconds`` of thinking against ``match``'s bot budget."""
        match["bot_time_s"] = round(match.get("bot_time_s", 0.0) + seconds, 6)
