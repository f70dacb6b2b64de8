"""/play in French and in English (issue 38, point 2), in Chromium: every
screen walked in both languages, chosen by the browser's locale and by the
switch in the header, which is remembered; no text of the other language is
left, in the visible text nor in labels, titles and placeholders."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import requests

from tests.browser.playkit import Guard

# The app with a database (the guest player, the ranked pages) and bots beside it.
from tests.browser.test_players import server_fixture  # noqa: F401
from tests.support.servers import LiveServer

FR_JS = Path(__file__).parents[2] / "service" / "static" / "play" / "fr.js"
GAMES = ["dekal", "pacal", "gaudi", "ducale"]
# Words that only English has, and words that only French has (the games' own
# French terms, like "manche", are the English page's too).
ENGLISH = re.compile(
    r"\b(the|and|with|your|you|seats?|plays?|turn|cards|draws|takes|waiting|players|"
    r"replay|back|lobby|refresh|create|rating|quick|round|over|tiles?|hand|none)\b",
    re.IGNORECASE,
)
FRENCH = re.compile(
    r"\b(le|la|les|des|une|vous|votre|partie|joueurs?|pioche|défausse|dalles?|retour|"
    r"créer|avec|revoir|aucune?|ligne|colonne|tour)\b",
    re.IGNORECASE,
)


def french() -> dict[str, str]:
    """fr.js's FR: English text -> French text."""
    source = FR_JS.read_text()
    pairs = re.findall(r'^\s*"((?:[^"\\]|\\.)*)":\s*\n?\s*"((?:[^"\\]|\\.)*)",', source, re.M)
    assert len(pairs) > 300, "fr.js was not read"
    return {json.loads(f'"{en}"'): json.loads(f'"{fr}"') for en, fr in pairs}


def fragments(text: str) -> list[str]:
    """The fixed parts of a text of two words or more, placeholders apart."""
    parts = [p.strip(" .,:;()") for p in re.split(r"\{\w+\}", text)]
    return [p for p in parts if len(p.split()) >= 2]


def shown(page) -> str:
    """What a person reads or hears on the page: its visible text, its title and
    every label, title and placeholder, but not a control that names its own
    language (the switch)."""
    return page.evaluate(
        """() => {
          const lang = document.documentElement.lang;
          const other = (n) => n.closest("[lang]") && n.closest("[lang]").lang !== lang;
          const out = [document.title];
          const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
          for (let n = walker.nextNode(); n; n = walker.nextNode()) {
            const box = n.parentElement;
            const said = n.textContent.trim();
            if (said && !other(box) && box.checkVisibility()) out.push(said);
          }
          const labelled = "[aria-label], [title], [placeholder], option";
          for (const n of document.querySelectorAll(labelled)) {
            if (other(n)) continue;
            for (const key of ["aria-label", "title", "placeholder"]) {
              if (n.getAttribute(key)) out.push(n.getAttribute(key));
            }
            if (n.tagName === "OPTION") out.push(n.textContent);
          }
          return out.join("\\n");
        }"""
    )


def check(page, lang: str, where: str) -> None:
    assert page.evaluate("document.documentElement.lang") == lang, where
    text = shown(page)
    words = [w for w in re.split(r"\s+", text) if not w.startswith(("http", "v1/"))]
    text = " ".join(words).replace("Zoé", "").replace("Ludothèque", "")
    assert len(text) > 200, f"{where}: too little read: {text}"
    fr = french()
    if lang == "fr":
        left = [en for en, said in fr.items() if said != en for f in fragments(en) if f in text]
        assert not left, f"{where}: English left in French: {left}\n{text}"
        assert not ENGLISH.search(text), f"{where}: {ENGLISH.search(text)[0]!r} in\n{text}"
    else:
        left = [
            said for en, said in fr.items() if said != en for f in fragments(said) if f in text
        ]
        assert not left, f"{where}: French left in English: {left}\n{text}"
        assert not FRENCH.search(text), f"{where}: {FRENCH.search(text)[0]!r} in\n{text}"


def matches(server: LiveServer) -> dict[str, dict]:
    """Per game a match of Ada against a bot, a few moves in; one finished."""
    made = {}
    for game in GAMES:
        body = {"players": [{"name": "Ada"}, {"bot": "greedy"}], "seed": 5}
        made[game] = requests.post(f"{server.base}/v1/games/{game}/matches", json=body, timeout=10)
        made[game] = made[game].json()
    body = {"players": [{"name": "Ada"}, {"bot": "random"}]}
    over = requests.post(f"{server.base}/v1/games/pacal/matches", json=body, timeout=10).json()
    token = over["seats"][0]["token"]
    requests.post(
        f"{server.base}/v1/games/pacal/matches/{over['id']}/resign",
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    )
    made["over"] = over
    body = {"players": [{"name": "Ada"}, {}]}
    made["open"] = requests.post(f"{server.base}/v1/games/dekal/matches", json=body, timeout=10)
    made["open"] = made["open"].json()
    return made


