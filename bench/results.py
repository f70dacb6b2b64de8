"""Where a benchmark's figures go: one JSON file per benchmark, committed, so
that figures are reproducible and a change shows in a diff.

Run from the repository root, ``python -m bench.<name> ...`` writes
``bench/results/<name>.json`` (``--json PATH`` writes elsewhere: a variant
that should not replace the reference run, or a scratch file)::

    {"bench": "engines", "date": "2026-11-28T10:02:11Z", "commit": "1a42808",
     "command": "python -m bench.engines --seconds 4",
     "machine": {"cpus": 2, "cpu": "...", "python": "3.11.7", ...},
     "figures": {...}}

Only the command line writes by default: ``main(argv)`` called from a test
writes a file only when ``argv`` names one with ``--json``.
"""

from __future__ import annotations

import datetime
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

RESULTS = Path("bench") / "results"


def default_path(name: str) -> Path:
    return RESULTS / f"{name}.json"


def command_line(name: str) -> list[str]:
    """This process's arguments, with ``--json bench/results/<name>.json``
    added unless they name a file already."""
    argv = sys.argv[1:]
    if any(arg == "--json" or arg.startswith("--json=") for arg in argv):
        return argv
    return [*argv, "--json", str(default_path(name))]


def command(name: str, argv: list[str]) -> str:
    """How the run was asked for, without the default file that
    :func:`command_line` added."""
    if argv[-2:] == ["--json", str(default_path(name))]:
        argv = argv[:-2]
    return shlex.join(["python", "-m", f"bench.{name}", *argv])


def machine() -> dict[str, Any]:
    cpu = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        cpu = next(
            (
                line.split(":", 1)[1].strip()
                for line in cpuinfo.read_text().splitlines()
                if line.startswith("model name")
            ),
            "",
        )
    return {
        "cpus": os.cpu_count(),
        "cpu": cpu or platform.processor(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def commit() -> str | None:
    try:
        done = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--abbrev=12"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except OSError:
        return None
    return done.stdout.strip() or None


def write(path: Path, name: str, argv: list[str], figures: Any) -> Path:
    """Write ``figures`` to ``path`` with the date, the commit, the command
    and the machine."""
    document = {
        "bench": name,
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": commit(),
        "command": command(name, argv),
        "machine": machine(),
        "figures": figures,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    return path
