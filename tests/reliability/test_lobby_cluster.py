"""The lobby and a match's lifecycle on a real 3-master Redis Cluster: the
lobby's index lives in a slot of its own, the matches in theirs."""

from __future__ import annotations

from tests.http.test_lobby import RoundTrips
from tests.support.client import ApiClient
from tests.support.clusters import SLOTS


def test_the_lobby_and_the_lifecycle_on_the_cluster(cluster_live, monkeypatch):
    api = ApiClient(cluster_live.base)
    store = cluster_live.app.extensions["ludotheque.matches"].store
    made = [
        api.create("gaudi", {"players": [{"name": "A"}, {}], "listed": True}).json()
        for _ in range(9)
    ]
    nodes = {store.client.keyslot(f"m:{{{m['id']}}}") * 3 // SLOTS for m in made}
    assert len(nodes) > 1, "the listed matches live on several masters"
    shown, cursor = [], None
    trips = RoundTrips(monkeypatch)
    while True:
        trips.count = 0
        page = api.lobby("gaudi", limit=4, **({"cursor": cursor} if cursor else {})).json()
        assert trips.count <= 3 * (1 + 3 + 1), (
            trips.count
        )  # per batch: range, a read per node, sweep
        shown += [m["id"] for m in page["matches"]]
        cursor = page["next"]
        if cursor is None:
            break
    assert shown == [m["id"] for m in made[::-1]]
    joined = api.join("gaudi", made[0]["id"], 1, "B").json()
    api.abort("gaudi", made[1]["id"], made[1]["seats"][0]["token"])
    api.leave("gaudi", made[2]["id"], 0, made[2]["seats"][0]["token"])
    ids = [m["id"] for m in api.lobby("gaudi", limit=50).json()["matches"]]
    assert made[0]["id"] not in ids and made[1]["id"] not in ids and made[2]["id"] in ids
    # resign then rematch, across two matches' slots
    assert api.resign("gaudi", made[0]["id"], joined["token"]).json()["status"] == "finished"
    offered = api.rematch("gaudi", made[0]["id"], made[0]["seats"][0]["token"]).json()
    accepted = api.rematch("gaudi", made[0]["id"], joined["token"]).json()
    assert offered["id"] == accepted["id"] and accepted["status"] == "active"
