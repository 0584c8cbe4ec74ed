#!/usr/bin/env python3
"""The accept-queue trap (Docs/Transports.md): imagedl downloading a batch of images from Python's http.server,
whose listen backlog is 5, at several concurrencies, then from the same server with a backlog of 128.

    python3 Benchmarks/AcceptQueue/measure.py --imagedl .build/release/imagedl [--rounds 10] [--images 50]
        [--concurrency 4,5,6,8,12] [--transports curl,urlsession]

For each transport, server and concurrency it runs imagedl --json `rounds` times against fresh servers (new
connections every round) and prints, per round, the wall time and how many downloads waited more than 0.9 s to
connect (libcurl's connect time: a dropped SYN is retransmitted after 1 s), then the medians. Loopback only.
"""
import argparse
import http.server
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def start_server(directory, backlog):
    """http.server's ThreadingHTTPServer (what `python3 -m http.server` runs) with the given listen backlog."""
    class Server(http.server.ThreadingHTTPServer):
        request_queue_size = backlog

    handler = lambda *a, **k: Quiet(*a, directory=directory, **k)
    server = Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server


def listen_drops():
    """TcpExt ListenOverflows of this network namespace (/proc/net/netstat): connection attempts the kernel dropped
    because a listener's accept queue was full (ListenDrops counts each of them again). Other loopback servers of
    the machine count too."""
    try:
        lines = open("/proc/net/netstat").read().splitlines()
    except OSError:
        return None
    for names, values in zip(lines[::2], lines[1::2]):
        if names.startswith("TcpExt:"):
            table = dict(zip(names.split()[1:], (int(v) for v in values.split()[1:])))
            return table.get("ListenOverflows", 0)
    return None


def run_round(imagedl, port, names, concurrency, transport):
    urls = [f"http://127.0.0.1:{port}/{name}" for name in names]
    started = time.monotonic()
    out = subprocess.run(
        [imagedl, "--json", "--transport", transport, "--concurrency", str(concurrency), "--timeout", "30", *urls],
        capture_output=True, text=True, timeout=300)
    wall = time.monotonic() - started
    objects = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    failed = [o for o in objects if o.get("status") != "ok"]
    connects = [((o.get("network") or {}).get("connect_seconds") or 0.0) for o in objects]
    slow = sum(1 for c in connects if c > 0.9)
    # URLSession measures no connect time: a download that took over 0.9 s is the visible symptom on both.
    long = sum(1 for o in objects if (o.get("seconds") or 0.0) > 0.9)
    return wall, slow, long, max(connects or [0.0]), len(failed), len(objects)


def measure(args, directory, names, transport, backlog, concurrency):
    """`args.rounds` rounds against fresh servers with `backlog`: one table line."""
    walls, slow_rounds, slow_total, long_total, worst, failures = [], 0, 0, 0, 0.0, 0
    drops_before = listen_drops()
    for _ in range(args.rounds):
        server = start_server(directory, backlog)
        try:
            wall, slow, long, max_connect, failed, count = run_round(
                args.imagedl, server.server_address[1], names, concurrency, transport)
        finally:
            server.shutdown()
            server.server_close()
        walls.append(wall)
        slow_rounds += 1 if slow else 0
        slow_total += slow
        long_total += long
        worst = max(worst, max_connect)
        failures += failed + (len(names) - count)
    drops_after = listen_drops()
    drops = "?" if drops_before is None or drops_after is None else drops_after - drops_before
    line = (f"{transport:>10} {backlog:7d} {concurrency:11d} | {statistics.median(walls):13.3f} | "
            f"{slow_rounds:2d} of {args.rounds:<2d} | {slow_total:4d} | {worst:.3f} | {long_total:4d} | {drops}")
    return line + (f" | {failures} failed" if failures else "")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--imagedl", required=True)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--images", type=int, default=50)
    parser.add_argument("--image", default=os.path.join(os.path.dirname(__file__), "..", "..", "Tests", "Support",
                                                        "Fixtures", "baseline.jpg"))
    parser.add_argument("--concurrency", default="4,5,6,8,12")
    parser.add_argument("--transports", default="curl", help="curl, urlsession or both, comma-separated")
    args = parser.parse_args()

    directory = tempfile.mkdtemp(prefix="accept-queue-")
    names = [f"img{i:02d}.jpg" for i in range(args.images)]
    for name in names:
        shutil.copy(args.image, os.path.join(directory, name))
    print(f"{args.images} x {os.path.getsize(args.image)} bytes, {args.rounds} rounds each, "
          f"somaxconn={open('/proc/sys/net/core/somaxconn').read().strip()}")
    print("transport backlog concurrency | median wall s | rounds with a 1 s connect | slow connects (all rounds) | max connect s"
          " | downloads over 0.9 s | accept-queue overflows")
    try:
        for transport in args.transports.split(","):
            for backlog in (5, 128):
                for concurrency in [int(c) for c in args.concurrency.split(",")]:
                    print(measure(args, directory, names, transport, backlog, concurrency), flush=True)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
