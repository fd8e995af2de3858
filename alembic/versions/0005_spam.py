"""Web spam and traps: each page's spam score and reasons, and host verdicts.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("pages") as batch:
        batch.add_column(sa.Column("spam_score", sa.Float))
        batch.add_column(sa.Column("spam_reasons", sa.JSON))
    op.create_table(
        "host_verdicts",
        sa.Column("host", sa.String(255), primary_key=True),
        sa.Column("kind", sa.String(8), primary_key=True),
        sa.Column("flagged", sa.Boolean, nullable=False),
        sa.Column("score", sa.Float, nullable=False),
        sa.Column("pages", sa.Integer, nullable=False),
        sa.Column("reasons", sa.JSON, nullable=False),
        sa.Column("features", sa.JSON, nullable=False),
        sa.Column("detected_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("host_verdicts")
    with op.batch_alter_table("pages") as batch:
        batch.drop_column("spam_reasons")
        batch.drop_column("spam_score")
