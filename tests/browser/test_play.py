"""/play in Chromium: whole matches of every game against bots, clicked like a
person; two people in two browsers through the seat link; a phone screen."""

from __future__ import annotations

import re

import pytest
import requests

from engines.ducale import rules as ducale_rules

# The fixtures server and new_page (on the conftest's browser) live in playkit.
from tests.browser.playkit import (  # noqa: F401
    new_page_fixture,
    screenshot,
    server_fixture,
)

MOVES = 1500  # clicks at most in one match, so that a stuck page fails instead of hanging


def clicked(locator) -> bool:
    """Click the first element of ``locator`` if there is one."""
    if locator.count() == 0:
        return False
    try:
        locator.first.click(timeout=3000)
    except Exception:  # the table was redrawn under the pointer: look again
        return False
    return True


def create_table(page, base: str, game: str, seats: list[str], options: dict) -> None:
    page.goto(base + "/play")
    page.locator("#game").select_option(game)
    page.locator("#count").select_option(str(len(seats)))
    for i, seat in enumerate(seats):
        page.locator(f"[data-seat='{i}']").select_option(seat)
    for key, value in options.items():
        field = page.locator(f".options [name='{key}']")
        if value is True:
            field.check()
        else:
            field.fill(str(value)) if field.evaluate("f => f.tagName") == "INPUT" else (
                field.select_option(str(value))
            )
    page.get_by_role("button", name="Create").click()
    page.get_by_role("group", name="Table").or_(page.locator(".board")).first.wait_for()


def dekal(page) -> bool:
    return (
        clicked(page.locator(".grid button.card.down.legal"))
        or clicked(page.locator(".grid .arrow"))
        or clicked(page.get_by_role("button", name=re.compile("^Centre card")))
    )


def pacal(page) -> bool:
    for start in ("Take the offered", "Place on", "Set the drawn"):
        if clicked(page.locator(f"button[aria-label^='{start}']")):
            return True
    offer = page.get_by_role("button", name="Offer the two picked cards")
    if offer.count() and offer.is_enabled():
        return clicked(offer)
    hand = page.locator("button[aria-label^='Hand card'][aria-pressed='false']")
    return clicked(hand) or clicked(page.locator("button[aria-label^='Pass']"))


def gaudi(page) -> bool:
    place = page.get_by_role("button", name="Place the tiles laid")
    if place.count() and place.is_enabled():
        return clicked(place)
    return (
        clicked(page.locator("g.spot"))
        or clicked(page.locator("button.tile.legal"))
        or clicked(page.locator("button[aria-label^='Return']"))
        or clicked(page.get_by_role("button", name="Pass", exact=True))
    )


def ducale(page) -> bool:
    if clicked(page.locator("button[aria-label^='Draw from the stock']")):
        return True
    choices = page.locator(".choices button")
    if choices.count():  # lay off when we can, else discard the picked card
        layoff = choices.filter(has_text=re.compile("^(Lay off|Meld)"))
        return clicked(layoff) or clicked(choices.filter(has_text="Discard"))
    return clicked(page.locator("button[aria-label*='of your hand']"))


GAMES = {
    "dekal": (dekal, ["you", "greedy"], {}),
    "pacal": (pacal, ["you", "greedy"], {"manches_to_win": 1}),
    "gaudi": (gaudi, ["you", "greedy", "random"], {"short_game": True}),
    # a blocked table never ends without a bound on rebuilding the stock (RULES.md)
    "ducale": (ducale, ["you", "greedy"], {"target_score": 1, "max_stock_rebuilds": 3}),
}


def play_out(page, move) -> None:
    """Click legal moves until the outcome shows."""
    for _ in range(MOVES):
        if page.locator(".outcome").count():
            return
        if not move(page):
            page.wait_for_timeout(150)
    pytest.fail("the match did not end")


