"""Hostile clients against the calls Ludothèque makes (issue 31, points 3,
10, 11 and the outbound part of 13): HTTP bots and webhook receivers that
drip their answer one byte at a time, addresses that carry an internal
address inside a public-looking one, failure events that told a stranger
why a call failed, and a malformed allow list that answered 500.

Every server here is a real socket on loopback (``tests.support.receivers``);
the tests allow loopback as the other webhook tests do, except where the
refusal of an internal address is what is tested.
"""

from __future__ import annotations

import json
import logging
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from service.app import create_app
from service.background import outbound
from service.background.webhooks import DeliverySettings
from service.settings import Malformed, load
from service.store.matches import log_key
from tests.background.test_webhooks import assert_in_contract, log_of
from tests.support.receivers import BotServer, Dripper, DripperFarm, WebhookReceiver
from tests.support.servers import bot_workers
from tests.support.waiting import wait_until

GAME = "dekal"


def running(live, settings: DeliverySettings | None = None):
    """One worker process's share: a bot worker and a webhook deliverer, in threads."""
    return bot_workers(live.app, deliveries=settings or DeliverySettings())


def forget(redis_client, match_id: str) -> None:
    """Delete a match (nobody calls it again: its queued work finds nothing)."""
    redis_client.delete(f"m:{{{match_id}}}")


# -- one deadline for the whole call (point 3) -----------------------------------------
def test_a_dripping_answer_is_cut_at_the_deadline(loopback_allowed):
    """One byte of status line and headers every 0.1 s: each read came in
    time, so per-read timeouts never fired and the call lasted as long as
    the drip (20 s here, 40 s seen). The deadline covers the whole call."""
    dripper = Dripper(gap_s=0.1, drip_s=20)
    try:
        started = time.monotonic()
        with pytest.raises(outbound.Refused) as refused:
            outbound.post(dripper.url, b"{}", {}, 0.5)
        took = time.monotonic() - started
        assert refused.value.reason == "timeout"
        assert took < 0.8, f"the call lasted {took:.1f} s against a 0.5 s deadline"
        wait_until(lambda: dripper.held, 5)
        assert dripper.held[0] < 1.0, "the socket is closed at the deadline"
    finally:
        dripper.stop()


def test_a_dripping_tls_handshake_is_cut_at_the_deadline(loopback_allowed):
    """https to a server that answers the client's hello with a 16 KiB
    handshake record, one byte every 0.1 s: the handshake is part of the
    call, and ends at its deadline. (CPython bounds one handshake call as a
    whole, so this held before too; it pins the TLS socket of the deadline.)"""
    dripper = Dripper(gap_s=0.1, drip_s=20, tls=True)
    try:
        started = time.monotonic()
        with pytest.raises(outbound.Refused) as refused:
            outbound.post(dripper.url.replace("http:", "https:"), b"{}", {}, 0.5)
        assert refused.value.reason == "timeout"
        assert time.monotonic() - started < 0.8
    finally:
        dripper.stop()


def test_a_call_whose_time_ran_out_before_resolving_is_refused_as_a_timeout(loopback_allowed):
    """(A slot found at the deadline's last moment): a Refused the callers
    handle, never a TimeoutError that would fail the bot's turn."""
    with pytest.raises(outbound.Refused) as refused:
        outbound.vetted_address("127.0.0.1", 80, time.monotonic() - 0.001)
    assert refused.value.reason == "timeout"


