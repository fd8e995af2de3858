"""Document sketches: one row per HTML page, the parameters beside the binary sketch.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sketches",
        sa.Column("page_id", sa.BigInteger, sa.ForeignKey("pages.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("scheme", sa.String(64), nullable=False),
        sa.Column("seed", sa.BigInteger, nullable=False),
        sa.Column("w", sa.Integer, nullable=False),
        sa.Column("s", sa.Integer, nullable=False),
        sa.Column("m", sa.Integer, nullable=False),
        sa.Column("signature_size", sa.Integer, nullable=False),
        sa.Column("super_groups", sa.Integer, nullable=False),
        sa.Column("super_size", sa.Integer, nullable=False),
        sa.Column("token_count", sa.Integer, nullable=False),
        sa.Column("shingle_count", sa.Integer, nullable=False),
        sa.Column("too_short", sa.Boolean, nullable=False),
        sa.Column("fingerprint", sa.BigInteger, nullable=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
    )
    op.create_index("ix_sketches_fingerprint", "sketches", ["fingerprint"])


def downgrade() -> None:
    op.drop_table("sketches")
