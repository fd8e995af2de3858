"""Replicated collections found bottom-up (Cho, Shivakumar and Garcia-Molina 2000): each
cluster of collections and the pages of its replicas, aligned by position.

Revision ID: 0008_collections
Revises: 0007
Create Date: 2026-12-06
"""

import sqlalchemy as sa
from alembic import op

revision = "0008_collections"
down_revision = "0007"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "replicated_collections",
        sa.Column("id", BigId, primary_key=True),
        sa.Column("cardinality", sa.Integer, nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("detected_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "collection_pages",
        sa.Column("collection_id", sa.BigInteger, sa.ForeignKey("replicated_collections.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("replica", sa.Integer, primary_key=True),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("page_id", sa.BigInteger, sa.ForeignKey("pages.id", ondelete="CASCADE"), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("collection_pages")
    op.drop_table("replicated_collections")
