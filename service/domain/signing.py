"""Signed records: the server's Ed25519 signature binds every field of a record.

The seed commitment proves the deal and the replay proves the actions, but
nothing in them binds the seats' names, the match's id, its options, the
``seeded`` flag or how it ended. So the server signs each record it serves
(``GET .../record``) with its *record key*, and publishes the key's public
half (``GET /v1/record-key``, docs/clients/fairness.md). Whoever holds that public
key can check, offline, that no field of a record was changed.

The signed message is the record without its ``signature`` member, in
canonical JSON (:func:`canonical`): keys sorted, no spaces, UTF-8. The
signature travels in the record as ``{"algorithm": "Ed25519", "key_id",
"value"}``, ``value`` being the 64-byte signature in lowercase hex.

Where the private key comes from (:class:`RecordKeys`): a file named by
``LUDOTHEQUE_RECORD_KEY_FILE`` (a PKCS#8 PEM Ed25519 key, a deployment's
secret); ``ludotheque serve`` with its embedded Redis keeps one in its data
directory (:func:`ensure_key_file`); else the first process to need one
creates it in the store, where every process sharing that store finds it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

ALGORITHM = "Ed25519"
KEY_FILE = "record-key.pem"  # in ``ludotheque serve``'s data directory
PUBLIC_BYTES = 32
SIGNATURE_BYTES = 64
SIGNATURE_HEX = re.compile(f"[0-9a-f]{{{2 * SIGNATURE_BYTES}}}")


@dataclass(frozen=True)
class RecordKey:
    """A private record key and what the API publishes of it."""

    private: Ed25519PrivateKey

    @property
    def public(self) -> bytes:
        return public_bytes(self.private.public_key())

    @property
    def key_id(self) -> str:
        return key_id(self.public)

    def published(self) -> dict[str, str]:
        """What ``GET /v1/record-key`` answers."""
        return {"algorithm": ALGORITHM, "key_id": self.key_id, "public_key": self.public.hex()}


def public_bytes(public: Ed25519PublicKey) -> bytes:
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id(public: bytes) -> str:
    """A short name for a public key: the first 16 hex digits of its SHA-256."""
    return hashlib.sha256(public).hexdigest()[:16]


def new_pem() -> bytes:
    """A fresh private key, as PKCS#8 PEM (what ``openssl genpkey -algorithm
    ed25519`` writes)."""
    return Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def from_pem(pem: bytes) -> RecordKey:
    """The record key in ``pem``; ValueError if it is not an Ed25519 private key."""
    private = serialization.load_pem_private_key(pem, password=None)
    if not isinstance(private, Ed25519PrivateKey):
        raise ValueError(f"an Ed25519 private key is needed, not {type(private).__name__}")
    return RecordKey(private)


def ensure_key_file(data_dir: Path) -> Path:
    """``data_dir``'s key file, created (readable by its owner only) if missing."""
    path = Path(data_dir) / KEY_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path
    with os.fdopen(descriptor, "wb") as file:
        file.write(new_pem())
    return path


def read_key_file(path: str | Path, variable: str = "LUDOTHEQUE_RECORD_KEY_FILE") -> RecordKey:
    """The key in ``path``; RuntimeError naming ``variable`` if it cannot be read."""
    try:
        return from_pem(Path(path).read_bytes())
    except (OSError, ValueError, TypeError) as unreadable:
        raise RuntimeError(
            f"{variable}={path}: not a readable Ed25519 key: {unreadable}"
        ) from None


# -- the signature -------------------------------------------------------------
def canonical(record: dict[str, Any]) -> bytes:
    """The bytes signed: ``record`` less its ``signature``, as JSON with
    sorted keys and no spaces, in UTF-8."""
    unsigned = {k: v for k, v in record.items() if k != "signature"}
    text = json.dumps(unsigned, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def sign(record: dict[str, Any], key: RecordKey) -> dict[str, Any]:
    """``record`` with its signature. What is signed is the record as a client
    parses it (JSON numbers and strings as they travel), so that a client's
    canonical form of what it received is byte for byte the one signed."""
    plain = json.loads(json.dumps(record))
    signature = key.private.sign(canonical(plain))
    return {
        **record,
        "signature": {"algorithm": ALGORITHM, "key_id": key.key_id, "value": signature.hex()},
    }


def check(record: dict[str, Any], public: bytes) -> str | None:
    """What is wrong with ``record``'s signature by the key ``public`` (None: it holds)."""
    signature = record.get("signature")
    if signature is None:
        return (
            "no signature: this record was served before records were signed, so nothing "
            "binds its names, id, options, endings or outcome (its deal and replay are "
            "checked below)"
        )
    # the signature object is bound too: exactly its three members, the value
    # exactly as the server writes it (lowercase hex, nothing between the digits)
    if not isinstance(signature, dict) or set(signature) != {"algorithm", "key_id", "value"}:
        return "the signature is malformed: it has exactly algorithm, key_id and value"
    algorithm, named, value = signature["algorithm"], signature["key_id"], signature["value"]
    if not isinstance(value, str) or not SIGNATURE_HEX.fullmatch(value):
        return (
            f"the signature is malformed: its value is {2 * SIGNATURE_BYTES} lowercase hex digits"
        )
    raw = bytes.fromhex(value)
    if algorithm != ALGORITHM:
        return f"the signature is not an {ALGORITHM} signature"
    if named != key_id(public):
        return f"signed by the key {named!r}, not by the key given ({key_id(public)})"
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(raw, canonical(record))
    except InvalidSignature:
        return "the signature does not hold: a field of the record was changed after signing"
    return None


def load_record(text: str | bytes) -> Any:
    """A record file's JSON, refusing what two readers could read apart: a
    key repeated in an object (one parser keeps the first value, another the
    last), and NaN or Infinity, which JSON does not have. ValueError if so."""

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for name, value in pairs:
            if name in found:
                raise ValueError(f"the key {name!r} is repeated in an object")
            found[name] = value
        return found

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, object_pairs_hook=unique, parse_constant=constant)


def parse_public_key(text: str) -> bytes:
    """A public key as a user gives it: 64 hex digits, the JSON that
    ``GET /v1/record-key`` answers, or a PEM key (public, or private: its
    public half). ValueError if it is none of these."""
    text = text.strip()
    if text.startswith("{"):
        return parse_public_key(str(json.loads(text)["public_key"]))
    if text.startswith("-----BEGIN"):
        data = text.encode()
        if "PRIVATE KEY" in text:
            return from_pem(data).public
        public = serialization.load_pem_public_key(data)
        if not isinstance(public, Ed25519PublicKey):
            raise ValueError("not an Ed25519 public key")
        return public_bytes(public)
    raw = bytes.fromhex(text)
    if len(raw) != PUBLIC_BYTES:
        raise ValueError(f"an Ed25519 public key is {PUBLIC_BYTES} bytes ({2 * PUBLIC_BYTES} hex)")
    return raw
