"""Webhooks, HTTP bots and safe outbound calls (issue 21), against real
HTTP servers on loopback, which the tests allow with LUDOTHEQUE_OUTBOUND_ALLOW."""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson
import pytest

from engines.core import redact_events
from service.background import outbound, webhooks
from service.background.webhooks import DeliverySettings
from service.store import deliveries
from service.store.matches import log_key
from tests.contract.conformance import component, errors
from tests.support.client import ApiClient
from tests.support.problems import assert_problem
from tests.support.receivers import BotServer, WebhookReceiver
from tests.support.servers import bot_workers
from tests.support.waiting import wait_until

GAME = "dekal"
LOOPBACK = "http,127.0.0.0/8,::1"
FAST = DeliverySettings(base_s=0.02, cap_s=0.2, give_up_s=3600, timeout_s=2, threads=4)


def running(live, settings: DeliverySettings = FAST, bots: int = 2):
    """Bot workers and a webhook deliverer in threads, as worker processes run them."""
    return bot_workers(live.app, count=bots, deliveries=settings)


def log_of(redis_client, match_id: str) -> list[dict]:
    entries = redis_client.xrange(log_key(match_id), "-", "+")
    return [{"index": int(i.split(b"-")[1]), **orjson.loads(f[b"e"])} for i, f in entries]


def assert_in_contract(log: list[dict]) -> None:
    """Every event of ``log``, as each viewer sees it, is one the contract names."""
    union = component(f"{GAME.capitalize()}Event")
    for seat in (None, 0, 1):
        for event in redact_events(log, seat):
            assert errors(union, event) == [], event


def spectators_log(entries: list[dict]) -> list[dict]:
    return [
        {k: e[k] for k in ("index", "version", "type", "seat")}
        if e["type"] == "your_turn"
        else redact_events([e], None)[0]
        for e in entries
        if e["type"] == "your_turn" or "to" not in e
    ]


def bot_match(api, receiver: WebhookReceiver, bots: int = 3, **webhook) -> str:
    created = api.create(
        GAME,
        {
            "players": [{"bot": "random"}] * bots,
            "webhook": {"url": receiver.url, **webhook},
        },
    )
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["secret"].startswith("whsec_")
    assert body["webhook"] == {"events": ["all"], "given_up": False}
    receiver.secrets[body["id"]] = body["secret"]
    return body["id"]


def delivered_everything(api, redis_client, receiver, ids) -> bool:
    for match_id in ids:
        if api.get(GAME, match_id).json()["status"] != "finished":
            return False
        if receiver.last[match_id] < redis_client.xlen(log_key(match_id)):
            return False
    return True


def assert_complete_and_in_order(redis_client, receiver, ids) -> None:
    assert receiver.bad == []
    for match_id in ids:
        got = receiver.events[match_id]
        assert got == spectators_log(log_of(redis_client, match_id))
        assert [e["index"] for e in got] == sorted({e["index"] for e in got}), "in order, once"
        assert got[-1]["type"] == "match_over"
        assert not any("action" in e for e in got), "spectator-redacted: no private action"


# -- webhooks -----------------------------------------------------------------------
def test_a_receiver_gets_every_match_event_in_order_signed(
    api, live, redis_client, loopback_allowed
):
    receiver = WebhookReceiver()
    try:
        ids = [bot_match(api, receiver) for _ in range(8)]
        with running(live):
            wait_until(lambda: delivered_everything(api, redis_client, receiver, ids), 120)
        assert_complete_and_in_order(redis_client, receiver, ids)
    finally:
        receiver.stop()


def test_deliveries_are_retried_until_a_receiver_failing_half_the_time_has_all(
    api, live, redis_client, loopback_allowed
):
    receiver = WebhookReceiver(failure_rate=0.5, delay_s=0.005)
    try:
        ids = [bot_match(api, receiver) for _ in range(8)]
        with running(live):
            wait_until(lambda: delivered_everything(api, redis_client, receiver, ids), 180)
        assert_complete_and_in_order(redis_client, receiver, ids)
        assert receiver.attempts > 2 * len(ids), "some deliveries failed and came again"
    finally:
        receiver.stop()


