"""The optional parts of the sandbox: harder mirrors with their decoys, and spam with traps.

`build_world(seed, hard_mirrors=True, spam=True)` (or `build_full_world`)
appends these hosts to the standard world; each part also says what the
portal should list and which host pairs are decoys. Every site draws from its
own `random.Random`, so the standard hosts' bytes do not change (only the
portal gains listings).
"""

from __future__ import annotations

import functools
import random
import re
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

from . import names as n
from .markup import ext, items, link, page_resource, text_resource
from .model import Host, Resource
from .sites.apiref import apiref_site
from .sites.blog import blog_site
from .sites.copies import absolutise, main_of, repackage, reserialise, stale_copy
from .sites.events import CALENDAR, events_site
from .sites.generic import CARD, PLAIN, PROVIDER_FOOTER, SmallSite, SmallSiteWriter, make_theme, provider_pages, small_site
from .sites.spam import LinkFarm, cloak_for, cloaked_site, doorway_site, hidden_text_site
from .text import Prose

# Addresses: 127.0.1.x is the standard world's network; the harder mirrors
# keep their originals there, with some copies in 127.0.9.0/24 (another
# network); spam lives in 127.0.5.0/24. 127.0.0.0/24 is never used.
SAME_NET = "127.0.1."
OTHER_NET = "127.0.9."
SPAM_NET = "127.0.5."

# (category, host, title, description topic) portal listings.
Listing = tuple[str, str, str, str]


@dataclass
class Part:
    """Hosts to append to a world, what the portal lists of them, and decoy pairs."""

    hosts: list[Host] = field(default_factory=list)
    listings: list[Listing] = field(default_factory=list)
    decoy_pairs: list[tuple[str, str, str]] = field(default_factory=list)

    def add(self, name: str, ip: str, role: str, resources: dict[str, Resource], of: str | None = None, **extra: object) -> None:
        self.hosts.append(Host(name=name, ip=ip, role=role, resources=resources, of=of, **extra))  # type: ignore[arg-type]

    def listing(self, category: str, host: str, title: str, topic: str) -> None:
        self.listings.append((category, host, title, topic))


def _rng(seed: int, name: str) -> random.Random:
    return random.Random(f"{seed}:{name}")


# -- hard mirrors -----------------------------------------------------------------------


def _repackaged_news(seed: int, news: dict[str, Resource]) -> dict[str, Resource]:
    """The news site inside CoastWire's chrome, plus CoastWire's own two pages."""
    prose = Prose("travel", _rng(seed, n.REPACKAGED))
    prose.new_page()
    blurb = prose.paragraph()
    nav = items(
        [link("/", "Top stories"), link("/coastwire/about.html", "About CoastWire"), link("/coastwire/advertise.html", "Advertise")],
        cls="cw-nav",
    )

    def frame(inner: str) -> str:
        return (
            '<div class="cw-header"><p class="cw-logo"><a href="/">CoastWire</a></p>'
            f'<p class="cw-strap">Regional news from every harbour, every hour</p>{nav}</div>\n'
            f'<div class="cw-story">\n{inner}\n</div>\n'
            f'<div class="cw-footer"><p>{blurb}</p><p>\u00a9 CoastWire Media Ltd. All rights reserved.</p></div>'
        )

    def retitle(title: str) -> str:
        return title.rsplit(" \u2013 ", 1)[0] + " \u00bb CoastWire"

    copy = repackage(news, retitle, frame)
    for path, heading in (("/coastwire/about.html", "About CoastWire"), ("/coastwire/advertise.html", "Advertise with us")):
        prose.new_page()
        main = f"<h1>{heading}</h1>" + "".join(f"<p>{p}</p>" for p in prose.paragraphs(3))
        copy[path] = page_resource(f"{heading} \u00bb CoastWire", main, frame, prose.paragraph)
    return copy


