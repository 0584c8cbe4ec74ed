#!/usr/bin/env bash
# Proves that CI cannot pass by skipping: hides a library the tests load with dlopen (an empty file bind-mounted
# over it in a private mount namespace, so nothing outside this script sees the change) and runs its tests
#   1. with OD_REQUIRE_ALL=1, as .ci/run does: the run must FAIL, naming the library;
#   2. without it, as on a developer's machine: the run must pass, and .ci/skipped-tests.py must count the
#      skipped tests and refuse them.
#
#   .ci/hidden-library-check.sh [soname] [test filter]     default: libwebp.so.7 WebPCoderTests
#
# Needs root (unshare -m, mount --bind) and a finished `swift build --build-tests`. Docs/Reliability.md. Not for
# libcurl: swift-test and FoundationNetworking link it, so with it hidden nothing starts.
set -euo pipefail
cd "$(dirname "$0")/.."

soname=${1:-libwebp.so.7}
filter=${2:-WebPCoderTests}
name=${soname%%.so*}   # libwebp.so.7 -> libwebp: how the Requirement names it

if [ "${OD_HIDDEN_INSIDE:-}" != 1 ]; then
    library=$(ldconfig -p | awk -v so="$soname" '$1 == so && /x86-64/ { print $NF; exit }')
    [ -n "$library" ] || { echo "hidden-library-check: $soname is not installed, nothing to hide" >&2; exit 1; }
    exec unshare -m env OD_HIDDEN_INSIDE=1 OD_HIDDEN_LIBRARY="$(readlink -f "$library")" "$0" "$@"
fi

# Inside the private mount namespace.
mount --make-rprivate /
empty=$(mktemp)
trap 'rm -f "$empty"' EXIT
mount --bind "$empty" "$OD_HIDDEN_LIBRARY"
echo "hidden: $OD_HIDDEN_LIBRARY (an empty file for this process tree only)"
work=$(mktemp -d)
trap 'rm -f "$empty"; rm -rf "$work"' EXIT

status=0
OD_REQUIRE_ALL=1 swift test --skip-build --filter "$filter" \
    --event-stream-output-path "$work/required.jsonl" --event-stream-version 0 > "$work/required.log" 2>&1 || status=$?
if [ "$status" = 0 ]; then
    echo "hidden-library-check: FAILED: with $soname hidden, OD_REQUIRE_ALL=1 swift test --filter $filter passed"
    tail -20 "$work/required.log"
    exit 1
fi
if ! grep -q "required by OD_REQUIRE_ALL: $name is missing" "$work/required.log"; then
    echo "hidden-library-check: FAILED: the run failed, but no failure names $name"
    tail -40 "$work/required.log"
    exit 1
fi
failures=$(grep -c "required by OD_REQUIRE_ALL: $name is missing" "$work/required.log" || true)
echo "OD_REQUIRE_ALL=1: the run fails (exit $status), $failures failure messages name $name, e.g.:"
grep -m1 "required by OD_REQUIRE_ALL: $name is missing" "$work/required.log" | cut -c1-300

status=0
env -u OD_REQUIRE_ALL swift test --skip-build --filter "$filter" \
    --event-stream-output-path "$work/skipping.jsonl" --event-stream-version 0 > "$work/skipping.log" 2>&1 || status=$?
if [ "$status" != 0 ]; then
    echo "hidden-library-check: FAILED: without OD_REQUIRE_ALL the run must skip, not fail (exit $status)"
    tail -40 "$work/skipping.log"
    exit 1
fi
if python3 .ci/skipped-tests.py "$work/skipping.jsonl" --label "$soname hidden, no OD_REQUIRE_ALL" --min-tests 0 > "$work/count.txt"; then
    cat "$work/count.txt"
    echo "hidden-library-check: FAILED: the skip counter accepted a run with $soname hidden"
    exit 1
fi
grep -m3 "$name is missing" "$work/count.txt" | cut -c1-300 || true
tail -1 "$work/count.txt"
echo "hidden-library-check: passed ($soname hidden: a failure under OD_REQUIRE_ALL=1, counted skips without it)"
