"""API v1: one blueprint per registered game, built from the registry.

Nothing here names a game: each game brings its options, action and view
schemas (``game_schemas``), and each resource's module adds its routes to
every game's blueprint, in the order of the contract.
"""

from __future__ import annotations

import http
import re
from typing import Any

from flask import request
from flask_smorest import Api
from flask_smorest.utils import prepare_response

from engines import GAMES
from engines.core import Game
from service.domain.problems import Problem
from service.http import actions, events, games, lifecycle, matches, records, seats
from service.http.answers import MULTI_SSE_RESPONSE, PROBLEM_JSON, problems
from service.http.arguments import Blueprint
from service.http.contract import complete
from service.http.errors import ProblemSchema, from_http_exception, problem_response
from service.http.game_schemas import (
    game_contract,
    outcome_name,
    ranked_outcome_schema,
    register_components,
)
from service.http.history import history_blueprint
from service.http.players import players_blueprint
from service.http.ratings import ratings_blueprint
from service.http.streams import streams_blueprint

UNKNOWN_GAME = re.compile(r"^/v1/games/(?P<name>[^/]+)")


class LudothequeApi(Api):
    """flask-smorest's Api, answering every HTTP error as problem+json."""

    ERROR_SCHEMA = ProblemSchema

    def _register_responses(self) -> None:
        """flask-smorest's shared error responses, documented as the
        problem+json they are (its default says application/json)."""
        for status in http.HTTPStatus:
            response: dict[str, Any] = {"description": status.phrase}
            if not (100 <= status < 200) and status not in (204, 304):
                response["schema"] = self.ERROR_SCHEMA
            prepare_response(response, self.spec, PROBLEM_JSON)
            self.spec.components.response(status.name, response, lazy=True)
        response = {"description": "Default error response", "schema": self.ERROR_SCHEMA}
        prepare_response(response, self.spec, PROBLEM_JSON)
        self.spec.components.response("DEFAULT_ERROR", response, lazy=True)

    def handle_http_exception(self, error):
        unknown = UNKNOWN_GAME.match(request.path)
        if error.code == 404 and unknown and unknown["name"] not in GAMES:
            error = Problem(404, "game_not_found", f"no game {unknown['name']!r}; see /v1/games")
            return problem_response(error)
        return problem_response(from_http_exception(error))


def game_blueprint(api: Api, game: Game) -> Blueprint:
    blp = Blueprint(
        game.name,
        __name__,
        url_prefix=f"/v1/games/{game.name}",
        description=f"{game.title}: create, join, watch and play matches",
    )
    contract = game_contract(api, game)
    matches.add_routes(blp, contract)
    records.add_routes(blp, contract)
    seats.add_routes(blp, contract)
    actions.add_routes(blp, contract)
    events.add_routes(blp, contract)
    api.spec.components.schema(outcome_name(game), schema=ranked_outcome_schema(game))
    lifecycle.add_routes(blp, contract)
    return blp


def init_api(api: Api) -> None:
    api.spec.components.security_scheme(
        "seatToken",
        {
            "type": "http",
            "scheme": "bearer",
            "description": "a seat's token (`ldq_seat_…`), or a player token (`ldq_player_…`), "
            "which holds every seat its player holds",
        },
    )
    api.spec.components.security_scheme(
        "playerToken",
        {"type": "http", "scheme": "bearer", "description": "a player token (`ldq_player_…`)"},
    )
    api.spec.components.security_scheme(
        "appKey",
        {
            "type": "http",
            "scheme": "bearer",
            "description": "an app's key (`ldq_app_…`), server to server only",
        },
    )
    register_components(api)
    api.register_blueprint(games.games_blueprint(api))
    api.register_blueprint(records.record_key_blueprint())
    api.register_blueprint(streams_blueprint(MULTI_SSE_RESPONSE, problems))
    api.register_blueprint(history_blueprint())
    api.register_blueprint(players_blueprint())
    api.register_blueprint(ratings_blueprint())  # ranked play's (issue 37)
    for game in GAMES.values():
        api.register_blueprint(game_blueprint(api, game))
    complete(api.spec)
