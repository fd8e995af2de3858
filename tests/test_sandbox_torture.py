"""The torture world serves each case as designed: what the crawl tests rely on."""

from __future__ import annotations

import http.client
import socket
from collections.abc import Iterator

import pytest

from mirrorscope.sandbox import SandboxServer, World, build_torture_world
from mirrorscope.sandbox.torture import (
    ANCHOR_PAGE_BYTES, BOMB_ROBOTS, DEAD, LONG_HOST_CHARS, LONG_LOCATIONS, PAGES, adjacent_anchors, long_host,
)


@pytest.fixture(scope="module")
def world() -> World:
    return build_torture_world()


def _get(server: SandboxServer, host: str, path: str, limit: int = 1 << 20) -> tuple[http.client.HTTPResponse, bytes]:
    conn = http.client.HTTPConnection(server.ip_of(host), server.port, timeout=10)
    conn.request("GET", path, headers={"Host": host})
    response = conn.getresponse()
    body = response.read(limit)
    conn.close()
    return response, body


def test_adjacent_anchors_have_no_space_between_links() -> None:
    page = adjacent_anchors(ANCHOR_PAGE_BYTES)
    assert ANCHOR_PAGE_BYTES - 40 <= len(page) <= ANCHOR_PAGE_BYTES
    assert b"</a><a " in page and b"</a> " not in page


def test_long_host_is_a_valid_name_of_the_length_asked() -> None:
    name = long_host()
    assert len(name) == LONG_HOST_CHARS
    assert all(0 < len(label) <= 63 for label in name.split("."))


def test_redirects_carry_long_locations(server: SandboxServer) -> None:
    for path, chars in LONG_LOCATIONS.items():
        response, _ = _get(server, PAGES, path)
        assert response.status == 301
        assert len(response.headers["Location"]) == chars + len("/r/")


def test_endless_body_is_chunked_and_unframed_body_has_no_length(server: SandboxServer) -> None:
    response, body = _get(server, PAGES, "/endless-chunked")
    assert response.headers["Transfer-Encoding"] == "chunked" and len(body) == 1 << 20
    response, body = _get(server, PAGES, "/unframed-50mb")
    assert response.headers["Content-Length"] is None and len(body) == 1 << 20


def test_robots_bomb_is_gzip_and_dead_host_refuses(server: SandboxServer) -> None:
    response, body = _get(server, BOMB_ROBOTS, "/robots.txt")
    assert response.headers["Content-Encoding"] == "gzip" and body[:2] == b"\x1f\x8b"
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((server.world.host(DEAD).ip, server.port), timeout=5)
