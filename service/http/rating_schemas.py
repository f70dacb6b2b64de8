"""The ratings' schemas, shared by the ``match_over`` event of a rated
match (``service.http.contract``) and the ratings' routes
(``service.http.ratings``). How ratings work: docs/clients/ratings.md."""

from __future__ import annotations

from marshmallow import Schema, fields

from service.domain.ratings import PROVISIONAL_SIGMA


class RatingSchema(Schema):
    """A player's rating for one game."""

    rating = fields.Integer(
        required=True,
        metadata={
            "description": "the number to show: round(1000 + 40 * (mu - 3 * sigma)); "
            "a new player's is 1000"
        },
    )
    mu = fields.Float(required=True, metadata={"description": "the skill estimate (openskill)"})
    sigma = fields.Float(
        required=True, metadata={"description": "the estimate's uncertainty; shrinks with play"}
    )
    matches = fields.Integer(required=True, metadata={"description": "rated matches played"})
    provisional = fields.Boolean(
        required=True,
        metadata={
            "description": f"true while sigma is above {PROVISIONAL_SIGMA}: the rating is "
            "still uncertain"
        },
    )


class SeatRatingSchema(Schema):
    """One seat's rating change in a rated match."""

    seat = fields.Integer(required=True)
    player = fields.String(required=True, metadata={"description": "the player holding the seat"})
    before = fields.Nested(RatingSchema, required=True)
    after = fields.Nested(RatingSchema, required=True)


RATINGS = fields.List(
    fields.Nested(SeatRatingSchema),
    metadata={
        "description": "a rated match only: each player's rating for the game before and after "
        "it (seats no player holds are not rated)"
    },
)