def test_a_dripping_http_bot_holds_its_match_only_for_its_deadline(
    api, live, redis_client, loopback_allowed
):
    """A person against an HTTP bot that drips, with a 0.5 s deadline: each
    bot turn ends at the deadline with the random move, and the person is
    to act again promptly."""
    dripper = Dripper(gap_s=0.1, drip_s=20)
    created = api.create(
        GAME,
        {"players": [{"name": "A"}, {"bot_url": dripper.url}], "bot_deadline_s": 0.5},
    ).json()
    match_id, token = created["id"], created["seats"][0]["token"]
    waits = []
    try:
        with running(live):
            for _ in range(3):
                match = wait_until(lambda: my_turn(api, match_id), 30)
                if match["status"] == "finished":
                    break
                action = api.legal(GAME, match_id, token).json()["actions"][0]
                acted = time.monotonic()
                assert api.act(GAME, match_id, token, action).status_code == 200
                wait_until(lambda: my_turn(api, match_id), 30)
                waits.append(time.monotonic() - acted)
        assert waits and max(waits) < 1.5, [round(w, 2) for w in waits]
        notes = [e for e in log_of(redis_client, match_id) if e["type"] == "bot_timeout"]
        assert notes and all(n["seat"] == 1 for n in notes)
        assert max(dripper.held) < 1.5, dripper.held
    finally:
        dripper.stop()
        forget(redis_client, match_id)


def my_turn(api, match_id: str) -> dict | None:
    match = api.get(GAME, match_id).json()
    return match if match["status"] == "finished" or match["to_act"] == [0] else None


def test_a_dripping_webhook_receiver_is_cut_at_the_delivery_timeout(
    api, live, redis_client, loopback_allowed
):
    dripper = Dripper(gap_s=0.1, drip_s=20)
    settings = DeliverySettings(base_s=0.05, cap_s=0.2, timeout_s=1)
    created = api.create(
        GAME, {"players": [{"name": "A"}, {"name": "B"}], "webhook": {"url": dripper.url}}
    ).json()
    try:
        with running(live, settings):
            wait_until(lambda: len(dripper.held) >= 2, 30)
        assert max(dripper.held) < 1.6, dripper.held
    finally:
        dripper.stop()
        forget(redis_client, created["id"])


# -- a slow outside server costs only its own match (point 3) -------------------------
BOT_DRIPPERS = 18  # bot seats, each in a match of its own
HOOK_DRIPPERS = 16  # webhook receivers, each called by a match of its own
MOVES = 120  # honest moves measured, without and with the attack (p99: about the second worst)


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[98]


def test_dripping_bots_and_receivers_do_not_slow_other_clients(
    api, live, redis_client, loopback_allowed
):
    """18 HTTP bot seats and 16 webhook receivers that drip, each in a match
    of its own (10 s bot deadlines, the deployed 5 s delivery timeout),
    against one honest person playing an honest HTTP bot with a webhook to
    an honest receiver: the honest bot's moves and deliveries keep their
    p99 within twice that of the same run before the attack. Before, the
    dripping calls held the worker's bot threads and the deliverer's calls
    as long as they dripped, and the rest waited behind them."""
    bot, receiver = BotServer("good"), WebhookReceiver()
    farm = DripperFarm(BOT_DRIPPERS + HOOK_DRIPPERS, gap_s=0.2, drip_s=60)
    created = api.create(
        GAME,
        {
            "players": [{"name": "A"}, {"bot_url": bot.url}],
            "webhook": {"url": receiver.url},
            "options": {"target_score": 1000},
        },
    ).json()
    match_id, token = created["id"], created["seats"][0]["token"]
    bot.secret = receiver.secrets[match_id] = created["secret"]
    hostile: list[str] = []
    try:
        with running(live):
            before = play_honestly(api, redis_client, receiver, match_id, token, MOVES)
            for url in farm.urls[:BOT_DRIPPERS]:
                body = {
                    "players": [{"bot_url": url}, {"bot": "random"}],
                    "bot_deadline_s": 10,
                }
                hostile.append(api.create(GAME, body).json()["id"])
            for url in farm.urls[BOT_DRIPPERS:]:
                body = {"players": [{"name": "x"}, {"name": "y"}], "webhook": {"url": url}}
                hostile.append(api.create(GAME, body).json()["id"])
            # measured from the attack's first moment: 16 new receivers that drip
            # cost the deliverer's lane threads a patience each (0.25 s) when they
            # waited for first contacts
            during = play_honestly(api, redis_client, receiver, match_id, token, MOVES)
            called = [bool(c) for c in farm.calls]
            held = sum(farm.open)
        bots = [p99([b for b, _ in before]), p99([b for b, _ in during])]
        hooks = [p99([h for _, h in before]), p99([h for _, h in during])]
        # below 150 ms, twice is scheduling noise on a shared machine (a full suite
        # on 2 cores once had deliveries' p99 0.054 s before and 0.24 s during); the
        # regression guarded is a stall as long as the drips (seconds), far above
        floor = 0.15
        assert bots[1] <= 2 * max(bots[0], floor), f"bot moves' p99 before, during: {bots}"
        assert hooks[1] <= 2 * max(hooks[0], floor), f"deliveries' p99 before, during: {hooks}"
        assert all(called) and held >= BOT_DRIPPERS, "the attack was under way when measured"
        assert bot.bad == [] and receiver.bad == []
    finally:
        for server in [bot, receiver, farm]:
            server.stop()
        for hostile_id in hostile:
            forget(redis_client, hostile_id)
        forget(redis_client, match_id)


