"""``/play``: the reference front end, static files installed with the package.

HTML, CSS and ES modules from ``service/static/play`` (no build step). The
page talks to the public API only, as any third-party page would, loads
nothing from another host and runs no inline code, so it works offline and
under the strict Content-Security-Policy sent with every file.
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response, abort, request

from service.http.docs import HEADERS

ASSETS = Path(__file__).parent.parent / "static" / "play"
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
    # Read whole (the files are small): no file handle is left open when a browser
    # drops the request half way.
    response = Response(path.read_bytes(), mimetype=TYPES[path.suffix], headers=HEADERS)
    response.cache_control.public = True
    response.cache_control.max_age = 300
    response.add_etag()
    return response.make_conditional(request)


@play.get("/play")
def page() -> Response:
    return _send("index.html")


@play.get("/play/<path:name>")
def asset(name: str) -> Response:
    return _send(name)
