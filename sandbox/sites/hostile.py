"""A host whose pages exercise a crawler's failure handling.

Every page is linked from the front page. `EXPECTED` lists what a correct
crawler concludes about each path, in the outcome vocabulary of `truth`; the
ground truth itself is computed by walking, and the tests check the two agree.
"""

from __future__ import annotations

import functools
import random
import struct
import zlib

from ..markup import document, escape, html_resource, items, link, robots
from ..model import Resource
from ..text import Prose

BOMB_INFLATED_BYTES = 200 * 2**20
HUGE_BYTES = 12 * 2**20 + 4096
SLOW_SECONDS = 2.0

EXPECTED = {
    "/": "ok",
    "/welcome.html": "ok",
    "/malformed.html": "ok",
    "/cp1252.html": "ok",
    "/meta-utf8-sent-latin1.html": "ok",
    "/meta-latin1-sent-utf8.html": "ok",
    "/slow.html": "ok",
    "/binary.html": "garbage",
    "/empty.html": "empty",
    "/error-500.html": "http-500",
    "/missing.html": "http-404",
    "/loop-a": "redirect-loop",
    "/loop-b": "redirect-loop",
    "/moved.html": "redirect",
    "/huge.html": "too-large",
    "/bomb.html": "too-large",
    "/reset.html": "reset",
    "/report.pdf": "non-html",
    "/logo.png": "non-html",
}


@functools.lru_cache(maxsize=1)
def gzip_bomb() -> bytes:
    """A gzip stream that inflates to BOMB_INFLATED_BYTES of zeros.

    Deflate cannot beat about 1:1030, so this is ~200 KB; it is compressed
    one megabyte at a time so the inflated form never sits in memory, and
    cached because it costs half a second and never changes.
    """
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: gzip container
    chunk = bytes(2**20)
    parts = [compressor.compress(chunk) for _ in range(BOMB_INFLATED_BYTES // len(chunk))]
    parts.append(compressor.flush())
    return b"".join(parts)


def _png(rng: random.Random, size: int = 16) -> bytes:
    """A valid RGB PNG of random pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + rng.randbytes(3 * size) for _ in range(size))
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def _pdf(text: str) -> bytes:
    """A one-page PDF showing `text`, with a correct cross-reference table."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


# Characters whose bytes differ between UTF-8 and Latin-1; the Windows-1252
# ones (curly quotes, en dash, euro) are C1 controls when read as Latin-1.
_ACCENTED = "Caf\u00e9 cr\u00e8me, \u00abguillemets\u00bb, na\u00efve d\u00e9j\u00e0 vu, \u00a35, \u00bd."
_CP1252_ONLY = "\u201cCurly quotes\u201d \u2013 \u20ac5."


def _legacy_page(prose: Prose, title: str, charset_meta: str | None, special: str) -> str:
    """A page whose text only decodes right in one encoding."""
    meta = f'<meta charset="{charset_meta}">' if charset_meta else ""
    text = f"{special} {prose.paragraph()}"
    return f"<html><head>{meta}<title>{title}</title></head><body><h1>{title}</h1><p>{text}</p><p>{prose.paragraph()}</p></body></html>"


def _malformed(prose: Prose) -> bytes:
    return (
        "<html><head><title>Malformed <b>page</title><body><div><p>Unclosed paragraph "
        f"{prose.sentence()} <table><tr><td>cell <i>italic <b>bold</i> wrong nesting"
        "<p>stray < sign and 3 < 4 > 2 && </p></div></div></span>"
        "<a href=welcome.html>unquoted link<a href='slow.html'>unclosed link"
        '<a href="javascript:void(0)">script</a><a href="http://[::1">bad IPv6 literal</a>'
        f"<!-- unterminated comment <p>{prose.paragraph()}</p> --"
        "<\x00\x01garbage\x7f<<<>>></body"
    ).encode()


def hostile_site(rng: random.Random) -> dict[str, Resource]:
    """Every resource of the hostile host."""
    prose = Prose("programming", rng)
    undeclared = "text/html"  # no charset parameter: the body's bytes must speak for themselves

    def normal(title: str) -> Resource:
        prose.new_page()
        main = f"<h1>{escape(title)}</h1>" + "".join(f"<p>{p}</p>" for p in prose.paragraphs(3))
        return html_resource(document(title, main + link("/", "Back to the gallery")))

    huge_para = f"<p>{prose.paragraph(8, 8)}</p>\n".encode()
    huge = b"<html><head><title>Huge</title></head><body>\n" + huge_para * (HUGE_BYTES // len(huge_para) + 1) + b"</body></html>\n"
    resources = {
        "/welcome.html": normal("Welcome"),
        "/slow.html": Resource(body=normal("A slow page").body, delay=SLOW_SECONDS),
        "/malformed.html": Resource(body=_malformed(prose)),
        "/cp1252.html": Resource(
            body=_legacy_page(prose, "Windows-1252, undeclared", None, _ACCENTED + " " + _CP1252_ONLY).encode("cp1252"),
            content_type=undeclared,
        ),
        "/meta-utf8-sent-latin1.html": Resource(
            body=_legacy_page(prose, "Says UTF-8, is Latin-1", "utf-8", _ACCENTED).encode("latin-1"), content_type=undeclared
        ),
        "/meta-latin1-sent-utf8.html": Resource(
            body=_legacy_page(prose, "Says Latin-1, is UTF-8", "iso-8859-1", _ACCENTED).encode(),
            content_type=undeclared,
        ),
        "/binary.html": Resource(body=rng.randbytes(4096)),
        "/empty.html": Resource(body=b""),
        "/error-500.html": Resource(status=500, body=b"<html><body><h1>Internal Server Error</h1></body></html>"),
        "/loop-a": Resource(status=302, body=b"", headers=(("Location", "/loop-b"),)),
        "/loop-b": Resource(status=302, body=b"", headers=(("Location", "/loop-a"),)),
        "/moved.html": Resource(status=301, body=b"<html><body>Moved</body></html>", headers=(("Location", "/welcome.html"),)),
        "/huge.html": Resource(body=huge),
        "/bomb.html": Resource(body=gzip_bomb(), headers=(("Content-Encoding", "gzip"),)),
        "/reset.html": Resource(reset=True),
        "/report.pdf": Resource(body=_pdf("Glitchworks quarterly report"), content_type="application/pdf"),
        "/logo.png": Resource(body=_png(rng), content_type="image/png"),
        "/robots.txt": robots(),
    }
    prose.new_page()
    gallery = items(link(path.lstrip("/"), f"{path} ({outcome})") for path, outcome in EXPECTED.items() if path != "/")
    front = "<h1>The broken-page gallery</h1>" + f"<p>{prose.paragraph()}</p>" + gallery
    resources["/"] = html_resource(document("Glitchworks", front))
    return resources
