"""What a setting's variable accepts: ``Kind``s, each said in words (for
the docs and the messages) and read (to the value, or ValueError saying what
is wrong with the text)."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from service.background.outbound import parse_allow


@dataclass(frozen=True)
class Kind:
    """What a variable accepts, in words (``accepted``), and how it is read
    (``parse``: the value, or ValueError saying what is wrong with the text)."""

    accepted: str
    parse: Callable[[str], Any]


def whole(least: int, most: int | None = None) -> Kind:
    span = f"from {least} to {most}" if most is not None else f"at least {least}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise ValueError(f"{text!r} is not a whole number ({span})") from None
        if value < least or (most is not None and value > most):
            raise ValueError(f"{value} is out of range: {span}")
        return value

    return Kind(f"a whole number, {span}", parse)


def seconds(positive: bool) -> Kind:
    bound = "above 0" if positive else "at least 0"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < 0 or (positive and value == 0):
            raise ValueError(f"{text!r} is not a number of seconds {bound}")
        return value

    return Kind(f"seconds, {bound}", parse)


def _flag(text: str) -> bool:
    word = text.strip().lower()
    if word not in {"1", "true", "yes", "on", "0", "false", "no", "off"}:
        raise ValueError(f"{text!r} is not 1/0, true/false, yes/no or on/off")
    return word in {"1", "true", "yes", "on"}


FLAG = Kind("1/0, true/false, yes/no or on/off", _flag)


def choice(*names: str) -> Kind:
    listed = f"{', '.join(names[:-1])} or {names[-1]}"

    def parse(text: str) -> str:
        word = text.strip().lower()
        if word not in names:
            raise ValueError(f"{text!r} is not {listed}")
        return word

    return Kind(listed, parse)


def _rate_limits(text: str) -> str:
    from limits import parse_many  # some 60 ms: only when a variable is set

    try:
        parse_many(text)
    except ValueError:
        raise ValueError(
            f"{text!r} is not a rate limit such as 60/minute or 60/minute;600/hour"
        ) from None
    return text


RATE_LIMITS = Kind("rate limits, such as `60/minute` or `60/minute;600/hour`", _rate_limits)


def _origins(text: str) -> tuple[str, ...]:
    origins = tuple(o.strip() for o in text.split(","))
    for origin in origins:
        parts = urlsplit(origin)
        if (
            not origin
            or parts.scheme not in ("http", "https")
            or not parts.hostname
            or origin != f"{parts.scheme}://{parts.netloc}"
        ):
            raise ValueError(f"{origin!r} is not an origin such as https://play.example.org")
    return origins


ORIGINS = Kind("comma-separated origins, `https://host[:port]` (nothing after)", _origins)

REDIS_SCHEMES = ("redis", "rediss", "unix", "redis+sentinel", "rediss+sentinel")


def _redis_url(text: str) -> str | None:
    if text and urlsplit(text).scheme not in REDIS_SCHEMES:
        schemes = ", ".join(f"{scheme}://" for scheme in REDIS_SCHEMES)
        raise ValueError(f"{text!r} is not a URL of one of {schemes}")
    return text or None  # empty: not set


REDIS_URL = Kind(
    "a URL: `redis://`, `rediss://`, `unix://`, `redis+sentinel://` or `rediss+sentinel://`",
    _redis_url,
)


DATABASE_SCHEMES = ("sqlite", "postgresql", "postgres", "postgresql+psycopg")


def _database_url(text: str) -> str | None:
    scheme = urlsplit(text).scheme
    if text and scheme not in DATABASE_SCHEMES:
        raise ValueError(
            f"{text!r} is not a URL of sqlite:///PATH or postgresql://user:password@host/db"
        )
    return text or None  # empty: not set


DATABASE_URL = Kind(
    "a URL: `sqlite:///PATH` (an absolute path: four slashes) or "
    "`postgresql://user:password@host:port/database`",
    _database_url,
)


def _host_port(text: str) -> str:
    _, colon, port = text.strip().rpartition(":")
    if not colon or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{text!r} is not host:port, such as 0.0.0.0:9100 or [::1]:9100")
    return text


METRICS_BIND = Kind("`host:port`, or empty", lambda text: _host_port(text) if text.strip() else "")


def _bind(text: str) -> str:
    # gunicorn's: host:port, a host alone (port 8000), unix:PATH or fd://N, comma-separated
    for item in (i.strip() for i in text.split(",")):
        if not item:
            raise ValueError(f"{text!r} names no address")
        if ":" in item and not item.startswith(("unix:", "fd://")):
            _host_port(item)
    return text


BIND = Kind("comma-separated `host:port`, `host`, `unix:PATH` or `fd://N`", _bind)


OUTBOUND_ALLOW = Kind(
    "comma-separated: `http`, addresses and networks (`10.0.0.0/8`)", parse_allow
)


def existing(what: str, holds: Callable[[Path], bool]) -> Kind:
    def parse(text: str) -> str:
        if not holds(Path(text)):
            raise ValueError(f"{text!r} is not {what}")
        return text

    return Kind(what, parse)


DIRECTORY = existing("a directory", Path.is_dir)
READABLE_FILE = existing("a readable file", lambda p: p.is_file() and os.access(p, os.R_OK))
PROGRAM = existing("an executable file", lambda p: p.is_file() and os.access(p, os.X_OK))
