"""The Helm chart in helm/ludotheque, checked without a helm binary.

No helm binary is reachable here (neither Debian's packages nor PyPI carry one
for this Python), so the chart is rendered by `GoTemplate` below: a small
interpreter of exactly the Go text/template subset and the Sprig functions the
chart uses, following Helm's own rules (values are float64 numbers, a missing
map key renders as nothing, a field of nothing is an error, `toYaml` trims its
last newline). Anything outside that subset raises instead of being guessed, so
a template that uses a new construct fails here until the interpreter learns it.

The rendered objects are then validated against the Kubernetes JSON schemas
(kubernetes-validate, strict: an unknown field fails) for the oldest and the
newest Kubernetes version the chart is checked for, and checked structurally
for what schemas cannot see: selectors that match their pods, probes on the
right paths and port, the restrictive security context, the Secret or
existingSecret wiring. What this leaves unverified is listed in docs/operators/deploy.md.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import threading
import tomllib
from collections.abc import Callable, Iterator
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml

from service.settings import problems
from tests.support.servers import LiveServer

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "helm" / "ludotheque"
KUBERNETES_VERSIONS = ["1.25.0", "1.33.0"]
REDIS_URL = "redis://:s3cret@redis-master.data.svc:6379/0"
DATABASE_URL = "postgresql://ludotheque:pg-s3cret@postgres.data.svc:5432/ludotheque"


# --- A Go text/template subset, as Helm runs it ----------------------------


class TemplateError(Exception):
    """A template that Helm would reject, or one outside the subset."""


class Struct(dict):
    """A Go struct (.Chart, .Release, .Template): an unknown field is an error."""

    def field(self, name: str) -> Any:
        if name not in self:
            raise TemplateError(f"can't evaluate field {name} in a struct")
        return self[name]


class GoFloat(float):
    """A number from values or Chart.yaml: Helm reads them as float64."""


def go_float(value: float) -> str:
    """fmt's %v of a float64: the shortest %g, exponent form from 1e+06 on."""
    if value == 0:
        return "0"
    if math.isinf(value) or math.isnan(value):
        raise TemplateError("printing an infinite or NaN number")
    sign, digits, exponent = Decimal(repr(float(value))).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    point = len(digits) + exponent  # position of the decimal point in `digits`
    power = point - 1
    minus = "-" if sign else ""
    if power < -4 or power >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{minus}{mantissa}e{'-' if power < 0 else '+'}{abs(power):02d}"
    if point <= 0:
        return f"{minus}0.{'0' * -point}{text}"
    if point >= len(text):
        return minus + text + "0" * (point - len(text))
    return f"{minus}{text[:point]}.{text[point:]}"


def go_value(value: Any) -> str:
    """How fmt's %v (and so a template action) prints a value."""
    if value is None:
        return ""  # Helm removes the "<no value>" that Go prints
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, GoFloat):
        return go_float(value)
    if isinstance(value, int | str):
        return str(value)
    raise TemplateError(f"printing a {type(value).__name__} is outside the subset")


def go_quote(text: str) -> str:
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        raise TemplateError("quoting control characters is outside the subset")
    return json.dumps(text, ensure_ascii=False)


def go_truth(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, bool | int | float | str | list | dict):
        return bool(value)
    return True


def to_string(value: Any) -> str:
    """Sprig's strval: strings as they are, anything else as fmt's %v."""
    if value is None:
        return "<nil>"
    return value if isinstance(value, str) else go_value(value)


class _YamlDumper(yaml.SafeDumper):
    """sigs.k8s.io/yaml writes a whole float64 as an integer."""


_YamlDumper.add_representer(
    GoFloat,
    lambda dumper, value: (
        dumper.represent_int(int(value))
        if value.is_integer()
        else dumper.represent_float(float(value))
    ),
)


def to_yaml(value: Any) -> str:
    if value is None:
        return "null"
    if not isinstance(value, dict | list):
        raise TemplateError("toYaml of a scalar is outside the subset")
    return yaml.dump(value, Dumper=_YamlDumper, default_flow_style=False, sort_keys=True).rstrip(
        "\n"
    )


def go_sprintf(form: str, *args: Any) -> str:
    """fmt.Sprintf for the verbs %s, %v and %%."""
    out, rest = [], list(args)
    for piece in re.split(r"(%.)", form):
        if piece in ("%s", "%v"):
            if not rest:
                raise TemplateError(f"printf {form!r}: missing argument")
            arg = rest.pop(0)
            if piece == "%s" and not isinstance(arg, str):
                raise TemplateError(f"printf %s of a {type(arg).__name__}")
            out.append(go_value(arg))
        elif piece == "%%":
            out.append("%")
        elif piece.startswith("%") and len(piece) == 2:
            raise TemplateError(f"printf verb {piece} is outside the subset")
        else:
            out.append(piece)
    if rest:
        raise TemplateError(f"printf {form!r}: extra arguments")
    return "".join(out)


def go_sprint(*args: Any) -> str:
    """fmt.Sprint: a space between operands when neither is a string."""
    out = []
    for i, arg in enumerate(args):
        if i and not isinstance(arg, str) and not isinstance(args[i - 1], str):
            out.append(" ")
        out.append(go_value(arg))
    return "".join(out)


def go_empty(value: Any) -> bool:
    return not go_truth(value)


def go_eq(first: Any, *others: Any) -> bool:
    for other in others:
        if isinstance(first, str) != isinstance(other, str):
            raise TemplateError("eq: incompatible types for comparison")
        if first == other:
            return True
    return False


def go_index(item: Any, *keys: Any) -> Any:
    for key in keys:
        if isinstance(item, dict):
            item = item.get(key)
        elif isinstance(item, list) and isinstance(key, int):
            if not 0 <= key < len(item):
                raise TemplateError(f"index out of range: {key}")
            item = item[key]
        else:
            raise TemplateError(f"can't index item of type {type(item).__name__}")
    return item


def sprig_trunc(count: int, text: str) -> str:
    if count < 0 and len(text) + count > 0:
        return text[len(text) + count :]
    if count >= 0 and len(text) > count:
        return text[:count]
    return text


def helm_required(message: str, value: Any) -> Any:
    if value is None or value == "":
        raise TemplateError(message)
    return value


def sprig_dict(*pairs: Any) -> dict:
    if len(pairs) % 2:
        raise TemplateError("dict: odd number of arguments")
    return {to_string(pairs[i]): pairs[i + 1] for i in range(0, len(pairs), 2)}


def indent(width: int, text: str) -> str:
    pad = " " * width
    return pad + text.replace("\n", "\n" + pad)


