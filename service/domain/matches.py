"""What a match does on each request, independent of HTTP framing.

Every change is read, checked against the engine, then written with a
compare-and-set on the version; a write that loses a race is re-evaluated
against the new state (unless the client pinned a version with If-Match).
"""

from __future__ import annotations

import hashlib
import random
import re
import time
import uuid
from dataclasses import dataclass
from typing import Any

import orjson

from engines import GAMES
from engines.ai import choose_action
from engines.ai.policies import supported
from engines.core import Game, IllegalAction
from service.background import httpbots, webhooks
from service.background.scheduler import QUEUE_KEYS, Scheduler
from service.domain import access, endings, fairness, hooks, lobby
from service.domain import tokens as auth
from service.domain.ports import Loaded, NotReplicated, Written
from service.domain.problems import Problem, from_illegal_action
from service.http.limits import Counter, pending_counters
from service.metrics import ACTIONS, BOT_MOVE, CAS_RETRIES
from service.store.matches import Store, idempotency_key
from service.store.quotas import Quotas

MATCH_ID = re.compile(r"^[0-9a-f]{32}$")


@dataclass(frozen=True)
class Settings:
    finished_ttl: int = 24 * 3600  # seconds a finished match stays readable
    idle_ttl: int = 7 * 24 * 3600  # seconds an untouched match lives
    max_attempts: int = 50  # compare-and-set attempts before answering 409
    waiting_ttl: int = 3600  # seconds a match with an open seat lives after its last change


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
    if legal:
        to_act = access.acts_now(match, status, seat, game.to_act(state))
        return present(game, match, version, seat) | {
            "legal_actions": game.legal_actions(state, seat) if to_act else []
        }
    seen_as = access.sees_as(match, status, seat)
    return {
        "id": match["id"],
        "game": match["game"],
        "status": status,
        "version": version,
        "options": match["options"],
        "seats": public_seats(match),
        "to_act": game.to_act(state) if status == "active" else [],
        "deadlines": match["deadlines"],
        "your_seat": seat,
        "view": game.view(state, seen_as),
        "outcome": fairness.revealed(match, endings.outcome_of(game, match)),
        **fairness.shown(match),
        "listed": bool(match.get("listed")),
        "rematch": match.get("rematch"),
        "webhook": hooks.shown(match),
    }