def play_honestly(api, redis_client, receiver, match_id: str, token: str, moves: int):
    """(bot delay, delivery delay) of each of ``moves`` person's moves."""
    delays = []
    for _ in range(moves):
        match = wait_until(lambda: my_turn(api, match_id), 30)
        assert match["status"] == "active", "the honest match outlasts the measure"
        action = api.legal(GAME, match_id, token).json()["actions"][0]
        acted = time.monotonic()
        assert api.act(GAME, match_id, token, action).status_code == 200
        bot_at = delivered_at = None
        deadline = acted + 30
        while bot_at is None or delivered_at is None:
            assert time.monotonic() < deadline, "no bot move or no delivery in 30 s"
            now = time.monotonic()
            if bot_at is None and my_turn(api, match_id):
                bot_at = now
            waiting = bot_at is not None and delivered_at is None
            if waiting and receiver.last[match_id] >= redis_client.xlen(log_key(match_id)):
                delivered_at = time.monotonic()
            time.sleep(0.005)
        delays.append((bot_at - acted, delivered_at - acted))
    return delays


# -- the SSRF guard judges an address by what it is (point 10) ------------------------
# One case per range of the table: an address in it, refused by default.
# Those that carry another address carry an internal one here.
INTERNAL = [
    "0.1.2.3",  # this network
    "10.1.2.3",  # private
    "100.64.0.1",  # shared address space (carrier-grade NAT)
    "127.0.0.2",  # loopback
    "169.254.169.254",  # link-local (cloud metadata)
    "172.16.5.4",  # private
    "192.0.0.170",  # IETF protocol assignments
    "192.0.2.7",  # documentation
    "192.88.99.1",  # 6to4 relay anycast
    "192.168.1.1",  # private
    "198.18.0.1",  # benchmarking
    "198.51.100.7",  # documentation
    "203.0.113.9",  # documentation
    "224.0.0.251",  # multicast
    "240.0.0.1",  # reserved
    "255.255.255.255",  # limited broadcast
    "::",  # unspecified
    "::1",  # loopback
    "::a00:1",  # IPv4-compatible (deprecated), within ::/8
    "::ffff:10.0.0.1",  # IPv4-mapped, carrying a private address
    "64:ff9b::a9fe:a9fe",  # NAT64, carrying 169.254.169.254
    "64:ff9b:1::a00:1",  # local-use NAT64
    "100::1",  # discard-only
    "2001::a00:1",  # Teredo, server 0.0.0.0 and client 245.255.255.254
    "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo, carrying client 127.0.0.1
    "2001:2::1",  # benchmarking, within the IETF assignments 2001::/23
    "2001:db8::1",  # documentation
    "2002:a9fe:a9fe::1",  # 6to4, carrying 169.254.169.254
    "2002:7f00:1::1",  # 6to4, carrying 127.0.0.1
    "3fff::1",  # documentation
    "5f00::1",  # segment routing
    "fc00::1",  # unique local
    "fd12:3456::1",  # unique local
    "fe80::1",  # link-local
    "fec0::1",  # site-local (deprecated, never global)
    "ff02::1",  # multicast
    "4000::1",  # outside the global unicast space 2000::/3
]

