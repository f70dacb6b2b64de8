"""The matchmaker as `ludotheque worker` runs it (issue 37): idle, it costs
next to nothing (issue 34's rule for every worker thread); a ticket that
arrives wakes it at once."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson
import pytest
import redis

from service.app import create_app
from service.background.matchmaker import Matchmaker

PRESET = "2p"


@pytest.fixture
def app(module_redis: str, private_redis: redis.Redis) -> Any:
    return create_app(
        {"REDIS_URL": module_redis, "RATELIMIT_ENABLED": False, "BOT_SEATS_PER_ADDRESS": 0}
    )


@contextmanager
def running(app: Any) -> Iterator[Matchmaker]:
    """The worker's matchmaker, idle as long as it may."""
    extensions = app.extensions
    stopping = threading.Event()
    found = Matchmaker(
        extensions["ludotheque.matches"],
        extensions["ludotheque.queue"],
        extensions["ludotheque.queue_presets"],
        stopping=stopping,
    )
    thread = threading.Thread(target=found.run, daemon=True)
    thread.start()
    try:
        yield found
    finally:
        stopping.set()
        thread.join(timeout=10)


def test_an_idle_matchmaker_makes_few_redis_calls(app, private_redis):
    """Every default queue (16) counted in one round trip every 5 s, and a
    blocking pop for nudges: not a lease and a read per queue per second."""
    with running(app):
        time.sleep(1)
        private_redis.config_resetstat()
        window_s = 6.0
        time.sleep(window_s)
        stats = private_redis.info("commandstats")
    calls = sum(v["calls"] for k, v in stats.items() if k != "cmdstat_config")
    assert calls / window_s <= 10, stats  # a pipelined count: 32 ZCARD every 5 s
    assert "cmdstat_set" not in stats and "cmdstat_evalsha" not in stats, stats


def test_a_ticket_arriving_wakes_the_idle_matchmaker_at_once(app):
    queue = app.extensions["ludotheque.queue"]
    with running(app) as matchmaker:
        time.sleep(1)  # idle: waiting up to 5 s
        started = time.monotonic()
        ids = []
        for _ in range(2):
            player = uuid.uuid4().hex
            seat = {"id": player, "name": "P", "bot": False, "holder": "h" + player}
            fields = {"seat_player": orjson.dumps(seat).decode()}
            ids.append(queue.join("dekal", PRESET, player, fields)["id"])
        while matchmaker.made == 0 and time.monotonic() - started < 4:
            time.sleep(0.01)
        assert matchmaker.made == 1
        assert time.monotonic() - started < 1.0
    assert {queue.poll(i, PRESET, "dekal", renew=False)["status"] for i in ids} == {"matched"}


def test_a_match_that_cannot_be_made_gives_its_tickets_back(app, monkeypatch):
    """Claimed, then the creation fails: every ticket waits again, from when
    it joined, and the next round makes the match."""
    queue = app.extensions["ludotheque.queue"]
    matches = app.extensions["ludotheque.matches"]
    matchmaker = Matchmaker(matches, queue, app.extensions["ludotheque.queue_presets"])
    ids = []
    for _ in range(2):
        player = uuid.uuid4().hex
        seat = {"id": player, "name": "P", "bot": False, "holder": "h" + player}
        ids.append(
            queue.join("dekal", PRESET, player, {"seat_player": orjson.dumps(seat).decode()})["id"]
        )
    joined = {t["id"]: t["joined"] for t in queue.waiting("dekal", PRESET)}
    create = matches.create

    def failing(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the store went away mid-creation")

    monkeypatch.setattr(matches, "create", failing)
    assert matchmaker.run_once() == 0
    assert {t["id"]: t["joined"] for t in queue.waiting("dekal", PRESET)} == joined
    monkeypatch.setattr(matches, "create", create)
    assert matchmaker.run_once() == 1
    assert {queue.poll(i, PRESET, "dekal", renew=False)["status"] for i in ids} == {"matched"}


def test_queue_matches_count_against_no_address_quota(module_redis, private_redis, tmp_path):
    """With the quotas on and a bot-seat cap of 1, a three-seat match of one
    person and two house bots is still made: nobody's address pays for it."""
    from service.store.database import migrate
    from tests.support import databases

    url = databases.sqlite_url(tmp_path)
    migrate(url)
    app = create_app(
        {
            "REDIS_URL": module_redis,
            "DATABASE_URL": url,
            "RATELIMIT_ENABLED": True,
            "BOT_SEATS_PER_ADDRESS": 1,
            "RATE_LIMIT_CREATE": "1/hour",
            "QUEUE_PRESETS": {"dekal": {"bots": {"players": 3, "bot_after_s": 0}}},
        }
    )
    queue = app.extensions["ludotheque.queue"]
    players = app.extensions["ludotheque.players"]
    matchmaker = Matchmaker(
        app.extensions["ludotheque.matches"],
        queue,
        app.extensions["ludotheque.queue_presets"],
        players=players,
    )
    made = []
    for _ in range(2):
        person, _ = players.create("Ada")
        seat = {
            "id": person["id"],
            "name": "Ada",
            "bot": False,
            "holder": players.holder(person["id"]),
        }
        made.append(
            queue.join(
                "dekal", "bots", person["id"], {"seat_player": orjson.dumps(seat).decode()}
            )["id"]
        )
        assert matchmaker.run_once() == 1
    for ticket_id in made:
        found = queue.poll(ticket_id, "bots", "dekal", renew=False)
        match = app.extensions["ludotheque.matches"].store.load(found["match"]).match
        assert match["creator"] is None and match["rated"] is True
        assert sum(1 for s in match["seats"] if s.get("bot")) == 2


def test_bench_queue_runs_and_writes_its_figures(tmp_path):
    """``python -m bench.queue``, small: every player matched but a remainder."""
    from bench import queue as bench_queue

    written = tmp_path / "queue.json"
    argv = ["--players", "400", "--rate", "400", "--drain-s", "3", "--json", str(written)]
    assert bench_queue.main(argv) == 0
    figures = orjson.loads(written.read_bytes())["figures"]
    assert figures["all"]["matches"] > 0
    assert figures["statuses"]["matched"] + figures["statuses"].get("waiting", 0) == 400
    assert figures["all"]["spread_max"] is not None
