"""Scrapy settings of mirrorscope and the project's own defaults.

Every value carries the reason it has. Override any of them with ``-s NAME=VALUE`` on
``scrapy crawl`` or the matching option of ``mirror-report``; ``ranges.py`` holds the type
and range of each numeric and boolean one, checked before the crawl starts.
"""

import os
from importlib.metadata import PackageNotFoundError, version

from mirrorscope.detectors.budget import BudgetPolicy
from mirrorscope.detectors.traps import TrapLimits

# The detectors state their defaults next to their papers and reasons; the settings below
# that tune them take those values rather than repeating them.
_budgets, _traps = BudgetPolicy(), TrapLimits()

BOT_NAME = "mirrorscope"
SPIDER_MODULES = ["mirrorscope.crawler.spiders"]
NEWSPIDER_MODULE = "mirrorscope.crawler.spiders"
# `scrapy crawl` checks the spider's arguments and the database before starting, so bad
# input gets a one-line error instead of a traceback.
COMMANDS_MODULE = "mirrorscope.crawler.commands"
# Named as crawlers name themselves (Googlebot, bingbot): a crawler that hides it meets
# the page cloakers show people, and its browser-User-Agent refetch (crawler/spam.py)
# then compares two clean copies; cloaking is only seen by a crawler that says it is one.
try:
    _VERSION = version("mirrorscope")
except PackageNotFoundError:  # run from a checkout that was never installed
    _VERSION = "0"
USER_AGENT = f"Mozilla/5.0 (compatible; mirrorscope-bot/{_VERSION}; +https://github.com/mirrorscope/mirrorscope)"
# The product token robots.txt groups address us by (RFC 9309 section 2.2.1).
ROBOTSTXT_USER_AGENT = "mirrorscope-bot"

# --- the store -------------------------------------------------------------------------
# Database URL. Precedence: `mirror-report --db`, this setting (`-s DATABASE_URL=`), the
# DATABASE_URL environment variable, then the embedded SQLite file.
DATABASE_URL = None
# Pages written per transaction: one transaction per page would cap the crawl at the
# disk's fsync rate; a few hundred amortise it while a kill loses at most one batch.
STORE_BATCH_SIZE = 200
# ...or as many links: the pages waiting for the store (this batch and two being
# written) are most of a link-heavy crawl's memory (~500 bytes a stored link: 200 pages
# of 300 links are 30 MB a batch).
STORE_BATCH_LINKS = 20_000
# Seconds a partial batch may wait before it is written anyway, so a slow crawl's pages
# reach the store (and the report) promptly.
STORE_FLUSH_INTERVAL = 2.0

# --- breadth-first order ---------------------------------------------------------------
# Lower priority for deeper requests plus FIFO queues is breadth-first (Najork & Wiener
# 2001: BFS finds high-quality pages early). Scrapy's defaults are LIFO: depth-first.
DEPTH_PRIORITY = 1
SCHEDULER_DISK_QUEUE = "scrapy.squeues.PickleFifoDiskQueue"
SCHEDULER_MEMORY_QUEUE = "scrapy.squeues.FifoMemoryQueue"
# Depth order across the whole crawl (the downloader-aware default keeps it only within
# each host: a chain-shaped host ran 15 levels ahead, SCRAPY-NOTES), round-robin across
# registrable domains within a depth, per-host and per-domain queue caps, and admission
# through the spam, trap and budget checks (crawler/frontier.py).
SCHEDULER_PRIORITY_QUEUE = "mirrorscope.crawler.frontier.HostFairQueue"
# Recovers the frontier from the store after a hard kill (see crawler/scheduler.py).
SCHEDULER = "mirrorscope.crawler.scheduler.RecoveringScheduler"
# How deep links are followed from the seeds (0: no limit, as in Scrapy).
DEPTH_LIMIT = 0
# URLs longer than this are recorded but not fetched: long URLs are mostly traps. Such a
# URL is stored cut to this length, its start then "#cut-" and a hash of the whole
# (storage.storable.cut_to: two long URLs stay two, and the form is never fetched), as
# the link's target and as a page row with outcome `url-too-long`. It also bounds what
# PostgreSQL indexes (pages.url, links.target_url): a B-tree entry holds at most ~2700 bytes.
URL_MAX_LENGTH = 2048

