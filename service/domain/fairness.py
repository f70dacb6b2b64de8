"""Provably fair deals: the seed commitment, the match record, its check.

Every match's randomness comes from one seed. The server draws it, with a
secret salt, and shows from creation on the commitment

    seed_commitment = SHA-256(seed as 8 bytes, big-endian, unsigned
                              || salt as its 32 bytes)

written as 64 lowercase hex digits (the salt travels as 64 hex digits too).
When the match is over, its outcome reveals the seed and the salt, and its
record (game, options, seed, salt, seats, every action in order with its
seat, the outcome) lets anyone check the commitment and replay the match
with the engine to the same outcome.

The server signs every record it serves (``service.domain.signing``): with its
public key, ``verify`` also checks that no field was changed, the ones the
replay cannot see included (names, id, options, ``seeded``). This module
imports only the engines, ``service.domain.signing`` (``cryptography``) and the
standard library, so that checking a record is a few lines of Python
anywhere the engines install:

    import json
    from service.domain.fairness import verify
    key = bytes.fromhex(PUBLIC_KEY)  # GET /v1/record-key's public_key
    print(verify(json.load(open("record.json")), key))  # [] when the record holds

A client may choose the seed itself only for practice, in a match where
every seat is its own or a bot: such a match says ``"seeded": true``
everywhere, so that nobody mistakes it for a fair deal.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import secrets
from typing import Any

from engines import GAMES
from service.domain import signing
from service.domain.endings import (
    CHEAP_BOT,
    RESIGNED_BOT,
    amend_match_over,
    ended_early,
    outcome_of,
)

FORMAT = "ludotheque-record/1"
SEED_BYTES = 8  # seeds are 0 .. 2**63 - 1
SALT_BYTES = 32


def draw_seed() -> int:
    return secrets.randbits(63)


def draw_salt() -> str:
    return secrets.token_hex(SALT_BYTES)


def commitment(seed: int, salt: str) -> str:
    """SHA-256 over the seed's 8 bytes (big-endian) then the salt's 32 bytes, in hex."""
    return hashlib.sha256(seed.to_bytes(SEED_BYTES, "big") + bytes.fromhex(salt)).hexdigest()


def new_randomness(seed: int | None) -> dict[str, Any]:
    """What a new match keeps about its randomness: the seed (drawn unless
    the client chose it, which makes the match ``seeded``) and a fresh salt."""
    return {
        "seed": draw_seed() if seed is None else seed,
        "salt": draw_salt(),
        "seeded": seed is not None,
    }


def shown(match: dict[str, Any]) -> dict[str, Any]:
    """What every view of a match says about its randomness, from creation on.
    A match stored before commitments existed has none: both are null."""
    salt = match.get("salt")
    return {
        "seeded": match.get("seeded"),
        "seed_commitment": None if salt is None else commitment(match["seed"], salt),
    }


def revealed(match: dict[str, Any], outcome: dict[str, Any] | None) -> dict[str, Any] | None:
    """``outcome`` (None while the match goes on) with the seed and salt revealed."""
    if outcome is None:
        return None
    reveal = {"seeded": match.get("seeded"), "seed": match["seed"], "salt": match.get("salt")}
    return {**outcome, **reveal}


REVEALED = ("seeded", "seed", "salt")
# what a match_over event carries that no replay causes: the ratings of a
# rated match (service.domain.ratings), kept apart from its record
NOT_REPLAYED = (*REVEALED, "ratings")


def build_record(
    match: dict[str, Any],
    engine_options: dict[str, Any],
    log: list[dict[str, Any]],
    outcome: dict[str, Any],
    final_view: dict[str, Any],
) -> dict[str, Any]:
    """The whole record of a finished match, from its whole ``log``: each
    action with its seat and the public events it caused (what every
    spectator saw), so that a changed action shows even when the outcome
    stays the same. ``final_view``: what a spectator sees at the end."""
    salt = match.get("salt")
    return {
        "format": FORMAT,
        "id": match["id"],
        "game": match["game"],
        "options": engine_options,
        "seats": [
            {"seat": i, "name": seat["name"], "bot": seat.get("bot")}
            for i, seat in enumerate(match["seats"])
        ],
        "seeded": match.get("seeded"),
        "seed": match["seed"],
        "salt": salt,
        "seed_commitment": None if salt is None else commitment(match["seed"], salt),
        "actions": played(log),
        "endings": endings(log),
        "outcome": outcome,
        "final_view": final_view,
    }


def played(log: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The log's actions in order, each with the public events that the
    engine returned with it (as ``apply`` returned them), and whether the
    server played it for a seat whose turn clock ran out (``timed_out``:
    not that seat's holder's action, which matters to an abort)."""
    steps: list[dict[str, Any]] = []
    version = None
    clock = set()
    for event in log:
        if event["type"] == "timeout":
            clock.add((event["version"], event["seat"]))
        elif event["type"] == "action":
            timed_out = (event["version"], event["seat"]) in clock
            steps.append(
                {
                    "seat": event["seat"],
                    "action": event["action"],
                    "timed_out": timed_out,
                    "events": [],
                }
            )
            version = event["version"]
        elif steps and event["version"] == version and "to" not in event:
            drop = ("index", "version", *(NOT_REPLAYED if event["type"] == "match_over" else ()))
            steps[-1]["events"].append({k: v for k, v in event.items() if k not in drop})
    return steps


