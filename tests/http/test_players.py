"""Players and apps over HTTP (issue 36): guests, an app's users, tokens
that say what they are, are stored hashed and can be revoked; a player
token acting for every seat its player holds; quotas that follow the app."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis
import requests
import sqlalchemy as sa

from service.domain.tokens import token_hash
from service.store import players as tables
from service.store.database import engine_for, migrate
from tests.support import databases
from tests.support.servers import PUBLIC, LiveServer


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path_factory) -> Iterator[str]:
    if request.param == "sqlite":
        url = databases.sqlite_url(tmp_path_factory.mktemp("players"))
        migrate(url)
        yield url
        return
    with databases.fresh_database(request.getfixturevalue("postgres_admin_url")) as url:
        migrate(url)
        yield url


@pytest.fixture(scope="module")
def server(redis_url: str, database_url: str) -> Iterator[LiveServer]:
    with LiveServer({"REDIS_URL": redis_url, "DATABASE_URL": database_url}) as live:
        yield live


@pytest.fixture(scope="module")
def operator(server: LiveServer) -> tables.Players:
    """What `ludotheque apps ...` does, on the server's database and Redis."""
    return server.app.extensions["ludotheque.players"]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def guest(server: LiveServer, name: str = "Ada", **headers: str) -> dict[str, Any]:
    answer = server.http.post(f"{server.base}/v1/players", json={"name": name}, headers=headers)
    assert answer.status_code == 201, answer.text
    return answer.json()


def app_player(server: LiveServer, key: str, external_id: str, name: str = "Bob", **body: Any):
    return server.http.post(
        f"{server.base}/v1/apps/me/players",
        json={"external_id": external_id, "name": name, **body},
        headers=bearer(key),
    )


def dekal_against_each_other(server: LiveServer, first: str, second: str) -> dict[str, Any]:
    """A Dékal match created by player ``first`` for itself, joined by ``second``."""
    created = server.http.post(
        f"{server.base}/v1/games/dekal/matches",
        json={"players": [{"player": "me"}, {}]},
        headers=bearer(first),
    )
    assert created.status_code == 201, created.text
    match = created.json()
    joined = server.http.post(
        f"{server.base}/v1/games/dekal/matches/{match['id']}/seats/1",
        json={},
        headers=bearer(second),
    )
    assert joined.status_code == 201, joined.text
    return match


def test_a_guest_gets_an_id_and_a_prefixed_token_stored_only_hashed(server, database_url):
    made = guest(server)
    assert made["token"].startswith("ldq_player_") and len(made["token"]) > 50
    assert made["name"] == "Ada" and made["bot"] is False and len(made["id"]) == 32
    me = server.http.get(f"{server.base}/v1/players/me", headers=bearer(made["token"]))
    assert me.status_code == 200 and me.json()["id"] == made["id"]
    engine = engine_for(database_url)
    with engine.connect() as connection:
        stored = connection.execute(sa.select(tables.player_tokens.c.hash)).scalars().all()
    engine.dispose()
    assert token_hash(made["token"]) in stored and made["token"] not in stored


def test_new_seat_tokens_say_what_they_are(server):
    created = server.http.post(
        f"{server.base}/v1/games/dekal/matches", json={"players": [{"name": "A"}, {"name": "B"}]}
    ).json()
    assert all(seat["token"].startswith("ldq_seat_") for seat in created["seats"])


