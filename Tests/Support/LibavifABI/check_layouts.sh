#!/usr/bin/env bash
# Checks the structure mirrors of Sources/CImageCodecs/cic_avif_abi.h against libavif's own headers, one tag at a
# time (check_layouts.c: offsets, sizes and constants as _Static_asserts). Needs a clone of libavif:
#
#   Tests/Support/LibavifABI/check_layouts.sh /path/to/libavif [tags...]
#
# Default tags: every release the shim accepts (cic_avif.c, cic_avif_layout_for_version). Prints one line per tag
# and exits non-zero if any tag does not match.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
repo=${1:?usage: $0 /path/to/libavif [tags...]}
shift
tags=("$@")
[ ${#tags[@]} -gt 0 ] || tags=(v0.11.0 v0.11.1 v1.0.0 v1.0.1 v1.0.2 v1.0.3 v1.0.4 v1.1.0 v1.1.1 v1.2.0 v1.2.1 v1.3.0 v1.4.0 v1.4.1 v1.4.2)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
status=0
for tag in "${tags[@]}"; do
    mkdir -p "$work/$tag/avif"
    git -C "$repo" show "$tag:include/avif/avif.h" > "$work/$tag/avif/avif.h"
    if cc -std=c11 -fsyntax-only -I "$work/$tag" -I "$root/Sources/CImageCodecs" "$here/check_layouts.c" 2> "$work/$tag.log"; then
        echo "$tag: layouts match"
    else
        echo "$tag: MISMATCH"
        grep -E 'error' "$work/$tag.log" | head -20
        status=1
    fi
done
exit $status