def endings(log: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The resignations and the abort in ``log``, each with the number of
    actions before it: what ends or ranks a match outside its rules."""
    found, actions = [], 0
    for event in log:
        if event["type"] == "action":
            actions += 1
        elif event["type"] in ("resigned", "aborted"):
            found.append({"type": event["type"], "seat": event["seat"], "after": actions})
    return found


def set_up(game: Any, options: dict[str, Any], n_seats: int, seed: int) -> dict[str, Any]:
    """The state a record's match started from: its options and seed dealt
    to its seats (the options are copied: the engine may keep them)."""
    return game.setup(copy.deepcopy(options), n_seats, seed)


def replay_action(game: Any, state: dict[str, Any], step: dict[str, Any]) -> list[dict[str, Any]]:
    """Apply a record's ``step`` (seat and action) to ``state``; the public
    events it caused, those a record shows (a seat's private ones apart)."""
    events = game.apply(state, step["seat"], copy.deepcopy(step["action"]))
    return [event for event in events if "to" not in event]


def ended_outcome(
    game: Any, state: dict[str, Any], n_seats: int, ends: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The outcome the service gives a match whose replayed ``state`` had
    these ``ends`` (resignations, an abort), as ``service.domain.endings`` does."""
    resigned = [end["seat"] for end in ends if end["type"] == "resigned"]
    match = stand_in(state, n_seats, resigned)
    if any(end["type"] == "aborted" for end in ends):
        match["ended"] = ended_early(n_seats, [], "abort", ends[-1]["seat"])
    elif resigned and n_seats - len(resigned) <= 1:
        match["ended"] = ended_early(n_seats, resigned, "resignation", resigned[-1])
    return outcome_of(game, match)


def stand_in(state: dict[str, Any], n_seats: int, resigned: list[int]) -> dict[str, Any]:
    """A match as ``service.domain.endings`` reads it: its state, and the
    seats resigned so far (a copy: the caller's list goes on growing)."""
    return {"state": state, "seats": [None] * n_seats, "resigned": list(resigned)}


def verify(record: dict[str, Any], public_key: bytes | None = None) -> list[str]:
    """What is wrong with ``record``: [] when it is signed by ``public_key``
    (the server's, 32 bytes: ``GET /v1/record-key``), its seed and salt give
    its commitment, its actions replayed from its seed are all legal and
    cause the public events it records, its endings are ones the server
    allows (an abort only before any person's action, a resignation only by
    a seat still playing), and the replay ends with its outcome and its
    final view. Without ``public_key`` the signature is not checked: the
    names, id, options and ``seeded`` flag are then unproven."""
    problems = []
    try:
        game = GAMES[record["game"]]
        seed, salt, claimed = record["seed"], record["salt"], record["seed_commitment"]
        seats, actions, outcome = record["seats"], record["actions"], record["outcome"]
        options, final_view = record["options"], record["final_view"]
        ends = record.get("endings") or []
        if not isinstance(seats, list) or not isinstance(actions, list):
            raise TypeError("seats and actions are lists")
    except (KeyError, TypeError) as missing:
        return [f"not a record: {missing!r} is missing or of the wrong kind"]
    if public_key is not None and (unsigned := signing.check(record, public_key)):
        problems.append(unsigned)
    if not _is_seed(seed):
        return [*problems, "the seed is not a whole number from 0 to 2**63 - 1"]
    if salt is None or claimed is None:
        problems.append("no commitment: this match was stored before commitments existed")
    elif not _is_commitment(claimed) or not _is_salt(salt):
        problems.append("the salt or the commitment is not 64 lowercase hex digits")
    elif commitment(seed, salt) != claimed:
        problems.append("the seed and salt do not give the commitment shown during the match")
    if not isinstance(ends, list) or not all(_is_ending(end, len(actions)) for end in ends):
        return [*problems, "an ending is malformed or comes after actions the record lacks"]
    if any(a["after"] > b["after"] for a, b in itertools.pairwise(ends)):
        return [*problems, "the endings are not in the order of the actions"]
    # A record is untrusted input: whatever the engine raises on it is a
    # finding (an illegal move, a malformed action or options), not a crash.
    try:
        state = set_up(game, options, len(seats), seed)
    except Exception as refused:
        return [*problems, f"the options do not set up a match: {refused!r}"]
    resigned: list[int] = []
    ended = False  # by an abort, or resignations leaving one seat in
    for done in range(len(actions) + 1):
        for end in (end for end in ends if end["after"] == done):
            if illegal := _illegal_ending(
                game, state, seats, actions[:done], end, resigned, ended
            ):
                return [*problems, illegal]
            if end["type"] == "resigned":
                resigned.append(end["seat"])
            ended = end["type"] == "aborted" or len(seats) - len(resigned) <= 1
        if done == len(actions):
            break
        if ended:
            return [*problems, "the match went on after the ending the record shows"]
        try:
            step = actions[done]
            seat, seen = step["seat"], step["events"]
            if seat not in game.to_act(state):
                return [*problems, f"action {done + 1}: seat {seat} was not to act"]
            events = replay_action(game, state, step)
            # the engine's match_over, ranking resigned seats last as the server did
            events = amend_match_over(game, stand_in(state, len(seats), resigned), events)
        except Exception as refused:
            return [*problems, f"action {done + 1} does not replay: {refused!r}"]
        if _plain(events) != _plain(seen):
            return [*problems, f"action {done + 1} does not cause the events the record shows"]
    replayed = ended_outcome(game, state, len(seats), ends)
    if replayed is None:
        problems.append(f"the {len(actions)} actions do not finish the match")
    elif _plain({**replayed, "seeded": record.get("seeded"), "seed": seed, "salt": salt}) != (
        _plain(outcome)
    ):
        problems.append(f"the replay ends with {_plain(replayed)}, not the recorded outcome")
    elif _plain(game.view(state, None)) != _plain(final_view):
        problems.append("the replay does not leave the table as the record's final view shows it")
    return problems


def _illegal_ending(
    game: Any,
    state: dict[str, Any],
    seats: list[Any],
    before: list[dict[str, Any]],
    end: dict[str, Any],
    resigned: list[int],
    ended: bool,
) -> str | None:
    """Why the server could not have let ``end`` happen after the actions
    ``before`` (``state``: the match then), with ``resigned`` seats out and
    the match ``ended`` by an earlier ending; None when it could.
    ``service.domain.lifecycle`` decides the same live: an abort only while
    nobody but bots (or the turn clock) has acted, a resignation only by a
    seat still in a match still on."""
    kind, seat = end["type"], end["seat"]
    if not 0 <= seat < len(seats):
        return f"an ending names no seat {seat}: the match has {len(seats)}"
    if ended or game.outcome(state) is not None:
        return f"seat {seat} {kind} after the match was over"
    bot = _bot(seats[seat])
    if kind == "aborted":
        if resigned:
            return "an abort after a resignation: only a match nobody has acted in is aborted"
        acted = [n for n, step in enumerate(before, 1) if _by_a_person(step, seats)]
        if acted:
            return (
                f"an abort after a person's action (action {acted[0]}, seat "
                f"{before[acted[0] - 1]['seat']}): once a person has acted, only resigning ends "
                "the match early"
            )
        if bot is not None:
            return f"seat {seat} is a bot's: a bot cannot abort"
    else:
        if seat in resigned:
            return f"seat {seat} resigned twice: it had already resigned"
        # the bot a resigned seat is handed to (the cheap one past its
        # resigner's cap): a seat's bot in a record is its last
        if bot not in (None, RESIGNED_BOT, CHEAP_BOT):
            return f"seat {seat} is a bot's ({bot}): a bot cannot resign"
    return None


def _bot(seat: Any) -> Any:
    return seat.get("bot") if isinstance(seat, dict) else None


def _by_a_person(step: Any, seats: list[Any]) -> bool:
    """Whether a person played ``step``: its seat is no bot's, and its turn
    clock had not run out (then the server played for the seat)."""
    return _bot(seats[step["seat"]]) is None and not step.get("timed_out")


def _is_ending(end: Any, actions: int) -> bool:
    return (
        isinstance(end, dict)
        and end.get("type") in ("resigned", "aborted")
        and _is_count(end.get("seat"), 2**31)
        and _is_count(end.get("after"), actions)
    )


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True))


def _is_count(value: Any, most: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= most


def _is_seed(seed: Any) -> bool:
    return isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed < 2**63


def _is_salt(salt: Any) -> bool:
    return isinstance(salt, str) and len(salt) == 2 * SALT_BYTES and _is_hex(salt)


def _is_commitment(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 64 and _is_hex(value)


def _is_hex(text: str) -> bool:
    return all(ch in "0123456789abcdef" for ch in text)