def test_a_player_token_acts_for_the_seat_its_player_holds_without_a_seat_token(server):
    ada, bob = guest(server, "Ada"), guest(server, "Bob")
    match = dekal_against_each_other(server, ada["token"], bob["token"])
    assert "token" not in match["seats"][0]
    url = f"{server.base}/v1/games/dekal/matches/{match['id']}"
    view = server.http.get(url + "?legal_actions=true", headers=bearer(ada["token"])).json()
    assert view["your_seat"] == 0 and view["seats"][0]["player"] == ada["id"]
    assert view["seats"][1]["player"] == bob["id"] and view["seats"][1]["name"] == "Bob"
    to_act = view["to_act"][0]
    mover = ada if to_act == 0 else bob
    actions = server.http.get(url + "/legal-actions", headers=bearer(mover["token"])).json()
    played = server.http.post(
        url + "/actions", json=actions["actions"][0], headers=bearer(mover["token"])
    )
    assert played.status_code == 200, played.text
    now = played.json()["to_act"]
    waiting = [p for seat, p in enumerate((ada, bob)) if seat not in now]
    assert waiting, now
    refused = server.http.post(
        url + "/actions", json=actions["actions"][0], headers=bearer(waiting[0]["token"])
    )
    assert refused.status_code == 409 and refused.json()["code"] == "not_your_turn"


def test_another_device_of_the_same_player_continues_the_match(server):
    ada, bob = guest(server, "Ada"), guest(server, "Bob")
    match = dekal_against_each_other(server, ada["token"], bob["token"])
    second = server.http.post(f"{server.base}/v1/players/me/tokens", headers=bearer(ada["token"]))
    assert second.status_code == 201
    phone = second.json()["token"]
    assert phone != ada["token"] and phone.startswith("ldq_player_")
    url = f"{server.base}/v1/games/dekal/matches/{match['id']}"
    assert server.http.get(url, headers=bearer(phone)).json()["your_seat"] == 0


def test_a_revoked_token_ends_at_once_and_the_players_other_tokens_go_on(server):
    ada = guest(server)
    other = server.http.post(f"{server.base}/v1/players/me/tokens", headers=bearer(ada["token"]))
    other_token = other.json()["token"]
    ended = server.http.delete(
        f"{server.base}/v1/players/me/tokens/current", headers=bearer(ada["token"])
    )
    assert ended.json() == {"revoked": 1}
    refused = server.http.get(f"{server.base}/v1/players/me", headers=bearer(ada["token"]))
    assert refused.status_code == 401 and refused.json()["code"] == "invalid_token"
    assert server.http.get(f"{server.base}/v1/players/me", headers=bearer(other_token)).ok
    everything = server.http.delete(
        f"{server.base}/v1/players/me/tokens", headers=bearer(other_token)
    )
    assert everything.json() == {"revoked": 1}
    assert (
        server.http.get(f"{server.base}/v1/players/me", headers=bearer(other_token)).status_code
        == 401
    )


def test_an_expired_player_token_is_refused(server, operator):
    _player, token = operator.create("Old")
    engine, client = operator.engine, operator.client
    with engine.begin() as connection:
        connection.execute(
            sa.update(tables.player_tokens)
            .where(tables.player_tokens.c.hash == token_hash(token))
            .values(expires_ms=1)
        )
    client.pexpire(tables.token_key(token_hash(token)), 1)
    import time

    time.sleep(0.05)
    refused = server.http.get(f"{server.base}/v1/players/me", headers=bearer(token))
    assert refused.status_code == 401


def test_an_app_finds_the_same_player_for_the_same_external_id(server, operator):
    app_id, key = operator.create_app(f"app-{uuid.uuid4().hex[:6]}")
    first = app_player(server, key, "user-1", "Carol")
    again = app_player(server, key, "user-1", "ignored")
    assert first.status_code == 200 and again.status_code == 200
    assert first.json()["created"] is True and again.json()["created"] is False
    assert first.json()["id"] == again.json()["id"]
    assert first.json()["token"] != again.json()["token"]
    profile = server.http.get(f"{server.base}/v1/players/{first.json()['id']}").json()
    assert profile["name"] == "Carol"
    assert set(profile) == {"id", "name", "bot", "created_at", "matches_played"}
    assert app_id not in str(profile) and "user-1" not in str(profile)


