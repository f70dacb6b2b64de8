"""Whether this process is shutting down, so that long answers (event
streams, long polls) end cleanly instead of being cut when gunicorn's
graceful timeout runs out. The gunicorn configuration attaches its worker."""

from __future__ import annotations

from typing import Any

_worker: Any = None


def attach(worker: Any) -> None:
    global _worker
    _worker = worker


def stopping() -> bool:
    return _worker is not None and not _worker.alive
