"""``/docs``: Swagger UI, from files installed with the package.

The files come from the pinned ``flask-swagger-ui`` distribution (its
``dist`` folder, Swagger UI itself; its blueprint is not used, as its page
has an inline script). The page loads nothing from elsewhere and runs no
inline code, so it works offline and under the strict Content-Security-Policy
sent with it. Links are relative, so the page also works under a path prefix.
"""

from __future__ import annotations

from pathlib import Path

import flask_swagger_ui
from flask import Blueprint, Response, abort, send_from_directory

ASSETS = Path(flask_swagger_ui.__file__).with_name("dist")
# The files the page uses: nothing else of the folder is served.
SERVED = {
    "swagger-ui.css",
    "swagger-ui-bundle.js",
    "favicon-32x32.png",
    "favicon-16x16.png",
}

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Ludothèque API</title>
<link rel="stylesheet" href="docs/swagger-ui.css">
<link rel="icon" type="image/png" href="docs/favicon-32x32.png" sizes="32x32">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/start.js"></script>
</body>
</html>
"""

START = """window.ui = SwaggerUIBundle({
  url: "openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
});
"""

docs = Blueprint("docs", __name__)


@docs.get("/docs")
def page() -> Response:
    return Response(PAGE, mimetype="text/html", headers=HEADERS)


@docs.get("/docs/start.js")
def start() -> Response:
    return Response(START, mimetype="text/javascript", headers=HEADERS)


@docs.get("/docs/<name>")
def asset(name: str) -> Response:
    if name not in SERVED:
        abort(404)
    response = send_from_directory(ASSETS, name, max_age=3600)
    response.headers.update(HEADERS)
    return response