def test_two_apps_never_share_a_player_nor_reach_each_others(server, operator):
    _, key_a = operator.create_app("a")
    _, key_b = operator.create_app("b")
    of_a = app_player(server, key_a, "same").json()
    of_b = app_player(server, key_b, "same").json()
    assert of_a["id"] != of_b["id"]
    for path in (f"/v1/apps/me/players/{of_a['id']}/tokens", f"/v1/apps/me/players/{of_a['id']}"):
        answer = server.http.delete(server.base + path, headers=bearer(key_b))
        assert answer.status_code == 404
    assert server.http.get(f"{server.base}/v1/players/me", headers=bearer(of_a["token"])).ok


def test_token_confusion_is_refused(server, operator):
    _, key = operator.create_app("confused")
    ada, bob = guest(server, "Ada"), guest(server, "Bob")
    match = dekal_against_each_other(server, ada["token"], bob["token"])
    url = f"{server.base}/v1/games/dekal/matches/{match['id']}"
    # an app key holds no seat
    assert server.http.get(url + "/legal-actions", headers=bearer(key)).status_code == 403
    # a player token is not an app key, a seat token not a player token
    assert app_player(server, ada["token"], "x").status_code == 403
    seat = server.http.post(
        f"{server.base}/v1/games/dekal/matches", json={"players": [{"name": "S"}, {}]}
    ).json()["seats"][0]["token"]
    assert server.http.get(f"{server.base}/v1/players/me", headers=bearer(seat)).status_code == 401
    # a made-up token of either kind, and a forged identity
    for made_up in ("ldq_player_" + "A" * 43, "ldq_app_" + "A" * 43):
        assert server.http.get(url, headers=bearer(made_up)).status_code == 401
    # a player holding no seat here
    carol = guest(server, "Carol")
    refused = server.http.get(url + "/legal-actions", headers=bearer(carol["token"]))
    assert refused.status_code == 403 and refused.json()["code"] == "invalid_token"


def test_a_player_holds_one_seat_of_a_match_at_most(server):
    ada = guest(server)
    twice = server.http.post(
        f"{server.base}/v1/games/dekal/matches",
        json={"players": [{"player": "me"}, {"player": "me"}]},
        headers=bearer(ada["token"]),
    )
    assert twice.status_code == 409 and twice.json()["code"] == "already_seated"
    match = server.http.post(
        f"{server.base}/v1/games/gaudi/matches",
        json={"players": [{"player": "me"}, {}, {}]},
        headers=bearer(ada["token"]),
    ).json()
    again = server.http.post(
        f"{server.base}/v1/games/gaudi/matches/{match['id']}/seats/1",
        json={},
        headers=bearer(ada["token"]),
    )
    assert again.status_code == 409 and again.json()["code"] == "already_seated"


def test_only_an_app_makes_bot_accounts_and_they_show_as_bots(server, operator):
    refused = server.http.post(f"{server.base}/v1/players", json={"name": "Robo", "bot": True})
    assert refused.status_code == 403
    _, key = operator.create_app("bots")
    robo = app_player(server, key, "robo-1", "Robo", bot=True).json()
    assert robo["bot"] is True
    ada = guest(server)
    match = dekal_against_each_other(server, ada["token"], robo["token"])
    view = server.http.get(f"{server.base}/v1/games/dekal/matches/{match['id']}").json()
    assert view["seats"][1]["bot_account"] is True and "bot_account" not in view["seats"][0]
    assert server.http.get(f"{server.base}/v1/players/{robo['id']}").json()["bot"] is True


def test_an_app_seats_its_own_players_and_no_one_elses(server, operator):
    _, key = operator.create_app("seating")
    _, other_key = operator.create_app("other")
    mine = app_player(server, key, "u1").json()
    theirs = app_player(server, other_key, "u1").json()
    created = server.http.post(
        f"{server.base}/v1/games/dekal/matches",
        json={"players": [{"player": mine["id"]}, {"bot": "random"}]},
        headers=bearer(key),
    )
    assert created.status_code == 201, created.text
    assert created.json()["seats"][0]["player"] == mine["id"]
    refused = server.http.post(
        f"{server.base}/v1/games/dekal/matches",
        json={"players": [{"player": theirs["id"]}, {"bot": "random"}]},
        headers=bearer(key),
    )
    assert refused.status_code == 404


