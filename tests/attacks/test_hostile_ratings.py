"""The adversary's attacks on ratings and leaderboards (issue 37, point 9):
dodging a rated match unrated (abort, leave), a resignation that would not
cost, reading what is not public through the leaderboard or the history,
``?around=me`` with the wrong credential, and pages out of bounds."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.ranked import fresh_ratings, match_over, new_player, rated_match, resign
from tests.support.servers import LiveServer


@pytest.fixture(scope="module")
def server(redis_url: str, module_db_url: str) -> Iterator[LiveServer]:
    config = {"REDIS_URL": redis_url, "DATABASE_URL": module_db_url}
    with LiveServer(config | {"LEADERBOARD_MIN_MATCHES": 1}) as live:
        fresh_ratings(live.app.extensions["ludotheque.matches"].store.client)
        yield live


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def match_url(server: LiveServer, match_id: str) -> str:
    return f"{server.base}/v1/games/dekal/matches/{match_id}"


def test_a_rated_match_cannot_be_aborted_even_before_anyone_acted(server):
    """An abort ends a match unrated: a matched player who dislikes its
    opponent would dodge at no cost. Refused with 409 rated_match."""
    ada, bob = new_player(server, "Ada"), new_player(server, "Bob")
    match_id = rated_match(server, "dekal", [ada, bob])
    for player in (ada, bob):
        refused = server.http.post(
            match_url(server, match_id) + "/abort", headers=bearer(player["token"])
        )
        assert refused.status_code == 409, refused.text
        assert refused.json()["code"] == "rated_match" and "resign" in refused.json()["detail"]
    assert server.http.get(match_url(server, match_id)).json()["status"] == "active"


def test_leaving_a_rated_match_right_after_being_matched_is_refused(server):
    ada, bob = new_player(server, "Ada"), new_player(server, "Bob")
    match_id = rated_match(server, "dekal", [ada, bob])
    left = server.http.delete(
        match_url(server, match_id) + "/seats/1", headers=bearer(bob["token"])
    )
    assert left.status_code == 409 and left.json()["code"] == "match_started"


def test_resigning_at_once_ranks_last_and_costs_rating(server):
    """Dodging by resigning before the first move is rated like any loss."""
    ada, bob = new_player(server, "Ada"), new_player(server, "Bob")
    match_id = rated_match(server, "dekal", [ada, bob])
    assert resign(server, "dekal", match_id, ada["token"]).status_code == 200
    over = match_over(server, "dekal", match_id)
    assert over["ranking"] == [[1], [0]] and over["ended_by"] == "resignation"
    loser, winner = over["ratings"]
    assert loser["player"] == ada["id"] and loser["after"]["rating"] < loser["before"]["rating"]
    assert winner["after"]["rating"] > winner["before"]["rating"]
    again = server.http.post(match_url(server, match_id) + "/resign", headers=bearer(ada["token"]))
    assert again.status_code == 409  # over: no second rating
    mine = server.http.get(f"{server.base}/v1/games/dekal/leaderboard", params={"limit": 100})
    assert mine.status_code == 200


def test_the_ratings_reveal_no_app_nor_external_id(server):
    operator = server.app.extensions["ludotheque.players"]
    app_id, key = operator.create_app("Secretive")
    made = server.http.post(
        f"{server.base}/v1/apps/me/players",
        json={"external_id": "user-secret-4242", "name": "Eve"},
        headers=bearer(key),
    )
    assert made.status_code == 200, made.text
    eve = {"id": made.json()["id"], "name": "Eve", "bot": False, "token": made.json()["token"]}
    bob = new_player(server, "Bob")
    match_id = rated_match(server, "dekal", [eve, bob])
    resign(server, "dekal", match_id, bob["token"])
    answers = [
        server.http.get(match_url(server, match_id) + "/events", params={"limit": 1000}),
        server.http.get(f"{server.base}/v1/games/dekal/leaderboard", params={"limit": 100}),
        server.http.get(f"{server.base}/v1/players/{eve['id']}/ratings"),
        server.http.get(
            f"{server.base}/v1/games/dekal/leaderboard",
            params={"around": "me"},
            headers=bearer(eve["token"]),
        ),
    ]
    for answer in answers:
        assert answer.status_code == 200, answer.text
        for secret in (app_id, key, "user-secret-4242", eve["token"], bob["token"]):
            assert secret not in answer.text
    listed = [e for e in answers[1].json()["entries"] if e["player"] == eve["id"]]
    assert listed and "app" not in listed[0] and "external_id" not in listed[0]


def test_around_me_needs_a_player_token_and_says_so(server):
    ada, bob = new_player(server, "Ada"), new_player(server, "Bob")
    match_id = rated_match(server, "dekal", [ada, bob])
    url = f"{server.base}/v1/games/dekal/leaderboard"
    nobody = server.http.get(url, params={"around": "me"})
    assert nobody.status_code == 401 and nobody.json()["code"] == "token_required"
    assert "player token" in nobody.json()["detail"]
    seat = server.http.post(
        f"{server.base}/v1/games/dekal/matches", json={"players": [{"name": "A"}, {"name": "B"}]}
    ).json()["seats"][0]["token"]
    with_seat = server.http.get(url, params={"around": "me"}, headers=bearer(seat))
    assert with_seat.status_code == 401 and with_seat.json()["code"] == "token_required"
    _, key = server.app.extensions["ludotheque.players"].create_app("Peeker")
    with_app = server.http.get(url, params={"around": "me"}, headers=bearer(key))
    assert with_app.status_code == 403 and with_app.json()["code"] == "wrong_token_kind"
    forged = server.http.get(
        url, params={"around": "me"}, headers=bearer("ldq_player_" + "A" * 43)
    )
    assert forged.status_code == 401 and forged.json()["code"] == "invalid_token"
    assert match_id  # (the players exist and are rated or not: nothing else leaks)


@pytest.mark.parametrize(
    "params",
    [
        {"limit": 0},
        {"limit": 101},
        {"limit": -1},
        {"limit": "ten"},
        {"after": -1},
        {"after": 10**12},
        {"bots": "yes"},
        {"around": "you"},
    ],
)
def test_leaderboard_pages_out_of_bounds_are_refused(server, params):
    answer = server.http.get(f"{server.base}/v1/games/dekal/leaderboard", params=params)
    assert answer.status_code == 422 and answer.json()["code"] == "invalid_request"


def test_a_page_past_the_end_is_empty_and_an_unknown_game_or_player_is_refused(server):
    far = server.http.get(f"{server.base}/v1/games/dekal/leaderboard", params={"after": 10**9})
    assert far.status_code == 200 and far.json()["entries"] == [] and far.json()["next"] is None
    chess = server.http.get(f"{server.base}/v1/games/chess/leaderboard")
    assert chess.status_code in (404, 422)
    nobody = server.http.get(f"{server.base}/v1/players/{'0' * 32}/ratings")
    assert nobody.status_code == 404 and nobody.json()["code"] == "player_not_found"
    bad = server.http.get(f"{server.base}/v1/players/{'0' * 32}/ratings", params={"cursor": "x"})
    assert bad.status_code == 422
    for limit in (0, 101):
        page = server.http.get(
            f"{server.base}/v1/players/{'0' * 32}/ratings", params={"limit": limit}
        )
        assert page.status_code == 422