def check_the_end(page) -> None:
    outcome = page.get_by_role("region", name="Outcome")
    outcome.get_by_role("heading").wait_for()
    assert re.search(r"Over: .+ wins?", outcome.get_by_role("heading").inner_text())
    outcome.get_by_text("Deal verified").wait_for()
    assert not page.locator(".message").inner_text(), page.locator(".message").inner_text()


@pytest.mark.parametrize("game", list(GAMES))
def test_a_whole_match_against_bots_by_clicking(new_page, server, game):
    move, seats, options = GAMES[game]
    page = new_page()
    create_table(page, server.base, game, seats, options)
    for _ in range(6):  # a few moves in, for the picture
        move(page)
        page.wait_for_timeout(300)
    screenshot(page, game, readme=game != "ducale")  # Ducale's picture shows a joker meld
    play_out(page, move)
    check_the_end(page)
    log = page.get_by_role("region", name="Event log")
    assert "The match is over" in log.inner_text()
    screenshot(page, f"{game}-over")


def test_the_childrens_gaudi_is_offered_and_played_tile_by_tile(new_page, server):
    """RULES.md §3's children's game: the option is a box to tick; a tile laid
    is placed at once, End turn stops; no points nor markers; nobody wins."""
    page = new_page()
    create_table(
        page, server.base, "gaudi", ["you", "greedy"], {"children": True, "short_game": True}
    )
    page.get_by_text("The children's game: one pavement together.").wait_for()
    laid = []

    def child(page) -> bool:
        # Two tiles, then stop (the turn also ends by itself when nothing fits:
        # then the next two tiles are tried again, whatever turn they fall in).
        if laid[-2:] == ["tile", "tile"] and clicked(page.get_by_role("button", name="End turn")):
            laid.append("end")
            return True
        if clicked(page.locator("g.spot")):
            laid.append("tile")
            return True
        return (
            clicked(page.locator("button.tile.legal"))
            or clicked(page.locator("button[aria-label^='Return']"))
            or clicked(page.get_by_role("button", name="Pass", exact=True))
        )

    assert not page.get_by_role("button", name="Place the tiles laid").count()
    assert "points" not in page.locator("ul.area[aria-label=Players]").inner_text()
    play_out(page, child)
    assert "end" in laid and "tile" in laid
    check_the_end(page)
    outcome = page.get_by_role("region", name="Outcome").inner_text()
    assert "Over: no winner" in outcome
    assert re.search(r"Together: \d+ animals completed, \d+ tiles laid", outcome), outcome


def test_two_people_in_two_browsers_through_the_seat_link(new_page, server):
    ada = new_page()
    urls: list[str] = []
    ada.on("request", lambda request: urls.append(request.url))
    create_table(ada, server.base, "dekal", ["you", "open"], {})
    link = ada.locator("a.seat-link").get_attribute("href")
    assert "#join/dekal/" in link and "token" not in link
    bob = new_page()  # another browser: its own storage
    bob.goto(link)
    bob.get_by_label("Your name").fill("Bob")
    bob.get_by_role("button", name="Take the seat").click()
    bob.locator(".grid").first.wait_for()
    ada.get_by_text("Bob", exact=False).first.wait_for()  # Ada's page sees Bob sit down
    for _ in range(MOVES):
        if ada.locator(".outcome").count() and bob.locator(".outcome").count():
            break
        if not (dekal(ada) or dekal(bob)):
            ada.wait_for_timeout(150)
    check_the_end(ada)
    check_the_end(bob)
    screenshot(ada, "two-browsers-ada")
    # Live through one ticketed stream; the seat's token never in a URL.
    assert any("/v1/stream?ticket=" in url for url in urls)
    match_id = ada.url.rsplit("/", 1)[1]
    token = ada.evaluate(f"JSON.parse(localStorage.getItem('ludotheque:{match_id}'))[0]")
    assert token and not any(token in url for url in urls)
    ada.get_by_role("button", name="Rematch").click()
    bob.get_by_role("button", name="Accept the rematch").click()
    for page in (ada, bob):  # both sit at the new table, which has started
        page.get_by_text(re.compile(r"table \w+ · active")).wait_for()
    assert ada.url != link and ada.url.split("/")[-1] == bob.url.split("/")[-1]