def test_a_killed_worker_loses_no_delivery(
    api, live, redis_client, redis_url, tmp_path, loopback_allowed
):
    """Worker processes (``ludotheque worker``); the first is killed with
    SIGKILL mid-way, a second takes over from Redis."""
    receiver = WebhookReceiver()
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "LUDOTHEQUE_OUTBOUND_ALLOW": LOOPBACK,
        "LUDOTHEQUE_BOT_BUDGET_MS": "10",
        "LUDOTHEQUE_WEBHOOK_LEASE_S": "12",
    }
    command = [sys.executable, "-m", "service.cli", "worker"]
    survivor = None
    try:
        ids = [bot_match(api, receiver) for _ in range(6)]
        doomed = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
        try:
            wait_until(lambda: sum(receiver.last.values()) > 30, 60)
        finally:
            doomed.send_signal(signal.SIGKILL)
            doomed.wait()
        assert not delivered_everything(api, redis_client, receiver, ids), "killed mid-way"
        survivor = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
        wait_until(lambda: delivered_everything(api, redis_client, receiver, ids), 180)
        assert_complete_and_in_order(redis_client, receiver, ids)
    finally:
        if survivor is not None:
            survivor.terminate()
            survivor.wait()
        receiver.stop()


def test_your_turn_notices_carry_only_the_seat(api, live, redis_client, loopback_allowed):
    receiver = WebhookReceiver()
    try:
        created = api.create(
            GAME,
            {
                "players": [{"name": "Ada"}, {"bot": "random"}],
                "webhook": {"url": receiver.url, "events": ["your_turn"]},
            },
        ).json()
        receiver.secrets[created["id"]] = created["secret"]
        token = created["seats"][0]["token"]
        with running(live):
            for _ in range(2):
                wait_until(lambda: 0 in api.get(GAME, created["id"]).json()["to_act"])
                action = api.legal(GAME, created["id"], token).json()["actions"][0]
                assert api.act(GAME, created["id"], token, action).status_code == 200
            wait_until(lambda: len(receiver.events[created["id"]]) >= 2)
        notices = receiver.events[created["id"]]
        assert receiver.bad == []
        assert {tuple(sorted(n)) for n in notices} == {("index", "seat", "type", "version")}
        assert {(n["type"], n["seat"]) for n in notices} == {("your_turn", 0)}
        # nobody else sees them
        shown = api.events(GAME, created["id"], token).json()["events"]
        assert "your_turn" not in {e["type"] for e in shown}
    finally:
        receiver.stop()


def test_a_receiver_that_keeps_failing_is_given_up_without_slowing_others(
    api, live, redis_client, loopback_allowed
):
    failing, healthy = WebhookReceiver(status=500), WebhookReceiver()
    settings = DeliverySettings(base_s=0.05, cap_s=0.2, give_up_s=8, timeout_s=2, threads=2)
    given_up_before = webhooks.GIVEN_UP._value.get()
    try:
        doomed = bot_match(api, failing, bots=2)
        with running(live, settings):
            ids = [bot_match(api, healthy, bots=2) for _ in range(3)]
            wait_until(lambda: delivered_everything(api, redis_client, healthy, ids), 60)
            # the healthy ones were all delivered while the failing one was still tried
            assert not api.get(GAME, doomed).json()["webhook"]["given_up"]
            wait_until(lambda: api.get(GAME, doomed).json()["webhook"]["given_up"], 30)
        assert_complete_and_in_order(redis_client, healthy, ids)
        assert failing.events[doomed] == []
        assert failing.attempts >= 3, "retried before being given up"
        assert "webhook_given_up" in [e["type"] for e in log_of(redis_client, doomed)]
        assert_in_contract(log_of(redis_client, doomed))
        assert webhooks.GIVEN_UP._value.get() >= given_up_before + 1
        assert redis_client.zscore(deliveries.QUEUE_KEY, doomed) is None
        assert redis_client.zscore(deliveries.RETRY_KEY, doomed) is None
        metrics = api.http.get(f"{api.base}/metrics").text
        assert "ludotheque_webhooks_given_up_total" in metrics
    finally:
        failing.stop()
        healthy.stop()


