"""Clients generated from the committed contract, as a third party makes them:
a Python package (openapi-python-client, no configuration file) installed and
playing a match of every game, a typed program on it checked by mypy --strict;
TypeScript types (openapi-typescript) checked by tsc --strict. Nothing
generated is kept."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.contract.conformance import CONTRACT
from tests.support.servers import LiveServer

HERE = Path(__file__).resolve().parent / "clients"
BIN = Path(sys.executable).parent
OPENAPI_TYPESCRIPT = "openapi-typescript@7.13.0"
TYPESCRIPT = "typescript@5.9.3"


def run(*command: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(c) for c in command],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"{command}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def python_client(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generated package, pip-installed into a target directory; its path."""
    work = tmp_path_factory.mktemp("python-client")
    # the generator formats its output with ruff, which it looks for on PATH
    path = {"PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    run(BIN / "openapi-python-client", "generate", "--path", CONTRACT, "--meta", "setup",
        "--fail-on-warning", cwd=work, env=path)  # fmt: skip
    (generated,) = [p for p in work.iterdir() if p.is_dir()]
    assert generated.name == "ludotheque-api-client", "an ASCII project name, from the title"
    site = work / "site"
    run(sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
        "--target", site, generated, cwd=work)  # fmt: skip
    return site


@pytest.fixture(scope="module")
def server(redis_url: str) -> Iterator[LiveServer]:
    with LiveServer({"REDIS_URL": redis_url}) as server:
        yield server


def test_the_generated_python_client_plays_a_match_of_every_game(python_client, server):
    out = run(sys.executable, HERE / "play_every_game.py", server.base, cwd=HERE,
              env={"PYTHONPATH": str(python_client)})  # fmt: skip
    for game in ("dekal", "pacal", "gaudi", "ducale"):
        assert f"{game}: " in out, out


def test_a_typed_program_on_the_python_client_passes_mypy_strict_and_runs(python_client, server):
    env = {"MYPYPATH": str(python_client), "PYTHONPATH": str(python_client)}
    run(BIN / "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull,
        HERE / "typed_program.py", cwd=HERE, env=env)  # fmt: skip
    out = run(sys.executable, HERE / "typed_program.py", server.base, cwd=HERE, env=env)
    assert out.startswith("discarded ")


def test_typescript_types_pass_tsc_strict(tmp_path):
    node, npm = shutil.which("node"), shutil.which("npm")
    if not (node and npm):
        message = "needs Node.js and npm: install them (e.g. apt-get install nodejs npm)"
        if os.environ.get("LUDOTHEQUE_REQUIRE_NODE") == "1":
            pytest.fail(message + " (LUDOTHEQUE_REQUIRE_NODE=1)")
        pytest.skip(message)
    run(npm, "init", "-y", cwd=tmp_path)
    run(npm, "install", "--no-audit", "--no-fund", "--silent", OPENAPI_TYPESCRIPT, TYPESCRIPT,
        cwd=tmp_path)  # fmt: skip
    bin_ = tmp_path / "node_modules" / ".bin"
    run(bin_ / "openapi-typescript", CONTRACT, "-o", tmp_path / "ludotheque.d.ts", cwd=tmp_path)
    shutil.copy(HERE / "program.ts", tmp_path / "program.ts")
    run(bin_ / "tsc", "--strict", "--noEmit", "--target", "es2020", "--moduleResolution", "node",
        "program.ts", cwd=tmp_path)  # fmt: skip
