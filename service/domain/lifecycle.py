"""A match's life around its play: leave a seat, resign, abort, rematch.

Each is one compare-and-set write of the match (``service.domain.commits``:
decided again on the new state when another write wins), checked in full
before anything is written: a request that makes no sense now is refused with a 409 and
leaves Redis as it was. How the result reads afterwards is in
``service/domain/endings.py``.
"""

from __future__ import annotations

import copy
import time
import uuid
from collections.abc import Callable
from typing import Any

from engines.core import Event, Game, IllegalAction
from service.domain import access, hooks
from service.domain import tokens as auth
from service.domain.clocks import engine_options
from service.domain.commits import Change
from service.domain.endings import CHEAP_BOT, RESIGNED_BOT, ended_early
from service.domain.fairness import new_randomness, revealed, shown
from service.domain.matches import Matches
from service.domain.ports import Loaded
from service.domain.problems import Problem
from service.domain.views import present, public_seats, status_of

Decide = Callable[[dict[str, Any], int], list[Event]]


def _change(matches: Matches, game: Game, match_id: str, token: str, decide: Decide) -> Loaded:
    """Read the match, let ``decide`` change it for the token's seat (or
    refuse with a Problem), write it; again while other writes win."""

    def for_seat(loaded: Loaded) -> Change:
        return Change(decide(loaded.match, matches.seat_for(loaded, token)))

    return matches.change(game, match_id, for_seat).loaded


def leave(matches: Matches, game: Game, match_id: str, seat: int, token: str) -> dict[str, Any]:
    """Give ``seat`` back before the match starts: its token stops working
    and the seat is open again (and back in the lobby if the match is listed)."""

    def decide(match: dict[str, Any], holder: int) -> list[Event]:
        access.check_leave(match, status_of(game, match), holder, seat)
        held = match["seats"][seat]
        if match.get("rematch_of") and not held.get("joined"):
            # a rematch seat goes back to its player, who may take it again
            match["seats"][seat] = {"name": held["name"], "token": None, "bot": None}
            match["seats"][seat]["awaits"] = True
            match["seats"][seat] |= {k: held[k] for k in ("player", "bot_account") if k in held}
        else:
            match["seats"][seat] = {"name": None, "token": None, "bot": None}
        left = {"type": "seat_left", "seat": seat}
        return [left | ({"player": held["player"]} if held.get("player") else {})]

    loaded = _change(matches, game, match_id, token, decide)
    _still_waiting(matches, loaded.match, waiting=True)  # its waiting time starts again
    return present(game, loaded.match, loaded.version, None)


def rename_player(matches: Matches, game: Game, match_id: str, player_id: str, name: str) -> bool:
    """Give every seat of ``match_id`` that names the player ``player_id``
    (held, or a rematch seat reserved for it) the name ``name`` (the player
    is deleted), in one commit with a ``seat_renamed`` event per seat, so
    that followers learn of it; False when no seat changed."""

    renamed = False

    def decide(loaded: Loaded) -> Change | None:
        nonlocal renamed
        events: list[Event] = []
        for seat, held in enumerate(loaded.match["seats"]):
            if held.get("player") == player_id and held.get("name") != name:
                held["name"] = name
                events.append({"type": "seat_renamed", "seat": seat, "name": name})
        renamed = bool(events)
        return Change(events) if events else None

    matches.change(game, match_id, decide)
    return renamed


def resign(
    matches: Matches, game: Game, match_id: str, token: str, address: str | None = None
) -> dict[str, Any]:
    """Give up: ranked last; the match ends if one seat (or none) is left in,
    else a bot plays the seat from now on (charged to the resigner's ``address``)."""

    def decide(match: dict[str, Any], seat: int) -> list[Event]:
        access.check_resign(match, status_of(game, match), seat)
        resigned = match.setdefault("resigned", [])
        resigned.append(seat)
        match["human_acted"] = True
        n_seats = len(match["seats"])
        if n_seats - len(resigned) <= 1:
            match["ended"] = ended_early(n_seats, resigned, "resignation", seat)
            return [
                {"type": "resigned", "seat": seat},
                {"type": "match_over", **revealed(match, match["ended"])},
            ]
        held = match["seats"][seat]
        if address and address != match.get("creator"):
            held["payer"] = address
        # never refused; past the resigner's cap of bot seats, the bot that
        # costs next to nothing plays the seat
        held["bot"] = RESIGNED_BOT
        if not matches.bot_seats.reserve(match, [seat], force=True):
            held["bot"] = CHEAP_BOT
        return [{"type": "resigned", "seat": seat, "bot": held["bot"]}]

    loaded = _change(matches, game, match_id, token, decide)
    return present(game, loaded.match, loaded.version, matches.seat_for(loaded, token))


