"""Caching correct for every viewer (issue 15, point 6): every answer that
depends on the token is private and varies by Authorization, the ETag names
the viewer, and If-None-Match is answered only once the token is checked.
The browser's own sequence, through a real HTTP cache, is replayed in
tests/attacks/test_hostile_http.py."""

from __future__ import annotations

import orjson
import pytest
from flask import Flask
from marshmallow import Schema
from werkzeug.exceptions import UnprocessableEntity

from service.http.answers import answer_etag
from service.http.arguments import KEPT, Parser
from service.http.schemas import MatchQuerySchema, StreamQuerySchema
from tests.support.client import ApiClient
from tests.support.problems import assert_problem

GAME = "ducale"


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
        assert_problem(wrong, 403, "invalid_token")
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


def test_an_actions_etag_names_the_version_and_seat_of_its_answer(api):
    match_id, tokens = new(api)
    url = f"{api.base}/v1/games/{GAME}/matches/{match_id}/actions"
    for turn in range(6):  # both seats, with and without legal actions, and a replay
        to_act = api.get(GAME, match_id).json()["to_act"][0]
        token = tokens[to_act]
        action = api.legal(GAME, match_id, token).json()["actions"][0]
        played = api.http.post(
            url,
            json=action,
            params={"legal_actions": "true"} if turn % 2 else {},
            headers={"Authorization": f"Bearer {token}", "Idempotency-Key": f"k{turn}"},
        )
        answer = played.json()
        assert played.status_code == 200 and answer["your_seat"] == to_act
        assert played.headers["ETag"] == f'"{answer["version"]}-s{to_act}"'
        again = api.http.post(
            url,
            json=action,
            headers={"Authorization": f"Bearer {token}", "Idempotency-Key": f"k{turn}"},
        )
        assert again.headers["Idempotent-Replayed"] == "true"
        assert again.headers["ETag"] == played.headers["ETag"]


@pytest.mark.parametrize(
    ("answer", "tag"),
    [
        (
            {"id": "0" * 32, "game": "dekal", "status": "active", "version": 7, "your_seat": 1},
            '"7-s1"',
        ),
        ({"version": 7, "id": "0" * 32, "your_seat": None}, '"7-spectator"'),
        (
            {
                "id": "0" * 32,
                "game": "dekal",
                "status": "active",
                "version": 12,
                "view": {"x": 1, "your_seat": 4},
                "your_seat": 0,
            },
            '"12-s0"',
        ),
    ],
)
def test_an_answers_etag_is_read_whatever_order_its_keys_take(answer, tag):
    assert answer_etag(orjson.dumps(answer)) == tag


def test_with_an_origin_list_answers_vary_by_origin_and_authorization(live_server):
    server = live_server(CORS_ORIGINS=["https://play.example"])
    api = ApiClient(server.base, server.http)
    match_id, tokens = new(api)
    answer = api.get(GAME, match_id, tokens[0], Origin="https://play.example")
    varies = [value.strip() for value in answer.headers["Vary"].split(",")]
    assert sorted(varies) == ["Authorization", "Origin"]
    assert answer.headers["Access-Control-Allow-Origin"] == "https://play.example"


def test_a_query_string_is_read_whether_or_not_the_one_before_had_one(api):
    match_id, tokens = new(api)
    url = f"{api.base}/v1/games/{GAME}/matches/{match_id}"
    bearer = {"Authorization": f"Bearer {tokens[0]}"}
    for query in ({}, {"legal_actions": "true"}, {}, {"wait": "99"}, {}, {"legal_actions": "1"}):
        answer = api.http.get(url, params=query, headers=bearer)
        if "wait" in query:
            assert answer.status_code == 422 and "wait" in answer.json()["errors"]
        else:
            assert answer.status_code == 200
            assert ("legal_actions" in answer.json()) == bool(query), query


def test_a_query_string_met_again_loads_the_same_and_keeps_no_text_of_the_clients():
    parser = Parser()
    app = Flask(__name__)
    views, streams = MatchQuerySchema(), StreamQuerySchema()

    def load(schema: Schema, query: str) -> dict:
        with app.test_request_context(f"/?{query}"):
            return parser.parse(schema, location="query")

    first = load(views, "legal_actions=true&wait=30")
    again = load(views, "legal_actions=true&wait=30")
    assert first == again == {"legal_actions": True, "wait": 30.0} and first is not again
    again["wait"] = 0  # a view's own copy
    assert load(views, "legal_actions=true&wait=30")["wait"] == 30.0
    for _ in range(2):
        with pytest.raises(UnprocessableEntity):
            load(views, "wait=99")
    assert load(streams, "ticket=secret&after=3") == {"ticket": "secret", "after": 3}
    assert not any(b"secret" in query for _, query in parser.loaded)
    for n in range(KEPT + 5):
        assert load(views, f"wait={n % 31}&n={n}")["wait"] == n % 31
    assert len(parser.loaded) <= KEPT
