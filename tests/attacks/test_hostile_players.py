"""The adversary's attacks on players and apps (issue 36, round 1), each as
it was made: over HTTP, against a server with a database."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.support.servers import PUBLIC, LiveServer


@pytest.fixture(scope="module")
def server(redis_url: str, module_db_url: str) -> Iterator[LiveServer]:
    with LiveServer({"REDIS_URL": redis_url, "DATABASE_URL": module_db_url}) as live:
        yield live


@pytest.fixture(scope="module")
def operator(server: LiveServer):
    return server.app.extensions["ludotheque.players"]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def guest(server: LiveServer, name: str = "Ada") -> dict[str, Any]:
    made = requests.post(f"{server.base}/v1/players", json={"name": name}, timeout=10)
    assert made.status_code == 201, made.text
    return made.json()


def me(server: LiveServer, token: str) -> int:
    return requests.get(
        f"{server.base}/v1/players/me", headers=bearer(token), timeout=10
    ).status_code


def player_match(server: LiveServer, token: str) -> dict[str, Any]:
    created = requests.post(
        f"{server.base}/v1/games/dekal/matches",
        json={"players": [{"player": "me"}, {"name": "Other"}]},
        headers=bearer(token),
        timeout=10,
    )
    assert created.status_code == 201, created.text
    return created.json()


def test_a_players_identity_forged_from_its_public_id_follows_nothing(server):
    """Finding 1 (critical): the seat's holder was the hash of the string
    '\\x00player:<id>', and POST /v1/stream-tickets took that string in its
    body: anyone knowing the public id followed the player's seat, its hand
    included. Now a body's token is resolved like the header's (an identity
    is refused), and identities carry a MAC under the deployment's secret."""
    victim = guest(server, "Victim")
    match = player_match(server, victim["token"])
    player_id = match["seats"][0]["player"]
    for forged in (f"\x00player:{player_id}", f"\x00player:{player_id}:{'0' * 64}"):
        asked = {"matches": [{"game": "dekal", "match": match["id"], "token": forged}]}
        answer = requests.post(f"{server.base}/v1/stream-tickets", json=asked, timeout=10)
        assert answer.status_code == 401, answer.text
        assert answer.json()["code"] == "invalid_token"


def renewing(server: LiveServer, token: str, minted: list[str], stop: threading.Event) -> None:
    with requests.Session() as http:
        while not stop.is_set():
            answer = http.post(
                f"{server.base}/v1/players/me/tokens", headers=bearer(token), timeout=10
            )
            if answer.status_code == 201:
                minted.append(answer.json()["token"])


