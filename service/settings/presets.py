"""``LUDOTHEQUE_QUEUE_PRESETS``: the ranked queue's presets per game, as JSON
or the path of a JSON file, checked when the process reads its settings:
its shape here, each preset's game, size and options against the game's
match options (``service.http.queue.presets_of``), so that a malformed one
stops the process at once, naming it."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import orjson

from service.settings.kinds import Kind

PRESET_NAME_MAX = 40
PRESET_FIELDS = {"players", "options", "turn_timeout_s", "bot_after_s"}


def _parse(text: str) -> str:
    """The presets, checked (their options too, as a match creation checks
    them), as JSON text (a setting's value is immutable)."""
    from service.http.queue import presets_of

    found = presets_in(text)
    presets_of(found)
    return orjson.dumps(found).decode()


def presets_in(text: str) -> dict[str, dict[str, dict[str, Any]]]:
    source = text.strip()
    if not source.startswith("{"):
        path = Path(source)
        if not path.is_file():
            raise ValueError(f"{text!r} is neither a JSON object nor a readable JSON file")
        source = path.read_text()
    try:
        found = orjson.loads(source)
    except orjson.JSONDecodeError as error:
        raise ValueError(f"not JSON: {error}") from None
    if not isinstance(found, dict):
        raise ValueError("a JSON object: game -> {preset name -> preset}")
    for game, presets in found.items():
        if not isinstance(presets, dict) or not presets:
            raise ValueError(f"{game}: an object of one or more presets, by name")
        for name, preset in presets.items():
            _check(f"{game}.{name}", name, preset)
    return found


def _check(where: str, name: str, preset: Any) -> None:
    if not (1 <= len(name) <= PRESET_NAME_MAX) or not all(c.isalnum() or c in "-_." for c in name):
        raise ValueError(f"{where}: a preset's name is 1 to 40 letters, digits, '-', '_', '.'")
    if not isinstance(preset, dict) or not preset.keys() <= PRESET_FIELDS:
        raise ValueError(f"{where}: an object of {sorted(PRESET_FIELDS)}")
    players = preset.get("players")
    if not isinstance(players, int) or isinstance(players, bool) or players < 1:
        raise ValueError(f"{where}: players, a whole number of seats")
    options = preset.get("options", {})
    if not isinstance(options, dict):
        raise ValueError(f"{where}: options, an object")
    if "turn_timeout_s" in options:
        raise ValueError(f"{where}: the turn clock is the preset's turn_timeout_s, not an option")
    # a ranked match always has a clock: an absent player's turns time out
    # instead of holding the others (it cannot be aborted)
    clock = preset.get("turn_timeout_s", 60)
    if not isinstance(clock, int) or isinstance(clock, bool) or clock < 1:
        raise ValueError(
            f"{where}: turn_timeout_s, whole seconds (at least 1): a ranked match has a clock"
        )
    bots = preset.get("bot_after_s")
    if bots is not None and (
        not isinstance(bots, int | float)
        or isinstance(bots, bool)
        or not math.isfinite(bots)
        or bots < 0
    ):
        raise ValueError(f"{where}: bot_after_s, seconds (at least 0) or null")


QUEUE_PRESETS = Kind(
    "a JSON object (or the path of a JSON file): game -> {preset name -> {players, options, "
    "turn_timeout_s, bot_after_s}}",
    _parse,
)