def test_a_slow_receiver_gets_everything_in_order_from_the_background(
    api, live, redis_client, loopback_allowed
):
    """Each answer takes longer than the patience: every call goes on in the
    background and is settled there, one at a time per match, in order."""
    receiver = WebhookReceiver(delay_s=0.4)
    backgrounded_before = webhooks.SLOW._value.get()
    try:
        ids = [bot_match(api, receiver, bots=2) for _ in range(3)]
        with running(live, DeliverySettings(base_s=0.05, cap_s=0.5, patience_s=0.1)):
            wait_until(lambda: delivered_everything(api, redis_client, receiver, ids), 120)
        assert_complete_and_in_order(redis_client, receiver, ids)
        assert webhooks.SLOW._value.get() > backgrounded_before
        for match_id in ids:
            assert not api.get(GAME, match_id).json()["webhook"]["given_up"]
    finally:
        receiver.stop()


def test_receivers_that_hang_delay_nobody_else(api, live, redis_client, loopback_allowed):
    """Four receivers that never answer within the delivery timeout, two
    bot matches each, queued first; a healthy receiver's match is played
    meanwhile, and each action's events must reach it promptly (with the
    first-lane threads waiting out the timeouts, the first ones took 5 s
    and more)."""
    hanging = [WebhookReceiver(delay_s=8) for _ in range(4)]
    healthy = WebhookReceiver()
    # the threads, the timeout (5 s) and the patience as deployed
    settings = DeliverySettings(base_s=0.05, cap_s=0.5, give_up_s=3600)
    try:
        for receiver in hanging:
            for _ in range(2):
                bot_match(api, receiver, bots=2)
        created = api.create(
            GAME,
            {"players": [{"name": "A"}, {"name": "B"}], "webhook": {"url": healthy.url}},
        ).json()
        match_id, tokens = created["id"], [s["token"] for s in created["seats"]]
        healthy.secrets[match_id] = created["secret"]
        lateness = []
        with running(live, settings):
            for _ in range(12):
                seat = api.get(GAME, match_id).json()["to_act"][0]
                action = api.legal(GAME, match_id, tokens[seat]).json()["actions"][0]
                acted = time.monotonic()
                assert api.act(GAME, match_id, tokens[seat], action).status_code == 200
                length = redis_client.xlen(log_key(match_id))
                wait_until(lambda: healthy.last[match_id] >= length, 30)  # noqa: B023
                lateness.append(time.monotonic() - acted)
                time.sleep(0.2)
        assert healthy.bad == []
        assert max(lateness) < 2, [round(t, 2) for t in lateness]
        # each hanging receiver was called, its call going on in the background
        # (a first contact goes there at once: no lane thread waited for it)
        assert all(receiver.calls for receiver in hanging)
    finally:
        for receiver in [*hanging, healthy]:
            receiver.stop()


def test_a_redirect_is_not_followed(api, live, redis_client, loopback_allowed):
    receiver = WebhookReceiver(status=307)
    try:
        match_id = bot_match(api, receiver, bots=2)
        settings = DeliverySettings(base_s=0.05, cap_s=0.1, give_up_s=0.5, timeout_s=2)
        with running(live, settings):
            wait_until(lambda: api.get(GAME, match_id).json()["webhook"]["given_up"], 30)
        assert receiver.events[match_id] == []
    finally:
        receiver.stop()