def fail(message: str) -> None:
    raise TemplateError(message)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "and": lambda *args: next((a for a in args if not go_truth(a)), args[-1]),
    "or": lambda *args: next((a for a in args if go_truth(a)), args[-1]),
    "not": lambda value: not go_truth(value),
    "eq": go_eq,
    "ne": lambda a, b: not go_eq(a, b),
    "index": go_index,
    "print": go_sprint,
    "printf": go_sprintf,
    "default": lambda fallback, value=None: fallback if go_empty(value) else value,
    "empty": go_empty,
    "required": helm_required,
    "fail": fail,
    "quote": lambda *args: " ".join(go_quote(to_string(a)) for a in args if a is not None),
    "toString": to_string,
    "toYaml": to_yaml,
    "indent": indent,
    "nindent": lambda width, text: "\n" + indent(width, text),
    "trunc": sprig_trunc,
    "trimSuffix": lambda suffix, text: text.removesuffix(suffix),
    "contains": lambda part, text: part in text,
    "hasPrefix": lambda prefix, text: to_string(text).startswith(prefix),
    "replace": lambda old, new, text: text.replace(old, new),
    "sha256sum": lambda text: hashlib.sha256(text.encode()).hexdigest(),
    "dict": sprig_dict,
    "list": lambda *items: list(items),
}

# {{- and -}} trim the whitespace beside an action; comments are {{/* ... */}}.
ACTION = re.compile(r"\{\{(-[ \t\r\n])?(.*?)([ \t\r\n]-)?\}\}", re.S)
TOKEN = re.compile(
    r"""\s*(?:
      (?P<string>"(?:[^"\\\n]|\\.)*")
    | (?P<raw>`[^`]*`)
    | (?P<number>-?\d+)(?![\w.])
    | (?P<declare>:=)
    | (?P<punct>[|(),])
    | (?P<var>\$[A-Za-z0-9_]*(?:\.[A-Za-z_]\w*)*)
    | (?P<field>(?:\.[A-Za-z_]\w*)+|\.)
    | (?P<ident>[A-Za-z_]\w*)
    )""",
    re.X,
)


class Pipe:
    def __init__(self, declare: list[str], commands: list[list[tuple]]) -> None:
        self.declare = declare
        self.commands = commands


def lex(source: str) -> Iterator[tuple[str, str]]:
    position, trim_next = 0, False
    for action in ACTION.finditer(source):
        text = source[position : action.start()]
        if trim_next:
            text = text.lstrip(" \t\r\n")
        if action.group(1):
            text = text.rstrip(" \t\r\n")
        yield "text", text
        body = action.group(2).strip()
        if not (body.startswith("/*") and body.endswith("*/")):
            yield "action", body
        position, trim_next = action.end(), bool(action.group(3))
    text = source[position:]
    yield "text", text.lstrip(" \t\r\n") if trim_next else text


def parse_pipe(source: str) -> Pipe:
    tokens, position = [], 0
    while position < len(source.rstrip()):
        match = TOKEN.match(source, position)
        if not match:
            raise TemplateError(f"cannot read {source[position:]!r}")
        kind = match.lastgroup
        assert kind is not None
        tokens.append((kind, match.group(kind)))
        position = match.end()
    pipe, rest = _pipe(tokens)
    if rest:
        raise TemplateError(f"unexpected {rest[0][1]!r} in {source!r}")
    return pipe


def _pipe(tokens: list[tuple[str, str]]) -> tuple[Pipe, list[tuple[str, str]]]:
    declare: list[str] = []
    names = tokens[:4]
    if len(names) >= 2 and names[0][0] == "var" and names[1] == ("declare", ":="):
        declare, tokens = [names[0][1]], tokens[2:]
    elif (
        len(names) >= 4
        and names[0][0] == "var"
        and names[1] == ("punct", ",")
        and names[2][0] == "var"
        and names[3] == ("declare", ":=")
    ):
        declare, tokens = [names[0][1], names[2][1]], tokens[4:]
    commands: list[list[tuple]] = [[]]
    while tokens and tokens[0] != ("punct", ")"):
        kind, text = tokens.pop(0)
        if (kind, text) == ("punct", "|"):
            commands.append([])
        elif (kind, text) == ("punct", "("):
            inner, tokens = _pipe(tokens)
            if not tokens:
                raise TemplateError("unclosed (")
            tokens = tokens[1:]
            commands[-1].append(("pipe", inner))
        elif kind == "string":
            commands[-1].append(("value", json.loads(text)))
        elif kind == "raw":
            commands[-1].append(("value", text[1:-1]))
        elif kind == "number":
            commands[-1].append(("value", int(text)))
        elif kind == "ident" and text in ("true", "false", "nil"):
            commands[-1].append(("value", {"true": True, "false": False, "nil": None}[text]))
        elif kind in ("var", "field", "ident"):
            commands[-1].append((kind, text))
        else:
            raise TemplateError(f"{text!r} is outside the subset")
    if any(not command for command in commands):
        raise TemplateError("empty command in a pipeline")
    return Pipe(declare, commands), tokens


def parse(items: list[tuple[str, str]], defines: dict[str, list]) -> list:
    """The node tree of one file; `define` blocks go to `defines`."""
    nodes, ending = _nodes(items, defines)
    if ending is not None:
        raise TemplateError(f"unexpected {{{{{ending}}}}}")
    return nodes


def _nodes(items: list[tuple[str, str]], defines: dict[str, list]) -> tuple[list, str | None]:
    nodes: list = []
    while items:
        kind, text = items.pop(0)
        if kind == "text":
            if text:
                nodes.append(("text", text))
            continue
        word, _, rest = text.partition(" ")
        if word in ("end", "else"):
            if rest:
                raise TemplateError(f"{{{{{text}}}}} is outside the subset")
            return nodes, word
        if word in ("if", "with", "range"):
            body, ending = _nodes(items, defines)
            otherwise: list = []
            if ending == "else":
                otherwise, ending = _nodes(items, defines)
            if ending != "end":
                raise TemplateError(f"{{{{{text}}}}} has no {{{{end}}}}")
            nodes.append((word, parse_pipe(rest), body, otherwise))
        elif word == "define":
            body, ending = _nodes(items, defines)
            if ending != "end":
                raise TemplateError(f"{{{{{text}}}}} has no {{{{end}}}}")
            defines[json.loads(rest.strip())] = body
        elif word in ("template", "block", "break", "continue"):
            raise TemplateError(f"{{{{{word}}}}} is outside the subset")
        else:
            nodes.append(("action", parse_pipe(text)))
    return nodes, None


