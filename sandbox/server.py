"""Serve a sandbox world over HTTP on loopback addresses, from one process.

One listening socket per distinct address of the world, all on the same port,
accepted by a single thread and answered by one thread per connection.
Requests are routed by the Host header, so several hosts may share an address
(virtual hosting) and the listening address never decides which site answers;
the User-Agent header is passed on, for hosts that cloak (`Host.cloak`).
"""

from __future__ import annotations

import contextlib
import email.utils
import errno
import hashlib
import selectors
import socket
import socketserver
import struct
import sys
import threading
import time
from collections import Counter, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from dataclasses import replace
from typing import Any

from .model import Resource, World

NOT_FOUND = Resource(
    status=404,
    body=b"<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1></body></html>\n",
)
_PORT_ATTEMPTS = 50
_JOIN_SECONDS = 5.0

# What socketserver hands its hooks; always a socket for TCP servers.
_Request = socket.socket | tuple[bytes, socket.socket]


class RequestStats:
    """Thread-safe request accounting, keyed by the Host header's name.

    A request is in flight from the moment its headers are parsed until its
    response is fully written, so `max_in_flight` shows the concurrency a
    client really imposed on a host (politeness checks).
    """

    def __init__(self, log_size: int = 100_000) -> None:
        self._lock = threading.Lock()
        self._served: Counter[str] = Counter()
        self._current: Counter[str] = Counter()
        self._peak: Counter[str] = Counter()
        self._log: deque[tuple[float, str, str]] = deque(maxlen=log_size)
        self._not_modified: Counter[str] = Counter()
        self._bytes: Counter[str] = Counter()

    def begin(self, host: str, path: str) -> None:
        """Record the start of a request for `path` on `host`."""
        with self._lock:
            self._served[host] += 1
            self._current[host] += 1
            self._peak[host] = max(self._peak[host], self._current[host])
            self._log.append((time.monotonic(), host, path))

    def not_modified(self, host: str) -> None:
        """Record a 304 Not Modified answered on `host`."""
        with self._lock:
            self._not_modified[host] += 1

    def sent(self, host: str, size: int) -> None:
        """Record `size` body bytes sent on `host`."""
        with self._lock:
            self._bytes[host] += size

    def not_modified_by_host(self) -> dict[str, int]:
        """304 answers per host name."""
        with self._lock:
            return dict(self._not_modified)

    def bytes_by_host(self) -> dict[str, int]:
        """Body bytes sent per host name (whole bodies; streams are not counted)."""
        with self._lock:
            return dict(self._bytes)

    def end(self, host: str) -> None:
        """Record that the response to a request on `host` is complete."""
        with self._lock:
            self._current[host] -= 1

    def requests_by_host(self) -> dict[str, int]:
        """Requests received per host name."""
        with self._lock:
            return dict(self._served)

    def max_in_flight(self) -> dict[str, int]:
        """Highest number of simultaneous requests seen per host name."""
        with self._lock:
            return dict(self._peak)

    def request_log(self) -> list[tuple[float, str, str]]:
        """The most recent requests as (monotonic time, host, path), oldest first."""
        with self._lock:
            return list(self._log)

    def reset_stats(self) -> None:
        """Forget everything counted so far (requests in flight stay in flight)."""
        with self._lock:
            self._served.clear()
            self._not_modified.clear()
            self._bytes.clear()
            self._peak = Counter({h: n for h, n in self._current.items() if n})
            self._log.clear()


def _validators(resource: Resource) -> tuple[tuple[str, str], ...]:
    """The ``ETag`` and ``Last-Modified`` headers of ``resource``."""
    return tuple((k, v) for k, v in resource.headers if k.lower() in ("etag", "last-modified"))


def validated(resource: Resource) -> Resource:
    """``resource`` with a strong ``ETag`` (a hash of its body as served) when it is a
    whole 200 body that asks for one (``Resource.etag``) and has none yet: what most
    servers send for static files, and what a re-crawl's ``If-None-Match`` names."""
    if not resource.etag or resource.status != 200 or resource.stream is not None:
        return resource
    if any(k.lower() == "etag" for k, _ in resource.headers):
        return resource
    tag = '"' + hashlib.blake2b(resource.body, digest_size=8).hexdigest() + '"'
    return replace(resource, headers=(*resource.headers, ("ETag", tag)))