def _reserialised(seed: int, wiki: dict[str, Resource]) -> dict[str, Resource]:
    def scripts(path: str) -> list[tuple[str, str]]:
        return [("/static/depot.js", ""), ("", f'window.depot = {{"mirror": "{n.WIKI_COPY}", "page": "{path}"}};')]

    copy = reserialise(wiki, scripts)
    copy["/robots.txt"] = text_resource(wiki["/robots.txt"].body.decode() + "# mirrored nightly by mirror-depot.net\n")
    copy["/static/depot.js"] = text_resource("window.depot = window.depot || {};\n", "application/javascript")
    return copy


def _reposts(seed: int, writer: SmallSiteWriter, recipes: dict[str, Resource], count: int) -> None:
    """Add /reposts/: `count` recipe articles from the recipes site in the writer's own chrome."""
    rng = _rng(seed, f"{n.REUSE}:reposts")
    candidates = sorted(p for p in recipes if re.fullmatch(r"/recipes/[a-z]+/[^/]+\.html", p))
    chosen = rng.sample(candidates, count)
    listing = []
    for path in chosen:
        article = main_of(recipes[path].body, "<article>", "</article>")

        def on_original(href: str, source: str = path) -> str:
            target = urljoin(f"http://{n.RECIPES}{source}", href)
            parts = urlsplit(target)
            if parts.hostname != n.RECIPES:
                return href
            return ext(n.RECIPES, parts.path + (f"?{parts.query}" if parts.query else ""))

        name = path.rsplit("/", 1)[1]
        title = re.search(r"<h1>(.*?)</h1>", article).group(1)  # type: ignore[union-attr]
        main = f"<article>{absolutise(article, on_original)}</article><p>Reposted from {link(ext(n.RECIPES, path), 'Salt & Simmer')}.</p>"
        writer.page(f"/reposts/{name}", title, main)
        listing.append(link(name, title))
    writer.prose.new_page()
    writer.page("/reposts/", "From other kitchens", f"<h1>From other kitchens</h1>{writer.paragraphs(1)}{items(listing)}")


def _changed_copies(part: Part, seed: int, news: dict[str, Resource]) -> None:
    """Mirrors whose bytes differ from their original's: repackaged, re-serialised, stale."""
    # Repackaged: the news site in another site's chrome, same /24 as the news site.
    part.add(n.REPACKAGED, f"{SAME_NET}20", "repackaged-mirror", _repackaged_news(seed, news), n.NEWS)
    part.listing("Regional", n.REPACKAGED, "CoastWire regional news", "travel")

    # Re-serialised, in another network.
    wiki = small_site(
        SmallSite(
            "Fernhill Makers Wiki", "Notes from the Fernhill makerspace", "crafts",
            (("tools", "Tools", 14), ("projects", "Projects", 16), ("howto", "How-tos", 12)), CARD,
            links=(("/", ext(n.WIKI_COPY), "A mirror of this wiki at mirror-depot.net"),),
        ),
        _rng(seed, n.WIKI),
    )
    part.add(n.WIKI, f"{SAME_NET}21", "original", wiki)
    part.add(n.WIKI_COPY, f"{OTHER_NET}21", "reserialised-mirror", _reserialised(seed, wiki), n.WIKI)
    part.listing("Computers & Programming", n.WIKI, "Fernhill Makers Wiki", "programming")

    # Stale: an old copy in the same /24, some pages since edited, some gone.
    kayak = small_site(
        SmallSite(
            "Tidewater Kayak Club", "Sea and river paddling since 1987", "outdoors",
            (("trips", "Trips", 12), ("skills", "Skills", 10), ("news", "Club news", 10)), PLAIN,
            links=(("/about.html", ext(n.KAYAK_STALE), "Our old website (an archived copy)"),),
        ),
        _rng(seed, n.KAYAK),
    )
    editor = Prose("outdoors", _rng(seed, f"{n.KAYAK_STALE}:edits"))
    stale, _, _ = stale_copy(kayak, _rng(seed, n.KAYAK_STALE), editor.paragraph, missing=0.2, edited=0.3)
    part.add(n.KAYAK, f"{SAME_NET}22", "original", kayak)
    part.add(n.KAYAK_STALE, f"{SAME_NET}23", "stale-mirror", stale, n.KAYAK)
    part.listing("Sports & Outdoors", n.KAYAK, "Tidewater Kayak Club", "travel")