class GoTemplate:
    """The chart's templates, rendered as `helm template` would."""

    def __init__(self, chart: Path) -> None:
        self.chart = chart
        # Helm keeps files and `define`s in one namespace: `include` reaches both.
        self.templates: dict[str, list] = {}
        self.files: list[str] = []
        for path in sorted((chart / "templates").iterdir()):
            name = f"{chart.name}/templates/{path.name}"
            self.templates[name] = parse(
                list(lex(path.read_text(encoding="utf-8"))), self.templates
            )
            if not path.name.startswith("_"):
                self.files.append(name)

    def render(self, values: dict[str, Any], release: str = "games") -> dict[str, str]:
        metadata = yaml.safe_load((self.chart / "Chart.yaml").read_text(encoding="utf-8"))
        chart = Struct(
            Name=metadata["name"],
            Version=metadata["version"],
            AppVersion=metadata.get("appVersion", ""),
            Description=metadata.get("description", ""),
            Type=metadata.get("type", ""),
            KubeVersion=metadata.get("kubeVersion", ""),
            APIVersion=metadata["apiVersion"],
        )
        release_info = Struct(
            Name=release,
            Namespace="games",
            Service="Helm",
            IsInstall=True,
            IsUpgrade=False,
            Revision=1,
        )
        defaults = yaml.safe_load((self.chart / "values.yaml").read_text(encoding="utf-8"))
        merged = as_go_numbers(coalesce(defaults, values))
        out = {}
        for name in self.files:
            context = {
                "Values": merged,
                "Chart": chart,
                "Release": release_info,
                "Template": Struct(Name=name, BasePath=f"{self.chart.name}/templates"),
            }
            out[name] = self.include(name, context)
        return out

    def include(self, name: str, data: Any) -> str:
        if name not in self.templates:
            raise TemplateError(f'no template "{name}" associated with template "gotpl"')
        return self._run(self.templates[name], data, [("$", data)])

    def _run(self, nodes: list, dot: Any, scope: list[tuple[str, Any]]) -> str:
        out = []
        for node in nodes:
            kind = node[0]
            if kind == "text":
                out.append(node[1])
            elif kind == "action":
                value = self._pipe(node[1], dot, scope)
                if not node[1].declare:
                    out.append(go_value(value))
            elif kind in ("if", "with"):
                _, pipe, body, otherwise = node
                mark = len(scope)
                value = self._pipe(pipe, dot, scope)
                if go_truth(value):
                    out.append(self._run(body, value if kind == "with" else dot, scope))
                else:
                    out.append(self._run(otherwise, dot, scope))
                del scope[mark:]
            elif kind == "range":
                out.append(self._range(node, dot, scope))
        return "".join(out)

    def _range(self, node: tuple, dot: Any, scope: list[tuple[str, Any]]) -> str:
        _, pipe, body, otherwise = node
        declare, pipe.declare = pipe.declare, []
        try:
            value = self._pipe(pipe, dot, scope)
        finally:
            pipe.declare = declare
        if isinstance(value, dict):
            pairs = [(key, value[key]) for key in sorted(value)]
        elif isinstance(value, list):
            pairs = list(enumerate(value))
        elif value is None:
            pairs = []
        else:
            raise TemplateError(f"range can't iterate over {value!r}")
        if not pairs:
            return self._run(otherwise, dot, scope)
        out = []
        for key, element in pairs:
            mark = len(scope)
            if len(declare) == 1:
                scope.append((declare[0], element))
            elif len(declare) == 2:
                scope.extend([(declare[0], key), (declare[1], element)])
            out.append(self._run(body, element, scope))
            del scope[mark:]
        return "".join(out)

    def _pipe(self, pipe: Pipe, dot: Any, scope: list[tuple[str, Any]]) -> Any:
        value: Any = _NOTHING
        for command in pipe.commands:
            value = self._command(command, dot, scope, value)
        for name in pipe.declare:
            scope.append((name, value))
        return value

    def _command(self, command: list[tuple], dot: Any, scope: list, piped: Any) -> Any:
        head = command[0]
        if head[0] == "ident":
            args = [self._operand(operand, dot, scope) for operand in command[1:]]
            if piped is not _NOTHING:
                args.append(piped)
            return self._call(head[1], args)
        if len(command) > 1 or piped is not _NOTHING:
            raise TemplateError(f"can't give argument to non-function {head[1]!r}")
        return self._operand(head, dot, scope)

    def _operand(self, operand: tuple, dot: Any, scope: list) -> Any:
        kind, text = operand
        if kind == "value":
            return text
        if kind == "pipe":
            return self._pipe(text, dot, scope)
        if kind == "ident":
            return self._call(text, [])
        if kind == "field":
            return dot if text == "." else walk(dot, text.split(".")[1:])
        name, *fields = text.split(".")
        for declared, value in reversed(scope):
            if declared == name:
                return walk(value, fields)
        raise TemplateError(f"undefined variable {name}")

    def _call(self, name: str, args: list[Any]) -> Any:
        if name == "include":
            return self.include(*args)
        if name not in FUNCTIONS:
            raise TemplateError(f"function {name!r} is outside the subset")
        try:
            return FUNCTIONS[name](*args)
        except TypeError as wrong:
            raise TemplateError(f"{name}: {wrong}") from None


_NOTHING = object()


def walk(value: Any, fields: list[str]) -> Any:
    for name in fields:
        if value is None:
            raise TemplateError(f"nil pointer evaluating interface {{}}.{name}")
        if isinstance(value, Struct):
            value = value.field(name)
        elif isinstance(value, dict):
            value = value.get(name)
        else:
            raise TemplateError(f"can't evaluate field {name} in type {type(value).__name__}")
    return value


def coalesce(defaults: Any, overrides: Any) -> Any:
    """Helm's merge of user values over the chart's: maps merge, null deletes."""
    if not isinstance(defaults, dict) or not isinstance(overrides, dict):
        return copy.deepcopy(overrides)
    merged = copy.deepcopy(defaults)
    for key, value in overrides.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = coalesce(merged.get(key), value)
    return merged