def not_modified(resource: Resource, if_none_match: str | None, if_modified_since: str | None) -> bool:
    """Whether a conditional GET of ``resource`` gets 304 Not Modified (RFC 9110 13.2.2:
    ``If-None-Match`` is evaluated first, and when present ``If-Modified-Since`` is not)."""
    if resource.status != 200 or resource.stream is not None:
        return False
    headers = {k.lower(): v for k, v in resource.headers}
    if if_none_match is not None:
        etag = headers.get("etag")
        tags = [t.strip().removeprefix("W/") for t in if_none_match.split(",")]
        return etag is not None and (etag.removeprefix("W/") in tags or "*" in tags)
    modified = headers.get("last-modified")
    if if_modified_since is None or modified is None:
        return False
    try:
        return email.utils.parsedate_to_datetime(modified) <= email.utils.parsedate_to_datetime(if_modified_since)
    except (TypeError, ValueError):  # a date that does not parse is ignored (RFC 9110 13.1.3)
        return False


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as crawlers' connection pools expect
    server_version = "mirrorscope-sandbox"
    timeout = 30  # idle keep-alive connections are closed after this
    # Headers and body go out in two writes; with Nagle's algorithm the second
    # waits for the client's delayed ACK, 40 ms per keep-alive request.
    disable_nagle_algorithm = True
    server: _AddressServer

    def do_GET(self) -> None:
        self._answer(with_body=True)

    def do_HEAD(self) -> None:
        self._answer(with_body=False)

    def version_string(self) -> str:
        return self.server_version

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        """Stay quiet: a crawl makes thousands of requests."""

    def _answer(self, with_body: bool) -> None:
        sandbox = self.server.sandbox
        name = (self.headers.get("Host") or "").rsplit(":", 1)[0].strip().lower()
        self._host_name = name
        sandbox.stats.begin(name, self.path)
        try:
            resource = sandbox.lookup(name, self.path, self.headers.get("User-Agent"))
            if not sandbox.pause(sandbox.latency + resource.delay):
                self.close_connection = True
                return
            if resource.reset:
                self.close_connection = True
                self.server.reset_on_close(self.connection)
                return
            resource = validated(resource)
            if not_modified(resource, self.headers.get("If-None-Match"), self.headers.get("If-Modified-Since")):
                sandbox.stats.not_modified(name)
                resource = Resource(status=304, content_type=None, headers=_validators(resource))
            self._send(resource, with_body)
        finally:
            sandbox.stats.end(name)

    def _send(self, resource: Resource, with_body: bool) -> None:
        try:
            self.send_response(resource.status)
            if resource.content_type is not None:
                self.send_header("Content-Type", resource.content_type)
            if resource.status == 304:
                pass  # no body, and no Content-Length (RFC 9110 15.4.5: it would be the 200's)
            elif resource.stream is None:
                self.send_header("Content-Length", str(len(resource.body)))
            elif resource.framing == "chunked":
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.close_connection = True
            for key, value in resource.headers:
                self.send_header(key, value)
            self.end_headers()
            if with_body:
                self._write_body(resource)
        except OSError:  # the client gave up (e.g. a size limit hit mid-body)
            self.close_connection = True

    def _write_body(self, resource: Resource) -> None:
        if resource.stream is None:
            self.wfile.write(resource.body)
            self.server.sandbox.stats.sent(self._host_name, len(resource.body))
            return
        chunked = resource.framing == "chunked"
        for part in resource.stream():
            if self.server.sandbox.stopping:
                self.close_connection = True
                return
            self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part) if chunked else part)
        if chunked:
            self.wfile.write(b"0\r\n\r\n")


