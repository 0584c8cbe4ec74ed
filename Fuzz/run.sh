#!/usr/bin/env bash
# Builds the libFuzzer binaries (Fuzz/Sources/DecodeFuzzer.swift + its harness Tests/DecodingTests/Support/FuzzHarness.swift, shared with FuzzRegressionTests, + the Decoding module + the C shim, all with
# -sanitize=fuzzer,address; and Fuzz/Sources/HeaderFuzzer.swift + the HTTP cache's header parsers + their harness
# Tests/OperationDownloaderTests/Support/HeaderFuzzHarness.swift, shared with HeaderFuzzRegressionTests) and runs each
# target for a fixed time, seeded from the shared corpus (decoders) or from header values written below.
#
#   Fuzz/run.sh [seconds-per-target]          default 60; targets from $TARGETS (default: all)
#   TARGETS="png exif" Fuzz/run.sh 300
#   TARGETS="cache-control http-date age vary etag content-type range headers" Fuzz/run.sh 120   # the header parsers
#   Fuzz/run.sh --build-only
#   FUZZ_MAX_SEED_KB=2048 Fuzz/run.sh   # larger seeds (default 256 KB: big photos make every execution slow)
#
# Crashes, leaks, timeouts and OOMs are copied to Tests/Support/FuzzRegressions/<target>/ (decoders) or
# Tests/Support/HeaderFuzzRegressions/<target>/ (headers), which FuzzRegressionTests and HeaderFuzzRegressionTests
# replay in every `swift test`. A summary (executions, coverage) goes to
# .build-fuzz/summary.txt. Not part of CI: see Docs/Reliability.md.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${FUZZ_BUILD:-$ROOT/.build-fuzz}
CORPUS=${OPERATIONDOWNLOADER_CORPUS:-$ROOT/../shared/corpus}
REGRESSIONS=$ROOT/Tests/Support/FuzzRegressions
HEADER_REGRESSIONS=$ROOT/Tests/Support/HeaderFuzzRegressions
HEADER_TARGETS="cache-control http-date age vary etag content-type range headers"
ALL_TARGETS="png gif bmp ico jpeg webp tiff heif avif exif sniff any icc $HEADER_TARGETS"
# The header parsers compile alone (Foundation only): the fuzzer is built from these files, not the whole module.
HEADER_DIR=Sources/OperationDownloader/Caching/HTTPCache
HEADER_SOURCES="HTTPFieldList HTTPFieldValues HTTPEntityTag HTTPMediaType CacheControlDirectives HTTPDate HTTPHeaderFields HTTPFreshness HTTPCacheHeaderRules HTTPByteRange HTTPPreconditions"
TARGETS=${TARGETS:-$ALL_TARGETS}
SECONDS_PER_TARGET=60
BUILD_ONLY=0
case "${1:-}" in
    --build-only) BUILD_ONLY=1 ;;
    "") ;;
    *) SECONDS_PER_TARGET=$1 ;;
esac
export PATH="/opt/swift/usr/bin:$PATH"
SANITIZE="fuzzer,address"

