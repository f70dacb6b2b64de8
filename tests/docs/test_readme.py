"""Every command in README.md is run: by this module, or by the test or the CI
step that COVERAGE names for it.

A command is a `$ ` line of a console block (with its continuation lines),
a line of an indented or bash block, a python block (a program), or an inline
code span of two words or more whose first word is a program (`ludotheque`,
`python`, `curl`, `docker`, `helm`, ... or anything in the virtualenv's bin).
`test_every_readme_command_is_covered` fails for a command COVERAGE does not
know (so a new or reworded command needs its runner), and for an entry that
names a test or a CI line that does not run it.

The curl tour runs for real, command after command, in one bash session (as
a reader types it) against `.venv/bin/ludotheque serve` started as the README
writes it, on port 8000, in a network namespace of its own (`unshare -rn`) so
that nothing else on the machine can hold that port; where namespaces are not
allowed, it runs on the machine's port 8000, one test at a time. Variables
the README fills by hand (`M=f175...; A=4qxZ1_I_...`) are filled from the
answers it shows them in, and each answer must look like the one shown.
Benchmarks run as written with their sizes reduced (see REDUCED); Docker and
helm commands are skipped, saying how to install them, where they are absent
(unless LUDOTHEQUE_REQUIRE_DOCKER=1 or LUDOTHEQUE_REQUIRE_HELM=1).
"""

from __future__ import annotations

import ast
import contextlib
import fcntl
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
import requests
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
VENV = Path(sys.executable).parent.parent  # not resolved: the venv, not its base Python
BIN = VENV / "bin"
PROGRAMS = {
    "ludotheque", "python", "python3", "python3.11", "pip", "pytest", "curl", "docker",
    "helm", "kubectl", "npx", "npm", "node", "bash", "sh", "git", "redis-cli", "flock",
}  # fmt: skip


# --- Finding the commands ----------------------------------------------------


@dataclass(frozen=True)
class Command:
    text: str  # as written
    shown: str = ""  # the answer the README shows after it
    kind: str = "shell"  # or "python"
    section: str = ""  # the heading it is under

    @property
    def key(self) -> str:
        return normalized(self.text)


def normalized(text: str) -> str:
    return " ".join(text.replace("\\\n", " ").split())


def is_command(span: str) -> bool:
    words = span.split()
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):
        words.pop(0)
    if len(words) < 2:
        return False
    first = words[0]
    return first in PROGRAMS or first.startswith(".venv/bin/") or (BIN / first).is_file()


def shell_lines(block: str) -> list[str]:
    """A block's logical lines: a line ending in a backslash goes on."""
    lines, current = [], ""
    for line in block.splitlines():
        current += line
        if line.endswith("\\"):
            current += "\n"
            continue
        if current.strip():
            lines.append(current.strip())
        current = ""
    return lines


def console_commands(block: str) -> list[Command]:
    commands: list[Command] = []
    text, shown, continued = None, [], False
    for line in block.splitlines():
        if continued:
            text += "\n" + line
        elif line.startswith("$ "):
            if text is not None:
                commands.append(Command(text, "\n".join(shown)))
            text, shown = line[2:], []
        else:
            assert text is not None, f"output before any command: {line}"
            shown.append(line)
        continued = line.endswith("\\")
    if text is not None:
        commands.append(Command(text, "\n".join(shown)))
    return commands


def readme_commands(markdown: str) -> list[Command]:
    commands: list[Command] = []
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    section = ""
    for previous, token in zip([None, *tokens], tokens, strict=False):
        if previous is not None and previous.type == "heading_open":
            section = f"{previous.markup} {token.content}"
        elif token.type == "fence":
            language = token.info.strip()
            if language == "console":
                commands += console_commands(token.content)
            elif language in ("bash", "sh", "shell"):
                commands += [Command(line) for line in shell_lines(token.content)]
            elif language == "python":
                commands.append(Command(token.content, kind="python", section=section))
            else:
                raise AssertionError(f"a ```{language} block: is it a command? say so here")
        elif token.type == "code_block":
            commands += [Command(line) for line in shell_lines(token.content)]
        elif token.type == "inline":
            for child in token.children or []:
                if child.type == "code_inline" and is_command(child.content):
                    commands.append(Command(child.content))
    return commands


# --- Who runs each command ---------------------------------------------------

