"""How a match's result reads when a seat resigned or the match was aborted.

The engines know nothing of resignations or aborts: they end a match by its
rules. The service keeps its own record in the match (``resigned``: the
seats that gave up, in order; ``ended``: the result of a match that ended
before its rules ended it) and this module turns that record and the
engine's outcome into the outcome clients see.

- A seat that resigns is ranked last. While two seats or more have not
  resigned, the match goes on and a bot (:data:`RESIGNED_BOT`) plays the
  resigned seat; once only one has not, the match ends at once and that one
  wins (two players: the other seat wins).
- An aborted match ends with no winner, ``ended_by: "abort"``.
"""

from __future__ import annotations

from typing import Any

from engines.core import Event, Game

# The server-side bot that plays a resigned seat when the match goes on:
# the one-step heuristic every game offers, fast and neither reckless
# (the random bot would hand points to whoever sits next) nor slow.
RESIGNED_BOT = "greedy"
CHEAP_BOT = "random"  # plays a resigned seat past its resigner's cap of bot seats


def outcome_of(game: Game, match: dict[str, Any]) -> dict[str, Any] | None:
    """The outcome clients see: the service's record of an early end, else the
    engine's outcome with resigned seats ranked last (None while it goes on)."""
    ended = match.get("ended")
    if ended is not None:
        return ended
    outcome = game.outcome(match["state"])
    resigned = match.get("resigned")
    if outcome is None or not resigned:
        return outcome
    return rank_resigned_last(outcome, len(match["seats"]), resigned)


def amend_match_over(game: Game, match: dict[str, Any], events: list[Event]) -> list[Event]:
    """The engine's ``match_over`` event, carrying the outcome as clients see it."""
    if not match.get("resigned"):
        return events
    return [
        {"type": "match_over", **outcome_of(game, match)} if e["type"] == "match_over" else e
        for e in events
    ]


def rank_resigned_last(
    outcome: dict[str, Any], n_seats: int, resigned: list[int]
) -> dict[str, Any]:
    """``outcome`` with ``resigned`` seats out of the winners and last in
    ``ranking`` (the latest to resign above the earliest).

    The seats still in are ranked by the engine: its winners first, then the
    others by score, in the direction the winners' scores show (lowest wins
    in Dékal and Ducale, highest in Gaudí and Pacal). When the engine's
    winners all resigned, the best-scored seats still in win instead.
    """
    scores = outcome.get("scores") or [0] * n_seats
    lower_wins = lower_is_better(outcome["winners"], scores)

    def rank_key(seat: int) -> float:
        return scores[seat] if lower_wins else -scores[seat]

    still_in = [seat for seat in range(n_seats) if seat not in resigned]
    winners = [seat for seat in outcome["winners"] if seat not in resigned]
    if not winners and still_in:
        best = min(rank_key(seat) for seat in still_in)
        winners = [seat for seat in still_in if rank_key(seat) == best]
    ranking = [winners] if winners else []
    rest = sorted((seat for seat in still_in if seat not in winners), key=rank_key)
    for seat in rest:
        if ranking and ranking[-1][0] in rest and rank_key(ranking[-1][0]) == rank_key(seat):
            ranking[-1].append(seat)
        else:
            ranking.append([seat])
    ranking += [[seat] for seat in reversed(resigned)]
    return {**outcome, "winners": winners, "resigned": list(resigned), "ranking": ranking}


def lower_is_better(winners: list[int], scores: list[Any]) -> bool:
    """Whether the engine's winners hold the lowest scores (and not all of them
    tie), which is how this game ranks."""
    if not winners or not scores or min(scores) == max(scores):
        return False
    return all(scores[seat] == min(scores) for seat in winners)


def ended_early(n_seats: int, resigned: list[int], ended_by: str, by: int) -> dict[str, Any]:
    """The outcome of a match that ends before its rules end it: by the
    resignations leaving one seat (or none) in, or by an abort."""
    if ended_by == "abort":
        return {"winners": [], "ranking": [], "resigned": [], "ended_by": "abort", "by": by}
    still_in = [seat for seat in range(n_seats) if seat not in resigned]
    ranking = [still_in] if still_in else []
    ranking += [[seat] for seat in reversed(resigned)]
    return {
        "winners": still_in,
        "ranking": ranking,
        "resigned": list(resigned),
        "ended_by": "resignation",
        "by": by,
    }
