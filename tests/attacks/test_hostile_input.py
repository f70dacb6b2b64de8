"""Hostile input: oversized and deeply nested bodies, wrong types, huge and
negative numbers, unknown fields, odd unicode, malformed tokens and headers.
Every answer is a 4xx application/problem+json, never a 5xx, and nothing is
stored: the Redis database the server uses is the same, key for key, before
and after."""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis
import requests

from engines import GAMES
from tests.support.servers import LiveServer, url_of

GAME_NAMES = sorted(GAMES)
OPTIONS = {"ducale": {"target_score": 100}}
HUGE = 2**62  # within 64 bits: it reaches the schemas and the engines
TOO_BIG = 2**70  # beyond 64 bits: the JSON parser itself refuses it


@pytest.fixture(scope="module")
def private_db(redis_url: str) -> Iterator[redis.Redis]:
    """A database of its own (one per xdist worker), so that its whole
    keyspace can be compared before and after."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    db = 8 + int(worker) % 8 if worker.isdigit() else 8
    url = urlunsplit(urlsplit(redis_url)._replace(path=f"/{db}"))
    client = redis.Redis.from_url(url)
    yield client
    client.close()


@pytest.fixture(scope="module")
def server(private_db: redis.Redis) -> Iterator[LiveServer]:
    with LiveServer({"REDIS_URL": url_of(private_db)}) as live:
        yield live


def keyspace(client: redis.Redis) -> dict[bytes, bytes]:
    return {key: client.dump(key) for key in client.scan_iter(count=1000)}


class Hostile:
    """Sends requests and collects every answer that is not a 4xx problem."""

    def __init__(self, server: LiveServer) -> None:
        self.server = server
        self.failures: list[str] = []

    def send(self, label: str, method: str, path: str, **kwargs: Any) -> requests.Response:
        kwargs.setdefault("timeout", 30)
        answer = self.server.http.request(method, self.server.base + path, **kwargs)
        problem = answer.headers.get("Content-Type") == "application/problem+json"
        code = answer.json().get("code") if problem else None
        if not (400 <= answer.status_code < 500 and problem and code):
            self.failures.append(f"{label}: {answer.status_code} {answer.text[:200]}")
        return answer

    def post_json(self, label: str, path: str, body: Any, **kwargs: Any) -> requests.Response:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", **kwargs.pop("headers", {})}
        return self.send(label, "POST", path, data=data, headers=headers, **kwargs)


def new_match(server: LiveServer, game: str, players: int = 2) -> tuple[str, list[str]]:
    body: dict[str, Any] = {"players": [{"name": f"P{i}"} for i in range(players)], "seed": 4}
    if game in OPTIONS:
        body["options"] = OPTIONS[game]
    created = server.http.post(f"{server.base}/v1/games/{game}/matches", json=body)
    assert created.status_code == 201, created.text
    match = created.json()
    return match["id"], [seat["token"] for seat in match["seats"]]


def nested(depth: int, leaf: Any = 1) -> Any:
    for _ in range(depth):
        leaf = {"a": [leaf]}
    return leaf


BAD_CREATE_BODIES: list[tuple[str, bytes | Any]] = [
    ("not JSON", b"{players"),
    ("empty body", b""),
    ("trailing garbage", b'{"players": [{}, {}]} x'),
    ("invalid UTF-8", b'{"players": [{"name": "\xff\xfe"}, {}]}'),
    ("NaN", b'{"players": [{}, {}], "seed": NaN}'),
    ("Infinity", b'{"players": [{}, {}], "seed": Infinity}'),
    ("integer past 64 bits", b'{"players": [{}, {}], "seed": ' + str(TOO_BIG).encode() + b"}"),
    ("deep arrays", b"[" * 20_000 + b"]" * 20_000),
    ("deep objects", b'{"a":' * 6_000 + b"1" + b"}" * 6_000),
    ("null", None),
    ("array", [{}, {}]),
    ("string", "players"),
    ("number", 2),
    ("players null", {"players": None}),
    ("players string", {"players": "two"}),
    ("players object", {"players": {"0": {}}}),
    ("players too many", {"players": [{}] * 17}),
    ("players thousands", {"players": [{}] * 5000}),
    ("name number", {"players": [{"name": 7}, {}]}),
    ("name list", {"players": [{"name": ["Ada"]}, {}]}),
    ("name object", {"players": [{"name": {"first": "Ada"}}, {}]}),
    ("name too long", {"players": [{"name": "x" * 41}, {}]}),
    ("name NUL", {"players": [{"name": "Ada\u0000"}, {}]}),
    ("name newline", {"players": [{"name": "Ada\nBob"}, {}]}),
    ("name escape", {"players": [{"name": "\u001b[31mred"}, {}]}),
    ("name blank", {"players": [{"name": "   "}, {}]}),
    ("name leading blank", {"players": [{"name": " Ada"}, {}]}),
    ("name line separator first", {"players": [{"name": "\u2028Ada"}, {}]}),
    ("name and bot", {"players": [{"name": "Ada", "bot": "random"}, {}]}),
    ("unknown bot", {"players": [{"bot": "skynet"}, {}]}),
    ("bot number", {"players": [{"bot": 1}, {}]}),
    ("player unknown field", {"players": [{"name": "Ada", "admin": True}, {}]}),
    ("unknown field", {"players": [{}, {}], "admin": True}),
    ("seed negative", {"players": [{}, {}], "seed": -1}),
    ("seed huge", {"players": [{}, {}], "seed": 2**63}),
    ("seed float", {"players": [{}, {}], "seed": 1.5}),
    ("seed string", {"players": [{}, {}], "seed": "1"}),
    ("seed bool", {"players": [{}, {}], "seed": True}),
    ("options list", {"players": [{}, {}], "options": [1]}),
    ("options unknown", {"players": [{}, {}], "options": {"cheat": True}}),
    ("options deep", {"players": [{}, {}], "options": nested(200)}),
    ("name deep", {"players": [{"name": nested(200)}, {}]}),
    ("clock negative", {"players": [{}, {}], "options": {"turn_timeout_s": -1}}),
    ("clock huge", {"players": [{}, {}], "options": {"turn_timeout_s": HUGE}}),
    ("clock float", {"players": [{}, {}], "options": {"turn_timeout_s": 0.5}}),
]


def test_hostile_creations_are_refused_and_store_nothing(server, private_db):
    hostile = Hostile(server)
    before = keyspace(private_db)
    for game in GAME_NAMES:
        path = f"/v1/games/{game}/matches"
        for label, body in BAD_CREATE_BODIES:
            hostile.post_json(f"{game} {label}", path, body)
        for key, value in option_mutations(game):
            body = {"players": [{}, {}], "options": {key: value}}
            hostile.post_json(f"{game} option {key}={value!r}", path, body)
    oversized = b'{"players": [{}, {}], "pad": "' + b"x" * 200_000 + b'"}'
    hostile.post_json("oversized", "/v1/games/dekal/matches", oversized)
    hostile.send(
        "oversized, chunked",
        "POST",
        "/v1/games/dekal/matches",
        data=iter([oversized[i : i + 8192] for i in range(0, len(oversized), 8192)]),
        headers={"Content-Type": "application/json"},
    )
    hostile.post_json(
        "Content-Length past the limit",
        "/v1/games/dekal/matches",
        b"{}",
        headers={"Content-Length": str(10**12)},
    )
    assert not hostile.failures, "\n".join(hostile.failures)
    assert keyspace(private_db) == before


# Options without an upper bound (test_every_option_is_bounded pins them down).
UNBOUNDED_OPTIONS = {("ducale", "target_score")}


def option_mutations(game: str) -> Iterator[tuple[str, Any]]:
    """Each option of ``game`` set to values of the wrong type or range."""
    for name in GAMES[game].options_schema().fields:
        for value in ("x" * 5000, [], {}, HUGE, -HUGE, 1.5e300, -1):
            if value != HUGE or (game, name) not in UNBOUNDED_OPTIONS:
                yield name, value


def test_every_option_is_bounded(server, private_db):
    hostile = Hostile(server)
    before = keyspace(private_db)
    for game, name in sorted(UNBOUNDED_OPTIONS):
        body = {"players": [{}, {}], "options": {name: HUGE}}
        hostile.post_json(f"{game} {name}", f"/v1/games/{game}/matches", body)
    assert not hostile.failures, hostile.failures
    assert keyspace(private_db) == before


@pytest.mark.parametrize("where", ["create", "join"])
def test_a_lone_surrogate_in_a_name_is_refused(server, private_db, where):
    hostile = Hostile(server)
    body = b'{"name": "Ada\\ud800"}'
    path = "/v1/games/dekal/matches"
    if where == "create":
        body = b'{"players": [' + body + b", {}]}"
    else:
        created = server.http.post(server.base + path, json={"players": [{}, {}]}).json()
        path += f"/{created['id']}/seats/0"
    before = keyspace(private_db)
    hostile.post_json(where, path, body)
    assert not hostile.failures, hostile.failures
    assert keyspace(private_db) == before


def test_an_event_index_past_64_bits_is_refused(server):
    hostile = Hostile(server)
    match_id, _ = new_match(server, "dekal")
    path = f"/v1/games/dekal/matches/{match_id}"
    hostile.send("events", "GET", f"{path}/events?after={'9' * 40}")
    hostile.send("stream", "GET", f"{path}/stream?after={'9' * 40}")
    assert not hostile.failures, hostile.failures


def mutations(action: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``action`` with one field broken at a time, and with an extra field."""
    for key in action:
        if key == "type":
            for bad in (None, 7, "x" * 10_000, "REVEAL", ""):
                yield f"type={bad!r:.20}", {**action, "type": bad}
            continue
        for bad in (None, "1", True, [], {}, HUGE, -HUGE, -1, 1.5, "é" * 3000, nested(100)):
            yield f"{key}={bad!r:.20}", {**action, key: bad}
        shorter = {k: v for k, v in action.items() if k != key}
        yield f"without {key}", shorter
    yield "unknown field", {**action, "admin": True}


