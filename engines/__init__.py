"""The registry of games: one explicit line per game, names unique.

Adding a game means adding its folder under ``engines/`` and one line below.
"""

from __future__ import annotations

from engines.core import Game

GAMES: dict[str, Game] = {}


class UnknownGame(KeyError):
    """No game is registered under this name."""


def register(game: Game) -> None:
    if game.name in GAMES:
        raise ValueError(f"a game named {game.name!r} is already registered")
    GAMES[game.name] = game


def get_game(name: str) -> Game:
    try:
        return GAMES[name]
    except KeyError:
        raise UnknownGame(name) from None


def _register_all() -> None:
    from engines.dekal import GAME as DEKAL
    from engines.ducale import GAME as DUCALE
    from engines.gaudi import GAME as GAUDI
    from engines.pacal import GAME as PACAL

    for game in (DEKAL, PACAL, GAUDI, DUCALE):
        register(game)


_register_all()
