"""The one gunicorn configuration: used by `ludotheque serve` and the container.

Settings come from the environment so that both entry points share them.
"""

import os

from gevent import monkey

# Patch before anything imports socket or ssl, in the master and so in every worker.
monkey.patch_all()

bind = os.environ.get("LUDOTHEQUE_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("LUDOTHEQUE_WORKERS", "1"))
# gevent: an idle event stream or long poll costs a greenlet, not a thread.
worker_class = "gevent"
worker_connections = int(os.environ.get("LUDOTHEQUE_WORKER_CONNECTIONS", "1000"))
wsgi_app = "service.app:create_app()"
accesslog = os.environ.get("LUDOTHEQUE_ACCESS_LOG", "-")
errorlog = "-"
loglevel = os.environ.get("LUDOTHEQUE_LOG_LEVEL", "info")
graceful_timeout = 10
keepalive = 5