# -- safe outbound calls ----------------------------------------------------------------
def test_webhook_urls_must_be_https_by_default(api, monkeypatch):
    monkeypatch.setattr(outbound, "allowed", outbound.Allowed())
    for url in ("http://example.com/hook", "ftp://example.com/", "https://u:p@example.com/"):
        body = {"players": [{"bot": "random"}] * 2, "webhook": {"url": url}}
        assert_problem(api.create(GAME, body), 422, "invalid_request")
        body = {"players": [{"bot_url": url}, {"bot": "random"}]}
        assert_problem(api.create(GAME, body), 422, "invalid_request")


@pytest.mark.parametrize(
    "url",
    [
        "https://localhost:9/",  # a name that resolves to loopback
        "https://127.0.0.1/",
        "https://10.1.2.3/",
        "https://192.168.0.1/",
        "https://169.254.169.254/latest/meta-data",  # cloud metadata
        "https://[::1]/",
        "https://[::ffff:10.0.0.1]/",
        "https://100.64.0.1/",  # carrier-grade NAT
        "https://0.0.0.0/",
    ],
)
def test_internal_addresses_are_refused_by_default(url, monkeypatch):
    monkeypatch.setattr(outbound, "allowed", outbound.Allowed())
    with pytest.raises(outbound.Refused) as refused:
        outbound.post(url, b"{}", {}, 1)
    assert refused.value.reason == "internal_address"


def test_a_name_resolving_to_a_private_address_is_refused_at_delivery(
    api, live, redis_client, monkeypatch, caplog
):
    """Created with https://localhost (a name), called never: localhost
    resolves to loopback, which this deployment does not allow. The match
    says the calls failed; the log says why."""
    caplog.set_level(logging.INFO)
    receiver = WebhookReceiver()
    monkeypatch.setattr(outbound, "allowed", outbound.parse_allow("http"))
    try:
        receiver.url = receiver.url.replace("127.0.0.1", "localhost")
        match_id = bot_match(api, receiver, bots=2)
        settings = DeliverySettings(base_s=0.05, cap_s=0.1, give_up_s=0.5, timeout_s=2)
        with running(live, settings):
            wait_until(lambda: api.get(GAME, match_id).json()["webhook"]["given_up"], 30)
        assert receiver.attempts == 0, "never called"
        reasons = [e.get("reason") for e in log_of(redis_client, match_id)]
        assert "call_failed" in reasons and "internal_address" not in reasons
        assert "internal_address" in caplog.text
    finally:
        receiver.stop()


def test_an_answer_over_the_size_limit_is_refused(loopback_allowed):
    from tests.support.receivers import Quiet, Served

    class Huge(Quiet):
        def do_POST(self) -> None:
            self.read_body()
            self.answer(200, b"x" * (outbound.MAX_ANSWER + 10))

    server = Served(Huge)
    try:
        with pytest.raises(outbound.Refused) as refused:
            outbound.post(server.url, b"{}", {}, 2)
        assert refused.value.reason == "too_large"
    finally:
        server.stop()


# -- HTTP bots ------------------------------------------------------------------------------
def http_bot_match(api, seats: list, deadline_s: float | None = None) -> dict:
    body: dict = {"players": seats}
    if deadline_s is not None:
        body["bot_deadline_s"] = deadline_s
    created = api.create(GAME, body)
    assert created.status_code == 201, created.text
    return created.json()


def test_http_bots_play_a_match_out(api, live, redis_client, loopback_allowed):
    bots = [BotServer("good"), BotServer("good")]
    try:
        match = http_bot_match(api, [{"bot_url": b.url} for b in bots])
        assert [s["bot"] for s in match["seats"]] == ["http", "http"]
        for bot in bots:
            bot.secret = match["secret"]
        with running(live):
            wait_until(lambda: api.get(GAME, match["id"]).json()["status"] == "finished", 120)
        log = log_of(redis_client, match["id"])
        assert not [e for e in log if e["type"].startswith("bot_")], "every move was theirs"
        for bot in bots:
            assert bot.bad == [] and bot.calls
            call = bot.calls[0]
            assert set(call) == {
                "match_id",
                "game",
                "seat",
                "version",
                "deadline_ms",
                "view",
                "legal_actions",
            }
            assert call["deadline_ms"] == 2000
        played = [e["action"] for e in log if e["type"] == "action" and e["seat"] == 0]
        assert played == [c["legal_actions"][0] for c in bots[0].calls]
    finally:
        for bot in bots:
            bot.stop()


