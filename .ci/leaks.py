#!/usr/bin/env python3
"""Judges the LeakSanitizer reports of an address-sanitizer test run (every process of it: the test process and
the children it started, which inherit the options), after .ci/lsan-suppressions.txt has hidden what it names.

    python3 .ci/leaks.py REPORT_DIR

.ci/run runs the ASan steps with LSAN_OPTIONS=exitcode=0 and this script decides instead, for one reason: corelibs
URLSession leaks the parts of every URL it parses (CFURLSessionCurlHostIsEqual frees its CURLU with curl_free
instead of curl_url_cleanup), and those allocations happen inside libcurl, which Debian builds without frame
pointers. ASan's fast unwinder stops at the first libcurl frame, so no suppression can name the function that
leaked; the slow unwinder names it but makes the steps three to seven times slower. A leak is allowed here only
when its whole allocation stack is one of the stacks of that leak: the allocator, then one frame in libcurl
at one of the offsets below (Debian 12's libcurl 7.88.1; a libcurl update moves them, and this script then fails
naming the new stacks, never hides them). Any other leak, and any other sanitizer report, fails (exit 1).
"""
import os
import re
import sys

# (allocator, libcurl offset): the allocations of curl_url_set under CFURLSessionCurlHostIsEqual.
ALLOWED = {("malloc", "0x64917"), ("malloc", "0x71eda"), ("realloc", "0x247b0"), ("strdup", "0x72b8f"), ("strdup", "0x71ddd")}
LIBCURL = "libcurl.so.4"


def blocks(text):
    """(header line, [frames]) per leak block of a report."""
    for match in re.finditer(r"^((?:Direct|Indirect) leak of .*)\n((?:    #\d+ .*\n)+)", text, re.M):
        yield match.group(1), match.group(2).splitlines()


def allowed(frames):
    if len(frames) != 2:
        return False
    allocator = re.search(r" in (\w+) ", frames[0])
    offset = re.search(re.escape(LIBCURL) + r"\+(0x[0-9a-f]+)\)", frames[1])
    return bool(allocator and offset) and (allocator.group(1), offset.group(1)) in ALLOWED


def main():
    folder = sys.argv[1]
    refused, allowed_count, other = [], 0, []
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        text = open(os.path.join(folder, name), encoding="utf-8", errors="replace").read()
        leaks = list(blocks(text))
        for header, frames in leaks:
            if allowed(frames):
                allowed_count += 1
            else:
                refused.append((name, header, frames))
        if not leaks and "ERROR:" in text and "LeakSanitizer" not in text:
            other.append(name)
    print(f"leaks: {len(refused)} leak report(s) refused, {allowed_count} allowed (corelibs' "
          f"CFURLSessionCurlHostIsEqual inside libcurl, see .ci/leaks.py)"
          + (f"; other sanitizer reports in {', '.join(other)}" if other else ""))
    for name, header, frames in refused[:40]:
        print(f"  {name}: {header}")
        for frame in frames[:14]:
            print("  " + frame)
    return 1 if refused or other else 0


if __name__ == "__main__":
    sys.exit(main())
