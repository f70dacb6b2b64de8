"""Webhooks and HTTP bots on a real 3-master Redis Cluster: the delivery
queue lives in a slot of its own, each match's cursor in the match's slot."""

from __future__ import annotations

from service.store import deliveries
from tests.background.test_webhooks import (
    GAME,
    assert_complete_and_in_order,
    bot_match,
    delivered_everything,
    log_of,
    running,
)
from tests.support.client import ApiClient
from tests.support.clusters import SLOTS
from tests.support.receivers import BotServer, WebhookReceiver
from tests.support.waiting import wait_until


def test_webhooks_and_http_bots_on_the_cluster(cluster_live, loopback_allowed):
    api = ApiClient(cluster_live.base)
    matches = cluster_live.app.extensions["ludotheque.matches"]
    client = matches.store.client
    receiver, bot = WebhookReceiver(failure_rate=0.3), BotServer("good")
    try:
        ids = [bot_match(api, receiver, bots=2) for _ in range(6)]
        nodes = {client.keyslot(deliveries.hook_key(m)) * 3 // SLOTS for m in ids}
        assert len(nodes) > 1, "the matches' cursors live on several masters"
        played = api.create(GAME, {"players": [{"bot_url": bot.url}, {"bot": "random"}]}).json()
        bot.secret = played["secret"]
        with running(cluster_live):
            wait_until(lambda: delivered_everything(api, client, receiver, ids), 180)
            wait_until(lambda: api.get(GAME, played["id"]).json()["status"] == "finished", 120)
        assert_complete_and_in_order(client, receiver, ids)
        assert bot.bad == [] and bot.calls
        assert not [e for e in log_of(client, played["id"]) if e["type"].startswith("bot_")]
    finally:
        receiver.stop()
        bot.stop()