@pytest.mark.parametrize("game", GAME_NAMES)
def test_hostile_actions_are_refused_and_store_nothing(server, private_db, game):
    hostile = Hostile(server)
    match_id, tokens = new_match(server, game)
    path = f"/v1/games/{game}/matches/{match_id}"
    seat = server.http.get(server.base + path).json()["to_act"][0]
    auth = {"Authorization": f"Bearer {tokens[seat]}"}
    legal = server.http.get(server.base + path + "/legal-actions", headers=auth).json()["actions"]
    before = keyspace(private_db)
    tried = 0
    for action in random.Random(game).sample(legal, min(3, len(legal))):
        for label, broken in mutations(action):
            if broken in legal:
                continue  # still a legal move: not hostile
            hostile.post_json(f"{label} in {action}", path + "/actions", broken, headers=auth)
            tried += 1
    for label, body in BAD_CREATE_BODIES[:10]:
        hostile.post_json(label, path + "/actions", body, headers=auth)
    assert tried >= 5
    assert not hostile.failures, "\n".join(hostile.failures[:20])
    assert keyspace(private_db) == before


def test_malformed_tokens_and_headers_are_refused_and_store_nothing(server, private_db):
    hostile = Hostile(server)
    match_id, tokens = new_match(server, "dekal")
    path = f"/v1/games/dekal/matches/{match_id}"
    action = {"type": "reveal", "row": 0, "col": 0}
    good = {"Authorization": f"Bearer {tokens[0]}"}
    before = keyspace(private_db)
    for label, value in [
        ("scheme only", "Bearer"),
        ("scheme and blanks", "Bearer    "),
        ("Basic", "Basic QWRhOnNlY3JldA=="),
        ("no scheme", tokens[0]),
        ("token with a blank", f"Bearer {tokens[0][:10]} {tokens[0][10:]}"),
        ("two tokens", f"Bearer {tokens[0]}, Bearer {tokens[1]}"),
        ("a long token", "Bearer " + "A" * 4000),
        ("latin-1 token", "Bearer é".encode("latin-1")),
        ("NUL in token", f"Bearer {tokens[0]}\x00"),
        ("truncated token", f"Bearer {tokens[0][:-1]}"),
        ("token with a suffix", f"Bearer {tokens[0]}x"),
    ]:
        headers = {"Authorization": value}
        hostile.post_json(f"action, {label}", path + "/actions", action, headers=headers)
        hostile.send(f"legal actions, {label}", "GET", path + "/legal-actions", headers=headers)
        hostile.send(f"view, {label}", "GET", path, headers=headers)
    for label, headers in [
        ("If-Match a word", {"If-Match": "yesterday"}),
        ("If-Match negative", {"If-Match": '"-1"'}),
        ("If-Match 30 digits", {"If-Match": '"' + "9" * 30 + '"'}),
        ("If-Match a list", {"If-Match": '"1", "2"'}),
        ("If-Match star", {"If-Match": "*"}),
        ("If-Match stale", {"If-Match": '"0"'}),
        ("If-Match future", {"If-Match": '"999999"'}),
        ("Idempotency-Key empty", {"Idempotency-Key": ""}),
        ("Idempotency-Key too long", {"Idempotency-Key": "k" * 201}),
        ("charset latin-1 and bad bytes", {"Content-Type": "application/json; charset=latin-1"}),
    ]:
        body = b'{"type": "reveal", "row": 0, "col": "\xe9"}' if "latin" in label else action
        hostile.post_json(label, path + "/actions", body, headers={**good, **headers})
    for label, query in [
        ("after negative", "after=-1"),
        ("after a word", "after=abc"),
        ("limit zero", "limit=0"),
        ("limit huge", f"limit={HUGE}"),
        ("wait NaN", "wait=nan"),
        ("wait infinite", "wait=1e309"),
        ("wait negative", "wait=-1"),
    ]:
        hostile.send(label, "GET", f"{path}/events?{query}")
    hostile.send("Last-Event-ID a word", "GET", path + "/stream", headers={"Last-Event-ID": "x"})
    for label, bad_path in [
        ("unknown game", "/v1/games/chess/matches"),
        ("unicode id", "/v1/games/dekal/matches/%C3%A9"),
        ("long id", "/v1/games/dekal/matches/" + "a" * 5000),
        ("traversal", "/v1/games/dekal/matches/..%2F..%2Fadmin"),
        ("seat negative", f"{path}/seats/-1"),
        ("seat huge", f"{path}/seats/{TOO_BIG}"),
    ]:
        hostile.post_json(label, bad_path, {"name": "Eve"})
    hostile.send("wrong method", "DELETE", path)
    hostile.send("wrong method on actions", "PUT", path + "/actions", json=action, headers=good)
    assert not hostile.failures, "\n".join(hostile.failures)
    assert keyspace(private_db) == before


