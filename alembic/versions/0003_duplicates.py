"""Near-duplicates: what the crawl found online, and the offline clusters.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    with op.batch_alter_table("pages") as batch:
        batch.add_column(sa.Column("duplicate_of_id", sa.BigInteger, nullable=True))
        batch.add_column(sa.Column("duplicate_kind", sa.String(16), nullable=True))
        batch.add_column(sa.Column("duplicate_score", sa.Float, nullable=True))
        batch.create_foreign_key("fk_pages_duplicate_of", "pages", ["duplicate_of_id"], ["id"], ondelete="SET NULL")
        batch.create_index("ix_pages_duplicate_of_id", ["duplicate_of_id"])
    op.create_table(
        "containments",
        sa.Column("page_id", sa.BigInteger, sa.ForeignKey("pages.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("container_id", sa.BigInteger, sa.ForeignKey("pages.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("containment", sa.Float, nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
    )
    op.create_table(
        "duplicate_clusters",
        sa.Column("id", BigId, primary_key=True),
        sa.Column("method", sa.String(32), nullable=False),
        sa.Column("representative_id", sa.BigInteger, sa.ForeignKey("pages.id", ondelete="CASCADE"), nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("identical", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_duplicate_clusters_method", "duplicate_clusters", ["method"])
    op.create_table(
        "duplicate_cluster_members",
        sa.Column("cluster_id", sa.BigInteger, sa.ForeignKey("duplicate_clusters.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("page_id", sa.BigInteger, sa.ForeignKey("pages.id", ondelete="CASCADE"), primary_key=True),
    )
    op.create_table(
        "duplicate_pairs",
        sa.Column("page_a", sa.BigInteger, sa.ForeignKey("pages.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("page_b", sa.BigInteger, sa.ForeignKey("pages.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("method", sa.String(32), primary_key=True),
        sa.Column("resemblance", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("duplicate_pairs")
    op.drop_table("duplicate_cluster_members")
    op.drop_table("duplicate_clusters")
    op.drop_table("containments")
    with op.batch_alter_table("pages") as batch:
        batch.drop_index("ix_pages_duplicate_of_id")
        batch.drop_constraint("fk_pages_duplicate_of", type_="foreignkey")
        batch.drop_column("duplicate_score")
        batch.drop_column("duplicate_kind")
        batch.drop_column("duplicate_of_id")
