"""Secrets: tokens, hidden cards and the seed stay where they belong.

A random token is never accepted; seat A's token acts and reads as seat A
only; no token (nor its stored hash) and no hidden card appears in any view,
legal-actions answer, event, error message or log line, for every game. The
seed and the salt of its commitment appear nowhere before the end, and after
it only in the outcome, the `match_over` event and the record."""

from __future__ import annotations

import hashlib
import logging
import random
import secrets
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from engines import GAMES
from engines.core import State
from service.store.matches import log_key, match_key
from tests.engines.conformance import new_match
from tests.support.client import ApiClient

GAME_NAMES = sorted(GAMES)
OPTIONS = {"ducale": {"target_score": 100}}
# Steps between two full checks: Ducale's matches are long, Gaudí's short.
CHECK_EVERY = {"dekal": 2, "pacal": 2, "gaudi": 1, "ducale": 30}


def hidden(game: str, state: State, viewer: int | None) -> list[tuple[bytes, ...]]:
    """What ``viewer`` must not see, each collection as a sorted multiset."""
    return [multiset(cards) for cards in hidden_cards(game, state, viewer)]


def hidden_cards(game: str, state: State, viewer: int | None) -> list[list[Any]]:
    """What ``viewer`` must not see, as collections of cards (or tiles):
    others' hands, the order of face-down piles, face-down values."""
    found: list[list[Any]] = []
    if game == "dekal":
        # Nobody, not even the owner, sees a face-down value.
        for grid, face_up in zip(state["grids"], state["face_up"], strict=True):
            found.append(
                [
                    value
                    for row, up_row in zip(grid, face_up, strict=True)
                    for value, up in zip(row, up_row, strict=True)
                    if value is not None and not up
                ]
            )
        found.append(state["reserve"])
    elif game == "pacal":
        found += [hand for seat, hand in enumerate(state["hands"]) if seat != viewer]
        found += [foundation[1:] for foundation in state["foundations"]]
    elif game == "gaudi":
        found.append(state["pile"])
        found += [hand for seat, hand in enumerate(state["hands"]) if seat != viewer]
    elif game == "ducale":
        found.append(state["stock"])
        found += [hand for seat, hand in enumerate(state["hands"]) if seat != viewer]
    else:
        raise AssertionError(f"say what {game} hides")
    # Two cards alike happen by chance; three or more in the same multiset do not.
    return [cards for cards in found if len(cards) >= 3]


def multiset(cards: list[Any]) -> tuple[bytes, ...]:
    return tuple(sorted(map(orjson.dumps, cards)))


def lists(document: Any) -> Iterator[list[Any]]:
    if isinstance(document, list):
        yield document
        for item in document:
            yield from lists(item)
    elif isinstance(document, dict):
        for item in document.values():
            yield from lists(item)


REVEALED = ("seed", "salt")


def unrevealed(document: Any) -> Any:
    """``document`` less the seed and salt that the end reveals, where it
    reveals them: a match's outcome, a ``match_over`` event."""
    if not isinstance(document, dict):
        return document
    found = dict(document)
    if isinstance(found.get("outcome"), dict):
        found["outcome"] = {k: v for k, v in found["outcome"].items() if k not in REVEALED}
    if isinstance(found.get("events"), list):
        found["events"] = [
            {k: v for k, v in e.items() if k not in REVEALED or e["type"] != "match_over"}
            for e in found["events"]
        ]
    return found


class Watch:
    """Everything one match shows, checked for tokens, hidden cards and,
    until the end (then outside the outcome), its seed and salt."""

    def __init__(self, game: str, tokens: list[str], seed: int, salt: str) -> None:
        self.game = game
        self.forbidden = [*tokens, *(hashlib.sha256(t.encode()).hexdigest() for t in tokens)]
        self.seed, self.salt = seed, salt
        self.checked = 0

    def check(self, viewer: int | None, state: State, label: str, document: Any) -> None:
        if GAMES[self.game].outcome(state) is not None:
            document = unrevealed(document)
        text = orjson.dumps(document).decode()
        for secret in self.forbidden:
            assert secret not in text, f"{label}: a token or its hash in {text[:300]}"
        secret_sets = hidden(self.game, state, viewer)
        # A list the viewer may see can equal a hidden one by chance: in Dékal,
        # the centre, a manche's scores or totals and the last three face-down
        # values of a grid (a full run once saw [3, 5, 7] as both).
        view = orjson.loads(orjson.dumps(GAMES[self.game].view(state, viewer)))
        seen = {multiset(found) for found in lists(view)}
        for found in lists(document):
            if len(found) >= 3 and multiset(found) not in seen:
                assert multiset(found) not in secret_sets, (
                    f"{label}: seat {viewer} sees hidden cards {found}"
                )
        # The seed and the generator's state would give away every future draw.
        for number in self.seeds(state):
            assert number not in text, f"{label}: the seed, salt or RNG state in {text[:300]}"
        self.checked += 1

    def seeds(self, state: State) -> list[str]:
        return [str(self.seed), self.salt, str(state["rng"])]