def _identical_copies(part: Part, seed: int) -> None:
    """Mirrors byte for byte: an alias (two names, one address) and a copy linked only from deep inside its original."""
    library = small_site(
        SmallSite(
            "Greywell Public Library", "Books, events and help for everyone in Greywell", "university",
            (("events", "Events", 8), ("collections", "Collections", 8), ("help", "Help", 6)), CARD,
        ),
        _rng(seed, n.LIBRARY),
    )
    part.add(n.LIBRARY, f"{SAME_NET}24", "original", library)
    part.add(n.LIBRARY_ALIAS, f"{SAME_NET}24", "alias", library, n.LIBRARY)
    part.listing("Education", n.LIBRARY, "Greywell Public Library", "university")

    # The copy is linked once, from a page three links below the portal.
    observatory = SmallSiteWriter(
        SmallSite(
            "Ostrander Observatory", "Public nights under dark skies", "outdoors",
            (("nights", "Open nights", 10), ("guides", "Observing guides", 10)), PLAIN,
            links=(("/about.html", "about/links.html", "Links and friends of the observatory"),),
        ),
        _rng(seed, n.OBSERVATORY),
    )
    obs = observatory.build()
    observatory.prose.new_page()
    observatory.page(
        "/about/links.html",
        "Links",
        "<h1>Links</h1>"
        + observatory.paragraphs(2)
        + items([f"{link(ext(n.OBSERVATORY_MIRROR), 'mirror.skyarchive.net')}: a full copy of this site, kept by Sky Archive"]),
    )
    part.add(n.OBSERVATORY, f"{SAME_NET}25", "original", obs)
    part.add(n.OBSERVATORY_MIRROR, f"{OTHER_NET}25", "mirror", dict(obs), n.OBSERVATORY)
    part.listing("Education", n.OBSERVATORY, "Ostrander Observatory", "university")


def _lookalike_decoys(part: Part, seed: int) -> None:
    """Decoys that look like mirrors from outside: a look-alike name, one address, one template."""
    part.add(
        n.LOOKALIKE, f"{SAME_NET}30", "decoy",
        small_site(
            SmallSite(
                "Pyrefield Stoves & Fireplaces", "Wood burners fitted and serviced", "crafts",
                (("stoves", "Stoves", 5), ("fitting", "Fitting", 4)), PLAIN,
            ),
            _rng(seed, n.LOOKALIKE),
        ),
        n.DOCS,
    )
    part.decoy_pairs += [(n.DOCS, n.LOOKALIKE, "lookalike-name"), (n.DOCS_MIRROR, n.LOOKALIKE, "lookalike-name")]
    part.listing("Home & Garden", n.LOOKALIKE, "Pyrefield Stoves & Fireplaces", "travel")

    # Three unrelated sites on one virtual-hosting address.
    vhost_specs = (
        SmallSite("Pinecrest Dental Practice", "Family dentistry", "health", (("treatments", "Treatments", 6),), PLAIN),
        SmallSite("Marlowe Pottery", "Handmade stoneware", "crafts", (("pots", "Pots", 5), ("classes", "Classes", 3)), CARD),
        SmallSite(
            "Juniper Yoga", "Small classes, patient teachers", "health", (("classes", "Classes", 6),), PLAIN,
            friends=((ext(n.LIBRARY_ALIAS), "greywell-library.org, where our Tuesday class meets"),),
        ),
    )
    for name, spec in zip(n.VHOSTS, vhost_specs, strict=True):
        part.add(name, f"{SAME_NET}31", "other", small_site(spec, _rng(seed, name)))
    for i, a in enumerate(n.VHOSTS):
        part.decoy_pairs += [(a, b, "shared-ip") for b in n.VHOSTS[i + 1 :]]
    part.decoy_pairs.append((n.BIRDERS, n.HOMEPAGE, "shared-ip"))
    part.listing("Health", n.VHOSTS[0], "Pinecrest Dental Practice", "university")
    part.listing("Arts & Crafts", n.VHOSTS[1], "Marlowe Pottery", "travel")
    part.listing("Health", n.VHOSTS[2], "Juniper Yoga", "travel")

    # One site-builder template, two unrelated sites.
    harbor = make_theme("Harbor", "sitesmith")
    part.add(
        n.TEMPLATE_A, f"{SAME_NET}32", "other",
        small_site(SmallSite("Brightleaf Gardens", "Garden design and care", "outdoors", (("gardens", "Gardens", 8), ("care", "Care guides", 6)), harbor), _rng(seed, n.TEMPLATE_A)),
    )
    part.add(
        n.TEMPLATE_B, f"{SAME_NET}33", "decoy",
        small_site(SmallSite("Copper Kettle Cafe", "Breakfast, lunch and cake", "cooking", (("menu", "Menu", 8), ("news", "News", 6)), harbor), _rng(seed, n.TEMPLATE_B)),
        n.TEMPLATE_A,
    )
    part.decoy_pairs.append((n.TEMPLATE_A, n.TEMPLATE_B, "shared-template"))
    part.listing("Home & Garden", n.TEMPLATE_A, "Brightleaf Gardens", "travel")
    part.listing("Food & Drink", n.TEMPLATE_B, "Copper Kettle Cafe", "cooking")


