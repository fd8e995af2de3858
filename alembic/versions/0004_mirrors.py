"""Mirrored hosts: validated host pairs with their evidence, and mirror clusters.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "mirror_pairs",
        sa.Column("id", BigId, primary_key=True),
        sa.Column("url_a", sa.Text, nullable=False),
        sa.Column("url_b", sa.Text, nullable=False),
        sa.Column("level", sa.String(16), nullable=False),
        sa.Column("score", sa.Float, nullable=False),
        sa.Column("paths_checked", sa.Integer, nullable=False),
        sa.Column("paths_matched", sa.Integer, nullable=False),
        sa.Column("fraction_ab", sa.Float),
        sa.Column("fraction_ba", sa.Float),
        sa.Column("inferred", sa.Boolean, nullable=False),
        sa.Column("features", sa.JSON, nullable=False),
        sa.Column("reasons", sa.JSON, nullable=False),
        sa.Column("detected_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "mirror_clusters",
        sa.Column("cluster", sa.Integer, primary_key=True),
        sa.Column("url", sa.Text, primary_key=True),
        sa.Column("canonical", sa.Boolean, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("mirror_clusters")
    op.drop_table("mirror_pairs")
