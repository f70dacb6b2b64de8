"""A finished match, step by step, for people to watch again, a page at a time.

The replay is computed from the match's record (``Matches.record``: only
what is public once the match is over) by replaying its actions with the
engine, as ``fairness.verify`` does: step 0 is what a spectator saw at the
start, each further step one action of the record with the public events it
caused and what a spectator saw after it. The last page adds every seat's
own view at the end: the match is over, nothing it hid matters any more.

A whole replay grows with the match (a spectator's view per action: 173 MB
for a Ducale of 20,000 actions), so it is served in pages of at most
``PAGE_LIMIT`` steps, and a match of more than ``MAX_ACTIONS`` actions has
none (its record has every action). What a page needs is kept per match in
a small LRU of this process (bounded in bytes): the header every page
repeats, the record's actions (as JSON, by chunks of ``CHECKPOINT_EVERY``)
and the engine's state (as JSON) every ``CHECKPOINT_EVERY`` steps reached
so far, so that a page replays at most ``CHECKPOINT_EVERY + PAGE_LIMIT`` actions
once an earlier page (or a later one) was read, and pages of 100 or 200
read in order only their own; a far page read first replays from the
nearest state kept before it, at most every action.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from engines.core import Game
from service.domain import fairness
from service.domain.kept import Kept
from service.domain.problems import Problem

# A replay serves at most this many actions: replaying them all (the worst
# first page) costs well under a second of CPU and a few MB, for any game.
MAX_ACTIONS = 20_000
PAGE_LIMIT = 200  # steps per page, at most
PAGE_DEFAULT = 100
CHECKPOINT_EVERY = 100  # steps between two states kept
# What a match's pages need is its record's actions (0.05 to 3 MB) and its
# states every 100 steps (a few KB each): 64 MB keeps hundreds of ordinary
# matches, or a score of the longest.
CACHE_BYTES = 64 * 1024 * 1024


@dataclass
class Source:
    """What a finished match's replay pages are made of: ``head`` (what
    every page repeats), the record's actions as JSON by chunks of
    ``CHECKPOINT_EVERY``, and the states (JSON) reached so far at every
    ``CHECKPOINT_EVERY`` steps; ``actions``: how many the record has."""

    head: dict[str, Any]
    options: dict[str, Any]
    seed: int
    actions: int
    chunks: list[bytes] = field(default_factory=list)
    states: dict[int, bytes] = field(default_factory=dict)

    @property
    def size(self) -> int:
        """Roughly the bytes it holds (its header counted at a few KB)."""
        return 4096 + sum(map(len, self.chunks)) + sum(map(len, self.states.values()))


def source_of(record: dict[str, Any]) -> Source:
    """What the pages of ``record``'s replay are made of (its actions left
    out when they are too many to replay: the source then only refuses)."""
    actions = record["actions"]
    head = {
        "id": record["id"],
        "game": record["game"],
        "seats": [{key: seat[key] for key in ("seat", "name", "bot")} for seat in record["seats"]],
        "seeded": record["seeded"],
        "endings": record["endings"],
        "outcome": record["outcome"],
        "steps_total": len(actions) + 1,
    }
    found = Source(head, record["options"], record["seed"], len(actions))
    if len(actions) <= MAX_ACTIONS:
        found.chunks = [
            orjson.dumps(actions[at : at + CHECKPOINT_EVERY])
            for at in range(0, len(actions), CHECKPOINT_EVERY)
        ]
    return found


def page(
    game: Game,
    source: Source,
    start: int = 0,
    limit: int = PAGE_DEFAULT,
    grew: Callable[[int], None] = lambda extra: None,
) -> dict[str, Any]:
    """The steps ``start`` to ``start + limit - 1`` of ``source``'s replay,
    with its header, ``next`` (the next page's ``start``, None on the last
    page) and, on the last page, ``hands``. The states it passes at every
    ``CHECKPOINT_EVERY`` steps are kept in ``source`` (``grew`` told how
    many bytes they add)."""
    if source.actions > MAX_ACTIONS:
        raise Problem(
            422,
            "replay_too_long",
            f"this match has {source.actions:,} actions: a replay shows at most "
            f"{MAX_ACTIONS:,}; its record (GET .../record) has every one, to check or "
            "replay offline (ludotheque verify)",
        )
    total = source.actions + 1
    if not 0 <= start < total:
        raise Problem(422, "invalid_request", f"from: a step from 0 to {total - 1}")
    stop = min(start + limit, total)
    base = max((at for at in source.states if at <= start), default=0)
    if base:
        state = orjson.loads(source.states[base])
    else:
        state = fairness.set_up(game, source.options, len(source.head["seats"]), source.seed)
    chunks: dict[int, list[dict[str, Any]]] = {}

    def action(index: int) -> dict[str, Any]:
        """The record's ``index``-th action (from 1)."""
        chunk = (index - 1) // CHECKPOINT_EVERY
        if chunk not in chunks:
            chunks[chunk] = orjson.loads(source.chunks[chunk])
        return chunks[chunk][(index - 1) % CHECKPOINT_EVERY]

    # A page that ends where a state is kept replays one more action, to
    # keep it: pages read in order (100 or 200 steps, from 0) then each
    # replay only their own actions.
    reach = stop if stop < total and stop % CHECKPOINT_EVERY == 0 else stop - 1
    steps = []
    index = base
    while True:
        if start <= index < stop:
            # Copied: a view may share lists with the state that the next action changes.
            view = _plain(game.view(state, None))
            if index == 0:
                steps.append(_step(0, None, None, [], view))
            else:
                done = action(index)
                steps.append(_step(index, done["seat"], done["action"], done["events"], view))
        if index >= reach:
            break
        index += 1
        fairness.replay_action(game, state, action(index))
        if index % CHECKPOINT_EVERY == 0 and index not in source.states:
            kept = orjson.dumps(state)
            if source.states.setdefault(index, kept) is kept:
                grew(len(kept))
    last = stop == total
    return {
        **source.head,
        "from": start,
        "next": None if last else stop,
        "steps": steps,
        "hands": [game.view(state, seat["seat"]) for seat in source.head["seats"]]
        if last
        else None,
    }