# --- politeness ------------------------------------------------------------------------
ROBOTSTXT_OBEY = True
# Protego, reading a UTF-16 robots.txt too (Scrapy's reading of one allows everything).
ROBOTSTXT_PARSER = "mirrorscope.crawler.middlewares.EncodedRobotParser"
CONCURRENT_REQUESTS = 32
# Items and requests of one response processed at once. Scrapy starts this many asyncio
# tasks for every response's output (100 by default), and a page yields one item (its
# redirects a few more): on the real-page world those tasks were a sixth of the
# reactor's CPU (docs/MEASUREMENTS.md, "Crawl throughput on real pages").
CONCURRENT_ITEMS = 4
CONCURRENT_REQUESTS_PER_DOMAIN = 2
# Scrapy's own downloader does not enforce the line above under the asyncio reactor
# (see crawler/downloader.py); this one does.
DOWNLOADER = "mirrorscope.crawler.downloader.PoliteDownloader"
DOWNLOAD_DELAY = 0
AUTOTHROTTLE_ENABLED = True
# Scrapy's 5 s start delay would stall every new host; latency feedback takes over fast.
AUTOTHROTTLE_START_DELAY = 0.25
AUTOTHROTTLE_MAX_DELAY = 30.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 2.0
DOWNLOAD_TIMEOUT = 20
# Larger bodies are cancelled and recorded as too-large (this also bounds decompression
# bombs: Scrapy checks the inflated size against it).
DOWNLOAD_MAXSIZE = 8 * 1024 * 1024
DOWNLOAD_WARNSIZE = 4 * 1024 * 1024
# A page with <meta http-equiv="refresh"> is kept and its target followed as a link (the
# spider does it): Scrapy's middleware would replace the page by its target, and a
# doorway's words are the evidence against it.
METAREFRESH_ENABLED = False
RETRY_TIMES = 1
# Scrapy's list without CannotResolveHostError: a name that does not resolve does not
# start resolving a moment later, and a retry doubles the lookups of every dead link's host.
RETRY_EXCEPTIONS = [
    "scrapy.exceptions.DownloadConnectionRefusedError",
    "scrapy.exceptions.DownloadFailedError",
    "scrapy.exceptions.DownloadTimeoutError",
    "scrapy.exceptions.ResponseDataLossError",
    "twisted.internet.error.ConnectionDone",
    "twisted.internet.error.ConnectError",
    "twisted.internet.error.ConnectionLost",
    OSError,
    "scrapy.core.downloader.handlers.http11.TunnelError",
]
# A request that failed after its retries is an outcome of its URL, recorded and counted
# in the store and the stats, not an error of the crawl (Scrapy logs ERROR per page).
RETRY_GIVE_UP_LOG_LEVEL = "INFO"
REDIRECT_MAX_TIMES = 5
# Every status reaches the spider so that 404s and 500s are recorded, not dropped.
HTTPERROR_ALLOW_ALL = True
# Proxy variables in the environment would bypass the static resolver and the
# private-address refusal.
HTTPPROXY_ENABLED = False
COOKIES_ENABLED = False
TELNETCONSOLE_ENABLED = False
# Scrapy's remote-control extension runs Python code sent to a local HTTP port: nothing a
# crawler of hostile pages should expose.
REMOTE_CONTROL_ENABLED = False

