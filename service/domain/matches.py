"""What a match does on each request, independent of HTTP framing: read
it, create it, join it, play in it.

Every write goes through ``service.domain.commits`` (read, decide,
compare-and-set, retried against the new state); what follows a write
(the server's turns, webhooks, the lobby) subscribes there. What the
domain needs from the store, the bot scheduler and the quotas is stated in
``service.domain.ports``; the application factory hands them in.
"""

from __future__ import annotations

import hashlib
import re
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from engines.ai.policies import supported
from engines.core import Game, IllegalAction
from service.domain import access, endings, fairness, hooks
from service.domain import ratings as rating
from service.domain import tokens as auth
from service.domain.clocks import engine_options
from service.domain.commits import Change, Commits, Committed, Settings, Subscriber
from service.domain.ports import (
    ArchivedMatches,
    BotSeats,
    CreationQuotas,
    CurrentRatings,
    Loaded,
    MatchStore,
)
from service.domain.problems import Problem, from_illegal_action
from service.domain.views import present, public_seats, status_of
from service.metrics import ACTIONS

MATCH_ID = re.compile(r"^[0-9a-f]{32}$")


def no_counters() -> Sequence[Any]:
    return ()


class Matches:
    def __init__(
        self,
        store: MatchStore,
        settings: Settings,
        bot_seats: BotSeats,
        replay_key: Callable[[str, str, str], str],
        quotas: CreationQuotas | None = None,
        subscribers: Sequence[Subscriber] = (),
        counters: Callable[[], Sequence[Any]] = no_counters,
        archive: ArchivedMatches | None = None,
        finishing: Callable[[str], None] | None = None,
        ratings: CurrentRatings | None = None,
    ) -> None:
        """``ratings``: the players' ratings, read when a rated match ends
        (None: rated matches are not rated); ``archive``: where finished
        matches are read once Redis has forgotten them (None: nowhere);
        ``finishing``: see ``Commits``.
        ``replay_key(match_id, owner, key)``: where the store keeps the
        first answer to ``owner``'s Idempotency-Key ``key``; ``counters``:
        the current request's rate-limit counters not counted yet (each
        given once: to the match's read, else to its write); ``subscribers``:
        what follows each commit, in order (``service.domain.commits``)."""
        self.store = store
        self.settings = settings
        self.bot_seats = bot_seats
        self.replay_key = replay_key
        self.quotas = quotas  # None: no creation limit nor cap on waiting matches
        self.counters = counters
        self.archive = archive
        ending = None if ratings is None else rating.ending(ratings.current)
        self.commits = Commits(store, settings, subscribers, finishing, ending)

    # -- reading ---------------------------------------------------------------
    def load(self, game: Game, match_id: str, replay_key: str | None = None) -> Loaded:
        loaded = None
        if MATCH_ID.match(match_id):
            loaded = self.store.load(match_id, replay_key, self.counters())
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

    def archived(self, game: Game, match_id: str) -> dict[str, Any] | None:
        """The match as a spectator saw it at its end, from the archive, once
        Redis has forgotten it (None: not archived, or no archive)."""
        if self.archive is None or not MATCH_ID.match(match_id):
            return None
        return self.archive.final(game.name, match_id)

    def stored_record(self, game: Game, match_id: str) -> bytes | None:
        """The signed record as the archive keeps it (JSON), None when not
        archived, no archive, or the archive unavailable."""
        if self.archive is None or not MATCH_ID.match(match_id):
            return None
        return self.archive.record_text(game.name, match_id)

    def record(self, game: Game, match_id: str) -> dict[str, Any]:
        """The whole record of a finished match, for anyone to check and
        replay: built from Redis while it has the match, else the archive's."""
        try:
            loaded = self.load(game, match_id)
        except Problem as problem:
            if problem.code == "match_not_found" and self.archived(game, match_id):
                kept = self.archive.record(game.name, match_id)  # type: ignore[union-attr]
                if kept is not None:
                    return kept
            raise
        return self.record_of(game, loaded)

    def record_of(self, game: Game, loaded: Loaded) -> dict[str, Any]:
        """The record of the finished match ``loaded`` (its log read whole)."""
        match_id = loaded.match["id"]
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
        rated: bool = False,
    ) -> dict[str, Any]:
        """A new match; ``options`` were loaded by the match options schema
        (the game's options plus ``turn_timeout_s``); a ``listed`` one shows
        in the lobby while it has open seats; ``creator``: the address that
        asked (never shown), which the quotas count against; ``calls``: the
        creation body's ``webhook`` and ``bot_deadline_s`` (service/domain/hooks.py);
        ``rated``: made by the ranked queue, its players rated when it ends."""
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
        check_players_seated_once([p["player"]["id"] for p in players if "player" in p])
        # a named seat gets a token of its own; a player's is held by the player
        tokens = [auth.new_token() if "name" in p and "player" not in p else None for p in players]
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
                | (held_by(p["player"]) if "player" in p else {})
                for p, t in zip(players, tokens, strict=True)
            ],
            "deadlines": [None] * len(players),
            "state": state,
            "creator": creator,
            "listed": listed,
            "created_at": time.time(),
        } | ({"rated": True} if rated else {})
        self.bot_seats.reserve(match, [i for i, p in enumerate(players) if p.get("bot")])
        secret = hooks.configure(match, players, calls or {})
        events = [{"type": "match_created", "seats": public_seats(match), **fairness.shown(match)}]
        waiting = status_of(game, match) == "waiting"
        if not waiting:
            events.append({"type": "match_started"})
        if self.quotas is not None and creator is not None:
            self.quotas.admit(creator, match["id"] if waiting else None, time.time())
        # one try: a 128-bit random id already taken (409) is not of this universe
        created = self.commits.change(
            lambda: Loaded(0, match, None), lambda _: Change(events), attempts=1
        )
        answer = present(game, match, created.loaded.version, None)
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
        player: Player | None = None,
    ) -> dict[str, Any]:
        """Give open ``seat`` to a person (answering its token), to a
        ``player`` (who holds it with its own token) or to a bot, which is
        charged to the joiner's ``address``."""
        check_bot(game, bot)
        token = None
        if player is not None:
            name = player["name"]

        def decide(loaded: Loaded) -> Change:
            nonlocal token
            seats = loaded.match["seats"]
            access.check_join(loaded.match, seat)
            if player is not None:
                check_players_seated_once([s.get("player") for s in seats] + [player["id"]])
            token = None if bot or player else auth.new_token()
            seats[seat] = {
                "name": name,
                "token": auth.token_hash(token) if token else None,
                "bot": bot,
                "joined": True,  # a stranger's seat: it may leave, not abort
            } | (held_by(player) if player else {})
            if bot:
                if address and address != loaded.match.get("creator"):
                    seats[seat]["payer"] = address
                self.bot_seats.reserve(loaded.match, [seat])
            events = [{"type": "seat_joined", "seat": seat, "name": name, "bot": bot}]
            if status_of(game, loaded.match) == "active":
                events.append({"type": "match_started"})
            return Change(events)

        match = self.change(game, match_id, decide).loaded.match
        creator = match.get("creator")
        if self.quotas is not None and creator is not None:
            waits = status_of(game, match) == "waiting"
            self.quotas.joined(creator, match_id, waits, time.time())
        taken = {"seat": seat, "name": name, "bot": bot}
        if player is not None:
            taken |= {"player": player["id"]}
        return taken | ({"token": token} if token else {})

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
            replay_key = self.replay_key(match_id, auth.token_hash(token), idempotency)
        remembered = self.store.remembered(match_id) if MATCH_ID.match(match_id) else None
        if remembered is not None and remembered.match["game"] != game.name:
            remembered = None
        body = b""

        def decide(loaded: Loaded) -> Change | None:
            nonlocal body
            if loaded.replay is not None:
                return None  # played already: the first answer stands
            match = loaded.match
            seat = self.judge(game, loaded, token, if_match)
            try:
                events = apply_logged(game, match, seat, action)
            except IllegalAction as refused:
                raise from_illegal_action(refused) from None
            match["human_acted"] = True  # no abort from now on
            body = orjson.dumps(present(game, match, loaded.version + 1, seat, legal))
            record = None
            if replay_key is not None:
                record = (
                    replay_key,
                    orjson.dumps({"action": fingerprint, "body": orjson.Fragment(body)}),
                )
            # the request's rate-limit counters, unless a read counted them
            return Change(events, record, self.counters())

        committed = self.change(
            game, match_id, decide, start=remembered, if_match=if_match, replay_key=replay_key
        )
        if committed.replay is not None:
            return replayed(committed.replay, fingerprint), True
        ACTIONS.labels(game.name, "seat").inc()
        return body, False

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

    def change(
        self,
        game: Game,
        match_id: str,
        decide: Callable[[Loaded], Change | None],
        start: Loaded | None = None,
        if_match: int | None = None,
        replay_key: str | None = None,
    ) -> Committed:
        """Change ``match_id`` as ``decide`` says (``Commits.change``),
        reading it as ``load`` does (404 for a match it cannot find)."""
        return self.commits.change(
            lambda: self.load(game, match_id, replay_key),
            decide,
            start=start,
            if_match=if_match,
        )


