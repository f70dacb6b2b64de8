"""Caching correct for every viewer (issue 15, point 6): every answer that
depends on the token is private and varies by Authorization, the ETag names
the viewer, and If-None-Match is answered only once the token is checked.
The browser's own sequence, through a real HTTP cache, is replayed in
tests/reliability/test_hostile_http.py."""

from __future__ import annotations

import pytest

from tests.api.client import ApiClient

GAME = "ducale"


@pytest.fixture
def api(live) -> ApiClient:
    return ApiClient(live.base, live.http)


def new(api: ApiClient) -> tuple[str, list[str]]:
    created = api.create(GAME, {"players": [{"name": "Ada"}, {"name": "Bob"}]}).json()
    return created["id"], [seat["token"] for seat in created["seats"]]


def test_every_answer_that_depends_on_the_token_is_private_and_varies_by_authorization(api):
    match_id, tokens = new(api)
    base = f"{api.base}/v1/games/{GAME}/matches/{match_id}"
    bearer = {"Authorization": f"Bearer {tokens[0]}"}
    answers = {
        "view": api.get(GAME, match_id, tokens[0]),
        "spectator": api.get(GAME, match_id),
        "legal actions": api.legal(GAME, match_id, tokens[0]),
        "events": api.events(GAME, match_id, tokens[0]),
        "wrong token": api.get(GAME, match_id, "not-a-token"),
        "refused action": api.act(GAME, match_id, tokens[1], {"type": "draw", "source": "stock"}),
        "stream": api.http.get(base + "/stream", headers=bearer, stream=True, timeout=5),
    }
    answers["stream"].close()
    for name, answer in answers.items():
        assert answer.headers["Cache-Control"] == "private, no-cache", name
        assert "Authorization" in answer.headers["Vary"], name


def test_answers_that_hand_out_a_token_are_never_stored(api):
    created = api.http.post(
        f"{api.base}/v1/games/{GAME}/matches", json={"players": [{"name": "Ada"}, {}]}
    )
    joined = api.join(GAME, created.json()["id"], 1, "Bob")
    for answer in (created, joined):
        assert answer.status_code == 201 and answer.headers["Cache-Control"] == "no-store"


def test_the_game_list_stays_cacheable_by_anyone(api):
    games = api.http.get(f"{api.base}/v1/games")
    assert "Cache-Control" not in games.headers and "Vary" not in games.headers


def test_etags_differ_between_viewers_of_the_same_version(api):
    match_id, tokens = new(api)
    tags = [api.get(GAME, match_id, token).headers["ETag"] for token in (*tokens, None)]
    version = api.get(GAME, match_id).json()["version"]
    assert tags == [f'"{version}-s0"', f'"{version}-s1"', f'"{version}-spectator"']


def test_if_none_match_of_another_viewer_gets_a_full_answer(api):
    match_id, tokens = new(api)
    seat_0_tag = api.get(GAME, match_id, tokens[0]).headers["ETag"]
    as_seat_1 = api.get(GAME, match_id, tokens[1], **{"If-None-Match": seat_0_tag})
    assert as_seat_1.status_code == 200 and as_seat_1.json()["your_seat"] == 1
    spectator = api.get(GAME, match_id, **{"If-None-Match": seat_0_tag})
    assert spectator.status_code == 200 and spectator.json()["your_seat"] is None
    again = api.get(GAME, match_id, tokens[0], **{"If-None-Match": f"W/{seat_0_tag}"})
    assert again.status_code == 304 and again.headers["ETag"] == seat_0_tag


def test_if_none_match_is_answered_only_once_the_token_is_checked(api):
    match_id, tokens = new(api)
    tag = api.get(GAME, match_id, tokens[0]).headers["ETag"]
    for guess in (tag, "*"):
        wrong = api.get(GAME, match_id, "not-a-token", **{"If-None-Match": guess})
        assert wrong.status_code == 403 and wrong.json()["code"] == "invalid_token"
        malformed = api.http.get(
            f"{api.base}/v1/games/{GAME}/matches/{match_id}",
            headers={"Authorization": "Basic x", "If-None-Match": guess},
        )
        assert malformed.status_code == 401


def test_if_match_takes_the_version_or_an_etag_echoed_back(api):
    match_id, tokens = new(api)
    view = api.get(GAME, match_id, tokens[0])
    action = api.legal(GAME, match_id, tokens[0]).json()["actions"][0]
    played = api.act(GAME, match_id, tokens[0], action, If_Match=view.headers["ETag"])
    assert played.status_code == 200
    stale = api.act(GAME, match_id, tokens[0], action, If_Match=view.headers["ETag"])
    assert stale.status_code == 412
    version = played.json()["version"]
    bare = api.legal(GAME, match_id, tokens[0]).json()["actions"][0]
    assert api.act(GAME, match_id, tokens[0], bare, If_Match=f'"{version}"').status_code == 200
    for nonsense in ('"7-"', '"x-s0"', '"7-s0-s1"', '"7-' + "s" * 40 + '"'):
        answer = api.act(GAME, match_id, tokens[0], bare, If_Match=nonsense)
        assert answer.status_code == 400, nonsense
