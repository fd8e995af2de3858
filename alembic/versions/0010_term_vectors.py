"""The term vector database (Stata et al. 2000, CS276 notes) and its co-clustering
(Dhillon, Mallela and Modha 2003): the term dictionary with document frequencies, each
page's top-50 term vector, the last co-clustering's summary and the topic labels it gave
mirror clusters, duplicate clusters and spam hosts.

Revision ID: 0010_term_vectors
Revises: 0009_page_changes
Create Date: 2026-12-06
"""

import sqlalchemy as sa
from alembic import op

revision = "0010_term_vectors"
down_revision = "0009_page_changes"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "terms",
        sa.Column("id", BigId, primary_key=True),
        sa.Column("term", sa.String(255), nullable=False, unique=True),
        sa.Column("document_frequency", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "term_vectors",
        sa.Column("page_id", sa.BigInteger, sa.ForeignKey("pages.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("terms", sa.Integer, nullable=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
    )
    op.create_table(
        "coclusterings",
        sa.Column("id", BigId, primary_key=True),
        sa.Column("summary", sa.JSON, nullable=False),
        sa.Column("computed_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "topic_labels",
        sa.Column("kind", sa.String(16), primary_key=True),
        sa.Column("subject", sa.Text, primary_key=True),
        sa.Column("pages", sa.Integer, nullable=False),
        sa.Column("terms", sa.JSON, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("topic_labels")
    op.drop_table("coclusterings")
    op.drop_table("term_vectors")
    op.drop_table("terms")
