"""What a match does on each request, independent of HTTP framing.

Every change is read, checked against the engine, then written with a
compare-and-set on the version; a write that loses a race is re-evaluated
against the new state (unless the client pinned a version with If-Match).
"""

from __future__ import annotations

import hashlib
import re
import secrets
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from engines.core import Game, IllegalAction, redact_events
from service import auth
from service.errors import Problem, from_illegal_action
from service.store import Loaded, Store, idempotency_key

MATCH_ID = re.compile(r"^[0-9a-f]{32}$")


@dataclass(frozen=True)
class Settings:
    finished_ttl: int = 24 * 3600  # seconds a finished match stays readable
    idle_ttl: int = 7 * 24 * 3600  # seconds an untouched match lives
    max_attempts: int = 50  # compare-and-set attempts before answering 409
    keepalive_s: float = 10  # at most this long between two writes on an event stream


def status_of(game: Game, match: dict[str, Any]) -> str:
    if any(seat["token"] is None for seat in match["seats"]):
        return "waiting"
    return "finished" if game.outcome(match["state"]) is not None else "active"


def present(game: Game, match: dict[str, Any], version: int, seat: int | None) -> dict[str, Any]:
    """The match as ``seat`` (None: a spectator) may see it."""
    state = match["state"]
    status = status_of(game, match)
    return {
        "id": match["id"],
        "game": match["game"],
        "status": status,
        "version": version,
        "options": match["options"],
        "seats": [
            {"seat": i, "name": s["name"], "open": s["token"] is None}
            for i, s in enumerate(match["seats"])
        ],
        "to_act": game.to_act(state) if status == "active" else [],
        "your_seat": seat,
        "view": game.view(state, seat),
        "outcome": game.outcome(state),
    }


