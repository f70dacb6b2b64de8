"""Ratings of ranked matches: each player's per game, and every change (issue 37).

Revision ID: 0003
Revises: 0002
Created: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ratings",
        sa.Column("game", sa.String(32), primary_key=True),
        sa.Column("player_id", sa.String(32), primary_key=True),
        sa.Column("mu", sa.Float, nullable=False),
        sa.Column("sigma", sa.Float, nullable=False),
        sa.Column("matches", sa.Integer, nullable=False),
        sa.Column("updated_ms", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "rating_changes",
        sa.Column(
            "match_id",
            sa.String(32),
            sa.ForeignKey("matches.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("player_id", sa.String(32), primary_key=True),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("seat", sa.Integer, nullable=False),
        sa.Column("rank", sa.Integer, nullable=False),
        sa.Column("mu_before", sa.Float, nullable=False),
        sa.Column("sigma_before", sa.Float, nullable=False),
        sa.Column("mu_after", sa.Float, nullable=False),
        sa.Column("sigma_after", sa.Float, nullable=False),
        sa.Column("matches", sa.Integer, nullable=False),
        sa.Column("ended_ms", sa.BigInteger, nullable=False),
    )
    op.create_index(
        "rating_changes_newest", "rating_changes", ["player_id", "ended_ms", "match_id"]
    )
    op.create_index(
        "rating_changes_game_newest",
        "rating_changes",
        ["player_id", "game", "ended_ms", "match_id"],
    )


def downgrade() -> None:
    op.drop_table("rating_changes")
    op.drop_table("ratings")
