"""`ludotheque bot --rematches N`: after the end, the external bot asks for
a rematch (offering one, or accepting the other seat's offer) and plays it."""

from __future__ import annotations

import json
import subprocess

from tests.support.client import ApiClient
from tests.support.servers import LUDOTHEQUE


def bot_process(base: str, match_id: str, token: str, rematches: int) -> subprocess.Popen:
    return subprocess.Popen(
        [
            *(LUDOTHEQUE, "bot", "--url", base, "--game", "pacal", "--match", match_id),
            *("--token", token, "--policy", "random", "--rematches", str(rematches)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def outcomes(process: subprocess.Popen) -> list[dict]:
    out, err = process.communicate(timeout=180)
    assert process.returncode == 0, err
    return [json.loads(line) for line in out.splitlines()]


def test_an_external_bot_plays_rematches_against_a_server_bot(live, live_bots):
    api = ApiClient(live.base)
    created = api.create("pacal", {"players": [{"name": "outside"}, {"bot": "random"}]}).json()
    process = bot_process(live.base, created["id"], created["seats"][0]["token"], 2)
    try:
        played = outcomes(process)
        assert len(played) == 3 and all("winners" in outcome for outcome in played)
        first = api.get("pacal", created["id"]).json()
        second = api.get("pacal", first["rematch"]["id"]).json()
        assert second["status"] == "finished" and second["rematch"] is not None
        third = api.get("pacal", second["rematch"]["id"]).json()
        assert third["status"] == "finished" and third["rematch"] is None
        # seats rotate each time: the outside bot sits at 0, then 1, then 0
        assert [m["seats"][0]["name"] for m in (first, second, third)] == [
            "outside",
            None,
            "outside",
        ]
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def test_two_external_bots_offer_and_accept_a_rematch(live):
    api = ApiClient(live.base)
    created = api.create("pacal", {"players": [{"name": "east"}, {"name": "west"}]}).json()
    tokens = [seat["token"] for seat in created["seats"]]
    processes = [bot_process(live.base, created["id"], token, 1) for token in tokens]
    try:
        results = [outcomes(process) for process in processes]
        assert [len(r) for r in results] == [2, 2]
        rematch = api.get("pacal", created["id"]).json()["rematch"]["id"]
        final = api.get("pacal", rematch).json()
        assert final["status"] == "finished"
        assert [s["name"] for s in final["seats"]] == ["west", "east"]
        assert results[0][1] == results[1][1] == final["outcome"]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.communicate()
