"""Anchor-based bags (Haveliwala, Gionis and Indyk): MH signatures per URL, similar URL
pairs and CENTER clusters.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # One row per URL that has a bag (linked to, or titled), fetched or not: the m
    # min-hash values as little-endian uint32 bytes and every parameter they depend on.
    op.create_table(
        "anchor_signatures",
        sa.Column("url", sa.Text, primary_key=True),
        sa.Column("m", sa.Integer, nullable=False),
        sa.Column("seed", sa.BigInteger, nullable=False),
        sa.Column("window", sa.Integer, nullable=False),
        sa.Column("scale", sa.Float, nullable=False),
        sa.Column("cap", sa.Integer, nullable=False),
        sa.Column("idf_bags", sa.BigInteger, nullable=False),
        sa.Column("terms", sa.Integer, nullable=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
        sa.Column("computed_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "anchor_pairs",
        sa.Column("url_a", sa.Text, primary_key=True),
        sa.Column("url_b", sa.Text, primary_key=True),
        sa.Column("similarity", sa.Float, nullable=False),
    )
    op.create_index("ix_anchor_pairs_url_b", "anchor_pairs", ["url_b"])
    op.create_table(
        "anchor_clusters",
        sa.Column("url", sa.Text, primary_key=True),
        sa.Column("cluster", sa.Integer, nullable=False),
        sa.Column("is_center", sa.Boolean, nullable=False),
    )
    op.create_index("ix_anchor_clusters_cluster", "anchor_clusters", ["cluster"])


def downgrade() -> None:
    op.drop_index("ix_anchor_clusters_cluster", table_name="anchor_clusters")
    op.drop_table("anchor_clusters")
    op.drop_index("ix_anchor_pairs_url_b", table_name="anchor_pairs")
    op.drop_table("anchor_pairs")
    op.drop_table("anchor_signatures")
