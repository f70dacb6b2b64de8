"""How the API's blueprints read a request's arguments: webargs' parser, with
the two differences the API needs. Every blueprint with arguments uses
``Blueprint`` from here."""

from __future__ import annotations

from typing import Any

import flask_smorest
from flask import request
from marshmallow import Schema
from webargs import core
from webargs.flaskparser import FlaskParser

# What an empty query string may load to and be shared between requests.
SCALARS = (type(None), bool, int, float, str)


class Parser(FlaskParser):
    """webargs' parser, with two differences.

    A JSON body is read whatever its declared Content-Type, as an action's
    always was: ``curl -d '{...}'`` declares a form, and webargs, which reads
    JSON only under a JSON type, made creation answer 422 "players: Missing
    data" for a body that was there. A body that is not JSON is a 400.

    An empty query string is loaded once per schema: most views and actions
    send none, and loading one (an exception raised and caught per absent
    parameter) cost a view a tenth of its time. A query string that is there
    is parsed as always."""

    def __init__(self) -> None:
        super().__init__()
        self.empty: dict[Schema, dict[str, Any]] = {}

    def parse(self, argmap: Any, req: Any = None, *, location: str | None = None, **kwargs: Any):
        plain = location == "query" and isinstance(argmap, Schema) and not kwargs.get("validate")
        if not plain or (req or request).query_string:
            return super().parse(argmap, req, location=location, **kwargs)
        loaded = self.empty.get(argmap)
        if loaded is None:
            loaded = super().parse(argmap, req, location=location, **kwargs)
            if not (
                isinstance(loaded, dict) and all(isinstance(v, SCALARS) for v in loaded.values())
            ):
                return loaded  # something a view could change: not shared
            self.empty[argmap] = loaded
        return dict(loaded)

    def _raw_load_json(self, req: Any) -> Any:
        data = req.get_data(cache=True)
        return core.parse_json(data) if data else core.missing


class Blueprint(flask_smorest.Blueprint):
    ARGUMENTS_PARSER = Parser()
