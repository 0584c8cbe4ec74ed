"""Scripted responses for the HTTP cache tests: `GET /cache/<anything>?tag=<t>&s=<JSON steps>`.

Imported by fixture_server.py (one route line). The n-th `/cache` request of a tag (counted from 1) is
answered by step n of the script; past the end the last step repeats. The script travels with the request
(the `s=` query parameter, or the `X-Cache-Script` request header, which wins), so every request of a test
can have the same URL (the same cache key) and the server keeps no per-test state but the counter. A step
is a JSON object:

    "s": 200                      status (100...599; default 200)
    "h": [["Name", "value"], ...] header lines sent exactly as given, in order (a name may repeat)
    "b": "text"                   body (default: "cache <tag> <n>"), or
    "f": "image.png"              the bytes of a fixture file
    "chunked": true               the body in chunked transfer coding (no Content-Length); also when a
                                  header line says `Transfer-Encoding: chunked`
    "disconnect": true            close the connection without a response
    "hold": "<id>"                wait for /_release/<id> (at most "max" seconds, default 30) first

A request carrying `X-Cache-Step: <n>` gets step n whatever the count (a cache's conditional or background
request copies the header of the request it came from, so it is answered as that step), and the response
echoes it as `X-Served-Step: <n>`.

Without `s=` the query itself is the one step: `status=`, `h=Name:Value` (repeatable), `body=`.
No Date, Server or other header is added except Content-Length (unless a step gives one, the body is
chunked, or the status has no body: 1xx, 204, 304); the tests write every header a response carries.
The request is logged like any other (tag, headers), so tests read what the cache sent.
"""

import json
import threading
import urllib.parse

MAX_TAGS = 100_000
MAX_HOLD_SECONDS = 120.0
DEFAULT_HOLD_SECONDS = 30.0
NO_BODY_STATUSES = {204, 304}

_lock = threading.Lock()
_counts = {}  # tag -> /cache requests seen


def handles(head):
    return head == "cache"


def _next_number(tag):
    with _lock:
        if tag not in _counts and len(_counts) >= MAX_TAGS:
            _counts.clear()  # bounded memory; tests use fresh tags
        number = _counts.get(tag, 0) + 1
        _counts[tag] = number
        return number


def _parse_script(value):
    steps = json.loads(value)
    if isinstance(steps, dict):
        steps = [steps]
    if not isinstance(steps, list) or not steps or not all(isinstance(s, dict) for s in steps):
        raise ValueError("the script must be a JSON object or a non-empty list of objects")
    return steps


def _steps(handler):
    """The script: a list of step dicts (from X-Cache-Script, `s=`, or one step built from the query)."""
    header = handler.headers.get("X-Cache-Script")
    if header is not None:
        return _parse_script(header)
    raw_query = urllib.parse.urlsplit(handler.path).query
    pairs = urllib.parse.parse_qsl(raw_query, keep_blank_values=True)
    for key, value in pairs:
        if key == "s":
            return _parse_script(value)
    step = {"h": []}
    for key, value in pairs:
        if key == "status":
            step["s"] = int(value)
        elif key == "body":
            step["b"] = value
        elif key == "h" and ":" in value:
            name, _, field_value = value.partition(":")
            step["h"].append([name.strip(), field_value.strip()])
    return [step]


def _body(handler, step, tag, number):
    if "f" in step:
        loaded = handler.server.files.load(str(step["f"]))
        if loaded is None:
            raise ValueError("no fixture named %s" % step["f"])
        return loaded[0]
    text = step.get("b")
    if text is None:
        text = "cache %s %d" % (tag, number)
    return str(text).encode("utf-8")


def serve(handler, rest, query):
    """Answers one `/cache/...` request from its script. `handler` is the FixtureHandler."""
    tag = query.get("tag", "")
    try:
        steps = _steps(handler)
    except (ValueError, TypeError) as error:
        handler._simple(400, "bad cache script: %s" % error)
        return
    number = _next_number(tag)
    forced = handler.headers.get("X-Cache-Step")
    if forced is not None and forced.strip().isdigit() and int(forced) >= 1:
        number = int(forced)
    step = steps[min(number, len(steps)) - 1]
    if "hold" in step:
        event = handler.server.holds.event(str(step["hold"]))
        seconds = max(0.0, min(float(step.get("max", DEFAULT_HOLD_SECONDS)), MAX_HOLD_SECONDS))
        if not event.is_set() and not handler._wait(seconds, event):
            handler._break_connection(rst=False)  # the client went away while held
    if step.get("disconnect"):
        handler._break_connection(rst=False)
    status = int(step.get("s", 200))
    if not 100 <= status <= 599:
        handler._simple(400, "bad status %d" % status)
        return
    headers = [(str(n), str(v)) for n, v in step.get("h", [])]
    has_body = status not in NO_BODY_STATUSES and status >= 200
    body = _body(handler, step, tag, number) if has_body else b""
    chunked_header = any(n.lower() == "transfer-encoding" and v.strip().lower() == "chunked" for n, v in headers)
    chunked = (bool(step.get("chunked")) or chunked_header) and has_body
    # send_response_only: no automatic Server or Date header.
    handler._status = status
    handler.send_response_only(status)
    for name, value in headers:
        handler.send_header(name, value)
    if forced is not None:
        handler.send_header("X-Served-Step", str(number))
    names = {name.lower() for name, _ in headers}
    if chunked:
        if "transfer-encoding" not in names:
            handler.send_header("Transfer-Encoding", "chunked")
    elif has_body and "content-length" not in names:
        handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    if not has_body:
        return
    if chunked:
        if body:
            handler._write(b"%x\r\n" % len(body) + body + b"\r\n")
        handler._write(b"0\r\n\r\n")
    else:
        handler._write(body)