build() {
    # Objects of C files since renamed or removed would still match obj/*.o at the link: start empty.
    rm -rf "$BUILD/obj"
    mkdir -p "$BUILD/obj" "$BUILD/mod"
    # The C shim: coverage for libFuzzer and ASan, but no libFuzzer main in these objects.
    for source in Sources/CImageCodecs/*.c; do
        clang -c -g -O1 -fsanitize=fuzzer-no-link,address -I Sources/CImageCodecs/include \
            "$source" -o "$BUILD/obj/$(basename "$source" .c).o"
    done
    # SwiftPM generates this module map for the C target; outside SwiftPM we write it ourselves.
    cat > "$BUILD/module.modulemap" <<EOF
module CImageCodecs {
    umbrella header "$ROOT/Sources/CImageCodecs/include/CImageCodecs.h"
    export *
}
EOF
    local common=(-swift-version 6 -O -g -sanitize="$SANITIZE" -parse-as-library -package-name OperationDownloader
        -Xcc -fmodule-map-file="$BUILD/module.modulemap" -I Sources/CImageCodecs/include)
    # The Decoding module as a static library (with its .swiftmodule for `import Decoding`).
    # shellcheck disable=SC2046
    swiftc "${common[@]}" -module-name Decoding -emit-module -emit-module-path "$BUILD/mod/Decoding.swiftmodule" \
        -emit-library -static -o "$BUILD/libDecoding.a" $(find Sources/Decoding -name '*.swift' | sort)
    # The harness; libFuzzer provides main().
    swiftc "${common[@]}" -I "$BUILD/mod" Fuzz/Sources/DecodeFuzzer.swift Tests/DecodingTests/Support/FuzzHarness.swift "$BUILD/libDecoding.a" "$BUILD"/obj/*.o \
        -use-ld=lld -ljpeg -lpng16 -lz -ldl -o "$BUILD/decode-fuzzer"
}

is_header_target() {
    case " $HEADER_TARGETS " in *" $1 "*) return 0 ;; *) return 1 ;; esac
}

build_headers() {
    mkdir -p "$BUILD"
    local sources=()
    for name in $HEADER_SOURCES; do sources+=("$HEADER_DIR/$name.swift"); done
    swiftc -swift-version 6 -O -g -sanitize="$SANITIZE" -parse-as-library -module-name HeaderFuzz "${sources[@]}" \
        Fuzz/Sources/HeaderFuzzer.swift Tests/OperationDownloaderTests/Support/HeaderFuzzHarness.swift \
        -use-ld=lld -o "$BUILD/header-fuzzer"
}

# Seeds for the header targets: real-world values and the suite's odd ones (Fuzz/README.md).
seed_headers() {
    local target=$1 dir=$2 i=0
    local values=()
    case $target in
        cache-control) values=('max-age=3600' 'no-cache="Set-Cookie, X-A", max-age=60' 'MaX-aGe="3600", private'
            'extension="max-age=3600", max-age=1' 'max-age=1, stale-while-revalidate=30, stale-if-error=60'
            'max-stale, min-fresh=5, only-if-cached' 'no-store, must-understand, max-age=99999999999' "max-age='1'") ;;
        http-date) values=('Sun, 06 Nov 1994 08:49:37 GMT' 'Sunday, 06-Nov-94 08:49:37 GMT' 'Sun Nov  6 08:49:37 1994'
            'Thu, 18-Aug-2050 02:01:18 GMT' 'Tue, 29 Feb 2000 23:59:60 GMT' '0') ;;
        age) values=('7200, 0' '0' '2147483648' '-1' '7200;foo=bar') ;;
        vary) values=('Accept, Accept-Encoding' '*' ', *' 'Foo, Bar, Baz' 'accept-language') ;;
        etag) values=('"abc"' 'W/"abc"' '"a", W/"b", "c"' '*' 'W\"x"') ;;
        range) values=('bytes=0-499' 'bytes=-5' 'bytes=9500-' 'bytes=0-1,5-6' 'bytes 4-9/10' 'bytes 0-4/*' 'bytes */10'
            '"abc"' 'Sun, 06 Nov 1994 08:49:37 GMT') ;;
        content-type) values=('image/png' 'text/html; charset="utf-8"; q=0.8' 'image/*;q=0.5' 'a/b;c=d;e="f\"g"') ;;
        headers) values=($'Cache-Control: max-age=60\nDate: Sun, 06 Nov 1994 08:49:37 GMT\nAge: 30\nETag: "x"'
            $'Expires: Sun, 06 Nov 1994 08:49:37 GMT\nLast-Modified: Sat, 05 Nov 1994 08:49:37 GMT\nVary: Accept'
            $'Connection: a, b\na: 1\nCache-Control: no-cache="c", must-understand, no-store\nc: 2') ;;
    esac
    for value in "${values[@]}"; do printf '%s' "$value" > "$dir/seed-$i"; i=$((i + 1)); done
}

