"""Every setting of Ludothèque, read from the environment in one place.

``Settings`` (``table``) holds each one with its variable, its default,
what it accepts (``kinds``) and what it means. A process reads them once
when it starts (``load``: the app factory, gunicorn's configuration,
``ludotheque serve`` and ``ludotheque worker``) and hands the values down;
nothing else in ``service/`` reads the environment. A malformed value
stops the process with one line per malformed variable, naming it and
what it accepts (``load_or_exit``: status 78, sysexits' ``EX_CONFIG``).

``docs/operators/configuration.md`` is ``page.markdown()``
(``ludotheque settings --markdown``); a test fails when they differ.

Nothing here imports what reads the environment on import (no
prometheus_client: gunicorn's configuration reads the settings before it
chooses the metrics' directory).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import fields

from service.settings.table import Settings

__all__ = [
    "MALFORMED_SETTING",
    "SET_BY_SERVE",
    "Malformed",
    "Settings",
    "load",
    "load_or_exit",
    "problems",
    "variables",
]

# sysexits' EX_CONFIG: a setting is malformed
MALFORMED_SETTING = 78

SET_BY_SERVE = frozenset({"LUDOTHEQUE_BIND", "LUDOTHEQUE_WORKERS"})  # from serve's options


class Malformed(ValueError):
    """Settings that cannot be read: ``problems``, one ``NAME: what is wrong`` each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def variables() -> dict[str, str]:
    """Every variable, and the ``Settings`` field it sets."""
    return {f.metadata["variable"]: f.name for f in fields(Settings)}


def problems(environ: Mapping[str, str], skip: Iterable[str] = ()) -> list[str]:
    """``NAME: what is wrong``, for each malformed setting in ``environ``."""
    try:
        load(environ, skip)
    except Malformed as malformed:
        return malformed.problems
    return []


def load(environ: Mapping[str, str] | None = None, skip: Iterable[str] = ()) -> Settings:
    """The settings ``environ`` (the process's environment) gives, defaults
    for the variables it does not set or ``skip`` names; Malformed naming
    every malformed one."""
    environ = os.environ if environ is None else environ
    values, wrong = {}, []
    for f in fields(Settings):
        name = f.metadata["variable"]
        if name in environ and name not in skip:
            try:
                values[f.name] = f.metadata["kind"].parse(environ[name])
            except ValueError as why:
                wrong.append(f"{name}: {why}")
    if wrong:
        raise Malformed(wrong)
    return Settings(**values)


def load_or_exit(skip: Iterable[str] = ()) -> Settings:
    """The process's settings; a malformed one stops it (status 78) with one
    line on stderr per malformed variable, before anything has started."""
    try:
        return load(skip=skip)
    except Malformed as malformed:
        sys.stderr.write(f"{malformed}\n")
        raise SystemExit(MALFORMED_SETTING) from None