def replayed(record: bytes, fingerprint: str) -> bytes:
    """The first answer an idempotency ``record`` keeps, if it answered
    the same action (``fingerprint``)."""
    stored = orjson.loads(record)
    if stored["action"] != fingerprint:
        raise Problem(
            422,
            "idempotency_key_reused",
            "this Idempotency-Key was already used for another action",
        )
    return orjson.dumps(stored["body"])


# -- seats and bots ------------------------------------------------------------------
# a player taking a seat: its id, name, whether it is a bot, and ``holder``:
# the hash of its identity (service.domain.tokens), which the seat stores
Player = dict[str, Any]


def held_by(player: Player) -> dict[str, Any]:
    """What a seat held by ``player`` stores: the player, and its holder."""
    return {
        "name": player["name"],
        "token": player["holder"],
        "player": player["id"],
    } | ({"bot_account": True} if player.get("bot") else {})


def check_players_seated_once(players: Sequence[str | None]) -> None:
    """A player holds at most one seat of a match: its token acts for the seat
    it holds, which must be one."""
    seated = [p for p in players if p is not None]
    if len(seated) != len(set(seated)):
        raise Problem(409, "already_seated", "a player holds one seat of a match at most")


def bounded_for_bots(game: Game, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with the game's ``arena_options`` where they are unset
    (null), for a table of bots only: under the rulebook's Ducale stock,
    rebuilt without limit, random bots can play on for hundreds of thousands
    of actions, the log growing all the while. A bound the creator chose
    stays."""
    arena = getattr(game, "arena_options", {})
    return options | {k: v for k, v in arena.items() if options.get(k) is None}


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
