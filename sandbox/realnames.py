"""Host names of the real-pages world (`sandbox.real`).

Invented names under real public suffixes (.org, .net, .de, .fr, .ac.uk,
.com.tw, .biz, .info), like `names.py`; they are only ever resolved through
the sandbox's own hosts map, never through DNS.
"""

PORTAL = "www.opendocs-directory.org"  # the only seed: a directory of free documentation

# -- originals: one real site each ------------------------------------------------------

DJANGO = "docs.ponyframework.org"
VIM = "vimhelp.editorsguild.net"
GNUPLOT = "manual.plotcraft.org"
MAXIMA = "maxima.symbolic-algebra.net"  # shares VIM's address (virtual hosting)
POLICY = "policy.debdocs.org"
WERKZEUG = "werkzeug.wsgi-toolkit.org"  # the good host the spam pages' copied footers link to
JINJA = "jinja.templating-docs.org"
CLICK = "click.cli-toolkit.org"
DEBREF = "reference.debdocs.org"  # Debian Reference in German, Spanish and Portuguese
DEBREF_ZH = "reference.debian-tw.org"  # Debian Reference in Chinese (Taiwan)
DEVREF_FR = "devref.debian-fr.org"  # Developer's Reference in French ...
DEVREF_DE = "devref.debian-de.org"  # ... and in German: the same paths
MAINT_FR = "maint-guide.debian-fr.org"  # XHTML served as application/xhtml+xml
MAINT_ES = "guia-mantenedor.debian-es.org"
FAQ_FR = "faq.debian-fr.org"
FAQ_DE = "faq.debian-de.org"

# -- planted mirrors ------------------------------------------------------------------------

WERKZEUG_MIRROR = "werkzeug.pydocs-mirror.net"  # exact, another network
MAINT_FR_MIRROR = "debian.miroir-docs.fr"  # exact copy of the XHTML site, another network
DEBREF_ZH_MIRROR = "docs.taipei-mirror.com.tw"  # exact copy of the Chinese site, linked once, deep
ARCHIVE = "archive.opendocs-library.org"  # own pages plus JINJA under ARCHIVE_PREFIX
VIM_ARCHIVE = "ftp.northvale.ac.uk"  # own pages plus VIM under VIM_ARCHIVE_PREFIX
FAQ_DE_PARTIAL = "faq.linux-spiegel.de"  # half of FAQ_DE, root identical
GNUPLOT_PARTIAL = "gnuplot.plotmirror.net"  # half of GNUPLOT, root identical
POLICY_STALE = "policy.old-debdocs.org"  # an old copy: pages missing, paragraphs different
CLICK_REPACKAGED = "www.devsnippets-hub.com"  # every page in its own chrome with ads
FAQ_FR_RESERIALISED = "faq-debian.miroir-libre.fr"  # parsed and written out again
MAINT_ES_ALIAS = "nuevos-mantenedores.debian-es.org"  # a second name on MAINT_ES's address
DEBREF_RENAMED = "wiki.linuxhandbuch-verein.de"  # DEBREF's pages renamed under DEBREF_RENAMED_PREFIX, links rewritten

ARCHIVE_PREFIX = "/pub/jinja2/"
VIM_ARCHIVE_PREFIX = "/pub/vim/"
DEBREF_RENAMED_PREFIX = "/handbuch/"

# -- decoys and other good hosts ------------------------------------------------------------

LOOKALIKE = "docs-ponyframework.org"  # one character from DJANGO; the Italian Debian Reference
REUSE = "www.djangotips-blog.net"  # reposts three of DJANGO's pages in its own chrome
BLOG = "www.terminal-diaries.net"  # comments carry the farm and doorway links
EVENTS = "events.opensource-meetups.org"  # an infinite calendar; sponsors are the cloaking and hidden-text hosts

# -- spam -------------------------------------------------------------------------------------

FARM = (
    "www.cheap-hosting-deals.biz",
    "www.best-vpn-offers.info",
    "www.seo-backlinks-pro.biz",
    "www.free-software-keys.info",
    "www.discount-laptops-now.biz",
)
DOORWAY = "www.free-software-downloads.info"
CLOAKING = "www.linux-tutorials-hub.com"
HIDDEN_TEXT = "www.plotting-software-reviews.com"
