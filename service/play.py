"""``/play``: the reference front end, static files installed with the package.

HTML, CSS and ES modules from ``service/static/play`` (no build step). The
page talks to the public API only, as any third-party page would, loads
nothing from another host and runs no inline code, so it works offline and
under the strict Content-Security-Policy sent with every file.
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response, abort, send_from_directory

from service.docs import HEADERS

ASSETS = Path(__file__).with_name("static") / "play"
TYPES = {
    ".html": "text/html",
    ".css": "text/css",
    ".js": "text/javascript",
    ".svg": "image/svg+xml",
}

play = Blueprint("play", __name__)


def _send(name: str) -> Response:
    path = ASSETS / name
    if path.suffix not in TYPES or not path.is_file() or ASSETS not in path.resolve().parents:
        abort(404)
    response = send_from_directory(ASSETS, name, mimetype=TYPES[path.suffix], max_age=300)
    response.headers.update(HEADERS)
    return response


@play.get("/play")
def page() -> Response:
    return _send("index.html")


@play.get("/play/<path:name>")
def asset(name: str) -> Response:
    return _send(name)
