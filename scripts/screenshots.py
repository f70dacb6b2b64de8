"""Screenshots of /play for the docs: each game's table mid-match, in French
and in English, written to docs/screenshots/<game>-<lang>.png (1280x800).

    .venv/bin/python scripts/screenshots.py                  # its own server
    .venv/bin/python scripts/screenshots.py --url http://127.0.0.1:8000

Without --url it starts the app with an embedded Redis and a bot worker, as
the browser tests do (the test extra: pip install -e '.[test]'); with --url
the server there must run bot workers. Chromium is Debian's, driven by
Playwright for Python (never `playwright install`). Each match is a seeded
practice deal; seat 0's first legal moves are played through the API, so the
picture needs no text of the page and comes out alike in both languages."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import requests
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.support's servers, when run as a script
OUT = ROOT / "docs" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
GAMES = {  # players, options, seed and how many of seat 0's moves before the picture
    "dekal": ([{"name": "Ada"}, {"bot": "greedy"}], {}, 7, 3),
    "pacal": ([{"name": "Ada"}, {"bot": "greedy"}], {}, 7, 4),
    "gaudi": ([{"name": "Ada"}, {"bot": "greedy"}, {"bot": "random"}], {}, 7, 2),
    "ducale": ([{"name": "Ada"}, {"bot": "greedy"}], {}, 7, 5),
}
LANGS = ("fr", "en")


@contextlib.contextmanager
def own_server() -> Iterator[str]:
    from service.store.embedded import EmbeddedRedis
    from tests.support.servers import LiveServer, bot_workers

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request

    with (
        tempfile.TemporaryDirectory() as folder,
        EmbeddedRedis(Path(folder), persist=False) as redis_url,
        LiveServer({"REDIS_URL": redis_url}) as live,
        bot_workers(live.app, budget_s=0.05),
    ):
        try:
            yield live.base
        finally:  # the server's threads may see Redis go first: no traceback for that
            logging.disable(logging.CRITICAL)


def seat_moves(base: str, game: str, match: str, token: str, moves: int) -> None:
    """Seat 0 plays its first legal action `moves` times (a meld when it can),
    then waits for its turn again."""
    path = f"{base}/v1/games/{game}/matches/{match}"
    auth = {"Authorization": f"Bearer {token}"}
    played = 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        legal = requests.get(f"{path}/legal-actions", headers=auth, timeout=10).json()["actions"]
        if not legal:
            time.sleep(0.1)
            continue
        if played == moves:
            return
        action = next((a for a in legal if a["type"] == "meld"), legal[0])
        requests.post(f"{path}/actions", json=action, headers=auth, timeout=10).raise_for_status()
        played += 1
    raise TimeoutError(f"{game}: seat 0 never got its turn back")


def shoot(base: str, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--headless"])
        for game, (players, options, seed, moves) in GAMES.items():
            body = {"players": players, "options": options, "seed": seed}
            created = requests.post(f"{base}/v1/games/{game}/matches", json=body, timeout=10)
            created.raise_for_status()
            match, token = created.json()["id"], created.json()["seats"][0]["token"]
            seat_moves(base, game, match, token, moves)
            for lang in LANGS:
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                held = f"JSON.stringify({{0: '{token}'}})"  # seat 0, as /play keeps it
                context.add_init_script(
                    f"localStorage.setItem('ludotheque:lang', '{lang}');"
                    f"localStorage.setItem('ludotheque:{match}', {held});"
                )
                page = context.new_page()
                page.goto(f"{base}/play#match/{game}/{match}")
                page.locator(".board .legal, .board [aria-pressed]").first.wait_for(timeout=20000)
                if game == "gaudi":  # a tile picked: where it may go
                    page.locator("button.tile.legal").first.click()
                    page.locator("g.spot").first.wait_for()
                elif game == "ducale":  # drawn, and a card picked: what it may do
                    draw = page.locator(".board button.card.down.legal")
                    if draw.count():
                        draw.click()
                        page.locator(".board .row button.card.fresh").wait_for()
                    page.locator(".board .row button.card[aria-pressed]").last.click()
                    page.locator(".choices button").first.wait_for()
                page.evaluate("scrollTo(0, 0)")  # a click scrolls to what it clicks
                page.wait_for_timeout(1700)  # the marks of the last change gone
                path = out / f"{game}-{lang}.png"
                page.screenshot(path=str(path))
                written.append(path)
                context.close()
        browser.close()
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running server (with bot workers); default: start one")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    with contextlib.nullcontext(args.url.rstrip("/")) if args.url else own_server() as base:
        for path in shoot(base, args.out):
            print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


if __name__ == "__main__":
    main()
