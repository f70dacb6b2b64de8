"""/play over plain HTTP: every file under the strict policy, nothing outside
its folder, small enough, and all of it shipped as package data."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from service.http.docs import CONTENT_SECURITY_POLICY
from service.http.play import ASSETS

ROOT = Path(__file__).parents[2]
FILES = sorted(p.relative_to(ASSETS).as_posix() for p in ASSETS.rglob("*") if p.is_file())


def test_the_page_and_every_file_it_loads_come_with_the_strict_policy(live):
    page = live.http.get(live.url("/play"))
    assert page.status_code == 200 and page.headers["Content-Type"].startswith("text/html")
    assert page.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert "<script>" not in page.text and "style=" not in page.text  # no inline code
    for name in FILES:
        answer = live.http.get(live.url(f"/play/{name}"))
        assert answer.status_code == 200, name
        assert answer.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
        assert answer.headers["X-Content-Type-Options"] == "nosniff"
        assert answer.content == (ASSETS / name).read_bytes()


def test_the_page_loads_nothing_from_another_host():
    for name in FILES:
        text = (ASSETS / name).read_text()
        assert not re.search(
            r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/", text.replace("www.w3.org/2000/svg", "")
        ), name
        assert "innerHTML" not in text and "eval(" not in text, name


@pytest.mark.parametrize(
    "path",
    [
        "/play/../service/app.py",
        "/play/%2e%2e/play.py",
        "/play/games/../../docs.py",
        "/play/nothing.js",
        "/play/games",
    ],
)
def test_nothing_outside_the_page_s_folder_is_served(live, path):
    assert live.http.get(live.url(path)).status_code == 404


def test_everything_together_weighs_under_300_kb():
    total = sum((ASSETS / name).stat().st_size for name in FILES)
    assert total < 300 * 1024, total


def test_every_file_is_package_data_so_a_non_editable_install_has_it():
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["service"]
    for name in FILES:
        assert any(Path("static/play", name).match(glob) for glob in globs), name