@pytest.mark.parametrize(
    "name",
    [
        "Zoë 🎲 東京",
        "مرحبا",  # right to left
        "e\u0301",  # a combining accent
        "👨\u200d👩\u200d👧",  # one emoji made of several code points
        "Ω" * 40,
    ],
)
def test_odd_but_printable_names_are_kept_exactly(server, name):
    created = server.http.post(
        f"{server.base}/v1/games/dekal/matches", json={"players": [{"name": name}, {}]}
    )
    assert created.status_code == 201, created.text
    match = created.json()
    assert match["seats"][0]["name"] == name
    again = server.http.get(f"{server.base}/v1/games/dekal/matches/{match['id']}").json()
    assert again["seats"][0]["name"] == name


@pytest.mark.parametrize(
    "name",
    [
        "Ada\u009b31m",  # C1 control (CSI): a terminal escape
        "A\u0085da",  # C1 control (next line)
        "\u202eadA",  # right-to-left override: shows another name
        "Ada\u2066",  # an unclosed bidi isolate
        "\u200b",  # zero width space: an invisible name
        "\ufeff",  # byte order mark alone
    ],
)
def test_names_with_controls_or_nothing_visible_are_refused(server, private_db, name):
    before = keyspace(private_db)
    created = server.http.post(
        f"{server.base}/v1/games/dekal/matches", json={"players": [{"name": name}, {}]}
    )
    assert created.status_code == 422, created.text
    assert keyspace(private_db) == before
