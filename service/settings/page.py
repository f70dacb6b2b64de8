"""``docs/operators/configuration.md``, written from the settings' table:
``ludotheque settings --markdown > docs/operators/configuration.md``
(``tests/test_settings.py`` fails when the committed page differs)."""

from __future__ import annotations

from dataclasses import Field, fields
from typing import Any

from service.settings import SET_BY_SERVE, Settings, problems

INTRODUCTION = """\
# Configuration

<!-- Written by `ludotheque settings --markdown` from service/settings/: edit
the settings there, then run it again (tests/test_settings.py compares). -->

Ludothèque is configured by environment variables: `ludotheque serve`,
`ludotheque worker`, gunicorn with `service/server/gunicorn_conf.py`, the
container and the Helm chart's `config.*` values all read them. Each
process reads every one of them once, when it starts (`service/settings/`),
and a malformed value stops it ("Checked at startup", below).
"""

PER_ADDRESS = """\
## Per address: an IPv6 client is its /64

Every count kept per client address (the request rate limits, match
creations, waiting matches, bot seats, open streams and long polls) counts
a client by one key, taken once per request where its address becomes
known (`service/http/addresses.py`, right after `X-Forwarded-For` is read):

- an IPv4 address counts as itself;
- an IPv6 address counts as its /64: `2001:db8:1:2::7` and
  `2001:db8:1:2:ffff::1` are one client. A single subscriber, even a single
  machine with privacy addresses, usually holds a whole /64, so counting
  each IPv6 address gave it 2^64 fresh quotas;
- an IPv4-mapped IPv6 address (`::ffff:203.0.113.7`, what a dual-stack
  socket reports for an IPv4 client) counts as its IPv4 address.

The flip side: the clients behind one IPv4 address (a NAT) or one /64
share its quotas; raise the per-address settings above if many of your
players share one. The key is stored with a match as its creator (for its
quotas) and never appears in any answer, event or record.
"""

# what the example of a refusal sets
MALFORMED_EXAMPLE = {
    "LUDOTHEQUE_OUTBOUND_ALLOW": "http,loopback",
    "LUDOTHEQUE_FINISHED_TTL": "1d",
}

CHECKED = """\
## Checked at startup

`ludotheque serve`, `ludotheque worker` and gunicorn with
`service/server/gunicorn_conf.py` (as the container and the Helm chart's
API pods run it) read every variable above before they start anything (no
Redis, no gunicorn worker, no worker thread). A malformed one stops them
with exit status 78 (`EX_CONFIG`) and one line on stderr per malformed
variable, naming it and what it accepts:

```console
$ {assignments} ludotheque worker
{refusals}
$ echo $?
78
```

What each variable accepts is in the tables above. Before, a malformed
value surfaced late: `LUDOTHEQUE_OUTBOUND_ALLOW=loopback` made every
creation with a webhook answer 500, a non-numeric TTL a traceback in each
gunicorn worker. `ludotheque settings` checks the environment it is given
the same way and starts nothing; `serve` checks everything but
{set_by_serve}, which it sets from its own options.
"""


def shown(f: Field) -> str:
    """A setting's default, as the page says it."""
    if f.metadata["shown"] is not None:
        return f.metadata["shown"]
    value: Any = f.default
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def table(group: str) -> str:
    rows = [
        f"| `{f.metadata['variable']}` | {shown(f)} | {f.metadata['kind'].accepted} "
        f"| {f.metadata['about']} |"
        for f in fields(Settings)
        if f.metadata["group"] == group
    ]
    head = "| variable | default | accepts | meaning |\n|---|---|---|---|"
    return f"## {group}\n\n{head}\n" + "\n".join(rows) + "\n"


def markdown() -> str:
    """The page: every setting, by group, and what a reader needs around them."""
    groups = list(dict.fromkeys(f.metadata["group"] for f in fields(Settings)))
    checked = CHECKED.format(
        assignments=" ".join(f"{name}={value}" for name, value in MALFORMED_EXAMPLE.items()),
        refusals="\n".join(problems(MALFORMED_EXAMPLE)),
        set_by_serve=" and ".join(f"`{name}`" for name in sorted(SET_BY_SERVE)),
    )
    return "\n".join([INTRODUCTION, *map(table, groups), PER_ADDRESS, checked])
