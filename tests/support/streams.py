"""Server-sent events as a client reads them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import orjson
import requests


def read_events(lines: Iterable[str], comments: bool = False) -> Iterator[tuple[Any, Any]]:
    """The events of an event stream, as its lines come: (id, data) each,
    the id a number where it is one and the data parsed; with ``comments``,
    also (None, None) for each message that is a comment alone (a keep-alive,
    the end). A message the stream has not ended yet is not an event yet."""
    fields: dict[str, str] = {}
    comment = False
    for line in lines:
        if line == "":
            if "data" in fields:
                ident = fields.get("id")
                data = orjson.loads(fields["data"])
                yield int(ident) if ident and ident.isdigit() else ident, data
            elif comment and comments:
                yield None, None
            fields, comment = {}, False
        elif line.startswith(":"):
            comment = comment or not fields
        else:
            name, _, value = line.partition(": ")
            fields[name] = value


def sse_events(response: requests.Response) -> list[tuple[Any, Any]]:
    """Every event of a whole stream (read to its end): (id, data) each."""
    return list(read_events(response.iter_lines(decode_unicode=True)))


def text_events(text: str, comments: bool = False) -> list[tuple[Any, Any]]:
    """The events of a stream's text (whole messages only)."""
    return list(read_events(text.split("\n"), comments))
