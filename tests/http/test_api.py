"""API v1 over HTTP against a real Redis: creation, seats, views, versions,
errors, idempotency and concurrency. Dékal is the game used; the mechanics
are the same for every game (test_play.py plays them all)."""

from __future__ import annotations

import random
import threading
import time

import orjson
import pytest

from engines import GAMES
from service.store.matches import log_key, match_key
from tests.support.client import ApiClient
from tests.support.matches import create_match, play_out, replay_from_log
from tests.support.problems import assert_problem
from tests.support.servers import STORE_DOWN
from tests.support.waiting import wait_until

GAME = "dekal"


def first_legal(api, match_id, token):
    return api.legal(GAME, match_id, token).json()["actions"][0]


# -- games and creation ---------------------------------------------------------
def test_games_lists_every_registered_game(api):
    games = api.http.get(f"{api.base}/v1/games").json()["games"]
    assert {g["name"] for g in games} == set(GAMES)
    dekal = next(g for g in games if g["name"] == GAME)
    assert (dekal["min_players"], dekal["max_players"]) == (2, 6)
    assert "target_score" in dekal["options"]["properties"]
    assert set(dekal["actions"]) == {"reveal", "take"}


def test_create_gives_tokens_to_named_seats_only_and_only_once(api):
    created = api.create(GAME, {"players": [{"name": "Ada"}, {}]})
    assert created.status_code == 201
    match = created.json()
    assert created.headers["Location"] == f"/v1/games/{GAME}/matches/{match['id']}"
    assert created.headers["ETag"] == f'"{match["version"]}-spectator"'
    assert match["seats"][0]["name"] == "Ada" and "token" in match["seats"][0]
    assert match["seats"][1] == {"seat": 1, "name": None, "bot": None, "open": True}
    assert match["status"] == "waiting"
    again = api.get(GAME, match["id"]).json()
    assert all("token" not in seat for seat in again["seats"])


def test_a_match_replays_from_its_seed(api):
    one, _ = create_match(api, GAME, 3, seed=42)
    two, _ = create_match(api, GAME, 3, seed=42)
    assert api.get(GAME, one).json()["view"] == api.get(GAME, two).json()["view"]


@pytest.mark.parametrize(
    "body",
    [
        {"players": [{"name": "solo"}]},  # too few
        {"players": [{}] * 7},  # too many
        {"players": []},
        {},
        {"players": [{"name": ""}, {}]},
        {"players": [{"name": "x" * 41}, {}]},
        {"players": [{"name": "tab\there"}, {}]},
        {"players": [{"name": 7}, {}]},
        {"players": [{}, {}], "extra": 1},
        {"players": [{}, {}], "seed": -1},
        {"players": [{}, {}], "seed": 2**80},
        {"players": [{}, {}], "seed": "1"},
        {"players": [{}, {}], "options": {"target_score": -5}},
        {"players": [{}, {}], "options": {"bogus": True}},
        {"players": [{}, {}], "options": {"first_player": 4}},
        {"players": "everyone"},
    ],
)
def test_create_refuses_invalid_bodies_with_422(api, body):
    response = api.create(GAME, body)
    assert response.status_code == 422, response.text
    assert response.json()["code"] in {"invalid_request", "invalid_options"}


def test_unicode_names_are_welcome(api):
    created = api.create(GAME, {"players": [{"name": "Zoë 🎲 東京"}, {"name": "Ωμέγα"}]})
    assert created.status_code == 201
    assert created.json()["seats"][0]["name"] == "Zoë 🎲 東京"


# -- errors -------------------------------------------------------------------
def test_malformed_json_is_400(api):
    response = api.http.post(
        f"{api.base}/v1/games/{GAME}/matches",
        data=b"{not json",
        headers={"Content-Type": "application/json"},
    )
    assert_problem(response, 400, "invalid_request")


