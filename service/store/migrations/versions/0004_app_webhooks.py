"""An app's webhook: where its players' events are sent, and the secret that signs them (issue 37).

Revision ID: 0004
Revises: 0003
Created: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("apps") as apps:
        apps.add_column(sa.Column("webhook_url", sa.String(2048), nullable=True))
        apps.add_column(sa.Column("webhook_secret", sa.String(100), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("apps") as apps:
        apps.drop_column("webhook_secret")
        apps.drop_column("webhook_url")
