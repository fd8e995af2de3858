"""``mirror-report``: the parser and the dispatch to the commands (``commands.py``).

    mirror-report [report] [--db URL] [--format table|json|csv|html] [--output FILE]
    mirror-report crawl SEEDS [--db URL] [--max-pages N] [--depth-limit N] ...
    mirror-report crawl --recrawl [SEEDS] [--db URL] ...
    mirror-report changes [--db URL] [--format table|json|csv] [--output FILE]
    mirror-report demo [--db URL] [--seed N] [--port N] [--world full|standard|real]
    mirror-report db upgrade|current [--db URL]
    mirror-report export --parquet DIR [--db URL]
    mirror-report detect [--engine numpy|spark] [--spark-master URL] [--parquet DIR] [--db URL]

Bad input (a missing seeds file, a bad database URL, an unknown option) is one line on
stderr and exit status 2. The JSON output is the documents of ``document.py``, described
by ``report.schema.json``; the HTML report (``html.py``) renders the same document with
its ``evidence`` key.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

from mirrorscope.report.commands import (
    check_output,
    cmd_changes,
    cmd_crawl,
    cmd_db,
    cmd_demo,
    cmd_detect,
    cmd_duplicates,
    cmd_export,
    cmd_report,
    cmd_similar,
)
from mirrorscope.report.demo import DEMO_DATABASE
from mirrorscope.report.errors import UsageError
from mirrorscope.report.render import safe_text

_HANDLERS = {
    "report": cmd_report, "crawl": cmd_crawl, "demo": cmd_demo, "db": cmd_db,
    "detect": cmd_detect, "duplicates": cmd_duplicates, "similar": cmd_similar, "changes": cmd_changes,
    "export": cmd_export,
}
COMMANDS = tuple(_HANDLERS)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _positive_int(value: str) -> int:
    """An option's whole number of at least 1 (a count or a limit: 0 would mean nothing or, to Scrapy, no limit)."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {number}")
    return number


