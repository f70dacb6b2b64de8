"""The lobby over HTTP against a real Redis: what it lists and how, under
concurrent joins, with a bounded number of Redis round trips."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis

from tests.support.client import ApiClient
from tests.support.servers import LiveServer

GAME = "ducale"  # 2 to 6 players: room for every filter; no other test lists it


@pytest.fixture(scope="module")
def lobby_live(redis_url: str, redis_client: redis.Redis):
    """A server of its own, on a lobby emptied first (other tests list matches too)."""
    redis_client.delete(f"lobby:{{{GAME}}}")
    with LiveServer({"REDIS_URL": redis_url}) as server:
        yield server


@pytest.fixture
def api(lobby_live: LiveServer) -> ApiClient:
    return ApiClient(lobby_live.base)


def listed(api: ApiClient, players: list[dict], **extra) -> dict:
    answer = api.create(GAME, {"players": players, "listed": True, **extra})
    assert answer.status_code == 201, answer.text
    return answer.json()


def everything(api: ApiClient, **params) -> list[dict]:
    """Every page of the lobby, following the cursor."""
    shown, cursor = [], None
    while True:
        page = api.lobby(GAME, **params, **({"cursor": cursor} if cursor else {})).json()
        shown += page["matches"]
        cursor = page["next"]
        if cursor is None:
            return shown


def test_a_listed_match_shows_its_open_seats_and_no_token(api):
    created = listed(api, [{"name": "Ada"}, {}, {"bot": "random"}], options={"target_score": 100})
    entry = next(m for m in everything(api) if m["id"] == created["id"])
    assert entry == {
        "id": created["id"],
        "players": 3,
        "open_seats": [1],
        "options": created["options"],
        "created_at": entry["created_at"],
        "seats": [
            {"seat": 0, "name": "Ada", "bot": None, "open": False},
            {"seat": 1, "name": None, "bot": None, "open": True},
            {"seat": 2, "name": None, "bot": "random", "open": False},
        ],
    }
    assert abs(entry["created_at"] - time.time()) < 60
    assert "token" not in str(api.lobby(GAME).json())
    assert api.get(GAME, created["id"]).json()["listed"] is True


def test_unlisted_matches_never_appear(api):
    hidden = api.create(GAME, {"players": [{"name": "Ada"}, {}]}).json()
    also_hidden = api.create(GAME, {"players": [{}, {}], "listed": False}).json()
    ids = {m["id"] for m in everything(api)}
    assert hidden["id"] not in ids and also_hidden["id"] not in ids


def test_the_lobby_is_newest_first_with_a_cursor(api):
    made = [listed(api, [{}, {}])["id"] for _ in range(7)]
    first = api.lobby(GAME, limit=3).json()
    assert [m["id"] for m in first["matches"]] == made[::-1][:3]
    # matches created meanwhile do not shift the next page
    listed(api, [{}, {}])
    second = api.lobby(GAME, limit=3, cursor=first["next"]).json()
    assert [m["id"] for m in second["matches"]] == made[::-1][3:6]
    ids = [m["id"] for m in everything(api, limit=2)]
    assert len(ids) == len(set(ids))
    assert [i for i in ids if i in made] == made[::-1]
    created = [m["created_at"] for m in everything(api)]
    assert created == sorted(created, reverse=True)


def test_the_lobby_filters_on_players_and_open_seats(api):
    four = listed(api, [{"name": "A"}, {}, {}, {}])["id"]
    three = listed(api, [{"name": "A"}, {"name": "B"}, {}])["id"]
    five = listed(api, [{}, {}, {}, {}, {}])["id"]
    by_players = {m["id"] for m in everything(api, players=4)}
    assert four in by_players and not {three, five} & by_players
    assert all(m["players"] == 4 for m in everything(api, players=4))
    roomy = {m["id"] for m in everything(api, open_seats=3)}
    assert {four, five} <= roomy and three not in roomy
    assert all(len(m["open_seats"]) >= 3 for m in everything(api, open_seats=3))
    both = {m["id"] for m in everything(api, players=5, open_seats=5)}
    assert five in both and four not in both


@pytest.mark.parametrize(
    "query",
    [{"limit": 0}, {"limit": 51}, {"players": "two"}, {"cursor": "x"}, {"open_seats": 0}],
)
def test_a_malformed_lobby_query_is_a_422(api, query):
    answer = api.lobby(GAME, **query)
    assert answer.status_code == 422
    assert answer.json()["code"] == "invalid_request"


def test_a_match_leaves_the_lobby_when_it_starts_and_when_it_is_aborted(api, redis_client):
    started = listed(api, [{"name": "Ada"}, {}])
    aborted = listed(api, [{"name": "Ada"}, {}])
    assert {started["id"], aborted["id"]} <= {m["id"] for m in everything(api)}
    api.join(GAME, started["id"], 1, "Bob")
    api.abort(GAME, aborted["id"], aborted["seats"][0]["token"])
    assert not {started["id"], aborted["id"]} & {m["id"] for m in everything(api)}
    members = redis_client.zrange(f"lobby:{{{GAME}}}", 0, -1)
    assert not [m for m in members if started["id"].encode() in m or aborted["id"].encode() in m]


def test_an_expired_match_leaves_the_lobby(live_server, redis_client):
    server = live_server(WAITING_TTL=1)
    api = ApiClient(server.base)
    gone = listed(api, [{"name": "Ada"}, {}])["id"]
    assert gone in {m["id"] for m in everything(api)}
    time.sleep(2.1)
    assert not redis_client.exists(f"m:{{{gone}}}")
    assert gone not in {m["id"] for m in everything(api)}
    members = redis_client.zrange(f"lobby:{{{GAME}}}", 0, -1)
    assert not [m for m in members if gone.encode() in m]  # swept by the read


def test_fifty_racing_joins_for_the_last_seat_have_one_winner_each(api):
    """Each of these listed matches has one seat left; 50 joins race for it.
    Exactly one wins each seat, and no lobby page read after a win shows
    that match."""
    matches = [listed(api, [{"name": "Ada"}, {}])["id"] for _ in range(4)]
    started: set[str] = set()
    racing = threading.Event()
    seen_after_start: list[str] = []

    def watch() -> None:
        while racing.is_set():
            known = set(started)  # started before this read began
            shown = {m["id"] for m in everything(api, limit=50)}
            seen_after_start.extend(known & shown)

    def join(i: int) -> tuple[str, int, str]:
        match_id = matches[i % len(matches)]
        answer = api.join(GAME, match_id, 1, f"P{i}")
        if answer.status_code == 201:
            started.add(match_id)
        return (
            match_id,
            answer.status_code,
            answer.json()["code" if answer.status_code != 201 else "name"],
        )

    racing.set()
    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        with ThreadPoolExecutor(50) as pool:
            answers = list(pool.map(join, range(50 * len(matches))))
    finally:
        racing.clear()
        watcher.join()
    for match_id in matches:
        mine = [(status, code) for m, status, code in answers if m == match_id]
        assert len(mine) == 50
        assert sum(status == 201 for status, _ in mine) == 1
        assert {code for status, code in mine if status != 201} == {"seat_taken"}
        assert api.get(GAME, match_id).json()["status"] == "active"
    assert seen_after_start == []
    assert not set(matches) & {m["id"] for m in everything(api)}


class RoundTrips:
    """Counts the requests the app's Redis connections send (a pipeline is one)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        send = redis.connection.AbstractConnection.send_packed_command

        def counted(connection, command, check_health=True):
            self.count += 1
            return send(connection, command, check_health)

        monkeypatch.setattr(redis.connection.AbstractConnection, "send_packed_command", counted)


def test_a_lobby_page_costs_a_bounded_number_of_round_trips(api, monkeypatch):
    trips = RoundTrips(monkeypatch)
    costs = []
    for batch in (5, 150):
        for _ in range(batch):
            listed(api, [{"name": "A"}, {}])
        for query in ({"limit": 20}, {"limit": 20, "players": 6}, {"limit": 50}):
            trips.count = 0
            assert api.lobby(GAME, **query).status_code == 200
            costs.append(trips.count)
    # 3 batches at most, each a range read and a pipelined read (and a sweep)
    assert max(costs) <= 9, costs