# --- name resolution and the host policy ---------------------------------------------
# A file in /etc/hosts format mapping names to addresses for this crawl only.
HOSTS_FILE = None
# Resolve only the names HOSTS_FILE maps; any other fails as a DNS error without a query.
# For local test worlds, whose pages link to the real web: no lookup leaves the machine.
RESOLVE_ONLY_HOSTS_FILE = False
# Refuse private, loopback and link-local addresses: a crawl of the public web must not
# be steerable into internal networks. True for local worlds such as the sandbox.
ALLOW_PRIVATE_ADDRESSES = False
TWISTED_DNS_RESOLVER = "mirrorscope.crawler.resolver.StaticHostsResolver"

# --- links -----------------------------------------------------------------------------
# Words kept either side of an anchor (Haveliwala, Gionis & Indyk 2000: 8; at least 1).
ANCHOR_WINDOW = 8
# Links read from one page; its further anchors are counted (mirrorscope/links_truncated)
# and the page's `error` says so. The real-page corpus's largest page (a documentation
# index) has 20,782; a link costs ~500 bytes held and stored, so no page costs more than
# ~12 MB of links however it is made (a 7.5 MB page of adjacent links has 214,000).
LINKS_PER_PAGE_MAX = 25_000

# --- parsing (crawler/page_analysis.py) -------------------------------------------------
# Worker processes that parse pages, read their links and measure their spam features.
# On the reactor's thread the parse was half its CPU and stalled every download while it
# ran (docs/MEASUREMENTS.md); one process per core lets the crawl use every core.
# 0 parses on the reactor's thread.
PARSE_PROCESSES = os.cpu_count() or 1

# --- anchor bags during the crawl (crawler/anchor_bags.py; Haveliwala, Gionis & Indyk 2000) --
# Keep every linked URL's anchor bag (anchor text, ANCHOR_WINDOW words either side, its
# title) up to date as links arrive and store the MH signatures of the bags that changed,
# so `mirror-report similar` finds URLs linked to alike without a recompute, even before
# they are fetched. The work runs in a process of its own on the second core; off saves
# that core and the bags' memory (~12 bytes per URL and term).
ANCHOR_BAGS_ENABLED = True
# Pages per message to the bags' worker process: one numpy pass over many pages' links
# costs less than one per page; the reactor only copies the link strings.
ANCHOR_BAGS_BATCH_SIZE = 64
# Seconds a partial batch may wait before it is absorbed anyway.
ANCHOR_BAGS_INTERVAL = 2.0
# Pages between signature flushes (also at idle and close). A popular URL's bag changes
# with nearly every page; flushing every page would sign it again each time.
ANCHOR_BAGS_FLUSH_PAGES = 5000

# --- term vectors (detectors/term_vectors.py; the CS276 notes' term vector database) ----
# Each HTML page's top 50 tf·idf terms stored with it (about 100 bytes a page), for the
# co-clustering that labels mirror and duplicate clusters and spam hosts with topic terms
# (`mirror-report detect`). Worked in batches of SKETCH_BATCH_SIZE pages on a thread of
# its own; off saves that thread's CPU and the term dictionary's memory (a dict entry
# per distinct word, ~100 bytes each).
TERM_VECTORS_ENABLED = True
# Pages between writes of the document frequencies counted (also at close): an increment
# per distinct term, too many rows to write with every batch.
TERM_VECTORS_FLUSH_PAGES = 5000