def test_a_refused_move_shows_the_servers_reason(new_page, server):
    page = new_page()
    # Hold the page's live updates, then play from elsewhere with the same seat.
    page.route("**/v1/stream-tickets", lambda route: None)
    page.route("**/events?*", lambda route: None)
    create_table(page, server.base, "dekal", ["you", "greedy"], {})
    page.locator(".grid button.card.down.legal").first.wait_for()
    match_id = page.url.rsplit("/", 1)[1]
    token = page.evaluate(f"JSON.parse(localStorage.getItem('ludotheque:{match_id}'))[0]")
    answer = requests.post(
        f"{server.base}/v1/games/dekal/matches/{match_id}/actions",
        json={"type": "reveal", "row": 3, "col": 3},
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    )
    assert answer.status_code == 200
    new_page.expected.extend(["status of 409", "status of 422"])  # the refusal below
    page.get_by_role("button", name="Reveal the face-down card at row 1, column 1").click()
    alert = page.locator(".message")
    alert.filter(has_text="Refused").wait_for()
    assert re.search(r"Refused \((not_your_turn|illegal_action)\): .+", alert.inner_text())


def test_a_phone_screen_shows_the_whole_table_without_sideways_scrolling(new_page, server):
    page = new_page(width=360, height=740)
    loaded: list[int] = []
    page.on("response", lambda r: "/play" in r.url and loaded.append(len(r.body())))
    page.goto(server.base + "/play")
    page.locator("#game").wait_for()
    assert 0 < sum(loaded) < 300 * 1024, sum(loaded)  # the first load, all of it
    create_table(page, server.base, "pacal", ["you"], {"mode": "solitaire"})
    pacal(page)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 360, width
    page.get_by_role("group", name=re.compile("pyramid")).first.wait_for()
    screenshot(page, "phone-pacal")
    play_out(page, pacal)
    check_the_end(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= 360


def joker_seed() -> int:
    """A deal where Ducale's seat 0 starts and, once it has drawn, can meld a run with a joker."""
    for seed in range(500):
        state = ducale_rules.setup({}, 2, seed)
        if ducale_rules.to_act(state) == [0]:
            ducale_rules.apply(state, 0, {"type": "draw"})
            for action in ducale_rules.legal_actions(state, 0):
                if action["type"] == "meld" and "JOKER" in action["melds"][0]["cards"]:
                    return seed
    raise AssertionError("no such deal in 500 seeds")


def test_a_ducale_meld_with_a_joker_is_built_by_picking_cards(new_page, server):
    created = requests.post(
        f"{server.base}/v1/games/ducale/matches",
        json={"players": [{"name": "Ada"}, {"bot": "greedy"}], "seed": joker_seed()},
        timeout=10,
    ).json()
    match_id, token = created["id"], created["seats"][0]["token"]
    page = new_page()
    page.goto(server.base + "/play")
    page.locator("#game").wait_for()
    page.evaluate(
        f"localStorage.setItem('ludotheque:{match_id}', JSON.stringify({{0: '{token}'}}));"
        f"location.hash = 'match/ducale/{match_id}'"
    )
    page.get_by_role("button", name=re.compile("^Draw from the stock")).click()
    page.get_by_text("Round 1: Ada plays.").wait_for()  # the drawn card is in the hand
    legal = requests.get(
        f"{server.base}/v1/games/ducale/matches/{match_id}/legal-actions",
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    ).json()["actions"]
    meld = next(
        a["melds"][0] for a in legal if a["type"] == "meld" and "JOKER" in a["melds"][0]["cards"]
    )
    for card in meld["cards"]:  # pick the meld's cards in the hand, as a person would
        spoken = page.evaluate(f"import('./play/games/ducale.js').then(m => m.spoken('{card}'))")
        page.locator(f"button[aria-label^='{spoken},'][aria-pressed='false']").first.click()
    as_shown = page.evaluate(
        f"import('./play/games/ducale.js').then(m => m.spoken('{meld['joker_as']}'))"
    )
    choice = page.locator(".choices button", has_text="joker as")
    choice.filter(has_text=re.compile(r"^Meld")).first.wait_for()
    wanted = [b for b in choice.all() if b.inner_text().startswith("Meld")]
    assert wanted, "the picked cards offer no meld"
    target = next(b for b in wanted if b.inner_text().endswith(f"as {short(meld['joker_as'])})"))
    target.click()
    page.get_by_role("img", name=f"joker as {as_shown}").wait_for()
    page.get_by_role("group", name=re.compile(r"^Meld 1, a (run|set) of Ada")).wait_for()
    screenshot(page, "ducale", readme=True)


def short(card: str) -> str:
    return card[:-1] + {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}[card[-1]]


def tab_to(page, label: str) -> None:
    """Press Tab until the focused control's label starts with ``label``."""
    for _ in range(120):
        page.keyboard.press("Tab")
        focused = page.evaluate("document.activeElement.getAttribute('aria-label') || ''")
        if focused.startswith(label):
            return
    pytest.fail(f"Tab never reaches a control labelled {label!r}")


def test_dekal_turns_with_the_keyboard_alone(new_page, server):
    page = new_page()
    create_table(page, server.base, "dekal", ["you", "greedy"], {})
    for turn in range(1, 4):
        page.get_by_text(f"turn {turn} of 16: Everyone picks").wait_for()
        page.locator(".grid button.card.down.legal").first.wait_for()
        tab_to(page, "Reveal the face-down card")
        page.keyboard.press("Enter")
        arrow = page.get_by_role("button", name=re.compile("^Push the"))
        centre = page.get_by_role("button", name=re.compile("^Centre card"))
        arrow.or_(centre).first.wait_for()
        if not arrow.count():  # two centre cards: pick one first, with the keyboard too
            tab_to(page, "Centre card")
            page.keyboard.press("Enter")
        tab_to(page, "Push the")
        page.keyboard.press(" ")
    page.get_by_text("turn 4 of 16").wait_for()
    assert not page.locator(".message").inner_text()


def test_a_listed_table_is_joined_from_the_lobby_and_its_clock_runs(new_page, server):
    ada = new_page()
    create_table(ada, server.base, "gaudi", ["you", "open"], {"turn_timeout_s": 600})
    bob = new_page()
    bob.goto(server.base + "/play")
    bob.locator("#game").select_option("gaudi")
    tables = bob.get_by_role("region", name="Tables waiting for players")
    match_id = ada.url.rsplit("/", 1)[1]
    join = tables.locator(f"a[href$='/{match_id}/1']")
    more = tables.get_by_role("button", name="More tables")
    for _ in range(50):  # other tests may list many tables at once: page on
        join.or_(more).first.wait_for()
        if join.count():
            break
        more.click()
        bob.wait_for_timeout(200)
    assert join.inner_text() == "Join seat 2"
    join.click()
    bob.get_by_label("Your name").fill("Bob")
    bob.get_by_role("button", name="Take the seat").click()
    for page in (ada, bob):
        page.get_by_text(re.compile(r"table \w+ · active")).wait_for()
    clock = ada.locator("li.to-act .clock")
    clock.wait_for()
    assert re.fullmatch(r" · (9|10):\d\d left", clock.inner_text()), clock.inner_text()


def test_a_table_that_does_not_exist_says_so(new_page, server):
    page = new_page()
    new_page.expected.append("status of 404")  # the refusal shown below
    page.goto(server.base + "/play#match/dekal/" + "0" * 32)
    page.get_by_role("alert").filter(has_text="Refused (match_not_found)").wait_for()
    page.get_by_role("link", name="Back to the lobby").click()
    page.get_by_role("button", name="Create").wait_for()