@pytest.mark.parametrize(
    ("temper", "event", "reason"),
    [
        ("late", "bot_timeout", "call_failed"),  # the log says timeout
        ("illegal", "bot_illegal_action", "illegal"),
        ("closes", "bot_timeout", "call_failed"),  # the log says connection
    ],
)
def test_a_bot_that_misbehaves_gets_the_random_move_and_a_logged_reason(
    api, live, redis_client, loopback_allowed, temper, event, reason
):
    bad, good = BotServer(temper, late_s=1.5), BotServer("good")
    try:
        match = http_bot_match(api, [{"bot_url": bad.url}, {"bot_url": good.url}], 0.5)
        bad.secret = good.secret = match["secret"]
        with running(live):
            wait_until(lambda: len(good.calls) >= 2, 60)
        log = log_of(redis_client, match["id"])
        notes = [e for e in log if e["type"].startswith("bot_")]
        assert notes and all(
            (n["type"], n["seat"], n["reason"]) == (event, 0, reason) for n in notes
        )
        assert_in_contract(log)
        # each note is followed by the random move played for the seat
        after = [log[log.index(n) + 1] for n in notes]
        assert all(e["type"] == "action" and e["seat"] == 0 for e in after)
        assert bad.bad == [] and bad.calls
    finally:
        bad.stop()
        good.stop()


def test_http_bots_that_hang_do_not_hold_up_other_bots(api, live, redis_client, loopback_allowed):
    """Three matches of HTTP bots that never answer within their 10 s
    deadline, on one bot worker thread; a person playing a ``random`` bot
    meanwhile gets each of its moves promptly (they waited for the hanging
    calls, up to 10 s each, while the worker's thread made them)."""
    hanging = [BotServer("late", late_s=15) for _ in range(3)]
    try:
        for bot in hanging:
            bot.secret = http_bot_match(api, [{"bot_url": bot.url}] * 2, deadline_s=10)["secret"]
        created = api.create(GAME, {"players": [{"name": "A"}, {"bot": "random"}]}).json()
        match_id, token = created["id"], created["seats"][0]["token"]
        waits = []
        with running(live, bots=1):
            wait_until(lambda: all(bot.calls for bot in hanging), 30)
            for _ in range(8):
                answer = api.get(GAME, match_id, token).json()
                if answer["status"] == "finished":
                    break
                action = api.legal(GAME, match_id, token).json()["actions"][0]
                acted = time.monotonic()
                assert api.act(GAME, match_id, token, action).status_code == 200

                def my_turn_again() -> bool:
                    match = api.get(GAME, match_id).json()
                    return match["status"] == "finished" or match["to_act"] == [0]

                wait_until(my_turn_again, 30)
                waits.append(time.monotonic() - acted)
        assert len(waits) >= 3
        assert max(waits) < 2, [round(w, 2) for w in waits]
        assert all(bot.bad == [] for bot in hanging)
    finally:
        for bot in hanging:
            bot.stop()


def test_bot_deadlines_are_bounded(api, loopback_allowed):
    for value in (0, 0.05, 11, "2"):
        body = {"players": [{"bot_url": "https://example.com/"}] * 2, "bot_deadline_s": value}
        assert_problem(api.create(GAME, body), 422, "invalid_request")
    body = {"players": [{"bot_url": "https://example.com/", "bot": "random"}, {}]}
    assert_problem(api.create(GAME, body), 422, "invalid_request")