class _AddressServer(ThreadingHTTPServer):
    """The listening socket of one loopback address."""

    request_queue_size = 128  # http.server's 5 stalls under a crawler's bursts
    daemon_threads = True

    def __init__(self, address: tuple[str, int], sandbox: SandboxServer) -> None:
        self.sandbox = sandbox
        self._resets: set[_Request] = set()
        self._open: dict[_Request, threading.Thread] = {}  # connection -> the thread serving it
        self._lock = threading.Lock()
        super().__init__(address, _Handler)
        self.timeout = 0  # handle_request() is only called when a connection is pending

    def server_bind(self) -> None:
        # HTTPServer.server_bind calls getfqdn(), a reverse DNS lookup: traffic
        # that must not leave loopback, and seconds of delay without DNS.
        socketserver.TCPServer.server_bind(self)
        host, self.server_port = self.server_address[:2]
        self.server_name = str(host)

    def process_request(self, request: _Request, client_address: Any) -> None:
        # ThreadingMixIn keeps no record of daemon threads, so server_close()
        # could not join them: start and remember them here instead.
        thread = threading.Thread(target=self.process_request_thread, args=(request, client_address), daemon=self.daemon_threads)
        with self._lock:
            self._open[request] = thread
        thread.start()

    def reset_on_close(self, request: _Request) -> None:
        """Make the connection end with a TCP reset instead of an orderly close."""
        with self._lock:
            self._resets.add(request)

    def shutdown_request(self, request: _Request) -> None:
        with self._lock:
            self._open.pop(request, None)
            reset = request in self._resets
            self._resets.discard(request)
        if reset and isinstance(request, socket.socket):
            # Linger 0 turns close() into a RST; skipping shutdown(SHUT_WR)
            # avoids a FIN that would make the reset look like a clean EOF.
            request.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            request.close()
        else:
            super().shutdown_request(request)

    def drop_connections(self) -> None:
        """End every connection and join the threads serving them."""
        with self._lock:
            open_now = list(self._open.items())
        for conn, _ in open_now:
            if isinstance(conn, socket.socket):
                with contextlib.suppress(OSError):  # already closed by its thread
                    conn.shutdown(socket.SHUT_RDWR)  # a keep-alive wait ends with EOF
        for _, thread in open_now:
            thread.join(_JOIN_SECONDS)

    def handle_error(self, request: _Request, client_address: Any) -> None:
        """Ignore clients that vanish; anything else is a sandbox bug worth a traceback."""
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class SandboxServer:
    """Serves a `World` on its loopback addresses, one port for all of them."""

    def __init__(self, world: World, port: int = 0, latency: float = 0.0, host_ip: str | None = None) -> None:
        """Prepare to serve `world`; nothing listens until `start`.

        `port` 0 picks a port free on every address; `latency` is added to
        every response; `host_ip`, when given, serves every host on that one
        address instead of each host's own.
        """
        self.world = world
        self.port = port
        self.latency = latency
        self.host_ip = host_ip
        self.stats = RequestStats()
        self._servers: list[_AddressServer] = []
        self._stopping = threading.Event()
        self._wakeup: tuple[socket.socket, socket.socket] | None = None  # interrupts the accept loop
        self._acceptor: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------

    def start(self) -> SandboxServer:
        """Bind every address and start serving; returns self."""
        if self._wakeup is not None or self._stopping.is_set():
            raise RuntimeError("a SandboxServer starts once")
        self._servers = self._bind_all()
        self.port = self._servers[0].server_address[1]
        self._wakeup = socket.socketpair()
        self._acceptor = threading.Thread(target=self._accept_loop, name=f"sandbox-accept-{self.port}", daemon=True)
        self._acceptor.start()
        return self

    def stop(self) -> None:
        """Close every socket and join every thread; safe to call twice."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        if self._wakeup is not None and self._acceptor is not None:
            self._wakeup[1].send(b"x")
            self._acceptor.join(_JOIN_SECONDS)
            for end in self._wakeup:
                end.close()
        for server in self._servers:
            server.server_close()
        for server in self._servers:
            server.drop_connections()

    def __enter__(self) -> SandboxServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    # -- addressing ---------------------------------------------------------

    @property
    def addresses(self) -> list[str]:
        """The distinct addresses listened on, in world order (never an unreachable host's)."""
        if self.host_ip is not None:
            return [self.host_ip]
        return list(dict.fromkeys(h.ip for h in self.world.hosts if h.role != "unreachable"))

    @property
    def stopping(self) -> bool:
        """True once `stop` was called: endless bodies end then."""
        return self._stopping.is_set()

    def ip_of(self, host: str) -> str:
        """The address where `host` is served (its own, or `host_ip`)."""
        return self.host_ip or self.world.host(host).ip

    def url(self, host: str, path: str = "/") -> str:
        """Absolute URL of `path` on `host`."""
        return self.world.url(host, path, self.port)

    # -- request side -------------------------------------------------------

    def lookup(self, host: str, path: str, user_agent: str | None = None) -> Resource:
        """The response for `path` on the host named `host`, as sent to `user_agent`."""
        found = self.world.find(host)
        resource = found.resolve(path, user_agent) if found else None
        return (resource or NOT_FOUND).at_port(self.port)

    def pause(self, seconds: float) -> bool:
        """Wait `seconds`; False if the server is stopping meanwhile."""
        return seconds <= 0 or not self._stopping.wait(seconds)

    # -- stats, also reachable as self.stats.* ------------------------------

    def requests_by_host(self) -> dict[str, int]:
        """Requests received per host name."""
        return self.stats.requests_by_host()

    def max_in_flight(self) -> dict[str, int]:
        """Highest number of simultaneous requests seen per host name."""
        return self.stats.max_in_flight()

    def request_log(self) -> list[tuple[float, str, str]]:
        """Recent requests as (monotonic time, host, path), oldest first."""
        return self.stats.request_log()

    def not_modified_by_host(self) -> dict[str, int]:
        """304 Not Modified answers per host name."""
        return self.stats.not_modified_by_host()

    def bytes_by_host(self) -> dict[str, int]:
        """Body bytes sent per host name."""
        return self.stats.bytes_by_host()

    def reset_stats(self) -> None:
        """Forget all counted requests."""
        self.stats.reset_stats()

    # -- internals ----------------------------------------------------------

    def _bind_all(self) -> list[_AddressServer]:
        """Listen on every address with one port, retrying when a chosen port clashes."""
        addresses = self.addresses
        for _ in range(_PORT_ATTEMPTS if self.port == 0 else 1):
            bound: list[_AddressServer] = []
            try:
                port = self.port
                for ip in addresses:
                    bound.append(_AddressServer((ip, port), self))
                    port = bound[0].server_address[1]
                return bound
            except OSError as error:
                for server in bound:
                    server.server_close()
                if self.port != 0 or error.errno != errno.EADDRINUSE:
                    raise
        raise OSError(errno.EADDRINUSE, f"no port free on all of {len(addresses)} addresses")

    def _accept_loop(self) -> None:
        assert self._wakeup is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self._wakeup[0], selectors.EVENT_READ, None)
            for server in self._servers:
                selector.register(server, selectors.EVENT_READ, server)
            while not self._stopping.is_set():
                for key, _ in selector.select():
                    if key.data is not None and not self._stopping.is_set():
                        key.data.handle_request()