def as_go_numbers(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: as_go_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [as_go_numbers(item) for item in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return GoFloat(value)
    return value


# --- The interpreter against Go's and Helm's documented behaviour ----------


@pytest.mark.parametrize(
    ("number", "printed"),
    [
        (8000, "8000"),
        (604800, "604800"),
        (1000000, "1e+06"),
        (0.5, "0.5"),
        (1234567, "1.234567e+06"),
    ],
)
def test_numbers_from_values_print_as_go_float64(number, printed):
    assert go_float(number) == printed


def test_trim_markers_eat_whitespace_and_newlines():
    source = 'a  \n  {{- "b" -}}  \n c{{/* note */}}\n{{ "d" }}'
    assert "".join(text for kind, text in lex(source) if kind == "text") == "ac\n"
    assert [text for kind, text in lex(source) if kind == "action"] == ['"b"', '"d"']


def test_a_field_of_a_missing_value_is_an_error_as_in_helm(tmp_path):
    (tmp_path / "templates").mkdir()
    (tmp_path / "Chart.yaml").write_text("apiVersion: v2\nname: t\nversion: 0.1.0\n")
    (tmp_path / "values.yaml").write_text("a: {}\n")
    (tmp_path / "templates" / "x.yaml").write_text("v: {{ .Values.a.b }}|{{ .Values.a.b.c }}\n")
    with pytest.raises(TemplateError, match="nil pointer"):
        GoTemplate(tmp_path).render({})


def test_constructs_outside_the_subset_are_refused():
    with pytest.raises(TemplateError):
        parse(list(lex('{{ template "x" . }}')), {})
    with pytest.raises(TemplateError):
        GoTemplate.__new__(GoTemplate)._call("lookup", [])


# --- The chart --------------------------------------------------------------


@pytest.fixture(scope="module")
def chart() -> GoTemplate:
    return GoTemplate(CHART)


def render(chart: GoTemplate, values: dict[str, Any]) -> list[dict[str, Any]]:
    """The rendered objects, as Helm splits manifests (NOTES.txt is not one)."""
    objects = []
    for name, text in chart.render(values).items():
        if name.endswith("NOTES.txt"):
            continue
        objects.extend(doc for doc in yaml.safe_load_all(text) if doc is not None)
    return objects


def by_kind(objects: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == kind}


CASES: dict[str, dict[str, Any]] = {
    "defaults": {"redis": {"url": REDIS_URL}},
    "existing-secret-ingress-fixed-replicas": {
        "redis": {"existingSecret": "ludotheque-redis", "existingSecretKey": "url"},
        "ingress": {
            "enabled": True,
            "className": "nginx",
            "annotations": {"nginx.ingress.kubernetes.io/proxy-read-timeout": "3600"},
            "hosts": ["play.example.org"],
            "tls": [{"secretName": "play-tls", "hosts": ["play.example.org"]}],
        },
        "api": {
            "autoscaling": {"enabled": False},
            "podAnnotations": {"prometheus.io/scrape": "true"},
            "nodeSelector": {"kubernetes.io/os": "linux"},
            "tolerations": [{"key": "games", "operator": "Exists", "effect": "NoSchedule"}],
            "topologySpreadConstraints": [
                {
                    "maxSkew": 1,
                    "topologyKey": "kubernetes.io/hostname",
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "labelSelector": {"matchLabels": {"app.kubernetes.io/component": "api"}},
                }
            ],
        },
        "worker": {"autoscaling": {"enabled": True}, "podLabels": {"team": "games"}},
        "imagePullSecrets": [{"name": "registry"}],
        "config": {"REDIS_CLUSTER": "1"},
    },
    "database-record-key": {
        "redis": {"url": REDIS_URL},
        "database": {"url": DATABASE_URL},
        "recordKey": {"existingSecret": "ludo-record-key"},
        "imagePullSecrets": [{"name": "registry"}],
    },
    "no-worker-no-budgets": {
        "redis": {"url": REDIS_URL},
        "worker": {"enabled": False, "autoscaling": {"enabled": True}},
        "api": {
            "podDisruptionBudget": {"enabled": False},
            "preStopSleepSeconds": 0,
            "metricsPort": 0,
        },
        "fullnameOverride": "ludo",
    },
}


@pytest.fixture(scope="module", params=list(CASES))
def case(request, chart) -> tuple[str, list[dict[str, Any]]]:
    return request.param, render(chart, CASES[request.param])


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_every_object_is_valid_against_the_kubernetes_schemas(case, version):
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    _, objects = case
    assert objects
    for manifest in objects:
        kubernetes_validate.validate(manifest, version, strict=True)


def test_the_default_release_has_every_object_the_issue_asks_for(chart):
    objects = render(chart, CASES["defaults"])
    kinds = sorted((o["kind"], o["metadata"]["name"]) for o in objects)
    assert kinds == [
        ("ConfigMap", "games-ludotheque"),
        ("Deployment", "games-ludotheque-api"),
        ("Deployment", "games-ludotheque-worker"),
        ("HorizontalPodAutoscaler", "games-ludotheque-api"),
        ("PodDisruptionBudget", "games-ludotheque-api"),
        ("PodDisruptionBudget", "games-ludotheque-worker"),
        ("Secret", "games-ludotheque"),
        ("Service", "games-ludotheque"),
    ]


def test_without_a_redis_url_or_existing_secret_rendering_fails(chart):
    with pytest.raises(TemplateError, match=r"redis\.url"):
        chart.render({})


def pod_specs(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {name: d["spec"]["template"] for name, d in by_kind(objects, "Deployment").items()}


def test_pods_run_non_root_on_a_read_only_root_with_a_memory_tmp(case):
    _, objects = case
    user = dockerfile_user()
    for name, template in pod_specs(objects).items():
        spec = template["spec"]
        assert spec["securityContext"]["runAsNonRoot"] is True, name
        assert spec["securityContext"]["runAsUser"] == user, "the image's USER"
        assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        assert spec["automountServiceAccountToken"] is False
        tmp = {v["name"]: v for v in spec["volumes"]}["tmp"]
        assert tmp["emptyDir"]["medium"] == "Memory"
        for container in spec["containers"]:
            security = container["securityContext"]
            assert security["runAsNonRoot"] is True
            assert security["readOnlyRootFilesystem"] is True
            assert security["allowPrivilegeEscalation"] is False
            assert security["capabilities"] == {"drop": ["ALL"]}
            assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"]
            assert container["resources"]["requests"] and container["resources"]["limits"]


def dockerfile_user() -> int:
    users = re.findall(r"^USER\s+(\d+)", (ROOT / "Dockerfile").read_text(encoding="utf-8"), re.M)
    assert users, "the Dockerfile's USER is numeric"
    return int(users[-1])


def test_api_probes_hit_healthz_and_readyz_on_the_port_gunicorn_binds(case):
    _, objects = case
    api = next(t for n, t in pod_specs(objects).items() if n.endswith("-api"))
    (container,) = api["spec"]["containers"]
    port = next(p for p in container["ports"] if p["name"] == "http")
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["LUDOTHEQUE_BIND"] == f"0.0.0.0:{port['containerPort']}"
    assert int(env["LUDOTHEQUE_WORKERS"]) >= 1
    assert env["LUDOTHEQUE_WORKER_TMP_DIR"] == "/tmp"
    assert container["args"] == ["start"]
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": port["name"]}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": port["name"]}
    assert container["startupProbe"]["httpGet"]["path"] == "/healthz"


def test_metrics_are_served_apart_on_a_port_nothing_routes(case):
    name, objects = case
    api = next(t for n, t in pod_specs(objects).items() if n.endswith("-api"))
    (container,) = api["spec"]["containers"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    env = {e["name"]: e.get("value") for e in container["env"]}
    if name == "no-worker-no-budgets":  # api.metricsPort: 0, /metrics on the API's port
        assert set(ports) == {"http"} and env["LUDOTHEQUE_METRICS_BIND"] == ""
        return
    assert ports["metrics"] == 9100 and ports["metrics"] != ports["http"]
    assert env["LUDOTHEQUE_METRICS_BIND"] == "0.0.0.0:9100"
    (service,) = by_kind(objects, "Service").values()
    assert [p["targetPort"] for p in service["spec"]["ports"]] == ["http"]
    for ingress in by_kind(objects, "Ingress").values():
        for rule in ingress["spec"]["rules"]:
            for path in rule["http"]["paths"]:
                assert path["backend"]["service"]["port"] == {"name": "http"}


def test_the_worker_runs_the_worker_command(chart):
    objects = render(chart, CASES["defaults"])
    worker = pod_specs(objects)["games-ludotheque-worker"]
    (container,) = worker["spec"]["containers"]
    assert container["args"] == ["worker"]
    assert "ports" not in container


def test_redis_url_comes_from_the_chart_secret_or_the_existing_one(chart):
    objects = render(chart, CASES["defaults"])
    (secret,) = by_kind(objects, "Secret").values()
    assert secret["stringData"] == {"REDIS_URL": REDIS_URL}
    for template in pod_specs(objects).values():
        (container,) = template["spec"]["containers"]
        reference = {e["name"]: e for e in container["env"]}["REDIS_URL"]
        assert reference["valueFrom"]["secretKeyRef"] == {
            "name": secret["metadata"]["name"],
            "key": "REDIS_URL",
        }
        assert "checksum/secret" in template["metadata"]["annotations"]

    objects = render(chart, CASES["existing-secret-ingress-fixed-replicas"])
    assert not by_kind(objects, "Secret")
    for template in pod_specs(objects).values():
        (container,) = template["spec"]["containers"]
        reference = {e["name"]: e for e in container["env"]}["REDIS_URL"]
        assert reference["valueFrom"]["secretKeyRef"] == {"name": "ludotheque-redis", "key": "url"}
        assert "checksum/secret" not in template["metadata"]["annotations"]


def test_the_record_key_is_a_secret_mounted_read_only_into_the_api_and_the_worker(chart):
    """The workers sign the records they archive: with the key the API
    publishes at GET /v1/record-key, so mounted the same way in both."""
    values = {**CASES["defaults"], "recordKey": {"existingSecret": "ludo-record-key"}}
    specs = pod_specs(render(chart, values))
    assert set(specs) == {"games-ludotheque-api", "games-ludotheque-worker"}
    for template in specs.values():
        (container,) = template["spec"]["containers"]
        env = {e["name"]: e.get("value") for e in container["env"]}
        assert env["LUDOTHEQUE_RECORD_KEY_FILE"] == "/etc/ludotheque/record-key/record-key.pem"
        (mount,) = [m for m in container["volumeMounts"] if m["name"] == "record-key"]
        assert mount == {
            "name": "record-key",
            "mountPath": "/etc/ludotheque/record-key",
            "readOnly": True,
        }
        (volume,) = [v for v in template["spec"]["volumes"] if v["name"] == "record-key"]
        assert volume["secret"] == {"secretName": "ludo-record-key", "defaultMode": 0o400}
    # without it, no key file: the processes keep one in Redis (docs/configuration.md)
    for template in pod_specs(render(chart, CASES["defaults"])).values():
        (container,) = template["spec"]["containers"]
        assert "LUDOTHEQUE_RECORD_KEY_FILE" not in {e["name"] for e in container["env"]}
        assert "record-key" not in {v["name"] for v in template["spec"]["volumes"]}


# --- The archive's database ---------------------------------------------------


def env_of(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in container.get("env", [])}


def hooks(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in objects if "helm.sh/hook" in o["metadata"].get("annotations", {})]


def test_the_database_url_is_in_a_secret_and_reaches_the_api_and_the_worker(chart):
    objects = render(chart, CASES["database-record-key"])
    secret = by_kind(objects, "Secret")["games-ludotheque"]
    assert secret["stringData"] == {
        "REDIS_URL": REDIS_URL,
        "LUDOTHEQUE_DATABASE_URL": DATABASE_URL,
    }
    assert (
        "checksum/secret" in pod_specs(objects)["games-ludotheque-api"]["metadata"]["annotations"]
    )
    # the password is in Secrets only: not the ConfigMap, a pod or the Job
    for manifest in objects:
        if manifest["kind"] != "Secret":
            assert "pg-s3cret" not in json.dumps(manifest), manifest["kind"]
    assert not any("DATABASE" in name for name in config_map(objects))
    specs = pod_specs(objects)
    assert set(specs) == {"games-ludotheque-api", "games-ludotheque-worker"}
    for template in specs.values():
        (container,) = template["spec"]["containers"]
        assert env_of(container)["LUDOTHEQUE_DATABASE_URL"]["valueFrom"] == {
            "secretKeyRef": {"name": "games-ludotheque", "key": "LUDOTHEQUE_DATABASE_URL"}
        }

    # a Secret of one's own: the chart stores no URL of the database
    values = {
        **CASES["database-record-key"],
        "database": {"existingSecret": "ludo-db", "existingSecretKey": "url"},
    }
    objects = render(chart, values)
    assert by_kind(objects, "Secret")["games-ludotheque"]["stringData"] == {"REDIS_URL": REDIS_URL}
    for template in pod_specs(objects).values():
        (container,) = template["spec"]["containers"]
        assert env_of(container)["LUDOTHEQUE_DATABASE_URL"]["valueFrom"] == {
            "secretKeyRef": {"name": "ludo-db", "key": "url"}
        }
    # both URLs in Secrets of one's own: the chart creates no Secret at all
    both = {**values, "redis": {"existingSecret": "ludotheque-redis"}}
    assert set(by_kind(render(chart, both), "Secret")) == set()


def test_a_database_url_is_refused_in_the_configmap_and_sqlite_refused(chart):
    in_config = {**CASES["defaults"], "config": {"LUDOTHEQUE_DATABASE_URL": DATABASE_URL}}
    with pytest.raises(TemplateError, match=r"database\.url or database\.existingSecret"):
        chart.render(in_config)
    sqlite = {**CASES["defaults"], "database": {"url": "sqlite:////data/ludotheque.db"}}
    with pytest.raises(TemplateError, match="PostgreSQL"):
        chart.render(sqlite)


def test_with_a_database_a_hook_job_runs_ludotheque_migrate_before_the_deployments(chart):
    objects = render(chart, CASES["database-record-key"])
    (job,) = by_kind(objects, "Job").values()
    annotations = job["metadata"]["annotations"]
    assert annotations["helm.sh/hook"] == "pre-install,pre-upgrade"
    assert set(annotations["helm.sh/hook-delete-policy"].split(",")) == {
        "before-hook-creation",
        "hook-succeeded",
    }
    # hooks run before the release's other objects (the Deployments), by weight
    assert [o["kind"] for o in sorted(hooks(objects), key=hook_weight)] == ["Secret", "Job"]
    assert {o["kind"] for o in objects if o not in hooks(objects)} >= {"Deployment", "Secret"}
    spec = job["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    api = pod_specs(objects)["games-ludotheque-api"]["spec"]
    assert container["image"] == api["containers"][0]["image"], "the release's image"
    assert container["args"] == ["migrate"]
    assert spec["restartPolicy"] == "Never" and job["spec"]["backoffLimit"] >= 1
    assert spec["imagePullSecrets"] == [{"name": "registry"}]
    assert spec["securityContext"] == api["securityContext"]
    assert container["securityContext"] == api["containers"][0]["securityContext"]
    assert spec["automountServiceAccountToken"] is False
    assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"]
    assert container["resources"]["requests"] and container["resources"]["limits"]
    # a pre-install hook runs before the chart's Secret exists: a hook Secret of its own
    reference = env_of(container)["LUDOTHEQUE_DATABASE_URL"]["valueFrom"]["secretKeyRef"]
    own = by_kind(hooks(objects), "Secret")[reference["name"]]
    assert own["stringData"][reference["key"]] == DATABASE_URL
    assert set(env_of(container)) == {"LUDOTHEQUE_DATABASE_URL"}, "it needs no Redis"

    values = {**CASES["database-record-key"], "database": {"existingSecret": "ludo-db"}}
    objects = render(chart, values)
    (job,) = by_kind(objects, "Job").values()
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert env_of(container)["LUDOTHEQUE_DATABASE_URL"]["valueFrom"]["secretKeyRef"] == {
        "name": "ludo-db",
        "key": "LUDOTHEQUE_DATABASE_URL",
    }
    assert [o["kind"] for o in hooks(objects)] == ["Job"], "no Secret of the chart's for it"

    off = {**CASES["database-record-key"], "database": {"migrations": {"enabled": False}}}
    objects = render(chart, {**off, "database": {**off["database"], "url": DATABASE_URL}})
    assert not hooks(objects), "database.migrations.enabled: false, the operator migrates"
    for template in pod_specs(objects).values():
        assert "LUDOTHEQUE_DATABASE_URL" in env_of(template["spec"]["containers"][0])


def hook_weight(manifest: dict[str, Any]) -> int:
    return int(manifest["metadata"]["annotations"].get("helm.sh/hook-weight", "0"))


def test_the_jobs_arguments_run_ludotheque_migrate_through_the_images_entrypoint(tmp_path):
    """The image's ENTRYPOINT is scripts/container.sh (tests/deploy/test_container.py):
    `migrate` there is `ludotheque migrate`, which brings an empty database to
    the newest revision."""
    import sys

    from service.store.database import current, engine_for, head

    url = f"sqlite:///{tmp_path / 'archive.db'}"
    env = {**os.environ, "LUDOTHEQUE_PREFIX": sys.prefix, "LUDOTHEQUE_DATABASE_URL": url}
    env["PYTHONPATH"] = str(ROOT)
    script = ROOT / "scripts" / "container.sh"
    done = subprocess.run(["sh", str(script), "migrate"], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    engine = engine_for(url)
    try:
        assert current(engine) == head()
    finally:
        engine.dispose()
    del env["LUDOTHEQUE_DATABASE_URL"]
    done = subprocess.run(["sh", str(script), "migrate"], env=env, capture_output=True, text=True)
    assert done.returncode == 64 and "LUDOTHEQUE_DATABASE_URL is required" in done.stderr


def test_without_a_database_nothing_is_archived_no_job_no_variable(chart):
    for case in ("defaults", "existing-secret-ingress-fixed-replicas", "no-worker-no-budgets"):
        objects = render(chart, CASES[case])
        assert not by_kind(objects, "Job") and not hooks(objects), case
        for secret in by_kind(objects, "Secret").values():
            assert "LUDOTHEQUE_DATABASE_URL" not in secret["stringData"]
        for template in pod_specs(objects).values():
            (container,) = template["spec"]["containers"]
            assert "LUDOTHEQUE_DATABASE_URL" not in env_of(container), case
    notes = chart.render(CASES["defaults"])["ludotheque/templates/NOTES.txt"]
    assert "nothing\nis archived" in notes and "archive_unavailable" in notes
    notes = chart.render(CASES["database-record-key"])["ludotheque/templates/NOTES.txt"]
    assert "archived in PostgreSQL" in notes and "nothing" not in notes


def test_configuration_reaches_both_containers_through_the_configmap(chart):
    objects = render(chart, CASES["existing-secret-ingress-fixed-replicas"])
    (config,) = by_kind(objects, "ConfigMap").values()
    assert config["data"]["REDIS_CLUSTER"] == "1"
    assert config["data"]["LUDOTHEQUE_FINISHED_TTL"] == "86400"
    for template in pod_specs(objects).values():
        (container,) = template["spec"]["containers"]
        assert container["envFrom"] == [{"configMapRef": {"name": config["metadata"]["name"]}}]
    changed = render(chart, {**CASES["defaults"], "config": {"LUDOTHEQUE_IDLE_TTL": "60"}})
    before = pod_specs(render(chart, CASES["defaults"]))["games-ludotheque-api"]
    after = pod_specs(changed)["games-ludotheque-api"]
    assert (
        before["metadata"]["annotations"]["checksum/config"]
        != after["metadata"]["annotations"]["checksum/config"]
    ), "pods roll when the configuration changes"


def test_selectors_pick_exactly_their_own_pods(case):
    _, objects = case
    pods = {name: t["metadata"]["labels"] for name, t in pod_specs(objects).items()}

    def selected(selector: dict[str, str]) -> set[str]:
        return {n for n, labels in pods.items() if selector.items() <= labels.items()}

    for name, deployment in by_kind(objects, "Deployment").items():
        assert selected(deployment["spec"]["selector"]["matchLabels"]) == {name}
    for service in by_kind(objects, "Service").values():
        assert {n.rsplit("-", 1)[1] for n in selected(service["spec"]["selector"])} == {"api"}
        assert service["spec"]["ports"][0]["targetPort"] == "http"
    for name, budget in by_kind(objects, "PodDisruptionBudget").items():
        assert selected(budget["spec"]["selector"]["matchLabels"]) == {name}
    for name, scaler in by_kind(objects, "HorizontalPodAutoscaler").items():
        target = scaler["spec"]["scaleTargetRef"]
        assert (target["kind"], target["name"]) == ("Deployment", name)
        assert "replicas" not in by_kind(objects, "Deployment")[name]["spec"]
        assert scaler["spec"]["minReplicas"] <= scaler["spec"]["maxReplicas"]


def test_optional_objects_follow_their_switches(chart):
    fixed = render(chart, CASES["existing-secret-ingress-fixed-replicas"])
    assert by_kind(fixed, "Deployment")["games-ludotheque-api"]["spec"]["replicas"] == 2
    assert set(by_kind(fixed, "HorizontalPodAutoscaler")) == {"games-ludotheque-worker"}
    (ingress,) = by_kind(fixed, "Ingress").values()
    (service,) = by_kind(fixed, "Service").values()
    assert ingress["spec"]["ingressClassName"] == "nginx"
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend == {"name": service["metadata"]["name"], "port": {"name": "http"}}
    assert ingress["spec"]["tls"] == [{"secretName": "play-tls", "hosts": ["play.example.org"]}]

    bare = render(chart, CASES["no-worker-no-budgets"])
    assert sorted(by_kind(bare, "Deployment")) == ["ludo-api"]
    assert sorted(by_kind(bare, "HorizontalPodAutoscaler")) == ["ludo-api"]
    assert not by_kind(bare, "PodDisruptionBudget") and not by_kind(bare, "Ingress")
    (container,) = pod_specs(bare)["ludo-api"]["spec"]["containers"]
    assert "lifecycle" not in container


def config_map(objects: list[dict[str, Any]]) -> dict[str, str]:
    (config,) = by_kind(objects, "ConfigMap").values()
    return config["data"]


def test_with_its_ingress_the_chart_trusts_the_controller_and_nothing_else(chart):
    assert "LUDOTHEQUE_TRUSTED_PROXIES" not in config_map(render(chart, CASES["defaults"]))
    behind = config_map(render(chart, CASES["existing-secret-ingress-fixed-replicas"]))
    assert behind["LUDOTHEQUE_TRUSTED_PROXIES"] == "1"
    assert problems(behind) == [], "the API and the worker start with it"
    ingress = {"enabled": True, "trustedProxies": 2}
    two = render(chart, {**CASES["defaults"], "ingress": ingress})
    assert config_map(two)["LUDOTHEQUE_TRUSTED_PROXIES"] == "2"
    # without the chart's Ingress, a proxy of one's own
    own = render(chart, {**CASES["defaults"], "config": {"LUDOTHEQUE_TRUSTED_PROXIES": "2"}})
    assert config_map(own)["LUDOTHEQUE_TRUSTED_PROXIES"] == "2"
    # one place decides
    both = {"ingress": {"enabled": True}, "config": {"LUDOTHEQUE_TRUSTED_PROXIES": "1"}}
    with pytest.raises(TemplateError, match=r"ingress\.trustedProxies"):
        chart.render({**CASES["defaults"], **both})


def test_behind_the_charts_ingress_each_client_has_its_own_quota(chart, redis_url, monkeypatch):
    """The API with the ConfigMap the chart renders, behind a stand-in for
    the Ingress controller (every connection from 127.0.0.1, the client's
    address in X-Forwarded-For, as ingress-nginx sends it, or appended to
    what the client wrote, as other controllers do): two clients get a
    quota each, and what a client writes itself gets it none."""

    def clients_refused(case: str) -> list[int]:
        with monkeypatch.context() as env:
            for name, value in config_map(render(chart, CASES[case])).items():
                env.setenv(name, value)
            server = LiveServer(
                {
                    "REDIS_URL": redis_url,
                    "REDIS_CLUSTER": False,
                    "RATELIMIT_ENABLED": True,
                    "MAX_WAITING_PER_ADDRESS": 1,
                }
            )
        try:
            word = os.urandom(4).hex()
            ada, bob = f"2001:db8:{word[:4]}:{word[4:]}::1", f"2001:db8:{word[4:]}:{word[:4]}::1"
            sent = [ada, bob, f"{os.urandom(2).hex()}::1, {bob}"]
            answers = [
                requests.post(
                    server.url("/v1/games/dekal/matches"),
                    json={"players": [{"name": "Ada"}, {}]},
                    headers={"X-Forwarded-For": forwarded},
                    timeout=10,
                )
                for forwarded in sent
            ]
            return [i for i, answer in enumerate(answers) if answer.status_code == 429]
        finally:
            server.stop()

    # Ada and Bob each have a waiting match; Bob's forged entry is not a new client
    assert clients_refused("existing-secret-ingress-fixed-replicas") == [2]
    # without the setting, everyone is the controller: Bob is refused Ada's quota
    assert 1 in clients_refused("defaults")


def test_notes_render(chart):
    notes = chart.render(CASES["existing-secret-ingress-fixed-replicas"])
    text = notes["ludotheque/templates/NOTES.txt"]
    assert "https://play.example.org/" in text
    assert "http://games-ludotheque.games:80" in text


# --- Chart metadata, values and their documentation --------------------------


# Maps passed through as they are: documented as a whole, not key by key.
FREE_FORM = {"config", "api.resources", "worker.resources", "database.migrations.resources"}


def leaf_paths(values: Any, prefix: str = "") -> Iterator[str]:
    if isinstance(values, dict) and values and prefix not in FREE_FORM:
        for key, item in values.items():
            yield from leaf_paths(item, f"{prefix}.{key}" if prefix else key)
    else:
        yield prefix


def key_lines(lines: list[str]) -> Iterator[tuple[int, str]]:
    """(line number, dotted path) of every key in a block-style YAML file."""
    stack: list[tuple[int, str]] = []
    for number, line in enumerate(lines):
        key = re.match(r"( *)(\w+):", line)
        if not key:
            continue
        depth = len(key.group(1))
        while stack and stack[-1][0] >= depth:
            stack.pop()
        stack.append((depth, key.group(2)))
        yield number, ".".join(name for _, name in stack)


def test_chart_metadata_matches_the_project():
    metadata = yaml.safe_load((CHART / "Chart.yaml").read_text(encoding="utf-8"))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert metadata["apiVersion"] == "v2"
    assert metadata["type"] == "application"
    assert re.fullmatch(r"\d+\.\d+\.\d+", metadata["version"])
    assert metadata["appVersion"] == project["version"]


def test_every_value_the_templates_read_exists_and_is_documented():
    values = yaml.safe_load((CHART / "values.yaml").read_text(encoding="utf-8"))
    known = set(leaf_paths(values))
    prefixes = {p.rsplit(".", i)[0] for p in known for i in range(p.count(".") + 1)}
    used = set()
    for path in (CHART / "templates").iterdir():
        used |= set(re.findall(r"\.Values\.([A-Za-z0-9_.]+)", path.read_text(encoding="utf-8")))
    assert used, "the templates read values"
    assert used <= prefixes, f"unknown values: {sorted(used - prefixes)}"
    readme = (CHART / "README.md").read_text(encoding="utf-8")
    undocumented = [p for p in sorted(known) if f"`{p}`" not in readme]
    assert not undocumented, f"values missing from the chart's README: {undocumented}"
    lines = (CHART / "values.yaml").read_text(encoding="utf-8").splitlines()
    for number, path in key_lines(lines):
        if path in known:
            assert lines[number - 1].lstrip().startswith("#"), (
                f"values.yaml: {path} has no comment"
            )


def test_chart_yaml_files_pass_yamllint():
    linter = pytest.importorskip("yamllint.linter")
    config = pytest.importorskip("yamllint.config").YamlLintConfig(
        "extends: default\nrules:\n  line-length: {max: 99}\n  document-start: disable\n"
    )
    for path in [CHART / "Chart.yaml", CHART / "values.yaml"]:
        problems = list(linter.run(path.read_text(encoding="utf-8"), config, str(path)))
        assert not problems, [f"{path.name}:{p.line}: {p.message}" for p in problems]


# --- Real Helm, where an interpreter that has it is named ---------------------

# helm-sdkpy bundles Helm's Go library but needs Python 3.12 or later, so it
# cannot sit in this project's 3.11 virtualenv; point HELM_SDKPY_PYTHON at an
# interpreter that has it (`python3.12 -m pip install helm-sdkpy`) to run these.
HELM_LINT = """
import asyncio, json, sys
import helm_sdkpy
config = helm_sdkpy.Configuration(namespace="games")
print(json.dumps(asyncio.run(helm_sdkpy.Lint(config).run(sys.argv[1]))))
"""


def chart_with_values(tmp_path: Path, values: dict[str, Any]) -> Path:
    copy_ = tmp_path / "ludotheque"
    shutil.copytree(CHART, copy_)
    defaults = yaml.safe_load((CHART / "values.yaml").read_text(encoding="utf-8"))
    (copy_ / "values.yaml").write_text(yaml.safe_dump(coalesce(defaults, values)))
    return copy_


@pytest.mark.parametrize("name", list(CASES))
def test_helm_lint_passes(name, tmp_path):
    python = os.environ.get("HELM_SDKPY_PYTHON")
    if not python:
        pytest.skip("HELM_SDKPY_PYTHON is not set: no Helm here")
    chart = chart_with_values(tmp_path, CASES[name])
    done = subprocess.run(
        [python, "-c", HELM_LINT, str(chart)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    # Severity 1 is INFO (e.g. "icon is recommended"); 2 WARNING, 3 ERROR.
    assert result["TotalChartsLinted"] == 1
    assert all(m["Severity"] < 2 for m in result["Messages"]), result
    assert not result["Errors"], done.stderr


HELM_INSTALL = """
import asyncio, sys
import helm_sdkpy
config = helm_sdkpy.Configuration(namespace="games", kubeconfig=sys.argv[1])
asyncio.run(helm_sdkpy.Install(config).run("games", sys.argv[2], wait=False, timeout=60))
"""
API_GROUPS = {
    "v1": {"configmaps": "ConfigMap", "secrets": "Secret", "services": "Service"},
    "apps/v1": {"deployments": "Deployment"},
    "autoscaling/v2": {"horizontalpodautoscalers": "HorizontalPodAutoscaler"},
    "policy/v1": {"poddisruptionbudgets": "PodDisruptionBudget"},
    "networking.k8s.io/v1": {"ingresses": "Ingress"},
}


class FakeKubernetes(BaseHTTPRequestHandler):
    """Just enough of an API server for `helm install` to send its objects:
    discovery, empty lists, 404 for every object, and creation."""

    created: list[dict[str, Any]]

    def log_message(self, *args: Any) -> None:
        pass

    def answer(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        if path == "/version":
            return self.answer(200, {"major": "1", "minor": "33", "gitVersion": "v1.33.0"})
        if path == "/api":
            return self.answer(200, {"kind": "APIVersions", "versions": ["v1"]})
        if path == "/apis":
            groups = [
                {
                    "name": gv.split("/")[0],
                    "versions": [{"groupVersion": gv, "version": gv.split("/")[1]}],
                    "preferredVersion": {"groupVersion": gv, "version": gv.split("/")[1]},
                }
                for gv in API_GROUPS
                if "/" in gv
            ]
            return self.answer(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
        for gv, resources in API_GROUPS.items():
            base = "/api/v1" if gv == "v1" else f"/apis/{gv}"
            if path == base:
                listed = [
                    {"name": name, "singularName": "", "namespaced": True, "kind": kind}
                    | {"verbs": ["create", "delete", "get", "list", "patch", "update"]}
                    for name, kind in resources.items()
                ]
                return self.answer(
                    200, {"kind": "APIResourceList", "groupVersion": gv, "resources": listed}
                )
            parts = path.removeprefix(base + "/namespaces/").split("/")
            if path.startswith(base + "/namespaces/") and len(parts) == 2:
                kind = f"{resources.get(parts[1], 'Unknown')}List"
                return self.answer(200, {"kind": kind, "apiVersion": gv, "items": []})
        self.answer(404, {"kind": "Status", "apiVersion": "v1", "reason": "NotFound", "code": 404})

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if "json" in self.headers.get("Content-Type", ""):
            self.created.append(json.loads(body))
        # Helm's own release record comes as protobuf: acknowledged, not read.
        self.answer(201, {"kind": "Secret", "apiVersion": "v1", "metadata": {"name": "x"}})

    do_PUT = do_PATCH = do_POST


@pytest.mark.parametrize("name", list(CASES))
def test_helm_renders_exactly_what_the_interpreter_renders(name, chart, tmp_path):
    python = os.environ.get("HELM_SDKPY_PYTHON")
    if not python:
        pytest.skip("HELM_SDKPY_PYTHON is not set: no Helm here")
    if hooks(render(chart, CASES[name])):
        pytest.skip("the fake API server cannot run a hook's Job to its end")
    handler = type("Handler", (FakeKubernetes,), {"created": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": "fake",
                        "cluster": {"server": f"http://127.0.0.1:{server.server_port}"},
                    }
                ],
                "users": [{"name": "fake", "user": {"token": "fake"}}],
                "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}],
                "current-context": "fake",
            }
        )
    )
    try:
        done = subprocess.run(
            [
                python,
                "-c",
                HELM_INSTALL,
                str(kubeconfig),
                str(chart_with_values(tmp_path, CASES[name])),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 0, done.stderr

    def as_rendered(manifest: dict[str, Any]) -> dict[str, Any]:
        """Less what Helm adds when it applies: namespace and ownership annotations."""
        metadata = manifest["metadata"]
        metadata.pop("namespace", None)
        annotations = metadata.get("annotations", {})
        for key in ("meta.helm.sh/release-name", "meta.helm.sh/release-namespace"):
            annotations.pop(key, None)
        if not annotations:
            metadata.pop("annotations", None)
        return manifest

    def key(manifest: dict[str, Any]) -> tuple[str, str]:
        return manifest["kind"], manifest["metadata"]["name"]

    by_helm = sorted((as_rendered(m) for m in handler.created), key=key)
    assert by_helm == sorted(render(chart, CASES[name]), key=key)
