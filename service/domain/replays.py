"""A finished match, step by step, for people to watch again.

The replay is computed from the match's record (``Matches.record``: only
what is public once the match is over) by replaying its actions with the
engine, as ``fairness.verify`` does: step 0 is what a spectator saw at the
start, each further step one action of the record with the public events it
caused and what a spectator saw after it. At the end, every seat's own view
is added: the match is over, nothing it hid matters any more.

Replaying a long match is CPU, and the answer for a finished match never
changes: ``Replays`` keeps the latest answers, encoded, in a small LRU of
this process (bounded in bytes).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import orjson

from engines.core import Game
from service.domain import fairness

# Most replays are 0.1 to 0.7 MB; the longest (a rummy between random bots:
# thousands of actions) up to 8 MB. 32 MB keeps a few of those, or a
# hundred of the others.
CACHE_BYTES = 32 * 1024 * 1024


def replay(game: Game, record: dict[str, Any]) -> dict[str, Any]:
    """``record`` (a finished match's, as ``Matches.record`` gives it) replayed:
    its seats, ``steps`` (step 0 the start, then one per action, each with
    the spectator's view after it), ``hands`` (each seat's own view at the
    end) and its outcome."""
    seats = record["seats"]
    state = fairness.set_up(game, record["options"], len(seats), record["seed"])
    # Copied: a view may share lists with the state that the next action changes.
    steps = [_step(0, None, None, [], _plain(game.view(state, None)))]
    for index, step in enumerate(record["actions"], 1):
        fairness.replay_action(game, state, step)
        view = _plain(game.view(state, None))
        steps.append(_step(index, step["seat"], step["action"], step["events"], view))
    return {
        "id": record["id"],
        "game": record["game"],
        "seats": [{key: seat[key] for key in ("seat", "name", "bot")} for seat in seats],
        "seeded": record["seeded"],
        "steps": steps,
        "endings": record["endings"],
        "hands": [game.view(state, seat["seat"]) for seat in seats],
        "outcome": record["outcome"],
    }


def _step(
    index: int, seat: int | None, action: Any, events: list[dict[str, Any]], view: Any
) -> dict[str, Any]:
    return {"index": index, "seat": seat, "action": action, "events": events, "view": view}


class Replays:
    """The replays of finished matches, each computed once per process
    while it stays among the latest ``budget`` bytes of answers asked for.
    ``record(game, match_id)``: the match's record (raises the 404 of an
    unknown match, the 409 of one not over)."""

    def __init__(
        self,
        record: Callable[[Game, str], dict[str, Any]],
        budget: int = CACHE_BYTES,
    ) -> None:
        self.record = record
        self.budget = budget
        self.kept: OrderedDict[tuple[str, str], bytes] = OrderedDict()
        self.size = 0
        self.lock = threading.Lock()

    def encoded(self, game: Game, match_id: str) -> bytes:
        """The replay of ``game``'s match ``match_id``, as JSON."""
        key = (game.name, match_id)
        with self.lock:
            if (found := self.kept.get(key)) is not None:
                self.kept.move_to_end(key)
                return found
        # Computed outside the lock: two first asks of one match may both
        # compute it (the same answer), and no ask waits for another match's.
        body = orjson.dumps(replay(game, self.record(game, match_id)))
        with self.lock:
            if key not in self.kept and len(body) <= self.budget:
                self.kept[key] = body
                self.size += len(body)
                while self.size > self.budget:
                    _, dropped = self.kept.popitem(last=False)
                    self.size -= len(dropped)
        return body


def _plain(view: Any) -> Any:
    """A copy of ``view`` that shares nothing with the state (a JSON round
    trip: several times faster than ``copy.deepcopy`` on a long match)."""
    return orjson.loads(orjson.dumps(view))
