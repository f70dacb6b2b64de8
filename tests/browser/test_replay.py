"""/play replays a finished match in Chromium: from a link or the lobby's
form, step by step with the buttons and the keyboard, each step's public
events in words, every hand at the end; and a live match's end links to it."""

from __future__ import annotations

import json
import re

import pytest
import requests

from service.domain import replays

# The fixtures server and new_page (on the conftest's browser) live in playkit.
from tests.browser.playkit import (  # noqa: F401
    new_page_fixture,
    screenshot,
    server_fixture,
)
from tests.support.matches import long_match
from tests.support.waiting import wait_until

# Short matches between bots (their names differ: "random bot", "greedy bot").
BOTS = [{"bot": "random"}, {"bot": "greedy"}]
OPTIONS = {
    "dekal": {},
    "pacal": {"manches_to_win": 1},
    "gaudi": {"short_game": True},
    "ducale": {"target_score": 1},
}
NOT_WORDS = re.compile(r"[{}]|undefined|\[object|NaN")


def finished_bot_match(server, game: str) -> tuple[str, int]:
    """A seeded match between two bots, played to its end: its id and how
    many actions its record holds."""
    body = {"players": BOTS, "options": OPTIONS[game], "seed": 35}
    created = requests.post(f"{server.base}/v1/games/{game}/matches", json=body, timeout=10)
    assert created.status_code == 201, created.text
    match_id = created.json()["id"]
    record = f"{server.base}/v1/games/{game}/matches/{match_id}/record"
    answer = wait_until(lambda: (r := requests.get(record, timeout=10)).ok and r, timeout=60)
    return match_id, len(answer.json()["actions"])


def counter(page, step: int, last: int) -> None:
    page.locator(".step-text .counter").filter(has_text=f"Step {step} of {last}").wait_for()


def said(page) -> str:
    text = page.get_by_role("status").inner_text()
    assert not NOT_WORDS.search(text), text
    return text


def test_a_replay_steps_forwards_and_back_with_buttons_and_keys(new_page, server):
    match_id, last = finished_bot_match(server, "dekal")
    page = new_page()
    page.goto(f"{server.base}/play#replay=dekal/{match_id}")
    counter(page, 0, last)
    assert "The deal" in said(page)
    assert page.get_by_role("button", name="Previous").get_attribute("aria-disabled") == "true"
    page.get_by_role("button", name="Next").click()
    counter(page, 1, last)
    assert re.search(r"(Random|Greedy) bot chooses a face-down card", said(page)), said(page)
    page.get_by_role("button", name="Next").click()
    counter(page, 2, last)
    page.get_by_role("button", name="Previous").click()
    counter(page, 1, last)
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    counter(page, 3, last)
    page.keyboard.press("ArrowLeft")
    counter(page, 2, last)
    page.keyboard.press("End")
    counter(page, last, last)
    assert "The match is over" in said(page)
    hands = page.get_by_role("region", name="Every hand, revealed")
    for name in ("random bot", "greedy bot"):
        assert hands.get_by_role("group", name=f"{name}'s hand").is_visible()
    assert page.get_by_role("button", name="Next").get_attribute("aria-disabled") == "true"
    page.get_by_role("button", name="Last").click(force=True)  # at the end: nothing moves
    counter(page, last, last)
    screenshot(page, "replay-dekal-end")
    page.keyboard.press("Home")
    counter(page, 0, last)
    assert page.get_by_role("region", name="Every hand, revealed").count() == 0
    page.get_by_role("button", name="Last").click()
    counter(page, last, last)
    page.get_by_role("button", name="First").click()
    counter(page, 0, last)


@pytest.mark.parametrize("game", ["pacal", "gaudi", "ducale"])
def test_every_step_of_a_replay_is_told_in_words(new_page, server, game):
    """Opened from the lobby's form; every step read out, forwards."""
    match_id, last = finished_bot_match(server, game)
    page = new_page()
    page.goto(f"{server.base}/play")
    form = page.get_by_role("form", name="Replay a match")
    form.get_by_role("combobox", name="Game").select_option(game)
    form.get_by_role("textbox", name="Match id").fill(f"  {match_id} ")
    form.get_by_role("button", name="Replay").click()
    counter(page, 0, last)
    assert page.url.endswith(f"#replay/{game}/{match_id}")
    next_button = page.get_by_role("button", name="Next")
    next_button.focus()
    for step in range(1, last + 1):
        page.keyboard.press("ArrowRight")
        counter(page, step, last)
        assert said(page).count("\n") >= 1, f"step {step} says nothing"
    hands = page.get_by_role("region", name="Every hand, revealed")
    for name in ("random bot", "greedy bot"):
        assert hands.get_by_role("group", name=f"{name}'s hand").is_visible()
    assert page.evaluate("document.activeElement.textContent").startswith("Next")
    screenshot(page, f"replay-{game}-end")


