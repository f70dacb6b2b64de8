"""Pacal's wire format: options, one schema per action, the view, the outcome.

Every schema refuses unknown keys (marshmallow's default), so a view or an
action with a key not documented here fails validation.
"""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from engines.core import named

CARD = validate.Range(min=1, max=50)
SLOT = validate.Range(min=0, max=9)
SEAT = validate.Range(min=0, max=1)
MANCHE_REASONS = [
    "completed",
    "spread",
    "stuck",
    "exhausted",
    "exhausted_spread",
    "both_stuck",
    "equal_spread",
    "exhausted_tie",
]


def _card(**kwargs: object) -> fields.Field:
    return named("PacalCard", fields.Integer(validate=CARD, strict=True, **kwargs))


def _slot(**kwargs: object) -> fields.Field:
    return named("PacalSlot", fields.Integer(validate=SLOT, strict=True, **kwargs))


def _count(**kwargs: object) -> fields.Integer:
    return fields.Integer(validate=validate.Range(min=0), strict=True, **kwargs)


def _doc(text: str) -> dict[str, str]:
    return {"description": text}


# --- Options --------------------------------------------------------------


class PacalOptionsSchema(Schema):
    mode = fields.String(
        load_default=None,
        allow_none=True,
        validate=validate.OneOf(["match", "solitaire"]),
        metadata=_doc(
            "match: exactly two players; solitaire: exactly one. "
            "Absent: solitaire for one player, match for two."
        ),
    )
    manches_to_win = fields.Integer(
        load_default=3,
        strict=True,
        validate=validate.Range(min=1, max=99),
        metadata=_doc("Manches needed to win the match (ignored in solitaire)."),
    )


# --- Actions --------------------------------------------------------------


class PacalOfferActionSchema(Schema):
    """Match, active player: show two cards of your hand."""

    type = fields.String(required=True, validate=validate.OneOf(["offer"]))
    cards = fields.List(
        _card(),
        required=True,
        validate=validate.Length(equal=2),
        metadata=_doc("Two different cards of your hand."),
    )


class PacalChooseActionSchema(Schema):
    """Match, the other player: take one of the two offered cards."""

    type = fields.String(required=True, validate=validate.OneOf(["choose"]))
    card = _card(required=True, metadata=_doc("One of the two offered cards."))


class PacalPlaceActionSchema(Schema):
    """Place the card you must place now (match: the card you got, or your
    last hand card; solitaire: the drawn card) on a slot of your pyramid."""

    type = fields.String(required=True, validate=validate.OneOf(["place"]))
    slot = _slot(
        required=True,
        metadata=_doc("Slot in reading order: 0 the top, 6..9 the base."),
    )


class PacalPassActionSchema(Schema):
    """Match, last-card phase only: keep your last card instead of placing it."""

    type = fields.String(required=True, validate=validate.OneOf(["pass"]))


class PacalDiscardActionSchema(Schema):
    """Solitaire: set the drawn card aside; only allowed when it fits no empty slot."""

    type = fields.String(required=True, validate=validate.OneOf(["discard"]))


ACTION_SCHEMAS: dict[str, type[Schema]] = {
    "offer": PacalOfferActionSchema,
    "choose": PacalChooseActionSchema,
    "place": PacalPlaceActionSchema,
    "pass": PacalPassActionSchema,
    "discard": PacalDiscardActionSchema,
}

# --- View -----------------------------------------------------------------


def _pyramid(**kwargs: object) -> fields.List:
    return fields.List(
        fields.List(_card(), validate=validate.Length(max=2)),
        validate=validate.Length(equal=10),
        **kwargs,
    )


class PacalCurrentOfferSchema(Schema):
    seat = fields.Integer(required=True, validate=SEAT, metadata=_doc("Who offered."))
    cards = fields.List(_card(), required=True, validate=validate.Length(equal=2))
    chosen = _card(
        required=True,
        allow_none=True,
        metadata=_doc("The card the other player took; null until they choose."),
    )


