"""The floor any Ludothèque request must pay, as a bare Flask app (not a test).

``bench.load`` serves it under the same gunicorn configuration as the
service (``service/server/gunicorn_conf.py``, gevent workers) and the same Redis
client settings (``service.store.matches.connect``), so that the only difference
left is the work Ludothèque does on top:

- ``POST /rmw/<n>``: one read-modify-write of a 2 KB JSON value in a single
  Lua round trip (the version bumped, the value written back and returned),
  the floor of playing an action;
- ``GET /get/<n>``: one Redis GET of that value, the floor of reading a match.

Run it as ``gunicorn --config service/server/gunicorn_conf.py 'bench.baseline_app:create_app()'``
with ``REDIS_URL`` set.
"""

from __future__ import annotations

import os

import orjson
from flask import Flask, Response

from service.store.matches import connect

VALUE_BYTES = 2048

# Decode, bump the version, encode and write back: the same read, check and
# write that an action's commit does, in one round trip.
READ_MODIFY_WRITE = """
local raw = redis.call('GET', KEYS[1])
if not raw then
  return redis.error_reply('missing ' .. KEYS[1])
end
local value = cjson.decode(raw)
value['version'] = value['version'] + 1
local encoded = cjson.encode(value)
redis.call('SET', KEYS[1], encoded)
return encoded
"""


def key(n: int) -> str:
    return f"bench:{{{n}}}"


def initial_value(n: int) -> bytes:
    """A 2 KB JSON document shaped a little like a match."""
    value = {"id": n, "version": 1, "seats": [{"seat": 0}, {"seat": 1}], "padding": ""}
    filler = VALUE_BYTES - len(orjson.dumps(value))
    value["padding"] = "x" * filler
    return orjson.dumps(value)


def create_app(config: dict | None = None) -> Flask:
    app = Flask(__name__)
    app.config.update(config or {})
    url = app.config.get("REDIS_URL") or os.environ["REDIS_URL"]
    client = connect(url)
    rmw = client.register_script(READ_MODIFY_WRITE)

    @app.post("/rmw/<int:n>")
    def read_modify_write(n: int) -> Response:
        return Response(rmw(keys=[key(n)]), mimetype="application/json")

    @app.get("/get/<int:n>")
    def get(n: int) -> Response:
        value = client.get(key(n))
        if value is None:
            return Response(b'{"code":"not_found"}', status=404, mimetype="application/json")
        return Response(value, mimetype="application/json")

    return app