def test_the_end_of_a_live_match_links_to_its_replay(new_page, server):
    body = {"players": [{"name": "Ada"}, {"bot": "random"}]}
    created = requests.post(f"{server.base}/v1/games/pacal/matches", json=body, timeout=10).json()
    match_id, token = created["id"], created["seats"][0]["token"]
    page = new_page()
    page.goto(f"{server.base}/play")
    held = json.dumps({"0": token})  # the seat this browser holds, as /play keeps it
    page.evaluate(f"localStorage.setItem('ludotheque:{match_id}', '{held}')")
    page.goto(f"{server.base}/play#match/pacal/{match_id}")
    page.get_by_role("button", name="Resign").click()
    outcome = page.get_by_role("region", name="Outcome")
    link = outcome.get_by_role("link", name="Replay this match")
    assert link.get_attribute("href") == f"#replay/pacal/{match_id}"
    link.click()
    counter = page.locator(".step-text .counter").filter(has_text=re.compile(r"^Step 0 of \d+$"))
    counter.wait_for()
    page.keyboard.press("End")  # the match ended with Ada's resignation
    page.get_by_role("status").filter(has_text="Ada resigns.").wait_for()
    assert page.get_by_role("heading", name=re.compile("^Replay: Pacal")).is_visible()


def test_a_match_not_over_says_so_and_links_to_its_table(new_page, server):
    body = {"players": [{"name": "Ada"}, {}]}
    created = requests.post(f"{server.base}/v1/games/dekal/matches", json=body, timeout=10).json()
    page = new_page()
    new_page.expected.append("status of 409")  # the refusal shown below
    page.goto(f"{server.base}/play#replay/dekal/{created['id']}")
    page.get_by_role("alert").filter(has_text="Refused (match_not_over)").wait_for()
    page.get_by_role("link", name="watch it live").click()
    page.get_by_text(re.compile(r"table \w+ · waiting")).wait_for()


def test_a_long_replay_loads_its_pages_as_the_user_steps_across_them(new_page, server):
    """251 steps: three pages of 100, each asked for once, when needed (or
    a little before)."""
    match_id = long_match(server.matches, "ducale", 250, {"target_score": 10000})
    page = new_page()
    asked: list[str] = []
    page.on("request", lambda r: "/replay" in r.url and asked.append(r.url.split("?")[1]))
    page.goto(f"{server.base}/play#replay/ducale/{match_id}")
    counter(page, 0, 250)
    assert asked == ["from=0&limit=100"]
    page.keyboard.press("End")  # the last page, asked for now
    counter(page, 250, 250)
    assert "Ada resigns." in said(page)
    hands = page.get_by_role("region", name="Every hand, revealed")
    for name in ("Ada", "Bob"):
        assert hands.get_by_role("group", name=f"{name}'s hand").is_visible()
    for _ in range(51):  # back across a page boundary, onto a page not asked for yet
        page.keyboard.press("ArrowLeft")
    counter(page, 199, 250)
    assert said(page).strip()
    assert page.get_by_role("region", name="Every hand, revealed").count() == 0
    page.get_by_role("button", name="First").click()
    counter(page, 0, 250)
    for step in range(1, 102):  # forwards across the first boundary: loaded already
        page.keyboard.press("ArrowRight")
        if step in (99, 100, 101):
            counter(page, step, 250)
    assert sorted(asked) == ["from=0&limit=100", "from=100&limit=100", "from=200&limit=100"]
    screenshot(page, "replay-ducale-paged")


def test_a_match_too_long_to_replay_says_so_and_links_to_its_record(new_page, server, monkeypatch):
    match_id = long_match(server.matches, "pacal", 6)
    monkeypatch.setattr(replays, "MAX_ACTIONS", 5)
    page = new_page()
    new_page.expected.append("status of 422")  # the refusal shown below
    page.goto(f"{server.base}/play#replay/pacal/{match_id}")
    page.get_by_role("alert").filter(has_text="Refused (replay_too_long)").wait_for()
    page.get_by_text("This match is too long to replay here").wait_for()
    link = page.get_by_role("link", name="The match's record")
    assert link.get_attribute("href") == f"v1/games/pacal/matches/{match_id}/record"