def _add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", metavar="URL", help="database URL (default: $DATABASE_URL, else sqlite:///mirrorscope.db)")


def _add_output(parser: argparse.ArgumentParser, formats: tuple[str, ...] = ("table", "json", "csv", "html")) -> None:
    parser.add_argument("--format", choices=formats, default="table",
                        help="html: one self-contained file with the mirror graph and the evidence of every verdict")
    parser.add_argument("--output", metavar="FILE", help="write the report here instead of stdout")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mirror-report", description="Mirrored hosts, near-duplicate pages and web spam, from a crawl.")
    commands = parser.add_subparsers(dest="command", parser_class=_Parser)

    report = commands.add_parser("report", help="show what the store holds (the default)")
    _add_db(report)
    _add_output(report)

    crawl = commands.add_parser("crawl", help="crawl from seeds into the store")
    crawl.add_argument("seeds", nargs="?", help="a file of URLs (one per line, # comments) or URL,URL (optional with --recrawl)")
    _add_db(crawl)
    crawl.add_argument("--max-pages", type=_positive_int, help="fetch at most N pages")
    crawl.add_argument("--depth-limit", type=_positive_int, help="follow links at most N hops from the seeds (default: no limit)")
    crawl.add_argument("--allowed-hosts", help="follow links only to these hosts (comma-separated; subdomains included)")
    crawl.add_argument("--hosts-file", help="a file in /etc/hosts format resolving names for this crawl")
    crawl.add_argument("--allow-private", action="store_true", help="allow private and loopback addresses (local worlds)")
    crawl.add_argument("--jobdir", help="keep the crawl's state here so that it can be resumed")
    crawl.add_argument("-s", dest="settings", action="append", default=[], metavar="NAME=VALUE", help="any Scrapy or mirrorscope setting")
    crawl.add_argument("--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR"))
    crawl.add_argument("--recrawl", action="store_true",
                       help="fetch the stored pages again with conditional requests and record how each changed (see `changes`)")
    crawl.add_argument("--workers", type=_positive_int, help="N `scrapy crawl web` processes on one frontier in Redis (needs --redis and a PostgreSQL --db)")
    crawl.add_argument("--redis", metavar="URL", help="the shared frontier's Redis (FRONTIER_REDIS_URL), e.g. redis://127.0.0.1:6379/0")

    demo = commands.add_parser("demo", help="build the sandbox web, crawl it and report, offline")
    demo.add_argument("--db", metavar="URL", help=f"database URL (default: a fresh sqlite:///{DEMO_DATABASE})")
    demo.add_argument("--seed", type=int, default=0, help="seed of the sandbox world")
    demo.add_argument("--port", type=int, default=0, help="port for the sandbox hosts (0: any free port)")
    demo.add_argument("--world", choices=("full", "standard", "real"), default="full",
                      help="full: 41 hosts with harder mirrors, decoys, spam and traps (default); standard: 12 hosts; "
                           "real: 40 hosts of real documentation pages with planted mirrors, decoys, spam and a trap "
                           "(needs Debian's documentation packages)")
    _add_output(demo)

    detect = commands.add_parser("detect", help="rerun offline detection over the store (near-duplicates, anchor bags, mirrors, spam hosts)")
    _add_db(detect)
    detect.add_argument("--threshold", type=float, default=0.5, help="resemblance that joins two pages (default 0.5, Broder's)")
    # Not ``choices``: an unknown engine is refused by cmd_detect in one line naming the known ones.
    detect.add_argument("--engine", default="numpy",
                        help="numpy (default: one process, in memory) or spark (the near-duplicate job on Spark; "
                             "needs pip install 'mirrorscope[spark]' and Java 17)")
    detect.add_argument("--spark-master", metavar="URL",
                        help="Spark master for --engine spark (default local[2]; spark://host:7077 for a cluster)")
    detect.add_argument("--parquet", metavar="DIR",
                        help="with --engine spark: read this Parquet export (mirror-report export), or make one here "
                             "when DIR is new (default: a temporary export, removed afterwards)")

    export = commands.add_parser("export", help="write sketches, pages, hosts and links to Parquet files (for Spark)")
    export.add_argument("--parquet", metavar="DIR", required=True, help="a new or empty directory (an earlier export there is replaced)")
    _add_db(export)

    duplicates = commands.add_parser("duplicates", help="near-duplicate clusters and containment pairs")
    _add_db(duplicates)
    duplicates.add_argument("--method", choices=("broder", "center", "super-shingles"), default="broder")
    duplicates.add_argument("--limit", type=_positive_int, default=50, help="clusters shown in the table (all in JSON/CSV)")
    _add_output(duplicates, ("table", "json", "csv"))

    similar = commands.add_parser("similar", help="URLs linked to like URL (anchor text and the words around it)")
    similar.add_argument("url")
    _add_db(similar)
    similar.add_argument("--limit", type=_positive_int, default=10)
    similar.add_argument("--format", choices=("table", "json"), default="table")
    similar.add_argument(
        "--recompute", action="store_true",
        help="first rebuild every anchor bag, signature, similar pair and cluster from the store and store them (as detect does)",
    )

    changes = commands.add_parser("changes", help="page change over re-crawls: per host, per page, and stale mirrors' lag")
    _add_db(changes)
    changes.add_argument("--limit", type=_positive_int, default=50, help="pages shown in the table (all in JSON/CSV)")
    _add_output(changes, ("table", "json", "csv"))

    db = commands.add_parser("db", help="database schema")
    db.add_argument("action", choices=("upgrade", "current"))
    _add_db(db)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help")):
        argv.insert(0, "report")
    try:
        args = build_parser().parse_args(argv)
        check_output(getattr(args, "output", None))
        return _HANDLERS[args.command](args)
    except UsageError as exc:
        # The message may echo the user's arguments or crawled text: never raw to a terminal.
        print(f"mirror-report: error: {safe_text(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("mirror-report: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
