#!/usr/bin/env bash
# Builds the libFuzzer binaries and runs their targets for a fixed time each (Fuzz/README.md).
#
#   Fuzz/run.sh [seconds-per-target]   every target, 60 s by default; seeds: Fuzz/Seeds plus the shared corpus
#   TARGETS="png exif" Fuzz/run.sh 300
#   Fuzz/run.sh --ci [seconds]         CI (.ci/run): every target every binary lists, 20 s each by default, from the
#                                      committed seeds only (a target without them: the package's own, with a
#                                      warning), two at a time; fails on any finding
#   Fuzz/run.sh --build-only
#   Fuzz/run.sh --list                 the targets, one a line, as "binary target"
#   Fuzz/run.sh --update-seeds [target ...]   rebuilds Fuzz/Seeds/<target> from the shared corpus and the fixtures,
#                                      minimised by libFuzzer (-merge=1) to the inputs that add coverage
#
# The binaries are found, not listed: each Fuzz/Sources/<Name>Fuzzer.swift is one (DecodeFuzzer.swift ->
# decode-fuzzer), built by its build_<name> function below, with a folder of regression cases. They list their own
# targets (FUZZ_TARGET=list), so a target added to a harness runs everywhere, CI included, without editing this
# script or .ci/run; a new entry file without a build function here fails the run naming it (never skipped).
#
# Every crash, leak, timeout and out-of-memory input is copied to the binary's regression folder
# (Tests/Support/FuzzRegressions/<target>/ for the decoders, Tests/Support/HeaderFuzzRegressions/<target>/ for the
# header parsers), which FuzzRegressionTests and HeaderFuzzRegressionTests replay in every `swift test`; in --ci
# mode it is also printed in base64, so it outlives the CI machine. Each run writes its summary (executions,
# coverage, findings per target, the commit) to Fuzz/results/latest.json, and appends a line per target to
# .build-fuzz/summary.txt. Docs/Reliability.md quotes the committed Fuzz/results/*.json.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${FUZZ_BUILD:-$ROOT/.build-fuzz}
CORPUS=${OPERATIONDOWNLOADER_CORPUS:-$ROOT/../shared/corpus}
SEEDS=$ROOT/Fuzz/Seeds
RESULTS=$ROOT/Fuzz/results
export PATH="/opt/swift/usr/bin:$PATH"
SANITIZE="fuzzer,address"

