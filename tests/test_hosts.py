"""URLs, host keys, hosts files, private addresses and the resolver, without network."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urljoin

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from twisted.internet.error import DNSLookupError

from mirrorscope.crawler.hosts import HostsFileError, host_key, is_private_address, normalize_url, read_hosts_file, registrable_domain
from mirrorscope.crawler.resolver import StaticHostsResolver


@pytest.mark.parametrize(
    "base, href, expected",
    [
        ("http://a.test/x/y.html", "../z.html#frag", "http://a.test/z.html"),
        ("http://a.test/x/", "?q=1", "http://a.test/x/?q=1"),
        ("http://a.test/", "HTTP://B.Test:80/P", "http://b.test/P"),
        ("https://a.test/", "//c.test:443", "https://c.test/"),
        ("http://a.test:8080/", "/p", "http://a.test:8080/p"),
        ("http://a.test/", "mailto:x@y", None),
        ("http://a.test/", "javascript:void(0)", None),
        ("http://a.test/", "ftp://a.test/f", None),
        ("http://a.test/", "http://[::1", None),
        ("http://a.test/", "   ", None),
        ("http://a.test/", "  /p.html#top ", "http://a.test/p.html"),
        # A space inside the reference is not trimmed: before the fragment it ends the host.
        ("http://a.test/", "http://b.test #top", None),
        # A last segment's empty parameters go on every path (urljoin drops them): one URL.
        ("http://a.test/", "http://b.test/x;", "http://b.test/x"),
        ("http://a.test/", "HTTP://B.test/x;", "http://b.test/x"),
        ("http://a.test/d/", "x;?q", "http://a.test/d/x?q"),
        ("http://a.test/", "http://b.test/x;y", "http://b.test/x;y"),
        ("http://a.test/", "http://b.test/;/x", "http://b.test/;/x"),
        ("http://a.test/", "https://b.test/;?é", "https://b.test/?%C3%A9"),
        ("http://a.test/", "https://b.test/;?é#top", "https://b.test/?%C3%A9"),
        # urllib takes it, w3lib's host check does not: not crawlable (it raised).
        ("http://a.test/", "http://[::1]@[é:", None),
        ("", "http://a.test", "http://a.test/"),
    ],
)
def test_normalize_url(base: str, href: str, expected: str | None) -> None:
    assert normalize_url(base, href) == expected


def test_long_urls_come_back_cut_to_the_limit_and_stay_distinct() -> None:
    from mirrorscope.storage.storable import is_cut

    cut = [normalize_url("http://a.test/", "/" + "x" * 3000 + end) or "" for end in "ab"]
    assert [len(url) for url in cut] == [2048, 2048] and cut[0] != cut[1] and all(map(is_cut, cut))
    assert cut[0].startswith("http://a.test/xxx")
    whole = normalize_url("http://a.test/", "/" + "x" * 3000, max_length=10_000)
    assert whole == "http://a.test/" + "x" * 3000 and not is_cut(whole)


def test_host_key_keeps_only_non_default_ports() -> None:
    assert host_key("http://A.test:80/x") == "a.test"
    assert host_key("https://a.test:8443/") == "a.test:8443"
    assert host_key("not a url") is None


def test_registrable_domain_uses_the_bundled_suffix_list() -> None:
    assert registrable_domain("docs.python.org") == "python.org"
    assert registrable_domain("www.bbc.co.uk") == "bbc.co.uk"
    assert registrable_domain("127.0.1.2") == "127.0.1.2"


@pytest.mark.parametrize("address, private", [("127.0.1.5", True), ("10.1.2.3", True), ("192.168.0.1", True), ("169.254.1.1", True), ("::1", True), ("0.0.0.0", True), ("93.184.216.34", False), ("2606:4700::1111", False)])
def test_private_addresses(address: str, private: bool) -> None:
    assert is_private_address(address) is private


def test_hosts_file(tmp_path: Path) -> None:
    path = tmp_path / "hosts"
    path.write_text("# comment\n127.0.1.1 a.test A2.test  # trailing\n\n127.0.1.2 b.test\n127.0.1.3 a.test\n")
    assert read_hosts_file(path) == {"a.test": "127.0.1.1", "a2.test": "127.0.1.1", "b.test": "127.0.1.2"}
    path.write_text("not-an-ip a.test\n")
    with pytest.raises(HostsFileError, match="hosts:1"):
        read_hosts_file(path)
    with pytest.raises(HostsFileError, match="cannot read"):
        read_hosts_file(tmp_path / "missing")


def _resolve(resolver: StaticHostsResolver, name: str):
    results: list = []
    resolver.getHostByName(name).addBoth(results.append)
    return results[0]


def test_resolver_maps_names_and_refuses_private_addresses() -> None:
    hosts = {"a.test": "127.0.1.1", "pub.test": "93.184.216.34"}
    allowing = StaticHostsResolver(None, 0, 5.0, hosts, allow_private=True)
    assert _resolve(allowing, "A.test") == "127.0.1.1"
    refusing = StaticHostsResolver(None, 0, 5.0, hosts, allow_private=False)
    assert _resolve(refusing, "pub.test") == "93.184.216.34"
    failure = _resolve(refusing, "a.test")
    assert failure.check(DNSLookupError) and "refused private address" in str(failure.value)


def test_unsafe_characters_are_percent_encoded_as_scrapy_does() -> None:
    from w3lib.url import safe_url_string

    url = normalize_url("http://a.test/dir/", "caf\u00e9 menu.html?q=\u00fc")
    assert url == safe_url_string("http://a.test/dir/caf\u00e9 menu.html?q=\u00fc")
    assert normalize_url("http://a.test/dir/", "x.html") == "http://a.test/dir/x.html"


@pytest.mark.parametrize(
    "href",
    ["a.html", "../a.html", "../../../../a.html", "./x/./y/../z.html?q=1#f", "/abs/../p", "?only=query", "#frag", "", "sub/",
     "/", "a/..", "a/.", "x.html?a=/../b", "café.html", "a b.html", "HTTP://Other.Test/x", "//proto.test/rel", "a:b/c"],
)
@pytest.mark.parametrize("base", ["http://a.test/dir/page.html?x=1", "http://a.test:8080/", "https://a.test/d1/d2/"])
def test_fast_join_agrees_with_urllib(base: str, href: str) -> None:
    from urllib.parse import urldefrag, urljoin

    from w3lib.url import safe_url_string

    joined = urldefrag(urljoin(base, href))[0]
    crawlable = href.strip() and joined.lower().startswith(("http://", "https://"))
    expected = safe_url_string(joined.replace("HTTP://Other.Test", "http://other.test")) if crawlable else None
    assert normalize_url(base, href) == expected


_URL_PART = st.text(alphabet="abcXYZ019-._~/?=&%:@;,+!$'()*[] é#", max_size=12)


@settings(max_examples=400, deadline=None)
@given(
    scheme=st.sampled_from(["http", "https", "HTTP", "ftp"]),
    host=st.sampled_from(["a.test", "www.b-c.example", "A.Test", "x_y.test", "[::1]", "1.2.3.4", ""]),
    port=st.sampled_from(["", ":80", ":443", ":8080", ":080", ":99999", ":", ":x"]),
    rest=_URL_PART,
)
def test_absolute_links_normalise_as_urllib_does(scheme: str, host: str, port: str, rest: str) -> None:
    """The fast path for absolute URLs gives what urljoin + urlsplit + urlunsplit give."""
    from mirrorscope.crawler.hosts import _normalize_general

    href = f"{scheme}://{host}{port}{rest}"
    base = "http://base.test/dir/page.html"
    try:
        joined = urljoin(base, href.strip())
    except ValueError:
        joined = None
    expected = _normalize_general(joined) if joined is not None and href.strip() else None
    assert normalize_url(base, href) == expected
