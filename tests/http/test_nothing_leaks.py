"""Nothing internal leaks (issue 15, point 7): readiness says only ready or
not, /metrics can leave the API's address, /docs runs from the package's own
files under a strict Content-Security-Policy, a JSON body with a duplicate
key is refused, and OPTIONS is an empty 204, never HTML."""

from __future__ import annotations

import logging
import re

import pytest

from service.app import create_app
from service.http.docs import ASSETS
from tests.support.problems import assert_problem
from tests.support.servers import STORE_DOWN


def test_readiness_says_only_not_ready_and_logs_why(caplog, live_server):
    down = live_server(REDIS_URL=STORE_DOWN)
    with caplog.at_level(logging.WARNING, logger="service.http.health"):
        answer = down.http.get(down.url("/readyz"))
    assert answer.status_code == 503 and answer.json()["detail"] == "not ready"
    assert "127.0.0.1" not in answer.text and "6379" not in answer.text
    assert "Error" not in answer.text and "refused" not in answer.text.lower()
    logged = [r for r in caplog.records if r.name == "service.http.health"]
    assert logged and logged[0].exc_info is not None  # the cause, for the operator


def test_metrics_bind_takes_metrics_off_the_api(redis_url):
    served_apart = create_app({"REDIS_URL": redis_url, "METRICS_BIND": "127.0.0.1:9100"})
    assert served_apart.test_client().get("/metrics").status_code == 404
    served_here = create_app({"REDIS_URL": redis_url})
    assert served_here.test_client().get("/metrics").status_code == 200


def test_docs_page_loads_only_its_own_files_under_a_strict_policy(live):
    page = live.http.get(live.url("/docs"))
    assert page.status_code == 200 and page.headers["Content-Type"].startswith("text/html")
    policy = page.headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert "http" not in page.text  # no CDN, no other host
    assert not re.search(r"<script>|<script [^>]*>[^<]", page.text)  # no inline script
    for link in re.findall(r'(?:src|href)="([^"]+)"', page.text):
        asset = live.http.get(live.url("/" + link))
        assert asset.status_code == 200, link
        assert asset.headers["Content-Security-Policy"] == policy
        name = link.rsplit("/", 1)[1]
        if (ASSETS / name).exists():
            assert asset.content == (ASSETS / name).read_bytes()  # the package's own file
    assert "openapi.json" in live.http.get(live.url("/docs/start.js")).text
    for outside in ("LICENSE", "..%2Fdist%2Findex.css", "oauth2-redirect.html"):
        assert live.http.get(live.url("/docs/" + outside)).status_code == 404


def test_docs_render_in_chromium_offline_without_breaking_the_policy(live, browser):
    page = browser.new_page()
    try:
        complaints: list[str] = []
        page.on("console", lambda m: m.type == "error" and complaints.append(m.text))
        page.on("pageerror", lambda e: complaints.append(str(e)))
        elsewhere: list[str] = []

        def only_here(route):
            if route.request.url.startswith(live.base):
                route.continue_()
            else:  # offline: nothing outside the server answers
                elsewhere.append(route.request.url)
                route.abort()

        page.route("**/*", only_here)
        page.goto(live.url("/docs"))
        page.get_by_text("/v1/games/dekal/matches/{match_id}/actions").first.wait_for(
            timeout=20000
        )
        assert page.title() == "Ludothèque API"
        assert not complaints and not elsewhere, (complaints, elsewhere)
    finally:
        page.close()


@pytest.mark.parametrize(
    "body",
    [
        '{"players": [{"name": "A"}, {"name": "B"}], "players": [{"name": "C"}]}',
        '{"players": [{"name": "A", "name": "B"}, {"name": "C"}]}',
        '{"players": [{"name": "A"}, {"name": "B"}], "options": {"x": 1, "x": 2}}',
        # the same key, spelt with an escape: the decoded keys are compared
        '{"players": [{"name": "A", "\\u006eame": "B"}, {"name": "C"}]}',
    ],
)
def test_a_json_body_with_a_duplicate_key_is_refused_with_400(api, body):
    answer = api.http.post(
        f"{api.base}/v1/games/dekal/matches",
        data=body,
        headers={"Content-Type": "application/json"},
    )
    assert "repeats" in assert_problem(answer, 400, "invalid_request")["detail"]


def test_an_action_with_a_duplicate_key_is_refused_before_it_is_played(api):
    created = api.create("dekal", {"players": [{"name": "A"}, {"name": "B"}]}).json()
    token = created["seats"][0]["token"]
    action = api.legal("dekal", created["id"], token).json()["actions"][0]
    raw = '{"type": "' + action["type"] + '", "type": "' + action["type"] + '"}'
    answer = api.http.post(
        f"{api.base}/v1/games/dekal/matches/{created['id']}/actions",
        data=raw,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    assert_problem(answer, 400, "invalid_request")
    assert api.get("dekal", created["id"]).json()["version"] == created["version"]


def test_options_on_every_route_is_an_empty_204(live):
    paths = {
        re.sub(r"<(?:int:)?(\w+)>", lambda m: "0" if "int:" in m[0] else "0" * 32, rule.rule)
        for rule in live.app.url_map.iter_rules()
    }
    assert len(paths) > 10
    for path in sorted(paths):
        answer = live.http.options(live.url(path))
        assert answer.status_code == 204, path
        assert answer.content == b"" and "Content-Type" not in answer.headers, path
        assert "OPTIONS" in answer.headers["Allow"], path


def test_a_preflight_without_cors_is_not_html_either(live):
    answer = live.http.options(
        live.url("/v1/games"),
        headers={"Origin": "https://play.example", "Access-Control-Request-Method": "GET"},
    )
    assert answer.content == b"" and "Content-Type" not in answer.headers
