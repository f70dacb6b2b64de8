"""Issue 15, point 4: streams and long polls are bounded per address, per
token and per process, and live a bounded time; a client holding its whole
allowance of streams cannot make anyone else's ordinary request wait."""

from __future__ import annotations

import os
import time
from contextlib import ExitStack

import requests

from service.store.embedded import free_port
from tests.support.client import ApiClient
from tests.support.matches import create_match
from tests.support.problems import assert_problem
from tests.support.servers import interrupt, start_serve
from tests.support.streams import sse_events

PER_ADDRESS = 20
PER_PROCESS = 40

GAME = "dekal"


def test_streams_held_up_to_the_caps_leave_other_clients_answered_promptly(tmp_path, redis_url):
    port = free_port()
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "LUDOTHEQUE_TRUSTED_PROXIES": "1",  # X-Forwarded-For names the client
        "LUDOTHEQUE_FOLLOWERS_PER_ADDRESS": str(PER_ADDRESS),
        "LUDOTHEQUE_FOLLOWERS_PER_TOKEN": "0",
        "LUDOTHEQUE_FOLLOWERS_PER_PROCESS": str(PER_PROCESS),
        "LUDOTHEQUE_WORKER_CONNECTIONS": str(PER_PROCESS + 20),
        "LUDOTHEQUE_RATE_LIMITS": "0",
        # a stream sees its client gone when it next writes: a keep-alive
        # every second gives the allowance back soon after the close
        "LUDOTHEQUE_SSE_KEEPALIVE_S": "1",
    }
    server = start_serve(tmp_path, port, env, workers=1)
    try:
        api = ApiClient(f"http://127.0.0.1:{port}")
        match_id, _tokens = create_match(api, GAME, seed=3)
        url = f"{api.base}/v1/games/dekal/matches/{match_id}/stream"
        with ExitStack() as held:

            def open_stream(address: str) -> requests.Response:
                response = requests.get(
                    url, headers={"X-Forwarded-For": address}, stream=True, timeout=10
                )
                held.callback(response.close)
                return response

            hostile = [open_stream("203.0.113.7") for _ in range(PER_ADDRESS)]
            assert all(r.status_code == 200 for r in hostile)
            over = open_stream("203.0.113.7")
            assert_problem(over, 429, "too_many_followers")
            assert int(over.headers["Retry-After"]) > 0
            # the process holds its whole allowance of followers
            others = [open_stream(f"198.51.100.{i}") for i in range(PER_PROCESS - PER_ADDRESS)]
            assert all(r.status_code == 200 for r in others)
            full = open_stream("198.51.100.200")
            assert_problem(full, 503, "too_many_followers")
            assert "Retry-After" in full.headers
            # ... and an ordinary client is still answered at once
            for _ in range(5):
                started = time.monotonic()
                assert requests.get(f"{api.base}/v1/games", timeout=5).status_code == 200
                view = requests.get(f"{api.base}/v1/games/dekal/matches/{match_id}", timeout=5)
                assert view.status_code == 200
                assert time.monotonic() - started < 1.0
        # closed streams give their allowance back
        deadline = time.monotonic() + 15
        while open_stream_status(url, "203.0.113.7") != 200:
            assert time.monotonic() < deadline, "the allowance never came back"
            time.sleep(0.5)
    finally:
        log = interrupt(server)
    assert "Traceback" not in log, log


def open_stream_status(url: str, address: str) -> int:
    with requests.get(url, headers={"X-Forwarded-For": address}, stream=True, timeout=10) as r:
        return r.status_code


def test_long_polls_count_against_the_token_cap(live_server):
    server = live_server(FOLLOWERS_PER_TOKEN=1)
    api = ApiClient(server.base)
    match_id, tokens = create_match(api, GAME, seed=3)
    stream = server.http.get(
        server.url(f"/v1/games/dekal/matches/{match_id}/stream"),
        headers={"Authorization": f"Bearer {tokens[0]}"},
        stream=True,
        timeout=10,
    )
    assert stream.status_code == 200
    poll = requests.get(
        server.url(f"/v1/games/dekal/matches/{match_id}/events"),
        params={"after": 1000, "wait": 2},
        headers={"Authorization": f"Bearer {tokens[0]}"},
        timeout=10,
    )
    assert_problem(poll, 429, "too_many_followers")
    stream.close()


def test_a_stream_ends_after_its_lifetime_and_resumes_with_last_event_id(live_server):
    server = live_server(STREAM_MAX_S=1.5)
    api = ApiClient(server.base)
    match_id, _ = create_match(api, GAME, seed=3)
    url = server.url(f"/v1/games/dekal/matches/{match_id}/stream")
    started = time.monotonic()
    with server.http.get(url, stream=True, timeout=10) as first:
        got = sse_events(first)
    assert 1.5 <= time.monotonic() - started < 5
    assert got, "the stream sent the log before it ended"
    with server.http.get(
        url, headers={"Last-Event-ID": str(got[-1][0])}, stream=True, timeout=10
    ) as resumed:
        assert resumed.status_code == 200
        assert sse_events(resumed) == []
