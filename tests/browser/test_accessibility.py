"""/play audited by axe-core in Chromium (issue 38, point 4): every screen —
the lobby, a seat link, each game's table mid-match with its legal moves
shown and at its end, a replay, the leaderboard and a player's page — at a
phone's size and a desktop's, with no serious or critical violation.

axe-core comes from the npm registry (`npm ci --prefix tests/browser/axe`,
pinned by its package-lock.json); without it these tests skip, and fail
instead when LUDOTHEQUE_REQUIRE_AXE is set. One server and one match per game
serve every screen of that game, at both sizes."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import requests

from service.store.database import migrate
from tests.browser.playkit import audit, new_page_fixture, require_axe  # noqa: F401
from tests.browser.test_play import create_table, ducale, gaudi, pacal
from tests.browser.test_play import dekal as dekal_move
from tests.support import databases
from tests.support.ranked import archive_due, new_player, rated_match, resign
from tests.support.servers import LiveServer, bot_workers

SIZES = {"phone": (390, 844), "desktop": (1280, 800)}
MOVES = {"dekal": dekal_move, "pacal": pacal, "gaudi": gaudi, "ducale": ducale}
SEATS = {
    "dekal": (["you", "greedy"], {}),
    "pacal": (["you", "greedy"], {}),
    "gaudi": (["you", "greedy"], {"short_game": True}),
    "ducale": (["you", "greedy"], {}),
}


@pytest.fixture(scope="module", autouse=True)
def axe_installed() -> None:
    """Before any server starts: skip (or fail) at once without axe-core."""
    require_axe()


@pytest.fixture(scope="module", name="server")
def server_fixture(module_redis: str, tmp_path_factory) -> Iterator[LiveServer]:
    """The app with a database (guest players, the leaderboards) and a bot
    worker; one rated match of Pacal puts two players on its leaderboard."""
    url = databases.sqlite_url(tmp_path_factory.mktemp("play-audit"))
    migrate(url)
    settings = {"REDIS_URL": module_redis, "DATABASE_URL": url, "LEADERBOARD_MIN_MATCHES": 1}
    with LiveServer(settings) as live, bot_workers(live.app, budget_s=0.05):
        yield live


def at_both_sizes(page, screen: str) -> list[str]:
    found = []
    for size, (width, height) in SIZES.items():
        page.set_viewport_size({"width": width, "height": height})
        found += audit(page, f"{screen} ({size})")
    return found


def no_violation(found: list[str]) -> None:
    assert not found, "axe-core found serious or critical violations:\n" + "\n".join(found)


def shown_moves(page, game: str) -> None:
    """A few moves in, then the seat's legal moves on screen, and what a
    first pick shows (Gaudí's hexes, Ducale's choices, Pacal's offer)."""
    move = MOVES[game]
    for _ in range(4):
        move(page)
        page.wait_for_timeout(200)
    legal = page.locator(".board .legal:not([disabled])")
    for _ in range(100):
        if legal.count():
            break
        move(page)
        page.wait_for_timeout(100)
    legal.first.wait_for()
    if game == "gaudi":
        if not page.locator("g.spot").count():  # a tile is picked already
            page.locator("button.tile.legal[aria-pressed='false']").first.click()
        page.locator("g.spot").first.wait_for()
    elif game == "ducale":
        draw = page.locator("button[aria-label^='Draw from the stock']")
        if draw.count():
            draw.click()
        page.locator("button[aria-label*='of your hand']").first.click()
        page.locator(".choices button").first.wait_for()
    elif game == "pacal":
        hand = page.locator("button[aria-label^='Hand card'][aria-pressed='false']")
        if hand.count():
            hand.first.click()


def test_the_lobby_a_seat_link_the_leaderboard_and_a_players_page(new_page, server):
    players = [new_player(server, name) for name in ("Ada", "Bob")]
    match_id = rated_match(server, "pacal", players)
    assert resign(server, "pacal", match_id, players[1]["token"]).ok
    archive_due(server)
    page = new_page(bypass_csp=True)
    page.goto(server.base + "/play")
    page.get_by_role("button", name="Create").wait_for()
    page.get_by_role("region", name="Quick play").get_by_role("button").first.wait_for()
    page.get_by_role("region", name="My tables").get_by_role("listitem").first.wait_for()
    found = at_both_sizes(page, "lobby")

    body = {"players": [{"name": "Ada"}, {}]}
    created = requests.post(f"{server.base}/v1/games/gaudi/matches", json=body, timeout=10).json()
    page.evaluate(f"location.hash = 'join/gaudi/{created['id']}/1'")
    page.get_by_role("button", name="Take the seat").wait_for()
    found += at_both_sizes(page, "seat link")

    page.evaluate("location.hash = 'leaderboard/pacal'")
    page.get_by_role("table").get_by_role("link", name="Ada").wait_for()
    found += at_both_sizes(page, "leaderboard")

    page.evaluate(f"location.hash = 'player/{players[0]['id']}'")
    page.get_by_role("img", name=re.compile("^Rating from")).wait_for()
    found += at_both_sizes(page, "player's page")
    no_violation(found)


@pytest.mark.parametrize("game", list(MOVES))
def test_a_table_mid_match_at_its_end_and_its_replay(new_page, server, game):
    page = new_page(bypass_csp=True)
    seats, options = SEATS[game]
    create_table(page, server.base, game, seats, options)
    shown_moves(page, game)
    found = at_both_sizes(page, f"{game} mid-match")

    page.get_by_role("button", name="Resign").click()
    page.get_by_role("region", name="Outcome").get_by_text("Deal verified").wait_for()
    found += at_both_sizes(page, f"{game} at its end")

    match_id = page.url.rsplit("/", 1)[1]
    page.evaluate(f"location.hash = 'replay/{game}/{match_id}'")
    page.locator(".step-text .counter").filter(has_text=re.compile("^Step 0 ")).wait_for()
    found += at_both_sizes(page, f"{game} replay, the deal")
    page.keyboard.press("End")
    page.get_by_role("region", name="Every hand, revealed").wait_for()
    found += at_both_sizes(page, f"{game} replay, the end")
    no_violation(found)