def _shared_page_decoys(part: Part, seed: int, recipes: dict[str, Resource]) -> None:
    """Decoys that share some pages with another site: a hosting provider's, or reposted recipes."""
    # The hosting provider's identical licence, privacy and contact pages on two unrelated sites.
    provider = provider_pages(_rng(seed, "provider:bramble"))
    for name, octet, role, of, spec in (
        (n.COMMON_A, 34, "other", None, SmallSite("Hollis Carpentry", "Joinery and repairs", "crafts", (("work", "Our work", 8),), PLAIN, contact=False, footer_pages=PROVIDER_FOOTER)),
        (n.COMMON_B, 35, "decoy", n.COMMON_A, SmallSite("Redfern Tutoring", "Maths and science tutors", "university", (("subjects", "Subjects", 8),), CARD, contact=False, footer_pages=PROVIDER_FOOTER)),
    ):
        part.add(name, f"{SAME_NET}{octet}", role, small_site(spec, _rng(seed, name)) | provider, of)
    part.decoy_pairs.append((n.COMMON_A, n.COMMON_B, "shared-common-pages"))
    part.listing("Home & Garden", n.COMMON_A, "Hollis Carpentry", "travel")
    part.listing("Education", n.COMMON_B, "Redfern Tutoring", "university")

    # A site that reposts about a tenth of the recipes site's pages.
    reuse = SmallSiteWriter(
        SmallSite(
            "Weeknight Suppers", "Quick dinners for busy evenings", "cooking", (("suppers", "Suppers", 16),), CARD,
            extra_menu=(("/reposts/", "From other kitchens"),),
        ),
        _rng(seed, n.REUSE),
    )
    reused = reuse.build()
    _reposts(seed, reuse, recipes, 4)
    part.add(n.REUSE, f"{SAME_NET}36", "decoy", reused, n.RECIPES)
    part.decoy_pairs += [(n.RECIPES, n.REUSE, "reused-pages"), (n.ARCHIVE, n.REUSE, "reused-pages")]
    part.listing("Food & Drink", n.REUSE, "Weeknight Suppers", "cooking")


def hard_mirror_part(seed: int, news: dict[str, Resource], recipes: dict[str, Resource]) -> Part:
    """Repackaged, re-serialised, stale, alias and deep-link mirrors, and five kinds of decoy."""
    part = Part()
    _changed_copies(part, seed, news)
    _identical_copies(part, seed)
    _lookalike_decoys(part, seed)
    _shared_page_decoys(part, seed, recipes)
    return part


