"""How the API's blueprints read a request's arguments: webargs' parser, with
the two differences the API needs; and how they document a route without
wrapping its view once more. Every blueprint with arguments uses
``Blueprint`` from here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import flask_smorest
from flask import request
from marshmallow import Schema
from webargs import core
from webargs.flaskparser import FlaskParser

# What a query string may load to and be shared between requests: scalars,
# and, from a query string that is there, no text the client chose (a
# stream ticket, a cursor: never kept).
SCALARS = (type(None), bool, int, float, str)
NUMBERS = (type(None), bool, int, float)
KEPT = 256  # query strings loaded, per parser (then forgotten, to start again)


class Parser(FlaskParser):
    """webargs' parser, with two differences.

    A JSON body is read whatever its declared Content-Type, as an action's
    always was: ``curl -d '{...}'`` declares a form, and webargs, which reads
    JSON only under a JSON type, made creation answer 422 "players: Missing
    data" for a body that was there. A body that is not JSON is a 400.

    A query string is loaded once per schema: most views and actions send
    none, or the same few (``?legal_actions=true&wait=30``), and loading one
    (a MultiDict, the schema's fields, an exception raised and caught per
    absent parameter) cost a view a tenth of its time. What it loaded is
    kept for the next request with the same query string, unless it holds
    anything a view could change or any text the client sent; a query
    string the schema refuses is refused every time."""

    def __init__(self) -> None:
        super().__init__()
        self.loaded: dict[tuple[Schema, bytes], dict[str, Any]] = {}

    def parse(self, argmap: Any, req: Any = None, *, location: str | None = None, **kwargs: Any):
        if location != "query" or not isinstance(argmap, Schema) or kwargs.get("validate"):
            return super().parse(argmap, req, location=location, **kwargs)
        query = (req or request).query_string
        loaded = self.loaded.get((argmap, query))
        if loaded is None:
            loaded = super().parse(argmap, req, location=location, **kwargs)
            shared = NUMBERS if query else SCALARS
            if not isinstance(loaded, dict) or any(
                not isinstance(value, shared) for value in loaded.values()
            ):
                return loaded
            if len(self.loaded) >= KEPT:
                self.loaded.clear()  # (threads may share the parser: no partial eviction)
            self.loaded[argmap, query] = loaded
        return dict(loaded)

    def _raw_load_json(self, req: Any) -> Any:
        data = req.get_data(cache=True)
        return core.parse_json(data) if data else core.missing


def documenting_only(decorator: Callable[[Callable], Callable]) -> Callable[[Callable], Callable]:
    """``decorator``, one of flask-smorest's that only document a view
    (``doc``, ``alt_response``), giving the view itself the documentation
    it would give its wrapper: that wrapper did nothing but call the view,
    asking Flask's ``ensure_sync`` again, on every request."""

    def document(view: Callable) -> Callable:
        view._apidoc = decorator(view)._apidoc  # type: ignore[attr-defined]
        return view

    return document


class Blueprint(flask_smorest.Blueprint):
    ARGUMENTS_PARSER = Parser()

    @staticmethod
    def doc(**kwargs: Any) -> Callable[[Callable], Callable]:
        return documenting_only(flask_smorest.Blueprint.doc(**kwargs))

    def alt_response(self, *args: Any, **kwargs: Any) -> Callable[[Callable], Callable]:
        return documenting_only(super().alt_response(*args, **kwargs))
