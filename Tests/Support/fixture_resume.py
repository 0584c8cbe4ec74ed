"""Cut bodies and Range requests for fixture_server.py (Python 3 standard library only): the /resume endpoint.

    GET /resume/<key>/<name>?cut=N&...

A file served like /images/<name>, except that the first `cuts` requests for `key` (default 1) send their
headers with the whole length and then only `cut` body bytes (default: half of that response's body) before
the connection ends: a FIN (`mode=fin`, the default), an RST (`mode=rst`), or over TLS a close without
close_notify (`mode=fin` on an HTTPS server). Later requests are answered whole. Requests are counted per key,
as /flaky counts them.

Validators and ranges:
- `validator=etag` (default): a strong ETag; `weak`: a weak ETag (W/...); `lm`: Last-Modified only;
  `both`: ETag and Last-Modified; `none`: neither.
- `ranges=1` (default): `Accept-Ranges: bytes`, and a `Range: bytes=N-` whose `If-Range` matches the current
  validator (or that has no If-Range) is answered 206 with `Content-Range: bytes N-(L-1)/L`; `ranges=0`: no
  Accept-Ranges, and Range is ignored (200, the whole file).
- `changed=1`: the file changes after the first request: later requests serve `alt` (default adam7.png) with
  its own ETag and Last-Modified, so an If-Range naming the first version gets a 200 of the second.
- `ignore_if_range=1`: a broken server that answers every Range with a 206 of the current version, whatever
  If-Range says (the client must notice the other ETag or length itself).
- `bad206=start|total|multipart|unknown`: answer a Range request with a 206 that does not fit it: another
  first byte, another complete length, a multipart/byteranges body, or a complete length of `*`.
- `range416=1`: answer a Range request with 416 Range Not Satisfiable.
- `chunked=1`: send the 200 chunked (no Content-Length), cut inside a chunk.
- `gzip=1`: send the file gzip-compressed (`Content-Encoding: gzip`); ranges then address the encoded bytes.
- `cut_in_header=1`: the cut requests end inside the response head (after the status line).
"""

import email.utils
import gzip
import re

MAX_CUTS = 1000
DEFAULT_ALT = "adam7.png"
_RANGE = re.compile(r"^\s*bytes\s*=\s*(\d+)\s*-\s*$")


def handles(head):
    return head == "resume"


def _int(query, name, default, low, high):
    try:
        value = int(query.get(name, default))
    except ValueError:
        value = default
    return max(low, min(high, value))


def serve(handler, rest, query, content_type_for):
    """Answers /resume/<key>/<name> on `handler` (a FixtureHandler); `content_type_for(name)` is the server's."""
    if len(rest) != 2:
        handler._not_found()
        return
    key, name = rest
    number = handler.server.flaky.next("resume/" + key)
    changed = query.get("changed") == "1" and number > 1
    served_name = query.get("alt", DEFAULT_ALT) if changed else name
    loaded = handler._file_or_404(served_name)
    if loaded is None:
        return
    data, etag, mtime = loaded
    if query.get("gzip") == "1":
        data = gzip.compress(data, mtime=0)
        etag = etag[:-1] + '-gz"'
    validator = query.get("validator", "etag")
    headers = [("Content-Type", content_type_for(served_name))]
    if validator in ("etag", "both"):
        headers.append(("ETag", etag))
    elif validator == "weak":
        headers.append(("ETag", "W/" + etag))
    if validator in ("lm", "both"):
        headers.append(("Last-Modified", email.utils.formatdate(mtime, usegmt=True)))
    if query.get("gzip") == "1":
        headers.append(("Content-Encoding", "gzip"))
    ranges = query.get("ranges", "1") == "1"
    if ranges:
        headers.append(("Accept-Ranges", "bytes"))

    cuts = _int(query, "cuts", 1, 0, MAX_CUTS)
    cut = number <= cuts
    start = _range_start(handler, query, ranges, etag, mtime, validator)
    if start is not None and query.get("range416") == "1":
        handler._simple(416, "range not satisfiable", headers=[("Content-Range", "bytes */%d" % len(data))])
        return
    if start is not None and start < len(data):
        _send_partial(handler, query, data, start, headers, cut)
        return
    _send_whole(handler, query, data, headers, cut)