# --- document sketches (detectors/sketch.py; Broder 1997, Henzinger 2006) --------------
# Words per shingle: Broder's w = 10 (fewer-token documents get one shingle, flagged).
SHINGLE_SIZE = 10
# Drop text blocks repeated on 3+ pages of the same host (navigation, headers, footers)
# before sketching (detectors/boilerplate.py; Henzinger 2006). Decided by
# benchmarks/boilerplate.py and benchmarks/mirror_sandbox.py: online, a host's first pages
# keep their boilerplate while later ones lose it, which costs mirror recall
# (docs/MEASUREMENTS.md).
BOILERPLATE_REMOVAL = False
# MIN_s sample size: "100 samples reasonable, 200 more than enough" (Broder).
SKETCH_MIN_S = 200
# MOD_m modulus: keeps ~1/25 of the shingles, enough for containment (Broder: m = 25).
SKETCH_MOD_M = 25
# Seed of the fingerprint permutation: sketches with another seed are not comparable.
SKETCH_SEED = 0x6D6972726F727363
# Pages sketched per numpy pass, and the longest a page waits for its batch to fill.
SKETCH_BATCH_SIZE = 32
SKETCH_BATCH_INTERVAL = 0.1

# --- near-duplicates during the crawl (crawler/pipelines.py DuplicatePipeline) -------------
# Resemblance at which a page counts as a near-duplicate of an earlier one (the LSH bands
# are chosen for it; candidates are confirmed with the MIN_s estimate).
DUPLICATE_THRESHOLD = 0.8
# MOD_m containment at which a page counts as lying inside an earlier one.
CONTAINMENT_THRESHOLD = 0.8
# Follow the links of duplicate pages too? Off: their links lead to copies of what the
# original's links lead to, and a mirror must not double the crawl.
EXPAND_DUPLICATES = False

# --- mirrored hosts during the crawl (crawler/mirrors.py MirrorMiddleware) ---------------
MIRROR_DETECTION_ENABLED = True
# Pages between detection rounds; a round also runs whenever the crawl goes idle.
MIRROR_DETECTION_INTERVAL = 500
# Paths sampled on each side of a candidate pair. Bharat, Broder, Dean, Henzinger used ~20;
# on the harder sandbox 10 gives the same verdicts for about half the mirror-side fetches
# (benchmarks/mirror_sandbox.py; docs/MEASUREMENTS.md).
MIRROR_SAMPLE_PATHS = 10
# Candidate pairs kept per host, best first (ten keeps recall high at a small cost).
MIRROR_CANDIDATES_PER_HOST = 10

# --- re-crawls (crawler/recrawl.py, detectors/page_change.py) -----------------------------
# Re-fetch the stored pages with conditional requests and record their change (set by
# `scrapy crawl web -a recrawl=1` / `mirror-report crawl --recrawl`). A re-crawl does not
# detect mirrors again (MIRROR_DETECTION_ENABLED off): it re-fetches what the store holds,
# and refusing a mirror side would leave the stale mirror's pages unmeasured.
RECRAWL = False
# Send the stored validators (If-None-Match / If-Modified-Since) on a re-crawl. Off only
# to measure what they save (benchmarks/recrawl.py) or for servers whose validators lie.
RECRAWL_CONDITIONAL = True
# Let a 304 lower a host's AutoThrottle delay as a 200 does (crawler.recrawl
# ConditionalAutoThrottle); off: Scrapy's rule, where only a 200 may lower it.
AUTOTHROTTLE_304_LOWERS_DELAY = True
# Signature agreement at which a gone page's old version is found on a new page of its
# host (moved): the crawl's near-duplicate threshold.
CHANGE_MOVE_THRESHOLD = 0.8
# Resemblance below which a page changed completely (at most ~8 of 84 min-hashes agree,
# as two unrelated texts of one template do); rapid complete change of a host's pages is
# a spam feature (Fetterly, Manasse, Najork 2004).
CHANGE_COMPLETE_BELOW = 0.1