# Seeds per target: corpus files of that format (by extension), plus small synthetic ones.
seed() {
    local target=$1 dir=$BUILD/seeds/$target
    rm -rf "$dir"; mkdir -p "$dir"
    if is_header_target "$target"; then
        seed_headers "$target" "$dir"
        [ -d "$HEADER_REGRESSIONS/$target" ] && cp -n "$HEADER_REGRESSIONS/$target"/* "$dir/" 2>/dev/null || true
        rm -f "$dir/README.md"
        return
    fi
    local patterns=()
    case $target in
        png) patterns=('*.png' '*.apng') ;;
        gif) patterns=('*.gif') ;;
        bmp) patterns=('*.bmp') ;;
        ico) patterns=('*.ico' '*.cur') ;;
        jpeg|exif) patterns=('*.jpg' '*.jpeg') ;;
        webp) patterns=('*.webp') ;;
        tiff) patterns=('*.tif' '*.tiff') ;;
        heif) patterns=('*.heic' '*.heif' '*.avif') ;;
        avif) patterns=('*.avif') ;;
        sniff|any) patterns=('*') ;;
        icc) patterns=() ;;
    esac
    if [ -d "$CORPUS" ]; then
        for pattern in "${patterns[@]}"; do
            find "$CORPUS" -type f -iname "$pattern" ! -name '*.json' ! -name '*.md' -size -${FUZZ_MAX_SEED_KB:-256}k \
                -exec cp -n {} "$dir/" \; 2>/dev/null || true
        done
    fi
    # The generated decoder fixtures (format variants, outside-corpus defects) are seeds too.
    for pattern in "${patterns[@]}"; do
        find "$ROOT/Tests/Support/DecoderFixtures" -type f -iname "$pattern" -size -${FUZZ_MAX_SEED_KB:-256}k \
            -exec cp -n {} "$dir/" \; 2>/dev/null || true
    done
    if [ "$target" = exif ]; then
        # The parser's real input: APP1 payloads ("Exif\0\0" + TIFF) cut out of the JPEG seeds.
        python3 - "$dir" <<'EOF'
import os, sys
d = sys.argv[1]
for name in os.listdir(d):
    path = os.path.join(d, name)
    data = open(path, "rb").read()
    os.remove(path)
    i = 2
    while i + 4 <= len(data) and data[i] == 0xFF:
        marker, length = data[i + 1], int.from_bytes(data[i + 2:i + 4], "big")
        if marker == 0xE1 and data[i + 4:i + 10] == b"Exif\0\0":
            open(path + ".exif", "wb").write(data[i + 4:i + 2 + length])
        if marker == 0xDA:
            break
        i += 2 + length
open(os.path.join(d, "ii.tiff"), "wb").write(b"II*\0\x08\0\0\0\x01\0\x12\x01\x03\0\x01\0\0\0\x06\0\0\0\0\0\0\0")
open(os.path.join(d, "mm.tiff"), "wb").write(b"MM\0*\0\0\0\x08\0\x01\x01\x12\0\x03\0\0\0\x01\0\x03\0\0\0\0\0\0")
EOF
    fi
    if [ "$target" = icc ]; then
        # Real profiles: those embedded in the colour fixtures, and the system's (icc-profiles-free, if installed).
        python3 "$ROOT/Fuzz/icc_seeds.py" "$dir" "$ROOT/Tests/Support/DecoderFixtures" /usr/share/color/icc
    fi
    # Never start empty (libFuzzer would begin from nothing).
    [ -n "$(ls -A "$dir")" ] || printf 'seed' > "$dir/empty-seed"
    # Earlier findings are seeds too.
    [ -d "$REGRESSIONS/$target" ] && cp -n "$REGRESSIONS/$target"/* "$dir/" 2>/dev/null || true
}

run_target() {
    local target=$1
    local work=$BUILD/corpus/$target artifacts=$BUILD/artifacts/$target/ log=$BUILD/logs/$target.log
    mkdir -p "$work" "$artifacts" "$(dirname "$log")"
    seed "$target"
    echo "== $target: ${SECONDS_PER_TARGET}s" >&2
    # -rss_limit_mb bounds memory; -timeout flags any input taking over 10 s (a header value: 5 s, though
    # parsing is linear and capped at 16 KiB); leaks are detected by ASan.
    local binary=$BUILD/decode-fuzzer limits=(-timeout=10 -max_len=1048576) destination=$REGRESSIONS/$target
    if is_header_target "$target"; then
        binary=$BUILD/header-fuzzer limits=(-timeout=5 -max_len=32768) destination=$HEADER_REGRESSIONS/$target
    fi
    # The CI sanitizer step's LeakSanitizer suppressions: leaks inside system libraries (libdav1d) the package cannot free.
    LSAN_OPTIONS="suppressions=$ROOT/.ci/lsan-suppressions.txt${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
    FUZZ_TARGET=$target "$binary" "$work" "$BUILD/seeds/$target" \
        -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 "${limits[@]}" \
        -artifact_prefix="$artifacts" -print_final_stats=1 > "$log" 2>&1 || true
    local execs cov ft units
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
    ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
    units=$(find "$work" -type f | wc -l)
    local findings=0
    for artifact in "$artifacts"*; do
        [ -f "$artifact" ] || continue
        findings=$((findings + 1))
        mkdir -p "$destination"
        cp "$artifact" "$destination/"
    done
    printf '%-13s execs=%-10s cov=%-6s ft=%-6s corpus=%-6s findings=%s\n' \
        "$target" "$execs" "$cov" "$ft" "$units" "$findings" | tee -a "$BUILD/summary.txt"
}

wants_decoders=0 wants_headers=0
for target in $TARGETS; do
    if is_header_target "$target"; then wants_headers=1; else wants_decoders=1; fi
done
if [ "$wants_decoders" = 0 ] && [ "$BUILD_ONLY" = 0 ]; then
    :  # header targets only: the decoder binary is not needed
elif [ ! -x "$BUILD/decode-fuzzer" ] || [ "$BUILD_ONLY" = 1 ] || [ -n "$(find Sources/Decoding Sources/CImageCodecs Fuzz/Sources Tests/DecodingTests/Support/FuzzHarness.swift -newer "$BUILD/decode-fuzzer" -type f 2>/dev/null | head -1)" ]; then
    echo "building $BUILD/decode-fuzzer" >&2
    build
fi
if [ "$wants_headers" = 0 ] && [ "$BUILD_ONLY" = 0 ]; then
    :  # decoder targets only
elif [ ! -x "$BUILD/header-fuzzer" ] || [ "$BUILD_ONLY" = 1 ] || [ -n "$(find "$HEADER_DIR" Fuzz/Sources/HeaderFuzzer.swift Tests/OperationDownloaderTests/Support/HeaderFuzzHarness.swift -newer "$BUILD/header-fuzzer" -type f 2>/dev/null | head -1)" ]; then
    echo "building $BUILD/header-fuzzer" >&2
    build_headers
fi
[ "$BUILD_ONLY" = 1 ] && exit 0
echo "# $(date -u +%Y-%m-%dT%H:%MZ) ${SECONDS_PER_TARGET}s per target" >> "$BUILD/summary.txt"
for target in $TARGETS; do run_target "$target"; done