# The fuzzer binaries: one per entry file (RESPFuzzer.swift -> resp-fuzzer), each with the folder of its
# regression cases, its per-input timeout (s) and input cap (bytes), and the target a binary that cannot list its
# targets runs.
FUZZERS=$(for entry in Fuzz/Sources/*Fuzzer.swift; do
    basename "$entry" .swift | sed -E 's/([a-z])([A-Z])/\1-\2/g; s/([A-Z])([A-Z][a-z])/\1-\2/g' | tr '[:upper:]' '[:lower:]'
done)
regressions_of() {
    case $1 in
        decode-fuzzer) echo "$ROOT/Tests/Support/FuzzRegressions" ;;
        header-fuzzer) echo "$ROOT/Tests/Support/HeaderFuzzRegressions" ;;
        resp-fuzzer) echo "$ROOT/Tests/Support/RESPFuzzRegressions" ;;
    esac
}
default_targets_of() {
    case $1 in
        resp-fuzzer) echo "resp" ;;
    esac
}
# Decoders: 10 s (big inputs under ASan take a second or two); header values: 5 s, though parsing is one linear
# pass over at most 16 KiB (a 1 s limit once flagged a 61-byte input that runs in 20 µs alone: a stall of the
# shared machine, not a finding).
limits_of() {
    case $1 in
        decode-fuzzer) echo "-timeout=10 -max_len=1048576" ;;
        header-fuzzer) echo "-timeout=5 -max_len=32768" ;;
        # A reply is read in one linear pass within small limits: 5 s is a hang.
        resp-fuzzer) echo "-timeout=5 -max_len=65536" ;;
    esac
}

MODE=local
SECONDS_PER_TARGET=60
case "${1:-}" in
    --build-only) MODE=build ;;
    --list) MODE=list ;;
    --ci) MODE=ci; SECONDS_PER_TARGET=${2:-20} ;;
    --update-seeds) MODE=seeds; shift; [ $# -gt 0 ] && TARGETS="$*" ;;
    "") ;;
    [0-9]*) SECONDS_PER_TARGET=$1 ;;
    *) echo "usage: $0 [seconds] | --ci [seconds] | --build-only | --list | --update-seeds [target ...]" >&2; exit 2 ;;
esac

# --- building ----------------------------------------------------------------------------------------------

# The Decoding module and its C shim with coverage and ASan, and Fuzz/Sources/DecodeFuzzer.swift with the harness
# Tests/DecodingTests/Support/FuzzHarness.swift (shared with FuzzRegressionTests); libFuzzer provides main().
build_decode_fuzzer() {
    # Objects of C files since renamed or removed would still match obj/*.o at the link: start empty.
    rm -rf "$BUILD/obj"
    mkdir -p "$BUILD/obj" "$BUILD/mod"
    # The codecs' shim and the library loader it uses (CDynamicLoading: the symbol tables every shim fills).
    for source in Sources/CImageCodecs/*.c Sources/CDynamicLoading/*.c; do
        clang -c -g -O1 -fsanitize=fuzzer-no-link,address -I Sources/CImageCodecs/include -I Sources/CDynamicLoading/include \
            "$source" -o "$BUILD/obj/$(basename "$source" .c).o"
    done
    # SwiftPM generates these module maps for the C targets; outside SwiftPM we write them ourselves.
    cat > "$BUILD/module.modulemap" <<EOF
module CImageCodecs {
    umbrella header "$ROOT/Sources/CImageCodecs/include/CImageCodecs.h"
    export *
}
module CDynamicLoading {
    umbrella header "$ROOT/Sources/CDynamicLoading/include/cdl.h"
    export *
}
EOF
    local common=(-swift-version 6 -O -g -sanitize="$SANITIZE" -parse-as-library -package-name OperationDownloader
        -Xcc -fmodule-map-file="$BUILD/module.modulemap" -I Sources/CImageCodecs/include -I Sources/CDynamicLoading/include)
    # The archive too: swiftc adds members to an existing one, and a renamed file's old member would stay in it.
    rm -f "$BUILD/libDecoding.a"
    # shellcheck disable=SC2046
    swiftc "${common[@]}" -module-name Decoding -emit-module -emit-module-path "$BUILD/mod/Decoding.swiftmodule" \
        -emit-library -static -o "$BUILD/libDecoding.a" $(find Sources/Decoding -name '*.swift' | sort)
    swiftc "${common[@]}" -I "$BUILD/mod" Fuzz/Sources/DecodeFuzzer.swift Tests/DecodingTests/Support/FuzzHarness.swift \
        "$BUILD/libDecoding.a" "$BUILD"/obj/*.o -use-ld=lld -ljpeg -lpng16 -lz -ldl -o "$BUILD/decode-fuzzer"
}
decode_fuzzer_sources="Sources/Decoding Sources/CImageCodecs Sources/CDynamicLoading Fuzz/Sources/DecodeFuzzer.swift Tests/DecodingTests/Support/FuzzHarness.swift"

# The HTTP cache's header parsers compile alone (Foundation only): the fuzzer is built from these files and the
# harness Tests/OperationDownloaderTests/Support/HeaderFuzzHarness.swift (shared with HeaderFuzzRegressionTests).
HEADER_DIR=Sources/OperationDownloader/Caching/HTTPCache
HEADER_SOURCES="HTTPFieldList HTTPFieldValues HTTPEntityTag HTTPMediaType CacheControlDirectives HTTPDate HTTPHeaderFields HTTPFreshness HTTPCacheHeaderRules HTTPByteRange HTTPPreconditions"
build_header_fuzzer() {
    mkdir -p "$BUILD"
    local sources=()
    for name in $HEADER_SOURCES; do sources+=("$HEADER_DIR/$name.swift"); done
    swiftc -swift-version 6 -O -g -sanitize="$SANITIZE" -parse-as-library -module-name HeaderFuzz "${sources[@]}" \
        Fuzz/Sources/HeaderFuzzer.swift Tests/OperationDownloaderTests/Support/HeaderFuzzHarness.swift \
        -use-ld=lld -o "$BUILD/header-fuzzer"
}
header_fuzzer_sources="$HEADER_DIR Fuzz/Sources/HeaderFuzzer.swift Tests/OperationDownloaderTests/Support/HeaderFuzzHarness.swift"

# The Redis client's RESP reader compiles alone too (Foundation only), with its harness
# Tests/OperationDownloaderTests/Caching/Redis/Support/RESPFuzzHarness.swift (shared with RESPFuzzRegressionTests).
RESP_DIR=Sources/OperationDownloader/Caching/Redis/Client
build_resp_fuzzer() {
    mkdir -p "$BUILD"
    swiftc -swift-version 6 -O -g -sanitize="$SANITIZE" -parse-as-library -module-name RESPFuzz \
        "$RESP_DIR/RESPReader.swift" "$RESP_DIR/RedisReply.swift" Fuzz/Sources/RESPFuzzer.swift \
        Tests/OperationDownloaderTests/Caching/Redis/Support/RESPFuzzHarness.swift -use-ld=lld -o "$BUILD/resp-fuzzer"
}
resp_fuzzer_sources="$RESP_DIR/RESPReader.swift $RESP_DIR/RedisReply.swift Fuzz/Sources/RESPFuzzer.swift Tests/OperationDownloaderTests/Caching/Redis/Support/RESPFuzzHarness.swift"

# Builds `$1` when it is missing or older than its sources (always with --build-only).
ensure_built() {
    local fuzzer=$1 function=build_${1//-/_} sources_var=${1//-/_}_sources
    if ! declare -F "$function" >/dev/null; then
        echo "fuzz: FAILED: Fuzz/Sources has an entry file for $fuzzer but Fuzz/run.sh has no $function to build it" >&2
        exit 1
    fi
    # shellcheck disable=SC2086
    if [ "$MODE" = build ] || [ ! -x "$BUILD/$fuzzer" ] \
        || [ -n "$(find ${!sources_var} -newer "$BUILD/$fuzzer" -type f 2>/dev/null | head -1)" ]; then
        echo "building $BUILD/$fuzzer" >&2
        "$function"
    fi
}

# --- targets -----------------------------------------------------------------------------------------------

# "fuzzer target" lines: what each binary says it knows (-runs=0: a binary without the list hook runs no input
# and exits, and then runs its default target).
list_targets() {
    local fuzzer targets
    for fuzzer in $FUZZERS; do
        targets=$(FUZZ_TARGET=list "$BUILD/$fuzzer" -runs=0 2>/dev/null | grep -E '^[a-z0-9-]+$' || true)
        [ -n "$targets" ] || targets=$(default_targets_of "$fuzzer")
        [ -n "$targets" ] || { echo "fuzz: FAILED: $fuzzer lists no targets (FUZZ_TARGET=list)" >&2; exit 1; }
        for target in $targets; do echo "$fuzzer $target"; done
    done
}

# --- seeds -------------------------------------------------------------------------------------------------

# Header values: real-world ones and the suite's odd ones (written into $2).
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

# RESP replies: every reply type (RESP2 and RESP3) and the replies the client meets (written into $1).
seed_resp() {
    local dir=$1 i=0
    local values=('+OK\r\n' '-ERR wrong\r\n' ':-42\r\n' '$5\r\nhello\r\n' '$-1\r\n' '*-1\r\n' '*2\r\n$1\r\na\r\n:7\r\n'
        '*1\r\n*3\r\n:0\r\n:5460\r\n*3\r\n$9\r\n127.0.0.1\r\n:7000\r\n$4\r\nabcd\r\n' '%1\r\n+k\r\n~2\r\n#t\r\n,1.5\r\n'
        '|1\r\n+a\r\n:1\r\n>2\r\n+m\r\n_\r\n' '=8\r\ntxt:abcd\r\n' '!3\r\nERR\r\n' '(12345678901234567890\r\n'
        '*2147483647\r\n' '$200000000\r\n' '-MOVED 3999 127.0.0.1:6381\r\n')
    # %b: the backslash escapes of the value are the bytes (the value itself is no format: it holds % and -).
    for value in "${values[@]}"; do printf '%b' "$value" > "$dir/seed-$i"; i=$((i + 1)); done
}

# The written or found seeds of a target (into $3).
seed_candidates() {
    case $1 in
        header-fuzzer) seed_headers "$2" "$3" ;;
        resp-fuzzer) seed_resp "$3" ;;
        *) seed_decoder_candidates "$2" "$3" ;;
    esac
}

# Candidate inputs for a decoder target (written into $2): files of its format from the shared corpus and the
# decoder fixtures (at most FUZZ_MAX_SEED_KB each), EXIF blocks cut out of JPEGs, ICC profiles cut out of files.
seed_decoder_candidates() {
    local target=$1 dir=$2 patterns=()
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
        jxl) patterns=('*.jxl') ;;
        sniff|any) patterns=('*') ;;
    esac
    local folder pattern
    for folder in "$CORPUS" "$ROOT/Tests/Support/DecoderFixtures"; do
        [ -d "$folder" ] || continue
        for pattern in "${patterns[@]}"; do
            find "$folder" -type f -iname "$pattern" ! -name '*.json' ! -name '*.md' ! -name '*.py' \
                -size -"${FUZZ_MAX_SEED_KB:-256}"k -exec cp -n {} "$dir/" \; 2>/dev/null || true
        done
    done
    if [ "$target" = exif ]; then
        # The parser's real input: APP1 payloads ("Exif\0\0" + TIFF) cut out of the JPEGs, plus two TIFF blocks.
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
    return 0
}

# Rebuilds Fuzz/Seeds/<target>: the candidates, minimised with -merge=1 to the inputs that add coverage, then the
# largest dropped until the folder is under FUZZ_SEED_BUDGET_KB (64 by default): a small committed corpus that
# starts a 20 s CI run from real structure instead of from nothing.
update_seeds() {
    local fuzzer=$1 target=$2 candidates=$BUILD/seed-candidates/$target out=$SEEDS/$target
    rm -rf "$candidates" "$out.new"
    mkdir -p "$candidates" "$out.new"
    seed_candidates "$fuzzer" "$target" "$candidates"
    [ -d "$out" ] && cp -n "$out"/* "$candidates/" 2>/dev/null || true
    [ -n "$(ls -A "$candidates")" ] || { echo "no seed candidates for $target" >&2; rm -rf "$out.new"; return 1; }
    # shellcheck disable=SC2046
    FUZZ_TARGET=$target ASAN_OPTIONS=detect_leaks=0 "$BUILD/$fuzzer" -merge=1 $(limits_of "$fuzzer") -rss_limit_mb=2048 \
        "$out.new" "$candidates" > "$BUILD/logs/$target.merge.log" 2>&1 || { tail -5 "$BUILD/logs/$target.merge.log" >&2; return 1; }
    local budget=$(( ${FUZZ_SEED_BUDGET_KB:-64} * 1024 ))
    while [ "$(du -sb "$out.new" | cut -f1)" -gt "$budget" ] && [ "$(ls "$out.new" | wc -l)" -gt 1 ]; do
        rm -f "$out.new/$(ls -S "$out.new" | head -1)"
    done
    rm -rf "$out"
    mv "$out.new" "$out"
    printf '%-13s %3d seeds, %6d bytes\n' "$target" "$(ls "$out" | wc -l)" "$(du -sb "$out" | cut -f1)"
}

# --- running -----------------------------------------------------------------------------------------------

# Runs one target; writes its result line to $BUILD/results/<target>.json. Returns 1 on a finding.
run_target() {
    local fuzzer=$1 target=$2
    local work=$BUILD/corpus/$target artifacts=$BUILD/artifacts/$target/ log=$BUILD/logs/$target.log
    local destination
    destination="$(regressions_of "$fuzzer")/$target"
    rm -rf "$artifacts"
    mkdir -p "$work" "$artifacts" "$BUILD/results"
    if [ "$MODE" = ci ]; then rm -rf "$work"; mkdir -p "$work"; fi
    # Seeds: the committed ones and earlier findings; locally also the shared corpus's files of the format.
    local seeds=$BUILD/seeds/$target
    rm -rf "$seeds"; mkdir -p "$seeds"
    [ -d "$SEEDS/$target" ] && { cp "$SEEDS/$target"/* "$seeds/" 2>/dev/null || true; }
    [ -d "$destination" ] && { cp -n "$destination"/* "$seeds/" 2>/dev/null || true; }
    rm -f "$seeds/README.md"
    if [ "$MODE" != ci ]; then
        seed_candidates "$fuzzer" "$target" "$seeds"
    elif [ ! -d "$SEEDS/$target" ]; then
        # A target that arrived without committed seeds (a branch merged before making them) still runs in CI,
        # from what this script writes or finds in the package (never the outside corpus), and says so.
        CORPUS=/nonexistent seed_candidates "$fuzzer" "$target" "$seeds"
        echo "fuzz: $target has no committed seeds: seeded from the package (make them: Fuzz/run.sh --update-seeds $target; commit Fuzz/Seeds/$target)" >&2
    fi
    [ -n "$(ls -A "$seeds")" ] || printf 'seed' > "$seeds/empty-seed"  # never start from nothing
    echo "== $target: ${SECONDS_PER_TARGET}s" >&2
    local status=0
    # shellcheck disable=SC2046
    # LeakSanitizer hides only what CI's sanitizer step hides (.ci/lsan-suppressions.txt: system libraries' leaks).
    LSAN_OPTIONS="suppressions=$ROOT/.ci/lsan-suppressions.txt${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
    FUZZ_TARGET=$target "$BUILD/$fuzzer" "$work" "$seeds" -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 \
        $(limits_of "$fuzzer") -artifact_prefix="$artifacts" -print_final_stats=1 > "$log" 2>&1 || status=$?
    local execs cov ft units findings=0 kinds=""
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
    ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
    units=$(find "$work" -type f | wc -l)
    local artifact
    for artifact in "$artifacts"*; do
        [ -f "$artifact" ] || continue
        findings=$((findings + 1))
        kinds="$kinds $(basename "$artifact" | cut -d- -f1)"
        mkdir -p "$destination"
        cp "$artifact" "$destination/"
        echo "FINDING ($target): $(basename "$artifact"), saved as ${destination#"$ROOT"/}/$(basename "$artifact")" >&2
        if [ "$MODE" = ci ]; then
            echo "  its bytes (base64; decode into that file to replay it with swift test --filter FuzzRegression):" >&2
            head -c 65536 "$artifact" | base64 -w 120 >&2
        fi
    done
    # libFuzzer exits non-zero on a finding; a non-zero exit without an artifact (it could not start) is one too.
    if [ "$status" != 0 ] && [ "$findings" = 0 ]; then findings=1; kinds=" exit-$status"; fi
    if [ "$findings" != 0 ]; then
        echo "---- $target: the end of libFuzzer's log" >&2
        tail -60 "$log" >&2
    fi
    printf '%-13s execs=%-10s cov=%-6s ft=%-6s corpus=%-6s findings=%s\n' \
        "$target" "$execs" "$cov" "$ft" "$units" "$findings" | tee -a "$BUILD/summary.txt" >&2
    printf '{"target": "%s", "fuzzer": "%s", "executions": %s, "coverage": %s, "features": %s, "corpus": %s, "findings": %s, "kinds": "%s"}\n' \
        "$target" "$fuzzer" "$execs" "$cov" "$ft" "$units" "$findings" "${kinds# }" > "$BUILD/results/$target.json"
    [ "$findings" = 0 ]
}

mkdir -p "$BUILD/logs"
for fuzzer in $FUZZERS; do ensure_built "$fuzzer"; done
[ "$MODE" = build ] && exit 0

all=$(list_targets)
[ -n "$all" ] || { echo "the fuzzers list no targets" >&2; exit 1; }
if [ "$MODE" = list ]; then echo "$all"; exit 0; fi
selected=$all
if [ -n "${TARGETS:-}" ] && [ "$MODE" != ci ]; then
    selected=$(echo "$all" | awk -v want=" $TARGETS " 'index(want, " " $2 " ")')
    [ -n "$selected" ] || { echo "none of TARGETS=\"$TARGETS\" is a target: $(echo "$all" | cut -d' ' -f2 | tr '\n' ' ')" >&2; exit 2; }
fi

if [ "$MODE" = seeds ]; then
    echo "$selected" | while read -r fuzzer target; do update_seeds "$fuzzer" "$target"; done
    exit 0
fi


echo "# $(date -u +%Y-%m-%dT%H:%MZ) ${SECONDS_PER_TARGET}s per target ($MODE)" >> "$BUILD/summary.txt"
rm -rf "$BUILD/results"
jobs=${FUZZ_JOBS:-1}
[ "$MODE" = ci ] && jobs=${FUZZ_JOBS:-2}
started=$SECONDS
failed=0
# Up to $jobs targets at once (each libFuzzer process is one thread).
running=0
while read -r fuzzer target; do
    run_target "$fuzzer" "$target" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait -n || failed=1
        running=$((running - 1))
    fi
done <<< "$selected"
while [ "$running" -gt 0 ]; do
    wait -n || failed=1
    running=$((running - 1))
done

# The run's summary (Docs/Reliability.md quotes the committed one).
mkdir -p "$RESULTS"
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
dirty=false
[ -z "$(git status --porcelain --untracked-files=no -- Sources Tests/DecodingTests/Support Tests/OperationDownloaderTests/Support Tests/OperationDownloaderTests/Caching/Redis/Support Fuzz/Sources 2>/dev/null)" ] || dirty=true
python3 - "$BUILD/results" "$RESULTS/latest.json" "$MODE" "$SECONDS_PER_TARGET" "$commit" "$dirty" "$((SECONDS - started))" <<'EOF'
import datetime, json, os, sys
folder, out, mode, seconds, commit, dirty, wall = sys.argv[1:]
targets = [json.load(open(os.path.join(folder, name))) for name in sorted(os.listdir(folder))]
summary = {
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "commit": commit, "dirty": dirty == "true", "mode": mode, "seconds_per_target": int(seconds),
    "wall_seconds": int(wall), "targets": targets,
    "executions": sum(t["executions"] for t in targets), "findings": sum(t["findings"] for t in targets),
}
json.dump(summary, open(out, "w"), indent=2)
open(out, "a").write("\n")
print(f"fuzz: {len(targets)} targets, {summary['executions']:,} executions in {wall} s, {summary['findings']} findings "
      f"(Fuzz/results/latest.json)")
EOF
if [ "$failed" != 0 ]; then
    echo "fuzz: FAILED: a target found a crash, leak, timeout or out-of-memory input (above); it is saved as a regression case" >&2
    exit 1
fi
