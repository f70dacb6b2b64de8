"""Ranked play in /play (issue 37, point 8), in Chromium: two guests in two
browsers press "Quick play" for Dékal, the queue matches them, they play
the whole match from their pages, and each sees both ratings change; the
leaderboard lists them, and a player's page draws its rating history."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import requests

from service.store.database import migrate
from tests.browser.playkit import new_page_fixture, screenshot  # noqa: F401
from tests.browser.test_play import dekal
from tests.browser.test_players import stored_player
from tests.support import databases
from tests.support.queue import matchmaking
from tests.support.ranked import archive_due
from tests.support.servers import LiveServer, bot_workers

CLICKS = 2_000  # at most, for the whole match


@pytest.fixture(scope="module", name="server")
def server_fixture(module_redis: str, tmp_path_factory) -> Iterator[LiveServer]:
    """The app with a database, a matchmaker and a bot worker beside it; one
    rated match lists a player."""
    url = databases.sqlite_url(tmp_path_factory.mktemp("play-ranked"))
    migrate(url)
    settings = {"REDIS_URL": module_redis, "DATABASE_URL": url, "LEADERBOARD_MIN_MATCHES": 1}
    with LiveServer(settings) as live, bot_workers(live.app, budget_s=0.05), matchmaking(live):
        yield live


def match_of(server: LiveServer, match_id: str) -> dict:
    return requests.get(f"{server.base}/v1/games/dekal/matches/{match_id}", timeout=10).json()


def test_two_guests_play_a_ranked_dekal_and_see_their_ratings_change(new_page, server):
    pages = [new_page(), new_page()]
    for page in pages:
        page.goto(server.base + "/play")
        quick = page.get_by_role("region", name="Quick play")
        quick.get_by_label("Players for Dékal").select_option("2p")
        quick.get_by_role("button", name="Quick play Dékal").click()
    for page in pages:
        page.wait_for_url(re.compile(r"#match/dekal/[0-9a-f]{32}$"))
    match_id = pages[0].url.rsplit("/", 1)[1]
    assert pages[1].url.endswith(match_id)
    players = [stored_player(page) for page in pages]
    match = match_of(server, match_id)
    assert match["rated"] and sorted(s["player"] for s in match["seats"]) == sorted(
        p["id"] for p in players
    )
    seat_of = {s["player"]: s["seat"] for s in match["seats"]}
    for page, player in zip(pages, players, strict=True):
        page.get_by_role("list", name="Players").get_by_text(f"{player['name']} (you)").wait_for()

    for _ in range(CLICKS):
        match = match_of(server, match_id)
        if match["status"] == "finished":
            break
        seats = [seat_of[player["id"]] for player in players]
        acting = [p for p, seat in zip(pages, seats, strict=True) if seat in match["to_act"]]
        if not acting or not dekal(acting[0]):
            pages[0].wait_for_timeout(100)
    else:
        pytest.fail(f"the match did not end in {CLICKS} clicks")

    for page in pages:
        changes = page.get_by_role("list", name="Rating changes")
        changes.wait_for()
        said = changes.inner_text()
        for other in players:
            change = rf"{re.escape(other['name'])}: 1000\?? → \d+\?? \([+-]\d+\)"
            assert re.search(change, said), said
        assert "1000? → 1000?" not in said
    screenshot(pages[0], "ranked-outcome")
    archive_due(server)  # what the worker's archiver does: the history comes from the archive

    # the leaderboard lists both; around me marks the page's own row
    page = pages[0]
    page.goto(f"{server.base}/play#leaderboard/dekal")
    board = page.get_by_role("table")
    for player in players:
        board.get_by_role("link", name=player["name"]).wait_for()
    page.get_by_role("button", name="Around me").click()
    board.locator("tr.me").get_by_role("link", name=players[0]["name"]).wait_for()

    # the player's page draws its rating history
    board.get_by_role("link", name=players[0]["name"]).click()
    page.get_by_role("heading", name=players[0]["name"]).wait_for()
    drawn = re.compile(r"^Rating from 1000 to \d+ over 1 rated match ")
    page.get_by_role("img", name=drawn).wait_for()
    screenshot(page, "ranked-player")