# Public addresses, directly or carried.
PUBLIC = [
    "93.184.216.34",
    "2606:2800:220:1:248:1893:25c8:1946",
    "::ffff:93.184.216.34",  # IPv4-mapped
    "2002:5db8:d822::1",  # 6to4 of 93.184.216.34
    "64:ff9b::5db8:d822",  # NAT64 of 93.184.216.34
    "2001:0:4136:e378:8000:63bf:a247:27dd",  # Teredo: server 65.54.227.120, client 93.184.216.34
]


@pytest.mark.parametrize("address", INTERNAL)
def test_an_internal_address_is_refused_whatever_its_form(address, monkeypatch):
    monkeypatch.setattr(outbound, "allowed", outbound.Allowed())
    with pytest.raises(outbound.Refused) as refused:
        outbound.vetted_address(address, 443)
    assert refused.value.reason == "internal_address"


@pytest.mark.parametrize("address", PUBLIC)
def test_a_public_address_is_called_whatever_its_form(address, monkeypatch):
    monkeypatch.setattr(outbound, "allowed", outbound.Allowed())
    assert outbound.vetted_address(address, 443)[1] == address


def test_every_range_of_the_table_has_its_case():
    """The table is the one place that says what is internal; each of its
    ranges is tested above."""
    import ipaddress

    cases = [ipaddress.ip_address(a) for a in INTERNAL]
    for entry in outbound.RANGES:
        assert any(c in entry.network for c in cases), (
            f"no case for {entry.network} ({entry.meaning})"
        )


def test_the_allow_list_admits_a_carried_address(monkeypatch):
    monkeypatch.setattr(outbound, "allowed", outbound.parse_allow("127.0.0.0/8"))
    assert outbound.vetted_address("::ffff:127.0.0.1", 443)[1] == "::ffff:127.0.0.1"
    with pytest.raises(outbound.Refused):
        outbound.vetted_address("::ffff:10.0.0.1", 443)


# -- no oracle: events say that a call failed, not why (point 11) ---------------------
def test_failure_events_do_not_say_why_a_call_failed(api, live, redis_client, monkeypatch, caplog):
    """An HTTP bot and a webhook at an internal address this deployment
    does not allow (127.0.0.2: only 127.0.0.1 is), and a bot at a port where
    nobody listens: the match's events (as anyone reads them) say that the
    calls failed; the log says why."""
    monkeypatch.setattr(outbound, "allowed", outbound.parse_allow("http,127.0.0.1/32"))
    caplog.set_level(logging.INFO)
    with socketless_port() as closed:
        created = api.create(
            GAME,
            {
                "players": [
                    {"bot_url": "http://127.0.0.2:9/bot"},
                    {"bot_url": f"http://127.0.0.1:{closed}/bot"},
                ],
                "bot_deadline_s": 0.5,
                "webhook": {"url": "http://127.0.0.2:9/hook"},
            },
        ).json()
        match_id = created["id"]
        settings = DeliverySettings(base_s=0.05, cap_s=0.1, give_up_s=0.5, timeout_s=1)
        try:
            with running(live, settings):
                wait_until(lambda: api.get(GAME, match_id).json()["webhook"]["given_up"], 30)
                wait_until(lambda: seats_failed(api, match_id) == {0, 1}, 30)
            seen = api.get(GAME, match_id).text + api.events(GAME, match_id, None).text
            for word in ("internal", "dns", "refused", "connection", "127.0.0", "resolves"):
                assert word not in seen.lower(), word
            events = api.events(GAME, match_id, None).json()["events"]
            failures = [e for e in events if e["type"] in ("bot_timeout", "webhook_given_up")]
            assert {e["type"] for e in failures} == {"bot_timeout", "webhook_given_up"}
            assert {e["reason"] for e in failures} == {"call_failed"}
            assert_in_contract(log_of(redis_client, match_id))
            assert "internal_address" in caplog.text and "connection" in caplog.text
            assert "127.0.0.2" in caplog.text
        finally:
            forget(redis_client, match_id)