@pytest.mark.parametrize("content_type", [None, "application/x-www-form-urlencoded", "text/plain"])
def test_every_json_body_is_read_whatever_its_declared_type(api, content_type):
    """`curl -d '{...}'` declares a form; actions always read such a body as
    JSON, and creation and joining answered 422 "players: Missing data"."""
    headers = {"Content-Type": content_type} if content_type else {}
    body = orjson.dumps({"players": [{"name": "Ada"}, {}]})
    created = api.http.post(f"{api.base}/v1/games/{GAME}/matches", data=body, headers=headers)
    assert created.status_code == 201, created.text
    match_id = created.json()["id"]
    joined = api.http.post(
        f"{api.base}/v1/games/{GAME}/matches/{match_id}/seats/1",
        data=orjson.dumps({"name": "Bea"}),
        headers=headers,
    )
    assert joined.status_code == 201, joined.text
    token = created.json()["seats"][0]["token"]
    match = api.get(GAME, match_id, token).json()
    seat = match["to_act"][0]
    tokens = {0: token, 1: joined.json()["token"]}
    action = api.legal(GAME, match_id, tokens[seat]).json()["actions"][0]
    acted = api.http.post(
        f"{api.base}/v1/games/{GAME}/matches/{match_id}/actions",
        data=orjson.dumps(action),
        headers={**headers, "Authorization": f"Bearer {tokens[seat]}"},
    )
    assert acted.status_code == 200, acted.text
    refused = api.http.post(
        f"{api.base}/v1/games/{GAME}/matches", data="players=Ada", headers=headers
    )
    assert_problem(refused, 400, "invalid_request")


def test_deeply_nested_json_is_refused_not_crashed(api):
    match_id, tokens = create_match(api, GAME, seed=1)
    for payload in (b"[" * 5000 + b"]" * 5000, b'{"a":' * 3000 + b"1" + b"}" * 3000):
        for url in (
            f"{api.base}/v1/games/{GAME}/matches",
            f"{api.base}/v1/games/{GAME}/matches/{match_id}/actions",
        ):
            response = api.http.post(
                url,
                data=payload,
                headers={
                    "Content-Type": "application/json",
                    "Authorization": f"Bearer {tokens[0]}",
                },
            )
            assert 400 <= response.status_code < 500, response.text
            assert response.headers["Content-Type"] == "application/problem+json"


def test_body_too_large_is_413(api):
    response = api.create(GAME, {"players": [{}, {}], "pad": "x" * 200_000})
    assert_problem(response, 413, "payload_too_large")


def test_unknown_game_match_and_route_are_404(api):
    assert_problem(api.create("chess", {"players": [{}, {}]}), 404, "game_not_found")
    assert_problem(api.get(GAME, "0" * 32), 404, "match_not_found")
    assert_problem(api.get(GAME, "not-an-id"), 404, "match_not_found")
    assert_problem(api.http.get(f"{api.base}/nowhere"), 404, "not_found")


def test_a_match_is_only_found_under_its_own_game(api):
    match_id, _ = create_match(api, GAME, seed=1)
    other = next(name for name in GAMES if name != GAME) if len(GAMES) > 1 else None
    if other:
        assert_problem(api.get(other, match_id), 404, "match_not_found")


def test_wrong_method_is_405(api):
    response = api.http.delete(f"{api.base}/v1/games/{GAME}/matches")
    assert_problem(response, 405, "method_not_allowed")


def test_tokens_missing_malformed_or_wrong(api):
    match_id, tokens = create_match(api, GAME, seed=1)
    assert_problem(api.legal(GAME, match_id, None), 401, "token_required")
    action = first_legal(api, match_id, tokens[0])
    assert_problem(api.act(GAME, match_id, None, action), 401, "token_required")
    assert_problem(api.act(GAME, match_id, "forged", action), 403, "invalid_token")
    assert_problem(api.get(GAME, match_id, "forged"), 403, "invalid_token")
    _, other_tokens = create_match(api, GAME, seed=1)
    assert_problem(api.get(GAME, match_id, other_tokens[0]), 403, "invalid_token")
    bad_scheme = api.http.get(
        f"{api.base}/v1/games/{GAME}/matches/{match_id}", headers={"Authorization": "Basic eDp5"}
    )
    assert_problem(bad_scheme, 401, "token_required")


def test_invalid_actions_are_422_invalid_request(api):
    match_id, tokens = create_match(api, GAME, seed=1)
    for action in (
        {"type": "fly"},
        {"row": 0, "col": 0},
        {"type": "reveal", "row": "0", "col": 0},
        {"type": "reveal", "row": 0},
        {"type": "reveal", "row": 0, "col": 0, "extra": 1},
        [1, 2],
        "reveal",
    ):
        response = api.act(GAME, match_id, tokens[0], action)
        assert response.status_code in (400, 422), response.text
        assert response.json()["code"] == "invalid_request"


