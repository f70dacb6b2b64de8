"""The index of each player's live matches (service.store.player_matches),
against a real Redis: what a commit costs it, its bound, its expiry."""

from __future__ import annotations

import uuid
from types import SimpleNamespace
from typing import Any

import redis

from engines import GAMES
from service.domain.commits import Commit
from service.store import player_matches
from service.store.player_matches import index_key, indexing


class Counting:
    """A Redis client that counts the pipelines made of it (round trips)."""

    def __init__(self, real: redis.Redis) -> None:
        self.real = real
        self.pipelines = 0

    def pipeline(self, **kwargs: Any) -> Any:
        self.pipelines += 1
        return self.real.pipeline(**kwargs)


def commit(match: dict[str, Any], *kinds: str) -> Commit:
    events = [{"type": kind} for kind in kinds]
    return Commit(GAMES["dekal"], match, 1, events, finished=False)


def a_match(player_id: str, created: float = 1_767_225_600.0) -> dict[str, Any]:
    return {
        "id": uuid.uuid4().hex,
        "created_at": created,
        "seats": [{"name": "Ada", "token": "x", "player": player_id}, {"name": None}],
    }


def test_an_action_costs_the_index_no_round_trip_once_it_is_fresh(redis_client):
    counting = Counting(redis_client)
    after = indexing(SimpleNamespace(client=counting), ttl=3600)
    player = uuid.uuid4().hex
    match = a_match(player)
    after(commit(match, "match_created"))
    assert counting.pipelines == 1
    for _ in range(20):
        after(commit(match, "action", "turn"))
    assert counting.pipelines == 1  # actions: nothing written, nothing read
    assert redis_client.zcard(index_key(player)) == 1
    assert 0 < redis_client.ttl(index_key(player)) <= 3600


def test_a_commit_not_confirmed_by_the_replicas_is_not_indexed(redis_client):
    counting = Counting(redis_client)
    after = indexing(SimpleNamespace(client=counting), ttl=3600)
    player = uuid.uuid4().hex
    unconfirmed = commit(a_match(player), "match_created")
    after(Commit(**{**unconfirmed.__dict__, "confirmed": False}))
    assert counting.pipelines == 0 and redis_client.exists(index_key(player)) == 0


def test_a_seat_left_by_its_player_takes_the_match_off(redis_client):
    after = indexing(SimpleNamespace(client=redis_client), ttl=3600)
    player, other = uuid.uuid4().hex, uuid.uuid4().hex
    match = a_match(player)
    match["seats"][1] = {"name": "Bob", "token": "y", "player": other}
    after(commit(match, "match_created"))
    match["seats"][1] = {"name": None, "token": None, "bot": None}
    left = Commit(
        GAMES["dekal"], match, 2, [{"type": "seat_left", "seat": 1, "player": other}], False
    )
    after(left)
    assert redis_client.zcard(index_key(other)) == 0
    assert redis_client.zcard(index_key(player)) == 1


def test_forget_match_and_drop(redis_client):
    after = indexing(SimpleNamespace(client=redis_client), ttl=3600)
    player = uuid.uuid4().hex
    kept, archived = a_match(player, 1.0), a_match(player, 2.0)
    for match in (kept, archived):
        after(commit(match, "match_created"))
    player_matches.forget_match(redis_client, archived)
    assert player_matches.match_ids(redis_client, player) == [kept["id"]]
    player_matches.drop(redis_client, player)
    assert redis_client.exists(index_key(player)) == 0
