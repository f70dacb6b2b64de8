"""The one gunicorn configuration: used by `ludotheque serve` and the container.

Settings come from the environment so that both entry points share them.
"""

import os
import tempfile

from gevent import monkey

# Patch before anything imports socket or ssl, in the master and so in every worker.
monkey.patch_all()

# Every worker writes its metrics here and /metrics adds them up; it must be
# set before prometheus_client is imported anywhere.
os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", tempfile.mkdtemp(prefix="ludotheque-metrics-"))

from prometheus_client import multiprocess  # noqa: E402

from service import lifecycle  # noqa: E402
from service.observability import configure_logging  # noqa: E402

bind = os.environ.get("LUDOTHEQUE_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("LUDOTHEQUE_WORKERS", "1"))
# gevent: an idle event stream or long poll costs a greenlet, not a thread.
worker_class = "gevent"
worker_connections = int(os.environ.get("LUDOTHEQUE_WORKER_CONNECTIONS", "1000"))
wsgi_app = "service.app:create_app()"
worker_tmp_dir = os.environ.get("LUDOTHEQUE_WORKER_TMP_DIR")
# The app logs every request as a JSON line (with its request id).
accesslog = None
errorlog = "-"
loglevel = os.environ.get("LUDOTHEQUE_LOG_LEVEL", "info")
graceful_timeout = 10
keepalive = 2
control_socket_disable = True

configure_logging(loglevel.upper())


def post_worker_init(worker):
    lifecycle.attach(worker)


def child_exit(server, worker):
    multiprocess.mark_process_dead(worker.pid)
