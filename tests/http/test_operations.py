"""What operators rely on: metrics, request ids, JSON logs without tokens,
rate limits and CORS for browser front ends."""

from __future__ import annotations

import datetime
import io
import logging
import sys
import uuid
from collections.abc import Callable

import orjson
import redis
from pythonjsonlogger.json import JsonFormatter
from pythonjsonlogger.orjson import OrjsonFormatter

from service.observability import JsonLines, RequestIdFilter, new_request_id
from service.store.counters import PREFIX
from tests.support.client import ApiClient
from tests.support.problems import assert_problem
from tests.support.servers import LiveServer

GAME = "dekal"


def rate_limited(
    live_server: Callable[..., LiveServer], per_address: str, per_token: str, **config: object
) -> ApiClient:
    """A client of a live server counting these limits (and ``config``)."""
    server = live_server(
        RATELIMIT_ENABLED=True,
        RATE_LIMIT_PER_ADDRESS=per_address,
        RATE_LIMIT_PER_TOKEN=per_token,
        **config,
    )
    return ApiClient(server.base)


def metric(text: str, name: str, **labels: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + "{") and all(f'{k}="{v}"' in line for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_metrics_count_requests_actions_and_streams(api):
    created = api.create(GAME, {"players": [{"name": "A"}, {"name": "B"}]}).json()
    token = created["seats"][0]["token"]
    before = api.http.get(f"{api.base}/metrics").text
    action = api.legal(GAME, created["id"], token).json()["actions"][0]
    assert api.act(GAME, created["id"], token, action).status_code == 200
    after = api.http.get(f"{api.base}/metrics")
    assert after.headers["Content-Type"].startswith("text/plain")
    text = after.text
    assert metric(text, "ludotheque_actions_total", game=GAME, by="seat") == (
        metric(before, "ludotheque_actions_total", game=GAME, by="seat") + 1
    )
    route = "/v1/games/dekal/matches/<match_id>/actions"
    assert (
        metric(text, "ludotheque_request_seconds_count", route=route, status="200", game=GAME) >= 1
    )
    for name in (
        "ludotheque_cas_retries_total",
        "ludotheque_bot_move_seconds",
        "ludotheque_open_streams",
    ):
        assert name in text


def test_request_id_comes_back_and_a_new_one_is_made(api):
    given = api.http.get(f"{api.base}/v1/games", headers={"X-Request-ID": "abc-123"})
    assert given.headers["X-Request-ID"] == "abc-123"
    made = api.http.get(f"{api.base}/v1/games", headers={"X-Request-ID": "bad id\twith tab"})
    assert made.headers["X-Request-ID"] not in ("", "bad id\twith tab")
    problem = api.get(GAME, "0" * 32, **{"X-Request-ID": "trace-9"})
    assert problem.headers["X-Request-ID"] == "trace-9"


def test_logs_are_json_lines_with_the_request_id_and_no_token(api):
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter("%(levelname)s %(name)s %(message)s %(request_id)s"))
    handler.addFilter(RequestIdFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    old_level = root.level
    root.setLevel(logging.INFO)
    try:
        created = api.create(GAME, {"players": [{"name": "A"}, {"name": "B"}]}).json()
        token = created["seats"][0]["token"]
        api.get(GAME, created["id"], token, **{"X-Request-ID": "rid-42"})
        api.act(GAME, created["id"], "not-" + token, {"type": "reveal", "row": 0, "col": 0})
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    lines = [orjson.loads(line) for line in stream.getvalue().splitlines()]
    requests_logged = [line for line in lines if line["message"] == "request"]
    assert any(
        line["request_id"] == "rid-42" and line["status"] == 200 for line in requests_logged
    )
    assert token not in stream.getvalue()
    assert all(s["token"] not in stream.getvalue() for s in created["seats"])


def records() -> list[logging.LogRecord]:
    """Records of every shape a line may take."""
    made = [
        logging.makeLogRecord(
            {"name": "ludotheque.access", "levelno": 20, "levelname": "INFO", "msg": "request"}
            | {"request_id": "rid", "method": "GET", "route": "/v1/games", "status": 200}
            | {"game": "", "ms": 1.25}
        ),
        logging.makeLogRecord({"msg": "seat %s of %r", "args": (2, "m"), "request_id": None}),
        logging.makeLogRecord({"msg": {"a dict": 1, "as": "its message"}}),
        logging.makeLogRecord({"msg": "odd", "_private": 1, "when": datetime.date(2026, 1, 2)}),
        logging.makeLogRecord({"msg": "no request id", "levelname": "WARNING"}),
        logging.makeLogRecord({"msg": "a stack", "stack_info": "Stack (most recent call last)"}),
        logging.makeLogRecord({"msg": "told", "exc_text": "Traceback: told before"}),
        logging.makeLogRecord({"msg": 42}),
    ]
    try:
        raise ValueError("boom")
    except ValueError:
        made.append(logging.makeLogRecord({"msg": "failed", "exc_info": sys.exc_info()}))
    made[0].created += 0.5  # the same second, later
    return made


def test_log_lines_are_python_json_loggers_own():
    ours = JsonLines()
    theirs = OrjsonFormatter("%(asctime)s %(levelname)s %(name)s %(message)s %(request_id)s")
    for record in records():
        assert ours.format(record) == theirs.format(record)
    later = records()[0]
    later.created += 3600.25  # another second: its own text
    assert ours.format(later) == theirs.format(later)


def test_request_ids_made_are_uuid4s_hex():
    for _ in range(1000):
        made = new_request_id()
        parsed = uuid.UUID(made)
        assert parsed.hex == made and parsed.version == 4 and parsed.variant == uuid.RFC_4122


def test_rate_limits_answer_429_problems_with_retry_after(live_server):
    api = rate_limited(live_server, "1000/minute", "3/minute")
    created = api.create(GAME, {"players": [{"name": "A"}, {"name": "B"}]}).json()
    token = created["seats"][0]["token"]
    answers = [api.get(GAME, created["id"], token) for _ in range(4)]
    assert [a.status_code for a in answers[:3]] == [200] * 3
    limited = assert_problem(answers[3], 429, "too_many_requests")
    assert limited["detail"]
    assert int(answers[3].headers["Retry-After"]) > 0
    # another seat has a budget of its own; the probes are never limited
    other = created["seats"][1]["token"]
    assert api.get(GAME, created["id"], other).status_code == 200
    assert all(api.http.get(f"{api.base}/healthz").ok for _ in range(5))


def test_rate_limit_per_client_address(live_server):
    api = rate_limited(live_server, "2/minute", "1000/minute", TRUSTED_PROXIES=1)
    first = {"X-Forwarded-For": "203.0.113.7"}
    codes = [api.http.get(f"{api.base}/v1/games", headers=first).status_code for _ in range(3)]
    assert codes == [200, 200, 429]
    other = {"X-Forwarded-For": "203.0.113.8"}
    assert api.http.get(f"{api.base}/v1/games", headers=other).status_code == 200
    # requests refused before any match is read count too
    third = {"X-Forwarded-For": "203.0.113.9"}
    unknown = f"{api.base}/v1/games/{GAME}/matches/not-an-id"
    codes = [api.http.get(unknown, headers=third).status_code for _ in range(3)]
    assert codes == [404, 404, 429]
    assert api.http.get(f"{api.base}/v1/games", headers=third).status_code == 429


def test_actions_count_against_the_limits_and_an_action_over_is_not_played(live_server, redis_url):
    """An action on a match the server remembers skips the read: its write
    counts the request, and refuses it (writing nothing) when over."""
    api = rate_limited(live_server, "1000/minute", "2/minute")
    created = api.create(GAME, {"players": [{"name": "A"}, {"name": "B"}]}).json()
    first, second = (seat["token"] for seat in created["seats"])
    legal = api.legal(GAME, created["id"], first).json()
    assert api.act(GAME, created["id"], first, legal["actions"][0]).status_code == 200
    version = legal["version"] + 1
    legal = api.legal(GAME, created["id"], second).json()  # the second's 1st request
    assert legal["actions"] and legal["version"] == version
    assert api.get(GAME, created["id"], second).status_code == 200  # 2nd
    over = api.act(GAME, created["id"], second, legal["actions"][0])  # 3rd
    assert_problem(over, 429, "too_many_requests")
    assert api.get(GAME, created["id"]).json()["version"] == version
    # every counter, counted by a read's pipeline or by a write's
    # script, expires with its window
    client = redis.Redis.from_url(redis_url)
    counters = list(client.scan_iter(f"{PREFIX}:*"))
    # each within its own window (rl:<scope>:<count>/<seconds>:...; earlier tests
    # in this Redis leave hourly ones too), or expired since the scan (-2)
    ttls = {key: (client.ttl(key), int(key.split(b":")[3].split(b"/")[1])) for key in counters}
    assert counters and all(ttl == -2 or 0 < ttl <= window for ttl, window in ttls.values()), ttls
    client.close()


def test_cors_preflight_for_allowed_origins_only(live_server):
    server = live_server(CORS_ORIGINS=["https://play.example"])
    url = f"{server.base}/v1/games/{GAME}/matches/{'0' * 32}/actions"
    preflight = server.http.options(
        url,
        headers={
            "Origin": "https://play.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "Authorization, Content-Type, If-Match",
        },
    )
    assert preflight.status_code == 204
    assert preflight.headers["Access-Control-Allow-Origin"] == "https://play.example"
    allowed = preflight.headers["Access-Control-Allow-Headers"].lower()
    assert {"authorization", "content-type", "if-match"} <= {h.strip() for h in allowed.split(",")}
    actual = server.http.get(f"{server.base}/v1/games", headers={"Origin": "https://play.example"})
    assert actual.headers["Access-Control-Allow-Origin"] == "https://play.example"
    assert "ETag" in actual.headers["Access-Control-Expose-Headers"]
    stranger = server.http.options(
        url,
        headers={
            "Origin": "https://evil.example",
            "Access-Control-Request-Method": "POST",
        },
    )
    assert "Access-Control-Allow-Origin" not in stranger.headers


def test_a_bug_is_a_logged_500_not_a_client_error(redis_url, caplog):
    """orjson's encode error is TypeError itself: only its complaint about
    text (a lone surrogate) is a 400; any other TypeError is the server's."""
    from service.app import create_app

    app = create_app({"REDIS_URL": redis_url, "RATELIMIT_ENABLED": False})

    @app.get("/broken/<kind>")
    def broken(kind: str) -> bytes:
        if kind == "text":
            return orjson.dumps("Ada\ud800")
        return len(None)  # a TypeError of our own

    http = app.test_client()
    with caplog.at_level(logging.ERROR):
        bug = http.get("/broken/bug")
    assert bug.status_code == 500 and bug.get_json()["code"] == "internal_error"
    assert "unexpected error" in caplog.text
    text = http.get("/broken/text")
    assert text.status_code == 400 and text.get_json()["code"] == "invalid_request"
