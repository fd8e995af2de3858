"""The canonical form: tokens, title, anchors and their word windows."""

from __future__ import annotations

from mirrorscope.detectors.canonical import canonical_document, canonical_tokens, content_bag, tokenize


def test_markup_scripts_and_comments_are_dropped_entities_decoded() -> None:
    html = """<html><head><title>T&eacute;st</title><style>p{}</style><script>var x = "no";</script></head>
    <body><!-- hidden comment --><noscript>nojs</noscript><template><p>tpl</p></template>
    <p>Caf&eacute; &amp; Cr&egrave;me</p></body></html>"""
    assert canonical_tokens(html) == ["tést", "café", "crème"]


def test_nfkc_lowercase_and_inline_elements_do_not_split_words() -> None:
    assert canonical_tokens("<p>The ﬁrst WO<b>RD</b></p><p>next</p>") == ["the", "first", "word", "next"]
    assert canonical_tokens("<div>one</div><div>two</div>") == ["one", "two"]


def test_anchor_windows_at_the_edges_and_nested_markup() -> None:
    words = " ".join(f"w{i}" for i in range(20))
    html = f'<a href="/first">Start <em>here</em></a> {words} <a href="/img"><img alt="Logo Mark"></a> <a href="/empty"></a>{words} <a href="/last">end</a>'
    doc = canonical_document(html)
    first, image, empty, last = doc.anchors
    assert (first.href, doc.anchor_text(first), doc.window_before(first)) == ("/first", "start here", "")
    assert doc.window_after(first) == "w0 w1 w2 w3 w4 w5 w6 w7"
    assert doc.anchor_text(image) == "logo mark"
    assert doc.window_before(image) == "w12 w13 w14 w15 w16 w17 w18 w19"
    assert doc.anchor_text(empty) == "" and doc.window_after(empty, 2) == "w0 w1"
    assert doc.anchor_text(last) == "end" and doc.window_after(last) == ""


def test_title_base_and_meta_refresh() -> None:
    doc = canonical_document('<head><title>  A\n title </title><base href="http://b.test/x/"><meta http-equiv="Refresh" content="0; url=/go"></head>')
    assert (doc.title, doc.base_href, doc.meta_refresh) == ("A title", "http://b.test/x/", "0; url=/go")


def test_hostile_documents_give_a_defined_result() -> None:
    for html in ["", "   ", b"\x00\x01\x02\xff\xfe", "<<<>>>", "<script>only()</script>", "<p>" * 5000 + "deep", "\ud800 lone surrogate"]:
        doc = canonical_document(html)
        assert isinstance(doc.tokens, list)
    assert canonical_tokens("word " * 200_000)[:2] == ["word", "word"]
    assert len(canonical_tokens("<p>" + "word " * 2_200_000)) == 2_200_000  # one text node over 10 MB


def test_content_bag_drops_stopwords() -> None:
    assert content_bag(tokenize("The cat and a dog of Rome")) == ["cat", "dog", "rome"]


def test_blocks_and_boilerplate_removal() -> None:
    from mirrorscope.detectors.boilerplate import BoilerplateFilter

    menu = '<div class="nav">Home About Contact</div>'
    pages = [canonical_document(f"{menu}<p>Page {i} has its own words about topic {i}</p><footer>Copyright the site</footer>") for i in range(4)]
    assert pages[0].blocks() == [["home", "about", "contact"], ["page", "0", "has", "its", "own", "words", "about", "topic", "0"], ["copyright", "the", "site"]]
    online = BoilerplateFilter(min_pages=3)
    kept = [online.filter("a.test", page.blocks()) for page in pages]
    assert "home" in kept[0] and "home" in kept[1]  # not yet repeated three times
    assert "home" not in kept[2] and "copyright" not in kept[3]
    assert kept[3] == ["page", "3", "has", "its", "own", "words", "about", "topic", "3"]
    # Another host's counts are its own.
    assert "home" in online.filter("b.test", pages[0].blocks())
