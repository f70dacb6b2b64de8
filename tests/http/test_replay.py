"""GET /v1/games/G/matches/{id}/replay: a finished match step by step, for
anyone, from its record; every hand at the end; never a token."""

from __future__ import annotations

import time
import tracemalloc
import uuid

import pytest

from engines import GAMES
from service.domain import replays
from service.domain.clocks import engine_options
from tests.support.matches import create_match, long_match, play_out, replay_from_log
from tests.support.problems import assert_problem

# Short matches: a person (random legal moves) against bots, seeded (practice).
MATCHES = {
    "dekal": ([{"name": "Ada"}, {"bot": "greedy"}], {}),
    "pacal": ([{"name": "Ada"}, {"bot": "greedy"}], {"manches_to_win": 1}),
    "gaudi": ([{"name": "Ada"}, {"bot": "greedy"}, {"bot": "random"}], {"short_game": True}),
    "ducale": ([{"name": "Ada"}, {"bot": "greedy"}], {"target_score": 1}),
}


def replay_of(api, game: str, match_id: str, **query):
    return api.http.get(f"{api.base}/v1/games/{game}/matches/{match_id}/replay", params=query)


def record_of(api, game: str, match_id: str):
    return api.http.get(f"{api.base}/v1/games/{game}/matches/{match_id}/record")


def whole_replay(api, game: str, match_id: str, limit: int) -> tuple[list[dict], list[dict]]:
    """Every page of the replay, in order, and their steps put together."""
    pages, start = [], 0
    while start is not None:
        answer = replay_of(api, game, match_id, **{"from": start, "limit": limit})
        assert answer.status_code == 200, answer.text
        assert answer.headers["Cache-Control"] == "public, max-age=86400"
        pages.append(answer.json())
        start = pages[-1]["next"]
    return pages, [step for found in pages for step in found["steps"]]


def keys_in(value) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys_in(v)}
    if isinstance(value, list):
        return {k for v in value for k in keys_in(v)}
    return set()


@pytest.mark.parametrize("game", list(MATCHES))
def test_a_finished_match_replays_step_by_step_with_every_hand_at_the_end(
    api, live_bots, redis_client, game
):
    players, options = MATCHES[game]
    match_id, tokens = create_match(api, game, players, options=options, seed=35)
    play_out(api, game, match_id, tokens, rng=35)
    record = api.http.get(f"{api.base}/v1/games/{game}/matches/{match_id}/record").json()

    pages, steps = whole_replay(api, game, match_id, limit=5)
    engine = GAMES[game]
    for replay in pages:
        assert replay["id"] == match_id and replay["game"] == game
        assert replay["seats"] == record["seats"]
        assert replay["outcome"] == record["outcome"]
        assert replay["endings"] == record["endings"]
        assert replay["steps_total"] == len(record["actions"]) + 1
    assert [replay["from"] for replay in pages] == list(range(0, len(steps), 5))
    assert len(steps) == len(record["actions"]) + 1 > 5
    assert [step["index"] for step in steps] == list(range(len(steps)))
    start = engine.setup(engine_options(record["options"]), len(players), record["seed"])
    assert steps[0] == {
        "index": 0,
        "seat": None,
        "action": None,
        "events": [],
        "view": engine.view(start, None),
    }
    for step, done in zip(steps[1:], record["actions"], strict=True):
        assert (step["seat"], step["action"], step["events"]) == (
            done["seat"],
            done["action"],
            done["events"],
        )
    assert steps[-1]["view"] == record["final_view"]
    # every seat's own view at the end: the person's as the API shows it to
    # its token, each seat's as the engine shows it from the stored state
    _, state, _ = replay_from_log(redis_client, match_id)
    hands = pages[-1]["hands"]
    assert all(replay["hands"] is None for replay in pages[:-1])
    assert hands == [engine.view(state, seat) for seat in range(len(players))]
    assert hands[0] == api.get(game, match_id, tokens[0]).json()["view"]
    assert "token" not in keys_in(pages)
    assert tokens[0] not in str(pages)
    # the first page by default: up to 100 steps; the second ask the same
    answer = replay_of(api, game, match_id)
    assert answer.json()["steps"] == steps[:100]
    assert replay_of(api, game, match_id).content == answer.content


def test_a_match_not_over_has_no_replay_yet(api):
    waiting, _ = create_match(api, "dekal", [{"name": "Ada"}, {}])
    assert_problem(replay_of(api, "dekal", waiting), 409, "match_not_over")
    active, tokens = create_match(api, "pacal", 2)
    play_out(api, "pacal", active, tokens, moves=1)
    assert_problem(replay_of(api, "pacal", active), 409, "match_not_over")


def test_an_unknown_match_or_game_has_no_replay(api):
    assert_problem(replay_of(api, "gaudi", uuid.uuid4().hex), 404, "match_not_found")
    assert_problem(replay_of(api, "gaudi", "not-an-id"), 404, "match_not_found")
    other, _ = create_match(api, "dekal", [{"name": "Ada"}, {}])
    assert_problem(replay_of(api, "ducale", other), 404, "match_not_found")
    assert replay_of(api, "chess", uuid.uuid4().hex).status_code == 404