def play_and_watch(
    api: ApiClient, redis_client: Any, game_name: str, players: int, seed: int
) -> tuple[Watch, str, State]:
    """Play a match whose seed the server drew (the test reads it from the
    store, to know what must stay hidden), watching everything it shows;
    ``seed`` drives the test's own choices."""
    game = GAMES[game_name]
    body: dict[str, Any] = {"players": [{"name": f"P{i}"} for i in range(players)]}
    if game_name in OPTIONS:
        body["options"] = OPTIONS[game_name]
    created = api.create(game_name, body).json()
    match_id, tokens = created["id"], [seat["token"] for seat in created["seats"]]
    stored = orjson.loads(redis_client.hget(match_key(match_id), "d"))
    watch = Watch(game_name, tokens, stored["seed"], stored["salt"])
    # the creation answer alone holds the tokens, by design
    untokened = [{k: v for k, v in seat.items() if k != "token"} for seat in created["seats"]]
    watch.check(None, stored["state"], "creation answer", {**created, "seats": untokened})
    state = new_match(game, players, stored["seed"], OPTIONS.get(game_name))
    record_url = f"{api.base}/v1/games/{game_name}/matches/{match_id}/record"
    rng = random.Random(seed)
    viewers: list[int | None] = [None, *range(players)]
    after = dict.fromkeys(viewers, 0)
    every = CHECK_EVERY.get(game_name, 1)
    if game_name != "dekal":  # in Dékal no seat holds anything the others cannot see
        theirs = api.get(game_name, match_id, tokens[1]).json()
        leaks = [found for found in lists(theirs) if found and len(found) >= 3]
        secret_sets = hidden(game_name, state, 0)
        assert any(multiset(found) in secret_sets for found in leaks), (
            "the check would not see seat 1's hand if seat 0 were shown it"
        )
    for step in range(20_000):
        to_act = game.to_act(state)
        if step % every == 0 or not to_act:
            for viewer in viewers:
                token = None if viewer is None else tokens[viewer]
                view = api.get(game_name, match_id, token)
                assert view.status_code == 200, view.text
                watch.check(viewer, state, "view", view.json())
                assert view.json()["your_seat"] == viewer
                page = api.events(game_name, match_id, token, after=after[viewer]).json()
                watch.check(viewer, state, "events", page)
                for event in page["events"]:
                    if event["type"] == "action":
                        assert event["seat"] == viewer, "an action record reached another seat"
                after[viewer] = page["next"]
        if not to_act:
            break
        if step % (every * 10) == 0:
            early = api.http.get(record_url)
            assert early.status_code == 409, early.text
            watch.check(None, state, "record before the end", early.json())
        seat = rng.choice(to_act)
        if step % every == 0:
            legal = api.legal(game_name, match_id, tokens[seat]).json()
            watch.check(seat, state, "legal actions", legal)
            actions = legal["actions"]
        else:
            actions = orjson.loads(orjson.dumps(game.legal_actions(state, seat)))
        action = rng.choice(actions)
        idle = [s for s in range(players) if s not in to_act]
        if idle and step % every == 0:
            # Seat A's token plays as A, whatever the body says: it cannot act for B.
            refused = api.act(game_name, match_id, tokens[idle[0]], action)
            assert refused.status_code == 409, refused.text
            assert refused.json()["code"] == "not_your_turn"
            watch.check(idle[0], state, "refusal", refused.json())
            broken = api.act(game_name, match_id, tokens[seat], {**action, "type": "cheat"})
            watch.check(seat, state, "schema error", broken.json())
        played = api.act(game_name, match_id, tokens[seat], action)
        assert played.status_code == 200, played.text
        game.apply(state, seat, action)
        watch.check(seat, state, "action answer", played.json())
    assert game.outcome(state) is not None
    record = api.http.get(record_url).json()
    assert (record["seed"], record["salt"]) == (watch.seed, watch.salt)
    for secret in watch.forbidden:
        assert secret not in orjson.dumps(record).decode(), "a token or its hash in the record"
    return watch, match_id, state