class Matches:
    def __init__(self, store: Store, settings: Settings) -> None:
        self.store = store
        self.settings = settings

    # -- reading ---------------------------------------------------------------
    def load(self, game: Game, match_id: str, replay_key: str | None = None) -> Loaded:
        loaded = self.store.load(match_id, replay_key) if MATCH_ID.match(match_id) else None
        if loaded is None or loaded.match["game"] != game.name:
            raise Problem(404, "match_not_found", f"no {game.name} match {match_id!r}")
        return loaded

    def seat_for(self, loaded: Loaded, token: str | None) -> int | None:
        if token is None:
            return None
        return auth.seat_of(token, [s["token"] for s in loaded.match["seats"]])

    def legal_actions(self, game: Game, match_id: str, token: str) -> dict[str, Any]:
        loaded = self.load(game, match_id)
        seat = self.seat_for(loaded, token)
        state = loaded.match["state"]
        active = status_of(game, loaded.match) == "active"
        actions = game.legal_actions(state, seat) if active and seat in game.to_act(state) else []
        return {"version": loaded.version, "seat": seat, "actions": actions}

    def events(
        self,
        game: Game,
        match_id: str,
        token: str | None,
        after: int,
        limit: int,
        wait_s: float = 0,
    ) -> dict[str, Any]:
        """The log after ``after`` as the caller may see it; with ``wait_s``,
        wait up to that long for an event the caller may see."""
        loaded = self.load(game, match_id)
        seat = self.seat_for(loaded, token)
        deadline = time.monotonic() + wait_s
        block_ms = 0
        while True:
            events = self.store.events(match_id, after, limit, block_ms)
            shown = redact_events(events, seat)
            after = events[-1]["index"] if events else after
            block_ms = int((deadline - time.monotonic()) * 1000)
            if shown or block_ms <= 0:
                return {"events": shown, "next": after}

    def stream(self, game: Game, match_id: str, token: str | None, after: int) -> Iterator[str]:
        """Server-Sent Events: the log after ``after`` as the caller may see
        it, then every new event as it lands, until the match is over."""
        loaded = self.load(game, match_id)
        seat = self.seat_for(loaded, token)
        over = status_of(game, loaded.match) == "finished"
        keepalive_ms = int(self.settings.keepalive_s * 1000)

        def generate() -> Iterator[str]:
            cursor = after
            yield "retry: 1000\n\n"
            while True:
                events = self.store.events(match_id, cursor, 100, 0 if over else keepalive_ms)
                if not events:
                    if over or not self.store.exists(match_id):
                        return
                    yield ": keep-alive\n\n"
                    continue
                for event in events:
                    cursor = event["index"]
                    for shown in redact_events([event], seat):
                        yield f"id: {cursor}\ndata: {orjson.dumps(shown).decode()}\n\n"
                    if event["type"] == "match_over":
                        return

        return generate()

    # -- writing ---------------------------------------------------------------
    def create(
        self,
        game: Game,
        players: list[dict[str, Any]],
        options: dict[str, Any] | None,
        seed: int | None,
    ) -> dict[str, Any]:
        """A new match; ``options`` were loaded by the game's options schema."""
        if not game.min_players <= len(players) <= game.max_players:
            raise Problem(
                422,
                "invalid_request",
                f"{game.name} takes {game.min_players} to {game.max_players} players",
            )
        if options is None:
            options = game.options_schema().load({})
        if seed is None:
            seed = secrets.randbits(63)
        try:
            state = game.setup(options, len(players), seed)
        except IllegalAction as refused:
            raise Problem(422, "invalid_options", refused.message) from None
        tokens = [auth.new_token() if "name" in p else None for p in players]
        match = {
            "id": uuid.uuid4().hex,
            "game": game.name,
            "options": options,
            "seed": seed,
            "seats": [
                {"name": p.get("name"), "token": auth.token_hash(t) if t else None}
                for p, t in zip(players, tokens, strict=True)
            ],
            "state": state,
        }
        events = [{"type": "match_created", "seats": [p.get("name") for p in players]}]
        if status_of(game, match) == "active":
            events.append({"type": "match_started"})
        version = self._commit(game, match, 0, events)
        if version is None:  # a 128-bit random id already taken: not in this universe
            raise Problem(409, "conflict", "could not create the match; retry")
        answer = present(game, match, version, None)
        for seat, token in zip(answer["seats"], tokens, strict=True):
            if token is not None:
                seat["token"] = token
        return answer

    def join(self, game: Game, match_id: str, seat: int, name: str) -> dict[str, Any]:
        for _ in range(self.settings.max_attempts):
            loaded = self.load(game, match_id)
            seats = loaded.match["seats"]
            if not 0 <= seat < len(seats):
                raise Problem(404, "seat_not_found", f"this match has seats 0 to {len(seats) - 1}")
            if seats[seat]["token"] is not None:
                raise Problem(409, "seat_taken", f"seat {seat} is already taken")
            token = auth.new_token()
            seats[seat] = {"name": name, "token": auth.token_hash(token)}
            events = [{"type": "seat_joined", "seat": seat, "name": name}]
            if status_of(game, loaded.match) == "active":
                events.append({"type": "match_started"})
            if self._commit(game, loaded.match, loaded.version, events) is not None:
                return {"seat": seat, "name": name, "token": token}
        raise Problem(409, "conflict", "too many concurrent changes to this match; retry")

    def play(
        self,
        game: Game,
        match_id: str,
        token: str,
        action: dict[str, Any],
        if_match: int | None = None,
        idempotency: str | None = None,
    ) -> tuple[bytes, bool]:
        """Play ``action``; return the answer's JSON and whether it is a replay."""
        replay_key = None
        fingerprint = hashlib.sha256(orjson.dumps(action, option=orjson.OPT_SORT_KEYS)).hexdigest()
        if idempotency is not None:
            replay_key = idempotency_key(match_id, auth.token_hash(token), idempotency)
        for _ in range(self.settings.max_attempts):
            loaded = self.load(game, match_id, replay_key)
            seat = self.seat_for(loaded, token)
            if loaded.replay is not None:
                return self._replayed(loaded.replay, fingerprint), True
            if if_match is not None and if_match != loaded.version:
                raise Problem(
                    412,
                    "version_mismatch",
                    f"the match is at version {loaded.version}, not {if_match}",
                    version=loaded.version,
                )
            match, state = loaded.match, loaded.match["state"]
            status = status_of(game, match)
            if status == "waiting":
                raise Problem(409, "match_not_started", "some seats are still open")
            if status == "finished":
                raise Problem(409, "match_over", "this match is over")
            if seat not in game.to_act(state):
                raise Problem(409, "not_your_turn", f"seat {seat} is not to act now")
            try:
                events = game.apply(state, seat, action)
            except IllegalAction as refused:
                raise from_illegal_action(refused) from None
            # The log keeps every accepted action (for its seat's eyes only: a
            # move can carry secrets), so that a match replays from its seed.
            events.insert(0, {"type": "action", "seat": seat, "action": action, "to": [seat]})
            body = orjson.dumps(present(game, match, loaded.version + 1, seat))
            record = None
            if replay_key is not None:
                record = (
                    replay_key,
                    orjson.dumps({"action": fingerprint, "body": orjson.Fragment(body)}),
                )
            if self._commit(game, match, loaded.version, events, record) is not None:
                return body, False
            if if_match is not None:
                raise Problem(412, "version_mismatch", "the match changed meanwhile")
        raise Problem(409, "conflict", "too many concurrent changes to this match; retry")

    # -- helpers ---------------------------------------------------------------
    def _commit(
        self,
        game: Game,
        match: dict[str, Any],
        expected: int,
        events: list[dict[str, Any]],
        record: tuple[str, bytes] | None = None,
    ) -> int | None:
        finished = status_of(game, match) == "finished"
        ttl = self.settings.finished_ttl if finished else self.settings.idle_ttl
        version = expected + 1
        stamped = [{"version": version, **event} for event in events]
        return self.store.commit(match["id"], expected, match, stamped, ttl, record)

    @staticmethod
    def _replayed(record: bytes, fingerprint: str) -> bytes:
        stored = orjson.loads(record)
        if stored["action"] != fingerprint:
            raise Problem(
                422,
                "idempotency_key_reused",
                "this Idempotency-Key was already used for another action",
            )
        return orjson.dumps(stored["body"])
