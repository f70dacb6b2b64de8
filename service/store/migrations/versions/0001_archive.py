"""The archive: finished matches, and the bots that played in them (issue 35).

Revision ID: 0001
Revises:
Created: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "matches",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("created_ms", sa.BigInteger, nullable=False),
        sa.Column("ended_ms", sa.BigInteger, nullable=False),
        sa.Column("archived_ms", sa.BigInteger, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("seeded", sa.Boolean, nullable=False),
        sa.Column("seats", sa.Text, nullable=False),
        sa.Column("outcome", sa.Text, nullable=False),
        sa.Column("final", sa.Text, nullable=False),
        sa.Column("record", sa.Text, nullable=False),
    )
    op.create_index("matches_newest", "matches", ["ended_ms", "id"])
    op.create_index("matches_game_newest", "matches", ["game", "ended_ms", "id"])
    op.create_table(
        "match_bots",
        sa.Column(
            "match_id",
            sa.String(32),
            sa.ForeignKey("matches.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("bot", sa.String(64), primary_key=True),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("ended_ms", sa.BigInteger, nullable=False),
    )
    op.create_index("match_bots_newest", "match_bots", ["bot", "ended_ms", "match_id"])
    op.create_index(
        "match_bots_game_newest", "match_bots", ["game", "bot", "ended_ms", "match_id"]
    )


def downgrade() -> None:
    op.drop_table("match_bots")
    op.drop_table("matches")
