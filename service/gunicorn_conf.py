"""The one gunicorn configuration: used by `ludotheque serve` and the container.

Settings come from the environment so that both entry points share them.
"""

import os

bind = os.environ.get("LUDOTHEQUE_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("LUDOTHEQUE_WORKERS", "1"))
worker_class = "gthread"
threads = int(os.environ.get("LUDOTHEQUE_THREADS", "8"))
wsgi_app = "service.app:create_app()"
accesslog = os.environ.get("LUDOTHEQUE_ACCESS_LOG", "-")
errorlog = "-"
loglevel = os.environ.get("LUDOTHEQUE_LOG_LEVEL", "info")
graceful_timeout = 10
keepalive = 5