def abort(matches: Matches, game: Game, match_id: str, token: str) -> dict[str, Any]:
    """Call the match off while nobody but bots has acted: no winner. Only a
    seat the match was created with may (a stranger who joined may leave)."""

    def decide(match: dict[str, Any], seat: int) -> list[Event]:
        access.check_abort(match, status_of(game, match), seat)
        match["ended"] = ended_early(len(match["seats"]), [], "abort", seat)
        return [
            {"type": "aborted", "seat": seat},
            {"type": "match_over", **revealed(match, match["ended"])},
        ]

    loaded = _change(matches, game, match_id, token, decide)
    _still_waiting(matches, loaded.match, waiting=False)  # no longer counts against its creator
    return present(game, loaded.match, loaded.version, matches.seat_for(loaded, token))


def _still_waiting(matches: Matches, match: dict[str, Any], waiting: bool) -> None:
    """Tell the creator's quota that ``match`` waits on (from now) or no longer does."""
    creator = match.get("creator")
    if matches.quotas is not None and creator is not None:
        matches.quotas.joined(creator, match["id"], waiting, time.time())


# -- rematch -------------------------------------------------------------------
def new_seat_of(seat: int, n_seats: int) -> int:
    """Seats rotate by one in a rematch, so that another seat sits first:
    the old seat 1 becomes seat 0, and seat 0 the last one."""
    return (seat - 1) % n_seats


def rematch(
    matches: Matches, game: Game, match_id: str, token: str, address: str | None = None
) -> dict[str, Any]:
    """Offer a rematch of a finished match, or accept the one on offer; either
    way the caller takes their seat in the new match and gets its token.
    Whoever creates the rematch (the first to ask) is charged for it, from
    ``address``, as for any creation (its rate, its waiting match, its
    bots), before the offer is written: a refused rematch is never announced."""
    seat, prepared = 0, None

    def offer(loaded: Loaded) -> Change | None:
        nonlocal seat, prepared
        seat = matches.seat_for(loaded, token)
        match = loaded.match
        access.check_rematch(status_of(game, match))
        prepared = None
        if match.get("rematch") is not None:
            return None  # on offer already (perhaps by another seat): take a seat in it
        prepared = rematch_match(game, match, seat, address)
        _charge_creation(matches, prepared, awaiting(prepared) > 1)
        match["rematch"] = {"id": prepared["id"], "offered_by": seat}
        return Change([{"type": "rematch_offered", "seat": seat, "match": prepared["id"]}])

    match = matches.change(game, match_id, offer).loaded.match
    return _take_rematch_seat(matches, game, match, seat, address, prepared)


def awaiting(match: dict[str, Any]) -> int:
    """How many seats of a rematch still await their players."""
    return sum(1 for held in match["seats"] if held.get("awaits"))