def _step(
    index: int, seat: int | None, action: Any, events: list[dict[str, Any]], view: Any
) -> dict[str, Any]:
    return {"index": index, "seat": seat, "action": action, "events": events, "view": view}


class Replays:
    """The pages of finished matches' replays, from what this process keeps
    of each match while it stays among the latest ``budget`` bytes asked
    for. ``record(game, match_id)``: the match's record (raises the 404 of
    an unknown match, the 409 of one not over)."""

    def __init__(
        self,
        record: Callable[[Game, str], dict[str, Any]],
        budget: int = CACHE_BYTES,
    ) -> None:
        self.record = record
        self.kept = Kept(budget)

    def forget(self, game: Game, match_id: str) -> None:
        """Drop what this process keeps of the match's replay (its record changed)."""
        self.kept.drop((game.name, match_id))

    def page(self, game: Game, match_id: str, start: int = 0, limit: int = PAGE_DEFAULT) -> bytes:
        """The page of ``game``'s match ``match_id`` from step ``start``, as JSON."""
        key = (game.name, match_id)
        source = self.kept.get(key)
        if source is None:
            # Made outside any lock: two first asks of one match may both
            # make it (the same), and no ask waits for another match's.
            source = source_of(self.record(game, match_id))
            self.kept.put(key, source, source.size)
        found = page(game, source, start, limit, lambda extra: self.kept.grew(key, source, extra))
        return orjson.dumps(found)


def _plain(view: Any) -> Any:
    """A copy of ``view`` that shares nothing with the state (a JSON round
    trip: several times faster than ``copy.deepcopy``)."""
    return orjson.loads(orjson.dumps(view))