def walk(page, server: LiveServer, made: dict, lang: str) -> None:
    """Every screen, checked in ``lang``."""
    base = f"{server.base}/play"

    def at(hash_: str, ready) -> None:
        page.goto(f"{base}#{hash_}")
        ready.wait_for()
        page.wait_for_timeout(300)  # the lists, the quick play, the deal's check
        check(page, lang, hash_ or "lobby")

    lobby = {"fr": "Nouvelle table", "en": "New table"}[lang]
    at("", page.get_by_role("heading", name=lobby))
    page.locator("#game").select_option("gaudi")  # other options, in words
    check(page, lang, "lobby, Gaudí's options")
    at(f"join/dekal/{made['open']['id']}/1", page.locator("h2", has_text="Dékal"))
    for game in GAMES:
        match = made[game]
        held = json.dumps({"0": match["seats"][0]["token"]})
        page.evaluate(f"localStorage.setItem('ludotheque:{match['id']}', '{held}')")
        at(f"match/{game}/{match['id']}", page.locator("h2 small", has_text=match["id"][:8]))
        page.locator(".log li").first.wait_for()
    over = made["over"]
    page.goto(f"{base}#match/pacal/{over['id']}")
    verdict = page.locator(".outcome .verdict").filter(has_text=re.compile("verified|vérifiée"))
    verdict.wait_for()  # the deal checked: its words are the last to come
    check(page, lang, "a finished match")
    at(f"replay/pacal/{over['id']}", page.locator(".step-text .counter"))
    page.keyboard.press("End")
    page.locator(".hands").wait_for()
    check(page, lang, "replay, the end")
    at(
        "leaderboard/dekal",
        page.locator("h2", has_text=re.compile(r"Dékal : classement$|leaderboard$")),
    )
    at("leaderboard/dekal/bots", page.locator("h2", has_text=re.compile("bots")))
    me = page.evaluate("JSON.parse(localStorage.getItem('ludotheque:player')).id")
    at(f"player/{me}", page.get_by_role("heading", name="Zoé"))
    at("match/dekal/0123456789abcdef0123456789abcdef", page.get_by_role("alert"))


@pytest.fixture(scope="module")
def made(server) -> dict:
    return matches(server)


def browser_page(browser, server, locale: str, guard: Guard):
    context = browser.new_context(locale=locale, viewport={"width": 1100, "height": 900})
    context.add_init_script("localStorage.setItem('ludotheque:name', 'Zoé')")  # the guest's name
    page = context.new_page()
    guard.watch(page)
    page.set_default_timeout(20000)
    page.goto(f"{server.base}/play")
    return page


@pytest.mark.parametrize("locale", ["fr-FR", "en-GB"])
def test_every_screen_follows_the_browsers_language(browser, server, made, locale):
    guard = Guard(server.base)
    guard.expected.append("status of 404")  # the match that does not exist
    page = browser_page(browser, server, locale, guard)
    walk(page, server, made, locale[:2])
    page.context.close()
    assert not guard.complaints, guard.complaints


def test_the_switch_changes_the_language_at_once_and_is_remembered(browser, server, made):
    guard = Guard(server.base)
    guard.expected.append("status of 404")
    page = browser_page(browser, server, "en-US", guard)
    page.goto(f"{server.base}/play#leaderboard/dekal")
    page.get_by_role("columnheader", name="Rank").wait_for()
    page.get_by_role("button", name="Français").focus()  # the keyboard reaches it
    page.keyboard.press("Enter")
    page.get_by_role("columnheader", name="Rang").wait_for()  # the view, redrawn at once
    assert page.get_by_role("button", name="Français").get_attribute("lang") == "fr"
    assert page.get_by_role("button", name="Français").get_attribute("aria-pressed") == "true"
    page.reload()
    page.get_by_role("columnheader", name="Rang").wait_for()
    walk(page, server, made, "fr")
    page.get_by_role("button", name="English").click()
    page.locator("html[lang=en]").wait_for()
    page.reload()
    walk(page, server, made, "en")
    page.context.close()
    assert not guard.complaints, guard.complaints


def given_to_t(source: str) -> set[str]:
    """The string literals written in the arguments of t(), tr() and tn() calls
    (not those compared with ===, nor joiners and punctuation)."""
    texts = set()
    source = re.sub(r"^\s*//.*$", "", source, flags=re.M)  # the comments' examples apart
    for call in re.finditer(r"\b(?:t|tr|tn)\(", source):
        depth, at = 1, call.end()
        while depth and at < len(source):
            char = source[at]
            if char == '"':
                end = at + 1
                while source[end] != '"':
                    end += 2 if source[end] == "\\" else 1
                before = source[call.end() : at].rstrip()
                literal = source[at + 1 : end]
                if not before.endswith(("===", "!==", "join(")) and re.search("[A-Za-z]", literal):
                    texts.add(json.loads(f'"{literal}"'))
                at = end
            elif char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
            at += 1
    return texts


def test_every_text_given_to_t_has_its_french():
    """A text written for the page has its French in fr.js (fails at once, before
    any screen shows it)."""
    play = FR_JS.parent
    sources = [p for p in [*play.glob("*.js"), *play.glob("games/*.js")] if p.name != "fr.js"]
    texts = set().union(*(given_to_t(p.read_text()) for p in sources))
    assert len(texts) > 300, "the page's texts were not read"
    assert not texts - set(french()), sorted(texts - set(french()))
