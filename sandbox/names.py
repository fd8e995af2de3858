"""Host names of the standard sandbox world.

Realistic names under ordinary public suffixes, so registrable-domain and
hostname features behave as on the web. They are only ever resolved through
the sandbox's own hosts map, never through DNS.
"""

PORTAL = "www.linkatlas.net"
DOCS = "docs.pyref.org"
RECIPES = "www.saltandsimmer.com"
UNIVERSITY = "www.cs.northfield.edu"
NEWS = "www.harbourtown-gazette.com"
DOCS_MIRROR = "pydocs.fastmirror.net"
ARCHIVE = "archive.foodcommons.org"
ALUMNI = "cs.northfield-alumni.org"
DECOY = "docs.rubicon-lang.org"
BIRDERS = "www.northfield-birders.org"
HOMEPAGE = "home.ellisgrant.name"
HOSTILE = "badhost.glitchworks.net"

# Where the prefix mirror keeps its copy of the recipes site.
ARCHIVE_PREFIX = "/pub/saltandsimmer/"

# -- the harder mirrors (build_world(..., hard_mirrors=True)) --------------------

REPACKAGED = "www.coastwire-news.com"  # the news site, every page in its own chrome
WIKI = "wiki.fernhill-makers.org"  # an original ...
WIKI_COPY = "fernhill.mirror-depot.net"  # ... re-serialised, in another network
KAYAK = "www.tidewater-kayak.org"  # an original ...
KAYAK_STALE = "kayak.oldpages-archive.net"  # ... and an old copy: pages edited or missing
LIBRARY = "www.greywell-library.org"  # an original ...
LIBRARY_ALIAS = "greywell-library.org"  # ... and a second name on its address
OBSERVATORY = "www.ostrander-observatory.org"  # an original ...
OBSERVATORY_MIRROR = "mirror.skyarchive.net"  # ... copied in another network, one deep link to it

# Decoys: pairs of hosts that must not be reported as mirrors.
LOOKALIKE = "docs-pyref.org"  # one character from docs.pyref.org, unrelated content
VHOSTS = ("www.pinecrest-dental.com", "www.marlowe-pottery.com", "www.juniper-yoga.net")  # one address
TEMPLATE_A = "www.brightleaf-gardens.com"  # the same site template ...
TEMPLATE_B = "www.copperkettle-cafe.com"  # ... different content
COMMON_A = "www.hollis-carpentry.com"  # identical licence, privacy and contact pages ...
COMMON_B = "www.redfern-tutoring.org"  # ... nothing else in common
REUSE = "www.weeknight-suppers.net"  # reposts about a tenth of the recipes site's pages

# -- spam and traps (build_world(..., spam=True)) ----------------------------------

FARM = (
    "www.cheap-flights-4u.biz",
    "www.top-casino-bonus.info",
    "www.quick-loans-today.biz",
    "www.replica-watch-outlet.info",
    "www.best-price-pharmacy.biz",
)
DOORWAY = "www.cheap-harbourtown-hotels.info"
CLOAKING = "www.harbourview-holiday-lets.com"
HIDDEN_TEXT = "www.northfield-plumbing-pros.com"
EVENTS = "events.harbourtown-arts.org"  # a normal site with an infinite calendar under /calendar/
BLOG = "www.quietcoast-notes.net"  # a normal blog whose comments carry spam links
APIREF = "api.tessera-db.org"  # good documentation: a general index of 300+ links

CALENDAR_PREFIX = "/calendar/"
FARM_PREFIX = "/"  # a link farm's whole URL space is generated
