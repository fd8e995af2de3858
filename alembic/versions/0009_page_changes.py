"""Page change over re-crawls (Broder's change characterisation from sketches): each
re-fetched page's kind of change in a run, and the validators conditional requests send.

``pages.etag`` and ``pages.last_modified`` keep the ``ETag`` and ``Last-Modified`` headers
of a page's last fetch, as the server sent them, so a re-crawl can ask with
``If-None-Match`` / ``If-Modified-Since`` and take a 304 as unchanged without a body.
``page_changes`` holds one row per page per re-crawl run: unchanged, changed (with the
resemblance of the old and new min-hash sketches), gone, or moved (with the URL it moved
to); ``last_modified`` is the version's date as the server gave it, for lags in days.

Revision ID: 0009_page_changes
Revises: 0008_collections
Create Date: 2026-12-06
"""

import sqlalchemy as sa
from alembic import op

revision = "0009_page_changes"
down_revision = "0008_collections"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("pages") as batch:
        batch.add_column(sa.Column("etag", sa.String(255)))
        batch.add_column(sa.Column("last_modified", sa.String(64)))
    op.create_table(
        "page_changes",
        sa.Column("crawl_run_id", sa.BigInteger, sa.ForeignKey("crawl_runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("page_id", sa.BigInteger, sa.ForeignKey("pages.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("resemblance", sa.Float),
        sa.Column("moved_to", sa.Text),
        sa.Column("fetched_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_modified", sa.DateTime(timezone=True)),
    )
    op.create_index("ix_page_changes_page_id", "page_changes", ["page_id"])


def downgrade() -> None:
    op.drop_index("ix_page_changes_page_id", "page_changes")
    op.drop_table("page_changes")
    with op.batch_alter_table("pages") as batch:
        batch.drop_column("last_modified")
        batch.drop_column("etag")