def seats_failed(api, match_id: str) -> set[int]:
    events = api.events(GAME, match_id, None).json()["events"]
    return {e["seat"] for e in events if e["type"] == "bot_timeout"}


@contextmanager
def socketless_port() -> Iterator[int]:
    """A loopback port nobody listens on (a connection to it is refused)."""
    import socket

    probe = socket.create_server(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    yield port


# -- a malformed allow list (point 13) ------------------------------------------------
ALLOW = "LUDOTHEQUE_OUTBOUND_ALLOW"


@pytest.mark.parametrize("value", ["loopback", "http,10.0.0.0/33", "127.0.0.1,,nope"])
def test_a_malformed_allow_list_is_named_by_the_settings_check(value):
    with pytest.raises(Malformed, match=f"^{ALLOW}: "):
        load({ALLOW: value})


def test_a_malformed_concurrency_is_named_by_the_settings_check():
    with pytest.raises(Malformed, match=r"^LUDOTHEQUE_OUTBOUND_CONCURRENCY: "):
        load({"LUDOTHEQUE_OUTBOUND_CONCURRENCY": "lots"})


def test_good_settings_pass_the_check():
    settings = load({ALLOW: " http , 127.0.0.0/8,::1 ", "LUDOTHEQUE_OUTBOUND_CONCURRENCY": "8"})
    assert settings.outbound_allow.http and len(settings.outbound_allow.networks) == 2
    assert settings.outbound_concurrency == 8
    assert load({}).outbound_allow == outbound.Allowed()


def test_a_malformed_allow_list_never_answers_500(api, redis_client, monkeypatch):
    """``loopback`` is no network: creating a match with a webhook answered
    500. Now no process starts with it (the app factory reads the settings
    and names it); the allowances of a process without any are https only,
    nothing internal."""
    monkeypatch.setenv(ALLOW, "loopback")
    with pytest.raises(Malformed, match=f"^{ALLOW}: 'loopback'"):
        create_app()
    monkeypatch.setattr(outbound, "allowed", outbound.Allowed())
    hook = {"players": [{"name": "a"}, {}], "webhook": {"url": "https://hooks.example.com/x"}}
    created = api.create(GAME, hook)
    assert created.status_code == 201, created.text
    forget(redis_client, created.json()["id"])
    plain = {"players": [{"name": "a"}, {}], "webhook": {"url": "http://hooks.example.com/x"}}
    assert api.create(GAME, plain).status_code == 422
    with pytest.raises(outbound.Refused) as refused:
        outbound.vetted_address("127.0.0.1", 443)
    assert refused.value.reason == "internal_address"


def test_a_failure_logged_before_says_no_more_why_than_one_logged_now(live, redis_client):
    """Events logged before point 11 carried the reason ('internal_address',
    'dns', ...): read back, by the log and by the record, they say call_failed."""
    created = live.http.post(
        live.url("/v1/games/dekal/matches"), json={"players": [{"name": "Ada"}, {"name": "Bob"}]}
    ).json()
    match_id = created["id"]
    log = log_key(match_id)
    last = int(redis_client.xrevrange(log, count=1)[0][0].split(b"-")[1])
    old = [
        {"type": "bot_timeout", "seat": 1, "reason": "internal_address", "version": 1},
        {"type": "webhook_given_up", "reason": "dns", "version": 1},
    ]
    for n, event in enumerate(old, start=last + 1):
        redis_client.xadd(log, {"e": json.dumps(event)}, id=f"0-{n}")
    url = live.url(f"/v1/games/dekal/matches/{match_id}/events")
    read = live.http.get(url, params={"after": last}).json()["events"]
    assert [(e["type"], e["reason"]) for e in read] == [
        ("bot_timeout", "call_failed"),
        ("webhook_given_up", "call_failed"),
    ]
