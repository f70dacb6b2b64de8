"""A turn costs one read and one write: the recommended client loop (docs/clients/api.md)
plays a full two-player Ducale match to 500 against a bot, through the public
API of a real server with its bot worker and its default rate limits, and
never meets a 429."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator

import pytest
import requests

from engines import GAMES
from engines.ai import choose_action
from tests.support.servers import LiveServer, bot_workers

DEADLINE_S = 300  # a bound, not a measure: the match takes far less


@pytest.fixture
def server_with_bots(live_server: Callable[..., LiveServer]) -> Iterator[LiveServer]:
    """The app with its default rate limits, and a bot worker."""
    server = live_server(RATELIMIT_ENABLED=True)
    with bot_workers(server.app):
        yield server


def greedy(game: str, rng: random.Random):
    """A client's own bot: the game's greedy policy on the state its view allows."""
    engine = GAMES[game]

    def choose(match: dict) -> dict:
        state = engine.state_from_view(match["view"], match["your_seat"], rng)
        return choose_action(engine, state, match["your_seat"], "greedy", rng, 0.01)

    return choose


def play(base: str, game: str, match_id: str, token: str, choose) -> Counter:
    """The recommended loop; returns the requests it made, by kind and status."""
    http = requests.Session()
    http.headers["Authorization"] = f"Bearer {token}"
    url = f"{base}/v1/games/{game}/matches/{match_id}"
    with_legal = {"legal_actions": "true"}
    made: Counter = Counter()

    def call(kind: str, method: str, path: str, **kwargs) -> dict:
        answer = http.request(method, url + path, timeout=60, **kwargs)
        made[(kind, answer.status_code)] += 1
        assert answer.status_code == 200, answer.text
        return answer.json()

    match = call("read", "GET", "", params=with_legal)
    started = time.monotonic()
    while match["status"] != "finished":
        assert time.monotonic() - started < DEADLINE_S, "the match did not end in time"
        if match["legal_actions"]:
            action = choose(match)
            assert action in match["legal_actions"]
            match = call("action", "POST", "/actions", json=action, params=with_legal)
        else:  # not our turn: one read that answers when it is (or the match is over)
            match = call("read", "GET", "", params={**with_legal, "wait": 30})
    return made


def test_a_full_ducale_match_against_a_bot_meets_no_429(server_with_bots):
    base = server_with_bots.base
    created = requests.post(
        f"{base}/v1/games/ducale/matches",
        json={
            "players": [{"name": "Ada"}, {"bot": "greedy"}],
            # a blocked table ends its round after 3 stock rebuilds (without a bound,
            # as the rulebook has it, two greedy players can draw and discard forever)
            "options": {"target_score": 500, "max_stock_rebuilds": 3},
            "seed": 5,
        },
        timeout=10,
    )
    assert created.status_code == 201, created.text
    match = created.json()
    token = match["seats"][0]["token"]
    made = play(base, "ducale", match["id"], token, greedy("ducale", random.Random(5)))
    assert not [k for k in made if k[1] == 429]
    actions = sum(n for (kind, _), n in made.items() if kind == "action")
    total = sum(made.values())
    reads = sum(n for (kind, _), n in made.items() if kind == "read")
    print(f"{actions} actions in {total} requests ({total / actions:.2f} a move): {made}")
    # one read per turn (a turn: draw, melds, discard) and one write per action
    assert reads <= actions / 2 + 1


def test_a_read_with_wait_answers_when_the_seat_comes_to_act(live):
    base = f"{live.base}/v1/games/ducale/matches"
    created = requests.post(
        base, json={"players": [{"name": "Ada"}, {"name": "Bob"}], "seed": 2}, timeout=10
    ).json()
    url = f"{base}/{created['id']}"
    ada, bob = ({"Authorization": f"Bearer {s['token']}"} for s in created["seats"])
    answers: list = []

    def bob_waits() -> None:
        started = time.monotonic()
        answer = requests.get(url, params={"wait": 20, "legal_actions": "true"}, headers=bob)
        answers.append((time.monotonic() - started, answer))

    waiting = threading.Thread(target=bob_waits)
    waiting.start()
    time.sleep(0.5)
    assert not answers, "Bob is not to act: his read waits"
    drawn = requests.post(
        f"{url}/actions", json={"type": "draw"}, headers=ada, params={"legal_actions": "true"}
    ).json()
    time.sleep(0.3)
    assert not answers, "still Ada's turn"
    discard = next(a for a in drawn["legal_actions"] if a["type"] == "discard")
    assert requests.post(f"{url}/actions", json=discard, headers=ada).status_code == 200
    waiting.join(timeout=10)
    elapsed, answer = answers[0]
    assert answer.status_code == 200 and elapsed < 5
    match = answer.json()
    assert match["to_act"] == [1] and match["legal_actions"] and match["version"] == 3
    # not one's turn and nothing happens: the answer comes when the wait is over
    started = time.monotonic()
    late = requests.get(url, params={"wait": 1}, headers=ada, timeout=10)
    assert late.status_code == 200 and 0.9 <= time.monotonic() - started < 5
    assert late.json()["to_act"] == [1]