def _take_rematch_seat(
    matches: Matches,
    game: Game,
    old: dict[str, Any],
    seat: int,
    address: str | None,
    prepared: dict[str, Any] | None,
) -> dict[str, Any]:
    """Seat ``seat`` of ``old`` takes its seat in the rematch, creating the
    rematch first if nobody has yet (a create is a write at version 0, so
    only one of several concurrent creators wins): the one ``prepared`` and
    charged with the offer, else one made and charged now."""
    new_id = old["rematch"]["id"]
    new_seat = new_seat_of(seat, len(old["seats"]))
    token, waited, status = "", False, ""

    def read() -> Loaded:
        nonlocal prepared
        found = matches.store.load(new_id)
        if found is not None:
            return found
        if prepared is None:  # offered, never created (its offerer failed): ours to make
            prepared = rematch_match(game, old, seat, address, new_id)
            _charge_creation(matches, prepared, awaiting(prepared) > 1)
        return Loaded(0, copy.deepcopy(prepared), None)

    def take(loaded: Loaded) -> Change:
        nonlocal token, waited, status
        new, events = loaded.match, []
        if loaded.version == 0:
            created = {"type": "match_created", "seats": public_seats(new), **shown(new)}
            events.append(created | {"rematch_of": old["id"]})
        held = new["seats"][new_seat]
        if new.get("ended"):
            raise Problem(409, "match_over", f"the rematch {new_id} was called off")
        if not held.get("awaits"):
            raise Problem(
                409,
                "rematch_already_accepted",
                f"seat {seat} has already taken its seat {new_seat} in the rematch {new_id}",
            )
        if held.get("player") is not None:  # the player's seat, held by the player as before
            token = ""
            new["seats"][new_seat] = {k: v for k, v in held.items() if k != "awaits"}
            new["seats"][new_seat]["token"] = old["seats"][seat]["token"]
        else:
            token = auth.new_token()
            new["seats"][new_seat] = {
                "name": held["name"],
                "token": auth.token_hash(token),
                "bot": None,
            }
        events.append({"type": "seat_joined", "seat": new_seat, "name": held["name"], "bot": None})
        status, waited = status_of(game, new), loaded.version > 0
        if status == "active":
            events.append({"type": "match_started"})
        return Change(events)

    new = matches.commits.change(read, take).loaded.match
    if waited:  # a waiting match before: its creator's quota learns it waits on, or not
        _still_waiting(matches, new, status == "waiting")
    return {
        "id": new_id,
        "game": game.name,
        "seat": new_seat,
        "name": new["seats"][new_seat]["name"],
        "status": status,
    } | ({"token": token} if token else {"player": new["seats"][new_seat]["player"]})


def _charge_creation(matches: Matches, new: dict[str, Any], waiting: bool) -> None:
    """Count the creation of ``new`` against its creator's quotas (429 past
    them): the creation rate, the waiting matches, the live bot seats."""
    creator = new.get("creator")
    if matches.quotas is not None and creator is not None:
        matches.quotas.admit(creator, new["id"] if waiting else None, time.time())
    bots = [i for i, held in enumerate(new["seats"]) if held.get("bot")]
    matches.bot_seats.reserve(new, bots)


def rematch_match(
    game: Game,
    old: dict[str, Any],
    asker: int,
    creator: str | None,
    new_id: str | None = None,
) -> dict[str, Any]:
    """The rematch of ``old`` asked for by its seat ``asker``: same game and
    options, a new seed, seats rotated; a bot's seat goes to the same bot, a
    person's awaits them; ``creator``: the address that asked, charged for
    it. The webhook goes along only when the asker is a seat ``old`` was
    created with: a stranger who joined cannot send its creator's receiver
    matches the creator never made (the old match's webhook still tells of
    the offer)."""
    n_seats = len(old["seats"])
    randomness = new_randomness(None)
    try:
        state = game.setup(engine_options(old["options"]), n_seats, randomness["seed"])
    except IllegalAction as refused:  # the same options set up the old match
        raise Problem(422, "invalid_options", refused.message) from None
    seats = []
    for new_seat in range(n_seats):
        held = old["seats"][(new_seat + 1) % n_seats]
        if held["token"] is None:  # a bot's seat from the start
            seats.append(
                {"name": held["name"], "token": None, "bot": held.get("bot")}
                | ({"bot_url": held["bot_url"]} if "bot_url" in held else {})
            )
        else:  # a person's (a player's stays the player's)
            seats.append(
                {"name": held["name"], "token": None, "bot": None, "awaits": True}
                | {k: held[k] for k in ("player", "bot_account") if k in held}
            )
    return {
        "id": new_id or uuid.uuid4().hex,
        "game": old["game"],
        "options": old["options"],
        **randomness,
        "seats": seats,
        "deadlines": [None] * n_seats,
        "state": state,
        "listed": False,
        "creator": creator,
        "created_at": time.time(),
        "rematch_of": old["id"],
        **({} if old["seats"][asker].get("joined") else hooks.carried(old)),
    }
