"""The dependency rules (issue 32) are import-linter contracts, and they bite.

`.ci/run` runs `lint-imports` on the tree; here, a copy of the packages gets one
forbidden import at a time and `lint-imports` must fail on it, naming the
contract and the import. The contracts in pyproject.toml are checked against
what the issue demands, so that weakening one (a layer dropped, an import
ignored, indirect imports allowed) fails a test instead of passing unseen.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = str(Path(sys.executable).with_name("lint-imports"))
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
    "importlinter"
]
CONTRACTS = {contract["id"]: contract for contract in CONFIG["contracts"]}

# Top to bottom, as the issue and docs/architecture.md give them.
ROOMS = ["cli", "app", "server", "http", "live", "background", "store", "domain"]
WEB_AND_REDIS = {"flask", "werkzeug", "flask_smorest", "webargs", "redis"}
WEAKENING = ("ignore_imports", "allow_indirect_imports", "exhaustive_ignores", "skip_descendants")


def lint_imports(tree: Path, *contracts: str) -> subprocess.CompletedProcess[str]:
    """`lint-imports` on the packages in ``tree``, with the pyproject there."""
    env = {**os.environ, "PYTHONPATH": str(tree), "COLUMNS": "200"}  # no wrapped chains
    command = [LINT_IMPORTS, "--no-cache", "--no-logo"]
    for contract in contracts:
        command += ["--contract", contract]
    return subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, timeout=120)


def copy_of_the_tree(into: Path) -> Path:
    for package in ("service", "engines"):
        shutil.copytree(
            ROOT / package, into / package, ignore=shutil.ignore_patterns("__pycache__", "static")
        )
    shutil.copy(ROOT / "pyproject.toml", into / "pyproject.toml")
    return into


def contracts_of(kind: str) -> list[dict]:
    return [contract for contract in CONTRACTS.values() if contract["type"] == kind]


def forbidding(source: str) -> list[dict]:
    return [c for c in contracts_of("forbidden") if c["source_modules"] == [source]]


# --- The contracts say what the issue demands --------------------------------


def test_the_graph_counts_every_import_of_both_packages():
    assert set(CONFIG["root_packages"]) >= {"service", "engines"}
    assert CONFIG["include_external_packages"] is True, "flask and redis are external"
    assert not CONFIG.get("exclude_type_checking_imports"), "a typing import is an import"


def test_no_contract_is_weakened_by_exceptions():
    """An exception to a rule is a change to this test, not a quiet line in pyproject."""
    allowed = {("service-names-no-game", "allow_indirect_imports")}  # through the registry
    weakened = [
        (name, option)
        for name, contract in CONTRACTS.items()
        for option in WEAKENING
        if contract.get(option) and (name, option) not in allowed
    ]
    assert not weakened
    assert all(contract.get("as_packages", True) for contract in contracts_of("forbidden"))


def test_the_rooms_are_layered_top_to_bottom():
    (contract,) = [c for c in contracts_of("layers") if c.get("containers") == ["service"]]
    assert contract.get("exhaustive") is True, "a new room must take its place"
    rank: dict[str, int] = {}
    for index, layer in enumerate(contract["layers"]):
        for name in re.split(r"[|:]", layer):
            name = name.strip()
            if not name.startswith("("):  # an optional layer: not one the issue names
                rank[name] = index
    assert set(ROOMS) <= set(rank), f"required layers: {ROOMS}"
    assert rank["cli"] <= rank["app"] < rank["server"] < rank["http"]
    assert rank["http"] < rank["live"] < rank["store"]
    assert rank["http"] < rank["background"] < rank["store"]
    assert rank["store"] < rank["domain"]
    assert max(rank.values()) <= rank["domain"] + 1, "below the domain: leaves only"


def test_the_domain_imports_neither_flask_nor_redis_even_indirectly():
    (contract,) = forbidding("service.domain")
    assert set(contract["forbidden_modules"]) >= WEB_AND_REDIS


def test_the_engines_import_nothing_from_the_service():
    assert any("service" in c["forbidden_modules"] for c in forbidding("engines"))


def test_no_cycles_anywhere():
    (contract,) = contracts_of("acyclic_siblings")
    assert set(contract["ancestors"]) >= {"service", "engines"}
    assert contract.get("depth", 10) >= 10, "every level of every package"


def test_lint_imports_checks_these_contracts_on_the_tree():
    """lint-imports prefers setup.cfg and .importlinter to pyproject.toml: the
    contracts it checks on the tree are the ones above, all of them."""
    done = lint_imports(ROOT)
    assert done.returncode in (0, 1), done.stderr
    for contract in CONTRACTS.values():
        assert re.search(rf"^{re.escape(contract['name'])} (KEPT|BROKEN)$", done.stdout, re.M), (
            f"{contract['name']!r} is not checked:\n{done.stdout}"
        )
    kept, broken = re.search(r"Contracts: (\d+) kept, (\d+) broken", done.stdout).groups()
    assert int(kept) + int(broken) == len(CONTRACTS)


# --- A broken rule fails ------------------------------------------------------

# (contract, module, the import added to it, what the report must say: last, the
# import itself, which the report on the untouched tree does not show)
BREAKS = [
    pytest.param(
        "layers",
        "service/domain/problems.py",
        "import service.http.errors",
        ["service.domain is not allowed to import service.http",
         "service.domain.problems -> service.http.errors"],
        id="the domain uses a route module",
    ),
    pytest.param(
        "layers",
        "service/newroom.py",
        "",
        ["not listed as layers", "service.newroom"],
        id="a new room without a layer",
    ),
    pytest.param(
        "domain-no-web-no-redis",
        "service/domain/problems.py",
        "import flask",
        ["service.domain is not allowed to import flask", "service.domain.problems -> flask"],
        id="the domain imports flask",
    ),
    pytest.param(
        "domain-no-web-no-redis",
        "service/domain/problems.py",
        "import service.store.sentinel",
        ["service.domain is not allowed to import redis", "service.store.sentinel -> redis",
         "service.domain.problems -> service.store.sentinel"],
        id="the domain reaches redis through the store",
    ),
    pytest.param(
        "engines-no-service",
        "engines/core.py",
        "from service import app",
        ["engines is not allowed to import service", "engines.core -> service.app"],
        id="an engine imports the service",
    ),
    pytest.param(
        "games-independent",
        "engines/dekal/rules.py",
        "import engines.pacal.rules",
        ["engines.dekal.rules -> engines.pacal.rules"],
        id="a game imports another",
    ),
    pytest.param(
        "service-names-no-game",
        "service/live/tickets.py",
        "import engines.dekal",
        ["service.live.tickets -> engines.dekal"],
        id="the service names a game",
    ),
    pytest.param(
        "acyclic",
        "engines/core.py",
        "import engines.dekal.rules",
        ["No cycles are allowed in engines."],
        id="a cycle between the engines' packages",
    ),
]  # fmt: skip


@pytest.fixture(scope="module")
def before(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The report on the untouched copy: what a break must add to."""
    return lint_imports(copy_of_the_tree(tmp_path_factory.mktemp("untouched"))).stdout


@pytest.mark.parametrize(("contract", "module", "line", "reported"), BREAKS)
def test_a_forbidden_import_fails_lint_imports(tmp_path, before, contract, module, line, reported):
    tree = copy_of_the_tree(tmp_path)
    path = tree / module
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    path.write_text(f"{text}\n{line}\n", encoding="utf-8")
    assert reported[-1] not in before, "reported before the import was added"
    done = lint_imports(tree, contract)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{CONTRACTS[contract]['name']} BROKEN" in done.stdout
    missing = [said for said in reported if said not in done.stdout]
    assert not missing, done.stdout
