"""The corpus of real web pages: documentation that Debian packages install as HTML.

The synthetic sites are written by the sandbox's own builders, so whatever
they get wrong about the web, the detectors never see. These pages were
written by Sphinx, LaTeX2HTML, texinfo, DocBook XSL and vim's 2html over
years: uppercase tags, XML declarations, Latin-1, Chinese, 2 MB pages,
broken local links. `CORPUS` says where each site's files are;
`sandbox.real` serves them as a world, and calibration scripts read
every page through `iter_corpus_pages`.

Nothing is downloaded: the packages must be installed (``apt-get install``
the names `missing_packages` returns). Files are read with symlinks resolved
(Sphinx's ``_static`` links into /usr/share/javascript); a dangling link is
simply absent. Only the standard library is used, so CI can ask what to
install before the project's environment exists::

    python3 sandbox/realpages.py    # prints the packages still to install
"""

from __future__ import annotations

import fnmatch
import functools
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

# Where dpkg records the files of each installed package.
_DPKG_INFO = Path("/var/lib/dpkg/info")

# The file types a site serves (by extension), with their Content-Type; HTML
# pages get their site's own (`RealSite.html_type`). Everything else in the
# directories (PDF, gzip, TeX by-products, help-project files) is left out.
CONTENT_TYPES = {
    ".html": "text/html",
    ".htm": "text/html",
    ".css": "text/css",
    ".js": "application/javascript",
    ".png": "image/png",
    ".gif": "image/gif",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".svg": "image/svg+xml",
    ".ico": "image/x-icon",
    ".txt": "text/plain; charset=utf-8",
}
HTML_SUFFIXES = (".html", ".htm")


@dataclass(frozen=True)
class RealSite:
    """One real site: the files a Debian package installs under `directory`.

    `include` are shell patterns on paths relative to `directory` (all of it
    when empty); a file must also have a type in `CONTENT_TYPES`. `start` is
    the page "/" serves (None: the site has none, the world writes an index).
    `html_type` is the Content-Type its pages are served with.
    """

    key: str
    package: str
    directory: str
    generator: str  # sphinx, latex2html, texinfo, docbook-xhtml, docbook-html, vim2html
    language: str
    start: str | None
    include: tuple[str, ...] = ()
    html_type: str = "text/html; charset=utf-8"

    def keeps(self, path: str) -> bool:
        """True when the file at relative `path` belongs to the site."""
        if os.path.splitext(path)[1].lower() not in CONTENT_TYPES:
            return False
        return not self.include or any(fnmatch.fnmatchcase(path, p) for p in self.include)


def _debian_reference(language: str, start: str) -> RealSite:
    """One language of the Debian Reference: its pages plus the stylesheet and icons all languages share."""
    return RealSite(
        f"debian-reference-{language}", f"debian-reference-{language}", "/usr/share/debian-reference",
        "docbook-xhtml", language, start, (f"*.{language}.html", "debian-reference.css", "images/*"), "text/html",
    )


CORPUS: tuple[RealSite, ...] = (
    RealSite("django", "python-django-doc", "/usr/share/doc/python-django-doc/html", "sphinx", "en", "index.html"),
    RealSite("vim", "vim-doc", "/usr/share/doc/vim/html", "vim2html", "en", "index.html", html_type="text/html"),
    RealSite("gnuplot", "gnuplot-doc", "/usr/share/doc/gnuplot/htmldocs", "latex2html", "en", "index.html", html_type="text/html"),
    RealSite("maxima", "maxima-doc", "/usr/share/doc/maxima-doc/html", "texinfo", "en", "maxima_toc.html"),
    # Sphinx (policy.html/) plus DocBook and hand-written single pages, with no page of its own at the top.
    RealSite("policy", "debian-policy", "/usr/share/doc/debian-policy", "sphinx", "en", None, html_type="text/html"),
    RealSite("werkzeug", "python-werkzeug-doc", "/usr/share/doc/python-werkzeug-doc/html", "sphinx", "en", "index.html"),
    RealSite("jinja2", "python-jinja2-doc", "/usr/share/doc/python-jinja2-doc/html", "sphinx", "en", "index.html"),
    RealSite("click", "python-click-doc", "/usr/share/doc/python-click-doc/html", "sphinx", "en", "index.html"),
    # The language chooser index.html is written by debian-reference-common's postinst for every
    # installed language; it travels with the German pages.
    RealSite(
        "debian-reference-de", "debian-reference-de", "/usr/share/debian-reference", "docbook-xhtml", "de",
        "index.html", ("*.de.html", "index.html", "debian-reference.css", "images/*"), "text/html",
    ),
    _debian_reference("it", "index.it.html"),
    _debian_reference("es", "index.es.html"),
    _debian_reference("pt", "index.pt.html"),
    _debian_reference("zh-tw", "index.zh-tw.html"),
    RealSite("developers-reference-fr", "developers-reference-fr", "/usr/share/developers-reference/fr", "sphinx", "fr", "index.html"),
    RealSite("developers-reference-de", "developers-reference-de", "/usr/share/developers-reference/de", "sphinx", "de", "index.html"),
    RealSite(
        "maint-guide-fr", "maint-guide-fr", "/usr/share/doc/maint-guide-fr/html", "docbook-xhtml", "fr",
        "index.fr.html", html_type="application/xhtml+xml",
    ),
    RealSite("maint-guide-es", "maint-guide-es", "/usr/share/doc/maint-guide-es/html", "docbook-xhtml", "es", "index.es.html", html_type="text/html"),
    RealSite("debian-faq-fr", "debian-faq-fr", "/usr/share/doc/debian/FAQ/fr", "docbook-xhtml", "fr", "index.fr.html", html_type="text/html"),
    RealSite("debian-faq-de", "debian-faq-de", "/usr/share/doc/debian/FAQ/de", "docbook-xhtml", "de", "index.de.html", html_type="text/html"),
    # Not served by the real world (530 pages more than it needs); calibration reads it.
    RealSite("python3", "python3-doc", "/usr/share/doc/python3/html", "sphinx", "en", "index.html"),
)
# Japanese: none of the packages above has any. Held out of CORPUS (the world, and the
# calibration that sets thresholds): the tests and the calibration's held-out row use it.
HELD_OUT: tuple[RealSite, ...] = (
    RealSite("maint-guide-ja", "maint-guide-ja", "/usr/share/doc/maint-guide-ja/html", "docbook-xhtml", "ja", "index.ja.html"),
)

