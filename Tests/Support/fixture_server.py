#!/usr/bin/env python3
"""Loopback HTTP fixture server for OperationDownloader's tests.

Python 3 standard library only. The Swift test support (FixtureServer.swift) starts one per test
process:

    python3 Tests/Support/fixture_server.py --fixtures Tests/Support/Fixtures

It binds 127.0.0.1 on an OS-chosen port, prints `PORT <n>` as its first stdout line, and exits by
itself when stdin reaches EOF or its parent changes (the test process is gone, however it ended) or
after --max-seconds.
Every wait in it (hold, stall, drip, socket I/O) is bounded. Tests run in parallel, so every request
carries `tag=<uuid>` and the log, counters and statistics are kept per tag. See Tests/Support/README.md
for the endpoint list.
"""

import argparse
import base64
import email.utils
import gzip
import hashlib
import http.server
import json
import math
import mimetypes
import os
import select
import socket
import socketserver
import ssl
import struct
import sys
import threading
import time
import urllib.parse
import zlib

import fixture_cache  # /cache: scripted responses for the HTTP cache tests
import fixture_connections
import fixture_resume  # /resume: bodies cut short, Range and If-Range

# Bounds. Every sleep or wait in this file is limited by one of these.
MAX_HOLD_SECONDS = 120.0
DEFAULT_HOLD_SECONDS = 120.0
MAX_DRIP_PAUSES = 8
MAX_STALL_SECONDS = 120.0
DEFAULT_STALL_SECONDS = 10.0
MAX_DRIP_DELAY_MS = 5000
MAX_DRIP_TOTAL_SECONDS = 300.0
MAX_RESET_DELAY_MS = 2000
MAX_IMAGE_DELAY_MS = 10_000
DEFAULT_RESET_DELAY_MS = 50
MAX_BYTES = 8 * 1024 * 1024 * 1024
MAX_BOMB_BYTES = 8 * 1024 * 1024 * 1024
MAX_REDIRECT_HOPS = 1000
SOCKET_TIMEOUT_SECONDS = 120.0  # idle keep-alive, and a client that stops reading (a bound: a loaded run stalls tests past 30 s)
MAX_LOG_ENTRIES_PER_TAG = 100_000
MAX_LOG_ENTRIES_TOTAL = 1_000_000
MAX_LOG_WAIT_SECONDS = 300.0  # a /_log?wait= long poll (FixtureServer.maximumLogWait in the Swift tests)
MAX_HOLD_IDS = 100_000
POLL_SECONDS = 0.05  # how often a waiting handler checks whether its client went away
WRITE_BLOCK = 64 * 1024

CONTENT_TYPES = {
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".png": "image/png",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".bmp": "image/bmp",
    ".tif": "image/tiff",
    ".tiff": "image/tiff",
    ".heic": "image/heic",
    ".avif": "image/avif",
    ".ico": "image/x-icon",
    ".md": "text/markdown; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".html": "text/html; charset=utf-8",
}

# Byte i of /bytes is i % 251 (a prime, so the pattern does not line up with power-of-two chunks).
_PATTERN_PERIOD = 251
_PATTERN = bytes(i % _PATTERN_PERIOD for i in range(WRITE_BLOCK + _PATTERN_PERIOD))
_ZEROS = bytes(WRITE_BLOCK)

_DISCONNECT_ERRORS = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError, socket.timeout)


def content_type_for(name):
    ext = os.path.splitext(name)[1].lower()
    if ext in CONTENT_TYPES:
        return CONTENT_TYPES[ext]
    guessed, _ = mimetypes.guess_type(name)
    return guessed or "application/octet-stream"


def clamp(value, low, high):
    return max(low, min(high, value))


def int_param(query, name, default, low, high):
    """An integer query parameter clamped to [low, high]; default when missing or malformed."""
    raw = query.get(name)
    if raw is None:
        return default
    try:
        return clamp(int(raw), low, high)
    except ValueError:
        return default


