"""/play as a guest player (issue 36, point 8), in Chromium, on a server with
a database: the first visit makes a guest (its token in localStorage), the
page creates and joins matches as that player (no seat token kept), "My
tables" lists them from the API, and a match goes on in another tab and
after a reload, as the same seat. (Without a database the page keeps seat
tokens: every test of test_play.py runs on such a server.)"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterator

import pytest
import requests

from service.store.database import migrate
from tests.browser.playkit import new_page_fixture, screenshot  # noqa: F401
from tests.browser.test_play import create_table, dekal
from tests.support import databases
from tests.support.servers import LiveServer, bot_workers

MOVES = 200  # clicks at most to play one move


@pytest.fixture(scope="module", name="server")
def server_fixture(module_redis: str, tmp_path_factory) -> Iterator[LiveServer]:
    """The app with a database (players need one), a bot worker beside it."""
    url = databases.sqlite_url(tmp_path_factory.mktemp("play-players"))
    migrate(url)
    settings = {"REDIS_URL": module_redis, "DATABASE_URL": url}
    with LiveServer(settings) as live, bot_workers(live.app, budget_s=0.05):
        yield live


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def stored_player(page) -> dict:
    return page.evaluate("JSON.parse(localStorage.getItem('ludotheque:player'))")


def moves_of(server: LiveServer, match_id: str, seat: int) -> int:
    """How many Dékal moves ``seat`` has made, from the match's public events."""
    url = f"{server.base}/v1/games/dekal/matches/{match_id}/events?after=0"
    events = requests.get(url, timeout=10).json()["events"]
    return sum(1 for e in events if e.get("seat") == seat and e["type"] in ("chosen", "taken"))


def play_a_move(page, server: LiveServer, match_id: str, seat: int) -> None:
    """Click legal controls on ``page`` until ``seat`` has made one more move."""
    before = moves_of(server, match_id, seat)
    for _ in range(MOVES):
        if not dekal(page):
            page.wait_for_timeout(150)
        if moves_of(server, match_id, seat) > before:
            return
    pytest.fail(f"seat {seat} made no move from this page")


def sits_as(page, name: str) -> None:
    """The table is on screen, seen from ``name``'s seat."""
    players = page.get_by_role("list", name="Players")
    players.get_by_text(f"{name} (you)").wait_for()


def test_a_guest_plays_on_in_another_tab_and_after_a_reload(new_page, server):
    page = new_page()
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))
    page.goto(server.base + "/play")
    page.get_by_role("heading", name="My tables").wait_for()
    me = stored_player(page)
    assert me["token"].startswith("ldq_player_"), me
    profile = requests.get(f"{server.base}/v1/players/me", headers=bearer(me["token"]), timeout=10)
    assert profile.status_code == 200 and profile.json()["id"] == me["id"]
    assert re.fullmatch(r"Guest \d{4}", me["name"]), me["name"]
    assert me["name"] in page.locator(".identity").inner_text()
    assert not page.get_by_label("Your name").count()  # the player's name, chosen once
    page.get_by_role("region", name="My tables").get_by_text("None yet").wait_for()

    create_table(page, server.base, "dekal", ["you", "greedy"], {})
    match_id = page.url.rsplit("/", 1)[1]
    sits_as(page, me["name"])
    # the seat is the player's: no seat token kept for it
    assert page.evaluate(f"localStorage.getItem('ludotheque:{match_id}')") is None
    match = requests.get(f"{server.base}/v1/games/dekal/matches/{match_id}", timeout=10).json()
    assert match["seats"][0]["player"] == me["id"] and match["seats"][0]["name"] == me["name"]
    play_a_move(page, server, match_id, 0)

    tab = new_page.tab(page)  # another tab of the same browser
    tab.goto(f"{server.base}/play#match/dekal/{match_id}")
    sits_as(tab, me["name"])
    play_a_move(tab, server, match_id, 0)

    page.reload()
    sits_as(page, me["name"])
    play_a_move(page, server, match_id, 0)
    assert stored_player(page)["id"] == stored_player(tab)["id"] == me["id"]  # one guest

    # live through a ticket asked with the player's token in a header, never in a URL
    assert any(re.search(rf"/matches/{match_id}/stream\?ticket=", url) for url in urls)
    assert not any(me["token"] in url for url in urls)

    page.get_by_role("link", name="Back to the lobby").click()
    mine = page.get_by_role("region", name="My tables")
    go_on = page.get_by_role("link", name=f"Continue: Dékal table {match_id[:8]}")
    assert "in play" in mine.locator("li").filter(has=go_on).inner_text()
    screenshot(page, "my-tables")
    go_on.click()
    sits_as(page, me["name"])
    play_a_move(page, server, match_id, 0)

    page.get_by_role("button", name="Resign").click()  # two seats: the match ends
    page.get_by_role("region", name="Outcome").wait_for()
    page.get_by_role("link", name="Back to the lobby").click()
    replay = page.get_by_role("link", name=f"Replay: Dékal table {match_id[:8]}")
    assert "over" in mine.locator("li").filter(has=replay).inner_text()
    replay.click()
    page.get_by_role("heading", name=re.compile("^Replay: Dékal")).wait_for()
    page.get_by_text(re.compile(r"^Step 0 of \d+$")).wait_for()


