"""The ``ludotheque`` command: ``serve`` and ``openapi``."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import click

GUNICORN_CONF = Path(__file__).with_name("gunicorn_conf.py")


@click.group()
def main() -> None:
    """Ludothèque, an open game server."""
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option(
    "--data-dir",
    default="data",
    show_default=True,
    type=click.Path(file_okay=False),
    help="where the embedded Redis keeps its AOF (unused with REDIS_URL)",
)
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(1, 64),
    help="gunicorn worker processes",
)
def serve(host: str, port: int, data_dir: str, workers: int) -> None:
    """Serve the API under gunicorn; without REDIS_URL, start a private Redis too."""
    from service.embedded import EmbeddedRedis

    os.environ["LUDOTHEQUE_BIND"] = f"{host}:{port}"
    os.environ["LUDOTHEQUE_WORKERS"] = str(workers)
    if os.environ.get("REDIS_URL"):
        run_gunicorn()
        return
    with EmbeddedRedis(data_dir) as url:
        os.environ["REDIS_URL"] = url
        run_gunicorn()


def run_gunicorn() -> None:
    """gunicorn in a process of its own (gevent patches it before any import).

    It runs in a session of its own so that Ctrl-C reaches only this process,
    which then asks gunicorn for a graceful stop (SIGTERM) and waits for it.
    """
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--config", str(GUNICORN_CONF)],
        start_new_session=True,
    )
    signal.signal(signal.SIGTERM, lambda *_: server.terminate())
    try:
        code = server.wait()
    except KeyboardInterrupt:
        server.terminate()
        code = server.wait()
    if code not in (0, -signal.SIGTERM):
        raise SystemExit(code)


@main.command()
@click.option(
    "--output", default="openapi/openapi.json", show_default=True, type=click.Path(dir_okay=False)
)
def openapi(output: str) -> None:
    """Write the OpenAPI contract."""
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    Path(output).write_text(spec_text() + "\n", encoding="utf-8")
    click.echo(f"wrote {output}")


def spec_text() -> str:
    """The contract as committed: what the app serves at /openapi.json."""
    from service.app import create_app

    # redis-py connects lazily: building the spec never touches this address.
    app = create_app({"REDIS_URL": "redis://127.0.0.1:1/0"})
    spec = app.extensions["ludotheque.api"].spec.to_dict()
    return json.dumps(spec, indent=2, ensure_ascii=False)
