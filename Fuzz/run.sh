#!/usr/bin/env bash
# Builds the libFuzzer binary (Fuzz/Sources/DecodeFuzzer.swift + its harness Tests/DecodingTests/Support/FuzzHarness.swift, shared with FuzzRegressionTests, + the Decoding module + the C shim, all with
# -sanitize=fuzzer,address) and runs each target for a fixed time, seeded from the shared corpus.
#
#   Fuzz/run.sh [seconds-per-target]          default 60; targets from $TARGETS (default: all)
#   TARGETS="png exif" Fuzz/run.sh 300
#   Fuzz/run.sh --build-only
#   FUZZ_MAX_SEED_KB=2048 Fuzz/run.sh   # larger seeds (default 256 KB: big photos make every execution slow)
#
# Crashes, leaks, timeouts and OOMs are copied to Tests/Support/FuzzRegressions/<target>/, which
# FuzzRegressionTests replays in every `swift test`. A summary (executions, coverage) goes to
# .build-fuzz/summary.txt. Not part of CI: see Docs/Reliability.md.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${FUZZ_BUILD:-$ROOT/.build-fuzz}
CORPUS=${OPERATIONDOWNLOADER_CORPUS:-$ROOT/../shared/corpus}
REGRESSIONS=$ROOT/Tests/Support/FuzzRegressions
ALL_TARGETS="png gif bmp ico jpeg webp tiff heif exif sniff any icc"
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

# Seeds per target: corpus files of that format (by extension), plus small synthetic ones.
seed() {
    local target=$1 dir=$BUILD/seeds/$target
    rm -rf "$dir"; mkdir -p "$dir"
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
        sniff|any) patterns=('*') ;;
        icc) patterns=() ;;
    esac
    if [ -d "$CORPUS" ]; then
        for pattern in "${patterns[@]}"; do
            find "$CORPUS" -type f -iname "$pattern" ! -name '*.json' ! -name '*.md' -size -${FUZZ_MAX_SEED_KB:-256}k \
                -exec cp -n {} "$dir/" \; 2>/dev/null || true
        done
    fi
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
    # -rss_limit_mb bounds memory; -timeout flags any input taking over 10 s; leaks are detected by ASan.
    FUZZ_TARGET=$target "$BUILD/decode-fuzzer" "$work" "$BUILD/seeds/$target" \
        -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -timeout=10 -max_len=1048576 \
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
        mkdir -p "$REGRESSIONS/$target"
        cp "$artifact" "$REGRESSIONS/$target/"
    done
    printf '%-6s execs=%-10s cov=%-6s ft=%-6s corpus=%-6s findings=%s\n' \
        "$target" "$execs" "$cov" "$ft" "$units" "$findings" | tee -a "$BUILD/summary.txt"
}

if [ ! -x "$BUILD/decode-fuzzer" ] || [ "$BUILD_ONLY" = 1 ] || [ -n "$(find Sources/Decoding Sources/CImageCodecs Fuzz/Sources Tests/DecodingTests/Support/FuzzHarness.swift -newer "$BUILD/decode-fuzzer" -type f 2>/dev/null | head -1)" ]; then
    echo "building $BUILD/decode-fuzzer" >&2
    build
fi
[ "$BUILD_ONLY" = 1 ] && exit 0
echo "# $(date -u +%Y-%m-%dT%H:%MZ) ${SECONDS_PER_TARGET}s per target" >> "$BUILD/summary.txt"
for target in $TARGETS; do run_target "$target"; done