# Run here: the value names this module's test that runs the command.
TOUR = "test_the_curl_tour_against_ludotheque_serve_as_written"
SERVE = "test_serve_as_the_readme_writes_it"
GENERATE = "test_the_clients_generate_as_written"
BENCH = "test_the_benchmarks_run_as_written_with_reduced_sizes"
CLI = "test_the_other_ludotheque_commands_run_as_written"
DEPLOY = "test_the_deploy_commands_run_where_docker_and_helm_are"


@dataclass(frozen=True)
class By:
    """Run by another test, which reads the command from the README itself."""

    test: str  # path::function
    evidence: str  # what the test's file holds to find the command in the README


@dataclass(frozen=True)
class CI:
    """Run by .ci/run, which holds the command verbatim."""


COVERAGE: dict[str, str | By | CI] = {
    # Install and serve: the venv and the install are CI's own steps (.ci/run,
    # with '.[test]'); the tour runs `.venv/bin/ludotheque serve` as written.
    "python3.11 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/ludotheque serve": TOUR,  # noqa: E501
    "python3.11 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/pytest -n 2": CI(),  # noqa: E501
    "curl -s -X POST localhost:8000/v1/games/dekal/matches -H 'Content-Type: application/json' -d '{\"players\": [{\"name\": \"Ada\"}, {\"name\": \"Bob\"}]}'": TOUR,  # noqa: E501
    "M=f175fc0bc5ec4999a8d23ff9ee77647f; A=4qxZ1_I_...; B=HPtcHDcH...": TOUR,
    "U=localhost:8000/v1/games/dekal/matches/$M": TOUR,
    "curl -s -X POST $U/actions -H \"Authorization: Bearer $A\" -d '{\"type\":\"reveal\",\"row\":0,\"col\":0}'": TOUR,  # noqa: E501
    "curl -s -X POST $U/actions -H \"Authorization: Bearer $B\" -d '{\"type\":\"reveal\",\"row\":3,\"col\":3}'": TOUR,  # noqa: E501
    "curl -s $U/legal-actions -H \"Authorization: Bearer $A\"": TOUR,
    "curl -s -X POST $U/actions -H \"Authorization: Bearer $A\" -H 'If-Match: \"3\"' -H 'Idempotency-Key: ada-turn-1' -d '{\"type\":\"take\",\"value\":4,\"from\":\"right\"}'": TOUR,  # noqa: E501
    "curl -s $U": TOUR,
    "curl -s \"$U/events?after=0\"": TOUR,
    "curl -s \"localhost:8000/v1/games/dekal/matches?open_seats=1\" # the lobby: \"listed\": true matches": TOUR,  # noqa: E501
    "curl -s -X POST $U/resign -H \"Authorization: Bearer $B\" # Ada wins": TOUR,
    "curl -s -X POST $U/rematch -H \"Authorization: Bearer $A\" # Ada's seat and token in the rematch": TOUR,  # noqa: E501
    "ludotheque verify": TOUR,
    "curl -s $U/record > record.json && ludotheque verify record.json": TOUR,
    "curl -sN $U/stream -H \"Authorization: Bearer $A\"": TOUR,
    "curl -s \"$U/events?after=8&wait=25\" -H \"Authorization: Bearer $B\"": TOUR,
    "curl -s -X POST localhost:8000/v1/games/pacal/matches -H 'Content-Type: application/json' -d '{\"players\": [{\"name\": \"Ada\"}, {\"bot\": \"mcts\"}]}'": TOUR,  # noqa: E501
    "ludotheque bot --url URL --game G --match ID --token T --policy random|greedy|mcts": TOUR,
    "ludotheque bot --url http://127.0.0.1:8000 --game dekal --match $M --token $A --policy random": TOUR,  # noqa: E501
    "ludotheque bot ...": TOUR,
    "ludotheque worker": CLI,
    "ludotheque worker [--budget-ms 1000]": CLI,
    "ludotheque serve": TOUR,
    "ludotheque serve [--host 127.0.0.1] [--port 8000] [--data-dir data] [--workers 1] [--bot-workers N]": SERVE,  # noqa: E501
    "ludotheque serve --workers 2": SERVE,
    "ludotheque arena --game G --seats mcts,random --games N [--budget-ms B] [--iterations I] [--jobs J] [--options JSON] [--json]": CLI,  # noqa: E501
    "ludotheque arena": CLI,
    "ludotheque arena ...": CLI,
    "ludotheque openapi": CLI,
    ".venv/bin/pip install openapi-python-client==0.29.1 && .venv/bin/openapi-python-client generate --path openapi/openapi.json --meta setup": GENERATE,  # noqa: E501
    "npx --yes openapi-typescript@7.13.0 openapi/openapi.json -o ludotheque.d.ts": GENERATE,
    "docker compose up --build": DEPLOY,
    "helm install ludo helm/ludotheque --set redis.url=redis://...": DEPLOY,
    ".venv/bin/python -m bench.engines --seconds 4": BENCH,
    ".venv/bin/python -m bench.load --seconds 10 --clients 32 --workers 2": BENCH,
    ".venv/bin/python -m bench.streams --streams 10000 --matches 500 --pace 2 --open-pause 1": BENCH,  # noqa: E501
    "python -m bench.bots --seconds 60": BENCH,
    ".venv/bin/python -m bench.peer --clients 16,64 --rounds 3 --seconds 10": BENCH,
    ".venv/bin/python -m bench.archive --records 1000000": BENCH,
    ".venv/bin/python -m bench.archiving --matches 2000 --rate 100 --bot-workers 2": BENCH,
    "python -m bench.outbound --seconds 45": BENCH,
    "python -m bench.failover --kills 5 --clients 16 --seconds-between 5 --min-replicas 1": BENCH,
    ".venv/bin/pytest tests/reliability -n 2": BENCH,
    # The webhook bot in the standard library: started on a free loopback port
    # and playing a whole match against the server's bot.
    "```python under ## Webhooks and HTTP bots": By(
        "tests/background/test_webhooks.py::test_the_readme_example_bot_plays_a_match",
        '"## Webhooks and HTTP bots"',
    ),
}  # fmt: skip