class PacalPlayerViewSchema(Schema):
    seat = fields.Integer(required=True, validate=SEAT)
    pyramid = _pyramid(
        required=True,
        metadata=_doc(
            "10 slots in reading order (0 the top, 6..9 the base), each the list of its "
            "face-up values from bottom to top (0, 1 or 2 values)."
        ),
    )
    hand = fields.List(
        _card(),
        required=True,
        allow_none=True,
        metadata=_doc("Your own hand, sorted; null for another seat and in solitaire."),
    )
    hand_size = _count(required=True)
    to_place = _card(
        required=True,
        allow_none=True,
        metadata=_doc(
            "The card this seat must place now (the card it got from the offer; in "
            "the last-card phase its last hand card, shown only to itself; in "
            "solitaire the drawn card)."
        ),
    )
    to_act = fields.Boolean(required=True, metadata=_doc("Whether this seat must act now."))
    manches_won = _count(required=True)
    foundation_top = _card(
        required=True,
        allow_none=True,
        metadata=_doc("The foundation card under slot 0, shown at the start of the manche."),
    )
    filled = _count(required=True, metadata=_doc("Slots showing a face-up card."))
    spread = _count(required=True, metadata=_doc("Highest minus lowest visible value."))


class PacalLastMancheSchema(Schema):
    manche = fields.Integer(required=True, validate=validate.Range(min=1))
    winner = fields.Integer(
        required=True, allow_none=True, validate=SEAT, metadata=_doc("null: a void manche.")
    )
    reason = fields.String(required=True, validate=validate.OneOf(MANCHE_REASONS))
    pyramids = fields.List(_pyramid(), required=True)
    filled = fields.List(_count(), required=True)
    spreads = fields.List(_count(), required=True)


class PacalViewSchema(Schema):
    mode = fields.String(required=True, validate=validate.OneOf(["match", "solitaire"]))
    phase = fields.String(
        required=True,
        validate=validate.OneOf(["offer", "choose", "place", "last_card", "draw", "over"]),
    )
    manche = fields.Integer(
        required=True,
        validate=validate.Range(min=1),
        metadata=_doc("Deal number, voids included."),
    )
    manches_to_win = fields.Integer(required=True, allow_none=True)
    active = fields.Integer(
        required=True,
        allow_none=True,
        validate=SEAT,
        metadata=_doc("The seat whose turn it is to offer."),
    )
    offers_made = fields.Integer(
        required=True,
        allow_none=True,
        validate=validate.Range(min=0, max=14),
        metadata=_doc("Offers completed in this manche (14 before the last card)."),
    )
    offer = fields.Nested(PacalCurrentOfferSchema, required=True, allow_none=True)
    players = fields.List(fields.Nested(PacalPlayerViewSchema), required=True)
    drawn = _card(required=True, allow_none=True, metadata=_doc("Solitaire: the drawn card."))
    pile_size = fields.Integer(required=True, allow_none=True, metadata=_doc("Solitaire."))
    cards_drawn = fields.Integer(required=True, allow_none=True, metadata=_doc("Solitaire."))
    set_aside = fields.List(
        _card(), required=True, allow_none=True, metadata=_doc("Solitaire: cards set aside.")
    )
    last_manche = fields.Nested(
        PacalLastMancheSchema,
        required=True,
        allow_none=True,
        metadata=_doc("How the previous manche ended, with its final pyramids."),
    )
    winners = fields.List(fields.Integer(validate=SEAT), required=True, allow_none=True)


# --- Outcome --------------------------------------------------------------


class PacalOutcomeSchema(Schema):
    winners = fields.List(
        fields.Integer(validate=SEAT),
        required=True,
        metadata=_doc(
            "The match winner; in solitaire [0] only for a perfect pyramid of 10 cards, else []."
        ),
    )
    scores = fields.List(
        _count(),
        required=True,
        metadata=_doc("Match: manches won per seat; solitaire: cards drawn."),
    )
    manches_won = fields.List(_count(), metadata=_doc("Match only."))
    manches_played = _count(metadata=_doc("Match only: deals, voids included."))
    won = fields.Boolean(
        metadata=_doc("Solitaire only: the pyramid was completed with 10 cards drawn.")
    )
    completed = fields.Boolean(
        metadata=_doc("Solitaire only: all 10 slots were filled (won only with 10 cards).")
    )
    score = fields.Integer(
        allow_none=True,
        validate=validate.Range(min=10, max=40),
        metadata=_doc("Solitaire only: cards drawn to complete the pyramid; null if unfinished."),
    )
    cards_drawn = _count(metadata=_doc("Solitaire only."))
    filled = _count(metadata=_doc("Solitaire only: slots filled at the end."))