def test_illegal_move_is_422_with_a_reason_and_changes_nothing(api, redis_client):
    match_id, tokens = create_match(api, GAME, seed=1)
    before = redis_client.hget(match_key(match_id), "d")
    response = api.act(GAME, match_id, tokens[0], {"type": "take", "value": 5, "from": "left"})
    body = assert_problem(response, 422, "illegal_action")
    assert body["detail"]
    assert redis_client.hget(match_key(match_id), "d") == before


def test_not_your_turn_is_409(api):
    match_id, tokens = create_match(api, GAME, seed=1)
    api.act(GAME, match_id, tokens[0], first_legal(api, match_id, tokens[0]))
    # seat 0 has chosen: it may not choose again before everyone has
    response = api.act(GAME, match_id, tokens[0], {"type": "reveal", "row": 3, "col": 3})
    assert_problem(response, 409, "not_your_turn")
    assert api.legal(GAME, match_id, tokens[0]).json()["actions"] == []


# -- seats --------------------------------------------------------------------
def test_join_open_seats_then_the_match_starts(api):
    match = api.create(GAME, {"players": [{"name": "Ada"}, {}, {}]}).json()
    match_id, ada = match["id"], match["seats"][0]["token"]
    action = {"type": "reveal", "row": 0, "col": 0}
    assert_problem(api.act(GAME, match_id, ada, action), 409, "match_not_started")
    joined = api.join(GAME, match_id, 1, "Bob")
    assert joined.status_code == 201
    assert joined.json()["seat"] == 1 and joined.json()["token"]
    assert_problem(api.join(GAME, match_id, 1, "Eve"), 409, "seat_taken")
    assert_problem(api.join(GAME, match_id, 0, "Eve"), 409, "seat_taken")
    assert_problem(api.join(GAME, match_id, 3, "Eve"), 404, "seat_not_found")
    assert api.join(GAME, match_id, 1, "").status_code == 422
    assert api.get(GAME, match_id).json()["status"] == "waiting"
    carol = api.join(GAME, match_id, 2, "Carol").json()["token"]
    view = api.get(GAME, match_id, carol).json()
    assert view["status"] == "active" and view["your_seat"] == 2
    assert view["seats"][2] == {"seat": 2, "name": "Carol", "bot": None, "open": False}
    assert api.act(GAME, match_id, carol, action).status_code == 200


# -- versions -----------------------------------------------------------------
def test_etag_is_the_version_and_viewer_and_if_none_match_gives_304(api):
    match_id, tokens = create_match(api, GAME, seed=1)
    first = api.get(GAME, match_id, tokens[0])
    etag = first.headers["ETag"]
    assert etag == f'"{first.json()["version"]}-s0"'
    cached = api.get(GAME, match_id, tokens[0], **{"If-None-Match": etag})
    assert cached.status_code == 304 and cached.headers["ETag"] == etag and not cached.content
    api.act(GAME, match_id, tokens[1], first_legal(api, match_id, tokens[1]))
    fresh = api.get(GAME, match_id, tokens[0], **{"If-None-Match": etag})
    assert fresh.status_code == 200 and fresh.headers["ETag"] != etag


def test_if_match_refuses_a_stale_version_with_412(api):
    match_id, tokens = create_match(api, GAME, seed=1)
    version = api.get(GAME, match_id).json()["version"]
    api.act(GAME, match_id, tokens[1], first_legal(api, match_id, tokens[1]))
    stale = api.act(
        GAME, match_id, tokens[0], first_legal(api, match_id, tokens[0]), If_Match=f'"{version}"'
    )
    assert_problem(stale, 412, "version_mismatch")
    fresh = api.act(
        GAME,
        match_id,
        tokens[0],
        first_legal(api, match_id, tokens[0]),
        If_Match=f'"{version + 1}"',
    )
    assert fresh.status_code == 200 and fresh.json()["version"] == version + 2
    assert_problem(
        api.act(
            GAME, match_id, tokens[0], {"type": "reveal", "row": 0, "col": 0}, If_Match="yesterday"
        ),
        400,
        "invalid_request",
    )