# Sizes for heavy commands: the command as written (same module, same flags)
# runs with these values, so that it stays a test of seconds.
REDUCED = {
    "--seconds": "0.2",
    "--clients": "2",  # bench.peer's seats play in pairs
    "--rounds": "1",
    "--streams": "4",
    "--matches": "1",
    "--pace": "0.01",
    "--open-pause": "0.01",
    "--kills": "1",
    "--seconds-between": "0.5",
    "--records": "2000",  # bench.archive's PostgreSQL database
}
# bench.peer as written starts six systems in turn: here the two that
# tests/deploy/test_peer_bench.py does not run (it runs bgio-memory,
# ours-everysec and floor-everysec).
NARROWED = {"-m bench.peer ": "--systems bgio-flatfile,ours-always"}
# One quick test of the suite: the command line as written, the suite itself
# being what the CI's test command runs.
RELIABILITY_SAMPLE = "test_a_sentinel_url_names_its_sentinels_service_and_database"
# In the tour, values that depend on the deal or are drawn at random ("by":
# the first player is found by the lowest card, or by the reserve when the
# revealed cards tie, as a full run's deal did).
VARYING = {"id", "token", "seed_commitment", "centre", "value", "next", "by"}


def coverage_key(command: Command) -> str:
    """A python block is known by its section: the test that runs it reads
    the section's block."""
    return f"```python under {command.section}" if command.kind == "python" else command.key


def commands_run_by(test: str) -> list[Command]:
    """The README's commands that `test` runs, in order, each once."""
    found: dict[str, Command] = {}
    for command in readme_commands(README.read_text("utf-8")):
        if COVERAGE.get(coverage_key(command)) == test:
            found.setdefault(command.key, command)
    assert found, f"no README command for {test}"
    return list(found.values())


def test_every_readme_command_is_covered():
    commands = readme_commands(README.read_text("utf-8"))
    keys = [coverage_key(c) for c in commands]
    blocks = [k for k in keys if k.startswith("```")]
    assert len(blocks) == len(set(blocks)), f"one python block per section: {blocks}"
    uncovered = [k for k in keys if k not in COVERAGE]
    assert not uncovered, (
        "README commands that no test runs (add them to COVERAGE):\n" + "\n".join(uncovered)
    )
    stale = [k for k in COVERAGE if k not in keys]
    assert not stale, f"COVERAGE names commands the README no longer has: {stale}"
    ci = (ROOT / ".ci" / "run").read_text("utf-8").splitlines()
    for key, runner in COVERAGE.items():
        if isinstance(runner, CI):
            assert key in ci, f".ci/run does not run {key!r} as written"
        elif isinstance(runner, By):
            path, function = runner.test.split("::")
            source = (ROOT / path).read_text("utf-8")
            defined = {
                n.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef)
            }
            assert function in defined, f"{runner.test} does not exist"
            assert runner.evidence in source, f"{path} does not read {key!r} from the README"
        else:
            assert runner in globals() and callable(globals()[runner]), runner
    # the venv and install steps of the first command are CI's, as written
    install = "python3.11 -m venv .venv && .venv/bin/pip install -q -e "
    assert next(iter(COVERAGE)).startswith(install)
    assert any(line.startswith(install) for line in ci), install


