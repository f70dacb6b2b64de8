"""The key that signs records, kept in the store when the deployment
supplies none (``LUDOTHEQUE_RECORD_KEY_FILE``; docs/clients/fairness.md)."""

from __future__ import annotations

import logging
import threading
from typing import Any

from service.domain.signing import RecordKey, from_pem, new_pem, read_key_file

log = logging.getLogger(__name__)

STORE_KEY = "ludotheque:record-key"  # the key kept in the store when no file is configured


class RecordKeys:
    """The app's record key: the file's if one is configured (read at once, so
    that a bad file stops the start), else the store's, created by the first
    process that needs it and read once per process."""

    def __init__(self, path: str | None, client: Any) -> None:
        self.client = client
        self.key = read_key_file(path) if path else None
        self.lock = threading.Lock()

    def get(self) -> RecordKey:
        if self.key is None:
            with self.lock:
                if self.key is None:
                    self.key = self._from_store()
        return self.key

    def _from_store(self) -> RecordKey:
        log.warning(
            "LUDOTHEQUE_RECORD_KEY_FILE is not set: records are signed with a key kept in "
            "the store (docs/operators/configuration.md); a deployment should supply its own"
        )
        self.client.set(STORE_KEY, new_pem(), nx=True)
        return from_pem(self.client.get(STORE_KEY))
