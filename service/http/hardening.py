"""Answers that give nothing away and take nothing ambiguous.

- A JSON body with a duplicate key is refused (400): parsers disagree on
  which value wins (orjson and Python's json keep the last, others the
  first), so a proxy, a validator and this service could each read another
  request out of the same bytes.
- ``OPTIONS`` on any route is an empty 204 with ``Allow``, never Flask's
  default (an empty 200 labelled text/html). A CORS preflight keeps the
  status and headers that CORS gives it, less that label.
- A seat's token in a URL (``?token=`` or ``?access_token=``, what a page
  with an ``EventSource`` might try) is refused (400 ``token_in_url``), not
  ignored: ignored, it left the page following as a spectator without a
  word. The answer says to use a stream ticket; a token never travels in a
  URL (logs, history and referrers keep URLs). Every spelling is refused
  alike, by meaning: any case (``?Token=``, ``?ACCESS_TOKEN=``),
  percent-encoded (``?%74oken=``), with spaces, brackets, NULs or dashes
  in the name (``token[]``, ``token%00``, ``access-token``,
  ``accessToken``), after a ``;`` as after a ``&``.
- Routing never redirects (``/v1//games`` is 404, not 308 to ``/v1/games``):
  werkzeug's redirects are absolute URLs built from the request's ``Host``
  header, which the client chose, so an answer would send a browser or a
  cache wherever that header said.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import unquote_plus

from flask import Flask, Response, request
from werkzeug.routing import Map

from service.domain.problems import Problem


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise Problem(400, "invalid_request", f"the JSON body repeats the key {key!r}")
            seen.add(key)
    return found


# Built once: ``json.loads(body, object_pairs_hook=...)`` builds a decoder on
# every call, a third of the check's time on an action's body.
CHECKING = json.JSONDecoder(object_pairs_hook=_refuse_duplicates)


def check_unique_keys(body: bytes) -> None:
    """400 when ``body`` is JSON with an object that repeats a key; a body
    that is not JSON at all is left for the route's own parser to refuse.
    (What ``json.loads`` does with bytes: UTF-8, -16 or -32, as detected.)"""
    try:
        CHECKING.decode(body.decode(json.detect_encoding(body), "surrogatepass"))
    except (ValueError, RecursionError):
        return


TOKEN_PARAMETERS = ("token", "accesstoken")  # as names_a_token reads them


def names_a_token(query: bytes) -> bool:
    """Whether a parameter of ``query`` (a raw query string) names a token by
    meaning: its name, percent-decoded, lowercased and with everything but
    letters and digits dropped, is ``token`` or ``accesstoken`` (so
    ``Token``, ``%74oken``, ``token[]``, ``token%00``, ``access-token``,
    ``accessToken``); parameters are split at ``&`` and at ``;``."""
    lowered = query.lower()
    if b"%" not in lowered and b"token" not in lowered:
        return False  # nothing could decode to it (the usual query: no parsing)
    for pair in re.split(r"[&;]", lowered.decode("latin-1")):
        name = unquote_plus(pair.partition("=")[0], encoding="latin-1").lower()
        if re.sub(r"[^a-z0-9]", "", name) in TOKEN_PARAMETERS:
            return True
    return False


def refuse_token_in_url() -> None:
    if request.method == "OPTIONS" or not request.query_string:
        return  # a preflight passes: the request it announces gets the readable 400
    if names_a_token(request.query_string):
        raise Problem(
            400,
            "token_in_url",
            "a seat's token never goes in a URL: send it as 'Authorization: Bearer <token>'; "
            "to follow a seat with an EventSource, exchange the token for a stream ticket "
            "(POST /v1/games/{game}/matches/{id}/stream-tickets) and open the stream URL "
            "it gives (?ticket=...)",
        )


class Routes(Map):
    """The app's URL map, which never redirects. werkzeug redirects a path
    with doubled slashes (``merge_slashes``) and a rule's defaults
    (``redirect_defaults``) to an absolute URL naming the request's
    ``Host``; here such paths are plainly not found (404). Its third kind,
    a rule's path without its trailing slash, cannot happen: no rule ends
    with a slash (a test tries every rule's path with and without one)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.update(merge_slashes=False, redirect_defaults=False)
        super().__init__(*args, **kwargs)


def init_hardening(app: Flask) -> None:
    app.before_request(refuse_token_in_url)

    @app.before_request
    def unique_keys() -> None:
        if request.method in ("POST", "PUT", "PATCH") and request.content_length != 0:
            body = request.get_data(cache=True)
            if body:
                check_unique_keys(body)

    @app.after_request
    def empty_options(response: Response) -> Response:
        if request.method != "OPTIONS":
            return response
        if response.status_code == 200 and "Access-Control-Request-Method" not in request.headers:
            response.status_code = 204
            response.set_data(b"")
        if response.status_code in (200, 204) and not response.get_data():
            del response.headers["Content-Type"]  # an empty answer (a preflight's too) is not HTML
        return response
