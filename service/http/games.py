"""The games on offer: ``/v1/games``."""

from __future__ import annotations

import orjson
from flask import Response
from flask.views import MethodView
from flask_smorest import Api

from engines import GAMES
from engines.ai.policies import supported
from service.http.answers import json_response
from service.http.arguments import Blueprint
from service.http.game_schemas import game_schemas
from service.http.schemas import GamesSchema


def games_blueprint(api: Api) -> Blueprint:
    blp = Blueprint("games", __name__, url_prefix="/v1", description="The games on offer")
    converter = api.ma_plugin.converter
    games = orjson.dumps(
        {
            "games": [
                {
                    "name": g.name,
                    "title": g.title,
                    "min_players": g.min_players,
                    "max_players": g.max_players,
                    "options": converter.schema2jsonschema(game_schemas(g)[0]),
                    "actions": sorted(g.action_schemas),
                    "bots": list(supported(g)),
                }
                for g in GAMES.values()
            ]
        }
    )

    @blp.route("/games")
    class GameList(MethodView):
        @blp.response(200, GamesSchema)
        @blp.doc(operationId="list_games")
        def get(self) -> Response:
            """The games: name, title, player counts, options schema, action types, bots."""
            return json_response(games)

    return blp