# --- the frontier's defences (crawler/frontier.py, detectors/budget.py, detectors/traps.py)
# Admission checks in the queue: traps, blocked hosts, budgets. Off: a fair queue only.
FRONTIER_ADMISSION = True
# Queued requests one host / one registrable domain may hold; more are dropped and counted
# (the store keeps the links). Minutes of one host's work at two requests in flight.
FRONTIER_HOST_QUEUE_CAP = 1000
FRONTIER_DOMAIN_QUEUE_CAP = 2000
# With JOBDIR, host queues live on disk, hashed into this many files per depth: one file
# per domain would exhaust the open-file limit on a crawl of many thousand domains.
FRONTIER_DISK_SLOTS = 64
# Depth levels past the shallowest the queue may pop from when every host queued at the
# levels before has CONCURRENT_REQUESTS_PER_DOMAIN requests in the downloader: the last
# hosts of a level then no longer hold the whole crawl at two requests in flight (the
# BFS depth barrier), and no host runs more than this many levels ahead of the crawl.
FRONTIER_DEPTH_LOOKAHEAD = 2
# Fetches a host, a registrable domain and an IP may have before any in-link from another
# domain (each such domain adds FRONTIER_BUDGET_PER_INLINK_DOMAIN). Seeds have no limit.
# The sizes and their reasons are in detectors/budget.py (BudgetPolicy).
FRONTIER_HOST_BUDGET = _budgets.host_base
FRONTIER_DOMAIN_BUDGET = _budgets.domain_base
FRONTIER_IP_BUDGET = _budgets.ip_base
FRONTIER_BUDGET_PER_INLINK_DOMAIN = _budgets.per_inlink_domain
# No host gets more pages than this in one crawl, however many in-links it has.
FRONTIER_HOST_MAX_PAGES = _budgets.ceiling
# URLs refused as traps: longer than this, deeper than this many path segments, and the
# calendar URLs a host may have (detectors/traps.py, TrapLimits, has the reasons).
FRONTIER_TRAP_MAX_URL_LENGTH = _traps.max_url_length
FRONTIER_TRAP_MAX_PATH_SEGMENTS = _traps.max_path_segments
FRONTIER_TRAP_MAX_CALENDAR_URLS = _traps.max_calendar_urls

# --- one frontier for many crawl processes (crawler/shared.py) ----------------------------
# Redis URL of a frontier shared by every `scrapy crawl web` started with it, on any
# machine (queues, seen-set, per-host in-flight slots, leases, the policy's changes). None:
# the frontier lives in this process, and no Redis is needed for a crawl on one machine.
FRONTIER_REDIS_URL = None
# Key prefix of that frontier's state: two crawls (or two tests) on one Redis use two.
FRONTIER_REDIS_PREFIX = "mirrorscope:"
# Seconds without a heartbeat after which a process counts as dead and its leased URLs go
# to the others. Longer than any stall of a live process's reactor (a mirror round, a
# large page's parse: seconds), which would otherwise have its URLs fetched twice.
FRONTIER_LEASE_TIMEOUT = 30.0
# Seconds between heartbeats, policy syncs and polls of the shared queue: how long a spam
# verdict takes to reach the other processes, and how long a process idles before it sees
# work another queued (Scrapy's own poll is 5 s). A few Redis calls each: cheap.
FRONTIER_HEARTBEAT_INTERVAL = 0.25

# --- web spam during the crawl (crawler/spam.py, detectors/spam.py) ----------------------
# Host verdicts from page scores, link farms and cloaking checks; a spam host is blocked.
SPAM_DETECTION_ENABLED = True
# Scored pages a host needs before it is judged on its spam pages: a page scored as spam
# gets this many pages of its host fetched to confirm, and no more.
SPAM_CONFIRM_PAGES = 2
# Pages per host whose scores, word counts and out-degrees are kept for its verdict.
SPAM_HOST_SAMPLE = 200
# Fetch each host's first HTML page again with a browser User-Agent and compare sketches.
CLOAKING_CHECK_ENABLED = True