# --- Events ---------------------------------------------------------------
# One schema per event type the engine emits (``rules.py``); the service adds
# ``index`` and ``version``, and strips ``to`` before anyone sees an event.


def _event(name: str) -> fields.String:
    return fields.String(required=True, validate=validate.OneOf([name]))


def _seat() -> fields.Integer:
    return fields.Integer(required=True, strict=True, validate=SEAT)


class PacalOfferedEventSchema(Schema):
    type = _event("offered")
    seat = _seat()
    cards = fields.List(_card(), required=True, validate=validate.Length(equal=2))


class PacalChosenEventSchema(Schema):
    type = _event("chosen")
    seat = _seat()
    card = _card(required=True, metadata=_doc("The card the chooser took."))
    left = _card(required=True, metadata=_doc("The card left to the offerer."))


class PacalStuckEventSchema(Schema):
    type = _event("stuck")
    seat = _seat()
    card = _card(required=True, metadata=_doc("The card that fits nowhere."))


class PacalPlacedEventSchema(Schema):
    type = _event("placed")
    seat = _seat()
    slot = _slot(required=True)
    card = _card(required=True)
    covered = _card(
        allow_none=True, metadata=_doc("Match only: the card now covered; null if none.")
    )


class PacalPassedEventSchema(Schema):
    type = _event("passed")
    seat = _seat()


class PacalSetAsideEventSchema(Schema):
    type = _event("set_aside")
    seat = _seat()
    card = _card(required=True)


class PacalMancheDealtEventSchema(Schema):
    type = _event("manche_dealt")
    manche = _count(required=True)
    foundation_tops = fields.List(_card(), required=True, validate=validate.Length(equal=2))
    starter = _seat()


class PacalHandDealtEventSchema(Schema):
    type = _event("hand_dealt")
    seat = _seat()
    hand = fields.List(_card(), required=True)


class PacalLastCardEventSchema(Schema):
    type = _event("last_card")


class PacalNextOfferEventSchema(Schema):
    type = _event("next_offer")
    seat = _seat()


class PacalMancheVoidEventSchema(Schema):
    type = _event("manche_void")
    manche = _count(required=True)
    reason = fields.String(required=True, validate=validate.OneOf(MANCHE_REASONS))


class PacalMancheWonEventSchema(Schema):
    type = _event("manche_won")
    manche = _count(required=True)
    seat = _seat()
    reason = fields.String(required=True, validate=validate.OneOf(MANCHE_REASONS))
    manches_won = fields.List(_count(), required=True)


class PacalDrawnEventSchema(Schema):
    type = _event("drawn")
    card = _card(required=True)
    cards_drawn = _count(required=True)
    pile_size = _count(required=True)


class PacalSolitaireWonEventSchema(Schema):
    type = _event("solitaire_won")
    score = _count(required=True)


class PacalSolitaireCompletedEventSchema(Schema):
    """The pyramid is finished with more than 10 cards: completed, not won."""

    type = _event("solitaire_completed")
    score = _count(required=True)


class PacalSolitaireLostEventSchema(Schema):
    type = _event("solitaire_lost")
    filled = _count(required=True)


class PacalMatchOverEventSchema(PacalOutcomeSchema):
    type = _event("match_over")


EVENT_SCHEMAS: dict[str, type[Schema]] = {
    "offered": PacalOfferedEventSchema,
    "chosen": PacalChosenEventSchema,
    "stuck": PacalStuckEventSchema,
    "placed": PacalPlacedEventSchema,
    "passed": PacalPassedEventSchema,
    "set_aside": PacalSetAsideEventSchema,
    "manche_dealt": PacalMancheDealtEventSchema,
    "hand_dealt": PacalHandDealtEventSchema,
    "last_card": PacalLastCardEventSchema,
    "next_offer": PacalNextOfferEventSchema,
    "manche_void": PacalMancheVoidEventSchema,
    "manche_won": PacalMancheWonEventSchema,
    "drawn": PacalDrawnEventSchema,
    "solitaire_won": PacalSolitaireWonEventSchema,
    "solitaire_completed": PacalSolitaireCompletedEventSchema,
    "solitaire_lost": PacalSolitaireLostEventSchema,
    "match_over": PacalMatchOverEventSchema,
}
