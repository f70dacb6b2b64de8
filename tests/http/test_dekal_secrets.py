"""Dékal's secrets over HTTP: random matches, every response of every seat
and of a spectator scanned. A face-down value reaches nobody, its owner
included; a reveal choice reaches no other seat before everyone has chosen."""

from __future__ import annotations

import random
from typing import Any

import pytest

from tests.support.client import ApiClient

GAME = "dekal"
FACE_DOWN = {"face_up": False, "value": None}


def grids(node: Any):
    """Every 4x4 grid anywhere in a JSON document."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "grid":
                yield value
            else:
                yield from grids(value)
    elif isinstance(node, list):
        for value in node:
            yield from grids(value)


def assert_no_face_down_value(document: Any) -> None:
    for grid in grids(document):
        for row in grid:
            for cell in row:
                if cell is not None and not cell["face_up"]:
                    assert cell == FACE_DOWN


def scan_views(responses: dict[int | None, dict], chosen: dict[int, dict]) -> None:
    """One moment of the match as every viewer sees it."""
    for viewer, match in responses.items():
        assert_no_face_down_value(match)
        view = match["view"]
        if viewer is None:
            assert "my_choice" not in view
        else:
            assert view["my_choice"] == chosen.get(viewer)
        for seat, player in enumerate(view["players"]):
            if seat == viewer or view["phase"] != "reveal":
                continue
            # others' hidden cells all look alike: a choice leaves no trace
            hidden = [c for row in player["grid"] for c in row if c and not c["face_up"]]
            assert all(c == FACE_DOWN for c in hidden)
    others = {v: r["view"]["players"] for v, r in responses.items()}
    seen_by = {v: [{**p, "chosen": None} for p in players] for v, players in others.items()}
    assert len({str(players) for players in seen_by.values()}) == 1, "all see the same grids"


@pytest.mark.parametrize("players", [2, 4])
def test_every_response_keeps_dekal_secrets(live, players):
    api = ApiClient(live.base, live.http)
    rng = random.Random(players)
    body = {"players": [{"name": f"P{i}"} for i in range(players)], "seed": players}
    created = api.create(GAME, body).json()
    match_id, tokens = created["id"], [s["token"] for s in created["seats"]]
    viewers = [None, *range(players)]
    chosen: dict[int, dict] = {}
    while True:
        responses = {
            v: api.get(GAME, match_id, None if v is None else tokens[v]).json() for v in viewers
        }
        scan_views(responses, chosen)
        match = responses[None]
        if match["status"] == "finished":
            break
        seat = rng.choice(match["to_act"])
        legal = api.legal(GAME, match_id, tokens[seat]).json()
        assert_no_face_down_value(legal)
        action = rng.choice(legal["actions"])
        answer = api.act(GAME, match_id, tokens[seat], action).json()
        assert_no_face_down_value(answer)
        if action["type"] == "reveal":
            chosen[seat] = {"row": action["row"], "col": action["col"]}
            if answer["view"]["phase"] != "reveal":
                chosen.clear()
    for viewer in viewers:
        token = None if viewer is None else tokens[viewer]
        events = api.http.get(
            f"{api.base}/v1/games/{GAME}/matches/{match_id}/events",
            params={"limit": 1000},
            headers={"Authorization": f"Bearer {token}"} if token else {},
        ).json()["events"]
        assert_no_face_down_value(events)
        for event in events:
            if event["type"] == "action":
                assert event["seat"] == viewer, "an action record reaches its seat only"
            if event["type"] == "chosen":
                assert set(event) == {"index", "version", "type", "seat"}