def example_bot() -> str:
    """The bot the README shows, which docs/clients/webhooks.md shows too."""
    root = Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Webhooks and HTTP bots") :]
    start = section.index("```python\n") + len("```python\n")
    code = section[start : section.index("\n```", start)]
    assert "serve_forever" in code
    assert code in (root / "docs" / "clients" / "webhooks.md").read_text(encoding="utf-8")
    return code


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port)).close()
    except OSError:
        return False
    return True


def test_the_readme_example_bot_plays_a_match(api, live, redis_client, loopback_allowed):
    code = example_bot()
    assert len(code.splitlines()) <= 20
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code = code.replace('("0.0.0.0", 8080)', f'("127.0.0.1", {port})')
    bot = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}/"
        wait_until(lambda: listening(port))
        match = http_bot_match(api, [{"bot_url": url}, {"bot": "random"}])
        with running(live):
            wait_until(lambda: api.get(GAME, match["id"]).json()["status"] == "finished", 120)
        log = log_of(redis_client, match["id"])
        assert not [e for e in log if e["type"].startswith("bot_")], "every move was its own"
    finally:
        bot.terminate()
        bot.wait()


def test_a_match_never_shows_its_webhook_url_nor_its_secret(api, redis_client, loopback_allowed):
    url = "https://hooks.example.com/very-secret-path"
    created = api.create(
        GAME,
        {
            "players": [{"name": "Ada"}, {"bot_url": "https://bots.example.com/x"}],
            "webhook": {"url": url, "events": ["match_over", "your_turn"]},
        },
    ).json()
    secret, token = created["secret"], created["seats"][0]["token"]
    seen = [
        api.get(GAME, created["id"]).text,
        api.get(GAME, created["id"], token).text,
        api.events(GAME, created["id"], token).text,
        api.http.get(f"{api.base}/v1/games/{GAME}/matches").text,
    ]
    for text in seen:
        assert secret not in text and "example.com" not in text
    assert api.get(GAME, created["id"]).json()["webhook"] == {
        "events": ["match_over", "your_turn"],
        "given_up": False,
    }
    assert "secret" not in api.get(GAME, created["id"]).json()
    redis_client.delete(f"m:{{{created['id']}}}")  # nobody calls example.com


def test_outbound_calls_per_process_are_capped(loopback_allowed, monkeypatch):
    """Six calls at once to a receiver that takes 0.5 s, with a cap of 2:
    never more than 2 in flight; a call that cannot get a slot within its
    deadline is refused as busy."""
    from tests.support.receivers import Quiet, Served

    state = {"now": 0, "most": 0}
    lock = threading.Lock()

    class Slow(Quiet):
        def do_POST(self) -> None:
            self.read_body()
            with lock:
                state["now"] += 1
                state["most"] = max(state["most"], state["now"])
            time.sleep(0.5)
            with lock:
                state["now"] -= 1
            self.answer(204)

    server = Served(Slow)
    monkeypatch.setattr(outbound, "_slots", threading.BoundedSemaphore(2))
    results: list[str] = []

    def call(timeout_s: float) -> None:
        try:
            results.append(str(outbound.post(server.url, b"{}", {}, timeout_s).status))
        except outbound.Refused as refused:
            results.append(refused.reason)

    try:
        threads = [threading.Thread(target=call, args=(5,)) for _ in range(6)]
        threads.append(threading.Thread(target=call, args=(0.2,)))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert state["most"] == 2
        assert sorted(results) == ["204"] * 6 + ["busy"]
    finally:
        server.stop()


