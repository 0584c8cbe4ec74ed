"""Connection-level bookkeeping for fixture_server.py (Python 3 standard library only).

Kept apart from fixture_server.py so that the connection features stay out of the request handlers:

- ConnectionLog: which TCP connections served requests of a tag, how many were open at once, and the bytes
  a request in flight has written so far (GET /_connections?tag=, GET /_live?tag=).
- drop_if_reused(): the /drop-if-reused/<file> endpoint, for a client's silent re-send on a dead keep-alive
  connection; proxy_auth(): /proxy-auth/<user>/<password>/<file>, a 407 for a client using the server as proxy.
- server_class(): an IPv6 variant of the server for --host ::1.
"""

import base64
import itertools
import socket
import threading


class ConnectionLog:
    """Thread-safe per-tag connection counts. The lock is held only for dictionary updates."""

    def __init__(self):
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._tags_of = {}      # connection id -> set of tags it served
        self._distinct = {}     # tag -> set of connection ids
        self._open = {}         # tag -> connections that served the tag and are still open
        self._max_open = {}     # tag -> the most such connections open at once
        self._in_flight = {}    # tag -> {handler: None} for requests being answered (ordered)

    def connection_id(self, handler):
        """The id of the handler's connection (one BaseHTTPRequestHandler per connection)."""
        cid = getattr(handler, "_fixture_connection_id", None)
        if cid is None:
            with self._lock:
                cid = next(self._ids)
            handler._fixture_connection_id = cid
            handler._fixture_requests = 0
        return cid

    def request_started(self, handler, tag):
        cid = self.connection_id(handler)
        handler._fixture_requests += 1
        with self._lock:
            tags = self._tags_of.setdefault(cid, set())
            if tag not in tags:
                tags.add(tag)
                self._distinct.setdefault(tag, set()).add(cid)
                current = self._open.get(tag, 0) + 1
                self._open[tag] = current
                if current > self._max_open.get(tag, 0):
                    self._max_open[tag] = current
            self._in_flight.setdefault(tag, {})[handler] = None

    def request_finished(self, handler, tag):
        with self._lock:
            flights = self._in_flight.get(tag)
            if flights is not None:
                flights.pop(handler, None)
                if not flights:
                    del self._in_flight[tag]

    def connection_closed(self, handler):
        cid = getattr(handler, "_fixture_connection_id", None)
        if cid is None:
            return
        with self._lock:
            for tag in self._tags_of.pop(cid, set()):
                self._open[tag] = max(0, self._open.get(tag, 0) - 1)

    def stats(self, tag):
        """{"connections": distinct connections that served the tag, "maxOpen": most open at once, "open": now}."""
        with self._lock:
            return {
                "connections": len(self._distinct.get(tag, ())),
                "maxOpen": self._max_open.get(tag, 0),
                "open": self._open.get(tag, 0),
            }

    def live(self, tag):
        """Body bytes written so far by each request of the tag still being answered, in arrival order."""
        with self._lock:
            handlers = list(self._in_flight.get(tag, {}))
        return [{"path": getattr(h, "path", ""), "bytesSent": getattr(h, "_bytes_sent", 0)} for h in handlers]


def is_reused(handler):
    """True when the handler's connection answered a request before the current one."""
    return getattr(handler, "_fixture_requests", 0) > 1


def server_class(base, host):
    """`base` for IPv4 hosts; a subclass listening on AF_INET6 for an IPv6 host such as "::1"."""
    if ":" not in host:
        return base

    class IPv6Server(base):
        address_family = socket.AF_INET6

    return IPv6Server


def drop_if_reused(handler, name, query):
    """GET /drop-if-reused/<file>: on a connection that already answered a request, closes it without a
    response (as a server does with an idle keep-alive connection it timed out); otherwise the file, as
    /images. A client that re-sends the request on a fresh connection then gets the file."""
    if is_reused(handler):
        handler._break_connection(rst=False)
    loaded = handler._file_or_404(name)
    if loaded is not None:
        handler._serve_file(name, loaded, query)


def proxy_auth(handler, user, password, name, query):
    """GET /proxy-auth/<user>/<password>/<file>: what a proxy asking for credentials answers (407 with
    `Proxy-Authenticate: Basic realm="proxy"`) unless Proxy-Authorization matches; then the file. Meant to be
    reached with the fixture server itself as the client's HTTP proxy."""
    expected = "Basic " + base64.b64encode((user + ":" + password).encode("utf-8")).decode("ascii")
    if handler.headers.get("Proxy-Authorization", "").strip() != expected:
        handler._simple(407, "proxy authentication required", headers=[("Proxy-Authenticate", 'Basic realm="proxy"')])
        return
    loaded = handler._file_or_404(name)
    if loaded is not None:
        handler._serve_file(name, loaded, query)
