"""Spam features and verdicts on crafted pages, hosts and host graphs (no network)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mirrorscope.detectors.canonical import canonical_document
from mirrorscope.detectors.spam import (
    SPAM_SCORE,
    WEAK_CAP,
    FarmGroup,
    HostEvidence,
    host_features,
    host_verdict,
    hostname_features,
    link_farms,
    page_features,
    page_verdict,
)
from mirrorscope.detectors.spam_content import markup

PROSE = """
Bread has been baked for thousands of years, and the method has changed less than one
might expect. Flour, water, salt and a leavening agent are mixed into a dough, which is
kneaded until the gluten forms long elastic strands. Those strands trap the gas released
by yeast as it feeds on sugars in the flour, and the dough slowly rises. A baker judges
the moment to shape the loaf by feel rather than by the clock: a well proved dough springs
back gently when pressed with a finger. Temperature matters more than most recipes admit.
A warm kitchen in summer can halve the rising time, while a cold larder in winter may
double it, which is why experienced bakers keep notes about the weather as carefully as
about their ingredients. Sourdough replaces commercial yeast with a culture of wild yeasts
and lactic bacteria kept alive in a jar of flour and water. The culture gives the bread a
sour tang and a chewier crumb, and it keeps for weeks without going stale. Feeding the
starter every day becomes a small ritual; some families have kept theirs going for
generations and lend portions to neighbours. Ovens differ as well. Professional bakeries
use deck ovens with stone floors and injected steam, which lets the crust stay soft long
enough for the loaf to expand before it sets. At home, a heavy cast iron pot with a lid
traps the moisture escaping from the dough and gives a similar effect. The lid comes off
for the last twenty minutes so that the crust can darken and crackle as it cools. Finally
there is patience. Cutting a loaf straight from the oven releases steam that should have
finished cooking the crumb, leaving it gummy. An hour on a wire rack is enough for most
breads, although rye loaves are traditionally left for a full day before anyone slices
them. The reward is a crust that shatters, an open crumb, and a kitchen that smells of
toast and caramel for the rest of the afternoon.
"""

SPAM_PHRASES = (
    "cheap flights", "cheap hotels", "best price", "casino bonus", "free spins",
    "payday loans", "buy now", "hotel deals", "last minute flights", "discount deals",
)


def stuffed(words: int, seed: int = 0, phrases: tuple[str, ...] = SPAM_PHRASES) -> str:
    rng = random.Random(seed)
    out: list[str] = []
    while sum(len(p.split()) for p in out) < words:
        out.append(rng.choice(phrases))
    return " ".join(out)


def html_page(title: str, body: str, head: str = "") -> str:
    return f"<!doctype html><html><head><title>{title}</title>{head}</head><body>{body}</body></html>"


def features(html: str):
    return page_features(canonical_document(html), len(html))


def codes(html: str) -> set[str]:
    return {r.code for r in page_verdict(features(html)).reasons}


NAV = '<nav><a href="/">Home</a> <a href="/about.html">About</a> <a href="/recipes/">Recipes</a></nav>'


# -- content: stuffing and compression ------------------------------------------------


def test_ordinary_prose_is_not_spam() -> None:
    page = html_page("How bread rises — The Home Baker", NAV + f"<article><h1>How bread rises</h1><p>{PROSE}</p></article>")
    f = features(page)
    assert f.top_term_share is not None and f.top_term_share < 0.15
    assert f.vocabulary_richness is not None and f.vocabulary_richness > 7
    assert f.compression_ratio is not None and f.compression_ratio < 3
    verdict = page_verdict(f)
    assert verdict.score < 0.2 and not verdict.is_spam, verdict.messages


def test_keyword_stuffed_text_alone_is_weak_evidence() -> None:
    body = NAV + "".join(f"<p>{stuffed(120, seed)}</p>" for seed in range(3))
    f = features(html_page("Cheap Flights", body))
    verdict = page_verdict(f)
    assert {"low-vocabulary", "keyword-stuffing", "compressible"} <= {r.code for r in verdict.reasons}
    # Content statistics are weak evidence: capped below the line (documentation indexes
    # and source listings have them too).
    assert not any(r.strong for r in verdict.reasons)
    assert verdict.score == WEAK_CAP and not verdict.is_spam
    stuffing = next(r for r in verdict.reasons if r.code == "keyword-stuffing")
    assert str(stuffing) == f"top-5 term share {f.top_term_share:.3g} >= 0.3"
    assert next(str(r) for r in verdict.reasons if r.code == "compressible").startswith("compression ratio ")


def test_a_strong_check_crosses_the_line_alone_and_is_listed_first() -> None:
    body = NAV + "".join(f"<p>{stuffed(120, seed)}</p>" for seed in range(3))
    hidden = f'<div style="display:none">{stuffed(40, 7)}</div>'
    verdict = page_verdict(features(html_page("Cheap Flights", body + hidden)))
    assert verdict.is_spam and verdict.reasons[0].code == "hidden-keywords" and verdict.reasons[0].strong
    assert verdict.score == pytest.approx(1 - np.prod([1 - r.weight for r in verdict.reasons]))
    assert verdict.score > WEAK_CAP


def test_prose_with_a_few_keywords_sprinkled_in_is_not_spam() -> None:
    body = f"<p>{PROSE}</p><p>Looking for cheap flights to a baking course? Best price guaranteed.</p>"
    assert not page_verdict(features(html_page("Bread", body))).is_spam


def test_compression_ratio_is_raw_over_zlib_of_the_canonical_text() -> None:
    import zlib

    page = html_page("t", f"<p>{PROSE}</p>")
    doc = canonical_document(page)
    raw = " ".join(doc.tokens).encode()
    assert features(page).compression_ratio == pytest.approx(len(raw) / len(zlib.compress(raw)))


def test_short_pages_have_no_term_statistics() -> None:
    f = features(html_page("Contact", "<p>Call us on 0123 456 789 or write to the office.</p>"))
    assert f.top_term_share is None and f.vocabulary_richness is None and f.compression_ratio is None
    assert page_verdict(f).reasons == ()


def test_ntoulas_features_are_measured_exactly() -> None:
    body = '<p>alpha beta gamma delta</p><p><a href="/x">epsilon zeta</a></p>' + "<p>" + "word " * 41 + "</p>"
    page = html_page("One two three", body)
    f = features(page)
    tokens = canonical_document(page).tokens
    assert f.words == len(tokens) == 50  # the title is text too
    assert f.title_words == 3
    assert f.avg_word_length == pytest.approx(sum(map(len, tokens)) / 50)
    assert f.anchor_fraction == pytest.approx(2 / 50)
    assert f.visible_fraction is None  # under 2,000 characters of HTML
    padded = page.replace("</body>", "<div class='x'></div>" * 100 + "</body>")
    assert features(padded).visible_fraction == pytest.approx(sum(map(len, tokens)) / len(padded))


# -- hidden text ---------------------------------------------------------------------

HIDDEN_WORDS = stuffed(40, 7)

HIDDEN_VARIANTS = {
    "display:none": ("", f'<div style="display:none">{HIDDEN_WORDS}</div>'),
    "hidden attribute": ("", f"<div hidden>{HIDDEN_WORDS}</div>"),
    "visibility:hidden": ("", f'<p style="visibility: hidden">{HIDDEN_WORDS}</p>'),
    "font-size:0": ("", f'<p><span style="font-size:0px">{HIDDEN_WORDS}</span></p>'),
    "same colour": ("", f'<div style="background-color:#FFF"><p style="color:white">{HIDDEN_WORDS}</p></div>'),
    "same colour via bgcolor": ("", f'<table bgcolor="#000000"><tr><td><font color="black">{HIDDEN_WORDS}</font></td></tr></table>'),
    "off-screen": ("", f'<div style="position:absolute; left:-9999px; top:0">{HIDDEN_WORDS}</div>'),
    "text-indent": ("", f'<h2 style="text-indent:-5000px">{HIDDEN_WORDS}</h2>'),
    "class rule": ("<style>.seo-block{display:none}</style>", f'<div class="box seo-block">{HIDDEN_WORDS}</div>'),
    "id rule": ("<style>/* hide */ div#kw { visibility:hidden !important }</style>", f'<div id="kw">{HIDDEN_WORDS}</div>'),
    "tag.class rule": ("<style>p.k, span.k {font-size: 0}</style>", f'<p class="k">{HIDDEN_WORDS}</p>'),
    "rgb colours": ("<style>.dark{background:#222 url(x.png)} .ink{color:rgb(34,34,34)}</style>", f'<div class="dark"><p class="ink">{HIDDEN_WORDS}</p></div>'),
}
TECHNIQUE = {
    "hidden attribute": "display:none", "same colour via bgcolor": "same-colour", "same colour": "same-colour",
    "text-indent": "off-screen", "class rule": "display:none", "id rule": "visibility:hidden",
    "tag.class rule": "font-size:0", "rgb colours": "same-colour",
}


@pytest.mark.parametrize("variant", sorted(HIDDEN_VARIANTS))
def test_hidden_text_variants_are_found_and_make_the_page_spam(variant: str) -> None:
    head, hidden = HIDDEN_VARIANTS[variant]
    page = html_page("Northfield Plumbing", NAV + f"<p>{PROSE}</p>" + hidden, head)
    found = markup(page)
    assert found.hidden_techniques == (TECHNIQUE.get(variant, variant),)
    assert " ".join(found.hidden_tokens) == HIDDEN_WORDS
    verdict = page_verdict(features(page))
    assert "hidden-keywords" in {r.code for r in verdict.reasons} and verdict.is_spam


@pytest.mark.parametrize(
    ("head", "body"),
    [
        # A dropdown menu hides links, legitimately.
        ("", '<ul style="display:none">' + "".join(f'<li><a href="/c{i}">{stuffed(4, i)}</a></li>' for i in range(30)) + "</ul>"),
        # White text on a background the page does not state (an external stylesheet's).
        ("", f'<p style="color:#fff">{HIDDEN_WORDS}</p>'),
        # Rules inside @media hide things per screen size.
        ("<style>@media (max-width: 600px) { .wide { display: none } } .plain { color: red }</style>", f'<div class="wide">{HIDDEN_WORDS}</div>'),
        # Combinators and pseudo-classes are not simple selectors.
        ("<style>nav .sub { display:none } a:hover{display:none}</style>", f'<nav><p class="sub">{HIDDEN_WORDS}</p></nav>'),
        # visibility:visible undoes an ancestor's visibility:hidden.
        ("", f'<div style="visibility:hidden"><p style="visibility:visible">{HIDDEN_WORDS}</p></div>'),
        # A font size restored below a zero-size container (inline-block whitespace trick).
        ("<style>.row{font-size:0}.cell{font-size:14px}</style>", f'<div class="row"><span class="cell">{HIDDEN_WORDS}</span></div>'),
        # Scripts and templates are not text at all.
        ("", f"<script>var s = '{HIDDEN_WORDS}';</script><template><p>{HIDDEN_WORDS}</p></template>"),
    ],
)
def test_legitimate_hiding_is_not_hidden_text(head: str, body: str) -> None:
    page = html_page("Plumbing", f"<p>{PROSE}</p>" + body, head)
    assert markup(page).hidden_tokens == ()
    assert not page_verdict(features(page)).is_spam


def test_hidden_prose_tabs_are_weak_evidence_only() -> None:
    tabs = "".join(f'<div class="tab" style="display:none"><p>{PROSE}</p></div>' for _ in range(1))
    verdict = page_verdict(features(html_page("Bread", f"<p>{PROSE}</p>{tabs}")))
    assert {r.code for r in verdict.reasons} == {"hidden-text"}
    assert not verdict.is_spam


FRAGMENTS = st.sampled_from([
    "<div>", "</div>", "<p style='display:none'>", "<span style=\"color:#fff;background:#fff\">", "</span>",
    "<style>.a{display:none}@media x{", "}</style>", "<a href=x>", "</a>", "<script>location='x'</script>",
    "<meta http-equiv=refresh content='0;url=x'>", "<meta name=keywords content='a,a,b'>", "<!--", "-->",
    "<font color=red>", "<table bgcolor=red>", "&amp;", "&#0;", "\x00", "word ", "cheap ", "\ud800", "<![CDATA[",
])


@settings(max_examples=200, deadline=None)
@given(st.lists(FRAGMENTS, max_size=40).map("".join))
def test_hostile_markup_never_raises(html: str) -> None:
    found = markup(html)
    assert len(found.hidden_tokens) <= len(html)
    page_verdict(features(html))


def test_broken_markup_is_tolerated() -> None:
    assert markup("") == markup("   ") == markup("\x00\x01")
    found = markup('<div style="display:none"><p>one two <b>three</div> four')
    assert found.hidden_tokens[:3] == ("one", "two", "three")


# -- doorways, meta keywords, titles, anchors ------------------------------------------


def test_meta_refresh_doorway_is_spam() -> None:
    head = '<meta http-equiv="refresh" content="0; url=/offer.html">'
    body = f"<h1>Cheap hotels Harbourtown</h1><p>{stuffed(150, 3)}</p>"
    f = features(html_page("Cheap Hotels Harbourtown", body, head))
    assert f.redirect == "meta-refresh" and f.redirect_words == f.words
    verdict = page_verdict(f)
    assert "doorway" in {r.code for r in verdict.reasons} and verdict.is_spam


def test_script_redirect_doorway_is_spam() -> None:
    body = f'<script>window.location.replace("/offer.html");</script><p>{stuffed(150, 4)}</p>'
    f = features(html_page("Hotel deals", body))
    assert f.redirect == "script"
    assert page_verdict(f).is_spam


def test_a_moved_page_notice_is_not_a_doorway() -> None:
    head = '<meta http-equiv="refresh" content="3;URL=\'https://example.org/new/\'">'
    f = features(html_page("Moved", '<p>This page has moved to <a href="https://example.org/new/">its new home</a>.</p>', head))
    assert f.redirect == "meta-refresh" and f.redirect_words is not None and f.redirect_words < 50
    assert "doorway" not in {r.code for r in page_verdict(f).reasons}


@pytest.mark.parametrize(
    ("head", "body"),
    [
        ('<meta http-equiv="refresh" content="300">', ""),  # a news page reloading itself
        ('<meta http-equiv="refresh" content="60; url=/next">', ""),  # a slideshow
        ("", '<script>function go(){ window.location.href = "/search?q=" + q.value }</script>'),
        ("", '<button onclick="location.href=\'/basket\'">Basket</button>'),
        ("", '<script src="/app.js"></script>'),
    ],
)
def test_reloads_slideshows_and_click_handlers_are_not_redirects(head: str, body: str) -> None:
    assert features(html_page("News", f"<p>{PROSE}</p>{body}", head)).redirect is None


def test_meta_keywords_long_and_stuffed() -> None:
    keywords = ", ".join(f"cheap hotels {place}" for place in ("paris rome berlin madrid lisbon oslo vienna prague dublin athens "
                                                           "warsaw riga tallinn vilnius sofia zagreb ljubljana bratislava bern "
                                                           "brussels").split())
    page = html_page("Hotels", f"<p>{PROSE}</p>", f'<meta name="Keywords" content="{keywords}">')
    f = features(page)
    assert f.meta_keywords == 20 and f.meta_keyword_max_repeat == 20
    assert {"long-meta-keywords", "stuffed-meta-keywords"} <= codes(page)
    assert page_verdict(f).is_spam  # stuffed meta keywords are strong evidence
    normal = html_page("Bread", f"<p>{PROSE}</p>", '<meta name="keywords" content="bread, baking, sourdough">')
    assert not {"long-meta-keywords", "stuffed-meta-keywords"} & codes(normal)
    shop = html_page("Shoes", f"<p>{PROSE}</p>", '<meta name="keywords" content="shoes, running shoes, trail shoes, red shoes">')
    assert not page_verdict(features(shop)).is_spam  # four entries share a word: a shop's list


def test_keyword_stuffed_title() -> None:
    title = "Cheap Hotels | Cheap Flights | Cheap Car Hire | Cheap Holidays | Best Price"
    f = features(html_page(title, f"<p>{PROSE}</p>"))
    assert f.title_max_repeat == 4 and f.title_segments == 5
    assert {"stuffed-title", "keyword-list-title"} <= {r.code for r in page_verdict(f).reasons}
    for ordinary in ("Module os.path — Python 3.12 documentation", "Sourdough basics | Recipes | The Home Baker"):
        assert not {"stuffed-title", "keyword-list-title"} & {r.code for r in page_verdict(features(html_page(ordinary, f"<p>{PROSE}</p>"))).reasons}


def test_keyword_anchors_of_a_farm_page() -> None:
    links = " ".join(f'<a href="http://farm{i % 5}.example/p/{i}.html">{SPAM_PHRASES[i % 7]}</a>' for i in range(1000))
    page = html_page("Cheap Flights | Casino Bonus | Payday Loans | Free Spins | Best Price", f"<p>{stuffed(240, 9)}</p><p>{links}</p>")
    f = features(page)
    assert f.anchor_repetition is not None and f.anchor_repetition > 0.99
    verdict = page_verdict(f)
    assert {"repeated-anchors", "anchor-text", "low-vocabulary", "keyword-list-title"} <= {r.code for r in verdict.reasons}
    # Weak checks of three families (links, text, title) agree: a strong reason.
    assert verdict.is_spam and verdict.reasons[0].code == "agreeing-evidence"
    assert verdict.messages[0] == "kinds of weak evidence (links, text, title) 3 >= 3"


def test_weak_evidence_of_two_families_stays_below_the_line() -> None:
    # A documentation index: its text repeats and compresses, it is mostly links.
    rows = "".join(f'<li><a href="/r/{i}.html">Django {i // 10}.{i % 10} release notes</a></li>' for i in range(300))
    verdict = page_verdict(features(html_page("Release notes", f"<ul>{rows}</ul>")))
    assert {r.code for r in verdict.reasons} >= {"anchor-text", "keyword-stuffing"}
    assert "agreeing-evidence" not in {r.code for r in verdict.reasons}
    assert verdict.score <= WEAK_CAP and not verdict.is_spam


# -- the documentation index that must not be flagged ----------------------------------

MODULES = ["os", "os.path", "sys", "json", "re", "io", "socket", "asyncio", "logging", "pathlib", "typing", "itertools"]
VERBS = ["get", "set", "open", "close", "read", "write", "parse", "dump", "load", "join", "split", "wait", "send", "find"]
NOUNS = ["file", "path", "line", "event", "loop", "record", "handler", "pattern", "socket", "stream", "buffer", "name"]


def documentation_index(entries: int = 320) -> str:
    rng = random.Random(5)
    names = sorted({f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}{rng.choice(['', 's', '_all', '_into'])}" for _ in range(entries * 3)})[:entries]
    rows = []
    for name in names:
        module = rng.choice(MODULES)
        kind = rng.choice(["function", "method", "class", "attribute"])
        rows.append(f'<li><a href="library/{module}.html#{module}.{name}">{name}()</a> ({kind} in module '
                    f'<a href="library/{module}.html">{module}</a>)</li>')
    body = (
        NAV + '<div class="related"><a href="genindex.html">index</a> | <a href="py-modindex.html">modules</a> | '
        '<a href="search.html">search</a></div><h1>Index</h1><p>Every function, class and attribute documented, '
        "with the module that defines it.</p><ul>" + "".join(rows) + "</ul>"
    )
    head = '<link rel="stylesheet" href="_static/pygments.css"><style>.related{font-size:90%} .headerlink{visibility:hidden}</style>'
    return html_page("Index — Python 3.12 documentation", body, head)


def test_a_documentation_index_with_hundreds_of_links_is_not_spam() -> None:
    page = documentation_index()
    doc = canonical_document(page)
    assert len(doc.anchors) > 600
    verdict = page_verdict(features(page))
    assert verdict.score < 0.35, verdict.messages
    assert not verdict.is_spam


def test_a_documentation_host_with_an_index_page_is_not_spam() -> None:
    page_counts = [1200, 900, 1500, 800, 2100, 1300, 650, 1800, 1000, 1400, 3200]
    out_degrees = [25, 30, 22, 25, 28, 31, 27, 24, 26, 29, 640]  # the index page
    scores = [page_verdict(features(documentation_index())).score] + [0.0] * 10
    verdict = host_verdict(HostEvidence("docs.python.org", scores, page_counts, out_degrees, hosts_on_ip=40))
    assert not verdict.is_spam and verdict.reasons == ()


# -- hosts -----------------------------------------------------------------------------


def test_hostname_features() -> None:
    assert hostname_features("www.cs.northfield.edu") == (21, 3, 0, 0)
    assert hostname_features("www.cs.northfield.edu:8080") == (21, 3, 0, 0)
    assert hostname_features("127.0.0.1:80") is None and hostname_features("[::1]:8080") is None
    spammy = "cheap-viagra-online-pharmacy-best-price-4u.shop123.biz"
    assert hostname_features(spammy) == (len(spammy), 2, 6, 4)
    verdict = host_verdict(HostEvidence(spammy))
    assert {r.code for r in verdict.reasons} == {"long-hostname", "hostname-dashes", "hostname-digits"}
    assert not verdict.is_spam  # a name is weak evidence
    assert host_verdict(HostEvidence("a.b.c.d.e.f.example.com")).reasons[0].code == "hostname-dots"
    assert host_verdict(HostEvidence("www.cheap-flights-4u.biz")).reasons == ()


def test_many_pages_with_exactly_the_same_word_count() -> None:
    generated = HostEvidence("www.template-spam.example", word_counts=[250] * 8 + [180, 300])
    assert host_features(generated).same_word_count_share == pytest.approx(0.8)
    assert [r.code for r in host_verdict(generated).reasons] == ["same-word-count"]
    varied = HostEvidence("www.example.org", word_counts=list(range(200, 2200, 200)))
    assert host_verdict(varied).reasons == ()
    assert host_features(HostEvidence("x.example", word_counts=[250] * 9)).same_word_count_share is None  # too few pages


@pytest.mark.parametrize(
    ("evidence", "code"),
    [
        (HostEvidence("h.example", hosts_on_ip=2500), "shared-ip"),
        (HostEvidence("h.example", out_degrees=[1000] * 12), "out-degree"),
        (HostEvidence("h.example", near_duplicate_fraction=0.7), "near-duplicates"),
        (HostEvidence("h.example", page_scores=[0.9, 0.8, 0.1, 0.0]), "spam-pages"),
        (HostEvidence("h.example", link_farm=FarmGroup((1, 2, 3, 4, 5), 1.0, 20, 1)), "link-farm"),
        (HostEvidence("h.example", cloak_resemblance=0.12, refetch_resemblance=0.97), "cloaking"),
    ],
)
def test_each_host_check_fires_alone(evidence: HostEvidence, code: str) -> None:
    assert [r.code for r in host_verdict(evidence).reasons] == [code]


def test_strong_host_evidence_decides_weak_evidence_adds_up() -> None:
    assert host_verdict(HostEvidence("h.example", link_farm=FarmGroup((0, 1, 2, 3), 1.0, 12, 0))).is_spam
    assert host_verdict(HostEvidence("h.example", cloak_resemblance=0.1)).is_spam
    weak = host_verdict(HostEvidence("h.example", hosts_on_ip=500, out_degrees=[900] * 10))
    assert not weak.is_spam and weak.score == pytest.approx(1 - 0.9 * 0.8)
    assert 0.0 <= weak.score <= 1.0 and SPAM_SCORE == 0.5


def test_cloaking_is_not_judged_on_pages_that_change_by_themselves() -> None:
    assert host_features(HostEvidence("news.example", cloak_resemblance=0.3, refetch_resemblance=0.4)).cloak_resemblance is None
    assert host_verdict(HostEvidence("news.example", cloak_resemblance=0.3, refetch_resemblance=0.4)).reasons == ()
    assert host_verdict(HostEvidence("shop.example", cloak_resemblance=0.93, refetch_resemblance=0.95)).reasons == ()


# -- link farms ------------------------------------------------------------------------


def normal_web(rng: np.random.Generator, hosts: int) -> list[tuple[int, int]]:
    """A sparse web: each host links to a few others, popular hosts more often, some
    link back, and a dense but popular community (hosts 0-5: a university's sites)."""
    popularity = 1.0 / np.arange(1, hosts + 1)
    popularity /= popularity.sum()
    edges = set()
    for source in range(hosts):
        for target in rng.choice(hosts, size=rng.integers(2, 8), p=popularity).tolist():
            if target != source:
                edges.add((source, target))
                if rng.random() < 0.3:
                    edges.add((target, source))
    edges |= {(a, b) for a in range(6) for b in range(6) if a != b}
    return sorted(edges)


def test_link_farm_found_in_a_crafted_graph() -> None:
    rng = np.random.default_rng(0)
    edges = normal_web(rng, 60)
    farm = list(range(60, 65))
    edges += [(a, b) for a in farm for b in farm if a != b]
    edges += [(17, 60)]  # a comment-spam link from a blog
    edges += [(f, int(t)) for f in farm for t in rng.choice(60, 2)]  # the farm links out to look normal
    src, dst = np.array(edges).T
    groups = link_farms(65, src, dst)
    assert [g.members for g in groups] == [tuple(farm)]
    assert groups[0].density == 1.0 and groups[0].internal_links == 20 and groups[0].outside_sources == 1


def test_no_link_farm_in_a_normal_web() -> None:
    for seed in range(5):
        edges = normal_web(np.random.default_rng(seed), 200)
        src, dst = np.array(edges).T
        assert link_farms(200, src, dst) == []


def test_link_farm_conditions() -> None:
    clique = [(a, b) for a in range(5) for b in range(5) if a != b]
    src, dst = np.array(clique).T
    assert len(link_farms(5, src, dst)) == 1
    # Well linked from outside: a community, not a farm.
    popular = clique + [(s, t) for s in range(5, 15) for t in range(5)]
    src, dst = np.array(popular).T
    assert link_farms(15, src, dst) == []
    # One organisation's hosts (one registrable domain) interlinking is a site.
    src, dst = np.array(clique).T
    assert link_farms(5, src, dst, domains=["example.org"] * 5) == []
    assert len(link_farms(5, src, dst, domains=[f"farm{i}.biz" for i in range(5)])) == 1
    # Three hosts are too few; a ring is too sparse to be a reciprocal core.
    triangle = [(a, b) for a in range(3) for b in range(3) if a != b]
    src, dst = np.array(triangle).T
    assert link_farms(3, src, dst) == []
    ring = [(i, (i + 1) % 8) for i in range(8)]
    src, dst = np.array(ring).T
    assert link_farms(8, src, dst) == []
    # Duplicate edges and self-links change nothing; bad input is refused.
    src, dst = np.array(clique * 3 + [(0, 0)]).T
    assert link_farms(5, src, dst)[0].internal_links == 20
    with pytest.raises(ValueError):
        link_farms(3, [0], [5])
    assert link_farms(3, [], []) == []


def test_a_host_never_fetched_is_judged_by_the_spam_pages_that_link_to_it() -> None:
    farm_anchors = ["cheap flights", "best flight deals", "cheap tickets"] * 70
    member = HostEvidence("www.top-casino-bonus.info", inlink_hosts=1, spam_inlink_hosts=1,
                          spam_inlink_anchors=farm_anchors, spam_inlink_urls=200)
    verdict = host_verdict(member)
    assert verdict.is_spam and [r.code for r in verdict.reasons] == ["farm-anchors", "spam-inlinks"]
    assert verdict.messages[0] == f"distinct anchors per link from spam pages {3 / 210:.3g} <= 0.1"
    # A good site a spam page links to for camouflage: a few links, its own name.
    camouflage = HostEvidence("en.wikipedia.org", inlink_hosts=1, spam_inlink_hosts=1, spam_inlink_anchors=["Wikipedia"] * 3,
                              spam_inlink_urls=3)
    assert not host_verdict(camouflage).is_spam
    # A copied footer on every spam page: 77 links, one anchor, one URL; or one anchor
    # over many URLs (a spam site citing an encyclopedia): camouflage, not a farm.
    footer = HostEvidence("www.sphinx-doc.org", inlink_hosts=1, spam_inlink_hosts=1,
                          spam_inlink_anchors=["created using sphinx"] * 77, spam_inlink_urls=1)
    citations = HostEvidence("en.wikipedia.org", inlink_hosts=1, spam_inlink_hosts=1,
                             spam_inlink_anchors=["wikipedia"] * 77, spam_inlink_urls=77)
    assert not host_verdict(footer).is_spam and not host_verdict(citations).is_spam
    # Many repeated anchors from spam pages, but good hosts link to it too.
    linked = HostEvidence("www.example.org", inlink_hosts=5, spam_inlink_hosts=1, spam_inlink_anchors=farm_anchors,
                          spam_inlink_urls=200)
    assert not host_verdict(linked).is_spam
    # Varied anchors (a directory that happens to be spam) do not count as farm anchors.
    varied = [f"site number {n}" for n in range(40)]
    spam_only = {"inlink_hosts": 1, "spam_inlink_hosts": 1, "spam_inlink_urls": 40}
    assert host_features(HostEvidence("h.example", spam_inlink_anchors=varied, **spam_only)).spam_anchor_variety == 1.0
    assert host_features(HostEvidence("h.example", spam_inlink_anchors=farm_anchors[:19], **spam_only)).spam_anchor_variety is None


def test_commercial_anchors_of_links_from_spam_pages_add_weak_evidence() -> None:
    alone = host_verdict(HostEvidence("www.quick-loans-today.biz", anchor_spam_score=0.95))
    assert not alone.is_spam and [r.code for r in alone.reasons] == ["commercial-anchors"]
    assert alone.messages == ["anchor spam score of links from spam pages 0.95 >= 0.3"]
    farm_anchors = ["payday loans", "cheap loans", "quick loans"] * 70
    member = host_verdict(HostEvidence("www.quick-loans-today.biz", inlink_hosts=1, spam_inlink_hosts=1,
                                       spam_inlink_anchors=farm_anchors, spam_inlink_urls=150, anchor_spam_score=1.0))
    assert member.score == pytest.approx(1 - 0.5 * 0.6 * 0.8)
