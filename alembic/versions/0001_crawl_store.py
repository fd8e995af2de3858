"""The crawl store: crawl runs, hosts, pages and links.

Revision ID: 0001
Revises:
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

# SQLite only autoincrements a column declared exactly INTEGER PRIMARY KEY.
BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "crawl_runs",
        sa.Column("id", BigId, primary_key=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("seeds", sa.JSON, nullable=False),
        sa.Column("settings", sa.JSON, nullable=False),
        sa.Column("stats", sa.JSON),
    )
    op.create_table(
        "hosts",
        sa.Column("id", BigId, primary_key=True),
        sa.Column("name", sa.String(300), nullable=False, unique=True),
        sa.Column("hostname", sa.String(255), nullable=False),
        sa.Column("port", sa.Integer),
        sa.Column("ip", sa.String(45)),
        sa.Column("registrable_domain", sa.String(255)),
        sa.Column("first_seen_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_hosts_ip", "hosts", ["ip"])
    op.create_index("ix_hosts_registrable_domain", "hosts", ["registrable_domain"])
    op.create_table(
        "pages",
        sa.Column("id", BigId, primary_key=True),
        sa.Column("url", sa.Text, nullable=False, unique=True),
        sa.Column("host_id", sa.BigInteger, sa.ForeignKey("hosts.id"), nullable=False),
        sa.Column("crawl_run_id", sa.BigInteger, sa.ForeignKey("crawl_runs.id")),
        sa.Column("path", sa.Text, nullable=False),
        sa.Column("depth", sa.Integer, nullable=False),
        sa.Column("status", sa.Integer),
        sa.Column("outcome", sa.String(32), nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("content_type", sa.String(255)),
        sa.Column("length", sa.BigInteger),
        sa.Column("fetched_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("fingerprint", sa.BigInteger),
        sa.Column("title", sa.Text),
        sa.Column("redirect_to", sa.Text),
    )
    op.create_index("ix_pages_host_id", "pages", ["host_id"])
    op.create_index("ix_pages_crawl_run_id", "pages", ["crawl_run_id"])
    op.create_index("ix_pages_fingerprint", "pages", ["fingerprint"])
    op.create_table(
        "links",
        sa.Column("id", BigId, primary_key=True),
        sa.Column(
            "source_page_id",
            sa.BigInteger,
            sa.ForeignKey("pages.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("target_url", sa.Text, nullable=False),
        sa.Column("target_host", sa.String(300)),
        sa.Column("anchor", sa.Text, nullable=False),
        sa.Column("before", sa.Text, nullable=False),
        sa.Column("after", sa.Text, nullable=False),
        sa.UniqueConstraint("source_page_id", "position", name="uq_links_source_position"),
    )
    op.create_index("ix_links_target_url", "links", ["target_url"])
    op.create_index("ix_links_target_host", "links", ["target_host"])


def downgrade() -> None:
    op.drop_table("links")
    op.drop_table("pages")
    op.drop_table("hosts")
    op.drop_table("crawl_runs")