def test_the_command_finder_sees_every_kind_of_command():
    """A check of the finder itself: it must not miss a command it is shown."""
    sample = (
        "Run `ludotheque serve --port 9` or `python -m bench.x --n 1`, not `GET /v1/x`.\n\n"
        "    .venv/bin/python -m bench.y \\\n      --seconds 4\n\n"
        "```console\n$ curl -s $U \\\n    -H 'X: 1'\n{\"a\": 1}\n$ echo hi\nhi\n```\n\n"
        "```python\nprint(1)\n```\n"
    )
    found = readme_commands(sample)
    assert [c.key for c in found] == [
        "ludotheque serve --port 9",
        "python -m bench.x --n 1",
        ".venv/bin/python -m bench.y --seconds 4",
        "curl -s $U -H 'X: 1'",
        "echo hi",
        "print(1)",
    ]
    assert found[3].shown == '{"a": 1}' and found[5].kind == "python"


def is_name(key: str) -> bool:
    """`ludotheque verify`, `ludotheque bot ...`: a subcommand named in prose
    that the README also gives in full; it runs wherever that full form does."""
    if re.fullmatch(r"ludotheque [a-z]+( \.\.\.)?", key) is None:
        return False
    core = re.escape(key.removesuffix(" ..."))
    return any(re.search(rf"(^|/| ){core} ", k) for k in COVERAGE)


def test_every_subcommand_named_in_prose_is_run_in_full_by_its_test():
    keys = [coverage_key(c) for c in readme_commands(README.read_text("utf-8"))]
    for name in filter(is_name, keys):
        core = re.escape(name.removesuffix(" ..."))
        full = [k for k in keys if k != name and re.search(rf"(^|/| ){core}( |$)", k)]
        assert any(COVERAGE[k] == COVERAGE[name] for k in full), f"{name}: no full form runs"


def instantiate(text: str, values: dict[str, str]) -> str:
    """A synopsis as a command: every optional part given, placeholders filled."""
    text = re.sub(r"\[(--[^\]]+)\]", r"\1", normalized(text))
    pattern = "|".join(re.escape(k) for k in sorted(values, key=len, reverse=True))
    return re.sub(rf"(?<![\w-])({pattern})(?![\w-])", lambda m: values[m.group(1)], text)


# --- Running commands --------------------------------------------------------

# In a new network namespace the loopback interface is down: bring it up, then
# run the command given (SIOCGIFFLAGS, SIOCSIFFLAGS; IFF_UP; struct ifreq is 40 bytes).
LOOPBACK_UP = """
import fcntl, os, socket, struct, sys
with socket.socket() as s:
    flags = struct.unpack("16sH22x", fcntl.ioctl(s, 0x8913, struct.pack("16sH22x", b"lo", 0)))[1]
    fcntl.ioctl(s, 0x8914, struct.pack("16sH22x", b"lo", flags | 1))
os.execvp(sys.argv[1], sys.argv[1:])
"""
NETNS = ["unshare", "--user", "--map-root-user", "--net", "--", sys.executable, "-c", LOOPBACK_UP]


def shell_env(**extra: str) -> dict[str, str]:
    """The environment of a reader whose virtualenv is activated."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "PROMETHEUS_MULTIPROC_DIR")
    }
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return {**env, **extra}


@pytest.fixture
def port_8000(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    """The prefix under which a command has port 8000 to itself: a network
    namespace of its own, else the machine's, one test at a time."""
    if (
        shutil.which("unshare")
        and subprocess.run([*NETNS, "true"], capture_output=True).returncode == 0
    ):
        yield NETNS
        return
    with machine_port_8000(tmp_path_factory):
        yield []