class Matches:
    def __init__(
        self,
        store: Store,
        settings: Settings,
        quotas: Quotas | None = None,
        scheduler: Scheduler | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.quotas = quotas  # None: no creation limit nor cap on waiting matches
        self.scheduler = scheduler or Scheduler(store.client)

    # -- reading ---------------------------------------------------------------
    def load(self, game: Game, match_id: str, replay_key: str | None = None) -> Loaded:
        loaded = None
        if MATCH_ID.match(match_id):
            loaded = self.store.load(match_id, replay_key, pending_counters())
        if loaded is None or loaded.match["game"] != game.name:
            raise Problem(404, "match_not_found", f"no {game.name} match {match_id!r}")
        return loaded

    @staticmethod
    def seat_for(loaded: Loaded, token: str | None) -> int | None:
        return access.seat_of(loaded.match, token)

    def legal_actions(self, game: Game, match_id: str, token: str) -> dict[str, Any]:
        loaded = self.load(game, match_id)
        seat = self.seat_for(loaded, token)
        state = loaded.match["state"]
        status = status_of(game, loaded.match)
        to_act = access.acts_now(loaded.match, status, seat, game.to_act(state))
        actions = game.legal_actions(state, seat) if to_act else []
        return {"version": loaded.version, "seat": seat, "actions": actions}

    def record(self, game: Game, match_id: str) -> dict[str, Any]:
        """The whole record of a finished match, for anyone to check and replay."""
        loaded = self.load(game, match_id)
        match = loaded.match
        access.check_record(status_of(game, match))
        log: list[dict[str, Any]] = []
        while page := self.store.events(match_id, len(log), 1000):
            log += page
        state = match["state"]
        return fairness.build_record(
            match,
            engine_options(match["options"]),
            log,
            fairness.revealed(match, endings.outcome_of(game, match)),
            game.view(state, None),
        )

    # -- writing ---------------------------------------------------------------
    def create(
        self,
        game: Game,
        players: list[dict[str, Any]],
        options: dict[str, Any],
        seed: int | None,
        listed: bool = False,
        creator: str | None = None,
        calls: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A new match; ``options`` were loaded by the match options schema
        (the game's options plus ``turn_timeout_s``); a ``listed`` one shows
        in the lobby while it has open seats; ``creator``: the address that
        asked (never shown), which the quotas count against; ``calls``: the
        creation body's ``webhook`` and ``bot_deadline_s`` (service/domain/hooks.py)."""
        if not game.min_players <= len(players) <= game.max_players:
            raise Problem(
                422,
                "invalid_request",
                f"{game.name} takes {game.min_players} to {game.max_players} players",
            )
        for player in players:
            check_bot(game, player.get("bot"))
        players = [hooks.as_seat(p) for p in players]
        if seed is not None and any("name" not in p and not p.get("bot") for p in players):
            raise Problem(
                422,
                "seed_not_allowed",
                "a seed may be chosen only when every seat is yours (named now) or a bot; "
                "leave it out and the server draws one",
            )
        if all(p.get("bot") for p in players):
            options = bounded_for_bots(game, options)
        randomness = fairness.new_randomness(seed)
        try:
            state = game.setup(engine_options(options), len(players), randomness["seed"])
        except IllegalAction as refused:
            raise Problem(422, "invalid_options", refused.message) from None
        tokens = [auth.new_token() if "name" in p else None for p in players]
        match = {
            "id": uuid.uuid4().hex,
            "game": game.name,
            "options": options,
            **randomness,
            "seats": [
                {
                    "name": p.get("name"),
                    "token": auth.token_hash(t) if t else None,
                    "bot": p.get("bot"),
                }
                | ({"bot_url": p["bot_url"]} if "bot_url" in p else {})
                for p, t in zip(players, tokens, strict=True)
            ],
            "deadlines": [None] * len(players),
            "state": state,
            "creator": creator,
            "listed": listed,
            "created_at": time.time(),
        }
        self.scheduler.reserve(match, [i for i, p in enumerate(players) if p.get("bot")])
        secret = hooks.configure(match, players, calls or {})
        events = [{"type": "match_created", "seats": public_seats(match), **fairness.shown(match)}]
        waiting = status_of(game, match) == "waiting"
        if not waiting:
            events.append({"type": "match_started"})
        if self.quotas is not None and creator is not None:
            self.quotas.admit(creator, match["id"] if waiting else None, time.time())
        version = self._commit(game, match, 0, events).version
        if version is None:  # a 128-bit random id already taken: not in this universe
            raise Problem(409, "conflict", "could not create the match; retry")
        answer = present(game, match, version, None)
        for seat, token in zip(answer["seats"], tokens, strict=True):
            if token is not None:
                seat["token"] = token
        return answer | ({"secret": secret} if secret else {})

    def join(
        self,
        game: Game,
        match_id: str,
        seat: int,
        name: str | None,
        bot: str | None = None,
        address: str | None = None,
    ) -> dict[str, Any]:
        """Give open ``seat`` to a person (answering its token) or to a bot,
        which is charged to the joiner's ``address``."""
        check_bot(game, bot)
        for _ in range(self.settings.max_attempts):
            loaded = self.load(game, match_id)
            seats = loaded.match["seats"]
            access.check_join(loaded.match, seat)
            token = None if bot else auth.new_token()
            seats[seat] = {
                "name": name,
                "token": auth.token_hash(token) if token else None,
                "bot": bot,
                "joined": True,  # a stranger's seat: it may leave, not abort
            }
            if bot:
                if address and address != loaded.match.get("creator"):
                    seats[seat]["payer"] = address
                self.scheduler.reserve(loaded.match, [seat])
            events = [{"type": "seat_joined", "seat": seat, "name": name, "bot": bot}]
            if status_of(game, loaded.match) == "active":
                events.append({"type": "match_started"})
            if self._commit(game, loaded.match, loaded.version, events).version is not None:
                creator = loaded.match.get("creator")
                if self.quotas is not None and creator is not None:
                    waits = status_of(game, loaded.match) == "waiting"
                    self.quotas.joined(creator, match_id, waits, time.time())
                taken = {"seat": seat, "name": name, "bot": bot}
                return taken | ({"token": token} if token else {})
        raise Problem(409, "conflict", "too many concurrent changes to this match; retry")

    def play(
        self,
        game: Game,
        match_id: str,
        token: str,
        action: dict[str, Any],
        if_match: int | None = None,
        idempotency: str | None = None,
        legal: bool = False,
    ) -> tuple[bytes, bool]:
        """Play ``action``; return the answer's JSON (with the seat's legal
        actions next when ``legal``) and whether it is a replay.

        When this process remembers the match (it read or wrote it last), the
        action is judged on that and written in one round trip, the write's
        compare-and-set catching a match that moved on meanwhile. Only a
        match read now may refuse an action: a remembered one that refuses
        is read again first.
        """
        replay_key = None
        fingerprint = hashlib.sha256(orjson.dumps(action, option=orjson.OPT_SORT_KEYS)).hexdigest()
        if idempotency is not None:
            replay_key = idempotency_key(match_id, auth.token_hash(token), idempotency)
        loaded = self.store.remembered(match_id) if MATCH_ID.match(match_id) else None
        fresh = False
        for _ in range(self.settings.max_attempts):
            if loaded is None or loaded.match["game"] != game.name:
                loaded, fresh = self.load(game, match_id, replay_key), True
            try:
                if loaded.replay is not None:
                    return self._replayed(loaded.replay, fingerprint), True
                match = loaded.match
                seat = self.judge(game, loaded, token, if_match)
                try:
                    events = apply_logged(game, match, seat, action)
                except IllegalAction as refused:
                    raise from_illegal_action(refused) from None
                match["human_acted"] = True  # no abort from now on
            except Problem:
                if fresh:
                    raise
                loaded = None  # remembered, perhaps no longer current: read it
                continue
            body = orjson.dumps(present(game, match, loaded.version + 1, seat, legal))
            record = None
            if replay_key is not None:
                record = (
                    replay_key,
                    orjson.dumps({"action": fingerprint, "body": orjson.Fragment(body)}),
                )
            # the request's rate-limit counters, unless a read counted them
            written = self._commit(game, match, loaded.version, events, record, pending_counters())
            if written.replay is not None:
                return self._replayed(written.replay, fingerprint), True
            if written.version is not None:
                ACTIONS.labels(game.name, "seat").inc()
                return body, False
            if if_match is not None:
                now_at = written.current.version if written.current else loaded.version + 1
                raise Problem(
                    412, "version_mismatch", "the match changed meanwhile", version=now_at
                )
            CAS_RETRIES.labels(game.name).inc()
            loaded, fresh = written.current, True  # as the write found it (None: gone)
        raise Problem(409, "conflict", "too many concurrent changes to this match; retry")

    def judge(self, game: Game, loaded: Loaded, token: str, if_match: int | None) -> int:
        """The seat ``token`` plays for, if it may act now in ``loaded``."""
        seat = self.seat_for(loaded, token)
        if if_match is not None and if_match != loaded.version:
            raise Problem(
                412,
                "version_mismatch",
                f"the match is at version {loaded.version}, not {if_match}",
                version=loaded.version,
            )
        match = loaded.match
        access.check_act(match, status_of(game, match), seat, game.to_act(match["state"]))
        return seat

    def calls_out(self, loaded: Loaded | None) -> bool:
        """Whether the turn the server owes in ``loaded`` is an HTTP bot's
        (someone else's server decides it: the worker waits on the network)."""
        if loaded is None:
            return False
        due = server_turn(GAMES[loaded.match["game"]], loaded.match, time.time())
        return due is not None and due[1] == hooks.HTTP_BOT

    def play_server_turn(
        self, match_id: str, budget_s: float, rng: random.Random, loaded: Loaded | None = None
    ) -> bool:
        """Play one turn the server owes in ``match_id`` (as ``loaded``, if
        given, else read now): a bot's, or the random move of a seat whose
        clock ran out. False when none was due or another write won the race
        (whoever won rescheduled the match)."""
        loaded = loaded or self.store.load(match_id)
        if loaded is None:
            self.scheduler.unschedule(match_id)
            return False
        match = loaded.match
        game = GAMES[match["game"]]
        due = server_turn(game, match, time.time())
        if due is None:
            finished = status_of(game, match) == "finished"
            self.scheduler.schedule(match, loaded.version, due_at(game, match), finished)
            return False
        seat, policy, timed_out = due
        events = [{"type": "timeout", "seat": seat}] if timed_out else []
        if policy == hooks.HTTP_BOT:
            # someone else's player: bounded by its deadline, not the match's thinking budget
            with BOT_MOVE.labels(game.name, policy).time():
                action, why = httpbots.decide(game, match, loaded.version, seat, rng, budget_s)
            events += why
        else:
            policy, budget_s = self.scheduler.bot_move(match, policy, budget_s)
            started = time.perf_counter()
            with BOT_MOVE.labels(game.name, policy).time():
                action = choose_action(game, match["state"], seat, policy, rng, budget_s)
            if not timed_out:
                self.scheduler.charge(match, time.perf_counter() - started)
        events += apply_logged(game, match, seat, action)
        if self._commit(game, match, loaded.version, events, requeue=True).version is None:
            CAS_RETRIES.labels(game.name).inc()
            return False
        ACTIONS.labels(game.name, "clock" if timed_out else "bot").inc()
        return True

    # -- helpers ---------------------------------------------------------------
    def _commit(
        self,
        game: Game,
        match: dict[str, Any],
        expected: int,
        events: list[dict[str, Any]],
        record: tuple[str, bytes] | None = None,
        counters: list[Counter] | None = None,
        requeue: bool = False,
    ) -> Written:
        refresh_deadlines(game, match, time.time())
        status = status_of(game, match)
        ttl = self.settings.finished_ttl if status == "finished" else self.settings.idle_ttl
        if status == "waiting":
            ttl = self.settings.waiting_ttl
        version = expected + 1
        if status == "active":
            events = events + hooks.turn_notices(match, game.to_act(match["state"]), events)
        stamped = [{"version": version, **event} for event in events]
        try:
            written = self.store.commit(
                match["id"], expected, match, stamped, ttl, record, counters or []
            )
        except NotReplicated as unconfirmed:
            if unconfirmed.applied and owes_turns(match):  # should the write survive
                self._schedule(game, match, version, status == "finished", requeue)
            raise
        if written.version is not None and owes_turns(match):
            self._schedule(game, match, written.version, status == "finished", requeue)
        if written.version is not None and hooks.calling(match):
            webhooks.enqueue(self.store.client, match["id"])
        if written.version is not None and match.get("listed"):
            lobby.sync(self.store, game, match, events)
        return written

    def _schedule(
        self, game: Game, match: dict[str, Any], version: int, finished: bool, requeue: bool
    ) -> None:
        """Queue the turn the server owes ``match`` at ``version``; with
        replicas required, only once they have it too (a lost entry would
        leave a bot's turn unplayed)."""

        def queue(client: Any = None) -> None:
            due = due_at(game, match)
            self.scheduler.schedule(match, version, due, finished, requeue, client=client)

        if self.store.min_replicas:
            self.store.replicate(QUEUE_KEYS[0], queue)
        else:
            queue()

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


# -- seats, bots and clocks ------------------------------------------------------
CLOCK_OPTION = "turn_timeout_s"


def bounded_for_bots(game: Game, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with the game's ``arena_options`` where they are unset
    (null), for a table of bots only: under the rulebook's Ducale stock,
    rebuilt without limit, random bots can play on for hundreds of thousands
    of actions, the log growing all the while. A bound the creator chose
    stays."""
    arena = getattr(game, "arena_options", {})
    return options | {k: v for k, v in arena.items() if options.get(k) is None}


def engine_options(options: dict[str, Any]) -> dict[str, Any]:
    """A match's options less the service's own (the clock): the game's."""
    return {k: v for k, v in options.items() if k != CLOCK_OPTION}


def is_open(seat: dict[str, Any]) -> bool:
    """Free for anyone to join (a rematch seat ``awaits`` its holder instead)."""
    return seat["token"] is None and not seat.get("bot") and not seat.get("awaits")


def public_seats(match: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"seat": i, "name": s["name"], "bot": s.get("bot"), "open": is_open(s)}
        | ({"reserved": True} if s.get("awaits") else {})
        for i, s in enumerate(match["seats"])
    ]


def check_bot(game: Game, bot: str | None) -> None:
    if bot is not None and bot not in supported(game):
        raise Problem(
            422, "invalid_request", f"{game.name} offers the bots {list(supported(game))}"
        )


def apply_logged(
    game: Game, match: dict[str, Any], seat: int, action: dict[str, Any]
) -> list[dict[str, Any]]:
    """Apply ``action`` and return its events, preceded by the action itself:
    the log keeps every accepted action (for its seat's eyes only, as a move
    can carry secrets) so that a match replays from its seed. The event that
    ends the match reveals the seed and the salt."""
    events = endings.amend_match_over(game, match, game.apply(match["state"], seat, action))
    events = [fairness.revealed(match, e) if e["type"] == "match_over" else e for e in events]
    return [{"type": "action", "seat": seat, "action": action, "to": [seat]}, *events]


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
