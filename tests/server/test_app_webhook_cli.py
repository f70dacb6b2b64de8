"""`ludotheque apps webhook APP_ID --url URL | --off`, as an operator runs
it: the signing secret printed once, never listed; internal addresses and
plain http refused unless the deployment allows them (issue 37)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from service.store.database import migrate
from tests.server.test_players_cli import ludotheque, printed
from tests.support import databases
from tests.support.servers import LiveServer


@pytest.fixture
def server(redis_url: str, tmp_path, monkeypatch) -> Iterator[LiveServer]:
    monkeypatch.setenv("LUDOTHEQUE_OUTBOUND_ALLOW", "")  # the command's own allowances
    url = databases.sqlite_url(tmp_path)
    migrate(url)
    with LiveServer({"REDIS_URL": redis_url, "DATABASE_URL": url}) as live:
        yield live


def test_an_apps_webhook_is_set_with_its_secret_printed_once_and_turned_off(server):
    app_id = printed(ludotheque(server, "apps", "create", "Acme"))["app"]
    url = "https://hooks.example.com/ludotheque"
    set_ = printed(ludotheque(server, "apps", "webhook", app_id, "--url", url))
    assert set_["webhook"] == url
    secret = set_["secret"]
    assert secret.startswith("whsec_")
    operator = server.app.extensions["ludotheque.players"]
    player, _, _ = operator.for_app(app_id, "u1", "Una", False)
    assert operator.webhook_of(player["id"]) == (app_id, url, secret)
    listed = ludotheque(server, "apps", "list").stdout
    assert url in listed and secret not in listed, "the secret is printed once, never listed"
    again = printed(ludotheque(server, "apps", "webhook", app_id, "--url", url))
    assert again["secret"] != secret, "a new URL, a new secret"
    off = ludotheque(server, "apps", "webhook", app_id, "--off")
    assert off.returncode == 0, off.stderr
    assert "secret" not in off.stdout
    assert operator.webhook_of(player["id"]) is None


@pytest.mark.parametrize(
    ("url", "allow"),
    [
        ("https://169.254.169.254/latest", ""),  # the cloud metadata address
        ("https://10.0.0.7/hook", ""),
        ("https://[::ffff:127.0.0.1]/hook", ""),
        ("http://hooks.example.com/", ""),  # plain http, not allowed here
        ("https://10.0.0.7/hook", "127.0.0.0/8"),
    ],
)
def test_a_webhook_the_outbound_rules_refuse_is_not_set(server, url, allow, monkeypatch):
    app_id = printed(ludotheque(server, "apps", "create", "Acme"))["app"]
    monkeypatch.setenv("LUDOTHEQUE_OUTBOUND_ALLOW", allow)
    refused = ludotheque(server, "apps", "webhook", app_id, "--url", url)
    assert refused.returncode != 0
    assert "--url" in refused.stderr
    assert "secret" not in refused.stdout


def test_an_allowed_internal_address_is_set(server, monkeypatch):
    app_id = printed(ludotheque(server, "apps", "create", "Acme"))["app"]
    monkeypatch.setenv("LUDOTHEQUE_OUTBOUND_ALLOW", "http,10.0.0.0/8")
    allowed = ludotheque(server, "apps", "webhook", app_id, "--url", "http://10.1.2.3/hook")
    assert allowed.returncode == 0, allowed.stderr


def test_the_command_wants_a_url_or_off_and_a_known_app(server):
    app_id = printed(ludotheque(server, "apps", "create", "Acme"))["app"]
    assert ludotheque(server, "apps", "webhook", app_id).returncode != 0
    both = ludotheque(server, "apps", "webhook", app_id, "--url", "https://a.example", "--off")
    assert both.returncode != 0
    unknown = ludotheque(server, "apps", "webhook", "0" * 32, "--url", "https://a.example")
    assert unknown.returncode != 0 and "no app" in unknown.stderr
