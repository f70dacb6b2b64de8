"""Fixtures for /play in a real browser: Debian's Chromium driven by Playwright for Python.

Chromium itself is the ``browser`` fixture of tests/conftest.py (it
skips with an install message when /usr/bin/chromium is absent, and fails
instead under LUDOTHEQUE_REQUIRE_BROWSER=1). The server is the app on a
loopback port with a bot worker beside it. Each
"browser" is a Playwright context (its own localStorage, so its own seats).
Every page fails its test on a console error, an uncaught exception or a
request to any other host. Screenshots go to tests/browser/artifacts/ (git
ignores it; CI keeps it as an artefact); with LUDOTHEQUE_UPDATE_SCREENSHOTS=1
the one of each game is also written to docs/images/ for the README.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.servers import LiveServer, bot_workers

ARTIFACTS = Path(__file__).with_name("artifacts")
IMAGES = Path(__file__).parents[2] / "docs" / "images"


@pytest.fixture(scope="module", name="server")
def server_fixture(redis_url: str) -> Iterator[LiveServer]:
    with LiveServer({"REDIS_URL": redis_url}) as live, bot_workers(live.app, budget_s=0.05):
        yield live


class Guard:
    """What a page did wrong: console errors, uncaught errors, requests elsewhere."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.complaints: list[str] = []
        self.expected: list[str] = []  # console errors a test causes on purpose

    def asks_for_a_player(self, url: str, status: int) -> bool:
        """The page's first visit asks for a guest player (POST /v1/players); a
        server without a database answers 503 players_unavailable, and the
        page goes on with seat tokens: that one refusal is expected."""
        return status == 503 and url == f"{self.base}/v1/players"

    def watch(self, page) -> None:
        def console(message) -> None:
            if message.type != "error" or any(e in message.text for e in self.expected):
                return
            said = re.search(r"status of (\d+)", message.text)
            url = (message.location or {}).get("url", "")
            if not (said and self.asks_for_a_player(url, int(said[1]))):
                self.complaints.append(message.text)

        page.on("console", console)
        page.on("pageerror", lambda e: self.complaints.append(f"uncaught: {e}"))

        def refused(response) -> None:  # says which request a console error is about
            said = f"status of {response.status}"  # as the console says it
            what = f"{response.request.method} {response.url}"
            if self.asks_for_a_player(response.url, response.status):
                if response.json().get("code") != "players_unavailable":
                    self.complaints.append(f"{what}: {response.status} {response.text()[:300]}")
            elif response.status >= 400 and not any(e in said for e in self.expected):
                self.complaints.append(f"{what}: {response.status} {response.text()[:300]}")

        page.on("response", refused)

        def only_here(route) -> None:
            if route.request.url.startswith(self.base + "/"):
                route.continue_()
            else:  # offline: nothing outside the server answers
                self.complaints.append(f"request to another host: {route.request.url}")
                route.abort()

        page.route("**/*", only_here)


@pytest.fixture(name="new_page")
def new_page_fixture(browser, server) -> Iterator[Callable[..., object]]:
    """new_page(width=1100, height=900): a page in a browser of its own;
    new_page.tab(page): another tab of the same browser (the same storage)."""
    guard = Guard(server.base)
    contexts = []

    def make(width: int = 1100, height: int = 900):
        context = browser.new_context(viewport={"width": width, "height": height})
        contexts.append(context)
        page = context.new_page()
        guard.watch(page)
        page.set_default_timeout(20000)
        return page

    def tab(page):
        other = page.context.new_page()
        guard.watch(other)
        other.set_default_timeout(20000)
        return other

    make.expected = guard.expected
    make.tab = tab
    yield make
    for context in contexts:
        context.close()
    assert not guard.complaints, guard.complaints


def screenshot(page, name: str, readme: bool = False) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    if readme and os.environ.get("LUDOTHEQUE_UPDATE_SCREENSHOTS") == "1":
        IMAGES.mkdir(exist_ok=True)
        shutil.copy(path, IMAGES / f"{name}.png")
    return path
