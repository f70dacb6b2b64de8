"""HTTP caching that is right for every viewer of a match.

A match looks different to each seat and to a spectator, and which one a
request is depends on its ``Authorization`` header alone. So every answer on
a match's routes is ``Cache-Control: private, no-cache`` (a browser may keep
it, but asks again before reusing it; a shared cache never keeps it) with
``Vary: Authorization``; the answers that hand out a seat's token (create,
join) are ``no-store``. The ``ETag`` of a match names its version and the
viewer (``"7-s0"``, ``"7-s1"``, ``"7-spectator"``), so that no cache can
revalidate one viewer's copy with another's tag; the viewer part is the
seat number the caller already knows, nothing drawn from its token.
"""

from __future__ import annotations

from typing import Any

from flask import Flask, Response, request

from engines import GAMES
from service.domain.problems import Problem

PRIVATE = "private, no-cache"
SECRET = "no-store"

# The contract of every answer that depends on the caller's token (OpenAPI).
VIEWER_HEADERS: dict[str, Any] = {
    "Cache-Control": {
        "description": f"`{PRIVATE}`: the answer depends on the caller's token",
        "schema": {"type": "string"},
    },
    "Vary": {
        "description": "`Authorization`: each viewer has a view of its own",
        "schema": {"type": "string"},
    },
}
ETAG_HEADER: dict[str, Any] = {
    "ETag": {
        "description": 'the version and the viewer, e.g. `"7-s0"` (seat 0), `"7-spectator"`; '
        "send it back in `If-None-Match` (304 when unchanged, once the token is checked) or "
        "in `If-Match`",
        "schema": {"type": "string"},
    }
}


def viewer_tag(seat: int | None) -> str:
    return "spectator" if seat is None else f"s{seat}"


def viewer_etag(version: int, seat: int | None) -> str:
    """The entity tag of ``version`` as ``seat`` (None: a spectator) sees it."""
    return f'"{version}-{viewer_tag(seat)}"'


def names_etag(header: str | None, tag: str) -> bool:
    """Whether an ``If-None-Match`` value names ``tag`` (weakly compared) or is ``*``."""
    if header is None:
        return False
    wanted = tag.strip('"')
    given = {t.strip().removeprefix("W/").strip('"') for t in header.split(",")}
    return "*" in given or wanted in given


def request_header(name: str) -> str | None:
    """``request.headers.get(name)``, read from the WSGI environ: werkzeug
    raises and catches an HTTP exception for each header that is absent, as
    ``If-Match``, ``If-None-Match``, ``Idempotency-Key`` and ``Origin`` are
    on most requests."""
    return request.environ.get("HTTP_" + name.upper().replace("-", "_"))


def if_match_version() -> int | None:
    """The version ``If-Match`` names: ``"7"``, ``7``, ``W/"7"`` or an ETag
    echoed back as it came, ``"7-s0"`` (whichever viewer it names)."""
    raw = request_header("If-Match")
    if raw is None:
        return None
    tag = raw.strip().removeprefix("W/").strip('"')
    number, dash, viewer = tag.partition("-")
    if dash and not (viewer.isascii() and viewer.isalnum() and len(viewer) <= 16):
        number = ""
    if not (number.isascii() and number.isdigit()) or len(number) > 18:
        raise Problem(400, "invalid_request", 'If-Match must name a version, like "7"')
    return int(number)


def response_header(response: Response, name: str) -> str | None:
    """``response.headers.get(name)``, without the exception werkzeug raises
    and catches for a header the answer lacks (most lack Cache-Control)."""
    wanted = name.lower()
    for key, value in response.headers:
        if key.lower() == wanted:
            return value
    return None


def put_headers(response: Response, values: dict[str, str]) -> None:
    """Set each header of ``values`` on ``response``, appending the ones it
    does not have yet (werkzeug's ``headers[name] = value`` scans and
    rewrites the list, and its ``get`` raises for an absent header)."""
    present = {name.lower() for name, _ in response.headers}
    for name, value in values.items():
        if name.lower() in present:
            response.headers.set(name, value)
        else:
            response.headers.add(name, value)


def add_vary(response: Response, name: str) -> None:
    """Add ``name`` to the answer's ``Vary`` (werkzeug's ``response.vary``
    parses the header into a set and writes it back on every change)."""
    current = ", ".join(response.headers.getlist("Vary"))
    if not current:
        response.headers.add("Vary", name)
    elif name.lower() not in {value.strip().lower() for value in current.split(",")}:
        response.headers.set("Vary", f"{current}, {name}")


def init_caching(app: Flask) -> None:
    @app.after_request
    def per_viewer(response: Response) -> Response:
        if request.blueprint in GAMES:
            # a route may say its answer is the same for everyone (a finished
            # match's record); any other answer is private
            if not (response_header(response, "Cache-Control") or "").startswith("public"):
                hands_out_token = request.method == "POST" and response.status_code == 201
                put_headers(response, {"Cache-Control": SECRET if hands_out_token else PRIVATE})
            add_vary(response, "Authorization")
        return response