SPIDER_MIDDLEWARES = {
    # Learns budgets from pages and drops refused outlinks before requests are built.
    "mirrorscope.crawler.frontier.FrontierMiddleware": 950,
    # The host graph from each page as it is parsed: link farms are found by structure
    # while their members' first pages arrive.
    "mirrorscope.crawler.spam.SpamGraphMiddleware": 960,
}
DOWNLOADER_MIDDLEWARES = {
    # A redirect back to a URL of its own chain fails at once instead of going round the
    # loop up to REDIRECT_MAX_TIMES (the redirect middleware's new request passes here).
    "mirrorscope.crawler.middlewares.RedirectLoopMiddleware": 40,
    # Before robots.txt (100) so that a refused host is not even asked for robots.txt.
    "mirrorscope.crawler.middlewares.HostPolicyMiddleware": 50,
    # Refuses the mirror side of validated mirrors (after the host policy, before robots).
    "mirrorscope.crawler.mirrors.MirrorMiddleware": 60,
    # Scrapy's robots.txt middleware, except that an unreachable robots.txt (an error, 5xx,
    # 429) disallows the host as RFC 9309 requires; Scrapy's would allow everything.
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "mirrorscope.crawler.middlewares.RobotsTxtMiddleware": 100,
    # Scrapy's redirect middleware, except that a redirect to a URL the frontier refuses
    # ends there and its chain is recorded (Scrapy's queued it, and the queue dropped it).
    "scrapy.downloadermiddlewares.redirect.RedirectMiddleware": None,
    "mirrorscope.crawler.middlewares.FrontierRedirectMiddleware": 600,
}
ITEM_PIPELINES = {
    # Cheap first: sketches (per page) before the batched write.
    # Page spam scores read the tokens that the sketch pipeline then consumes.
    "mirrorscope.crawler.pipelines.SpamScorePipeline": 250,
    # Term vectors read the tokens too, so they come before the sketch pipeline.
    "mirrorscope.crawler.term_vectors.TermVectorPipeline": 280,
    "mirrorscope.crawler.pipelines.SketchPipeline": 300,
    # Host verdicts; gates a spam page's outlinks before the duplicate pipeline expands it.
    "mirrorscope.crawler.spam.SpamPipeline": 450,
    "mirrorscope.crawler.pipelines.DuplicatePipeline": 500,
    # Anchor bags of the URLs each page links to (after the duplicate check, before the write).
    "mirrorscope.crawler.anchor_bags.AnchorBagPipeline": 600,
    # Re-crawls only: each stored page's change; a 304 or a failed re-fetch is not written.
    "mirrorscope.crawler.recrawl.ChangePipeline": 800,
    "mirrorscope.crawler.pipelines.StorePipeline": 900,
}
EXTENSIONS = {
    "scrapy.extensions.telnet.TelnetConsole": None,
    # AutoThrottle, except that a 304 may lower a host's delay as a 200 does: a conditional
    # re-crawl is mostly 304s, and Scrapy's kept it at the start delay.
    "scrapy.extensions.throttle.AutoThrottle": None,
    "mirrorscope.crawler.recrawl.ConditionalAutoThrottle": 0,
    # Off unless CRAWL_SAMPLE_FILE is set: the crawl's queues sampled over time.
    "mirrorscope.crawler.diagnostics.CrawlSampler": 10,
    # The crawl's shared state (store, run, hosts file, frontier policy, spam monitor,
    # store writer): every mirrorscope component finds it here.
    "mirrorscope.crawler.context.CrawlContext": 0,
    # Off unless FRONTIER_REDIS_URL is set: heartbeats, leases and the end of a shared crawl.
    "mirrorscope.crawler.shared.SharedCrawl": 20,
}

# --- diagnostics (crawler/diagnostics.py) ----------------------------------------------
# A file to write the crawl's queues, backlogs and CPU seconds to, one JSON line per
# sample (benchmarks/crawl.py reads it); None builds no sampler.
CRAWL_SAMPLE_FILE = None
# Seconds between samples: fine enough to see a stall of a second.
CRAWL_SAMPLE_INTERVAL = 0.5

LOG_LEVEL = "INFO"
FEED_EXPORT_ENCODING = "utf-8"
