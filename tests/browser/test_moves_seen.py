"""/play shows moves (issue 38, point 3), in Chromium: Dékal's ways in around
the hole before any pick and its pushed line sliding; a laid Gaudí tile, a
drawn Ducale card and a new meld marked for a moment, at a table and in a
replay; the seat to act marked for the eyes and for screen readers; and
with reduced motion nothing moves while a move still works."""

from __future__ import annotations

import re

import pytest
import requests

# The fixtures server and new_page (on the conftest's browser) live in playkit.
from tests.browser.playkit import (  # noqa: F401
    new_page_fixture,
    screenshot,
    server_fixture,
    sit_at_seat_0,
)
from tests.browser.test_play import create_table, joker_seed
from tests.browser.test_replay import finished_bot_match

# Every element whose animation or transition lasts longer than nothing.
MOVING = """() => [...document.querySelectorAll("*")].filter((node) => {
  const style = getComputedStyle(node);
  const long = (list) => list.split(",").some((d) => parseFloat(d) > 0);
  return long(style.animationDuration) || long(style.transitionDuration);
}).map((node) => node.outerHTML.slice(0, 120))"""


# The seat's grid once its line pushed from `side` is marked: the cells' animations, and
# how many cells are marked fresh.
MARKED = """(side) => {
  const mine = [...document.querySelectorAll(".grids > .area")]
    .find((area) => area.querySelector("h4").textContent.includes("(you)"));
  const slid = [...(mine?.querySelectorAll(`.slid.from-${side}`) ?? [])];
  return slid.length && {
    slid: slid.map((n) => getComputedStyle(n).animationName),
    fresh: mine.querySelectorAll(".fresh").length };
}"""


def my_grid(page):
    return page.locator(".grids > .area", has_text="(you)").locator(".grid")


def push_a_card(page) -> str:
    """Reveal a card, then, on the seat's turn to take, check the ways in are
    shown before any pick, pick a centre card and push it in: the side."""
    page.locator(".grid button.card.down.legal").first.click()
    centre = page.get_by_role("button", name=re.compile("^Centre card"))
    centre.first.wait_for()
    grid = my_grid(page)
    ways = grid.locator(".insert, .arrow")
    assert ways.count() >= 2, grid.inner_html()  # a hole has 2, 3 or 4 ways in
    if not grid.locator(".arrow").count():  # two values in the centre: marks until a pick
        assert grid.get_by_role("img", name=re.compile("^A card may come in here")).count() >= 2
        centre.first.click()
    arrow = grid.locator(".arrow").first
    side = re.search(r"from the (\w+)", arrow.get_attribute("aria-label"))[1]
    arrow.click()
    return side


def test_dekal_shows_the_ways_in_before_a_pick_and_slides_the_pushed_line(new_page, server):
    page = new_page()
    create_table(page, server.base, "dekal", ["you", "greedy"], {})
    side = push_a_card(page)
    seen = page.wait_for_function(MARKED, arg=side).json_value()  # read at once: redraws
    assert all("slide" in name.split(", ") for name in seen["slid"]), seen
    assert seen["fresh"] == 1, seen  # the card that came in
    page.locator(".slid").first.wait_for(state="detached", timeout=5000)  # for a moment only


def test_the_seat_to_act_is_marked_for_eyes_and_screen_readers(new_page, server):
    page = new_page()
    create_table(page, server.base, "pacal", ["you", "greedy"], {"manches_to_win": 1})
    page.locator("ul.players li[aria-current='true']").first.wait_for()
    seats = page.evaluate(  # read at once: the table is redrawn at each move
        """() => [...document.querySelectorAll("ul.players li")].map((n) => ({
          current: n.getAttribute("aria-current"), text: n.textContent,
          border: getComputedStyle(n).borderTopWidth,
          mark: getComputedStyle(n, "::before").content }))"""
    )
    acting = [s for s in seats if s["current"] == "true"]
    assert acting and all("to play" in s["text"] for s in acting), seats
    assert all(s["border"] == "3px" and s["mark"].startswith('"▶') for s in acting), seats
    waiting = [s for s in seats if not s["current"]]
    assert all("to play" not in s["text"] and s["mark"] == "none" for s in waiting), seats


def test_a_laid_gaudi_tile_is_marked_for_a_moment(new_page, server):
    page = new_page()
    create_table(page, server.base, "gaudi", ["you", "greedy"], {"short_game": True})
    page.locator("button.tile.legal").first.click()
    page.locator("g.spot").first.click()
    page.get_by_role("button", name="Place the tiles laid").click()
    page.locator(".hexes g.fresh").first.wait_for()
    screenshot(page, "gaudi-fresh")
    page.locator(".hexes g.fresh").first.wait_for(state="detached", timeout=6000)


def test_a_drawn_ducale_card_and_a_new_meld_are_marked(new_page, server):
    page = new_page()
    body = {"players": [{"name": "Ada"}, {"bot": "greedy"}], "seed": joker_seed()}
    match_id, token = sit_at_seat_0(page, server.base, "ducale", body)
    page.get_by_role("button", name=re.compile("^Draw from the stock")).click()
    drawn = page.locator("button.fresh[aria-label*='of your hand']")
    drawn.wait_for()
    assert drawn.count() == 1
    legal = requests.get(
        f"{server.base}/v1/games/ducale/matches/{match_id}/legal-actions",
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    ).json()["actions"]
    meld = next(a for a in legal if a["type"] == "meld")
    spoken = page.evaluate(
        f"import('./play/games/ducale.js').then(m => {meld['melds'][0]['cards']}.map(m.spoken))"
    )
    for card in spoken:
        page.locator(f"button[aria-label^='{card},'][aria-pressed='false']").first.click()
    page.locator(".choices button", has_text=re.compile("^Meld")).first.click()
    page.locator(".meld.fresh").wait_for()


def test_with_reduced_motion_nothing_moves_and_a_move_still_works(new_page, server):
    page = new_page(reduced_motion="reduce")
    create_table(page, server.base, "dekal", ["you", "greedy"], {})
    assert page.evaluate("matchMedia('(prefers-reduced-motion: reduce)').matches")
    side = push_a_card(page)
    my_grid(page).locator(f".slid.from-{side}").first.wait_for()  # the marks are there, still
    marks = page.evaluate(
        "() => [...document.querySelectorAll('.grid .fresh')]"
        ".map((n) => getComputedStyle(n).outlineStyle)"
    )
    assert page.evaluate(MOVING) == []
    assert "solid" in marks, marks  # the card that came in: a static mark
    page.get_by_text(re.compile(r"turn 2 of 16: Everyone picks")).wait_for()  # the move counted
    assert not page.locator(".message").inner_text()


def test_a_replay_step_marks_what_it_changed(new_page, server):
    match_id, last = finished_bot_match(server, "gaudi")
    page = new_page()
    page.goto(f"{server.base}/play#replay/gaudi/{match_id}")
    page.locator(".step-text .counter").filter(has_text="Step 0 of").wait_for()
    fresh = page.locator(".hexes g.fresh")
    for step in range(1, min(last, 12) + 1):
        page.keyboard.press("ArrowRight")
        page.locator(".step-text .counter").filter(has_text=f"Step {step} of").wait_for()
        if fresh.count():
            break
    else:
        pytest.fail("no step of the replay marked a laid tile")
    page.keyboard.press("ArrowLeft")  # a step back: nothing new to mark
    page.locator(".step-text .counter").filter(has_text=f"Step {step - 1} of").wait_for()
    assert not fresh.count()