def test_a_rematch_keeps_the_http_bot_and_the_webhook(api, live, redis_client, loopback_allowed):

    life = ApiClient(api.base, api.http)
    bot, receiver = BotServer("good"), WebhookReceiver()
    try:
        created = api.create(
            GAME,
            {
                "players": [{"name": "Ada"}, {"bot_url": bot.url}],
                "webhook": {"url": receiver.url, "events": ["match_created", "match_over"]},
            },
        ).json()
        bot.secret = receiver.secrets[created["id"]] = created["secret"]
        token = created["seats"][0]["token"]
        assert life.resign(GAME, created["id"], token).status_code == 200
        rematch = life.rematch(GAME, created["id"], token).json()
        receiver.secrets[rematch["id"]] = created["secret"]
        with running(live):
            wait_until(lambda: any(c["match_id"] == rematch["id"] for c in bot.calls), 30)
            wait_until(lambda: receiver.events[rematch["id"]], 30)
            # each match's deliveries come in order, the two matches in any order
            wait_until(lambda: len(receiver.events[created["id"]]) >= 2, 30)
        assert bot.bad == [] and receiver.bad == []
        assert [e["type"] for e in receiver.events[created["id"]]] == [
            "match_created",
            "match_over",
        ]
        assert receiver.events[rematch["id"]][0]["type"] == "match_created"
        seats = api.get(GAME, rematch["id"]).json()["seats"]
        assert "http" in [s["bot"] for s in seats]
    finally:
        bot.stop()
        receiver.stop()


def resolving(monkeypatch, answers: dict[str, list[str]]) -> list[str]:
    """Names resolved as ``answers`` says (what a hostile DNS server would
    answer); returns the list of names looked up, in order."""
    real, asked = socket.getaddrinfo, []

    def getaddrinfo(host, port, *args, **kwargs):
        if host not in answers:
            return real(host, port, *args, **kwargs)
        asked.append(host)
        family = {True: socket.AF_INET6, False: socket.AF_INET}
        return [(family[":" in ip], socket.SOCK_STREAM, 6, "", (ip, port)) for ip in answers[host]]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


def test_a_name_with_one_internal_address_among_public_ones_is_refused(monkeypatch):
    monkeypatch.setattr(outbound, "allowed", outbound.Allowed())
    resolving(monkeypatch, {"mixed.example": ["93.184.216.34", "10.0.0.7"]})
    with pytest.raises(outbound.Refused) as refused:
        outbound.post("https://mixed.example/hook", b"{}", {}, 1)
    assert refused.value.reason == "internal_address"


def test_the_connection_goes_to_the_address_checked(monkeypatch, loopback_allowed):
    """A rebinding name is resolved once per call: the address checked is
    the one connected to, never a second answer."""
    receiver = WebhookReceiver()
    try:
        asked = resolving(monkeypatch, {"rebind.example": ["127.0.0.1"]})
        url = receiver.url.replace("127.0.0.1", "rebind.example")
        answer = outbound.post(url, b'{"match_id": "x"}', {}, 2)
        assert answer.status == 500  # reached: the receiver knows no match x
        assert asked == ["rebind.example"]
    finally:
        receiver.stop()


def test_a_delivery_without_a_free_slot_is_not_held_against_its_receiver(
    api, live, redis_client, loopback_allowed, monkeypatch
):
    """With every outbound slot of the process taken, deliveries wait: the
    receiver is neither retried with backoff nor given up on, and gets
    everything once slots free up."""
    receiver = WebhookReceiver()
    settings = DeliverySettings(base_s=0.05, cap_s=0.1, give_up_s=0.5, timeout_s=0.1, threads=2)
    try:
        match_id = bot_match(api, receiver, bots=2)
        monkeypatch.setattr(outbound, "_slots", threading.BoundedSemaphore(1))
        outbound._slots.acquire()  # all taken
        with running(live, settings):
            time.sleep(1.5)
            assert receiver.attempts == 0
            assert not api.get(GAME, match_id).json()["webhook"]["given_up"]
            assert redis_client.zscore(deliveries.RETRY_KEY, match_id) is None
            outbound._slots.release()
            wait_until(lambda: delivered_everything(api, redis_client, receiver, [match_id]), 60)
        assert_complete_and_in_order(redis_client, receiver, [match_id])
    finally:
        receiver.stop()