@contextlib.contextmanager
def machine_port_8000(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The machine's port 8000, once free, for one test of the session at a time."""
    # the lock file is shared by every xdist worker of the session
    with (tmp_path_factory.getbasetemp().parent / "port-8000.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        deadline = time.monotonic() + 60
        while requests_answer("http://127.0.0.1:8000/"):
            assert time.monotonic() < deadline, "port 8000 is taken and namespaces are not allowed"
            time.sleep(1)
        yield


def requests_answer(url: str) -> bool:
    try:
        requests.get(url, timeout=2)
    except requests.RequestException:
        return False
    return True


class Session:
    """One bash, fed one command at a time as a reader types them; variables
    stay set from one command to the next, and jobs run as in a terminal."""

    def __init__(self, prefix: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [*prefix, "bash", "--noprofile", "--norc"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=env,
            text=True,
            start_new_session=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.pids: list[int] = []
        self.run("set -m")  # job control: Ctrl-C (SIGINT) reaches a background job

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def run(self, command: str, timeout: float = 60) -> tuple[int, str]:
        marker = uuid.uuid4().hex
        self.process.stdin.write(f"{command}\nprintf '\\n{marker} %s\\n' $?\n")
        self.process.stdin.flush()
        out: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(
                    f"{command!r} took over {timeout} s:\n{''.join(out)}"
                ) from None
            assert line is not None, f"the shell exited during {command!r}:\n{''.join(out)}"
            if line.startswith(marker):
                text = "".join(out)
                return int(line.split()[1]), text[:-1] if text.endswith("\n") else text
            out.append(line)

    def ok(self, command: str, timeout: float = 60) -> str:
        code, out = self.run(command, timeout)
        assert code == 0, f"{command!r} exited with {code}:\n{out}"
        return out

    def background(self, command: str, log: str) -> int:
        pid = int(self.ok(f"{command} > {log} 2>&1 &\necho $!").strip())
        self.pids.append(pid)
        return pid

    def close(self) -> None:
        for pid in self.pids:  # what a failed test left running
            try:
                os.kill(pid, 15)
            except ProcessLookupError:
                continue
            wait_gone(pid)
        self.process.stdin.close()
        self.process.wait(timeout=30)
        self.process.stdout.close()


def wait_gone(pid: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)


def start_and_wait(shell: Session, serve: str, log: str = "serve.log") -> int:
    pid = shell.background(serve, log)
    shell.ok(
        "for i in $(seq 300); do curl -sf localhost:8000/readyz >/dev/null && break; "
        "sleep 0.1; done",
        timeout=40,
    )
    code, _ = shell.run("curl -sf localhost:8000/readyz")
    assert code == 0, f"{serve!r} does not answer on port 8000:\n{shell.ok(f'cat {log}')}"
    return pid


def interrupt(shell: Session, pid: int, log: str = "serve.log") -> None:
    """Ctrl-C, as a terminal sends it to the foreground job's group."""
    code, _ = shell.run(f"kill -INT -- -{pid}; wait {pid}", timeout=60)
    assert code == 0, f"Ctrl-C did not stop it cleanly ({code}):\n{shell.ok(f'tail -20 {log}')}"
    shell.pids.remove(pid)


# --- The curl tour -----------------------------------------------------------

SHOWN_PAIR = re.compile(
    r'"(\w+)":\s*("(?:[^"\\]|\\.)*"|-?\d+|true|false|null|\[[^\[\]{}]*\]|\{[^{}\[\]]*\})'
)


def pairs(value: object) -> set[tuple[str, str]]:
    """Every key and value in a JSON document, at any depth."""
    found: set[tuple[str, str]] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            found.add((key, json.dumps(item, sort_keys=True)))
            found |= pairs(item)
    elif isinstance(value, list):
        for item in value:
            found |= pairs(item)
    return found


def shown_pairs(shown: str) -> set[tuple[str, str]]:
    found = set()
    for key, text in SHOWN_PAIR.findall(shown):
        try:
            value = json.loads(text)
        except ValueError:
            continue  # elided: "4qxZ1_I_...", {...}
        if key not in VARYING:
            found.add((key, json.dumps(value, sort_keys=True)))
    return found


def answer_of(out: str) -> object:
    """The JSON answer of a curl command, which must not be an error."""
    try:
        answer = json.loads(out)
    except ValueError:
        raise AssertionError(f"not a JSON answer: {out[:500]}") from None
    if isinstance(answer, dict):
        assert "/problems/" not in str(answer.get("type")), answer
    return answer


def mismatch(shown: str, out: str) -> str | None:
    """What the answer lacks of what the README shows; None if nothing."""
    if out.startswith("retry:"):  # an event stream
        real: set[tuple[str, str]] = set()
        for line in out.splitlines():
            if line.startswith("data: "):
                real |= pairs(json.loads(line[len("data: ") :]))
        lines = set(out.splitlines())
        missing_lines = [
            x for x in shown.splitlines() if "{" not in x and "..." not in x and x not in lines
        ]
        if missing_lines:
            return f"lines missing: {missing_lines}"
    else:
        real = pairs(answer_of(out))
    missing = shown_pairs(shown) - real
    return f"missing {sorted(missing)} in {out[:2000]}" if missing else None


@dataclass
class Tour:
    shell: Session
    commands: list[Command]
    answers: dict[str, object]

    def play(self, command: Command) -> str | None:
        """Runs one command of the tour; what went wrong, or None."""
        if is_name(command.key) or command.key.startswith("ludotheque bot --url URL"):
            return None  # a name, or the synopsis that the bot step runs
        if command.key.startswith("ludotheque bot "):
            return self.bots(command)
        text = self.filled(command)
        if " -sN " in text:  # a stream: read it for a while, then Ctrl-C
            code, out = self.shell.run(f"timeout -s INT 3 {text}", timeout=30)
            assert code in (0, 124, 130), (text, code, out)
        else:
            code, out = self.shell.run(text, timeout=60)
            assert code == 0, f"{text!r} exited with {code}:\n{out}"
        if "ludotheque verify" in text:
            assert out.startswith("ok: dekal match "), out
        elif text.startswith("curl "):
            try:
                if not out.startswith("retry:"):
                    self.answers[command.key] = answer_of(out)
                return mismatch(command.shown, out)
            except AssertionError as error:
                return f"{text}: {error}"
        return None

    def filled(self, command: Command) -> str:
        """`M=f175...; A=4qxZ1_I_...`: each value from the earlier answer that shows it."""
        parts = [p.split("=", 1) for p in command.text.split("; ")]
        if not all(re.fullmatch(r"[A-Z]+", p[0]) and len(p) == 2 for p in parts):
            return command.text
        filled = []
        for name, value in parts:
            if "$" not in value:
                value = self.from_answers(value.removesuffix("..."))
            filled.append(f"{name}={value}")
        return "; ".join(filled)

    def from_answers(self, start: str) -> str:
        for earlier in self.commands:
            found = re.search(rf'"(\w+)":"{re.escape(start)}', earlier.shown)
            if found and earlier.key in self.answers:
                key = found.group(1)
                nth = len(re.findall(rf'"{key}":', earlier.shown[: found.start()]))
                return [v for k, v in walk(self.answers[earlier.key]) if k == key][nth]
        raise AssertionError(f"no answer shows {start}")

    def bots(self, command: Command) -> None:
        """`ludotheque bot` plays a whole new match for Ada (as written), and the
        synopsis instantiated with greedy plays it for Bob."""
        opening = self.commands[: self.commands.index(command)]
        create = next(c for c in opening if "/dekal/matches \\" in c.text)
        for step in opening[opening.index(create) : opening.index(create) + 3]:
            assert self.play(step) is None
        synopsis = next(c for c in self.commands if c.key.startswith("ludotheque bot --url URL"))
        bob = instantiate(
            synopsis.text,
            {
                "URL": "http://127.0.0.1:8000",
                "G": "dekal",
                "ID": "$M",
                "T": "$B",
                "random|greedy|mcts": "greedy",
            },
        )
        ada = self.shell.background(command.text, "bot-ada.txt")
        self.shell.ok(f"{bob} > bot-bob.txt", timeout=180)
        self.shell.ok(f"wait {ada}", timeout=60)
        self.shell.pids.remove(ada)
        # each prints the outcome on its last line (its log goes before)
        ada, bob = (self.shell.ok(f"tail -1 bot-{seat}.txt") for seat in ("ada", "bob"))
        assert ada == bob and set(json.loads(ada)["winners"]) <= {0, 1}, (ada, bob)
        return None


def walk(value: object) -> Iterator[tuple[str, object]]:
    """Keys and values in document order."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key, item
            yield from walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item)


def test_the_curl_tour_against_ludotheque_serve_as_written(port_8000, tmp_path):
    commands = commands_run_by(TOUR)
    serve = commands[0].text.split(" && ")[-1]
    assert serve == ".venv/bin/ludotheque serve", "the first command ends by serving"
    (tmp_path / ".venv").symlink_to(VENV)
    # The tour may create many matches until it is dealt the README's cards.
    env = shell_env(LUDOTHEQUE_RATE_LIMIT_CREATE="100000/minute")
    shell = Session(port_8000, tmp_path, env)
    try:
        server = start_and_wait(shell, serve)
        assert shell.ok("curl -s -o /dev/null -w '%{http_code}' localhost:8000/docs") == "200"
        tour = Tour(shell, commands[1:], {})
        # The README's match is dealt a 4 that Ada, lowest, drafts first: its
        # opening is played again, as written, until the deal is that one
        # (about one deal in ten).
        opening = tour.commands[
            : next(i for i, c in enumerate(tour.commands) if "If-Match" in c.text) + 1
        ]
        for _ in range(200):
            problem = next(filter(None, map(tour.play, opening)), None)
            if problem is None:
                break
        else:
            raise AssertionError(f"200 deals and never the README's story: {problem}")
        for command in tour.commands[len(opening) :]:
            problem = tour.play(command)
            assert problem is None, f"{command.text}:\n{problem}"
        interrupt(shell, server)
    finally:
        shell.close()
    assert list((tmp_path / "data").rglob("*.aof")), "matches are kept in ./data"


# --- The other commands ------------------------------------------------------


def test_serve_as_the_readme_writes_it(port_8000, tmp_path):
    """The synopsis with every option given, and `--workers 2`: each serves on
    port 8000, plays a bot's turn, and stops on Ctrl-C."""
    shell = Session(port_8000, tmp_path, shell_env())
    try:
        for command in commands_run_by(SERVE):
            serve = instantiate(command.text, {"N": "1"})
            server = start_and_wait(shell, serve)
            body = '{"players": [{"name": "Ada"}, {"bot": "random"}]}'
            created = answer_of(
                shell.ok(
                    f"curl -s -H 'Content-Type: application/json' -d '{body}' "
                    "localhost:8000/v1/games/dekal/matches"
                )
            )
            view = f"curl -s localhost:8000/v1/games/dekal/matches/{created['id']}"
            shell.ok(
                f"for i in $(seq 200); do {view} | grep -q '\"to_act\":\\[0\\]' && break; "
                "sleep 0.1; done"
            )
            assert answer_of(shell.ok(view))["to_act"] == [0], f"{serve}: the bot did not reveal"
            interrupt(shell, server)
    finally:
        shell.close()


def test_the_other_ludotheque_commands_run_as_written(tmp_path, live, redis_url):
    commands = {c.key.split()[1]: c for c in commands_run_by(CLI) if not is_name(c.key)}
    assert set(commands) == {"worker", "arena", "openapi"}
    env = shell_env()
    shell = Session([], tmp_path, env)
    try:
        # openapi writes the contract where the README says, as committed
        shell.ok(commands["openapi"].text)
        written = (tmp_path / "openapi" / "openapi.json").read_text("utf-8")
        assert written == (ROOT / "openapi" / "openapi.json").read_text("utf-8")

        values = {"G": "dekal", "N": "2", "B": "5", "I": "20", "J": "2", "JSON": "'{}'"}
        out = shell.ok(instantiate(commands["arena"].text, values), timeout=120)
        arena = json.loads(out.splitlines()[-1])  # its log goes before
        assert arena["games"] == 2, arena

        # a worker (REDIS_URL required) plays the bot's turn of a live match
        worker = shell.background(
            f"REDIS_URL={redis_url} " + instantiate(commands["worker"].text, {}), "worker.log"
        )
        created = live.http.post(
            live.url("/v1/games/dekal/matches"),
            json={"players": [{"name": "Ada"}, {"bot": "random"}]},
            timeout=10,
        ).json()
        deadline = time.monotonic() + 30
        while live.http.get(live.url(f"/v1/games/dekal/matches/{created['id']}")).json()[
            "to_act"
        ] != [0]:
            assert time.monotonic() < deadline, shell.ok("cat worker.log")
            time.sleep(0.1)
        shell.ok(f"kill -TERM {worker}; wait {worker}")
        shell.pids.remove(worker)
    finally:
        shell.close()


@pytest.mark.parametrize("index", [0, 1], ids=["python", "typescript"])
def test_the_clients_generate_as_written(index, tmp_path):
    command = commands_run_by(GENERATE)[index]
    if command.text.startswith("npx ") and not shutil.which("npx"):
        message = "needs Node.js and npm: install them (e.g. apt-get install nodejs npm)"
        if os.environ.get("LUDOTHEQUE_REQUIRE_NODE") == "1":
            pytest.fail(message + " (LUDOTHEQUE_REQUIRE_NODE=1)")
        pytest.skip(message)
    (tmp_path / ".venv").symlink_to(VENV)
    (tmp_path / "openapi").mkdir()
    shutil.copy(ROOT / "openapi" / "openapi.json", tmp_path / "openapi")
    shell = Session([], tmp_path, shell_env())
    try:
        shell.ok(command.text, timeout=300)
    finally:
        shell.close()
    if index == 0:
        assert (tmp_path / "ludotheque-api-client" / "setup.py").is_file()
    else:
        assert "export interface paths" in (tmp_path / "ludotheque.d.ts").read_text("utf-8")


def reduced(command: Command) -> str:
    """The command with REDUCED sizes, its output in {tmp}, run by the venv's
    python (what `python` is in an activated venv)."""
    text = re.sub(r"^python ", ".venv/bin/python ", command.key)
    for flag, value in REDUCED.items():
        text = re.sub(rf"(?<=\s){re.escape(flag)} \S+", f"{flag} {value}", text)
    text = re.sub(r"--json \S+", "--json {tmp}/figures.json", text)
    text += "".join(f" {flags}" for module, flags in NARROWED.items() if module in text)
    if text.startswith(".venv/bin/pytest "):
        text += f" -k {RELIABILITY_SAMPLE}"
    return text


def bench_commands() -> list[str]:
    return sorted({reduced(c) for c in commands_run_by(BENCH)})


@pytest.mark.parametrize("text", bench_commands())
def test_the_benchmarks_run_as_written_with_reduced_sizes(text, tmp_path, request):
    if text.startswith(".venv/bin/pytest "):
        cwd = ROOT  # its paths are the repository's
        assert (ROOT / ".venv").exists(), "the test command's .venv is missing"
        env = shell_env()
    else:
        cwd = tmp_path
        (tmp_path / ".venv").symlink_to(VENV)
        env = shell_env(PYTHONPATH=str(ROOT))
    if "bench.archive " in text:  # a database of its own, on the tests' PostgreSQL
        env["LUDOTHEQUE_POSTGRES_ADMIN_URL"] = request.getfixturevalue("postgres_admin_url")
    shell = Session([], cwd, env)
    try:
        out = shell.ok(text.format(tmp=tmp_path), timeout=300)
    finally:
        shell.close()
    assert "Traceback" not in out, out[-3000:]
    if "--json" in text:
        assert json.loads((tmp_path / "figures.json").read_text("utf-8"))


@pytest.mark.parametrize("tool", ["docker", "helm"])
def test_the_deploy_commands_run_where_docker_and_helm_are(tool, tmp_path, tmp_path_factory):
    (command,) = [c for c in commands_run_by(DEPLOY) if c.key.startswith(tool + " ")]
    available = {
        "docker": lambda: subprocess.run(["docker", "info"], capture_output=True).returncode == 0,
        "helm": lambda: shutil.which("helm") is not None,
    }
    if not (shutil.which(tool) and available[tool]()):
        install = {
            "docker": "Docker Engine and its compose plugin (https://docs.docker.com/engine/install/)",
            "helm": "helm (https://helm.sh/docs/intro/install/)",
        }
        message = f"`{command.text}` needs {install[tool]}"
        variable = f"LUDOTHEQUE_REQUIRE_{tool.upper()}"
        if os.environ.get(variable) == "1":
            pytest.fail(f"{message} ({variable}=1)")
        pytest.skip(message)
    if tool == "docker":
        with machine_port_8000(tmp_path_factory):
            up = subprocess.Popen(command.text, shell=True, cwd=ROOT, start_new_session=True)
            try:
                deadline = time.monotonic() + 900
                while not requests_answer("http://127.0.0.1:8000/readyz"):
                    assert up.poll() is None and time.monotonic() < deadline
                    time.sleep(2)
                assert requests.get("http://127.0.0.1:8000/v1/games", timeout=10).ok
            finally:
                subprocess.run("docker compose down -v", shell=True, cwd=ROOT, check=False)
                up.wait(timeout=120)
        return
    # helm installs into an API server that accepts what it is sent
    from tests.deploy.test_helm import FakeKubernetes

    handler = type("Handler", (FakeKubernetes,), {"created": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    kubeconfig = tmp_path / "kubeconfig"
    cluster = {"server": f"http://127.0.0.1:{server.server_port}"}
    kubeconfig.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "fake", "cluster": cluster}],
                "users": [{"name": "fake", "user": {"token": "fake"}}],
                "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}],
                "current-context": "fake",
            }
        )
    )
    try:
        done = subprocess.run(
            command.text,
            shell=True,
            cwd=ROOT,
            env={**os.environ, "KUBECONFIG": str(kubeconfig)},
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 0, done.stderr
    assert {m["kind"] for m in handler.created} >= {"Deployment", "Service", "Secret"}