@pytest.mark.parametrize("game", GAME_NAMES)
def test_no_token_and_no_hidden_card_in_any_answer_event_or_log(live, redis_client, caplog, game):
    caplog.set_level(logging.DEBUG)
    api = ApiClient(live.base, live.http)
    players = min(3, GAMES[game].max_players)
    watch, match_id, state = play_and_watch(api, redis_client, game, players, seed=7)
    assert watch.checked > 20
    lines = [
        f"{record.getMessage()} {record.__dict__} {record.exc_text or ''}"
        for record in caplog.records
    ]
    assert lines, "the service's log lines were not captured"
    cards = [orjson.dumps(c).decode() for c in hidden_cards(game, state, None)]
    for line in lines:
        for secret in watch.forbidden:
            assert secret[:16] not in line, f"a token or its hash in a log line: {line[:300]}"
        for number in watch.seeds(state):
            assert number not in line, f"the seed, salt or RNG state in a log line: {line[:300]}"
        for shown in cards:
            assert shown not in line, f"hidden cards in a log line: {line[:300]}"
    # Redis keeps the tokens' hashes, never the tokens.
    stored = redis_client.hget(match_key(match_id), "d") + b"".join(
        value for _, fields in redis_client.xrange(log_key(match_id)) for value in fields.values()
    )
    tokens = watch.forbidden[:players]
    assert not any(token.encode() in stored for token in tokens)


def test_the_watch_tells_a_leak_from_a_visible_list_alike():
    state = new_match(GAMES["dekal"], 3, 5, None)
    state["face_up"][0] = [[True] * 4 for _ in range(4)]
    state["face_up"][0][3][1:] = [False] * 3
    down = sorted(state["grids"][0][3][1:])
    watch = Watch("dekal", [], seed=123_456_789, salt="a-salt")
    with pytest.raises(AssertionError, match="sees hidden cards"):
        watch.check(1, state, "leak", {"cards": down})
    state["centre"] = down  # the same values, face up in the centre
    watch.check(1, state, "view", {"centre": down})


def test_random_and_borrowed_tokens_are_never_accepted(live):
    api = ApiClient(live.base, live.http)
    body = {"players": [{"name": "Ada"}, {"name": "Bob"}], "seed": 5}
    match = api.create("dekal", body).json()
    other = api.create("dekal", body).json()
    token = match["seats"][0]["token"]
    action = api.legal("dekal", match["id"], token).json()["actions"][0]
    candidates = [secrets.token_urlsafe(32) for _ in range(60)]
    candidates += [
        other["seats"][0]["token"],  # a real token, of another match
        hashlib.sha256(token.encode()).hexdigest(),  # what Redis stores
        token.swapcase(),
        token[:-1],
        token + "A",
        token[::-1],
    ]
    for candidate in candidates:
        for answer in (
            api.get("dekal", match["id"], candidate),
            api.legal("dekal", match["id"], candidate),
            api.act("dekal", match["id"], candidate, action),
        ):
            assert answer.status_code == 403, answer.text
            assert answer.json()["code"] == "invalid_token"
            assert candidate not in answer.text
    assert api.get("dekal", match["id"]).json()["version"] == match["version"]


@pytest.mark.parametrize("game", GAME_NAMES)
def test_a_seat_reads_its_own_view_only(live, game):
    """A's token gives A's view and A's legal actions, never B's."""
    api = ApiClient(live.base, live.http)
    players = 2
    body: dict[str, Any] = {"players": [{"name": "A"}, {"name": "B"}], "seed": 8}
    if game in OPTIONS:
        body["options"] = OPTIONS[game]
    created = api.create(game, body).json()
    tokens = [seat["token"] for seat in created["seats"]]
    engine = GAMES[game]
    state = new_match(engine, players, 8, OPTIONS.get(game))
    for seat in range(players):
        answer = api.get(game, created["id"], tokens[seat]).json()
        assert answer["your_seat"] == seat
        assert answer["view"] == orjson.loads(orjson.dumps(engine.view(state, seat)))
        legal = api.legal(game, created["id"], tokens[seat]).json()
        assert legal["seat"] == seat
        mine = engine.legal_actions(state, seat) if seat in engine.to_act(state) else []
        assert legal["actions"] == orjson.loads(orjson.dumps(mine))