def float_param(query, name, default, low, high):
    raw = query.get(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        return default
    if value != value:  # NaN
        return default
    return clamp(value, low, high)


class RequestLog:
    """Thread-safe per-tag request log and concurrency counters.

    The lock is only held for dictionary updates, never across I/O, so logging never blocks a handler
    for longer than a list append.
    """

    def __init__(self):
        self._lock = threading.Lock()
        # Notified on every begin and finish: /_log?wait= sleeps on it instead of the client polling.
        self._changed = threading.Condition(self._lock)
        self._entries = {}      # tag -> [entry dict]
        self._in_flight = {}    # tag -> current concurrency
        self._max = {}          # tag -> max concurrency seen
        self._total = 0

    def begin(self, tag, entry):
        with self._lock:
            entries = self._entries.setdefault(tag, [])
            # Bounded memory: past the limits requests are still served and counted, not logged.
            if len(entries) < MAX_LOG_ENTRIES_PER_TAG and self._total < MAX_LOG_ENTRIES_TOTAL:
                entries.append(entry)
                self._total += 1
            current = self._in_flight.get(tag, 0) + 1
            self._in_flight[tag] = current
            if current > self._max.get(tag, 0):
                self._max[tag] = current
            self._changed.notify_all()

    def finish(self, tag, entry, status, bytes_sent, aborted):
        with self._lock:
            entry["finished"] = time.time()
            entry["status"] = status
            entry["bytesSent"] = bytes_sent
            entry["aborted"] = aborted
            self._in_flight[tag] = max(0, self._in_flight.get(tag, 0) - 1)
            self._changed.notify_all()

    def entries(self, tag):
        with self._lock:
            # Copies, so that JSON encoding happens outside the lock.
            return [dict(e) for e in self._entries.get(tag, [])]

    def wait_for(self, tag, count, finished, seconds):
        """The entries of `tag` once at least `count` have arrived (and, with `finished`, all of them have
        ended), or when `seconds` have passed: the caller judges which."""
        def satisfied():
            entries = self._entries.get(tag, [])
            return len(entries) >= count and (not finished or all(e.get("finished") is not None for e in entries))
        with self._lock:
            self._changed.wait_for(satisfied, timeout=max(0.0, min(seconds, MAX_LOG_WAIT_SECONDS)))
            return [dict(e) for e in self._entries.get(tag, [])]

    def stats(self, tag):
        with self._lock:
            return {
                "count": len(self._entries.get(tag, [])),
                "maxConcurrency": self._max.get(tag, 0),
                "inFlight": self._in_flight.get(tag, 0),
            }


class HoldRegistry:
    """Named gates for /hold/<id>/...: a released id stays released, so later holds pass at once."""

    def __init__(self):
        self._lock = threading.Lock()
        self._events = {}

    def event(self, hold_id):
        with self._lock:
            event = self._events.get(hold_id)
            if event is None:
                if len(self._events) >= MAX_HOLD_IDS:
                    # Bounded memory: past the limit every hold passes at once.
                    event = threading.Event()
                    event.set()
                    return event
                event = threading.Event()
                self._events[hold_id] = event
            return event

    def release(self, hold_id):
        self.event(hold_id).set()


class FlakyCounter:
    """Requests seen per /flaky/<key>/..., so that the first `fail` of them fail and the rest succeed."""

    def __init__(self):
        self._lock = threading.Lock()
        self._counts = {}

    def next(self, key):
        """This request's number for `key`, from 1."""
        with self._lock:
            if key not in self._counts and len(self._counts) >= MAX_HOLD_IDS:
                return 1 << 30  # bounded memory: past the limit every request succeeds
            count = self._counts.get(key, 0) + 1
            self._counts[key] = count
            return count


class FixtureFiles:
    """The fixture directory, read once per file and kept in memory (the files are small)."""

    def __init__(self, directory):
        self.directory = os.path.realpath(directory)
        self._lock = threading.Lock()
        self._cache = {}

    def load(self, name):
        """(bytes, etag, last_modified_epoch) for a plain file name inside the directory, or None."""
        if not name or "/" in name or "\\" in name or name in (".", "..") or "\x00" in name:
            return None
        with self._lock:
            cached = self._cache.get(name)
        if cached is not None:
            return cached
        path = os.path.realpath(os.path.join(self.directory, name))
        if os.path.dirname(path) != self.directory or not os.path.isfile(path):
            return None
        try:
            with open(path, "rb") as handle:
                data = handle.read()
            mtime = int(os.stat(path).st_mtime)
        except OSError:
            return None
        etag = '"' + hashlib.sha256(data).hexdigest()[:32] + '"'
        entry = (data, etag, mtime)
        with self._lock:
            self._cache[name] = entry
        return entry


class AbortResponse(Exception):
    """Raised by a handler that deliberately broke the connection (reset, stall, garbage)."""


class FixtureHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FixtureServer/1.0"
    # StreamRequestHandler sets TCP_NODELAY when this is true: without it every keep-alive response
    # waits ~40 ms for the client's delayed ACK (Nagle).
    disable_nagle_algorithm = True
    timeout = SOCKET_TIMEOUT_SECONDS

    # ----- plumbing -----

    def version_string(self):
        return self.server_version

    def log_message(self, format, *args):  # noqa: A002 - signature from the base class
        # Silence: the request log is in memory and served by /_log.
        pass

    def setup(self):
        super().setup()
        if isinstance(self.connection, ssl.SSLSocket):
            try:
                self.connection.do_handshake()
            except (OSError, ValueError):
                # The client refused our certificate (or went away): nothing to serve.
                self.close_connection = True
                self._handshake_failed = True

    def finish(self):
        self.server.connections.connection_closed(self)
        super().finish()

    def handle(self):
        if getattr(self, "_handshake_failed", False):
            return
        try:
            super().handle()
        except _DISCONNECT_ERRORS:
            self.close_connection = True
        except OSError:
            self.close_connection = True

    def send_response(self, code, message=None):
        self._status = code
        super().send_response(code, message)

    def send_header(self, keyword, value):
        # Header values can come from the query (ct=, cc=, etag=, ...): no CR/LF injection.
        value = str(value).replace("\r", " ").replace("\n", " ")
        super().send_header(keyword, value)

    def _write(self, data):
        """Writes body bytes (nothing for HEAD); counts them for the log."""
        if self.command == "HEAD" or not data:
            return
        self.wfile.write(data)
        self._bytes_sent += len(data)

    def _client_gone(self):
        """True when the peer closed its side (a readable socket with nothing to read)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            if not readable:
                return False
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def _wait(self, seconds, event=None):
        """Waits up to `seconds` (or until `event` is set). Returns False if the client went away."""
        deadline = time.monotonic() + max(0.0, seconds)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return True
            step = min(POLL_SECONDS, remaining)
            if event is not None:
                if event.wait(step):
                    return True
            else:
                time.sleep(step)
            if self._client_gone():
                return False

    def _simple(self, code, body, content_type="text/plain; charset=utf-8", headers=None):
        payload = body.encode("utf-8") if isinstance(body, str) else body
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in headers or []:
            self.send_header(name, value)
        self.end_headers()
        self._write(payload)

    def _json(self, value, code=200):
        self._simple(code, json.dumps(value), "application/json")

    def _not_found(self, what="not found"):
        self._simple(404, what)

    def _break_connection(self, rst):
        """Ends the connection now: RST (SO_LINGER 0) or a normal FIN."""
        self.close_connection = True
        sock = self.connection
        try:
            if rst:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                # rfile holds a reference on the socket; close it so that close() really closes the
                # descriptor now (and sends the RST) instead of at handler teardown.
                self.rfile.close()
                sock.close()
            else:
                sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        raise AbortResponse()

    # ----- dispatch -----

    def do_GET(self):
        self._dispatch()

    def do_HEAD(self):
        self._dispatch()

    # Unsafe methods too (no request body is read): the HTTP cache tests check invalidation on /cache.
    do_POST = do_PUT = do_DELETE = do_GET

    def _dispatch(self):
        self._status = None
        self._bytes_sent = 0
        parsed = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(parsed.path)
        pairs = urllib.parse.parse_qsl(parsed.query, keep_blank_values=True)
        query = {}
        for key, value in pairs:
            query.setdefault(key, value)  # first value wins
        segments = [s for s in path.split("/") if s]

        # Control endpoints are not part of the measured traffic: not logged, not counted.
        if segments and segments[0].startswith("_"):
            self._control(segments, query)
            return

        tag = query.get("tag", "")
        headers = {}
        for name, value in self.headers.items():
            key = name.lower()
            headers[key] = headers[key] + ", " + value if key in headers else value
        entry = {
            "method": self.command,
            "path": path,
            "query": query,
            "headers": headers,
            "started": time.time(),
            "finished": None,
            "status": None,
            # The client's port: requests with the same port came over the same connection.
            "peerPort": self.client_address[1],
        }
        log = self.server.request_log
        log.begin(tag, entry)
        self.server.connections.request_started(self, tag)
        aborted = False
        try:
            self._route(segments, query)
        except AbortResponse:
            aborted = True
            self.close_connection = True
        except _DISCONNECT_ERRORS:
            aborted = True
            self.close_connection = True
        except OSError:
            aborted = True
            self.close_connection = True
        finally:
            log.finish(tag, entry, self._status, self._bytes_sent, aborted)
            self.server.connections.request_finished(self, tag)

    def _route(self, segments, query):
        head = segments[0] if segments else ""
        rest = segments[1:]
        if head == "images" and len(rest) == 1:
            self._images(rest[0], query)
        elif head == "drip" and len(rest) == 1:
            self._drip(rest[0], query)
        elif head == "status" and len(rest) == 1:
            self._status_code(rest[0], query)
        elif head == "redirect" and len(rest) == 1:
            self._redirect(rest[0], query)
        elif head == "basic-auth" and len(rest) == 3:
            self._basic_auth(rest[0], rest[1], rest[2], query)
        elif head == "hold" and len(rest) == 2:
            self._hold(rest[0], rest[1], query)
        elif head == "flaky" and len(rest) == 2:
            self._flaky(rest[0], rest[1], query)
        elif head == "stall" and not rest:
            self._stall(query)
        elif head in ("reset", "fin") and len(rest) == 1:
            self._truncated(rest[0], query, rst=(head == "reset"))
        elif head == "bytes" and not rest:
            self._bytes(query)
        elif head == "html" and not rest:
            self._simple(200, HTML_PAGE, "text/html; charset=utf-8")
        elif head == "empty" and not rest:
            self._simple(200, b"", "image/png")
        elif head == "garbage" and not rest:
            self._garbage()
        elif head == "chunked-error" and not rest:
            self._chunked_error(query)
        elif head == "gzip-bomb" and not rest:
            self._gzip_bomb(query)
        elif head == "loop" and not rest:
            self._loop(query)
        elif head == "auth-loop" and len(rest) == 1:
            self._auth_loop(rest[0], query)
        elif head == "cookies" and rest == ["set"]:
            self._cookie_set(query)
        elif head == "cookies" and rest == ["echo"]:
            self._cookie_echo()
        elif fixture_resume.handles(head):
            fixture_resume.serve(self, rest, query, content_type_for)
        elif fixture_cache.handles(head):
            fixture_cache.serve(self, rest, query)
        elif head == "drop-if-reused" and len(rest) == 1:
            fixture_connections.drop_if_reused(self, rest[0], query)
        elif head == "proxy-auth" and len(rest) == 3:
            fixture_connections.proxy_auth(self, rest[0], rest[1], rest[2], query)
        else:
            self._not_found()

    # ----- control -----

    def _control(self, segments, query):
        self._status = None
        self._bytes_sent = 0
        head = segments[0]
        tag = query.get("tag", "")
        if head == "_log" and len(segments) == 1 and "wait" in query:
            # Long poll: answers once `count` requests of the tag arrived (and ended, with finished=1).
            try:
                count, seconds = int(query.get("count", "0")), float(query["wait"])
                if not math.isfinite(seconds):
                    raise ValueError(query["wait"])
            except ValueError:
                self._json({"error": "count and wait must be numbers"}, code=400)
                return
            finished = query.get("finished") == "1"
            self._json(self.server.request_log.wait_for(tag, count, finished, seconds))
        elif head == "_log" and len(segments) == 1:
            self._json(self.server.request_log.entries(tag))
        elif head == "_stats" and len(segments) == 1:
            self._json(self.server.request_log.stats(tag))
        elif head == "_release" and len(segments) == 2:
            self.server.holds.release(segments[1])
            self._json({"released": segments[1]})
        elif head == "_health" and len(segments) == 1:
            self._json({"ok": True})
        elif head == "_connections" and len(segments) == 1:
            self._json(self.server.connections.stats(tag))
        elif head == "_live" and len(segments) == 1:
            self._json(self.server.connections.live(tag))
        else:
            self._not_found("unknown control endpoint")

    # ----- endpoints -----

    def _file_or_404(self, name):
        loaded = self.server.files.load(name)
        if loaded is None:
            self._not_found("no fixture named " + name)
        return loaded

    def _images(self, name, query):
        loaded = self._file_or_404(name)
        if loaded is None:
            return
        delay = int_param(query, "delay_ms", 0, 0, MAX_IMAGE_DELAY_MS) / 1000.0
        if delay > 0 and not self._wait(delay):
            raise AbortResponse()
        self._serve_file(name, loaded, query)

    def _serve_file(self, name, loaded, query, extra_headers=()):
        data, etag, mtime = loaded
        if "etag" in query:
            override = query["etag"]
            etag = override if override.startswith('"') or override.startswith("W/") else '"' + override + '"'
        last_modified = email.utils.formatdate(mtime, usegmt=True)
        cache_headers = [("ETag", etag), ("Last-Modified", last_modified)] + list(extra_headers)
        if "cc" in query:
            cache_headers.append(("Cache-Control", query["cc"]))
        if "expires" in query:
            # Seconds from now (negative: already expired).
            delta = int_param(query, "expires", 0, -10 ** 9, 10 ** 9)
            cache_headers.append(("Expires", email.utils.formatdate(time.time() + delta, usegmt=True)))
        if "setcookie" in query:
            cache_headers.append(("Set-Cookie", query["setcookie"] + "; Path=/"))

        if self._not_modified(etag, mtime):
            self.send_response(304)
            for header, value in cache_headers:
                self.send_header(header, value)
            self.end_headers()
            return

        body = data
        if "truncate" in query:
            # The first N bytes only, with a matching Content-Length: a complete response of a cut file.
            body = data[:int_param(query, "truncate", len(data), 0, len(data))]
        extra = list(cache_headers)
        if query.get("gzip") == "1":
            body = gzip.compress(data, mtime=0)
            extra.append(("Content-Encoding", "gzip"))
            extra.append(("Vary", "Accept-Encoding"))
        self._simple(200, body, query.get("ct", content_type_for(name)), extra)

    def _not_modified(self, etag, mtime):
        if_none_match = self.headers.get("If-None-Match")
        if if_none_match is not None:
            # Weak comparison, as RFC 9110 asks for If-None-Match.
            def opaque(tag):
                tag = tag.strip()
                return tag[2:] if tag.startswith("W/") else tag

            candidates = [opaque(t) for t in if_none_match.split(",")]
            return "*" in candidates or opaque(etag) in candidates
        if_modified_since = self.headers.get("If-Modified-Since")
        if if_modified_since is not None:
            try:
                since = email.utils.parsedate_to_datetime(if_modified_since).timestamp()
            except (TypeError, ValueError, IndexError, OverflowError):
                return False
            return mtime <= since
        return False

    def _drip(self, name, query):
        loaded = self._file_or_404(name)
        if loaded is None:
            return
        data = loaded[0]
        chunk = int_param(query, "chunk", 1024, 1, max(1, len(data)))
        delay = int_param(query, "delay_ms", 10, 0, MAX_DRIP_DELAY_MS) / 1000.0
        self.send_response(200)
        self.send_header("Content-Type", query.get("ct", content_type_for(name)))
        self.send_header("Content-Length", str(len(data)))
        self.send_header("ETag", loaded[1])
        self.end_headers()
        if self.command == "HEAD":
            return
        # Optional pause points: at byte `hold_at` the drip waits for /_release/<hold> (at most `max`
        # seconds), so a test can look at what the client made of a prefix however loaded the machine is.
        # Several points: comma-separated ids and offsets, in order (`hold=a,b&hold_at=100,200`).
        pauses = self._drip_pauses(query, len(data))
        hold_seconds = float_param(query, "max", DEFAULT_HOLD_SECONDS, 0.0, MAX_HOLD_SECONDS)
        # Past the deadline the rest goes out at once, so a drip never takes longer than the bound.
        deadline = time.monotonic() + MAX_DRIP_TOTAL_SECONDS
        offset = 0
        while offset < len(data):
            while pauses and offset >= pauses[0][1]:
                event = self.server.holds.event(pauses[0][0])
                if not event.is_set() and not self._wait(hold_seconds, event):
                    raise AbortResponse()
                pauses.pop(0)
            if offset > 0 and delay > 0 and time.monotonic() < deadline:
                if not self._wait(delay):
                    raise AbortResponse()
            size = chunk if time.monotonic() < deadline else len(data) - offset
            if pauses:
                size = min(size, pauses[0][1] - offset)
            self._write(data[offset:offset + size])
            offset += size

    @staticmethod
    def _drip_pauses(query, length):
        """The drip's (hold id, byte offset) pause points, in offset order; offsets default to half the file."""
        raw_ids = query.get("hold")
        if raw_ids is None:
            return []
        ids = raw_ids.split(",")[:MAX_DRIP_PAUSES]
        offsets = query.get("hold_at", "").split(",")
        pauses = []
        for index, hold_id in enumerate(ids):
            raw = offsets[index] if index < len(offsets) else None
            offset = int_param({"at": raw} if raw else {}, "at", length // 2, 1, length)
            pauses.append((hold_id, offset))
        return sorted(pauses, key=lambda pause: pause[1])

    def _status_code(self, raw, query):
        try:
            code = int(raw)
        except ValueError:
            self._simple(400, "bad status code")
            return
        if code < 200 or code > 599:
            self._simple(400, "status code must be 200...599")
            return
        if code in (204, 304):
            # No body allowed; no Content-Length either (RFC 9110 forbids it for 204).
            self.send_response(code)
            self.end_headers()
            return
        self._simple(code, query.get("body", "status %d" % code), query.get("ct", "text/plain; charset=utf-8"))

    def _redirect(self, raw, query):
        try:
            hops = clamp(int(raw), 0, MAX_REDIRECT_HOPS)
        except ValueError:
            self._simple(400, "bad hop count")
            return
        code = int_param(query, "code", 302, 300, 399)
        if code not in (301, 302, 303, 307, 308):
            code = 302
        if hops > 0:
            # Keep every query parameter (tag, to, code) on the next hop.
            location = "/redirect/%d?%s" % (hops - 1, urllib.parse.urlencode(query))
        else:
            location = query.get("to", "/images/tiny.png")
        self._simple(code, "redirecting to " + location, headers=[("Location", location)])

    def _basic_auth(self, user, password, name, query):
        expected = "Basic " + base64.b64encode((user + ":" + password).encode("utf-8")).decode("ascii")
        if self.headers.get("Authorization", "").strip() != expected:
            self._simple(401, "unauthorized", headers=[("WWW-Authenticate", 'Basic realm="fixture"')])
            return
        loaded = self._file_or_404(name)
        if loaded is None:
            return
        self._serve_file(name, loaded, query)

    def _hold(self, hold_id, name, query):
        seconds = float_param(query, "max", DEFAULT_HOLD_SECONDS, 0.0, MAX_HOLD_SECONDS)
        event = self.server.holds.event(hold_id)
        if not event.is_set():
            if not self._wait(seconds, event):
                raise AbortResponse()
        loaded = self._file_or_404(name)
        if loaded is None:
            return
        # After `max` seconds the file is served anyway; the header tells a test which happened.
        outcome = "released" if event.is_set() else "timeout"
        self._serve_file(name, loaded, query, [("X-Hold", outcome)])

    def _flaky(self, key, name, query):
        """The first `fail` requests for `key` fail, the later ones get the file (as /images does)."""
        loaded = self._file_or_404(name)
        if loaded is None:
            return
        failures = int_param(query, "fail", 1, 0, 1000)
        if self.server.flaky.next(key) > failures:
            self._serve_file(name, loaded, query)
            return
        if query.get("mode", "status") == "reset":
            # Headers with the full length, `after` body bytes (default none), then RST.
            data = loaded[0]
            after = int_param(query, "after", 0, 0, len(data))
            self.send_response(200)
            self.send_header("Content-Type", content_type_for(name))
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self._write(data[:after])
            self._wait(DEFAULT_RESET_DELAY_MS / 1000.0)
            self._break_connection(rst=True)
        code = int_param(query, "status", 503, 200, 599)
        headers = []
        if "retry_after" in query:
            headers.append(("Retry-After", query["retry_after"]))
        self._simple(code, "flaky: status %d" % code, headers=headers)

    def _stall(self, query):
        phase = query.get("phase", "headers")
        seconds = float_param(query, "seconds", DEFAULT_STALL_SECONDS, 0.0, MAX_STALL_SECONDS)
        name = query.get("file", "baseline.jpg")
        loaded = self._file_or_404(name)
        if loaded is None:
            return
        data = loaded[0]
        if phase == "body":
            self.send_response(200)
            self.send_header("Content-Type", content_type_for(name))
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self._write(data[: len(data) // 2])
        self._wait(seconds)
        self._break_connection(rst=False)

    def _truncated(self, name, query, rst):
        loaded = self._file_or_404(name)
        if loaded is None:
            return
        data = loaded[0]
        after = int_param(query, "after", len(data) // 2, 0, len(data))
        self.send_response(200)
        self.send_header("Content-Type", content_type_for(name))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self._write(data[:after])
        # A short pause lets the client read the partial body before the reset discards it.
        pause = int_param(query, "delay_ms", DEFAULT_RESET_DELAY_MS, 0, MAX_RESET_DELAY_MS) / 1000.0
        self._wait(pause)
        self._break_connection(rst=rst)

    def _bytes(self, query):
        count = int_param(query, "n", 0, 0, MAX_BYTES)
        chunked = query.get("chunked") == "1"
        zeros = query.get("fill") == "zero"
        lie = None
        if "lie" in query:
            lie = int_param(query, "lie", count, 0, MAX_BYTES)
        self.send_response(200)
        self.send_header("Content-Type", query.get("ct", "application/octet-stream"))
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(count if lie is None else lie))
        if lie is not None and lie != count:
            # The framing is wrong on purpose: the connection cannot be reused afterwards.
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command == "HEAD":
            return
        # delay_ms= between 64 KB blocks: an endless body at a realistic rate instead of loopback speed.
        delay = int_param(query, "delay_ms", 0, 0, MAX_DRIP_DELAY_MS) / 1000.0
        offset = 0
        while offset < count:
            if offset > 0 and delay > 0 and not self._wait(delay):
                return
            size = min(WRITE_BLOCK, count - offset)
            start = offset % _PATTERN_PERIOD
            block = _ZEROS[:size] if zeros else _PATTERN[start:start + size]
            if chunked:
                self.wfile.write(b"%x\r\n" % size + block + b"\r\n")
                self._bytes_sent += size
            else:
                self._write(block)
            offset += size
        if chunked:
            self.wfile.write(b"0\r\n\r\n")

    def _garbage(self):
        self.wfile.write(b"\x00\x01\x02 this is not HTTP \xff\xfe\r\n\r\ngarbage")
        self._break_connection(rst=False)

    def _chunked_error(self, query):
        """A chunked body that breaks the framing after `after` good bytes (default 1000):
        kind=size (a chunk-size line that is not hex), kind=short (a chunk announced longer than the bytes
        sent, then FIN), kind=eof (no terminating zero-size chunk, then FIN)."""
        kind = query.get("kind", "size")
        after = int_param(query, "after", 1000, 0, 1024 * 1024)
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", query.get("ct", "image/png"))
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command == "HEAD":
            return
        block = _PATTERN[:after]
        if block:
            self.wfile.write(b"%x\r\n" % len(block) + block + b"\r\n")
            self._bytes_sent += len(block)
        if kind == "short":
            self.wfile.write(b"%x\r\n" % 100000 + _PATTERN[:100])
            self._bytes_sent += 100
        elif kind == "eof":
            pass
        else:
            self.wfile.write(b"zz-not-hex\r\n" + _PATTERN[:100] + b"\r\n0\r\n\r\n")
        self.wfile.flush()
        self._break_connection(rst=False)

    def _gzip_bomb(self, query):
        """`n` zero bytes (default 1 GiB, at most 8 GiB) gzip-compressed on the fly (about 1000:1) and sent
        chunked with Content-Encoding: gzip. The server never holds more than one compressed block.
        `head=png`: the zeros follow a PNG signature, so the body does not look like zeros from its first bytes."""
        count = int_param(query, "n", 1024 * 1024 * 1024, 0, MAX_BOMB_BYTES)
        self.send_response(200)
        self.send_header("Content-Type", query.get("ct", "image/png"))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if self.command == "HEAD":
            return
        compressor = zlib.compressobj(9, zlib.DEFLATED, 31)  # wbits 31: gzip container
        zeros = bytes(WRITE_BLOCK * 16)
        # delay_ms= between 1 MiB (decompressed) blocks.
        delay = int_param(query, "delay_ms", 0, 0, MAX_DRIP_DELAY_MS) / 1000.0
        remaining = count
        if query.get("head") == "png" and count >= 8:
            piece = compressor.compress(b"\x89PNG\r\n\x1a\n")
            remaining -= 8
            if piece:
                self.wfile.write(b"%x\r\n" % len(piece) + piece + b"\r\n")
                self._bytes_sent += len(piece)
        while remaining > 0:
            if remaining < count - 8 and delay > 0 and not self._wait(delay):
                return
            size = min(len(zeros), remaining)
            remaining -= size
            piece = compressor.compress(zeros[:size])
            if piece:
                self.wfile.write(b"%x\r\n" % len(piece) + piece + b"\r\n")
                self._bytes_sent += len(piece)
        tail = compressor.flush()
        if tail:
            self.wfile.write(b"%x\r\n" % len(tail) + tail + b"\r\n")
            self._bytes_sent += len(tail)
        self.wfile.write(b"0\r\n\r\n")

    def _loop(self, query):
        """A redirect to itself, forever (the client must give up)."""
        location = "/loop?" + urllib.parse.urlencode(query)
        self._simple(302, "redirecting to " + location, headers=[("Location", location)])

    def _auth_loop(self, name, query):
        """401 with a Basic challenge whatever the Authorization header says: a credential never helps."""
        self._simple(401, "unauthorized", headers=[("WWW-Authenticate", 'Basic realm="loop"')])

    def _cookie_set(self, query):
        name = query.get("name", "fixture")
        value = query.get("value", "1")
        self._simple(
            200,
            json.dumps({"set": {name: value}}),
            "application/json",
            [("Set-Cookie", "%s=%s; Path=/" % (name, value))],
        )

    def _cookie_echo(self):
        header = self.headers.get("Cookie")
        cookies = {}
        if header:
            for part in header.split(";"):
                key, sep, value = part.strip().partition("=")
                if sep:
                    cookies[key] = value
        self._json({"cookie": header, "cookies": cookies})


HTML_PAGE = (
    "<!DOCTYPE html>\n<html><head><title>Not an image</title></head>"
    "<body><h1>Fixture HTML page</h1><p>This is text/html, not an image.</p></body></html>\n"
)


class FixtureServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 256

    def __init__(self, address, files):
        super().__init__(address, FixtureHandler)
        self.files = files
        self.request_log = RequestLog()
        self.holds = HoldRegistry()
        self.flaky = FlakyCounter()
        self.connections = fixture_connections.ConnectionLog()

    tls_context = None

    def get_request(self):
        sock, address = super().get_request()
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        if self.tls_context is not None:
            # The handshake happens in the handler thread (FixtureHandler.setup), so a client that rejects
            # the certificate never blocks the accept loop.
            sock = self.tls_context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address

    def handle_error(self, request, client_address):
        # A client that goes away is normal traffic here: stay silent. Anything else is a bug in this
        # file and is worth a traceback on stderr.
        error = sys.exc_info()[1]
        if isinstance(error, (OSError, AbortResponse)):
            return
        super().handle_error(request, client_address)


setattr(FixtureHandler, "do_M-SEARCH", FixtureHandler.do_GET)  # an extension method, for the same tests


def exit_on_stdin_eof():
    """Exits the process when stdin closes: the test process that started us has ended."""
    try:
        while sys.stdin.buffer.read(4096):
            pass
    except (OSError, ValueError):
        pass
    os._exit(0)


def exit_when_orphaned(parent):
    """Exits once the test process that started us is gone, even while another child it started still holds
    our stdin open (a crashed test process cannot close it). Bounded by --max-seconds like everything else."""
    while os.getppid() == parent:
        time.sleep(1)
    os._exit(0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", required=True, help="directory of files served by /images etc.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 lets the OS choose")
    parser.add_argument("--max-seconds", type=float, default=1800.0, help="exit after this long in any case")
    parser.add_argument("--ignore-stdin", action="store_true", help="do not exit on stdin EOF (manual runs)")
    parser.add_argument("--tls-cert", help="serve HTTPS with this PEM certificate (with --tls-key)")
    parser.add_argument("--tls-key", help="the PEM private key for --tls-cert")
    args = parser.parse_args()

    if not os.path.isdir(args.fixtures):
        print("fixture directory not found: " + args.fixtures, file=sys.stderr, flush=True)
        return 2

    mimetypes.init()  # once, before handler threads use it
    server_type = fixture_connections.server_class(FixtureServer, args.host)
    server = server_type((args.host, args.port), FixtureFiles(args.fixtures))
    if args.tls_cert or args.tls_key:
        if not (args.tls_cert and args.tls_key):
            print("--tls-cert and --tls-key go together", file=sys.stderr, flush=True)
            return 2
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls_cert, args.tls_key)
        server.tls_context = context
    print("PORT %d" % server.server_address[1], flush=True)

    if not args.ignore_stdin:
        threading.Thread(target=exit_on_stdin_eof, name="stdin-watch", daemon=True).start()
        threading.Thread(target=exit_when_orphaned, args=(os.getppid(),), name="parent-watch", daemon=True).start()
    lifetime = threading.Timer(max(1.0, args.max_seconds), lambda: os._exit(0))
    lifetime.daemon = True
    lifetime.start()

    try:
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