# -- spam and traps ----------------------------------------------------------------------


def _spam_hosts(part: Part, seed: int) -> tuple[str, str]:
    """The link farm, doorway, cloaking and hidden-text hosts; the farm's and the doorway's entry paths."""
    farm = LinkFarm(seed, n.FARM)
    for i, name in enumerate(n.FARM):
        part.add(
            name, f"{SPAM_NET}{i + 1}", "link-farm", farm.host_resources(),
            dynamic=functools.partial(farm.resolve, name), unbounded=(n.FARM_PREFIX,),
        )
    farm_entry = farm.entry_path(_rng(seed, "farm-entry"))

    doorway = doorway_site(_rng(seed, n.DOORWAY))
    door_entry = min(p for p in doorway if p.startswith("/hotels/"))
    part.add(n.DOORWAY, f"{SPAM_NET}10", "doorway", doorway)

    browser = small_site(
        SmallSite("Harbourview Holiday Lets", "Cottages by the sea", "travel", (("cottages", "Cottages", 8),), CARD),
        _rng(seed, n.CLOAKING),
    )
    part.add(
        n.CLOAKING, f"{SPAM_NET}11", "cloaking",
        cloaked_site(browser, _rng(seed, f"{n.CLOAKING}:spam")), cloak=cloak_for(browser),
    )

    hidden = hidden_text_site(
        SmallSite("Northfield Plumbing Pros", "Plumbers you can trust", "crafts", (("services", "Services", 9),), PLAIN),
        _rng(seed, n.HIDDEN_TEXT),
    )
    part.add(n.HIDDEN_TEXT, f"{SPAM_NET}12", "hidden-text", hidden)
    return farm_entry, door_entry


def _link_rich_hosts(part: Part, seed: int, farm_entry: str, door_entry: str) -> None:
    """Good hosts that link to spam: the events site (a calendar trap too) and a blog; and an API reference.

    The events site's sponsors are the cloaking and hidden-text hosts (they look fine in
    a browser); blog comments carry the farm and doorway links.
    """
    events, writer = events_site(
        SmallSite(
            "Harbourtown Arts", "What's on in and around Harbourtown", "travel",
            (("events", "What's on", 14), ("venues", "Venues", 5)), CARD,
            links=(
                ("/", ext(n.CLOAKING), "Our sponsor: Harbourview Holiday Lets"),
                ("/", ext(n.HIDDEN_TEXT), "Our sponsor: Northfield Plumbing Pros"),
            ),
        ),
        _rng(seed, n.EVENTS),
        seed,
    )
    part.add(n.EVENTS, f"{SAME_NET}40", "other", events, dynamic=writer.calendar, unbounded=(CALENDAR,))
    planted = {
        1: [(ext(n.FARM[0], farm_entry), "cheap flights", "Great post, thanks for sharing! Best deals here:")],
        2: [(ext(n.DOORWAY, door_entry), "cheap hotels harbourtown", "Lovely photos. Looking for somewhere to stay?")],
    }
    blog = blog_site(
        SmallSite("Quiet Coast Notes", "Walks, weather and the odd recipe", "travel", (("posts", "Posts", 9),), PLAIN),
        _rng(seed, n.BLOG),
        planted,
    )
    part.add(n.BLOG, f"{SAME_NET}41", "other", blog)
    part.add(n.APIREF, f"{SAME_NET}42", "other", apiref_site(_rng(seed, n.APIREF)))
    part.listing("Regional", n.EVENTS, "Harbourtown Arts: what's on", "travel")
    part.listing("Personal pages", n.BLOG, "Quiet Coast Notes", "travel")
    part.listing("Computers & Programming", n.APIREF, "Tessera DB API reference", "programming")


def spam_part(seed: int) -> Part:
    """A five-host link farm, a doorway, a cloaking and a hidden-text host, a calendar trap, good link-rich hosts."""
    part = Part()
    farm_entry, door_entry = _spam_hosts(part, seed)
    _link_rich_hosts(part, seed, farm_entry, door_entry)
    return part
