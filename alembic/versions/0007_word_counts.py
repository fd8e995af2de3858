"""Each page's word count, so that a resumed crawl judges its hosts on the same evidence.

A host's share of pages with one word count (generated templates) needs the word counts
of its pages; before this column a resumed crawl had only the pages fetched since the
restart.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-04
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("pages") as batch:
        batch.add_column(sa.Column("word_count", sa.Integer))


def downgrade() -> None:
    with op.batch_alter_table("pages") as batch:
        batch.drop_column("word_count")
