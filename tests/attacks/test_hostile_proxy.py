"""Hostile clients behind a proxy, and small holes (issue 31, points 12, 13
and 6 for the request limits and follower caps): each test reproduced its
hole over HTTP before the fix.

- an IPv6 client owns a /64 (2^64 addresses): counted per address, it got
  a fresh quota with each one, for every per-address counter;
- ``?Token=``, ``?ACCESS_TOKEN=`` and percent-encoded spellings of the
  token parameters were ignored (the page then followed as a spectator);
- werkzeug's redirects (``/v1//games`` to ``/v1/games``) named whatever
  the request's ``Host`` header said, in ``Location`` and in the body;
- a 429 must say what was exceeded, never whose: no answer contains the
  client's address.
"""

from __future__ import annotations

import http.client
import json
import re
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack

import pytest
import requests

from service.http.addresses import client_key
from tests.support.problems import assert_problem
from tests.support.servers import PUBLIC, LiveServer

HOSTILE_HOST = "attacker.example"


def serve(live_server: Callable[..., LiveServer], **config: object) -> LiveServer:
    """The server as deployed in the open, behind one proxy."""
    return live_server(**PUBLIC, **config)


@pytest.fixture
def public(live_server: Callable[..., LiveServer]) -> LiveServer:
    return serve(live_server)


def network() -> str:
    """A /64 of the documentation prefix that no other test uses."""
    word = uuid.uuid4().hex
    return f"2001:db8:{word[:4]}:{word[4:8]}"


def from_address(address: str) -> dict[str, str]:
    return {"X-Forwarded-For": address}


# --- IPv6 clients are counted per /64 (point 12) -----------------------------


def create(server: LiveServer, address: str, body: dict | None = None) -> requests.Response:
    return server.http.post(
        server.url("/v1/games/dekal/matches"),
        json=body or {"players": [{"name": "bait"}, {}]},
        headers=from_address(address),
        timeout=10,
    )


def waiting_matches(server: LiveServer, address: str) -> requests.Response:
    return create(server, address)


def matches_created(server: LiveServer, address: str) -> requests.Response:
    return create(server, address, {"players": [{"name": "Ada"}, {"name": "Bob"}]})


def bot_seats(server: LiveServer, address: str) -> requests.Response:
    return create(server, address, {"players": [{"name": "Ada"}, {"bot": "random"}]})


def requests_made(server: LiveServer, address: str) -> requests.Response:
    return server.http.get(server.url("/v1/games"), headers=from_address(address), timeout=10)


@pytest.mark.parametrize(
    "address, key",
    [
        ("203.0.113.7", "203.0.113.7"),
        (" 203.0.113.7 ", "203.0.113.7"),
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
        ("2001:DB8:1:2::", "2001:db8:1:2::/64"),
        ("2001:db8:1:3::1", "2001:db8:1:3::/64"),
        ("fe80::1%eth0", "fe80::/64"),
        ("::1", "::/64"),
        ("::ffff:203.0.113.7", "203.0.113.7"),
        ("unknown", "unknown"),
        ("", ""),
    ],
)
def test_a_client_is_counted_by_its_ipv4_address_or_its_ipv6_64(address, key):
    assert client_key(address) == key


# counter: (settings that make its cap one, one use of it, the code over it)
COUNTERS: dict[str, tuple[dict, Callable, str]] = {
    "waiting matches": (
        {"MAX_WAITING_PER_ADDRESS": 1},
        waiting_matches,
        "too_many_waiting_matches",
    ),
    "match creations": (
        {"RATE_LIMIT_CREATE": "1/minute"},
        matches_created,
        "too_many_matches_created",
    ),
    "bot seats": ({"BOT_SEATS_PER_ADDRESS": 1}, bot_seats, "bot_seats_exceeded"),
    "requests": ({"RATE_LIMIT_PER_ADDRESS": "1/minute"}, requests_made, "too_many_requests"),
}


@pytest.mark.parametrize("counter", list(COUNTERS))
def test_two_addresses_of_one_ipv6_64_share_a_quota(counter, live_server):
    settings, use, code = COUNTERS[counter]
    server = serve(live_server, **settings)
    prefix = network()
    first = use(server, f"{prefix}::1")
    assert first.status_code in (200, 201), first.text
    same = use(server, f"{prefix}:ffff:ffff:ffff:fffe")
    assert same.status_code == 429, f"{counter}: another address of the /64 got a new quota"
    assert same.json()["code"] == code
    other = use(server, f"{network()}::1")
    assert other.status_code in (200, 201), f"{counter}: another /64 shares the quota"


def test_an_ipv4_mapped_address_counts_as_its_ipv4(live_server):
    server = serve(live_server, MAX_WAITING_PER_ADDRESS=1)
    word = uuid.uuid4().int
    address = f"10.{word % 250}.{word // 250 % 250}.{word // 62500 % 250}"
    assert waiting_matches(server, address).status_code == 201
    mapped = waiting_matches(server, f"::ffff:{address}")
    assert_problem(mapped, 429, "too_many_waiting_matches")


def test_followers_of_one_ipv6_64_share_their_cap(live_server):
    server = serve(live_server, FOLLOWERS_PER_ADDRESS=1, FOLLOWERS_PER_TOKEN=0)
    created = matches_created(server, "192.0.2.1")
    url = server.url(f"/v1/games/dekal/matches/{created.json()['id']}/stream")
    prefix = network()
    with ExitStack() as held:

        def follow(address: str) -> requests.Response:
            answer = requests.get(url, headers=from_address(address), stream=True, timeout=10)
            held.callback(answer.close)
            return answer

        assert follow(f"{prefix}::1").status_code == 200
        same = follow(f"{prefix}::2")
        assert_problem(same, 429, "too_many_followers")
        assert follow(f"{network()}::1").status_code == 200