def test_a_friend_takes_an_open_seat_as_a_guest_and_both_list_it(new_page, server):
    ada = new_page()
    create_table(ada, server.base, "dekal", ["you", "open"], {})
    match_id = ada.url.rsplit("/", 1)[1]
    link = ada.locator("a.seat-link").get_attribute("href")
    ada.get_by_role("link", name="Back to the lobby").click()
    waiting = ada.get_by_role("link", name=f"Open: Dékal table {match_id[:8]}")
    assert "waiting for players" in ada.locator("li").filter(has=waiting).inner_text()

    bob = new_page()  # another browser: another guest
    bob.goto(link)
    bob.get_by_text("You take it as").wait_for()
    bob_me = stored_player(bob)
    assert bob_me["id"] != stored_player(ada)["id"]
    assert bob.get_by_text(f"You take it as {bob_me['name']}.").count()
    assert not bob.get_by_label("Your name").count()
    bob.get_by_role("button", name="Take the seat").click()
    sits_as(bob, bob_me["name"])
    assert bob.evaluate(f"localStorage.getItem('ludotheque:{match_id}')") is None
    match = requests.get(f"{server.base}/v1/games/dekal/matches/{match_id}", timeout=10).json()
    assert match["seats"][1]["player"] == bob_me["id"] and match["status"] == "active"
    bob.get_by_role("link", name="Back to the lobby").click()
    bob.get_by_role("link", name=f"Continue: Dékal table {match_id[:8]}").wait_for()
    ada.get_by_role("button", name="Refresh my tables").click()
    ada.get_by_role("link", name=f"Continue: Dékal table {match_id[:8]}").wait_for()


def test_a_token_near_its_end_is_renewed_and_a_revoked_one_makes_a_new_guest(new_page, server):
    page = new_page()
    page.goto(server.base + "/play")
    page.get_by_role("heading", name="My tables").wait_for()
    first = stored_player(page)
    # got 29 days ago, a day left, says this browser: the next view renews it with it
    soon = (datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=1)).isoformat()
    page.evaluate(
        "soon => { const key = 'ludotheque:player', p = JSON.parse(localStorage.getItem(key));"
        "const got = Date.now() - 29 * 86400e3;"
        "localStorage.setItem(key, JSON.stringify({...p, token_expires_at: soon,"
        " token_received_at: got})) }",
        soon,
    )
    page.reload()
    page.get_by_role("heading", name="My tables").wait_for()
    second = stored_player(page)
    assert second["id"] == first["id"] and second["token"] != first["token"]
    assert second["token"].startswith("ldq_player_")
    left = datetime.datetime.fromisoformat(second["token_expires_at"]) - datetime.datetime.now(
        datetime.UTC
    )
    assert left > datetime.timedelta(days=1), second
    for token in (first["token"], second["token"]):  # the old one works on till its end
        me = requests.get(f"{server.base}/v1/players/me", headers=bearer(token), timeout=10)
        assert me.status_code == 200 and me.json()["id"] == first["id"]

    # every token of the player revoked (as from another device): the page makes a new guest
    ended = requests.delete(
        f"{server.base}/v1/players/me/tokens", headers=bearer(second["token"]), timeout=10
    )
    assert ended.status_code == 200
    new_page.expected.append("status of 401")  # the refusal that tells the page
    page.reload()  # "My tables", asked with the revoked token, is refused
    page.get_by_text("Your guest key had ended").wait_for()
    third = stored_player(page)
    assert third["id"] != first["id"] and third["token"].startswith("ldq_player_")


def test_a_rematch_between_two_guests_goes_on_as_their_players(new_page, server):
    """The rematch answer gives a player's seat no token: the page keeps none.
    The other guest's seat is kept for it (reserved); its My tables leads to
    the rematch, which sends it to the match before to accept it."""
    ada = new_page()
    create_table(ada, server.base, "dekal", ["you", "open"], {})
    old_id = ada.url.rsplit("/", 1)[1]
    link = ada.locator("a.seat-link").get_attribute("href")
    bob = new_page()
    bob.goto(link)
    bob.get_by_role("button", name="Take the seat").click()
    ada_me, bob_me = stored_player(ada), stored_player(bob)
    sits_as(bob, bob_me["name"])
    bob.get_by_role("button", name="Resign").click()  # two seats: over
    for page in (ada, bob):
        page.get_by_role("region", name="Outcome").wait_for()

    ada.get_by_role("button", name="Rematch").click()
    ada.wait_for_url(re.compile(r"#match/dekal/(?!" + old_id + r")[0-9a-f]{32}$"))
    new_id = ada.url.rsplit("/", 1)[1]
    sits_as(ada, ada_me["name"])  # seats rotate: Ada is seat 1 now
    assert ada.evaluate(f"localStorage.getItem('ludotheque:{new_id}')") is None
    new = requests.get(f"{server.base}/v1/games/dekal/matches/{new_id}", timeout=10).json()
    assert new["seats"][1]["player"] == ada_me["id"]
    assert new["seats"][0] | {"name": None} == {
        "seat": 0, "name": None, "bot": None, "open": False, "reserved": True,
        "player": bob_me["id"],
    }  # fmt: skip

    bob.get_by_role("link", name="Back to the lobby").click()
    bob.get_by_role("link", name=f"Open: Dékal table {new_id[:8]}").click()
    bob.get_by_text("Seat 1 of this rematch is kept for you").wait_for()
    bob.get_by_role("link", name="accept it at the match before").click()
    bob.get_by_role("button", name="Accept the rematch").click()
    bob.wait_for_url(re.compile(rf"#match/dekal/{new_id}$"))
    sits_as(bob, bob_me["name"])
    for page in (ada, bob):
        page.get_by_text(re.compile(r"table \w+ · active")).wait_for()
    assert bob.evaluate(f"localStorage.getItem('ludotheque:{new_id}')") is None
    started = requests.get(f"{server.base}/v1/games/dekal/matches/{new_id}", timeout=10).json()
    assert started["status"] == "active" and started["seats"][0]["player"] == bob_me["id"]
    play_a_move(bob, server, new_id, 0)
    play_a_move(ada, server, new_id, 1)
