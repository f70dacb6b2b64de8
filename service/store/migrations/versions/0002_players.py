"""Players, apps, their keys and tokens, and who sat in archived matches (issue 36).

Revision ID: 0002
Revises: 0001
Created: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "apps",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("created_ms", sa.BigInteger, nullable=False),
        sa.Column("revoked_ms", sa.BigInteger, nullable=True),
        sa.Column("limits", sa.Text, nullable=False),
    )
    op.create_table(
        "app_keys",
        sa.Column("hash", sa.String(64), primary_key=True),
        sa.Column(
            "app_id",
            sa.String(32),
            sa.ForeignKey("apps.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("slot", sa.SmallInteger, nullable=False),
        sa.Column("created_ms", sa.BigInteger, nullable=False),
        sa.UniqueConstraint("app_id", "slot", name="app_keys_slot"),
    )
    op.create_table(
        "players",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("bot", sa.Boolean, nullable=False),
        sa.Column("created_ms", sa.BigInteger, nullable=False),
        sa.Column("app_id", sa.String(32), sa.ForeignKey("apps.id"), nullable=True),
        sa.Column("external_id", sa.String(200), nullable=True),
        sa.Column("deleted_ms", sa.BigInteger, nullable=True),
        sa.UniqueConstraint("app_id", "external_id", name="players_external"),
    )
    op.create_table(
        "player_tokens",
        sa.Column("hash", sa.String(64), primary_key=True),
        sa.Column(
            "player_id",
            sa.String(32),
            sa.ForeignKey("players.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("created_ms", sa.BigInteger, nullable=False),
        sa.Column("expires_ms", sa.BigInteger, nullable=False),
    )
    op.create_index("player_tokens_player", "player_tokens", ["player_id"])
    op.create_table(
        "match_players",
        sa.Column(
            "match_id",
            sa.String(32),
            sa.ForeignKey("matches.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("seat", sa.Integer, primary_key=True),
        sa.Column("player_id", sa.String(32), nullable=False),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("ended_ms", sa.BigInteger, nullable=False),
    )
    op.create_index("match_players_newest", "match_players", ["player_id", "ended_ms", "match_id"])
    op.create_index(
        "match_players_game_newest",
        "match_players",
        ["player_id", "game", "ended_ms", "match_id"],
    )


def downgrade() -> None:
    op.drop_table("match_players")
    op.drop_table("player_tokens")
    op.drop_table("players")
    op.drop_table("app_keys")
    op.drop_table("apps")