SITES = {site.key: site for site in (*CORPUS, *HELD_OUT)}


class MissingPackages(RuntimeError):
    """Debian packages the real pages come from are not installed; the message is one line."""

    def __init__(self, packages: Sequence[str]) -> None:
        self.packages = tuple(packages)
        super().__init__(f"real pages missing: apt-get install {' '.join(self.packages)}")


def _installed(site: RealSite) -> bool:
    return (_DPKG_INFO / f"{site.package}.list").exists() and os.path.isdir(site.directory)


def missing_packages(keys: Sequence[str] | None = None) -> list[str]:
    """The packages of the sites `keys` (default: the corpus and the held-out sites) that are
    not installed, in corpus order."""
    sites = (*CORPUS, *HELD_OUT) if keys is None else [SITES[k] for k in keys]
    return list(dict.fromkeys(s.package for s in sites if not _installed(s)))


def require(keys: Sequence[str] | None = None) -> None:
    """Raise `MissingPackages` unless every package of the sites `keys` is installed."""
    missing = missing_packages(keys)
    if missing:
        raise MissingPackages(missing)


def _files(site: RealSite) -> list[tuple[str, str]]:
    """(relative path, full path) of the site's files, sorted by path; symlinked directories followed."""
    found = []
    for root, directories, files in os.walk(site.directory, followlinks=True):
        directories.sort()
        for name in files:
            full = os.path.join(root, name)
            path = os.path.relpath(full, site.directory)
            if site.keeps(path):
                found.append((path, full))
    return sorted(found)


def _read(full: str) -> bytes | None:
    """The file's bytes through any symlink, or None for a dangling one (the file is simply absent)."""
    try:
        with open(full, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


@functools.lru_cache(maxsize=None)
def _read_site(key: str) -> tuple[tuple[str, bytes], ...]:
    """(relative path, bytes) of every file of the site, sorted; read once per process."""
    require([key])
    return tuple((path, body) for path, full in _files(SITES[key]) if (body := _read(full)) is not None)


def site_files(key: str) -> dict[str, bytes]:
    """Every file of the site `key` that its filter keeps: relative path -> bytes.

    Raises `MissingPackages` (one line) when the site's package is not installed.
    """
    return dict(_read_site(key))


def is_page(path: str) -> bool:
    """True for an HTML page's path."""
    return path.lower().endswith(HTML_SUFFIXES)


def iter_corpus_pages(keys: Sequence[str] | None = None) -> Iterator[tuple[str, str, str, str, bytes]]:
    """(site key, generator, language, relative path, raw bytes) of every HTML page of the corpus.

    `keys` limits it to some sites; every listed package must be installed
    (`MissingPackages` otherwise, before the first page). Pages are read as
    they are yielded, not kept.
    """
    sites = CORPUS if keys is None else [SITES[k] for k in keys]
    require([s.key for s in sites])
    for site in sites:
        for path, full in _files(site):
            body = _read(full) if is_page(path) else None
            if body is not None:
                yield site.key, site.generator, site.language, path, body


if __name__ == "__main__":
    print(" ".join(missing_packages()))