# --- No address in any answer (point 6, request limits and follower caps) ----


def spellings(address: str) -> list[str]:
    """What would give the address away: as sent, and its /64 as counted."""
    words = address.split("::")[0]
    return [address, words, words.replace(":", "%3A")]


def test_a_429_says_what_was_exceeded_never_whose(live_server):
    server = serve(live_server, RATE_LIMIT_PER_ADDRESS="2/minute", FOLLOWERS_PER_ADDRESS=1)
    match = matches_created(server, "192.0.2.2").json()
    address = f"{network()}::7"
    answers = [requests_made(server, address) for _ in range(3)]
    assert answers[-1].status_code == 429
    assert "rate limit" in answers[-1].json()["detail"]
    url = server.url(f"/v1/games/dekal/matches/{match['id']}/stream")
    follower = f"{network()}::9"
    with requests.get(url, headers=from_address(follower), stream=True, timeout=10) as held:
        assert held.status_code == 200
        over = requests.get(url, headers=from_address(follower), timeout=10)
    assert over.status_code == 429 and "per address" in over.json()["detail"]
    for answer, sent in [(answers[-1], address), (over, follower)]:
        seen = answer.text + " ".join(f"{k}: {v}" for k, v in answer.headers.items())
        for spelling in spellings(sent):
            assert spelling.lower() not in seen.lower(), (spelling, seen)


# --- A token in a URL, however it is spelt (point 13) -------------------------

SPELLINGS = [
    "Token",
    "TOKEN",
    "ACCESS_TOKEN",
    "Access_Token",
    "%74oken",
    "to%6Ben",
    "%54%4F%4B%45%4E",
    "access%5Ftoken",
    "token%20",
    # the adversary's, served as a spectator before: by meaning, not by list
    "token[]",
    "token%00",
    "a=1;token",
    "access-token",
    "accessToken",
]


def get_raw(server: LiveServer, target: str) -> tuple[int, dict]:
    """GET ``target`` exactly as written: requests would decode ``%74`` to ``t``."""
    connection = http.client.HTTPConnection("127.0.0.1", server.server.server_port, timeout=10)
    try:
        connection.request("GET", target)
        answer = connection.getresponse()
        if "event-stream" in answer.getheader("Content-Type", ""):
            return answer.status, {}
        return answer.status, json.loads(answer.read() or b"{}")
    finally:
        connection.close()


@pytest.mark.parametrize("name", SPELLINGS)
@pytest.mark.parametrize("path", ["", "/events", "/stream"])
def test_every_spelling_of_a_token_parameter_is_refused(public, name, path):
    created = matches_created(public, "192.0.2.3").json()
    token = created["seats"][0]["token"]
    status, body = get_raw(public, f"/v1/games/dekal/matches/{created['id']}{path}?{name}={token}")
    assert status == 400, (name, path)
    assert body["code"] == "token_in_url"
    assert token not in json.dumps(body)


def test_parameters_that_only_look_like_a_token_pass(public):
    created = matches_created(public, "192.0.2.4").json()
    base = f"/v1/games/dekal/matches/{created['id']}"
    for query in ("tokens=1", "my_token=1", "x=token", "x=%74oken", "%74okens=1"):
        assert get_raw(public, f"{base}?{query}")[0] == 200, query


# --- No redirect names the request's Host (point 13) --------------------------


def sample_paths(server: LiveServer) -> set[str]:
    """A path for every route, its variables filled in."""
    created = matches_created(server, "192.0.2.5").json()
    values = {"game": "dekal", "match_id": created["id"], "seat": "0", "name": "app.js"}
    paths = set()
    for rule in server.app.url_map.iter_rules():
        path = re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", lambda m: values.get(m.group(1), "x"), rule.rule)
        paths.add(path)
    return paths


def variants(path: str) -> Iterator[str]:
    """What a client may send that werkzeug would redirect to ``path``."""
    yield path + "/"
    yield path.rstrip("/") or "/"
    for slash in [i for i, c in enumerate(path) if c == "/"][1:]:
        yield path[:slash] + "/" + path[slash:]
    yield path.replace("/", "//")


def test_no_answer_names_the_host_header(public):
    paths = sample_paths(public)
    assert "/v1/games/dekal/matches" in paths
    tried = 0
    for path in sorted(paths):
        for sent in {path, *variants(path)}:
            for method in ("GET", "POST"):
                answer = requests.request(
                    method,
                    public.url(sent),
                    headers={"Host": HOSTILE_HOST, **from_address("192.0.2.6")},
                    allow_redirects=False,
                    timeout=10,
                    stream=True,
                )
                with answer:
                    tried += 1
                    location = answer.headers.get("Location", "")
                    assert HOSTILE_HOST not in location, (method, sent, location)
                    assert not re.match(r"^[a-z]+:|^//", location), (method, sent, location)
                    if "event-stream" not in answer.headers.get("Content-Type", ""):
                        assert HOSTILE_HOST not in answer.text, (method, sent)
    assert tried > 100
    created = requests.post(
        public.url("/v1/games/dekal/matches"),
        json={"players": [{"name": "Ada"}, {"name": "Bob"}]},
        headers={"Host": HOSTILE_HOST},
        timeout=10,
    )
    assert created.status_code == 201
    assert created.headers["Location"] == f"/v1/games/dekal/matches/{created.json()['id']}"