@pytest.fixture
def public(redis_url: str, database_url: str) -> Iterator[LiveServer]:
    """The server with its limits on, behind one proxy (X-Forwarded-For)."""
    with LiveServer({"REDIS_URL": redis_url, "DATABASE_URL": database_url, **PUBLIC}) as live:
        yield live


def test_an_apps_requests_count_against_the_app_not_its_address(public, operator):
    _app_id, key = operator.create_app("quota", {"requests": "6/minute"})
    address = {"X-Forwarded-For": f"198.51.100.{uuid.uuid4().int % 250}"}
    player = app_player(public, key, "u", **{}).json()
    url = f"{public.base}/v1/games"
    answers = [public.http.get(url, headers=bearer(key) | address).status_code for _ in range(4)]
    # the app's player counts against the app too, wherever it calls from
    answers.append(public.http.get(url, headers=bearer(player["token"])).status_code)
    answers.append(public.http.get(url, headers=bearer(key)).status_code)
    assert answers == [200, 200, 200, 200, 200, 429], answers
    # the address the app called from is not held back
    assert public.http.get(url, headers=address).status_code == 200


def test_an_apps_creations_and_waiting_matches_follow_its_own_quotas(public, operator):
    _, key = operator.create_app("waiting", {"waiting": 2, "creations": "100/minute"})
    body = {"players": [{"name": "A"}, {}]}
    made = [
        public.http.post(
            f"{public.base}/v1/games/dekal/matches", json=body, headers=bearer(key)
        ).status_code
        for _ in range(3)
    ]
    assert made == [201, 201, 429]
    # a guest at the same address (no app) has its own
    address = {"X-Forwarded-For": "203.0.113.77"}
    alone = public.http.post(f"{public.base}/v1/games/dekal/matches", json=body, headers=address)
    assert alone.status_code == 201


def test_an_app_key_ends_with_its_slot_and_the_other_slot_keeps_working(server, operator):
    app_id, first = operator.create_app("rotating")
    second = operator.new_key(app_id, 2)
    operator.revoke_app(app_id, 1)
    assert app_player(server, first, "u").status_code == 401
    made = app_player(server, second, "u")
    assert made.status_code == 200
    operator.revoke_app(app_id)
    assert app_player(server, second, "u").status_code == 401
    me = server.http.get(f"{server.base}/v1/players/me", headers=bearer(made.json()["token"]))
    assert me.status_code == 401  # the app's players' tokens end with it


def test_tokens_are_checked_after_redis_lost_them(server, operator, redis_url):
    ada = guest(server)
    client = redis.Redis.from_url(redis_url)
    keys = list(client.scan_iter(match=tables.PREFIX + ":*", count=1000))
    client.delete(*keys)
    assert server.http.get(f"{server.base}/v1/players/me", headers=bearer(ada["token"])).ok
    assert client.exists(tables.READY) == 1


def test_a_player_deletes_itself_and_its_tokens_end(server):
    ada = guest(server)
    gone = server.http.delete(f"{server.base}/v1/players/me", headers=bearer(ada["token"]))
    assert gone.status_code == 204
    assert (
        server.http.get(f"{server.base}/v1/players/me", headers=bearer(ada["token"])).status_code
        == 401
    )
    assert server.http.get(f"{server.base}/v1/players/{ada['id']}").status_code == 404


def test_without_a_database_players_answer_503(live):
    answer = requests.post(f"{live.base}/v1/players", json={"name": "Ada"})
    assert answer.status_code == 503 and answer.json()["code"] == "players_unavailable"
    header = bearer("ldq_player_" + "B" * 43)
    assert requests.get(f"{live.base}/v1/games", headers=header).status_code == 503