@pytest.fixture(scope="module")
def long_ducale(live) -> str:
    """A finished Ducale of 20,000 actions (the most a replay serves) between
    two people playing at random: made in-process in about 9 s."""
    return long_match(live.matches, "ducale", replays.MAX_ACTIONS, {"target_score": 10000})


class RequestCpu:
    """WSGI middleware: the CPU seconds of the thread that served the last
    request. werkzeug's threaded server gives each request a thread of its
    own, so other threads of this process (servers that earlier modules
    left running, say) are not counted."""

    def __init__(self, app) -> None:
        self.app = app
        self.seconds = 0.0

    def __call__(self, environ, start_response):
        started = time.thread_time()
        body = self.app(environ, start_response)
        try:
            yield from body
        finally:
            if hasattr(body, "close"):
                body.close()
            self.seconds = time.thread_time() - started


def timed(live, call, before=lambda: None):
    """``call()``'s answer, the CPU seconds of the server's thread that
    served it and the peak of memory traced (MB) meanwhile (the server runs
    in this process), each measured on its own call (tracing slows Python
    down several times), ``before()`` each one."""
    meter = RequestCpu(live.app.wsgi_app)
    live.app.wsgi_app = meter
    try:
        before()
        call()
        cpu = meter.seconds
        before()
        tracemalloc.start()
        try:
            answer = call()
            return answer, cpu, tracemalloc.get_traced_memory()[1] / 2**20
        finally:
            tracemalloc.stop()
    finally:
        live.app.wsgi_app = meter.app


def forget(live):
    """This process forgets every record and replay it keeps."""
    live.app.extensions.pop("ludotheque.replays", None)
    live.app.extensions.pop("ludotheque.records", None)


def test_a_long_match_is_replayed_a_bounded_page_at_a_time(api, long_ducale, live):
    """Finding 1: the replay of a Ducale of 77,421 versions grew a worker by
    2.7 GB in 35 s (and one of 20,000 actions answered 173 MB in 13.5 s).
    Now a page is at most 200 steps; its worst first ask (the last page:
    the record built, every action replayed) is bounded, the next pages
    read in order cheaper still."""
    last = replays.MAX_ACTIONS - 99
    answer, cpu, peak = timed(
        live, lambda: replay_of(api, "ducale", long_ducale, **{"from": last}), lambda: forget(live)
    )
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert found["steps_total"] == replays.MAX_ACTIONS + 1
    assert [step["index"] for step in found["steps"]] == list(range(last, last + 100))
    assert found["next"] is None and len(found["hands"]) == 2
    # measured: 1.5 s of CPU (1 s of it building the record), 61 MB, 1.7 MB
    # (late in the match, views are larger)
    assert len(answer.content) < 4_000_000
    assert cpu < 3 and peak < 100, (cpu, peak)
    for start in range(0, 1000, 200):
        answer, cpu, peak = timed(
            live,
            lambda start=start: replay_of(
                api, "ducale", long_ducale, limit=200, **{"from": start}
            ),
        )
        assert answer.json()["next"] == start + 200
        assert len(answer.content) < 2_000_000 and cpu < 0.5 and peak < 40, (cpu, peak)


def test_a_repeated_record_is_served_from_the_cache(api, long_ducale, live, monkeypatch):
    """Finding 3: a long match's record was built from its whole log at
    every ask (3 MB and about 0.5 s for 20,000 actions)."""
    live.app.extensions.pop("ludotheque.records", None)
    first = record_of(api, "ducale", long_ducale)
    assert first.status_code == 200 and first.headers["Cache-Control"].startswith("public")
    cache = live.app.extensions["ludotheque.records"]
    built = []
    monkeypatch.setattr(cache, "record", lambda game, match_id: built.append(match_id))
    again, cpu, _ = timed(live, lambda: record_of(api, "ducale", long_ducale))
    assert again.content == first.content and built == []
    assert cpu < 0.1, cpu


def test_a_match_too_long_for_a_replay_points_at_its_record(api, live, monkeypatch):
    match_id = long_match(live.matches, "ducale", 300, {"target_score": 10000})
    monkeypatch.setattr(replays, "MAX_ACTIONS", 299)
    refused = replay_of(api, "ducale", match_id)
    body = assert_problem(refused, 422, "replay_too_long")
    assert "300 actions" in body["detail"] and "record" in body["detail"]
    assert record_of(api, "ducale", match_id).status_code == 200


def test_a_page_out_of_bounds_is_refused(api, live):
    match_id = long_match(live.matches, "pacal", 10)
    assert_problem(replay_of(api, "pacal", match_id, limit=201), 422, "invalid_request")
    assert_problem(replay_of(api, "pacal", match_id, limit=0), 422, "invalid_request")
    assert_problem(replay_of(api, "pacal", match_id, **{"from": -1}), 422, "invalid_request")
    # 10 actions, then a resignation: steps 0 to 10
    assert_problem(replay_of(api, "pacal", match_id, **{"from": 11}), 422, "invalid_request")
    assert replay_of(api, "pacal", match_id, **{"from": 10}).json()["steps"][0]["index"] == 10
