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
