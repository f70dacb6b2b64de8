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

import json
import os
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests

from tests.support.servers import LiveServer, bot_workers

ARTIFACTS = Path(__file__).with_name("artifacts")
IMAGES = Path(__file__).parents[2] / "docs" / "images"


@pytest.fixture(scope="module", name="server")
def server_fixture(module_redis: str) -> Iterator[LiveServer]:
    with LiveServer({"REDIS_URL": module_redis}) as live, bot_workers(live.app, budget_s=0.05):
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
    """new_page(width=1100, height=900, **options): a page in a browser of its
    own (options for Playwright's new_context: bypass_csp, reduced_motion...);
    new_page.tab(page): another tab of the same browser (the same storage)."""
    guard = Guard(server.base)
    contexts = []

    def make(width: int = 1100, height: int = 900, **options):
        context = browser.new_context(viewport={"width": width, "height": height}, **options)
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


def sit_at_seat_0(page, base: str, game: str, body: dict) -> tuple[str, str]:
    """A match made through the API (``body``: players, seed...), opened in
    ``page`` as the browser holding seat 0: its id and seat 0's token."""
    created = requests.post(f"{base}/v1/games/{game}/matches", json=body, timeout=10)
    assert created.status_code == 201, created.text
    match_id, token = created.json()["id"], created.json()["seats"][0]["token"]
    held = json.dumps({"0": token})
    page.add_init_script(f"localStorage.setItem('ludotheque:{match_id}', '{held}')")
    page.goto(f"{base}/play#match/{game}/{match_id}")
    return match_id, token


# axe-core, from the npm registry: `npm ci --prefix tests/browser/axe`.
AXE = Path(__file__).with_name("axe") / "node_modules" / "axe-core" / "axe.min.js"
AXE_INSTALL = "npm ci --prefix tests/browser/axe"


def require_axe() -> Path:
    """axe-core's script; skips without it (fails under LUDOTHEQUE_REQUIRE_AXE)."""
    if AXE.exists():
        return AXE
    message = f"axe-core is not installed: run `{AXE_INSTALL}`"
    if os.environ.get("LUDOTHEQUE_REQUIRE_AXE"):
        pytest.fail(message + " (LUDOTHEQUE_REQUIRE_AXE is set)")
    pytest.skip(message)


def audit(page, screen: str) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now,
    one line each: the screen, the rule, its help and the nodes it found.
    The page's context needs bypass_csp=True (axe is injected inline)."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.add_script_tag(path=str(require_axe()))
    found = page.evaluate(
        """() => axe.run(document, { resultTypes: ["violations"] }).then((r) =>
            r.violations.filter((v) => ["serious", "critical"].includes(v.impact)).map((v) => ({
              id: v.id, impact: v.impact, help: v.help,
              nodes: v.nodes.map((n) => `${n.target.join(" ")} ${n.html.slice(0, 160)} :: `
                + n.failureSummary.replace(/\\s+/g, " ")),
            })))"""
    )
    return [
        f"{screen}: {v['id']} ({v['impact']}) {v['help']}\n    " + "\n    ".join(v["nodes"][:8])
        for v in found
    ]