def test_idempotency_key_returns_the_first_answer(api, redis_client):
    match_id, tokens = create_match(api, GAME, seed=1)
    action = first_legal(api, match_id, tokens[0])
    first = api.act(GAME, match_id, tokens[0], action, Idempotency_Key="k-1")
    again = api.act(GAME, match_id, tokens[0], action, Idempotency_Key="k-1")
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert int(redis_client.hget(match_key(match_id), "v")) == first.json()["version"]
    other = dict(action, row=(action["row"] + 1) % 4)
    assert_problem(
        api.act(GAME, match_id, tokens[0], other, Idempotency_Key="k-1"),
        422,
        "idempotency_key_reused",
    )
    # the same key from another seat is another request
    theirs = api.act(
        GAME, match_id, tokens[1], first_legal(api, match_id, tokens[1]), Idempotency_Key="k-1"
    )
    assert theirs.status_code == 200 and theirs.json()["version"] == first.json()["version"] + 1


# -- store --------------------------------------------------------------------
def test_racing_threads_apply_every_accepted_action_exactly_once(api, live, redis_client):
    """8 threads, each playing as fast as it can on one 6-player match."""
    match_id, tokens = create_match(api, GAME, 6, seed=11)
    accepted: list[int] = []
    errors: list[str] = []

    def player(worker: int) -> None:
        client = ApiClient(live.base)
        rng = random.Random(worker)
        seat = worker % 6
        for _ in range(400):
            legal = client.legal(GAME, match_id, tokens[seat]).json()["actions"]
            if not legal:
                if client.get(GAME, match_id).json()["status"] == "finished":
                    return
                time.sleep(0.002)
                continue
            response = client.act(GAME, match_id, tokens[seat], rng.choice(legal))
            if response.status_code == 200:
                accepted.append(response.json()["version"])
            elif response.status_code not in (409, 422):
                errors.append(response.text)

    threads = [threading.Thread(target=player, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(accepted) == len(set(accepted)), "two actions landed on one version"
    match, state, events = replay_from_log(redis_client, match_id)
    version = int(redis_client.hget(match_key(match_id), "v"))
    assert version == 1 + len(accepted)
    assert sum(e["type"] == "action" for e in events) == len(accepted)
    assert state == match["state"]
    assert GAMES[GAME].outcome(state) is not None


def test_finished_matches_expire_after_the_configured_ttl(live_server, redis_client):
    api = ApiClient(live_server(FINISHED_TTL=1, IDLE_TTL=600).base)
    match_id, tokens = create_match(api, GAME, seed=5)
    assert 590 <= redis_client.ttl(match_key(match_id)) <= 600
    assert play_out(api, GAME, match_id, tokens)["status"] == "finished"
    assert redis_client.ttl(match_key(match_id)) <= 1
    assert redis_client.ttl(log_key(match_id)) <= 1
    wait_until(lambda: not redis_client.exists(match_key(match_id)), timeout=3)
    assert_problem(api.get(GAME, match_id), 404, "match_not_found")
    assert not redis_client.exists(log_key(match_id))


def test_health_and_readiness_probes(api, live_server):
    assert api.http.get(f"{api.base}/healthz").json() == {"status": "ok"}
    assert api.http.get(f"{api.base}/readyz").json() == {"status": "ready"}
    down = live_server(REDIS_URL=STORE_DOWN)
    assert down.http.get(down.url("/healthz")).status_code == 200
    assert_problem(down.http.get(down.url("/readyz")), 503, "store_unavailable")
    assert_problem(ApiClient(down.base).get(GAME, "0" * 32), 503, "store_unavailable")


def test_hooks_and_views_run_as_flask_runs_them(live):
    """The app remembers which functions are coroutine functions; what it
    runs is what Flask's own ensure_sync would run, bound methods included."""
    app = live.app

    def plain() -> None:
        pass

    async def coroutine() -> None:
        pass

    class View:
        def get(self) -> None:
            pass

    for _ in range(2):  # asked again: the remembered answer
        assert app.ensure_sync(plain) is plain
        method = View().get
        assert app.ensure_sync(method) is method
        with pytest.raises(RuntimeError, match="async"):  # Flask without its async extra
            app.ensure_sync(coroutine)
