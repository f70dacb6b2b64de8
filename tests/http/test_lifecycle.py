"""A match's life around its play, over HTTP against a real Redis: leave a
seat before the start, resign, abort, rematch; and what each answers when it
makes no sense (a 409 with a stable code, and Redis left as it was)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import orjson
import pytest
import redis

from engines import GAMES
from service.domain.endings import RESIGNED_BOT
from service.domain.fairness import REVEALED, verify
from service.store.matches import match_key
from tests.engines.conformance import new_match
from tests.support.client import ApiClient
from tests.support.matches import create_match, play_out
from tests.support.problems import assert_problem
from tests.support.servers import LiveServer, bot_workers


def snapshot(client: redis.Redis, game: str, match_id: str) -> tuple:
    """Everything Redis holds about a match: its hash, its log, its lobby
    entries and its place in the due set."""
    return (
        client.hgetall(f"m:{{{match_id}}}"),
        client.xrange(f"m:{{{match_id}}}:log"),
        [m for m in client.zrange(f"lobby:{{{game}}}", 0, -1) if match_id.encode() in m],
        client.zscore("ludotheque:due", match_id),
    )


ADA_BOB = [{"name": "Ada"}, {"name": "Bob"}]


@pytest.fixture
def api(live: LiveServer) -> ApiClient:
    return ApiClient(live.base)


# -- leave ---------------------------------------------------------------------
def test_leaving_before_the_start_opens_the_seat_and_its_token_stops_working(api):
    created = api.create("dekal", {"players": [{"name": "Ada"}, {}, {}], "listed": True}).json()
    match_id, token = created["id"], created["seats"][0]["token"]
    left = api.leave("dekal", match_id, 0, token)
    assert left.status_code == 200, left.text
    assert left.json()["seats"][0] == {"seat": 0, "name": None, "bot": None, "open": True}
    assert_problem(api.get("dekal", match_id, token), 403, "invalid_token")
    assert_problem(api.leave("dekal", match_id, 0, token), 403, "invalid_token")
    listed = [m for m in api.lobby("dekal", limit=50).json()["matches"] if m["id"] == match_id]
    assert listed and listed[0]["open_seats"] == [0, 1, 2]
    events = api.events("dekal", match_id).json()["events"]
    assert {"type": "seat_left", "seat": 0} in [
        {k: v for k, v in e.items() if k not in ("index", "version")} for e in events
    ]
    joined = api.join("dekal", match_id, 0, "Cleo")
    assert joined.status_code == 201 and joined.json()["name"] == "Cleo"


def test_a_left_seat_of_a_full_listed_match_is_listed_again(api):
    created = api.create("pacal", {"players": [{"name": "Ada"}, {}], "listed": True}).json()
    match_id = created["id"]
    joined = api.join("pacal", match_id, 1, "Bob").json()
    assert api.get("pacal", match_id).json()["status"] == "active"
    # started: too late to leave
    assert_problem(api.leave("pacal", match_id, 1, joined["token"]), 409, "match_started")
    ids = [m["id"] for m in api.lobby("pacal", limit=50).json()["matches"]]
    assert match_id not in ids


def test_leaving_a_waiting_match_puts_it_back_in_the_lobby(api):
    created = api.create(
        "gaudi", {"players": [{"name": "Ada"}, {"name": "Bob"}, {}], "listed": True}
    )
    match_id, bob = created.json()["id"], created.json()["seats"][1]["token"]
    assert api.leave("gaudi", match_id, 1, bob).status_code == 200
    entry = [m for m in api.lobby("gaudi", limit=50).json()["matches"] if m["id"] == match_id]
    assert entry[0]["open_seats"] == [1, 2]


def test_leaving_an_active_match_is_refused_and_changes_nothing(api, redis_client):
    match_id, tokens = create_match(api, "dekal", ADA_BOB)
    before = snapshot(redis_client, "dekal", match_id)
    assert_problem(api.leave("dekal", match_id, 0, tokens[0]), 409, "match_started")
    assert snapshot(redis_client, "dekal", match_id) == before


def test_leaving_another_seat_is_forbidden_and_changes_nothing(api, redis_client):
    created = api.create("dekal", {"players": [{"name": "Ada"}, {"name": "Bob"}, {}]}).json()
    match_id, bob = created["id"], created["seats"][1]["token"]
    before = snapshot(redis_client, "dekal", match_id)
    assert_problem(api.leave("dekal", match_id, 0, bob), 403, "not_your_seat")
    assert_problem(api.leave("dekal", match_id, 0, None), 401, "token_required")
    assert snapshot(redis_client, "dekal", match_id) == before


def test_leaving_a_match_whose_seed_was_chosen_is_assert_problem(api, redis_client):
    """A seeded match has every seat taken from the start (a seed is refused
    otherwise); however one of its seats comes to be open (a hand-edited
    store), its other holders cannot leave and let a stranger in."""
    created = api.create(
        "dekal", {"players": [{"name": "Ada"}, {"name": "Bob"}], "seed": 3}
    ).json()
    stored = orjson.loads(redis_client.hget(match_key(created["id"]), "d"))
    stored["seats"][1] = {"name": None, "token": None, "bot": None}
    redis_client.hset(match_key(created["id"]), "d", orjson.dumps(stored))
    before = snapshot(redis_client, "dekal", created["id"])
    assert_problem(
        api.leave("dekal", created["id"], 0, created["seats"][0]["token"]), 409, "seeded_match"
    )
    assert snapshot(redis_client, "dekal", created["id"]) == before


def unrevealed(outcome: dict) -> dict:
    """An outcome without the seed and salt that every end reveals (docs/clients/fairness.md)."""
    return {k: v for k, v in outcome.items() if k not in REVEALED}


# -- resign --------------------------------------------------------------------
@pytest.mark.parametrize("game", sorted(GAMES))
def test_resigning_a_two_player_match_makes_the_other_seat_win(api, game):
    match_id, tokens = create_match(api, game, ADA_BOB)
    if GAMES[game].name != "dekal":
        play_out(api, game, match_id, tokens, moves=1)
    to_act = api.get(game, match_id).json()["to_act"]
    pending = api.legal(game, match_id, tokens[to_act[0]]).json()["actions"][0]
    # the seat that resigns is not to act, when the game lets one wait
    quitter = next((s for s in (0, 1) if s not in to_act), 1)
    answer = api.resign(game, match_id, tokens[quitter])
    assert answer.status_code == 200, answer.text
    match = answer.json()
    assert match["status"] == "finished" and match["to_act"] == []
    winner = 1 - quitter
    assert unrevealed(match["outcome"]) == {
        "winners": [winner],
        "ranking": [[winner], [quitter]],
        "resigned": [quitter],
        "ended_by": "resignation",
        "by": quitter,
    }
    for viewer in (None, tokens[0], tokens[1]):  # one event, seen by all
        events = api.events(game, match_id, viewer).json()["events"]
        assert [e["seat"] for e in events if e["type"] == "resigned"] == [quitter]
        assert events[-1]["type"] == "match_over" and events[-1]["winners"] == [winner]
    assert_problem(api.act(game, match_id, tokens[to_act[0]], pending), 409, "match_over")
    assert api.legal(game, match_id, tokens[winner]).json()["actions"] == []


def test_resigning_a_finished_match_is_refused_and_changes_nothing(api, redis_client):
    match_id, tokens = create_match(api, "pacal", ADA_BOB)
    assert api.resign("pacal", match_id, tokens[0]).status_code == 200
    before = snapshot(redis_client, "pacal", match_id)
    assert_problem(api.resign("pacal", match_id, tokens[1]), 409, "match_over")
    assert_problem(api.resign("pacal", match_id, tokens[0]), 409, "match_over")
    assert snapshot(redis_client, "pacal", match_id) == before


def test_resigning_before_the_start_is_refused_and_changes_nothing(api, redis_client):
    created = api.create("ducale", {"players": [{"name": "Ada"}, {}]}).json()
    before = snapshot(redis_client, "ducale", created["id"])
    assert_problem(
        api.resign("ducale", created["id"], created["seats"][0]["token"]), 409, "match_not_started"
    )
    assert snapshot(redis_client, "ducale", created["id"]) == before


@pytest.mark.parametrize("game", ["dekal", "gaudi"])
def test_resigning_with_more_players_hands_the_seat_to_a_bot_and_ranks_it_last(
    api, live_bots, game, redis_client
):
    names = [{"name": "Ada"}, {"name": "Bob"}, {"name": "Cleo"}]
    created = api.create(game, {"players": names, "options": {}}).json()
    match_id, tokens = created["id"], [s.get("token") for s in created["seats"]]
    answer = api.resign(game, match_id, tokens[1])
    assert answer.status_code == 200, answer.text
    match = answer.json()
    assert match["status"] == "active" and match["your_seat"] == 1
    assert match["seats"][1]["bot"] == RESIGNED_BOT
    assert_problem(api.resign(game, match_id, tokens[1]), 409, "seat_resigned")
    if 1 in api.get(game, match_id).json()["to_act"]:
        action = api.legal(game, match_id, tokens[0]).json()["actions"] or [{"type": "reveal"}]
        assert_problem(api.act(game, match_id, tokens[1], action[0]), 409, "seat_resigned")
    played = [tokens[0], None, tokens[2]]
    final = play_out(api, game, match_id, played, 4)
    outcome = final["outcome"]
    assert outcome["resigned"] == [1] and 1 not in outcome["winners"]
    assert outcome["ranking"][-1] == [1] and outcome["winners"] == outcome["ranking"][0]
    assert sorted(s for group in outcome["ranking"] for s in group) == [0, 1, 2]
    events = api.events(game, match_id, after=0).json()["events"]
    resigned = [e for e in events if e["type"] == "resigned"]
    assert [(e["seat"], e["bot"], e["version"]) for e in resigned] == [(1, RESIGNED_BOT, 2)]
    over = events[-1]
    assert over["type"] == "match_over" and over["winners"] == outcome["winners"]
    assert over["ranking"] == outcome["ranking"]
    # its record proves itself: the resigned seat's bot, the outcome ranking it last
    record = api.http.get(f"{api.base}/v1/games/{game}/matches/{match_id}/record").json()
    assert verify(record) == []


def test_the_last_seat_in_wins_when_the_others_resign(api, live_bots):
    created = api.create(
        "ducale", {"players": [{"name": "Ada"}, {"name": "Bob"}, {"bot": "random"}]}
    ).json()
    match_id, tokens = created["id"], [s.get("token") for s in created["seats"]]
    assert api.resign("ducale", match_id, tokens[0]).json()["status"] == "active"
    final = api.resign("ducale", match_id, tokens[1]).json()
    assert final["status"] == "finished"
    assert final["outcome"]["winners"] == [2]
    assert final["outcome"]["ranking"] == [[2], [1], [0]]
    record = api.http.get(f"{api.base}/v1/games/ducale/matches/{match_id}/record").json()
    assert verify(record) == []


def test_a_seat_resigned_past_its_bot_cap_has_a_record_that_verifies(redis_url):
    """A seat resigned past its resigner's cap of bot seats is played by the
    cheap bot (random): its record says so, and verify accepts it."""
    with LiveServer({"REDIS_URL": redis_url, "BOT_SEATS_PER_ADDRESS": 1}) as live:
        api = ApiClient(live.base)
        # the address's one bot seat, taken (already, by an earlier test's
        # live bots from this address in the same Redis: 429)
        taken = api.create("pacal", {"players": [{"name": "Ada"}, {"bot": "random"}]})
        assert taken.ok or taken.json()["code"] == "bot_seats_exceeded", taken.text
        created = api.create("dekal", {"players": [{"name": n} for n in "ABC"]}).json()
        match_id, tokens = created["id"], [s.get("token") for s in created["seats"]]
        with bot_workers(live.app):
            assert api.resign("dekal", match_id, tokens[0]).json()["seats"][0]["bot"] == "random"
            final = play_out(api, "dekal", match_id, [None, tokens[1], tokens[2]])
        assert final["outcome"]["ranking"][-1] == [0]
        record = api.http.get(f"{api.base}/v1/games/dekal/matches/{match_id}/record").json()
    assert verify(record) == []


# -- abort -----------------------------------------------------------------------
def test_aborting_before_anyone_acts_ends_with_no_winner(api):
    match_id, tokens = create_match(api, "gaudi", ADA_BOB, listed=True)
    answer = api.abort("gaudi", match_id, tokens[1])
    assert answer.status_code == 200, answer.text
    match = answer.json()
    assert match["status"] == "finished"
    assert unrevealed(match["outcome"]) == {
        "winners": [],
        "ranking": [],
        "resigned": [],
        "ended_by": "abort",
        "by": 1,
    }
    events = api.events("gaudi", match_id).json()["events"]
    assert [e["type"] for e in events[-2:]] == ["aborted", "match_over"]
    assert_problem(api.abort("gaudi", match_id, tokens[0]), 409, "match_over")


def test_a_waiting_listed_match_aborted_leaves_the_lobby(api):
    created = api.create("dekal", {"players": [{"name": "Ada"}, {}], "listed": True}).json()
    assert api.abort("dekal", created["id"], created["seats"][0]["token"]).status_code == 200
    ids = [m["id"] for m in api.lobby("dekal", limit=50).json()["matches"]]
    assert created["id"] not in ids
    assert_problem(api.join("dekal", created["id"], 1, "Bob"), 409, "match_over")


def test_aborting_after_only_bots_acted_is_allowed(api, live_bots):
    body = {"players": [{"bot": "random"}, {"name": "Ada"}]}
    # a seed where the bot's seat starts (the higher card under slot 0 starts)
    pacal = GAMES["pacal"]
    seed = next(s for s in range(100) if pacal.to_act(new_match(pacal, 2, s)) == [0])
    created = api.create("pacal", body | {"seed": seed}).json()
    match_id, token = created["id"], created["seats"][1]["token"]
    for _ in range(500):  # until the bot has moved and it is Ada's turn
        match = api.get("pacal", match_id).json()
        if match["version"] > 1 and 1 in match["to_act"]:
            break
        threading.Event().wait(0.01)
    assert match["version"] > 1
    assert api.abort("pacal", match_id, token).json()["outcome"]["ended_by"] == "abort"


def test_aborting_after_a_human_move_is_refused_and_changes_nothing(api, redis_client):
    match_id, tokens = create_match(api, "ducale", ADA_BOB)
    play_out(api, "ducale", match_id, tokens, moves=1)
    before = snapshot(redis_client, "ducale", match_id)
    assert_problem(api.abort("ducale", match_id, tokens[0]), 409, "abort_too_late")
    assert_problem(api.abort("ducale", match_id, tokens[1]), 409, "abort_too_late")
    assert_problem(api.abort("ducale", match_id, "not-a-token"), 403, "invalid_token")
    assert snapshot(redis_client, "ducale", match_id) == before


# -- rematch ---------------------------------------------------------------------
def test_a_rematch_of_an_unfinished_match_is_refused_and_changes_nothing(api, redis_client):
    match_id, tokens = create_match(api, "dekal", ADA_BOB)
    before = snapshot(redis_client, "dekal", match_id)
    assert_problem(api.rematch("dekal", match_id, tokens[0]), 409, "match_not_over")
    assert snapshot(redis_client, "dekal", match_id) == before


def test_a_rematch_rotates_the_seats_and_needs_each_holders_acceptance(api):
    players = [{"name": "Ada"}, {"name": "Bob"}, {"bot": "random"}]
    created = api.create("dekal", {"players": players, "options": {"first_player": 0}}).json()
    old, tokens = created["id"], [s.get("token") for s in created["seats"]]
    api.resign("dekal", old, tokens[0])
    assert api.resign("dekal", old, tokens[1]).json()["status"] == "finished"
    offered = api.rematch("dekal", old, tokens[0])
    assert offered.status_code == 201, offered.text
    ada = offered.json()
    new = ada["id"]
    assert ada["seat"] == 2 and ada["name"] == "Ada" and ada["status"] == "waiting"
    # announced in the old match's view and log
    assert api.get("dekal", old).json()["rematch"] == {"id": new, "offered_by": 0}
    offers = [
        e for e in api.events("dekal", old).json()["events"] if e["type"] == "rematch_offered"
    ]
    assert [(e["seat"], e["match"]) for e in offers] == [(0, new)]
    # same game and options, seats rotated: old seat 1 first, the bot at once
    waiting = api.get("dekal", new, ada["token"]).json()
    assert waiting["options"]["first_player"] == 0 and waiting["your_seat"] == 2
    assert [(s["name"], s["bot"], s.get("reserved", False)) for s in waiting["seats"]] == [
        ("Bob", None, True),
        (None, "random", False),
        ("Ada", None, False),
    ]
    assert_problem(api.join("dekal", new, 0, "Mallory"), 409, "seat_reserved")
    assert_problem(api.rematch("dekal", old, tokens[0]), 409, "rematch_already_accepted")
    bob = api.rematch("dekal", old, tokens[1]).json()
    assert (bob["id"], bob["seat"], bob["status"]) == (new, 0, "active")
    started = api.get("dekal", new, bob["token"]).json()
    assert started["status"] == "active" and started["your_seat"] == 0
    # old tokens hold no seat
    assert_problem(api.get("dekal", new, tokens[1]), 403, "invalid_token")


def test_two_seats_asking_at_once_get_one_rematch(api):
    for _ in range(5):
        match_id, tokens = create_match(api, "pacal", ADA_BOB)
        api.resign("pacal", match_id, tokens[0])
        with ThreadPoolExecutor(2) as pool:
            answers = list(pool.map(lambda t, m=match_id: api.rematch("pacal", m, t), tokens))
        assert [a.status_code for a in answers] == [201, 201]
        assert answers[0].json()["id"] == answers[1].json()["id"]
        assert sorted(a.json()["seat"] for a in answers) == [0, 1]
        assert answers[0].json()["status"] == "active" or answers[1].json()["status"] == "active"


def test_a_rematch_called_off_by_a_seat_cannot_be_accepted_and_changes_nothing(api, redis_client):
    match_id, tokens = create_match(api, "gaudi", ADA_BOB)
    api.resign("gaudi", match_id, tokens[1])
    ada = api.rematch("gaudi", match_id, tokens[0]).json()
    assert api.abort("gaudi", ada["id"], ada["token"]).json()["outcome"]["ended_by"] == "abort"
    before = snapshot(redis_client, "gaudi", ada["id"]), snapshot(redis_client, "gaudi", match_id)
    assert_problem(api.rematch("gaudi", match_id, tokens[1]), 409, "match_over")
    after = snapshot(redis_client, "gaudi", ada["id"]), snapshot(redis_client, "gaudi", match_id)
    assert after == before


# -- records of matches that ended early ---------------------------------------
@pytest.mark.parametrize("ending", ["resign", "abort"])
def test_a_match_ended_early_has_a_record_that_verifies_and_catches_a_changed_ending(api, ending):
    """A resignation or an abort ends a match outside its rules: its record
    holds it (``endings``), and ``verify`` replays it to the same outcome."""
    match_id, tokens = create_match(api, "dekal", ADA_BOB)
    if ending == "resign":
        play_out(api, "dekal", match_id, tokens, moves=1)
    answer = getattr(api, ending)("dekal", match_id, tokens[1])
    assert answer.status_code == 200, answer.text
    record = api.http.get(f"{api.base}/v1/games/dekal/matches/{match_id}/record").json()
    assert record["endings"] == [
        {
            "type": "resigned" if ending == "resign" else "aborted",
            "seat": 1,
            "after": 1 if ending == "resign" else 0,
        }
    ]
    assert verify(record) == []
    other_seat = {**record, "endings": [{**record["endings"][0], "seat": 0}]}
    assert verify(other_seat), "a record whose ending names another seat must fail"
    no_ending = {**record, "endings": []}
    assert verify(no_ending), "a record that drops its ending must fail"