def _range_start(handler, query, ranges, etag, mtime, validator):
    """The first byte a `Range: bytes=N-` asks for when this server answers it with a 206, else None."""
    if not ranges:
        return None
    match = _RANGE.match(handler.headers.get("Range", ""))
    if match is None:
        return None
    if_range = handler.headers.get("If-Range")
    if if_range is None or query.get("ignore_if_range") == "1":
        return int(match.group(1))
    if_range = if_range.strip()
    if if_range.startswith('"'):
        # Strong comparison (RFC 9110 13.1.5): a weak tag never matches.
        current = etag if validator in ("etag", "both") else None
        return int(match.group(1)) if current is not None and if_range == current else None
    if validator not in ("lm", "both"):
        return None
    try:
        since = email.utils.parsedate_to_datetime(if_range).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return int(match.group(1)) if int(since) == int(mtime) else None


def _send_partial(handler, query, data, start, headers, cut):
    body = data[start:]
    first, complete = start, str(len(data))
    content_type = None
    bad = query.get("bad206")
    if bad == "start":
        first = start + 1 if start + 1 < len(data) else max(0, start - 1)
        body = data[first:]
    elif bad == "total":
        complete = str(len(data) + 1)
    elif bad == "unknown":
        complete = "*"
    elif bad == "multipart":
        boundary = "FIXTUREBOUNDARY"
        part = (
            "--%s\r\nContent-Type: application/octet-stream\r\nContent-Range: bytes %d-%d/%d\r\n\r\n"
            % (boundary, start, len(data) - 1, len(data))
        ).encode("ascii") + data[start:] + ("\r\n--%s--\r\n" % boundary).encode("ascii")
        body = part
        content_type = "multipart/byteranges; boundary=" + boundary
    handler.send_response(206)
    for name, value in headers:
        if name == "Content-Type" and content_type is not None:
            value = content_type
        handler.send_header(name, value)
    if bad != "multipart":
        handler.send_header("Content-Range", "bytes %d-%d/%s" % (first, first + len(body) - 1, complete))
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    _send_body(handler, query, body, cut)


def _send_whole(handler, query, data, headers, cut):
    chunked = query.get("chunked") == "1"
    if cut and query.get("cut_in_header") == "1":
        handler.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: image/")
        handler._break_connection(rst=query.get("mode") == "rst")
    handler.send_response(200)
    for name, value in headers:
        handler.send_header(name, value)
    if chunked:
        handler.send_header("Transfer-Encoding", "chunked")
    else:
        handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    if handler.command == "HEAD":
        return
    if chunked:
        _send_chunked(handler, query, data, cut)
    else:
        _send_body(handler, query, data, cut)


def _cut_at(query, length):
    return _int(query, "cut", length // 2, 0, max(0, length))


def _send_body(handler, query, body, cut):
    if not cut:
        handler._write(body)
        return
    handler._write(body[:_cut_at(query, len(body))])
    handler.wfile.flush()
    _end(handler, query)


def _send_chunked(handler, query, data, cut):
    limit = _cut_at(query, len(data)) if cut else len(data)
    size = 4096
    offset = 0
    while offset < len(data):
        chunk = data[offset:offset + size]
        if offset + len(chunk) > limit:
            # Inside this chunk: its size line says more than is sent.
            handler.wfile.write(b"%x\r\n" % len(chunk) + chunk[:limit - offset])
            handler._bytes_sent += limit - offset
            handler.wfile.flush()
            _end(handler, query)
        handler.wfile.write(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
        handler._bytes_sent += len(chunk)
        offset += len(chunk)
    if cut:
        # Every byte sent, then the end without the last chunk.
        handler.wfile.flush()
        _end(handler, query)
    handler.wfile.write(b"0\r\n\r\n")


def _end(handler, query):
    """A pause so the client reads what was sent, then the cut (FIN or RST; on TLS, no close_notify)."""
    handler._wait(0.05)
    handler._break_connection(rst=query.get("mode") == "rst")
