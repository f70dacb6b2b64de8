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

This module imports only the engines and the standard library, so that
checking a record is a few lines of Python anywhere the engines install:

    import json
    from service.fairness import verify
    print(verify(json.load(open("record.json"))))  # [] when the record holds

A client may choose the seed itself only for practice, in a match where
every seat is its own or a bot: such a match says ``"seeded": true``
everywhere, so that nobody mistakes it for a fair deal.
"""

from __future__ import annotations

import copy
import hashlib
import json
import secrets
from typing import Any

from engines import GAMES
from service.endings import ended_early, outcome_of

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
    engine returned with it (as ``apply`` returned them)."""
    steps: list[dict[str, Any]] = []
    version = None
    for event in log:
        if event["type"] == "action":
            steps.append({"seat": event["seat"], "action": event["action"], "events": []})
            version = event["version"]
        elif steps and event["version"] == version and "to" not in event:
            drop = ("index", "version", *(REVEALED if event["type"] == "match_over" else ()))
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


def ended_outcome(
    game: Any, state: dict[str, Any], n_seats: int, ends: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The outcome the service gives a match whose replayed ``state`` had
    these ``ends`` (resignations, an abort), as ``service.endings`` does."""
    resigned = [end["seat"] for end in ends if end["type"] == "resigned"]
    stand_in: dict[str, Any] = {"state": state, "seats": [None] * n_seats, "resigned": resigned}
    if any(end["type"] == "aborted" for end in ends):
        stand_in["ended"] = ended_early(n_seats, [], "abort", ends[-1]["seat"])
    elif resigned and n_seats - len(resigned) <= 1:
        stand_in["ended"] = ended_early(n_seats, resigned, "resignation", resigned[-1])
    return outcome_of(game, stand_in)


def verify(record: dict[str, Any]) -> list[str]:
    """What is wrong with ``record``: [] when its seed and salt give its
    commitment and its actions, replayed from its seed, are all legal and
    cause the public events it records, and end the match with its outcome
    and its final view."""
    problems = []
    try:
        game = GAMES[record["game"]]
        seed, salt, claimed = record["seed"], record["salt"], record["seed_commitment"]
        seats, actions, outcome = record["seats"], record["actions"], record["outcome"]
        options, final_view = record["options"], record["final_view"]
    except (KeyError, TypeError) as missing:
        return [f"not a record: {missing!r} is missing or of the wrong kind"]
    if not _is_seed(seed):
        return ["the seed is not a whole number from 0 to 2**63 - 1"]
    if salt is None or claimed is None:
        problems.append("no commitment: this match was stored before commitments existed")
    elif not _is_commitment(claimed) or not _is_salt(salt):
        problems.append("the salt or the commitment is not 64 lowercase hex digits")
    elif commitment(seed, salt) != claimed:
        problems.append("the seed and salt do not give the commitment shown during the match")
    # A record is untrusted input: whatever the engine raises on it is a
    # finding (an illegal move, a malformed action or options), not a crash.
    try:
        state = game.setup(copy.deepcopy(options), len(seats), seed)
    except Exception as refused:
        return [*problems, f"the options do not set up a match: {refused!r}"]
    for number, step in enumerate(actions, 1):
        try:
            seat, action, seen = step["seat"], copy.deepcopy(step["action"]), step["events"]
            if seat not in game.to_act(state):
                return [*problems, f"action {number}: seat {seat} was not to act"]
            events = game.apply(state, seat, action)
        except Exception as refused:
            return [*problems, f"action {number} does not replay: {refused!r}"]
        if _plain([e for e in events if "to" not in e]) != _plain(seen):
            return [*problems, f"action {number} does not cause the events the record shows"]
    ends = record.get("endings") or []
    if any(not _is_count(end.get("after"), len(actions)) for end in ends):
        return [*problems, "an ending comes after actions the record does not hold"]
    resigned = sum(end["type"] == "resigned" for end in ends)
    final = ends[-1] if ends else None
    ends_match = final is not None and (final["type"] == "aborted" or len(seats) - resigned <= 1)
    if ends_match and final["after"] != len(actions):
        return [*problems, "the match went on after the ending the record shows"]
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