def race_renewals_against(server: LiveServer, token: str, revoke) -> list[str]:
    """Four threads renew with ``token`` while ``revoke()`` runs; every
    token they got."""
    minted: list[str] = []
    stop = threading.Event()
    threads = [
        threading.Thread(target=renewing, args=(server, token, minted, stop)) for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    try:
        revoke()
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    return minted


@pytest.mark.parametrize("rounds", [3])
def test_tokens_made_while_a_player_signs_out_everywhere_end_with_it(server, rounds):
    """Finding 2: renewals racing 'sign out everywhere' left 4 or 5 tokens
    valid each time, each able to renew for ever."""
    for _ in range(rounds):
        ada = guest(server)

        def sign_out(token: str = ada["token"]) -> None:
            requests.delete(
                f"{server.base}/v1/players/me/tokens", headers=bearer(token), timeout=10
            )

        minted = race_renewals_against(server, ada["token"], sign_out)
        survivors = [t for t in [ada["token"], *minted] if me(server, t) == 200]
        assert survivors == [], f"{len(survivors)} of {len(minted)} tokens survived"


def test_tokens_made_while_their_app_is_revoked_end_with_it(server, operator):
    """Finding 2: renewals racing `ludotheque apps revoke APP` (4 of 212
    tokens survived, renewing and creating matches for a revoked app)."""
    app_id, key = operator.create_app("to-revoke")
    made = requests.post(
        f"{server.base}/v1/apps/me/players",
        json={"external_id": "u", "name": "U"},
        headers=bearer(key),
        timeout=10,
    ).json()
    minted = race_renewals_against(server, made["token"], lambda: operator.revoke_app(app_id))
    survivors = [t for t in [made["token"], *minted] if me(server, t) == 200]
    assert survivors == [], f"{len(survivors)} of {len(minted)} tokens survived"


def test_a_player_holds_at_most_twenty_tokens(server):
    """Finding 11: 500 renewals in 10 s, each a database row kept 30 days."""
    ada = guest(server)
    tokens = [ada["token"]]
    for _ in range(24):
        renewed = requests.post(
            f"{server.base}/v1/players/me/tokens", headers=bearer(tokens[-1]), timeout=10
        )
        assert renewed.status_code == 201
        tokens.append(renewed.json()["token"])
    alive = [me(server, t) == 200 for t in tokens]
    assert alive == [False] * 5 + [True] * 20  # the oldest ended as new ones came


def test_renewing_a_token_counts_as_a_creation(redis_url, module_db_url):
    """Finding 11: renewals were counted as plain requests only."""
    config = {"REDIS_URL": redis_url, "DATABASE_URL": module_db_url, **PUBLIC}
    with LiveServer(config | {"RATE_LIMIT_CREATE": "3/minute"}) as public:
        address = {"X-Forwarded-For": f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.9"}
        made = requests.post(
            f"{public.base}/v1/players", json={"name": "Ada"}, headers=address, timeout=10
        )
        token = made.json()["token"]
        statuses = [
            requests.post(
                f"{public.base}/v1/players/me/tokens", headers=bearer(token) | address, timeout=10
            ).status_code
            for _ in range(3)
        ]
        assert statuses == [201, 201, 429]


@pytest.mark.parametrize("external_id", ["\ud800", "a\u0000b", "tab\there", ""])
def test_an_external_id_is_printable_text(server, operator, external_id):
    """Finding 6: a lone surrogate answered 500; NUL and controls were taken."""
    _, key = operator.create_app("ids")
    answer = requests.post(
        f"{server.base}/v1/apps/me/players",
        json={"external_id": external_id, "name": "n"},  # (escaped: ASCII JSON)
        headers=bearer(key),
        timeout=10,
    )
    assert answer.status_code == 422, answer.text


@pytest.mark.parametrize("scheme", ["Basic", "Token"])
def test_a_player_token_under_another_scheme_is_not_taken(server, scheme):
    """Finding 12: `Basic <player token>` was taken as a bearer token."""
    ada = guest(server)
    answer = requests.get(
        f"{server.base}/v1/players/me",
        headers={"Authorization": f"{scheme} {ada['token']}"},
        timeout=10,
    )
    assert answer.status_code == 401 and answer.json()["code"] == "token_required"


def test_answers_holding_a_token_are_never_cached(server, operator):
    """Finding 12: no Cache-Control on the answers that carry a token."""
    made = requests.post(f"{server.base}/v1/players", json={"name": "Ada"}, timeout=10)
    assert made.headers["Cache-Control"] == "no-store"
    token = made.json()["token"]
    renewed = requests.post(
        f"{server.base}/v1/players/me/tokens", headers=bearer(token), timeout=10
    )
    assert renewed.headers["Cache-Control"] == "no-store"
    _, key = operator.create_app("caching")
    found = requests.post(
        f"{server.base}/v1/apps/me/players",
        json={"external_id": "u", "name": "U"},
        headers=bearer(key),
        timeout=10,
    )
    assert found.headers["Cache-Control"] == "no-store"
    mine = requests.get(f"{server.base}/v1/players/me", headers=bearer(token), timeout=10)
    assert "private" in mine.headers["Cache-Control"] and "Authorization" in mine.headers["Vary"]


def test_what_a_revoked_player_token_opened_ends_with_it(server):
    """Finding 3: a stream, a ticket (used or not), an events long poll and a
    view long poll opened with a player token outlived its revocation, and
    kept delivering the seat's hidden events (a stolen phone signed out
    went on watching the player's cards)."""
    ada, bob = guest(server, "Ada"), guest(server, "Bob")
    created = requests.post(
        f"{server.base}/v1/games/dekal/matches",
        json={"players": [{"player": "me"}, {}]},
        headers=bearer(ada["token"]),
        timeout=10,
    ).json()
    url = f"{server.base}/v1/games/dekal/matches/{created['id']}"
    joined = requests.post(f"{url}/seats/1", json={}, headers=bearer(bob["token"]), timeout=10)
    assert joined.status_code == 201
    phone = ada["token"]  # the device that will be signed out
    laptop = requests.post(
        f"{server.base}/v1/players/me/tokens", headers=bearer(phone), timeout=10
    ).json()["token"]
    tokens = {0: laptop, 1: bob["token"]}

    def play(seat: int) -> None:
        actions = requests.get(f"{url}/legal-actions", headers=bearer(tokens[seat]), timeout=10)
        played = requests.post(
            f"{url}/actions", json=actions.json()["actions"][0], headers=bearer(tokens[seat])
        )
        assert played.status_code == 200, played.text

    play(0)  # the phone's seat has played its reveal: its view long poll waits for Bob
    ticket = requests.post(f"{url}/stream-tickets", headers=bearer(phone), timeout=10).json()
    end = requests.get(f"{url}/events", headers=bearer(phone), timeout=10).json()["next"]
    streamed: list[str] = []
    stream = requests.get(f"{url}/stream", headers=bearer(phone), stream=True, timeout=30)

    def read() -> None:
        for line in stream.iter_lines(decode_unicode=True):
            streamed.append(line)

    reader = threading.Thread(target=read)
    reader.start()
    answers: dict[str, int] = {}

    def poll(name: str, path: str) -> None:
        answers[name] = requests.get(path, headers=bearer(phone), timeout=30).status_code

    polls = [
        threading.Thread(target=poll, args=("events", f"{url}/events?after={end}&wait=8")),
        threading.Thread(target=poll, args=("view", f"{url}?wait=8&legal_actions=true")),
    ]
    for thread in polls:
        thread.start()
    time.sleep(0.5)
    signed_out = requests.delete(
        f"{server.base}/v1/players/me/tokens/current", headers=bearer(phone), timeout=10
    )
    assert signed_out.json() == {"revoked": 1}
    seen_before = len(streamed)
    # the match goes on, the seat playing from the laptop: its private events
    # must reach no follower of the phone
    for _ in range(4):
        to_act = requests.get(url, timeout=10).json()["to_act"]
        if not to_act:
            break
        play(to_act[0])
    for thread in polls:
        thread.join()
    assert answers == {"events": 401, "view": 401}, answers
    reader.join(timeout=20)
    assert not reader.is_alive(), "the stream outlived the token's revocation"
    assert not any('"to"' in line or "card" in line for line in streamed[seen_before:])
    redeemed = requests.get(server.base + ticket["stream"], timeout=10)
    assert redeemed.status_code == 401


def test_a_player_id_with_a_trailing_newline_is_refused(server):
    """Round 2, finding 3: `$` let `<id>\\n` through (200, an empty list)."""
    ada = guest(server)
    for path in ("/v1/matches", "/v1/matches/export"):
        answer = requests.get(f"{server.base}{path}?player={ada['id']}%0A", timeout=10)
        assert answer.status_code == 422, answer.text
    created = requests.post(
        f"{server.base}/v1/games/dekal/matches",
        json={"players": [{"player": "me\n"}, {}]},
        headers=bearer(ada["token"]),
        timeout=10,
    )
    assert created.status_code == 422


def test_a_deletion_amid_others_renewals_is_done_whole(server):
    """Round 2, finding 2: on SQLite a deletion (or a sign-out) beside other
    players' renewals answered 503 about once in three, half done."""
    for _ in range(3):
        busy, leaving = guest(server, "Busy"), guest(server, "Leaving")
        player_match(server, leaving["token"])

        def delete(token: str = leaving["token"]) -> None:
            answer = requests.delete(f"{server.base}/v1/players/me", headers=bearer(token))
            assert answer.status_code == 204, answer.text

        race_renewals_against(server, busy["token"], delete)
        assert me(server, leaving["token"]) == 401
        profile = requests.get(f"{server.base}/v1/players/{leaving['id']}", timeout=10)
        assert profile.status_code == 404
