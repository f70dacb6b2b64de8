"""The one gunicorn configuration: used by `ludotheque serve` and the container.

Settings come from the environment (``service.settings``) so that both
entry points share them.
"""

import os
import resource
import shutil
import tempfile

from gevent import monkey

# Patch before anything imports socket or ssl, in the master and so in every worker.
monkey.patch_all()

from service.settings import load_or_exit  # noqa: E402 (imports no prometheus_client)

# The container and the chart start gunicorn directly: a malformed setting
# stops it here, naming the variable, as it stops `ludotheque serve`.
SETTINGS = load_or_exit()

# Every worker writes its metrics here and /metrics adds them up; it must be
# set before prometheus_client is imported anywhere. A directory made here
# is removed when gunicorn exits (``on_exit``).
METRICS_DIR = None
SHARED_METRICS = SETTINGS.prometheus_multiproc_dir
if not SHARED_METRICS:
    SHARED_METRICS = METRICS_DIR = tempfile.mkdtemp(prefix="ludotheque-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = METRICS_DIR  # for prometheus_client, and the workers

import orjson  # noqa: E402
from gunicorn import util  # noqa: E402
from prometheus_client import multiprocess  # noqa: E402

from service.http.errors import HTTP_CODES, PROBLEM_TYPE  # noqa: E402
from service.live import shutdown as lifecycle  # noqa: E402
from service.observability import configure_logging, serve_metrics_on  # noqa: E402
from service.server import collector, wire  # noqa: E402

bind = SETTINGS.bind
workers = SETTINGS.workers
# gevent: an idle event stream or long poll costs a greenlet, not a thread.
worker_class = "gevent"
# Each open event stream holds one connection (and one file descriptor) for
# as long as it lives; ordinary requests keep the slots that the followers'
# cap per process (LUDOTHEQUE_FOLLOWERS_PER_PROCESS, 3,500) leaves free.
worker_connections = SETTINGS.worker_connections


def _raise_open_files(wanted: int) -> None:
    """Raise this process's soft limit on open files (inherited by the
    workers) toward ``wanted``, as far as the hard limit allows."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        ceiling = wanted if hard == resource.RLIM_INFINITY else min(hard, wanted)
        resource.setrlimit(resource.RLIMIT_NOFILE, (ceiling, hard))


_raise_open_files(worker_connections + 1000)
wsgi_app = "service.app:create_app()"
worker_tmp_dir = SETTINGS.worker_tmp_dir
# The app logs every request as a JSON line (with its request id).
accesslog = None
errorlog = "-"
loglevel = SETTINGS.log_level
graceful_timeout = 10
# Seconds an idle connection is kept for the client's next request: a
# person's turn comes every few seconds, and gunicorn's 2 made most turns
# open a new connection. Behind a proxy that keeps connections to the
# server, set it above the proxy's idle timeout.
keepalive = SETTINGS.keepalive_s
control_socket_disable = True

configure_logging(loglevel.upper())


def write_problem(sock, status_int: int, reason: str, mesg: str) -> None:
    """What gunicorn refuses before the app sees it (a request line or
    headers past its limits, a malformed request) answered as every other
    error is: problem+json with a stable code, instead of gunicorn's HTML."""
    code = HTTP_CODES.get(status_int, "invalid_request")
    body = orjson.dumps(
        {
            "type": PROBLEM_TYPE + code,
            "title": reason,
            "status": status_int,
            # not gunicorn's message: it may quote the offending request line
            "detail": f"the server refused the request before reading it: {reason}",
            "code": code,
        }
    )
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n"
        f"Content-Type: application/problem+json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    util.write_nonblock(sock, head.encode("latin-1") + body)


# gunicorn's workers call util.write_error for these; the workers inherit this module.
util.write_error = write_problem
# an answer's head goes out with its body, in one write (service.server.wire)
wire.install()


def when_ready(server):
    # /metrics on an address of its own, not the API's (service.observability)
    if SETTINGS.metrics_bind:
        serve_metrics_on(SETTINGS.metrics_bind, SHARED_METRICS)


def post_worker_init(worker):
    lifecycle.attach(worker)
    collector.settle()


def child_exit(server, worker):
    multiprocess.mark_process_dead(worker.pid, SHARED_METRICS)


def on_exit(server):
    if METRICS_DIR:
        shutil.rmtree(METRICS_DIR, ignore_errors=True)
