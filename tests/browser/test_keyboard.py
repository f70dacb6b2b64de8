"""/play with the keyboard alone (issue 38, point 4), in Chromium: a whole
Pacal turn and a whole Gaudí turn with Tab, Shift+Tab, Enter and Space only
(no click, no focus() call), the focus kept on a sensible control across the
table's redraws, and always visible."""

from __future__ import annotations

import re

import pytest

# The fixtures server and new_page (on the conftest's browser) live in playkit.
from tests.browser.playkit import new_page_fixture, server_fixture  # noqa: F401
from tests.browser.test_play import create_table

FOCUSED = """() => {
  const node = document.activeElement;
  return { label: node.getAttribute("aria-label") || node.textContent.trim(),
    pressed: node.getAttribute("aria-pressed"), body: node === document.body,
    outline: getComputedStyle(node).outlineStyle, stroke: node.matches(".spot:focus-visible") };
}"""


def focused(page) -> dict:
    return page.evaluate(FOCUSED)


def tab_to(page, label: str, pressed: str | None = None, key: str = "Tab") -> dict:
    """Press Tab (or Shift+Tab) until the focused control's name starts with
    ``label`` (and its aria-pressed is ``pressed``, when given)."""
    for _ in range(150):
        page.keyboard.press(key)
        now = focused(page)
        if now["label"].startswith(label) and (pressed is None or now["pressed"] == pressed):
            assert now["outline"] == "solid" or now["stroke"], now  # the focus is visible
            return now
    pytest.fail(f"{key} never reaches a control named {label!r}")


def focus_kept(page) -> dict:
    """After a redraw the focus is on a control of the page, not lost to <body>."""
    page.wait_for_timeout(300)
    now = focused(page)
    assert not now["body"], "the focus was lost to <body>"
    return now


def test_a_whole_pacal_turn_with_the_keyboard_alone(new_page, server):
    page = new_page()
    create_table(page, server.base, "pacal", ["you", "greedy"], {"manches_to_win": 1})
    offer_or_choose = page.locator(
        "button[aria-label^='Hand card'], button[aria-label^='Take the offered']"
    )
    offer_or_choose.first.wait_for()
    if page.locator("button[aria-label^='Take the offered']").count():
        tab_to(page, "Take the offered")
        page.keyboard.press("Enter")
    else:  # two cards of the hand, then the offer (the focus goes to it once it is whole)
        tab_to(page, "Hand card", pressed="false")
        page.keyboard.press(" ")
        assert focus_kept(page)["pressed"] == "true"  # the same card, redrawn picked
        for _ in range(10):
            tab_to(page, "Hand card", pressed="false")
            page.keyboard.press(" ")
            if focus_kept(page)["label"].startswith("Offer the two picked cards"):
                break
            page.keyboard.press(" ")  # no offer with these two: put it back
        else:
            pytest.fail("no two cards of the hand make an offer")
        page.keyboard.press("Enter")
    place = page.locator("button[aria-label^='Place on']")
    place.first.wait_for()
    now = focus_kept(page)
    if not now["label"].startswith("Place on"):
        now = tab_to(page, "Place on")
    slot = re.search(r"Slot (\d+)", now["label"])[1]
    page.keyboard.press("Enter")
    mine = page.locator(".grids > .area", has_text="(you)")
    mine.get_by_role("img", name=re.compile(rf"^Slot {slot}: \d+")).wait_for()  # placed
    focus_kept(page)
    assert not page.locator(".message").inner_text()


def test_a_whole_gaudi_turn_with_the_keyboard_alone(new_page, server):
    page = new_page()
    create_table(page, server.base, "gaudi", ["you", "greedy"], {"short_game": True})
    page.locator("button.tile.legal").first.wait_for()
    turn = int(re.search(r"Turn (\d+)", page.locator(".board p").first.inner_text())[1])
    tab_to(page, "Tile: ")  # a tile of the hand
    page.keyboard.press("Enter")
    assert focus_kept(page)["label"].startswith("Lay ")  # the first place it may go
    page.keyboard.press("Shift+Tab")  # away, and back to the first hex
    page.keyboard.press("Tab")
    assert focused(page)["label"].startswith("Lay ")
    page.keyboard.press("Enter")
    now = focus_kept(page)
    if not now["label"].startswith("Place the tiles laid"):
        tab_to(page, "Place the tiles laid")
    page.keyboard.press("Enter")
    page.locator(".hexes g.fresh").first.wait_for()  # laid, and marked
    page.get_by_text(re.compile(rf"Turn ({turn + 1}|{turn + 2}):")).first.wait_for()
    focus_kept(page)
    assert not page.locator(".message").inner_text()
